//! Several signatures at once: the double-scalar multiplication [S]B - [k]A of N prepared
//! signatures runs in the N lanes of a SIMD field backend (one signature per lane, not
//! one point spread over lanes), with the point formulas of [`crate::point`].
//!
//! Lanes cannot branch independently, so instead of wNAF this uses signed radix-16 digits
//! for both scalars (64 windows each, digits in [-8, 8]): every window does four
//! doublings, one addition of a per-lane entry from a 17-entry table of [-8..8](-A), and
//! one addition of a per-lane entry from a 17-entry table of [-8..8]B. A zero digit adds
//! the identity, which the complete formulas handle. Per signature that is 252 doublings
//! and 128 additions, against ~253 doublings and ~70 additions for the serial wNAF; the
//! lanes pay that back by doing N field operations per instruction.
//!
//! Variable time in the scalars: public data only.

use std::sync::OnceLock;

use wirespeed_field::{Fe51, Scalar};

use crate::point::{AffineNiels, CurveField, Extended, ProjNiels};
use crate::serial;
use crate::verify::Prepared;

/// A SIMD field backend with `N` independent lanes.
pub(crate) trait Lanes: CurveField + Send + Sync + 'static {
    /// Number of lanes.
    const N: usize;
    /// Packs `v` (exactly N elements), lane j = v[j].
    ///
    /// # Safety
    /// The CPU must support the backend's instruction set.
    unsafe fn pack(v: &[Fe51]) -> Self;
    /// Writes the N lanes to `out` (exactly N elements).
    fn unpack(&self, out: &mut [Fe51]);
    /// Lane j of the result is lane j of `table[idx[j]]` (idx has N entries).
    fn select(table: &[Self], idx: &[usize]) -> Self;
    /// The 17-entry base-point table of this backend, built on first use.
    ///
    /// # Safety
    /// The CPU must support the backend's instruction set.
    unsafe fn base_table() -> &'static SignedTable<Self>;
}

/// Entries for digits -8..=8 (index = digit + 8), stored coordinate by coordinate so a
/// per-lane lookup is one gather per limb.
#[derive(Debug)]
pub(crate) struct SignedTable<F> {
    a: [F; 17],
    b: [F; 17],
    c: [F; 17],
    d: [F; 17],
}

impl<F: Lanes> SignedTable<F> {
    #[inline(always)]
    fn proj_niels(&self, idx: &[usize]) -> ProjNiels<F> {
        ProjNiels {
            y_plus_x: F::select(&self.a, idx),
            y_minus_x: F::select(&self.b, idx),
            z: F::select(&self.c, idx),
            t2d: F::select(&self.d, idx),
        }
    }

    #[inline(always)]
    fn affine_niels(&self, idx: &[usize]) -> AffineNiels<F> {
        AffineNiels {
            y_plus_x: F::select(&self.a, idx),
            y_minus_x: F::select(&self.b, idx),
            xy2d: F::select(&self.c, idx),
        }
    }

    /// Written with plain loops (no closures) so it inlines into the `#[target_feature]`
    /// callers together with the field operations.
    #[inline(always)]
    fn from_proj(m: &[ProjNiels<F>; 9]) -> Self {
        let mut t = SignedTable {
            a: [F::zero(); 17],
            b: [F::zero(); 17],
            c: [F::zero(); 17],
            d: [F::zero(); 17],
        };
        for i in 0..17 {
            let e = if i >= 8 { m[i - 8] } else { m[8 - i].neg() };
            t.a[i] = e.y_plus_x;
            t.b[i] = e.y_minus_x;
            t.c[i] = e.z;
            t.d[i] = e.t2d;
        }
        t
    }
}

