//! Edwards bucket accumulation in the lanes of AVX-512 IFMA registers.
//!
//! Eight independent Fq elements share one set of eight zmm registers: lane k of
//! register j holds limb j (radix 2^52) of element k ([`Fq8`]). A Montgomery product
//! (R' = 2^416) is 64 `vpmadd52luq`/`vpmadd52huq` pairs for the operands and 64 for the
//! reduction, all eight lanes at once: about 41 cycles a product on this machine's Zen 4
//! cores against 100 for the 64-bit `mulx` kernel of [`crate::fq`].
//!
//! Bounds: limbs are kept below 2^52 between operations (the multiplier reads only bits
//! 0..51 of each input), values below 16p < 2^381. A product of values below 2^381 is
//! below a b / R' + p < 2p, so products need no final subtraction; a sum of two
//! products is below 4p; a difference a - b is computed as a + 8p - b (b < 8p) and is
//! below a + 8p. Inside the Montgomery loop each 64-bit accumulator takes at most 36
//! additions of values below 2^52, so none overflows.
//!
//! Buckets: each of the eight lanes owns a private set of 2^(c-1) buckets, so the lanes
//! of one group never meet the same bucket and need no conflict handling; a group takes
//! the next eight nonzero digits in input order, whatever their buckets, so skewed
//! scalars (all digits in one bucket) keep every lane busy. The reduction runs the
//! eight lanes' running sums at once, and the eight results are added at the end.
//! Memory: 8 x 2^(c-1) buckets of 256 bytes per worker thread (c = 15: 32 MiB), kept
//! between windows and reset to the identity as the reduction reads them.
//!
//! Groups are loaded by rows (one element's eight limbs = one register) and turned into
//! lane form by an 8 x 8 transpose (24 shuffles), and back when stored.

use core::arch::x86_64::*;
use std::cell::RefCell;
use std::sync::OnceLock;

use crate::fq::{Fq, P};
use crate::te::{TeExt, TePre};

const MASK: u64 = (1u64 << 52) - 1;

/// True when a CPU with features `f` has AVX-512F and AVX-512 IFMA (what the callers
/// of [`window_sum`] check, through `msm::Arith`).
#[cfg(test)]
fn available_on(f: &wirespeed_util::cpu::CpuFeatures) -> bool {
    f.ifma_products()
}

/// Little-endian 64-bit limbs (value < 2^384) to eight radix-2^52 limbs.
fn to52(l: &[u64; 6]) -> [u64; 8] {
    let mut out = [0u64; 8];
    for (j, o) in out.iter_mut().enumerate() {
        let (w, s) = (52 * j / 64, 52 * j % 64);
        let mut v = l[w] >> s;
        if s > 12 && w + 1 < 6 {
            v |= l[w + 1] << (64 - s);
        }
        *o = v & MASK;
    }
    out
}

/// Eight radix-2^52 limbs (each < 2^52, value < 2^384) to 64-bit limbs.
fn from52(l: &[u64; 8]) -> [u64; 6] {
    let mut out = [0u64; 6];
    for (j, &v) in l.iter().enumerate() {
        let (w, s) = (52 * j / 64, 52 * j % 64);
        out[w] |= v << s;
        if s > 12 && w + 1 < 6 {
            out[w + 1] |= v >> (64 - s);
        }
    }
    out
}

/// Constants in radix 2^52.
struct Consts {
    p: [u64; 8],
    /// 8p, normalised limbs.
    p8: [u64; 8],
    /// -p^-1 mod 2^52.
    pinv: u64,
    /// 2^416 mod p: one in the lanes' Montgomery form.
    one: [u64; 8],
    /// k = 2d in the lanes' Montgomery form.
    k: [u64; 8],
    /// Fq (x 2^384) to lane form (x 2^416): multiply by 2^32 in Fq.
    to_lane: Fq,
    /// Back: multiply by 2^-32 in Fq.
    from_lane: Fq,
}

fn consts() -> &'static Consts {
    static C: OnceLock<Consts> = OnceLock::new();
    C.get_or_init(|| {
        let mut p8 = [0u64; 6];
        for i in 0..6 {
            p8[i] = (P[i] << 3) | if i > 0 { P[i - 1] >> 61 } else { 0 };
        }
        let mut inv = 1u64;
        for _ in 0..7 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(P[0].wrapping_mul(inv)));
        }
        let to_lane = Fq::from_u64(1 << 32);
        let from_lane = to_lane
            .vartime_inverse()
            .unwrap_or_else(|| unreachable!("2^32 is invertible mod p"));
        Consts {
            p: to52(&P),
            p8: to52(&p8),
            pinv: inv.wrapping_neg() & MASK,
            one: to52(&to_lane.0),
            k: to52(&crate::te::K.mul(&to_lane).0),
            to_lane,
            from_lane,
        }
    })
}

