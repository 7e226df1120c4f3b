//! Property tests (proptest) for algebraic facts exposed by the public API, each checked
//! against an independent model: num-bigint for GF(2^255 - 19) and for scalars mod L,
//! curve25519-dalek for points.

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar as DScalar;
use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;
use wirespeed_ed25519::point::Extended;
use wirespeed_ed25519::serial::{
    vartime_basepoint_mul, vartime_decompress, vartime_double_scalar_mul_basepoint,
};
use wirespeed_field::{Fe51, FieldOps, Scalar};

fn p() -> BigUint {
    (BigUint::from(1u8) << 255u32) - BigUint::from(19u8)
}

fn l() -> BigUint {
    (BigUint::from(1u8) << 252u32)
        + "27742317777372353535851937790883648493"
            .parse::<BigUint>()
            .unwrap()
}

/// The integer an Fe51 load reads: the 32 bytes with bit 255 ignored.
fn loaded(b: &[u8; 32]) -> BigUint {
    let mut c = *b;
    c[31] &= 0x7f;
    BigUint::from_bytes_le(&c)
}

/// The value of an element, from its canonical encoding.
fn value(x: &Fe51) -> BigUint {
    BigUint::from_bytes_le(&x.to_bytes())
}

/// The canonical encoding must be the reduced value: < p, and equal to `want` mod p.
fn assert_fe(x: &Fe51, want: &BigUint) -> Result<(), TestCaseError> {
    let v = value(x);
    prop_assert!(v < p(), "to_bytes is not reduced: {v}");
    prop_assert_eq!(v, want % p());
    Ok(())
}

