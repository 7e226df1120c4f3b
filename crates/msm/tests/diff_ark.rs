//! wirespeed's BLS12-377 field, curve, MSM and file formats against arkworks 0.5.

use ark_bls12_377::{Fq as ArkFq, Fr as ArkFr, G1Affine, G1Projective};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{Field, PrimeField, UniformRand};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use rand::{Rng, SeedableRng};
use wirespeed_msm::ark::{
    affine_from_ark, affine_to_ark, fq_from_ark, fq_to_ark, jacobian_to_ark, scalar_from_ark,
};
use wirespeed_msm::format::{self, FormatError};
use wirespeed_msm::{gen, msm, Affine, Jacobian, Scalar};
use wirespeed_msm::{CpuFeatures, Lanes};

fn rng(seed: u64) -> ark_std::rand::rngs::StdRng {
    ark_std::rand::SeedableRng::seed_from_u64(seed)
}

#[test]
fn field_ops_match_arkworks() {
    let mut r = rng(1);
    for _ in 0..2000 {
        let (a, b) = (ArkFq::rand(&mut r), ArkFq::rand(&mut r));
        let (x, y) = (fq_from_ark(&a), fq_from_ark(&b));
        assert_eq!(fq_to_ark(&x.mul(&y)), a * b);
        assert_eq!(fq_to_ark(&x.add(&y)), a + b);
        assert_eq!(fq_to_ark(&x.sub(&y)), a - b);
        assert_eq!(fq_to_ark(&x.neg()), -a);
        assert_eq!(fq_to_ark(&x.square()), a.square());
        assert_eq!(x.vartime_inverse().map(|v| fq_to_ark(&v)), a.inverse());
        let mut bytes = Vec::new();
        a.serialize_uncompressed(&mut bytes)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&x.to_bytes_le()[..], &bytes[..]);
    }
    // Edge values: 0, 1, p - 1.
    for a in [ArkFq::from(0u8), ArkFq::from(1u8), -ArkFq::from(1u8)] {
        let x = fq_from_ark(&a);
        assert_eq!(fq_to_ark(&x.mul(&x)), a * a);
        assert_eq!(fq_to_ark(&x.add(&x)), a + a);
    }
}

#[test]
fn generator_and_group_law_match_arkworks() {
    assert_eq!(affine_to_ark(&Affine::generator()), G1Affine::generator());
    let mut r = rng(2);
    for _ in 0..200 {
        let (p, q) = (
            (G1Affine::generator() * ArkFr::rand(&mut r)).into_affine(),
            (G1Affine::generator() * ArkFr::rand(&mut r)).into_affine(),
        );
        let (a, b) = (affine_from_ark(&p), affine_from_ark(&q));
        let (ja, jb) = (Jacobian::from(a), Jacobian::from(b));
        assert_eq!(jacobian_to_ark(&ja.add(&jb)), p + q);
        assert_eq!(jacobian_to_ark(&ja.add_affine(&b)), p + q);
        assert_eq!(jacobian_to_ark(&ja.double()), p + p);
        assert_eq!(jacobian_to_ark(&ja.add_affine(&a)), p + p);
        assert!(jacobian_to_ark(&ja.add_affine(&a.neg()))
            .into_affine()
            .is_zero());
        assert!(a.is_on_curve() && a.is_in_subgroup());
        let k: u64 = rand::rngs::StdRng::seed_from_u64(9).gen();
        assert_eq!(jacobian_to_ark(&ja.mul_u64(k)), p * ArkFr::from(k));
    }
}

