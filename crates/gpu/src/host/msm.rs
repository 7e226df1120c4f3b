//! bls377.cuh and msm.cuh as host C++ against crates/msm: the field constants and
//! operations, the XYZZ point operations with their exceptional cases, and the whole MSM
//! kernel pipeline run thread by thread (plain and with precomputed groups), finished by
//! the same host code as the GPU path, against `wirespeed_msm::msm`.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_msm::fq::{Fq, P};
use wirespeed_msm::fr::R;
use wirespeed_msm::{gen, Affine, Jacobian, Scalar};

use crate::msm::{combine, point_words, scalar_words, Plan, AFFINE_WORDS, XYZZ_WORDS};

extern "C" {
    fn ws_host_fq_consts(p: *mut u32, r2: *mut u32, one: *mut u32, pm2: *mut u32, m0inv: *mut u32);
    fn ws_host_fq_op(op: u32, r: *mut u32, a: *const u32, b: *const u32);
    fn ws_host_g1_op(op: u32, p: *const u32, q: *const u32, out_aff: *mut u32);
    fn ws_host_msm_precompute(src: *const u32, dst: *mut u32, n: u32, doublings: u32);
    #[allow(clippy::too_many_arguments)]
    fn ws_host_msm_run(
        points: *const u32,
        scalars: *const u32,
        n: u32,
        k: u32,
        c: u32,
        w: u32,
        g: u32,
        nb: u32,
        segs: u32,
        out: *mut u32,
        entries: *mut u32,
    );
}

fn words(x: &Fq) -> [u32; 12] {
    let mut o = [0u32; 12];
    for (i, l) in x.to_mont_limbs().iter().enumerate() {
        o[2 * i] = *l as u32;
        o[2 * i + 1] = (*l >> 32) as u32;
    }
    o
}

fn from_words(w: &[u32]) -> Fq {
    let mut l = [0u64; 6];
    for (i, x) in l.iter_mut().enumerate() {
        *x = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
    }
    Fq::from_mont_limbs_checked(l).expect("reduced")
}

fn big(w: &[u32]) -> BigUint {
    BigUint::from_slice(w)
}

fn random_fq(rng: &mut ChaCha20Rng) -> Fq {
    let mut l: [u64; 6] = rng.gen();
    l[5] &= (1 << 56) - 1; // below 2^376 < p
    Fq::from_limbs(l).expect("below p")
}

#[test]
fn constants_match_the_rust_field() {
    let (mut p, mut r2, mut one, mut pm2, mut m0inv) =
        ([0u32; 12], [0u32; 12], [0u32; 12], [0u32; 12], 0u32);
    // SAFETY: four 12-word buffers and one word, as the shim writes.
    unsafe {
        ws_host_fq_consts(
            p.as_mut_ptr(),
            r2.as_mut_ptr(),
            one.as_mut_ptr(),
            pm2.as_mut_ptr(),
            &mut m0inv,
        )
    };
    let pb = BigUint::from_slice(&p);
    let mut want_p = BigUint::from(0u32);
    for l in P.iter().rev() {
        want_p = (want_p << 64u32) + *l;
    }
    assert_eq!(pb, want_p);
    assert_eq!(pb.bits(), 377);
    let r = BigUint::from(1u32) << 384u32;
    assert_eq!(big(&r2), (&r * &r) % &pb);
    assert_eq!(big(&one), &r % &pb);
    assert_eq!(one, words(&Fq::ONE));
    assert_eq!(big(&pm2), &pb - 2u32);
    assert_eq!(m0inv.wrapping_mul(p[0]), u32::MAX, "m0inv = -p^-1 mod 2^32");
    // R^2 times 1 (plain) is R: 1 in Montgomery form.
    let mut plain_one = [0u32; 12];
    plain_one[0] = 1;
    assert_eq!(fq_op(0, &r2, &plain_one), one);
}

fn fq_op(op: u32, a: &[u32; 12], b: &[u32; 12]) -> [u32; 12] {
    let mut r = [0xa5a5_a5a5u32; 12];
    // SAFETY: 12-word buffers.
    unsafe { ws_host_fq_op(op, r.as_mut_ptr(), a.as_ptr(), b.as_ptr()) };
    r
}

#[test]
fn field_ops_match_the_rust_field() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6671);
    let p_minus_1 = Fq::ZERO.sub(&Fq::ONE);
    let mut vals = vec![Fq::ZERO, Fq::ONE, p_minus_1, Fq::from_u64(2)];
    for _ in 0..200 {
        vals.push(random_fq(&mut rng));
    }
    for (i, a) in vals.iter().enumerate() {
        let b = &vals[(i * 7 + 3) % vals.len()];
        let (wa, wb) = (words(a), words(b));
        assert_eq!(from_words(&fq_op(0, &wa, &wb)), a.mul(b));
        assert_eq!(from_words(&fq_op(1, &wa, &wb)), a.add(b));
        assert_eq!(from_words(&fq_op(2, &wa, &wb)), a.sub(b));
        assert_eq!(from_words(&fq_op(3, &wa, &wb)), a.neg());
        if i % 10 == 0 {
            let inv = from_words(&fq_op(4, &wa, &wb));
            assert_eq!(Some(inv), a.vartime_inverse().or(Some(Fq::ZERO)));
        }
    }
}

