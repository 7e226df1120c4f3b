//! ns per modular squaring in a chain x -> x^2 mod N, wirespeed Montgomery squaring beside
//! GMP (mpz square then mpz mod, through rug), OpenSSL (BN_mod_sqr through the openssl
//! crate) and num-bigint, in the same run, at
//! 1024, 2048, 3072 and 4096 bits (median of 7 passes). The full comparison (with GMP)
//! is planned for `wirespeed bench vdf`.
//!
//! cargo run --release -p wirespeed-bigint --example sqr_speed

use std::time::Instant;

use num_bigint::BigUint;
use openssl::bn::{BigNum, BigNumContext};
use rand::{Rng, SeedableRng};
use rug::Assign;
use wirespeed_bigint::{MontCtx, Uint};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn run<const L: usize>(rng: &mut impl Rng, chain: u64) {
    let mut l = [0u64; L];
    rng.fill(&mut l[..]);
    l[0] |= 1;
    l[L - 1] |= 1 << 63;
    let n = Uint(l);
    rng.fill(&mut l[..]);
    l[L - 1] >>= 1;
    let x = Uint(l);
    let ctx = MontCtx::new(&n).unwrap_or_else(|e| panic!("{e}"));
    let (nb, xb) = (
        BigUint::from_bytes_be(&n.to_be_bytes()),
        BigUint::from_bytes_be(&x.to_be_bytes()),
    );
    let (ns, xs) = (
        BigNum::from_slice(&n.to_be_bytes()).unwrap_or_else(|e| panic!("{e}")),
        BigNum::from_slice(&x.to_be_bytes()).unwrap_or_else(|e| panic!("{e}")),
    );
    let mut bnctx = BigNumContext::new().unwrap_or_else(|e| panic!("{e}"));
    let (gn, gx) = (
        rug::Integer::from_digits(&n.to_be_bytes(), rug::integer::Order::Msf),
        rug::Integer::from_digits(&x.to_be_bytes(), rug::integer::Order::Msf),
    );
    let (mut ours, mut ossl, mut nbig, mut gmp) = (vec![], vec![], vec![], vec![]);
    let mut gmp_result = rug::Integer::new();
    let mut results = (
        Uint::<L>::ZERO,
        BigUint::default(),
        BigNum::new().unwrap_or_else(|e| panic!("{e}")),
    );
    for _ in 0..7 {
        let t = Instant::now();
        let y = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&x), chain));
        ours.push(t.elapsed().as_secs_f64() * 1e9 / chain as f64);
        results.0 = y;

        let t = Instant::now();
        let mut a = xs.to_owned().unwrap_or_else(|e| panic!("{e}"));
        let mut b = BigNum::new().unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..chain {
            b.mod_sqr(&a, &ns, &mut bnctx)
                .unwrap_or_else(|e| panic!("{e}"));
            std::mem::swap(&mut a, &mut b);
        }
        ossl.push(t.elapsed().as_secs_f64() * 1e9 / chain as f64);
        results.2 = a;

        let t = Instant::now();
        let mut a = gx.clone();
        let mut sq = rug::Integer::new();
        for _ in 0..chain {
            sq.assign(a.square_ref());
            sq %= &gn;
            std::mem::swap(&mut a, &mut sq);
        }
        gmp.push(t.elapsed().as_secs_f64() * 1e9 / chain as f64);
        gmp_result = a;

        let t = Instant::now();
        let mut a = xb.clone();
        for _ in 0..chain {
            a = (&a * &a) % &nb;
        }
        nbig.push(t.elapsed().as_secs_f64() * 1e9 / chain as f64);
        results.1 = a;
    }
    assert_eq!(BigUint::from_bytes_be(&results.0.to_be_bytes()), results.1);
    assert_eq!(results.2.to_vec(), results.1.to_bytes_be());
    assert_eq!(
        gmp_result.to_digits::<u8>(rug::integer::Order::Msf),
        results.1.to_bytes_be()
    );
    let (o, s, b, g) = (median(ours), median(ossl), median(nbig), median(gmp));
    println!(
        "{:>5} bits: wirespeed {:>6.0} ns ({:>5.0} cycles @2.6GHz)  GMP {:>6.0} ns  OpenSSL BN_mod_sqr {:>6.0} ns  num-bigint {:>6.0} ns  ws/GMP {:.2}  ws/OpenSSL {:.2}",
        64 * L, o, o * 2.6, g, s, b, o / g, o / s
    );
}

fn main() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    run::<16>(&mut rng, 20_000);
    run::<32>(&mut rng, 10_000);
    run::<48>(&mut rng, 5_000);
    run::<64>(&mut rng, 3_000);
}