/// Builds the base table for a backend (all lanes equal).
///
/// # Safety
/// The CPU must support the backend's instruction set.
pub(crate) unsafe fn build_base_table<F: Lanes>() -> SignedTable<F> {
    let b = serial::basepoint();
    let mut m = [AffineNiels::<Fe51>::identity(); 9];
    let mut acc = b;
    m[1] = b.to_affine_niels();
    let bn = b.to_proj_niels();
    for i in 2..9 {
        acc = acc.add_niels(&bn).to_extended();
        m[i] = acc.to_affine_niels();
    }
    let e = |i: usize| if i >= 8 { m[i - 8] } else { m[8 - i].neg() };
    // SAFETY: forwarded contract (the CPU supports F's instruction set).
    let splat = |v: &Fe51| unsafe { F::pack(&vec![*v; F::N]) };
    SignedTable {
        a: std::array::from_fn(|i| splat(&e(i).y_plus_x)),
        b: std::array::from_fn(|i| splat(&e(i).y_minus_x)),
        c: std::array::from_fn(|i| splat(&e(i).xy2d)),
        d: std::array::from_fn(|_| F::zero()),
    }
}

/// The table of [-8..8]P for a lane point P.
#[inline(always)]
fn signed_multiples<F: Lanes>(p: &Extended<F>) -> SignedTable<F> {
    let mut m = [ProjNiels::<F>::identity(); 9];
    m[1] = p.to_proj_niels();
    let mut acc = *p;
    for i in 2..9 {
        acc = acc.add_niels(&m[1]).to_extended();
        m[i] = acc.to_proj_niels();
    }
    SignedTable::from_proj(&m)
}

/// [16]P: four doublings, staying in projective coordinates until the last.
#[inline(always)]
fn times16<F: Lanes>(p: &Extended<F>) -> Extended<F> {
    let q = p
        .to_projective()
        .double()
        .to_projective()
        .double()
        .to_projective()
        .double()
        .to_projective();
    q.double().to_extended()
}

/// Signed radix-16 digits of a scalar (< 2^253), each in [-8, 8], as table indices.
fn digits(s: &Scalar) -> [i8; 64] {
    let mut d = [0i8; 64];
    s.signed_radix(4, &mut d);
    d
}

/// Computes q_j = [S_j]B - [k_j]A_j for the N prepared signatures in `items` (exactly N),
/// writing q_j to `out[j]`; for cofactored items (all or none) [8](q_j - R_j) instead
/// (see [`crate::verify::finish_lanes`]).
///
/// # Safety
/// The CPU must support F's instruction set.
#[inline(always)]
pub(crate) unsafe fn double_scalar_mul<F: Lanes>(items: &[Prepared], out: &mut [Extended<Fe51>]) {
    let n = F::N;
    debug_assert!(items.len() == n && out.len() == n);
    let pack = |f: &dyn Fn(&Prepared) -> Fe51| {
        let v: Vec<Fe51> = items.iter().map(f).collect();
        // SAFETY: forwarded contract.
        unsafe { F::pack(&v) }
    };
    let a = Extended::<F> {
        x: pack(&|p| p.neg_a.x),
        y: pack(&|p| p.neg_a.y),
        z: pack(&|p| p.neg_a.z),
        t: pack(&|p| p.neg_a.t),
    };
    let a_table = signed_multiples(&a);
    // SAFETY: forwarded contract.
    let b_table = unsafe { F::base_table() };

    let kd: Vec<[i8; 64]> = items.iter().map(|p| digits(&p.k)).collect();
    let sd: Vec<[i8; 64]> = items.iter().map(|p| digits(&p.s)).collect();
    let mut ia = [0usize; 8];
    let mut ib = [0usize; 8];

    let mut r = Extended::<F>::identity();
    for w in (0..64).rev() {
        if w != 63 {
            r = times16(&r);
        }
        for j in 0..n {
            ia[j] = (kd[j][w] + 8) as usize;
            ib[j] = (sd[j][w] + 8) as usize;
        }
        r = r.add_niels(&a_table.proj_niels(&ia[..n])).to_extended();
        r = r.add_affine(&b_table.affine_niels(&ib[..n])).to_extended();
    }

    if items[0].cofactored {
        // The cofactored equation's [8](Q - R), in the lanes (R and the three doublings
        // cost an eighth of their serial price); every item of a call has one mode.
        let neg_r = Extended::<F> {
            x: pack(&|p| p.r.neg().x),
            y: pack(&|p| p.r.y),
            z: pack(&|p| p.r.z),
            t: pack(&|p| p.r.neg().t),
        };
        r = r.add_niels(&neg_r.to_proj_niels()).to_extended();
        r = r
            .to_projective()
            .double()
            .to_projective()
            .double()
            .to_projective()
            .double()
            .to_extended();
    }

    let mut xs = vec![Fe51::ZERO; n];
    let mut ys = vec![Fe51::ZERO; n];
    let mut zs = vec![Fe51::ZERO; n];
    let mut ts = vec![Fe51::ZERO; n];
    r.x.unpack(&mut xs);
    r.y.unpack(&mut ys);
    r.z.unpack(&mut zs);
    r.t.unpack(&mut ts);
    for j in 0..n {
        out[j] = Extended {
            x: xs[j],
            y: ys[j],
            z: zs[j],
            t: ts[j],
        };
    }
}