/// P in XYZZ with a random Z (x = X / Z^2, y = Y / Z^3); infinity has ZZ = 0.
fn xyzz(p: &Affine, z: &Fq) -> [u32; 48] {
    let mut o = [0u32; 48];
    if p.infinity {
        o[..12].copy_from_slice(&words(&Fq::ONE));
        o[12..24].copy_from_slice(&words(&Fq::ONE));
        return o;
    }
    let zz = z.square();
    let zzz = zz.mul(z);
    o[..12].copy_from_slice(&words(&p.x.mul(&zz)));
    o[12..24].copy_from_slice(&words(&p.y.mul(&zzz)));
    o[24..36].copy_from_slice(&words(&zz));
    o[36..].copy_from_slice(&words(&zzz));
    o
}

fn aff_words(p: &Affine) -> [u32; 24] {
    let mut o = [0u32; 24];
    point_words(std::slice::from_ref(p), &mut o);
    o
}

fn g1_op(op: u32, p: &[u32; 48], q: &[u32]) -> Affine {
    let mut qb = [0u32; 48];
    qb[..q.len()].copy_from_slice(q);
    let mut out = [0u32; 24];
    // SAFETY: p has 48 words, qb 48 (the shim reads 24 or 48), out 24.
    unsafe { ws_host_g1_op(op, p.as_ptr(), qb.as_ptr(), out.as_mut_ptr()) };
    if out.iter().all(|&w| w == 0) {
        Affine::INFINITY
    } else {
        Affine::new_unchecked(from_words(&out[..12]), from_words(&out[12..]))
    }
}

#[test]
fn point_ops_match_crates_msm_including_exceptional_cases() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6731);
    let pts = gen::points(6, 11);
    // (-1, 0): the point of order two (on the curve, outside G1).
    let two_torsion = Affine::new_unchecked(Fq::ONE.neg(), Fq::ZERO);
    assert!(two_torsion.is_on_curve());
    let inf = Affine::INFINITY;
    let mut pairs = vec![
        (pts[0], pts[1]),
        (pts[2], pts[2]),
        (pts[3], pts[3].neg()),
        (inf, pts[4]),
        (pts[4], inf),
        (inf, inf),
        (two_torsion, two_torsion),
        (two_torsion, pts[5]),
        (pts[5], two_torsion),
    ];
    for i in 0..6 {
        pairs.push((pts[i], pts[(i + 1) % 6]));
    }
    for (a, b) in pairs {
        let (ja, jb) = (Jacobian::from(a), Jacobian::from(b));
        let za = random_fq(&mut rng);
        let zb = random_fq(&mut rng);
        let pa = xyzz(&a, &za);
        let sum = ja.add(&jb).to_affine();
        assert_eq!(g1_op(0, &pa, &aff_words(&b)), sum, "mixed {a:?} + {b:?}");
        assert_eq!(g1_op(1, &pa, &xyzz(&b, &zb)), sum, "xyzz {a:?} + {b:?}");
        // Mixed addition from ZZ = ZZZ = 1 too.
        assert_eq!(g1_op(0, &xyzz(&a, &Fq::ONE), &aff_words(&b)), sum);
        assert_eq!(g1_op(2, &pa, &[]), ja.double().to_affine(), "double {a:?}");
        for k in [0u32, 1, 2, 3, 255, 32767, u32::MAX] {
            assert_eq!(
                g1_op(3, &pa, &[k]),
                ja.mul_u64(k as u64).to_affine(),
                "{k} P"
            );
        }
    }
}

fn r_minus(k: u64) -> Scalar {
    let mut l = R;
    l[0] -= k;
    Scalar::from_limbs(l).expect("below r")
}

