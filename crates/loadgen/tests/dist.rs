//! The load generator's distributions: the Zipf sampler against the exact probabilities,
//! the hot set's shares, the rank scatter as a bijection, value sizes per key, and the
//! parsing of both.

use wirespeed_loadgen::dist::{
    DistError, KeyDist, KeySampler, Scatter, ValueSize, XorShift64, Zipf, MAX_SIZES,
};

/// Pearson's chi-square of `counts` against the probabilities `p` over `draws` draws.
fn chi_square(counts: &[u64], p: &[f64], draws: u64) -> f64 {
    counts
        .iter()
        .zip(p)
        .map(|(&c, &p)| {
            let e = p * draws as f64;
            (c as f64 - e).powi(2) / e
        })
        .sum()
}

/// The exact Zipf probabilities of ranks 0..n.
fn zipf_probabilities(n: u64, s: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

/// Chi-square bound for `bins - 1` degrees of freedom: the mean plus seven standard
/// deviations (far beyond chance; a sampler off by a fraction of a percent in its large
/// ranks exceeds it over a million draws).
fn bound(bins: usize) -> f64 {
    let df = (bins - 1) as f64;
    df + 7.0 * (2.0 * df).sqrt()
}

#[test]
fn zipf_ranks_follow_the_exact_probabilities() {
    const N: u64 = 100;
    const DRAWS: u64 = 1_000_000;
    // s = 1 exactly takes the series branch of the helper functions (H(x) = ln x).
    for (s, seed) in [(0.99, 11), (1.0, 12), (1.2, 13), (0.5, 14), (2.5, 15)] {
        let zipf = Zipf::new(N, s).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = XorShift64::new(seed);
        let mut counts = vec![0u64; N as usize];
        for _ in 0..DRAWS {
            let r = zipf.sample(&mut rng);
            assert!(r < N, "rank {r}");
            counts[r as usize] += 1;
        }
        let p = zipf_probabilities(N, s);
        let chi = chi_square(&counts, &p, DRAWS);
        assert!(chi < bound(N as usize), "s = {s}: chi-square {chi}");
        // The hottest ranks within five standard deviations of their probability.
        for r in 0..5 {
            let got = counts[r] as f64 / DRAWS as f64;
            let sd = (p[r] * (1.0 - p[r]) / DRAWS as f64).sqrt();
            assert!(
                (got - p[r]).abs() < 5.0 * sd,
                "s = {s}, rank {r}: {got} against {}",
                p[r]
            );
        }
    }
}

#[test]
fn zipf_is_exact_at_the_edges() {
    let mut rng = XorShift64::new(5);
    // One rank only.
    let one = Zipf::new(1, 0.99).unwrap_or_else(|e| panic!("{e}"));
    assert!((0..1000).all(|_| one.sample(&mut rng) == 0));
    // Two ranks, s = 1: 2/3 and 1/3.
    let two = Zipf::new(2, 1.0).unwrap_or_else(|e| panic!("{e}"));
    let draws = 300_000;
    let zeros = (0..draws).filter(|_| two.sample(&mut rng) == 0).count();
    let share = zeros as f64 / draws as f64;
    assert!((share - 2.0 / 3.0).abs() < 0.005, "{share}");
    // A steep exponent: rank 0 nearly always.
    let steep = Zipf::new(1000, 100.0).unwrap_or_else(|e| panic!("{e}"));
    assert!((0..10_000).all(|_| steep.sample(&mut rng) == 0));
    // A large key space: ranks stay in range, and rank 0 has its probability
    // 1 / H(n, 0.99), about 3.6% for n = 10^9.
    let n = 1_000_000_000;
    let big = Zipf::new(n, 0.99).unwrap_or_else(|e| panic!("{e}"));
    let draws = 200_000;
    let mut top = 0;
    for _ in 0..draws {
        let r = big.sample(&mut rng);
        assert!(r < n);
        top += u64::from(r == 0);
    }
    // H(n, s) by the Euler-Maclaurin formula: sum of the first 1000 terms, then the
    // integral and the end corrections of the rest.
    let s: f64 = 0.99;
    let m = 1000.0_f64;
    let head: f64 = (1..1000).map(|k| (k as f64).powf(-s)).sum();
    let tail = ((n as f64).powf(1.0 - s) - m.powf(1.0 - s)) / (1.0 - s)
        + (m.powf(-s) + (n as f64).powf(-s)) / 2.0
        + s * m.powf(-s - 1.0) / 12.0;
    let p0 = 1.0 / (head + tail);
    let got = top as f64 / draws as f64;
    let sd = (p0 * (1.0 - p0) / draws as f64).sqrt();
    assert!((got - p0).abs() < 5.0 * sd, "{got} against {p0}");
}

#[test]
fn zipf_refuses_exponents_out_of_range() {
    for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 100.5] {
        assert!(
            matches!(Zipf::new(10, s), Err(DistError::Exponent(_))),
            "{s}"
        );
    }
}

