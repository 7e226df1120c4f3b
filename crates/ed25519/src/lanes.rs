//! Several signatures at once: the double-scalar multiplication [S]B - [k]A of N prepared
//! signatures runs in the N lanes of a SIMD field backend (one signature per lane, not
//! one point spread over lanes), with the point formulas of [`crate::point`].
//!
//! Lanes cannot branch independently, so instead of wNAF this uses signed digits: radix
//! 16 for k (64 windows, digits in [-8, 8]) and radix 256 for S (32 digits in
//! [-128, 128)). Every window does four doublings and one addition of a per-lane entry
//! from a 17-entry table of [-8..8](-A); every other window also adds a per-lane entry
//! from a process-wide 257-entry affine table of [-128..128]B (built once per backend).
//! A zero digit adds the identity, which the complete formulas handle. An addition
//! followed by doublings converts to projective coordinates (3 products, not the 4 of
//! extended). Per signature that is 252 doublings and 96 additions, against ~253
//! doublings and ~70 additions for the serial wNAF; the lanes pay that back by doing N
//! field operations per instruction. (Radix 16 for both scalars, 128 additions, was
//! 7.8% slower on a Zen 5 core.)
//!
//! Variable time in the scalars: public data only.

use std::sync::OnceLock;

use wirespeed_field::{Fe51, Scalar};

use crate::point::{AffineNiels, CurveField, Extended, ProjNiels, Projective};
use crate::serial;
use crate::verify::Prepared;

/// A SIMD field backend with `N` independent lanes.
pub(crate) trait LaneCurve: CurveField + Send + Sync + 'static {
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
    /// The 257-entry radix-256 base-point table of this backend, built on first use.
    ///
    /// # Safety
    /// The CPU must support the backend's instruction set.
    unsafe fn wide_base_table() -> &'static WideTable<Self>;
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