/// Implements [`CurveField`] and [`Lanes`] for a lane type and defines its entry point,
/// a `#[target_feature]` instantiation of [`double_scalar_mul`] so that every inlined
/// field operation is compiled for the instruction set.
/// Digits for the four-product path: magnitudes below 2^131 need 33 signed radix-16 digits.
const HALF_DIGITS: usize = 33;

/// Returns sum_j [e_j]P_j over the four (point, scalar) pairs, scalars below 2^131, running
/// the four products in lanes 0..3 (further lanes compute the identity and are ignored).
/// Used by single-signature verification after scalar halving (see `crate::halving`).
///
/// # Safety
/// The CPU must support F's instruction set.
#[inline(always)]
pub(crate) unsafe fn four_product_sum<F: Lanes>(
    points: &[Extended<Fe51>; 4],
    scalars: &[Scalar; 4],
) -> Extended<Fe51> {
    let n = F::N;
    debug_assert!(n >= 4);
    let id = Extended::<Fe51>::identity();
    let lane = |j: usize| if j < 4 { points[j] } else { id };
    let mut xs = [Fe51::ZERO; 8];
    let mut ys = [Fe51::ZERO; 8];
    let mut zs = [Fe51::ZERO; 8];
    let mut ts = [Fe51::ZERO; 8];
    for j in 0..n {
        let p = lane(j);
        (xs[j], ys[j], zs[j], ts[j]) = (p.x, p.y, p.z, p.t);
    }
    // SAFETY: forwarded contract.
    let p = unsafe {
        Extended::<F> {
            x: F::pack(&xs[..n]),
            y: F::pack(&ys[..n]),
            z: F::pack(&zs[..n]),
            t: F::pack(&ts[..n]),
        }
    };
    let table = signed_multiples(&p);
    let mut d = [[0i8; HALF_DIGITS]; 8];
    for j in 0..4 {
        scalars[j].signed_radix(4, &mut d[j]);
    }
    let mut idx = [8usize; 8];
    let mut r = Extended::<F>::identity();
    for w in (0..HALF_DIGITS).rev() {
        if w != HALF_DIGITS - 1 {
            r = times16(&r);
        }
        for j in 0..4 {
            idx[j] = (d[j][w] + 8) as usize;
        }
        r = r.add_niels(&table.proj_niels(&idx[..n])).to_extended();
    }
    r.x.unpack(&mut xs[..n]);
    r.y.unpack(&mut ys[..n]);
    r.z.unpack(&mut zs[..n]);
    r.t.unpack(&mut ts[..n]);
    let part = |j: usize| Extended {
        x: xs[j],
        y: ys[j],
        z: zs[j],
        t: ts[j],
    };
    let mut sum = part(0);
    for j in 1..4 {
        sum = sum.add_niels(&part(j).to_proj_niels()).to_extended();
    }
    sum
}