#[test]
fn zipf_keys_are_the_scattered_ranks() {
    let keys = 1000;
    let sampler = KeySampler::new(KeyDist::Zipf { s: 1.1 }, keys).unwrap_or_else(|e| panic!("{e}"));
    let scatter = Scatter::new(keys);
    let mut rng = XorShift64::new(21);
    let draws = 500_000;
    let mut counts = vec![0u64; keys as usize];
    for _ in 0..draws {
        counts[sampler.next(&mut rng) as usize] += 1;
    }
    let p = zipf_probabilities(keys, 1.1);
    // Key scatter(r) has the probability of rank r.
    let by_key: Vec<f64> = {
        let mut q = vec![0.0; keys as usize];
        for (r, &pr) in p.iter().enumerate() {
            q[scatter.apply(r as u64) as usize] = pr;
        }
        q
    };
    let chi = chi_square(&counts, &by_key, draws);
    assert!(chi < bound(keys as usize), "chi-square {chi}");
    let hottest = (0..keys).max_by_key(|&k| counts[k as usize]);
    assert_eq!(hottest, Some(scatter.apply(0)));
}

#[test]
fn the_scatter_is_a_bijection() {
    for n in [
        1, 2, 3, 5, 7, 10, 100, 127, 128, 129, 1000, 1023, 1025, 4097, 65_536, 65_537, 100_003,
    ] {
        let scatter = Scatter::new(n);
        let mut seen = vec![false; n as usize];
        for r in 0..n {
            let k = scatter.apply(r);
            assert!(k < n, "{n}: {r} -> {k}");
            assert!(!seen[k as usize], "{n}: {k} twice");
            seen[k as usize] = true;
        }
    }
    // Large key spaces: in range, and distinct for the hottest ranks.
    for n in [1_000_000_007, 1 << 40, u64::MAX] {
        let scatter = Scatter::new(n);
        let mut images: Vec<u64> = (0..10_000).map(|r| scatter.apply(r)).collect();
        assert!(images.iter().all(|&k| k < n));
        images.sort_unstable();
        images.dedup();
        assert_eq!(images.len(), 10_000, "{n}");
    }
}

#[test]
fn the_scatter_spreads_the_hottest_ranks() {
    let n = 100_003;
    let scatter = Scatter::new(n);
    let mut hot: Vec<u64> = (0..64).map(|r| scatter.apply(r)).collect();
    hot.sort_unstable();
    // Spread over most of the key space, with few neighbours among them.
    let span = hot[63] - hot[0];
    assert!(span > n / 2, "span {span}");
    let close = hot.windows(2).filter(|w| w[1] - w[0] < 16).count();
    assert!(close < 4, "{close} pairs closer than 16: {hot:?}");
}

#[test]
fn the_hot_set_takes_its_share_of_the_requests() {
    let keys = 1000;
    let dist = KeyDist::Hot {
        keys: 0.2,
        requests: 0.8,
    };
    let sampler = KeySampler::new(dist, keys).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sampler.hot_keys(), 200);
    let mut rng = XorShift64::new(31);
    let draws = 1_000_000u64;
    let mut counts = vec![0u64; keys as usize];
    for _ in 0..draws {
        counts[sampler.next(&mut rng) as usize] += 1;
    }
    let hot: u64 = counts[..200].iter().sum();
    let share = hot as f64 / draws as f64;
    let sd = (0.8 * 0.2 / draws as f64).sqrt();
    assert!((share - 0.8).abs() < 5.0 * sd, "{share}");
    // Uniform within each part: 0.8 / 200 each in the hot set, 0.2 / 800 outside.
    let p: Vec<f64> = (0..keys)
        .map(|k| if k < 200 { 0.8 / 200.0 } else { 0.2 / 800.0 })
        .collect();
    let chi = chi_square(&counts, &p, draws);
    assert!(chi < bound(keys as usize), "chi-square {chi}");
}