impl<F: LaneCurve> SignedTable<F> {
    #[inline(always)]
    fn proj_niels(&self, idx: &[usize]) -> ProjNiels<F> {
        ProjNiels {
            y_plus_x: F::select(&self.a, idx),
            y_minus_x: F::select(&self.b, idx),
            z: F::select(&self.c, idx),
            t2d: F::select(&self.d, idx),
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

/// Affine entries [d]B for the signed radix-256 digits d in -128..=128 (index d + 128),
/// coordinate by coordinate as in [`SignedTable`], all lanes equal.
#[derive(Debug)]
pub(crate) struct WideTable<F> {
    a: Vec<F>,
    b: Vec<F>,
    c: Vec<F>,
}

impl<F: LaneCurve> WideTable<F> {
    #[inline(always)]
    fn affine_niels(&self, idx: &[usize]) -> AffineNiels<F> {
        AffineNiels {
            y_plus_x: F::select(&self.a, idx),
            y_minus_x: F::select(&self.b, idx),
            xy2d: F::select(&self.c, idx),
        }
    }
}

/// Builds the radix-256 base table for a backend.
///
/// # Safety
/// The CPU must support the backend's instruction set.
pub(crate) unsafe fn build_wide_base_table<F: LaneCurve>() -> WideTable<F> {
    let b = serial::basepoint();
    let bn = b.to_proj_niels();
    let mut m = vec![AffineNiels::<Fe51>::identity(); 129];
    let mut acc = Extended::<Fe51>::identity();
    for e in m.iter_mut().skip(1) {
        acc = acc.add_niels(&bn).to_extended();
        *e = acc.to_affine_niels();
    }
    let e = |i: usize| {
        if i >= 128 {
            m[i - 128]
        } else {
            m[128 - i].neg()
        }
    };
    // SAFETY: forwarded contract (the CPU supports F's instruction set).
    let splat = |v: &Fe51| unsafe { F::pack(&vec![*v; F::N]) };
    WideTable {
        a: (0..257).map(|i| splat(&e(i).y_plus_x)).collect(),
        b: (0..257).map(|i| splat(&e(i).y_minus_x)).collect(),
        c: (0..257).map(|i| splat(&e(i).xy2d)).collect(),
    }
}

/// The table of [-8..8]P for a lane point P.
#[inline(always)]
fn signed_multiples<F: LaneCurve>(p: &Extended<F>) -> SignedTable<F> {
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
fn times16<F: LaneCurve>(p: &Extended<F>) -> Extended<F> {
    times16_proj(&p.to_projective())
}

/// [16]P from a projective P, ending in extended coordinates (the next addition needs T).
#[inline(always)]
fn times16_proj<F: LaneCurve>(p: &Projective<F>) -> Extended<F> {
    let q = p
        .double()
        .to_projective()
        .double()
        .to_projective()
        .double()
        .to_projective();
    q.double().to_extended()
}

/// Signed radix-256 digits of a scalar below 2^253: 32 digits in [-128, 128) (the top
/// one below 2^5 + 1), as indices into a [`WideTable`].
fn digits256(s: &Scalar) -> [i8; 32] {
    let mut d = [0i8; 32];
    s.signed_radix(8, &mut d);
    d
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
pub(crate) unsafe fn double_scalar_mul<F: LaneCurve>(
    items: &[Prepared],
    out: &mut [Extended<Fe51>],
) {
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
    let b_table = unsafe { F::wide_base_table() };

    let kd: Vec<[i8; 64]> = items.iter().map(|p| digits(&p.k)).collect();
    let sd: Vec<[i8; 32]> = items.iter().map(|p| digits256(&p.s)).collect();
    let mut ia = [0usize; 8];
    let mut ib = [0usize; 8];

    // Windows of four doublings; A's radix-16 digit is added in every window, B's
    // radix-256 digit in every other one (64 + 32 additions). An addition followed by
    // doublings ends in projective coordinates (T is not needed there).
    let mut p = Extended::<F>::identity().to_projective();
    let mut r = Extended::<F>::identity();
    for w in (0..64).rev() {
        let e = if w == 63 { r } else { times16_proj(&p) };
        for j in 0..n {
            ia[j] = (kd[j][w] + 8) as usize;
        }
        let c = e.add_niels(&a_table.proj_niels(&ia[..n]));
        if w % 2 == 1 {
            p = c.to_projective();
            continue;
        }
        for j in 0..n {
            ib[j] = (sd[j][w / 2] as isize + 128) as usize;
        }
        let c = c.to_extended().add_affine(&b_table.affine_niels(&ib[..n]));
        if w == 0 {
            r = c.to_extended();
        } else {
            p = c.to_projective();
        }
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

/// Implements [`CurveField`] and [`LaneCurve`] for a lane type and defines its entry point,
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
pub(crate) unsafe fn four_product_sum<F: LaneCurve>(
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
                unsafe { <Self as LaneCurve>::pack(&[Fe51::ZERO; $n]) }
            }
            #[inline(always)]
            fn one() -> Self {
                // SAFETY: as above.
                unsafe { <Self as LaneCurve>::pack(&[Fe51::ONE; $n]) }
            }
            #[inline(always)]
            fn d2() -> Self {
                // SAFETY: as above.
                unsafe { <Self as LaneCurve>::pack(&[Fe51::EDWARDS_D2; $n]) }
            }
        }

        impl LaneCurve for $ty {
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
            unsafe fn wide_base_table() -> &'static WideTable<Self> {
                static T: OnceLock<WideTable<$ty>> = OnceLock::new();
                // SAFETY: forwarded contract.
                T.get_or_init(|| unsafe { build_wide_base_table() })
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
            let r = wirespeed_field::pow_p58(&unsafe { <$ty as LaneCurve>::pack(&v) });
            let mut o = [Fe51::ZERO; $n];
            <$ty as LaneCurve>::unpack(&r, &mut o);
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