/// Points on the curve outside G1 (random x with a square root), as arkworks sees them.
fn off_subgroup_points(count: usize) -> Vec<G1Affine> {
    let mut r = rng(3);
    let mut out = Vec::new();
    while out.len() < count {
        let x = ArkFq::rand(&mut r);
        if let Some(p) = G1Affine::get_point_from_x_unchecked(x, r.gen()) {
            if !p.is_in_correct_subgroup_assuming_on_curve() {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn subgroup_check_matches_arkworks() {
    for p in off_subgroup_points(40) {
        let a = affine_from_ark(&p);
        assert!(a.is_on_curve());
        assert!(!a.is_in_subgroup(), "{p:?}");
        // Cofactor clearing lands in G1 for both.
        let c = p.clear_cofactor();
        assert!(c.is_in_correct_subgroup_assuming_on_curve());
        assert!(affine_from_ark(&c).is_in_subgroup());
    }
    assert!(Affine::INFINITY.is_in_subgroup());
}

/// arkworks' answer for the same inputs.
fn ark_msm(points: &[Affine], scalars: &[Scalar]) -> G1Projective {
    let ap: Vec<G1Affine> = points.iter().map(affine_to_ark).collect();
    let asc: Vec<ArkFr> = scalars
        .iter()
        .map(|s| ArkFr::from_le_bytes_mod_order(&s.to_bytes_le()))
        .collect();
    G1Projective::msm(&ap, &asc).unwrap_or_else(|e| panic!("{e}"))
}

fn check_msm(points: &[Affine], scalars: &[Scalar], what: &str) {
    let want = ark_msm(points, scalars);
    let got = msm(points, scalars).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(jacobian_to_ark(&got), want, "{what}, n = {}", points.len());
    let got =
        wirespeed_msm::msm::msm_weierstrass(points, scalars).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(jacobian_to_ark(&got), want, "{what}, Weierstrass");
    // msm runs IFMA lanes where the CPU has them; the 64-bit Edwards kernel too.
    let c = wirespeed_msm::msm::choose_window(scalars);
    let got =
        wirespeed_msm::msm::msm_edwards_with(points, scalars, c, Lanes::Serial, CpuFeatures::get());
    assert_eq!(jacobian_to_ark(&got), want, "{what}, scalar Edwards");
    // Wide windows force the batched-affine buckets (>= 4096 of them) at any n.
    if (256..=4096).contains(&points.len()) {
        for c in [13, 16] {
            let got = wirespeed_msm::msm::msm_with_window(points, scalars, c);
            assert_eq!(jacobian_to_ark(&got), want, "{what}, c = {c}");
            let got = wirespeed_msm::msm::msm_edwards(points, scalars, c);
            assert_eq!(jacobian_to_ark(&got), want, "{what}, Edwards c = {c}");
        }
    }
}

#[test]
fn msm_matches_arkworks_for_every_small_n() {
    for n in 1..=64usize {
        let p = gen::points(n, n as u64);
        let s = gen::scalars(n, 1000 + n as u64);
        check_msm(&p, &s, "uniform");
    }
}

#[test]
fn msm_matches_arkworks_at_powers_of_two() {
    for log in [7, 10, 12, 14, 16] {
        let n = 1usize << log;
        let p = gen::points(n, log);
        check_msm(&p, &gen::scalars(n, 7 + log), "uniform");
        check_msm(&p, &gen::skewed_scalars(n, 8 + log), "skewed");
    }
}

#[test]
#[ignore = "2^18 points: minutes in the test profile"]
fn msm_matches_arkworks_at_2_18() {
    let n = 1 << 18;
    let p = gen::points(n, 18);
    check_msm(&p, &gen::scalars(n, 19), "uniform");
}

#[test]
fn msm_edge_inputs_match_arkworks() {
    let n = 300;
    let base = gen::points(n, 77);
    let mut r_minus_1 = wirespeed_msm::fr::R;
    r_minus_1[0] -= 1;
    let r_minus_1 = Scalar::from_limbs(r_minus_1).unwrap_or_else(|| panic!("canonical"));
    // All-zero scalars, all r - 1, all ones.
    check_msm(&base, &vec![Scalar::ZERO; n], "zeros");
    check_msm(&base, &vec![r_minus_1; n], "r - 1");
    check_msm(&base, &vec![Scalar::from_u64(1); n], "ones");
    // Infinity points, duplicates, P with -P, same point with opposite scalars.
    let mut pts = base.clone();
    for i in (0..n).step_by(7) {
        pts[i] = Affine::INFINITY;
    }
    for i in (1..n).step_by(5) {
        pts[i] = pts[0];
    }
    for i in (3..n).step_by(11) {
        pts[i] = pts[2].neg();
    }
    let mut s = gen::scalars(n, 78);
    check_msm(&pts, &s, "infinity, duplicates, negatives");
    s[2] = s[3];
    check_msm(&pts, &s, "P and -P with equal scalars");
    // Every point the same with every scalar the same (all buckets collide).
    check_msm(&vec![base[5]; n], &vec![s[9]; n], "one point, one scalar");
    check_msm(&[], &[], "empty");
    assert!(msm(&base[..3], &s[..2]).is_err());
}

#[test]
fn formats_match_arkworks_serialization() {
    let mut r = rng(5);
    let mut pts: Vec<G1Affine> = (0..50)
        .map(|_| (G1Affine::generator() * ArkFr::rand(&mut r)).into_affine())
        .collect();
    pts.push(G1Affine::identity());
    let scs: Vec<ArkFr> = (0..50).map(|_| ArkFr::rand(&mut r)).collect();
    let (mut pb, mut sb) = (Vec::new(), Vec::new());
    pts.serialize_uncompressed(&mut pb)
        .unwrap_or_else(|e| panic!("{e}"));
    scs.serialize_uncompressed(&mut sb)
        .unwrap_or_else(|e| panic!("{e}"));
    let ours = format::decode_points(&pb).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ours.iter().map(affine_to_ark).collect::<Vec<_>>(), pts);
    assert_eq!(format::encode_points(&ours), pb);
    let s = format::decode_scalars(&sb).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s, scs.iter().map(scalar_from_ark).collect::<Vec<_>>());
    assert_eq!(format::encode_scalars(&s), sb);
}

/// Our decoder accepts exactly what arkworks' validating decoder accepts.
fn agree_on_point_bytes(bytes: &[u8]) {
    let ark = Vec::<G1Affine>::deserialize_uncompressed(bytes);
    let ours = format::decode_points(bytes);
    match (&ark, &ours) {
        (Ok(a), Ok(o)) => assert_eq!(o.iter().map(affine_to_ark).collect::<Vec<_>>(), *a),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "disagree on {:02x?}: ark {:?}, ours {:?}",
            bytes,
            ark.is_ok(),
            ours
        ),
    }
}

#[test]
fn malformed_point_files_are_rejected_like_arkworks_with_the_index() {
    let pts: Vec<G1Affine> = gen::points(3, 5).iter().map(affine_to_ark).collect();
    let mut good = Vec::new();
    pts.serialize_uncompressed(&mut good)
        .unwrap_or_else(|e| panic!("{e}"));
    agree_on_point_bytes(&good);
    let mut r = rand::rngs::StdRng::seed_from_u64(6);
    // Single-byte corruptions everywhere in the third point, and in the flags.
    for pos in 8 + 2 * 96..good.len() {
        for _ in 0..3 {
            let mut b = good.clone();
            b[pos] ^= 1 << r.gen_range(0..8);
            agree_on_point_bytes(&b);
        }
    }
    // Not on the curve, not in the subgroup, non-canonical, both flags, bad lengths.
    let mut b = good.clone();
    b[8 + 96 + 10] ^= 1; // second point's x
    assert_eq!(
        format::decode_points(&b),
        Err(FormatError::NotOnCurve { index: 1 })
    );
    let off = off_subgroup_points(1)[0];
    let mut v = pts.clone();
    v[2] = off;
    let mut b = Vec::new();
    v.serialize_uncompressed(&mut b)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        format::decode_points(&b),
        Err(FormatError::NotInSubgroup { index: 2 })
    );
    agree_on_point_bytes(&b);
    let mut b = good.clone();
    b[8..8 + 48].copy_from_slice(
        &wirespeed_msm::fq::P
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        format::decode_points(&b),
        Err(FormatError::NonCanonical { index: 0 })
    );
    agree_on_point_bytes(&b);
    let mut b = good.clone();
    b[8 + 96 + 95] |= 0xc0;
    assert_eq!(
        format::decode_points(&b),
        Err(FormatError::BadFlags { index: 1 })
    );
    agree_on_point_bytes(&b);
    for cut in [0, 7, 8, 50, good.len() - 1] {
        assert!(format::decode_points(&good[..cut]).is_err());
        agree_on_point_bytes(&good[..cut]);
    }
    let mut b = good.clone();
    b[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        format::decode_points(&b),
        Err(FormatError::LengthMismatch { .. })
    ));
    // Infinity flag with nonzero canonical coordinates: arkworks reads infinity.
    let mut b = good.clone();
    b[8 + 95] |= 0x40;
    b[8 + 95] &= !0x80;
    agree_on_point_bytes(&b);
}