#[cfg(target_arch = "x86_64")]
macro_rules! lane_backend {
    ($ty:ty, $n:expr, $features:literal, $entry:ident, $entry4:ident, $pow:ident) => {
        impl CurveField for $ty {
            #[inline(always)]
            fn zero() -> Self {
                // SAFETY: values of this type exist only on CPUs with its instruction set.
                unsafe { <Self as Lanes>::pack(&[Fe51::ZERO; $n]) }
            }
            #[inline(always)]
            fn one() -> Self {
                // SAFETY: as above.
                unsafe { <Self as Lanes>::pack(&[Fe51::ONE; $n]) }
            }
            #[inline(always)]
            fn d2() -> Self {
                // SAFETY: as above.
                unsafe { <Self as Lanes>::pack(&[Fe51::EDWARDS_D2; $n]) }
            }
        }

        impl Lanes for $ty {
            const N: usize = $n;
            #[inline(always)]
            unsafe fn pack(v: &[Fe51]) -> Self {
                // SAFETY: forwarded contract.
                unsafe { <$ty>::pack(v) }
            }
            #[inline(always)]
            fn unpack(&self, out: &mut [Fe51]) {
                <$ty>::unpack_into(self, out)
            }
            #[inline(always)]
            fn select(table: &[Self], idx: &[usize]) -> Self {
                <$ty>::select(table, idx)
            }
            unsafe fn base_table() -> &'static SignedTable<Self> {
                static T: OnceLock<SignedTable<$ty>> = OnceLock::new();
                // SAFETY: forwarded contract.
                T.get_or_init(|| unsafe { build_base_table() })
            }
        }

        /// The instantiation for this backend, compiled with its instruction set enabled.
        ///
        /// # Safety
        /// The CPU must support the instruction set named in the attribute.
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $entry(items: &[Prepared], out: &mut [Extended<Fe51>]) {
            // SAFETY: the features are enabled here and present (caller's contract).
            unsafe { double_scalar_mul::<$ty>(items, out) }
        }

        /// Raises each of `x` (at most N values) to (p-5)/8, writing `out`.
        ///
        /// # Safety
        /// The CPU must support the instruction set named in the attribute.
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $pow(x: &[Fe51], out: &mut [Fe51]) {
            let mut v = [Fe51::ONE; $n];
            v[..x.len()].copy_from_slice(x);
            // SAFETY: the features are enabled here and present (caller's contract).
            let r = wirespeed_field::pow_p58(&unsafe { <$ty as Lanes>::pack(&v) });
            let mut o = [Fe51::ZERO; $n];
            <$ty as Lanes>::unpack(&r, &mut o);
            out.copy_from_slice(&o[..x.len()]);
        }

        /// The four-product instantiation for this backend.
        ///
        /// # Safety
        /// The CPU must support the instruction set named in the attribute.
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $entry4(
            points: &[Extended<Fe51>; 4],
            scalars: &[Scalar; 4],
        ) -> Extended<Fe51> {
            // SAFETY: the features are enabled here and present (caller's contract).
            unsafe { four_product_sum::<$ty>(points, scalars) }
        }
    };
}

#[cfg(target_arch = "x86_64")]
lane_backend!(
    wirespeed_field::avx2::Fe26x4,
    4,
    "avx2",
    double_scalar_mul_avx2,
    four_product_sum_avx2,
    pow_p58_avx2
);
#[cfg(target_arch = "x86_64")]
lane_backend!(
    wirespeed_field::ifma::Fe51x4,
    4,
    "avx512f,avx512ifma,avx512vl,avx512dq",
    double_scalar_mul_ifma4,
    four_product_sum_ifma4,
    pow_p58_ifma4
);
#[cfg(target_arch = "x86_64")]
lane_backend!(
    wirespeed_field::ifma::Fe51x8,
    8,
    "avx512f,avx512ifma,avx512dq",
    double_scalar_mul_ifma,
    four_product_sum_ifma,
    pow_p58_ifma
);