/// An Fq element in lane form: x 2^416 mod p (canonical), radix 2^52.
fn lane_form(x: &Fq) -> [u64; 8] {
    to52(&x.mul(&consts().to_lane).0)
}

/// Back from lane form (any value < 2p with limbs < 2^52).
fn from_lane_form(l: &[u64; 8]) -> Fq {
    Fq::from_mont_limbs(from52(l)).mul(&consts().from_lane)
}

/// A stored Edwards point (y - x, y + x, k x y) in lane form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Pre52 {
    ymx: [u64; 8],
    ypx: [u64; 8],
    kt: [u64; 8],
}

impl Pre52 {
    /// The lane form of a stored point.
    pub(crate) fn new(p: &TePre) -> Pre52 {
        let (ymx, ypx, kt) = p.parts();
        Pre52 {
            ymx: lane_form(ymx),
            ypx: lane_form(ypx),
            kt: lane_form(kt),
        }
    }

    fn identity() -> Pre52 {
        let c = consts();
        Pre52 {
            ymx: c.one,
            ypx: c.one,
            kt: [0; 8],
        }
    }
}

/// A bucket in extended coordinates, lane form.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket52 {
    x: [u64; 8],
    y: [u64; 8],
    z: [u64; 8],
    t: [u64; 8],
}

impl Bucket52 {
    fn identity() -> Bucket52 {
        let c = consts();
        Bucket52 {
            x: [0; 8],
            y: c.one,
            z: c.one,
            t: [0; 8],
        }
    }
}

/// Eight elements, limb j of lane k in lane k of `0[j]`.
#[derive(Clone, Copy)]
struct Fq8([__m512i; 8]);

/// Broadcast constants.
struct V {
    p: [__m512i; 8],
    p8: [__m512i; 8],
    k: [__m512i; 8],
    pinv: __m512i,
    mask: __m512i,
}

#[inline(always)]
fn splat(v: u64) -> __m512i {
    // SAFETY: callers run inside functions compiled for AVX-512F.
    unsafe { _mm512_set1_epi64(v as i64) }
}

#[inline(always)]
fn splat8(v: &[u64; 8]) -> [__m512i; 8] {
    let mut out = [splat(0); 8];
    for j in 0..8 {
        out[j] = splat(v[j]);
    }
    out
}

impl V {
    #[inline(always)]
    fn new() -> V {
        let c = consts();
        V {
            p: splat8(&c.p),
            p8: splat8(&c.p8),
            k: splat8(&c.k),
            pinv: splat(c.pinv),
            mask: splat(MASK),
        }
    }
}

/// Carries limbs 0..6 into the next (arithmetic shift: limbs may be negative in
/// between; the value is not).
#[inline(always)]
fn normalize(mut t: [__m512i; 8], v: &V) -> Fq8 {
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        for j in 0..7 {
            let c = _mm512_srai_epi64::<52>(t[j]);
            t[j] = _mm512_and_si512(t[j], v.mask);
            t[j + 1] = _mm512_add_epi64(t[j + 1], c);
        }
    }
    Fq8(t)
}