#[test]
fn malformed_scalar_files_are_rejected_with_the_index() {
    let s = gen::scalars(4, 3);
    let mut b = format::encode_scalars(&s);
    let r_bytes: Vec<u8> = wirespeed_msm::fr::R
        .iter()
        .flat_map(|l| l.to_le_bytes())
        .collect();
    b[8 + 3 * 32..].copy_from_slice(&r_bytes);
    assert_eq!(
        format::decode_scalars(&b),
        Err(FormatError::NonCanonical { index: 3 })
    );
    assert!(Vec::<ArkFr>::deserialize_uncompressed(&b[..]).is_err());
    assert!(format::decode_scalars(&b[..b.len() - 1]).is_err());
}

#[test]
fn precomputed_bases_match_arkworks_for_every_group_count() {
    for (n, log) in [(1usize, 0u64), (37, 1), (1000, 2), (5000, 3)] {
        let p = gen::points(n, 50 + log);
        let mut pts = p.clone();
        if n > 3 {
            pts[1] = Affine::INFINITY;
            pts[2] = pts[0].neg();
        }
        for k in [1, 2, 3, 5, 16, 64] {
            let pre = wirespeed_msm::Precomputed::new(&pts, k);
            assert_eq!(pre.len(), n);
            for (what, s) in [
                ("uniform", gen::scalars(n, 60 + log)),
                ("skewed", gen::skewed_scalars(n, 70 + log)),
            ] {
                let want = ark_msm(&pts, &s);
                let got = pre.msm(&s).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(jacobian_to_ark(&got), want, "{what}, n = {n}, K = {k}");
            }
            assert!(pre.msm(&gen::scalars(n + 1, 1)).is_err());
        }
    }
}