/// The kernel pipeline on the host, finished as the GPU path finishes it.
fn host_msm(points: &[Affine], scalars: &[Scalar], plan: Plan) -> Jacobian {
    let n = points.len();
    let pw = AFFINE_WORDS * n;
    let mut table = vec![0u32; pw * plan.k as usize];
    point_words(points, &mut table[..pw]);
    for t in 1..plan.k as usize {
        let (lo, hi) = table.split_at_mut(t * pw);
        // SAFETY: src and dst hold n points each.
        unsafe {
            ws_host_msm_precompute(
                lo[(t - 1) * pw..].as_ptr(),
                hi.as_mut_ptr(),
                n as u32,
                plan.g * plan.c,
            )
        };
    }
    let mut sw = vec![0u32; 8 * n];
    scalar_words(scalars, &mut sw);
    let mut out = vec![0u32; XYZZ_WORDS * plan.g as usize];
    let mut entries = 0u32;
    let [pn, k, c, w, g, nb, segs] = plan.args();
    // SAFETY: table holds k n points, sw n scalars, out g XYZZ points: the sizes the
    // shim reads and writes for this plan.
    unsafe {
        ws_host_msm_run(
            table.as_ptr(),
            sw.as_ptr(),
            pn,
            k,
            c,
            w,
            g,
            nb,
            segs,
            out.as_mut_ptr(),
            &mut entries,
        )
    };
    let nonzero_digits = scalars.iter().filter(|s| !s.is_zero()).count();
    assert!(entries as usize >= nonzero_digits && entries as usize <= plan.max_entries());
    combine(&out, plan.c).expect("reduced window sums")
}

fn check(points: &[Affine], scalars: &[Scalar], plan: Plan, what: &str) {
    let want = wirespeed_msm::msm(points, scalars).unwrap();
    let got = host_msm(points, scalars, plan);
    assert_eq!(got, want, "{what}: {plan:?}");
}

#[test]
fn pipeline_matches_wirespeed_msm_on_random_inputs() {
    for n in [1usize, 2, 3, 100, 1000, 1 << 12] {
        let points = gen::points(n, n as u64);
        let scalars = gen::scalars(n, 7 + n as u64);
        check(&points, &scalars, Plan::new(n, 1).unwrap(), "random");
        if n <= 1000 {
            let skewed = gen::skewed_scalars(n, 9);
            check(&points, &skewed, Plan::new(n, 1).unwrap(), "skewed");
        }
    }
}

#[test]
fn pipeline_matches_wirespeed_msm_on_edge_scalars_and_points() {
    let base = gen::points(40, 21);
    let mut points = Vec::new();
    let mut scalars = Vec::new();
    let edge = [
        Scalar::ZERO,
        Scalar::from_u64(1),
        Scalar::from_u64(2),
        r_minus(1),
        r_minus(2),
        Scalar::from_u64(u64::MAX),
        Scalar::from_limbs([0, 0, 0, 1 << 60]).unwrap(),
    ];
    for (i, p) in base.iter().enumerate() {
        points.push(*p);
        scalars.push(edge[i % edge.len()]);
    }
    // Repeated points, a point and its negation with equal scalars (cancelling), the
    // same point with s and r - s, and points at infinity.
    for i in 0..10 {
        points.push(base[0]);
        scalars.push(Scalar::from_u64(3 + i));
        points.push(base[1]);
        scalars.push(Scalar::from_u64(5));
        points.push(base[1].neg());
        scalars.push(Scalar::from_u64(5));
        points.push(base[2]);
        scalars.push(r_minus(1 + i));
        points.push(base[2]);
        scalars.push(Scalar::from_u64(1 + i));
        points.push(Affine::INFINITY);
        scalars.push(r_minus(7));
    }
    let n = points.len();
    for c in [2, 3, 4, 5, 7, 8, 13, 16] {
        check(
            &points,
            &scalars,
            Plan::with_window(n, 1, c).unwrap(),
            "edge",
        );
    }
    // Everything cancels: the result is infinity.
    let p = gen::points(8, 5);
    let mut pts: Vec<Affine> = p.clone();
    pts.extend(p.iter().map(|q| q.neg()));
    let s = gen::scalars(8, 6);
    let mut sc = s.clone();
    sc.extend(s);
    let got = host_msm(&pts, &sc, Plan::new(16, 1).unwrap());
    assert_eq!(got, Jacobian::INFINITY);
    // All-zero scalars.
    let zeros = vec![Scalar::ZERO; 16];
    assert_eq!(
        host_msm(&pts, &zeros, Plan::new(16, 1).unwrap()),
        Jacobian::INFINITY
    );
}

#[test]
fn pipeline_with_precomputed_groups_matches_wirespeed_msm() {
    for (n, k) in [(1usize, 2usize), (3, 4), (100, 2), (1000, 3), (1 << 12, 4)] {
        let points = gen::points(n, 30 + n as u64);
        let scalars = gen::scalars(n, 31 + n as u64);
        check(&points, &scalars, Plan::new(n, k).unwrap(), "precomputed");
    }
    let points = gen::points(200, 40);
    let mut scalars = gen::skewed_scalars(200, 41);
    scalars[0] = r_minus(1);
    scalars[1] = r_minus(1);
    for (k, c) in [(2, 5), (5, 7), (16, 3), (64, 4)] {
        check(
            &points,
            &scalars,
            Plan::with_window(200, k, c).unwrap(),
            "precomputed edge",
        );
    }
}