/// One Montgomery round: t += a_i b, then t += m p with m = -t_0 / p mod 2^52, then
/// shift down one limb.
#[inline(always)]
fn round(t: &mut [__m512i; 9], ai: __m512i, b: &Fq8, v: &V) {
    // SAFETY: AVX-512F + IFMA (callers' contract).
    unsafe {
        let z = _mm512_setzero_si512();
        for j in 0..8 {
            t[j] = _mm512_madd52lo_epu64(t[j], ai, b.0[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], ai, b.0[j]);
        }
        let m = _mm512_madd52lo_epu64(z, t[0], v.pinv);
        for j in 0..8 {
            t[j] = _mm512_madd52lo_epu64(t[j], m, v.p[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, v.p[j]);
        }
        // t[0] is now 0 mod 2^52.
        let carry = _mm512_srli_epi64::<52>(t[0]);
        *t = [
            _mm512_add_epi64(t[1], carry),
            t[2],
            t[3],
            t[4],
            t[5],
            t[6],
            t[7],
            t[8],
            z,
        ];
    }
}

/// a b / 2^416 mod p, below 2p (see the module docs); written out round by round so
/// that the accumulators stay in registers.
#[inline(always)]
fn mul(a: &Fq8, b: &Fq8, v: &V) -> Fq8 {
    // SAFETY: AVX-512F (callers' contract).
    let z = unsafe { _mm512_setzero_si512() };
    let mut t = [z; 9];
    round(&mut t, a.0[0], b, v);
    round(&mut t, a.0[1], b, v);
    round(&mut t, a.0[2], b, v);
    round(&mut t, a.0[3], b, v);
    round(&mut t, a.0[4], b, v);
    round(&mut t, a.0[5], b, v);
    round(&mut t, a.0[6], b, v);
    round(&mut t, a.0[7], b, v);
    normalize([t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]], v)
}

#[inline(always)]
fn add(a: &Fq8, b: &Fq8, v: &V) -> Fq8 {
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        let mut t = a.0;
        for j in 0..8 {
            t[j] = _mm512_add_epi64(t[j], b.0[j]);
        }
        normalize(t, v)
    }
}

/// a + 8p - b.
#[inline(always)]
fn sub(a: &Fq8, b: &Fq8, v: &V) -> Fq8 {
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        let mut t = a.0;
        for j in 0..8 {
            t[j] = _mm512_sub_epi64(_mm512_add_epi64(t[j], v.p8[j]), b.0[j]);
        }
        normalize(t, v)
    }
}

/// Lanes where the value is 0 mod p (values < 2p: limbs all zero or equal to p's).
#[inline(always)]
fn zero_mod_p(a: &Fq8, v: &V) -> u8 {
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        let z = _mm512_setzero_si512();
        let (mut is0, mut isp) = (0xffu8, 0xffu8);
        for j in 0..8 {
            is0 &= _mm512_cmpeq_epi64_mask(a.0[j], z);
            isp &= _mm512_cmpeq_epi64_mask(a.0[j], v.p[j]);
        }
        is0 | isp
    }
}

/// 8 x 8 transpose of 64-bit elements.
#[inline(always)]
fn transpose(r: [__m512i; 8]) -> [__m512i; 8] {
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        let mut a = r;
        for k in 0..4 {
            a[2 * k] = _mm512_unpacklo_epi64(r[2 * k], r[2 * k + 1]);
            a[2 * k + 1] = _mm512_unpackhi_epi64(r[2 * k], r[2 * k + 1]);
        }
        let lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
        let hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        let b = [
            _mm512_permutex2var_epi64(a[0], lo, a[2]),
            _mm512_permutex2var_epi64(a[0], hi, a[2]),
            _mm512_permutex2var_epi64(a[1], lo, a[3]),
            _mm512_permutex2var_epi64(a[1], hi, a[3]),
            _mm512_permutex2var_epi64(a[4], lo, a[6]),
            _mm512_permutex2var_epi64(a[4], hi, a[6]),
            _mm512_permutex2var_epi64(a[5], lo, a[7]),
            _mm512_permutex2var_epi64(a[5], hi, a[7]),
        ];
        let lo = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
        let hi = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
        [
            _mm512_permutex2var_epi64(b[0], lo, b[4]),
            _mm512_permutex2var_epi64(b[2], lo, b[6]),
            _mm512_permutex2var_epi64(b[1], lo, b[5]),
            _mm512_permutex2var_epi64(b[3], lo, b[7]),
            _mm512_permutex2var_epi64(b[0], hi, b[4]),
            _mm512_permutex2var_epi64(b[2], hi, b[6]),
            _mm512_permutex2var_epi64(b[1], hi, b[5]),
            _mm512_permutex2var_epi64(b[3], hi, b[7]),
        ]
    }
}

/// Rows (one element per row) to lane form.
#[inline(always)]
fn load(rows: [&[u64; 8]; 8]) -> Fq8 {
    let mut r = [splat(0); 8];
    for k in 0..8 {
        // SAFETY: AVX-512F; a row is 64 readable bytes.
        r[k] = unsafe { _mm512_loadu_si512(rows[k].as_ptr().cast()) };
    }
    Fq8(transpose(r))
}

