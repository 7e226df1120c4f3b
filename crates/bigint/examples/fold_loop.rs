//! Runs long squaring chains for profiling: `fold_loop BITS COUNT [mont]`.
use wirespeed_bigint::{MontCtx, Uint};

fn run<const L: usize>(count: u64, mont: bool) {
    let mut n = Uint::<L>([0x9e37_79b9_7f4a_7c15; L]);
    n.0[0] |= 1;
    let ctx = MontCtx::new(&n).expect("modulus");
    let x = ctx.to_mont(&Uint::<L>::from_u64(3));
    let t = std::time::Instant::now();
    let chunk: u64 = std::env::var("CHUNK")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(128);
    let y = if mont {
        let mut y = x;
        for _ in 0..count / chunk {
            y = ctx.sqr_n(&y, chunk);
        }
        y
    } else {
        ctx.sqr_n(&x, count)
    };
    let ns = t.elapsed().as_nanos() as f64 / count as f64;
    println!(
        "{} bits: {ns:.1} ns per squaring ({})",
        64 * L,
        y.0[0] & 0xff
    );
}

fn pair<const L: usize>(count: u64) {
    let mut n = Uint::<L>([0x9e37_79b9_7f4a_7c15; L]);
    n.0[0] |= 1;
    let mut m = Uint::<L>([0x7f4a_7c15_9e37_79b9; L]);
    m.0[0] |= 1;
    let (a, b) = (MontCtx::new(&n).expect("n"), MontCtx::new(&m).expect("m"));
    let e = Uint::<L>([0xdead_beef_1234_5678; L]);
    let (x, y) = (a.to_mont(&Uint::from_u64(3)), b.to_mont(&Uint::from_u64(5)));
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    for _ in 0..count {
        let (p, q) = a.pow_ct_pair(&x, &e, &b, &y, &e);
        acc ^= p.0[0] ^ q.0[0];
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / count as f64;
    println!("{} bits: pow_ct_pair {us:.1} us ({})", 64 * L, acc & 0xff);
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let bits: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(2048);
    let count: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let mont = a.get(3).is_some_and(|s| s == "mont");
    if a.get(3).is_some_and(|s| s == "pair") {
        return match bits {
            1024 => pair::<16>(count),
            1536 => pair::<24>(count),
            _ => pair::<32>(count),
        };
    }
    match bits {
        1024 => run::<16>(count, mont),
        _ => run::<32>(count, mont),
    }
}