/// The curve points whose x is -1 +- sqrt(3): one of them has s (x + 1) = -1 for the
/// s = 1/sqrt(3) of the Edwards map, so its image is at infinity on the Edwards model.
fn edwards_infinity_candidates() -> Vec<G1Affine> {
    let r3 = ArkFq::from(3u8)
        .sqrt()
        .unwrap_or_else(|| panic!("3 is a square"));
    [r3, -r3]
        .iter()
        .filter_map(|&r| G1Affine::get_point_from_x_unchecked(-ArkFq::ONE - r, false))
        .collect()
}

#[test]
fn msm_is_exact_outside_g1_where_edwards_forms_break() {
    let two_torsion = G1Affine::new_unchecked(-ArkFq::ONE, ArkFq::from(0u8));
    let specials = edwards_infinity_candidates();
    assert!(!specials.is_empty(), "x^3 + 1 is a square at one of them");
    let unmapped =
        wirespeed_msm::te::TePre::batch(&specials.iter().map(affine_from_ark).collect::<Vec<_>>())
            .1;
    assert!(
        !unmapped.is_empty(),
        "the map reports its exceptional point"
    );
    let mut pts: Vec<Affine> = gen::points(200, 91);
    pts.extend(off_subgroup_points(40).iter().map(affine_from_ark));
    pts.push(affine_from_ark(&two_torsion));
    pts.extend(specials.iter().map(affine_from_ark));
    let n = pts.len();
    check_msm(
        &pts,
        &gen::scalars(n, 92),
        "off-subgroup and unmappable points",
    );
    // An exceptional Edwards addition: P + Q lands on the point at Edwards infinity.
    let u = specials[0];
    let q = (G1Affine::generator() * ArkFr::from(12345u64)).into_affine();
    let p = (u.into_group() - q).into_affine();
    let pair = [affine_from_ark(&p), affine_from_ark(&q)];
    for c in [2, 8] {
        let one = [Scalar::from_u64(1), Scalar::from_u64(1)];
        let got = wirespeed_msm::msm::msm_edwards(&pair, &one, c);
        assert_eq!(jacobian_to_ark(&got), u.into_group(), "c = {c}");
    }
    check_msm(
        &pair,
        &[Scalar::from_u64(3), Scalar::from_u64(3)],
        "exceptional pair",
    );
    for k in [1, 3] {
        let pre = wirespeed_msm::Precomputed::new(&pts, k);
        let s = gen::scalars(n, 93);
        let want = ark_msm(&pts, &s);
        let got = pre.msm(&s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(jacobian_to_ark(&got), want, "Precomputed K = {k}");
        let pre = wirespeed_msm::Precomputed::new(&pair, k);
        let got = pre.msm(&[Scalar::from_u64(1), Scalar::from_u64(1)]);
        assert_eq!(got.map(|g| jacobian_to_ark(&g)), Ok(u.into_group()));
    }
}