/// Lane form back to rows.
#[inline(always)]
fn store(a: &Fq8, rows: [*mut [u64; 8]; 8]) {
    let r = transpose(a.0);
    for k in 0..8 {
        // SAFETY: AVX-512F; each row pointer is 64 writable bytes (callers' contract).
        unsafe { _mm512_storeu_si512(rows[k].cast(), r[k]) };
    }
}

/// Extended coordinates in lane form.
struct Ext8 {
    x: Fq8,
    y: Fq8,
    z: Fq8,
    t: Fq8,
}

impl Ext8 {
    /// The common tail of both additions (see [`crate::te`]).
    #[inline(always)]
    fn finish(a: Fq8, b: Fq8, c: Fq8, d: Fq8, v: &V) -> Ext8 {
        let (e, f, g, h) = (
            sub(&b, &a, v),
            sub(&d, &c, v),
            add(&d, &c, v),
            add(&b, &a, v),
        );
        Ext8 {
            x: mul(&e, &f, v),
            y: mul(&g, &h, v),
            t: mul(&e, &h, v),
            z: mul(&f, &g, v),
        }
    }

    /// self + (ymx, ypx, kt) (7M).
    #[inline(always)]
    fn add_pre(&self, ymx: &Fq8, ypx: &Fq8, kt: &Fq8, v: &V) -> Ext8 {
        let a = mul(&sub(&self.y, &self.x, v), ymx, v);
        let b = mul(&add(&self.y, &self.x, v), ypx, v);
        let c = mul(&self.t, kt, v);
        let d = add(&self.z, &self.z, v);
        Ext8::finish(a, b, c, d, v)
    }

    /// self + q (9M).
    #[inline(always)]
    fn add(&self, q: &Ext8, v: &V) -> Ext8 {
        let a = mul(&sub(&self.y, &self.x, v), &sub(&q.y, &q.x, v), v);
        let b = mul(&add(&self.y, &self.x, v), &add(&q.y, &q.x, v), v);
        let c = mul(&mul(&self.t, &Fq8(v.k), v), &q.t, v);
        let zz = mul(&self.z, &q.z, v);
        let d = add(&zz, &zz, v);
        Ext8::finish(a, b, c, d, v)
    }
}

thread_local! {
    /// Per worker: 8 lanes of buckets, all the identity between calls.
    static BUCKETS: RefCell<Vec<Bucket52>> = const { RefCell::new(Vec::new()) };
}

/// A hint to bring 256 bytes at `p` into the cache.
#[inline(always)]
fn prefetch_bucket(p: *const Bucket52) {
    // SAFETY: prefetching is a hint and never faults.
    unsafe {
        for off in [0, 64, 128, 192] {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>().wrapping_add(off));
        }
    }
}