/// A curve point with a random prime-order part and a random small-order part (dalek's
/// multiplication, the order-8 point from its y coordinate).
fn dalek_point(x: &[u8; 32], torsion: u8) -> EdwardsPoint {
    let t8 = CompressedEdwardsY(
        hex::decode("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
            .unwrap()
            .try_into()
            .unwrap(),
    )
    .decompress()
    .unwrap();
    ED25519_BASEPOINT_POINT * DScalar::from_bytes_mod_order(*x) + t8 * DScalar::from(torsion % 8)
}

/// Our decoding of a dalek point (via its canonical encoding).
fn ours(p: &EdwardsPoint) -> Extended<Fe51> {
    vartime_decompress(&p.compress().to_bytes())
        .expect("a canonical encoding decodes")
        .point
}

/// 32 bytes: uniformly random, or near the edges where reductions happen (0, 1, p - 1,
/// p, p + 1, 2^255 - 1, and random low bytes under an all-ones top), either sign bit.
fn edge_bytes() -> impl Strategy<Value = [u8; 32]> {
    let specials = prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(0x7fff_ffec), // p - 1 (low byte 0xec under an all-ones top)
        Just(0x7fff_ffed), // p
        Just(0x7fff_ffee), // p + 1
        Just(0x7fff_ffff), // 2^255 - 1
    ];
    prop_oneof![
        2 => any::<[u8; 32]>(),
        1 => (specials, any::<bool>()).prop_map(|(v, sign)| {
            let mut b = [0u8; 32];
            if v >= 0x7fff_0000 {
                b = [0xff; 32];
                b[31] = 0x7f;
                b[0] = v as u8;
            } else {
                b[0] = v as u8;
            }
            b[31] |= (sign as u8) << 7;
            b
        }),
        1 => (any::<[u8; 4]>(), any::<bool>()).prop_map(|(low, sign)| {
            let mut b = [0xffu8; 32];
            b[..4].copy_from_slice(&low);
            b[31] = 0x7f | ((sign as u8) << 7);
            b
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // ---------------------------------------------------------------- GF(2^255 - 19)

    #[test]
    fn fe_load_store_reduces(a in edge_bytes()) {
        assert_fe(&Fe51::from_bytes(&a), &loaded(&a))?;
    }

    #[test]
    fn fe_mul_matches_bigint(a in edge_bytes(), b in edge_bytes()) {
        let x = Fe51::from_bytes(&a).mul(&Fe51::from_bytes(&b));
        assert_fe(&x, &(loaded(&a) * loaded(&b)))?;
    }

    #[test]
    fn fe_square_matches_bigint(a in edge_bytes()) {
        let fa = Fe51::from_bytes(&a);
        assert_fe(&fa.square(), &(loaded(&a) * loaded(&a)))?;
        assert_fe(&fa.square_n(3), &loaded(&a).modpow(&BigUint::from(8u8), &p()))?;
    }

    #[test]
    fn fe_add_sub_neg_match_bigint(a in edge_bytes(), b in edge_bytes(), c in edge_bytes()) {
        let (fa, fb, fc) = (Fe51::from_bytes(&a), Fe51::from_bytes(&b), Fe51::from_bytes(&c));
        let (ba, bb, bc) = (loaded(&a), loaded(&b), loaded(&c));
        // An unreduced sum is a valid input to mul, square and sub (the limb contract).
        assert_fe(&fa.add(&fb).mul(&fc), &((&ba + &bb) * &bc))?;
        assert_fe(&fa.add(&fb).square(), &((&ba + &bb) * (&ba + &bb)))?;
        assert_fe(&fa.add(&fb).mul(&fa.add(&fc)), &((&ba + &bb) * (&ba + &bc)))?;
        assert_fe(&fa.sub(&fb), &(&ba + p() * 2u8 - &bb))?;
        assert_fe(&fa.sub(&fb.add(&fc)), &(&ba + p() * 4u8 - &bb - &bc))?;
        assert_fe(&fa.neg(), &(p() * 2u8 - &ba))?;
        prop_assert_eq!(fa.is_zero(), (&ba % p()) == BigUint::from(0u8));
        prop_assert_eq!(fa.is_negative(), (&ba % p()).bit(0));
        prop_assert_eq!(fa.equals(&fb), &ba % p() == &bb % p());
    }

    #[test]
    fn fe_invert_matches_bigint(a in edge_bytes()) {
        let want = loaded(&a).modpow(&(p() - 2u8), &p());
        let inv = Fe51::from_bytes(&a).invert();
        assert_fe(&inv, &want)?;
        if loaded(&a) % p() != BigUint::from(0u8) {
            assert_fe(&inv.mul(&Fe51::from_bytes(&a)), &BigUint::from(1u8))?;
        }
    }

    #[test]
    fn fe_sqrt_ratio_is_a_square_root(u in edge_bytes(), v in edge_bytes()) {
        let (bu, bv) = (loaded(&u) % p(), loaded(&v) % p());
        prop_assume!(bv != BigUint::from(0u8));
        let (ok, r) = Fe51::sqrt_ratio(&Fe51::from_bytes(&u), &Fe51::from_bytes(&v));
        // Euler's criterion on u/v decides whether a root exists.
        let ratio = &bu * bv.modpow(&(p() - 2u8), &p()) % p();
        let is_square = ratio == BigUint::from(0u8)
            || ratio.modpow(&((p() - 1u8) >> 1u32), &p()) == BigUint::from(1u8);
        prop_assert_eq!(ok, is_square);
        if ok {
            let br = value(&r);
            prop_assert_eq!(&bv * &br * &br % p(), bu);
            prop_assert!(!br.bit(0), "the root returned is the non-negative one");
        }
    }

    // ---------------------------------------------------------------- scalars mod L

    #[test]
    fn scalar_wide_reduction_matches_bigint_and_dalek(a in any::<[u8; 32]>(), b in any::<[u8; 32]>()) {
        let mut wide = [0u8; 64];
        wide[..32].copy_from_slice(&a);
        wide[32..].copy_from_slice(&b);
        let ours = Scalar::from_bytes_mod_order_wide(&wide).to_bytes();
        let want = BigUint::from_bytes_le(&wide) % l();
        prop_assert_eq!(BigUint::from_bytes_le(&ours), want);
        prop_assert_eq!(ours, DScalar::from_bytes_mod_order_wide(&wide).to_bytes());
        prop_assert_eq!(
            Scalar::from_bytes_mod_order(&a).to_bytes(),
            DScalar::from_bytes_mod_order(a).to_bytes()
        );
    }

    #[test]
    fn scalar_canonical_check_is_less_than_l(a in any::<[u8; 32]>(), top in 0u8..0x20) {
        // Bias the top byte towards L's neighbourhood so both outcomes occur.
        let mut a = a;
        a[31] = top;
        let ours = Scalar::from_canonical_bytes(&a);
        prop_assert_eq!(ours.is_some(), BigUint::from_bytes_le(&a) < l());
        prop_assert_eq!(ours.is_some(), bool::from(DScalar::from_canonical_bytes(a).is_some()));
        if let Some(s) = ours {
            prop_assert_eq!(s.to_bytes(), a);
        }
    }

    #[test]
    fn scalar_mul_add_match_dalek(a in any::<[u8; 32]>(), b in any::<[u8; 32]>()) {
        let (sa, sb) = (Scalar::from_bytes_mod_order(&a), Scalar::from_bytes_mod_order(&b));
        let (da, db) = (DScalar::from_bytes_mod_order(a), DScalar::from_bytes_mod_order(b));
        prop_assert_eq!(sa.mul(&sb).to_bytes(), (da * db).to_bytes());
        prop_assert_eq!(sa.add(&sb).to_bytes(), (da + db).to_bytes());
    }

    #[test]
    fn scalar_naf_represents_the_scalar(a in any::<[u8; 32]>(), w in 2usize..=8) {
        let s = Scalar::from_bytes_mod_order(&a);
        let naf = s.vartime_naf(w);
        let mut sum = BigInt::from(0);
        let mut last_nonzero: Option<usize> = None;
        for (i, d) in naf.iter().enumerate() {
            if *d != 0 {
                prop_assert!(d % 2 != 0, "digit {} at {} is even", d, i);
                prop_assert!((*d as i32).abs() < (1 << (w - 1)), "digit {} too large", d);
                if let Some(j) = last_nonzero {
                    prop_assert!(i - j >= w, "non-zero digits at {} and {} (w = {})", j, i, w);
                }
                last_nonzero = Some(i);
                sum += BigInt::from(*d) << i;
            }
        }
        prop_assert_eq!(sum, BigInt::from(BigUint::from_bytes_le(&s.to_bytes())));
    }

    // ---------------------------------------------------------------- points

    #[test]
    fn decompress_compress_round_trip(x in any::<[u8; 32]>(), t in 0u8..8) {
        let p = dalek_point(&x, t);
        let bytes = p.compress().to_bytes();
        let d = vartime_decompress(&bytes).expect("a point's encoding decodes");
        prop_assert!(d.is_canonical());
        prop_assert_eq!(d.point.compress(), bytes);
        prop_assert_eq!(d.point.is_small_order(), p.is_small_order());
    }

    #[test]
    fn decompress_agrees_with_dalek_on_any_bytes(b in edge_bytes()) {
        let theirs = CompressedEdwardsY(b).decompress();
        let ours = vartime_decompress(&b);
        prop_assert_eq!(ours.is_some(), theirs.is_some());
        if let (Some(o), Some(t)) = (ours, theirs) {
            let canon = t.compress().to_bytes();
            prop_assert_eq!(o.point.compress(), canon);
            prop_assert_eq!(o.is_canonical(), canon == b);
            prop_assert_eq!(o.point.is_small_order(), t.is_small_order());
        }
    }

    #[test]
    fn point_add_double_neg_match_dalek(x in any::<[u8; 32]>(), y in any::<[u8; 32]>(), t in 0u8..8) {
        let (p, q) = (dalek_point(&x, t), dalek_point(&y, 0));
        let (op, oq) = (ours(&p), ours(&q));
        prop_assert_eq!(op.add_niels(&oq.to_proj_niels()).to_extended().compress(), (p + q).compress().to_bytes());
        prop_assert_eq!(op.sub_niels(&oq.to_proj_niels()).to_extended().compress(), (p - q).compress().to_bytes());
        prop_assert_eq!(op.double().compress(), (p + p).compress().to_bytes());
        prop_assert_eq!(op.neg().compress(), (-p).compress().to_bytes());
        prop_assert_eq!(op.mul_by_cofactor().compress(), p.mul_by_cofactor().compress().to_bytes());
        // Completeness: adding the identity and a point to itself.
        prop_assert_eq!(op.add_niels(&Extended::identity().to_proj_niels()).to_extended().compress(), p.compress().to_bytes());
        prop_assert_eq!(op.add_niels(&op.to_proj_niels()).to_extended().compress(), (p + p).compress().to_bytes());
    }

    #[test]
    fn double_scalar_mul_matches_dalek(a in any::<[u8; 32]>(), b in any::<[u8; 32]>(), x in any::<[u8; 32]>(), t in 0u8..8) {
        let p = dalek_point(&x, t);
        let got = vartime_double_scalar_mul_basepoint(
            &Scalar::from_bytes_mod_order(&a),
            &ours(&p),
            &Scalar::from_bytes_mod_order(&b),
        );
        let want = EdwardsPoint::vartime_double_scalar_mul_basepoint(
            &DScalar::from_bytes_mod_order(a),
            &p,
            &DScalar::from_bytes_mod_order(b),
        );
        prop_assert_eq!(got.compress(), want.compress().to_bytes());
        prop_assert_eq!(
            vartime_basepoint_mul(&Scalar::from_bytes_mod_order(&b)).compress(),
            EdwardsPoint::mul_base(&DScalar::from_bytes_mod_order(b)).compress().to_bytes()
        );
    }
}
