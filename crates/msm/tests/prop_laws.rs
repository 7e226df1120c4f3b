//! Field and group laws by property testing: Fq is a field; Jacobian and XYZZ
//! arithmetic agree with each other and with the group laws on G1; the twisted Edwards
//! form round-trips and adds like the Weierstrass one.

use proptest::prelude::*;
use wirespeed_msm::msm::{msm_edwards, msm_edwards_with, msm_with_window};
use wirespeed_msm::te::{TeExt, TePre};
use wirespeed_msm::{Affine, Fq, Jacobian, Scalar};
use wirespeed_msm::{CpuFeatures, Lanes};

fn fq() -> impl Strategy<Value = Fq> {
    prop::array::uniform6(any::<u64>()).prop_map(|mut l| {
        l[5] &= (1 << 56) - 1; // below 2^376 < p
        Fq::from_limbs(l).unwrap_or(Fq::ONE)
    })
}

fn point() -> impl Strategy<Value = Affine> {
    any::<u64>().prop_map(|k| {
        Jacobian::from(Affine::generator())
            .mul_u64(k | 1)
            .to_affine()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fq_is_a_field(a in fq(), b in fq(), c in fq()) {
        prop_assert_eq!(a.mul(&b).mul(&c), a.mul(&b.mul(&c)));
        prop_assert_eq!(a.mul(&b), b.mul(&a));
        prop_assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
        prop_assert_eq!(a.sub(&b).add(&b), a);
        prop_assert_eq!(a.add(&a.neg()), Fq::ZERO);
        prop_assert_eq!(a.mul_portable(&b), a.mul(&b));
        if let Some(inv) = a.vartime_inverse() {
            prop_assert_eq!(a.mul(&inv), Fq::ONE);
        }
        let bytes = a.to_bytes_le();
        prop_assert_eq!(Fq::from_bytes_le(&bytes), Some(a));
    }

    #[test]
    fn group_laws_hold(p in point(), q in point(), r in point()) {
        let (jp, jq, jr) = (Jacobian::from(p), Jacobian::from(q), Jacobian::from(r));
        prop_assert_eq!(jp.add(&jq).add(&jr), jp.add(&jq.add(&jr)));
        prop_assert_eq!(jp.add(&jq), jq.add(&jp));
        prop_assert!(jp.add_affine(&p.neg()).is_infinity());
        prop_assert_eq!(jp.double(), jp.add(&jp));
        prop_assert!(p.is_on_curve() && p.is_in_subgroup());
        prop_assert_eq!(jp.add(&jq).to_affine(), jp.add_affine(&q).to_affine());
    }

    #[test]
    fn msm_is_linear_and_matches_double_and_add(
        pts in prop::collection::vec(point(), 1..12),
        ks in prop::collection::vec(any::<u64>(), 12),
        c in 2u32..17,
    ) {
        let s: Vec<Scalar> = ks[..pts.len()].iter().map(|&k| Scalar::from_u64(k)).collect();
        let mut want = Jacobian::INFINITY;
        for (p, &k) in pts.iter().zip(&ks) {
            want = want.add(&Jacobian::from(*p).mul_u64(k));
        }
        prop_assert_eq!(msm_with_window(&pts, &s, c), want);
        prop_assert_eq!(msm_edwards(&pts, &s, c), want);
        prop_assert_eq!(msm_edwards_with(&pts, &s, c, Lanes::Serial, CpuFeatures::get()), want);
    }

    #[test]
    fn edwards_form_round_trips_and_adds_like_weierstrass(p in point(), q in point()) {
        let (te, unmapped) = TePre::batch(&[p, q, p.neg()]);
        prop_assert!(unmapped.is_empty());
        let (ep, eq) = (TeExt::from_pre(&te[0]), TeExt::from_pre(&te[1]));
        prop_assert!(ep.is_on_curve() && eq.is_on_curve());
        prop_assert_eq!(ep.to_jacobian().to_affine(), p);
        let want = Jacobian::from(p).add_affine(&q);
        let mut mixed = ep;
        mixed.add_pre_assign(&te[1]);
        prop_assert!(mixed.is_on_curve());
        prop_assert_eq!(mixed.to_jacobian(), want);
        let mut full = ep;
        full.add_assign(&eq);
        prop_assert_eq!(full.to_jacobian(), want);
        prop_assert_eq!(ep.double().to_jacobian(), Jacobian::from(p).double());
        prop_assert_eq!(te[0].neg(), te[2]);
    }
}