#[test]
fn hot_sets_at_the_edges() {
    let mut rng = XorShift64::new(41);
    // A hot set of less than one key has one.
    let tiny = KeySampler::new(
        KeyDist::Hot {
            keys: 0.01,
            requests: 1.0,
        },
        10,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tiny.hot_keys(), 1);
    assert!((0..1000).all(|_| tiny.next(&mut rng) == 0));
    // No requests to the hot set: none reach it.
    let none = KeySampler::new(
        KeyDist::Hot {
            keys: 0.5,
            requests: 0.0,
        },
        10,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!((0..1000).all(|_| (5..10).contains(&none.next(&mut rng))));
    // One key: it is the hot set, and every request names it.
    let one = KeySampler::new(
        KeyDist::Hot {
            keys: 0.5,
            requests: 0.5,
        },
        1,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!((0..1000).all(|_| one.next(&mut rng) == 0));
}

#[test]
fn uniform_keys_are_the_draws_modulo_the_key_space() {
    let sampler = KeySampler::new(KeyDist::Uniform, 777).unwrap_or_else(|e| panic!("{e}"));
    let (mut a, mut b) = (XorShift64::new(9), XorShift64::new(9));
    for _ in 0..1000 {
        assert_eq!(sampler.next(&mut a), b.next_u64() % 777);
    }
}

#[test]
fn value_sizes_are_a_function_of_the_key() {
    assert!((0..100).all(|k| ValueSize::Fixed(48).of(k) == 48));
    let keys = 200_000u64;
    // A range: every size alike, the ends included.
    let range = ValueSize::Uniform { min: 64, max: 4096 };
    let sizes: Vec<usize> = (0..keys).map(|k| range.of(k)).collect();
    assert!(sizes.iter().all(|n| (64..=4096).contains(n)));
    assert!(sizes.contains(&64) && sizes.contains(&4096));
    let mean = sizes.iter().sum::<usize>() as f64 / keys as f64;
    assert!((mean - 2080.0).abs() < 20.0, "{mean}");
    // The same key, the same size: from the same or an equal distribution.
    let again = ValueSize::Uniform { min: 64, max: 4096 };
    assert!((0..keys).all(|k| again.of(k) == sizes[k as usize]));
    // Weighted sizes take their shares of the keys.
    let weighted: ValueSize = "64:0.7,1024:0.2,16384:0.1"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut counts = [0u64; 3];
    for k in 0..keys {
        let n = weighted.of(k);
        assert_eq!(n, weighted.of(k));
        match n {
            64 => counts[0] += 1,
            1024 => counts[1] += 1,
            16384 => counts[2] += 1,
            other => panic!("size {other}"),
        }
    }
    for (c, w) in counts.iter().zip([0.7, 0.2, 0.1]) {
        let share = *c as f64 / keys as f64;
        let sd = (w * (1.0 - w) / keys as f64).sqrt();
        assert!((share - w).abs() < 5.0 * sd, "{counts:?}");
    }
    // Relative weights need not sum to 1.
    let relative: ValueSize = "10:3,20:1".parse().unwrap_or_else(|e| panic!("{e}"));
    let tens = (0..keys).filter(|&k| relative.of(k) == 10).count() as f64 / keys as f64;
    assert!((tens - 0.75).abs() < 0.01, "{tens}");
    assert_eq!(weighted.max(), 16384);
    assert_eq!(weighted.fixed(), None);
    assert_eq!(ValueSize::Fixed(7).fixed(), Some(7));
}

#[test]
fn distributions_parse_and_print_alike() {
    for (text, dist) in [
        ("uniform", KeyDist::Uniform),
        ("zipf", KeyDist::Zipf { s: 0.99 }),
        ("Zipf:1.2", KeyDist::Zipf { s: 1.2 }),
        ("zipf:1", KeyDist::Zipf { s: 1.0 }),
        (
            "hot:0.2:0.8",
            KeyDist::Hot {
                keys: 0.2,
                requests: 0.8,
            },
        ),
    ] {
        assert_eq!(text.parse::<KeyDist>(), Ok(dist), "{text}");
        assert_eq!(dist.to_string().parse::<KeyDist>(), Ok(dist), "{text}");
    }
    assert_eq!(KeyDist::Zipf { s: 0.99 }.to_string(), "zipf:0.99");
    assert_eq!(KeyDist::default().to_string(), "uniform");
    for (text, sizes) in [
        ("64", ValueSize::Fixed(64)),
        ("0", ValueSize::Fixed(0)),
        ("64-4096", ValueSize::Uniform { min: 64, max: 4096 }),
        ("8-8", ValueSize::Uniform { min: 8, max: 8 }),
        (
            "64:0.7,1024:0.2,16384:0.1",
            ValueSize::Weighted(vec![(64, 0.7), (1024, 0.2), (16384, 0.1)]),
        ),
        ("100:1", ValueSize::Weighted(vec![(100, 1.0)])),
    ] {
        assert_eq!(text.parse::<ValueSize>().as_ref(), Ok(&sizes), "{text}");
        assert_eq!(sizes.to_string(), text);
    }
}

#[test]
fn malformed_distributions_are_typed_errors() {
    for text in [
        "", "pareto", "zipf:", "zipf:x", "zipf:1:2", "hot", "hot:0.2", "hot:a:b",
    ] {
        assert!(
            matches!(text.parse::<KeyDist>(), Err(DistError::Syntax { .. })),
            "{text:?}"
        );
    }
    for (text, want) in [
        ("zipf:0", DistError::Exponent(0.0)),
        ("zipf:-1", DistError::Exponent(-1.0)),
        ("hot:0:0.5", DistError::HotKeys(0.0)),
        ("hot:1:0.5", DistError::HotKeys(1.0)),
        ("hot:0.2:1.5", DistError::HotRequests(1.5)),
        ("hot:0.2:-0.1", DistError::HotRequests(-0.1)),
    ] {
        assert_eq!(text.parse::<KeyDist>(), Err(want), "{text}");
    }
    for text in [
        "", "x", "-64", "64-", "1.5", "64:", ":1", "64:1,", ",", "64:x", "64:1:1", "64-128:1",
    ] {
        assert!(
            matches!(text.parse::<ValueSize>(), Err(DistError::Syntax { .. })),
            "{text:?}"
        );
    }
    for (text, want) in [
        ("4096-64", DistError::Range { min: 4096, max: 64 }),
        ("600000000", DistError::TooLarge(600_000_000)),
        ("64-600000000", DistError::TooLarge(600_000_000)),
        ("64:1,600000000:1", DistError::TooLarge(600_000_000)),
        ("64:0", DistError::Weight(0.0)),
        ("64:0,128:0", DistError::Weight(0.0)),
        ("64:-1", DistError::Weight(-1.0)),
        ("64:inf", DistError::Weight(f64::INFINITY)),
    ] {
        assert_eq!(text.parse::<ValueSize>(), Err(want), "{text}");
    }
    assert!(matches!(
        "64:nan".parse::<ValueSize>(),
        Err(DistError::Weight(w)) if w.is_nan()
    ));
    let long = vec!["64:1"; MAX_SIZES + 1].join(",");
    assert_eq!(
        long.parse::<ValueSize>(),
        Err(DistError::Entries(MAX_SIZES + 1))
    );
    assert_eq!(
        ValueSize::Weighted(Vec::new()).check(),
        Err(DistError::Entries(0))
    );
    // Unchecked sizes still give a size for every key (no panic).
    assert_eq!(ValueSize::Weighted(Vec::new()).of(3), 0);
    assert_eq!(ValueSize::Uniform { min: 9, max: 2 }.of(3), 9);
    // The messages say what is wrong.
    let e = "zipf:0".parse::<KeyDist>().err().map(|e| e.to_string());
    assert!(e.is_some_and(|m| m.contains("exponent")));
    let e = "64:0,128:0"
        .parse::<ValueSize>()
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|m| m.contains("weight")));
}
