//! Time-lock puzzles: the trapdoor (fast) and the sequential (slow) computation of
//! 2^(2^T) mod N agree for many T up to 10^5 at both sizes; puzzles open with the
//! solution and refuse a wrong one; the LCS35 text form round trips and solves, and
//! Rivest's published LCS35 text (tests/data/lcs35-puzzle.txt) parses to its n, t and z.

use rand::SeedableRng;
use wirespeed_vdf::timelock::{
    create, open, parse_decimal, solve, to_decimal, Lcs35, TimelockError,
};
use wirespeed_vdf::{EvalOptions, U4096};

#[test]
fn trapdoor_and_sequential_paths_agree() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(35);
    for (bits, ts) in [
        (1024, vec![1u64, 2, 3, 5, 64, 1000, 4097, 65_536, 100_000]),
        (2048, vec![1, 7, 100_000]),
    ] {
        for t in ts {
            let msg = format!("locked for {t} squarings at {bits} bits");
            let (puzzle, w_fast) = create(bits, t, msg.as_bytes(), &mut rng).expect("create");
            assert_eq!(puzzle.modulus.bits(), bits);
            let w_slow = solve(&puzzle, &EvalOptions::default()).expect("solve");
            assert_eq!(w_fast, w_slow, "bits {bits}, T {t}");
            assert_eq!(open(&puzzle, &w_slow).expect("open"), msg.as_bytes());
            let mut wrong = w_slow;
            wrong.0[0] ^= 1;
            assert_eq!(open(&puzzle, &wrong), Err(TimelockError::WrongSolution));
        }
    }
}

#[test]
fn lcs35_form_parses_and_solves() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1999);
    let secret = U4096::from_u64(0x5365_6372_6574_2121); // "Secret!!"
    let puzzle = Lcs35::create(2048, 5_000, &secret, &mut rng).expect("create");
    let text = puzzle.to_text();
    // The published form spreads numbers over lines and adds prose; accept that.
    let spread = format!(
        "LCS35-style puzzle\n{}",
        text.replace("z = ", "z =\n   ").replace('0', "0 ")
    );
    let parsed = Lcs35::parse(&spread).expect("parse");
    assert_eq!(parsed, puzzle);
    assert_eq!(
        parsed.solve(&EvalOptions::default()).expect("solve"),
        secret
    );
    assert!(Lcs35::parse("n = 12\nt = x\nz = 3").is_err());
    assert!(Lcs35::parse("t = 5\nz = 3").is_err());
}

#[test]
fn decimal_conversions_round_trip() {
    for s in ["0", "1", "18446744073709551616", "631446608307288889379935712613129233236329881833084137558899077270195712892488554730844605575320651361834662884894808866350036848039658817136198766052189726781016228055747539383830826175971321892666861177695452639157012069093997368008972127446466642331918780683055206795125307008202024124623398241073775370512734449416950118097524189066796385875485631980550727370990439711973361466670154390536015254337398252457931357531765364633198906465140213398526580034199190398219284471021246488745938885358207031808428902320971090703239693491996277899532332018406452247646396635593736700936921275809208629319872"] {
        let v = parse_decimal(s).expect("parse");
        assert_eq!(to_decimal(&v), s);
    }
    assert!(parse_decimal("").is_none());
    assert!(parse_decimal("12a").is_none());
    assert!(parse_decimal(&"9".repeat(1300)).is_none()); // above 2^4096
}

#[test]
fn puzzle_json_round_trips_and_rejects_damage() {
    use wirespeed_vdf::timelock::Puzzle;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (p, w) = create(1024, 300, b"hello", &mut rng).expect("create");
    let back = Puzzle::from_json(&p.to_json()).expect("decode");
    assert_eq!(back, p);
    assert_eq!(open(&back, &w).expect("open"), b"hello");
    let j = p.to_json();
    for broken in [
        j.replace("\"t\":300", "\"t\":0"),
        j.replace("\"nonce\":\"", "\"nonce\":\"00"),
        j.replace("\"base\":\"2\"", "\"base\":\"1\""),
        j.replace('}', ",\"extra\":1}"),
        "[]".to_string(),
        String::new(),
    ] {
        assert!(Puzzle::from_json(&broken).is_err(), "{broken}");
    }
}

/// Rivest's LCS35 puzzle as published (n and z spread over 60-digit lines, prose around
/// them): t = 79,685,186,856,218 is above the old 2^40 limit and must be accepted.
#[test]
fn lcs35_published_text_parses() {
    let text = include_str!("data/lcs35-puzzle.txt");
    let p = Lcs35::parse(text).expect("parse the published LCS35 text");
    assert_eq!(p.t, 79_685_186_856_218);
    assert_eq!(p.modulus.bits(), 2046);
    let hex = |v: &U4096| v.to_hex();
    assert!(hex(p.modulus.value()).starts_with("32052c40e056ed2c9141fc76c060fa685f60c450"));
    assert!(hex(&p.z).starts_with("21da0b1b99d09ebfc60bcf25202a3fbaa4fd2d2b"));
    assert!(to_decimal(p.modulus.value()).ends_with("7008292431243681"));
    assert!(to_decimal(&p.z).ends_with("7611143659071382"));
    assert_eq!(to_decimal(&p.z).len(), 616);
    // The delay is in range, and the text form round trips.
    assert!(wirespeed_vdf::eval::check_delay(p.t).is_ok());
    assert_eq!(Lcs35::parse(&p.to_text()).expect("round trip"), p);
}