/// sum_b b B_b for one window over a slice of points (see [`crate::msm`]); sets
/// `degenerate` when an addition met an exceptional pair (possible only outside G1).
///
/// # Safety
/// The CPU has AVX-512F and IFMA (the caller read it from the features it was given).
pub(crate) unsafe fn window_sum(
    points: &[Pre52],
    digits: &[i32],
    c: u32,
    degenerate: &mut bool,
) -> Option<TeExt> {
    BUCKETS.with(|cell| {
        let mut buckets = cell.borrow_mut();
        let count = 1usize << (c - 1);
        if buckets.len() < 8 * count {
            buckets.resize(8 * count, Bucket52::identity());
        }
        // SAFETY: the CPU has AVX-512F and IFMA (the caller's contract).
        unsafe { window_sum_lanes(points, digits, count, &mut buckets[..8 * count], degenerate) }
    })
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn window_sum_lanes(
    points: &[Pre52],
    digits: &[i32],
    count: usize,
    buckets: &mut [Bucket52],
    degenerate: &mut bool,
) -> Option<TeExt> {
    let v = V::new();
    let identity = Pre52::identity();
    let mut highest = 0usize;
    let mut bad = 0u8;
    // Two groups are collected before the first runs, so that every bucket is
    // prefetched at least a group's work ahead of its use.
    let mut queued = 0usize;
    let mut slot = [0usize; 16];
    let mut pre = [&identity; 16];
    let mut neg = 0u16;
    let base = buckets.as_mut_ptr();
    for (p, &d) in points.iter().zip(digits) {
        if d == 0 {
            continue;
        }
        let b = d.unsigned_abs() as usize;
        highest = highest.max(b);
        let lane = queued % 8;
        slot[queued] = lane * count + b - 1;
        prefetch_bucket(base.wrapping_add(slot[queued]));
        pre[queued] = p;
        neg |= ((d < 0) as u16) << queued;
        queued += 1;
        if queued == 16 {
            bad |= group(buckets, &slot, &pre, neg as u8, &v);
            slot.copy_within(8..16, 0);
            pre.copy_within(8..16, 0);
            neg >>= 8;
            queued = 8;
        }
    }
    let mut start = 0;
    while start < queued {
        // Pad with the identity added to each idle lane's first bucket.
        for k in queued..start + 8 {
            slot[k] = (k % 8) * count;
            pre[k] = &identity;
        }
        bad |= group(
            buckets,
            &slot[start..],
            &pre[start..],
            (neg >> start) as u8,
            &v,
        );
        start += 8;
    }
    if highest == 0 {
        return None;
    }
    // Running sums of the eight lanes at once; each bucket is reset as it is read.
    let id = Bucket52::identity();
    let mut running = ext_identity();
    let mut acc = ext_identity();
    for b in (0..highest).rev() {
        let rows: [&Bucket52; 8] = [0, 1, 2, 3, 4, 5, 6, 7].map(|k| &buckets[k * count + b]);
        let q = Ext8 {
            x: load(rows.map(|r| &r.x)),
            y: load(rows.map(|r| &r.y)),
            z: load(rows.map(|r| &r.z)),
            t: load(rows.map(|r| &r.t)),
        };
        for k in 0..8 {
            buckets[k * count + b] = id;
        }
        running = running.add(&q, &v);
        acc = acc.add(&running, &v);
        bad |= zero_mod_p(&running.z, &v) | zero_mod_p(&acc.z, &v);
    }
    if bad != 0 {
        *degenerate = true;
    }
    // The eight lanes' sums, added in Fq.
    let mut out = [[[0u64; 8]; 8]; 4];
    for (dst, src) in out.iter_mut().zip([&acc.x, &acc.y, &acc.z, &acc.t]) {
        store(
            src,
            [0, 1, 2, 3, 4, 5, 6, 7].map(|k| &mut dst[k] as *mut [u64; 8]),
        );
    }
    let mut sum = TeExt::IDENTITY;
    for k in 0..8 {
        let lane = TeExt::from_coords(
            from_lane_form(&out[0][k]),
            from_lane_form(&out[1][k]),
            from_lane_form(&out[2][k]),
            from_lane_form(&out[3][k]),
        );
        sum.add_assign(&lane);
        if sum.is_degenerate() {
            *degenerate = true;
        }
    }
    Some(sum)
}

#[inline(always)]
fn ext_identity() -> Ext8 {
    let c = consts();
    let zero = Fq8([splat(0); 8]);
    let one = Fq8(splat8(&c.one));
    Ext8 {
        x: zero,
        y: one,
        z: one,
        t: zero,
    }
}

/// One group: bucket slot[k] += (+-) pre[k] for the eight lanes k (negated where bit k
/// of `neg` is set); returns the lanes that met an exceptional pair.
#[inline(always)]
fn group(buckets: &mut [Bucket52], slot: &[usize], pre: &[&Pre52], neg: u8, v: &V) -> u8 {
    let slot: &[usize; 8] = slot[..8].try_into().unwrap_or_else(|_| unreachable!());
    let pre: &[&Pre52; 8] = pre[..8].try_into().unwrap_or_else(|_| unreachable!());
    let rows: [&Bucket52; 8] = [0, 1, 2, 3, 4, 5, 6, 7].map(|k| &buckets[slot[k]]);
    let bucket = Ext8 {
        x: load(rows.map(|r| &r.x)),
        y: load(rows.map(|r| &r.y)),
        z: load(rows.map(|r| &r.z)),
        t: load(rows.map(|r| &r.t)),
    };
    let ymx = load(pre.map(|p| &p.ymx));
    let ypx = load(pre.map(|p| &p.ypx));
    let kt = load(pre.map(|p| &p.kt));
    // -P swaps y - x with y + x and negates k x y.
    let zero = Fq8([splat(0); 8]);
    let nkt = sub(&zero, &kt, v);
    let (mut m, mut q, mut t) = (ymx, ypx, kt);
    // SAFETY: AVX-512F (callers' contract).
    unsafe {
        for j in 0..8 {
            m.0[j] = _mm512_mask_blend_epi64(neg, ymx.0[j], ypx.0[j]);
            q.0[j] = _mm512_mask_blend_epi64(neg, ypx.0[j], ymx.0[j]);
            t.0[j] = _mm512_mask_blend_epi64(neg, kt.0[j], nkt.0[j]);
        }
    }
    let r = bucket.add_pre(&m, &q, &t, v);
    // Every slot is in bounds and distinct lanes own distinct slots; a bucket is four
    // rows (x, y, z, t) in that order (repr(C)).
    let base = buckets.as_mut_ptr();
    let rows = slot.map(|s| base.wrapping_add(s).cast::<[u64; 8]>());
    for (i, coord) in [&r.x, &r.y, &r.z, &r.t].into_iter().enumerate() {
        store(coord, rows.map(|b| b.wrapping_add(i)));
    }
    zero_mod_p(&r.z, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limb_conversions_round_trip() {
        for x in [Fq::ZERO, Fq::ONE, Fq::ONE.neg(), Fq::from_u64(12345).neg()] {
            assert_eq!(from52(&to52(&x.0)), x.0);
            assert_eq!(from_lane_form(&lane_form(&x)), x);
        }
    }

    #[test]
    fn lane_arithmetic_matches_fq() {
        if !available_on(wirespeed_util::cpu::CpuFeatures::get()) {
            return;
        }
        let xs: Vec<Fq> = (0..8u64)
            .map(|i| {
                Fq::from_u64(i * 0x1234_5678_9abc + 7)
                    .neg()
                    .mul(&Fq::from_u64(i + 3))
            })
            .collect();
        let ys: Vec<Fq> = (0..8u64).map(|i| Fq::from_u64(i + 1).neg()).collect();
        // SAFETY: AVX-512F and IFMA are present (checked above).
        let (prod, sum, diff) = unsafe { lane_ops(&xs, &ys) };
        for k in 0..8 {
            assert_eq!(prod[k], xs[k].mul(&ys[k]), "lane {k}");
            assert_eq!(sum[k], xs[k].add(&ys[k]), "lane {k}");
            assert_eq!(diff[k], xs[k].sub(&ys[k]), "lane {k}");
        }
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn lane_ops(xs: &[Fq], ys: &[Fq]) -> (Vec<Fq>, Vec<Fq>, Vec<Fq>) {
        let v = V::new();
        let a: Vec<[u64; 8]> = xs.iter().map(lane_form).collect();
        let b: Vec<[u64; 8]> = ys.iter().map(lane_form).collect();
        let la = load([0, 1, 2, 3, 4, 5, 6, 7].map(|k| &a[k]));
        let lb = load([0, 1, 2, 3, 4, 5, 6, 7].map(|k| &b[k]));
        let mut out = [[[0u64; 8]; 8]; 3];
        for (dst, x) in
            out.iter_mut()
                .zip([mul(&la, &lb, &v), add(&la, &lb, &v), sub(&la, &lb, &v)])
        {
            store(
                &x,
                [0, 1, 2, 3, 4, 5, 6, 7].map(|k| &mut dst[k] as *mut [u64; 8]),
            );
        }
        let back = |rows: &[[u64; 8]; 8]| rows.iter().map(from_lane_form).collect::<Vec<_>>();
        (back(&out[0]), back(&out[1]), back(&out[2]))
    }
}

#[cfg(test)]
mod speed {
    use super::*;

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn chain(n: usize) -> u64 {
        let v = V::new();
        let c = consts();
        let mut a = Fq8(splat8(&c.one));
        let b = Fq8(splat8(&c.k));
        let mut x = Fq8(splat8(&c.k));
        for _ in 0..n {
            a = mul(&a, &b, &v);
            x = mul(&x, &b, &v);
        }
        let mut out = [[0u64; 8]; 8];
        store(
            &add(&a, &x, &v),
            [0, 1, 2, 3, 4, 5, 6, 7].map(|k| &mut out[k] as *mut [u64; 8]),
        );
        out[0][0]
    }

    #[test]
    #[ignore = "timing probe"]
    fn mul_speed() {
        if !available_on(wirespeed_util::cpu::CpuFeatures::get()) {
            return;
        }
        let n = 1_000_000;
        let t = std::time::Instant::now();
        // SAFETY: checked above.
        let r = unsafe { chain(n) };
        let s = t.elapsed().as_secs_f64();
        println!(
            "{:.1} ns per 8-lane product ({r})",
            s * 1e9 / (2 * n) as f64
        );
    }
}
