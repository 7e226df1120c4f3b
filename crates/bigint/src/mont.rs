//! Montgomery arithmetic modulo an odd `n` of `L` limbs, R = 2^(64 L) (or 2^(52 K) with
//! the IFMA kernel: [`MontCtx::radix_bits`]).
//!
//! Representation: a value a < n is held as aR mod n ("Montgomery form"); convert in
//! with [`MontCtx::to_mont`] and out with [`MontCtx::from_mont`] only at the ends of a
//! chain, so a chain of T squarings costs T Montgomery squarings and two conversions.
//!
//! Bounds: every input must be < n and every output is < n (fully reduced): the
//! multiplication leaves t < 2n (Montgomery, "Modular multiplication without trial
//! division", 1985) and one conditional subtraction, computed without a data-dependent
//! branch, finishes.
//!
//! - `mul`: separated operand scanning (Koc, Acar, Kaliski, "Analyzing and comparing
//!   Montgomery multiplication algorithms", 1996): the 2L-limb product, then a Montgomery
//!   reduction; 2 L^2 + L word products.
//! - `sqr`: a dedicated squaring: the L(L-1)/2 cross products once, doubled by one shift,
//!   plus L squares, then the reduction (L^2 + L products): about 3/4 of `mul`'s products.
//!
//! Both are written once over a row kernel, acc[0..len] += a * b[0..len]: a portable one
//! over u128 products, and on x86-64 with BMI2 + ADX the `mulx`/`adcx`/`adox` kernel of
//! [`crate::adx`], chosen when the context is built ([`Kernel`]) from the CPU features the
//! caller passes ([`MontCtx::new_with`]); this crate never probes the CPU (the
//! feature-free [`MontCtx::new`] is a convenience wrapper over the process's one
//! detection, `wirespeed_util::cpu::CpuFeatures::get`).
//!
//! With [`Kernel::Ifma`] (CPUs with AVX-512 IFMA) the 1024- to 4096-bit widths run every
//! operation in radix 2^52 instead ([`crate::ifma`]): squaring chains and powers stay in
//! that form and in registers between steps, with results below 2n between steps and one
//! subtraction at the end. The Montgomery radix is then R = 2^(52 K); values in
//! Montgomery form from one kernel must not be mixed with a context using the other.

use wirespeed_util::cpu::CpuFeatures;

use crate::uint::Uint;

/// Window width of [`MontCtx::pow_ct`] (a table of 32 powers).
pub const CT_WINDOW: usize = 5;

/// 1 when a == b, else 0, without a branch.
#[inline(always)]
pub(crate) fn ct_eq(a: u64, b: u64) -> u64 {
    let x = a ^ b;
    ((x | x.wrapping_neg()) >> 63) ^ 1
}

/// `width` (< 64) bits of little-endian limbs starting at bit `at` (0 past the end);
/// the position is public, only shifts and masks touch the value.
#[inline(always)]
pub(crate) fn window_bits(e: &[u64], at: usize, width: usize) -> u64 {
    let (w, s) = (at / 64, at % 64);
    let lo = e.get(w).copied().unwrap_or(0) >> s;
    let hi = if s + width > 64 {
        e.get(w + 1).copied().unwrap_or(0) << (64 - s)
    } else {
        0
    };
    (lo | hi) & ((1u64 << width) - 1)
}

/// Window width of a sliding-window power with a `bits`-bit public exponent: the table
/// holds 2^(w-1) odd powers, and w grows with the exponent where the saved
/// multiplications (about bits / (w + 1) instead of bits / 2) outweigh the table.
pub(crate) fn sliding_width(bits: usize) -> usize {
    match bits {
        0..=24 => 1,
        25..=80 => 3,
        81..=240 => 4,
        241..=672 => 5,
        _ => 6,
    }
}

/// The steps of a left-to-right sliding-window power over the low `bits` bits of `e`
/// (bit bits - 1 set): each item is (squarings, odd window value), the value 0 standing
/// for a squaring alone. The first item is the top window; its squarings are moot (they
/// would square one).
pub(crate) fn sliding_windows(
    e: &[u64],
    bits: usize,
    w: usize,
) -> impl Iterator<Item = (usize, u64)> + '_ {
    let bit = move |i: usize| (e[i / 64] >> (i % 64)) & 1 == 1;
    let mut next = bits;
    std::iter::from_fn(move || {
        let i = next.checked_sub(1)?;
        if !bit(i) {
            next = i;
            return Some((1, 0));
        }
        let mut j = (i + 1).saturating_sub(w);
        while !bit(j) {
            j += 1;
        }
        next = j;
        Some((i - j + 1, window_bits(e, j, i - j + 1)))
    })
}

/// Largest supported limb count (4096 bits).
pub const MAX_LIMBS: usize = 64;

/// Why a modulus cannot have a Montgomery context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MontError {
    /// The modulus is even (Montgomery reduction needs gcd(n, 2^64) = 1).
    EvenModulus,
    /// The modulus is 1 (every residue is 0).
    ModulusOne,
    /// The type is wider than [`MAX_LIMBS`] limbs.
    TooWide,
}

impl std::fmt::Display for MontError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MontError::EvenModulus => "modulus must be odd",
            MontError::ModulusOne => "modulus must be greater than 1",
            MontError::TooWide => "modulus wider than 4096 bits",
        })
    }
}

impl std::error::Error for MontError {}

/// Precomputed constants for one odd modulus.
#[derive(Clone, Debug)]
pub struct MontCtx<const L: usize> {
    n: Uint<L>,
    /// -n^(-1) mod 2^64.
    n0inv: u64,
    /// R mod n (1 in Montgomery form) and R^2 mod n, for R = 2^(64 L).
    one: Uint<L>,
    r2: Uint<L>,
    /// The row kernel in use.
    kernel: Kernel,
    /// The radix-2^52 IFMA context (widths [`crate::ifma::supports`]), used when the
    /// kernel is [`Kernel::Ifma`]; R is then 2^(52 K).
    #[cfg(target_arch = "x86_64")]
    ifma: Option<Box<Ifma<L>>>,
}

/// The IFMA context and its Montgomery constants.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Debug)]
struct Ifma<const L: usize> {
    ctx: crate::ifma::Radix52,
    /// The folding kernel ([`crate::fold`]) for chains of squarings and pairs of
    /// powers, built on first use (its tables take a fraction of a millisecond).
    fold: std::sync::OnceLock<Option<Box<crate::fold::Fold>>>,
    /// The folding kernel was measured faster than the Montgomery kernel on this CPU
    /// (Zen 5, full-width IFMA) for every width it has. Elsewhere (Zen 4's half-width
    /// IFMA; Intel parts, not measured) it trades the Montgomery kernel's serial chain
    /// for more multiply-adds and is used only where that clearly pays.
    measured: bool,
    /// R mod n and R^2 mod n for R = 2^(52 K).
    one: Uint<L>,
    r2: Uint<L>,
}

#[inline(always)]
fn mac(acc: u64, a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = acc as u128 + (a as u128) * (b as u128) + carry as u128;
    (t as u64, (t >> 64) as u64)
}

/// The shortest chain of squarings [`MontCtx::sqr_n`] runs on the folding kernel. A call
/// costs two conversions and a final reduction, 1.5 us at 1024 bits and 3.9 us at 2048
/// (Zen 5), which the kernel wins back after about 13 and 21 squarings.
pub const FOLD_MIN: u64 = 32;

/// Which multiply-accumulate row kernel a context uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable Rust (u128 products).
    Portable,
    /// x86-64 `mulx` with two carry chains (`adcx`/`adox`); needs BMI2 and ADX.
    Adx,
    /// For 1024-, 2048-, 3072- and 4096-bit types, every operation in radix 2^52 with
    /// AVX-512 IFMA ([`crate::ifma`]; R becomes 2^(52 K), see [`MontCtx::radix_bits`]);
    /// `Adx` rows for other widths. Needs BMI2, ADX, AVX-512 F and IFMA.
    Ifma,
}

impl Kernel {
    /// The fastest kernel a CPU with features `f` runs.
    pub fn best_on(f: &CpuFeatures) -> Kernel {
        [Kernel::Ifma, Kernel::Adx]
            .into_iter()
            .find(|k| k.available_on(f))
            .unwrap_or(Kernel::Portable)
    }

    /// True if a CPU with features `f` runs the kernel.
    pub fn available_on(&self, f: &CpuFeatures) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Adx => crate::adx::available_on(f),
            #[cfg(target_arch = "x86_64")]
            Kernel::Ifma => crate::adx::available_on(f) && crate::ifma::available_on(f),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Adx | Kernel::Ifma => {
                let _ = f;
                false
            }
        }
    }

    /// Convenience wrapper: [`Kernel::best_on`] this process's detected features.
    pub fn detect() -> Kernel {
        Kernel::best_on(CpuFeatures::get())
    }

    /// Convenience wrapper: [`Kernel::available_on`] this process's detected features.
    pub fn available(&self) -> bool {
        self.available_on(CpuFeatures::get())
    }
}

/// acc[0..len] += a * b[0..len] (len = b.len() <= acc.len()); returns the carry word.
#[inline(always)]
fn row(kernel: Kernel, acc: &mut [u64], b: &[u64], a: u64) -> u64 {
    assert!(acc.len() >= b.len());
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: contexts only hold Kernel::Adx after `available_on` confirmed BMI2 and
        // ADX; both slices hold at least b.len() limbs (asserted above).
        Kernel::Adx | Kernel::Ifma => unsafe {
            crate::adx::row(acc.as_mut_ptr(), b.as_ptr(), a, b.len())
        },
        _ => {
            let mut c = 0u64;
            for (t, &bj) in acc.iter_mut().zip(b) {
                (*t, c) = mac(*t, a, bj, c);
            }
            c
        }
    }
}

impl<const L: usize> MontCtx<L> {
    /// Convenience wrapper: [`MontCtx::new_with`] this process's detected features
    /// (`CpuFeatures::get`). The engine and the crates above it pass features instead.
    pub fn new(n: &Uint<L>) -> Result<Self, MontError> {
        Self::new_with(n, CpuFeatures::get())
    }

    /// Builds the context with the fastest kernel a CPU with features `f` runs
    /// ([`Kernel::best_on`]; [`CpuFeatures::none`] gives the portable kernel); `n` must
    /// be odd and greater than 1.
    pub fn new_with(n: &Uint<L>, f: &CpuFeatures) -> Result<Self, MontError> {
        if L > MAX_LIMBS {
            return Err(MontError::TooWide);
        }
        if !n.is_odd() {
            return Err(MontError::EvenModulus);
        }
        if *n == Uint::ONE {
            return Err(MontError::ModulusOne);
        }
        // Newton: inv = n0^-1 mod 2^64 (each step doubles the correct low bits).
        let n0 = n.0[0];
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n0.wrapping_mul(inv)));
        }
        // R mod n and R^2 mod n by doubling 1 modulo n, 64L and then 64L more times.
        let mut x = Uint::<L>::ONE;
        let mut one = Uint::ZERO;
        for i in 0..2 * Uint::<L>::BITS {
            x = Self::double_mod(&x, n);
            if i + 1 == Uint::<L>::BITS {
                one = x;
            }
        }
        #[cfg(target_arch = "x86_64")]
        let ifma = crate::ifma::supports(L).then(|| {
            // 2^(52 K) and 2^(104 K) mod n: double the 2^(64 L) constants a little more.
            let extra = 52 * crate::ifma::digits_for(L) - 64 * L;
            let (mut one52, mut r2_52) = (one, x);
            for _ in 0..extra {
                one52 = Self::double_mod(&one52, n);
            }
            for _ in 0..2 * extra {
                r2_52 = Self::double_mod(&r2_52, n);
            }
            Box::new(Ifma {
                ctx: crate::ifma::Radix52::new(&n.0, &one52.0),
                fold: std::sync::OnceLock::new(),
                measured: f.full_width_ifma() && f.microarch() == "zen5",
                one: one52,
                r2: r2_52,
            })
        });
        Ok(MontCtx {
            n: *n,
            n0inv: inv.wrapping_neg(),
            one,
            r2: x,
            kernel: Kernel::best_on(f),
            #[cfg(target_arch = "x86_64")]
            ifma,
        })
    }

    /// 2x mod n for x < n, branch-free (the constants of a secret modulus, an RSA prime,
    /// are built with it).
    fn double_mod(x: &Uint<L>, n: &Uint<L>) -> Uint<L> {
        let (d, carry) = x.shl1();
        let (s, borrow) = d.overflowing_sub(n);
        Uint::select(&d, &s, (carry as u64) | (borrow as u64 ^ 1))
    }

    /// Convenience wrapper: [`MontCtx::with_kernel_on`] this process's detected
    /// features.
    pub fn with_kernel(self, kernel: Kernel) -> Self {
        self.with_kernel_on(kernel, CpuFeatures::get())
    }

    /// The same context with another kernel; one a CPU with features `f` cannot run
    /// falls back to portable.
    pub fn with_kernel_on(mut self, kernel: Kernel, f: &CpuFeatures) -> Self {
        self.kernel = if kernel.available_on(f) {
            kernel
        } else {
            Kernel::Portable
        };
        self
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The kernel [`MontCtx::pow_ct_pair`] runs with another context of this width
    /// built for the same CPU: `ifma-fold` or the context's kernel in lower case.
    pub fn pair_kernel(&self) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        if self.fold(true).is_some() {
            return "ifma-fold";
        }
        self.kernel_name()
    }

    fn kernel_name(&self) -> &'static str {
        match self.kernel {
            Kernel::Portable => "portable",
            Kernel::Adx => "adx",
            Kernel::Ifma => "ifma",
        }
    }

    /// The kernel [`MontCtx::sqr_n`] runs for a chain of `k` squarings: `ifma-fold` (the
    /// folding kernel, [`crate::fold`]), or the context's kernel in lower case.
    pub fn chain_kernel(&self, k: u64) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        if k >= FOLD_MIN && self.fold(false).is_some() {
            return "ifma-fold";
        }
        let _ = k;
        self.kernel_name()
    }

    /// The IFMA context, when the kernel is [`Kernel::Ifma`] and the width has one.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn ifma(&self) -> Option<&Ifma<L>> {
        match self.kernel {
            Kernel::Ifma => self.ifma.as_deref(),
            _ => None,
        }
    }

    /// log2 of the Montgomery radix R: 64 L, or 52 K with the IFMA kernel.
    pub fn radix_bits(&self) -> usize {
        #[cfg(target_arch = "x86_64")]
        if self.ifma().is_some() {
            return 52 * crate::ifma::digits_for(L);
        }
        64 * L
    }

    /// R^2 mod n for the radix in use.
    fn r2(&self) -> &Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            return &f.r2;
        }
        &self.r2
    }

    /// The modulus.
    pub fn modulus(&self) -> &Uint<L> {
        &self.n
    }

    /// 1 in Montgomery form (R mod n).
    pub fn one(&self) -> Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            return f.one;
        }
        self.one
    }

    /// aR mod n, for a < n.
    pub fn to_mont(&self, a: &Uint<L>) -> Uint<L> {
        self.mul(a, self.r2())
    }

    /// a R^-1 mod n: leaves Montgomery form.
    pub fn from_mont(&self, a: &Uint<L>) -> Uint<L> {
        self.mul(a, &Uint::ONE)
    }

    /// Reduces any a (possibly >= n) modulo n and converts to Montgomery form.
    pub fn reduce_to_mont(&self, a: &Uint<L>) -> Uint<L> {
        // a R^-1 (any a < R gives a result < n), then times R^2 twice: a R.
        let t = self.mul(a, &Uint::ONE);
        self.mul(&self.mul(&t, self.r2()), self.r2())
    }

    /// The folding kernel ([`crate::fold`]) for this modulus, built on first use, where
    /// the context runs IFMA and the width has it; `pairs`: for [`MontCtx::pow_ct_pair`]
    /// rather than chains of squarings. Chosen where it was measured faster than the
    /// Montgomery kernel (Zen 5, BENCHMARKS.md): chains at 1024 to 2048 bits, pairs of
    /// powers at 1024 and 1536 (at 2048 the Montgomery pair signs RSA-4096 faster).
    /// Elsewhere (Zen 4's half-width IFMA; Intel, not measured) only where its
    /// multiply-adds at half rate still take well under the Montgomery kernel's serial
    /// chain: chains at 1024 and 1536 bits.
    #[cfg(target_arch = "x86_64")]
    fn fold(&self, pairs: bool) -> Option<&crate::fold::Fold> {
        let f = self.ifma()?;
        let wanted = crate::fold::supports(L)
            && match pairs {
                true => f.measured && L <= 24,
                false => f.measured || L <= 24,
            };
        if !wanted {
            return None;
        }
        f.fold
            .get_or_init(|| crate::fold::Fold::new(&self.n.0).map(Box::new))
            .as_deref()
    }

    /// z (L + 2 limbs, any value) mod n in Montgomery form, in constant time: the low L
    /// limbs and the two above, each reduced, the upper times 2^(64 L).
    #[cfg(target_arch = "x86_64")]
    fn wide_to_mont(&self, z: &[u64]) -> Uint<L> {
        let lo = Uint::<L>(core::array::from_fn(|i| z[i]));
        let hi = Uint::<L>(core::array::from_fn(|i| if i < 2 { z[L + i] } else { 0 }));
        // self.one is 2^(64 L) mod n (plain).
        let shift = self.to_mont(&self.one);
        let (a, b) = (self.reduce_to_mont(&lo), self.reduce_to_mont(&hi));
        let b = self.mul(&b, &shift);
        let (s, carry) = a.overflowing_add(&b);
        let (t, borrow) = s.overflowing_sub(&self.n);
        Uint::select(&t, &s, (borrow as u64) & !(carry as u64) & 1)
    }

    /// Final conditional subtraction: t (with a possible carry limb) to t mod n, given
    /// t < 2n. Branch-free selection.
    #[inline(always)]
    fn finish(&self, t: &Uint<L>, carry: u64) -> Uint<L> {
        let (s, borrow) = t.overflowing_sub(&self.n);
        // Keep t only when there was no carry and t < n (the subtraction borrowed).
        let keep_t = ((borrow as u64) & (carry ^ 1)).wrapping_neg();
        let mut out = [0u64; L];
        for i in 0..L {
            out[i] = (t.0[i] & keep_t) | (s.0[i] & !keep_t);
        }
        Uint(out)
    }

    /// a b R^-1 mod n, for a, b < n.
    #[inline]
    pub fn mul(&self, a: &Uint<L>, b: &Uint<L>) -> Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            let mut out = [0u64; L];
            // SAFETY: Kernel::Ifma is held only after `available_on` confirmed the CPU
            // features, and the IFMA context was built for this width.
            let top = unsafe { f.ctx.mul(&a.0, &b.0, &mut out) };
            return self.finish(&Uint(out), top);
        }
        // 2L limbs of product, sized by the type (no zeroing beyond what is used).
        let mut t = [[0u64; L]; 2];
        let t = t.as_flattened_mut();
        for i in 0..L {
            // Row i adds into t[i..i+L] and its carry is limb i+L, not written before.
            t[i + L] = row(self.kernel, &mut t[i..i + L], &b.0, a.0[i]);
        }
        self.redc(t)
    }

    /// a^2 R^-1 mod n, for a < n (dedicated squaring, then reduction).
    #[inline]
    pub fn sqr(&self, a: &Uint<L>) -> Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if self.ifma().is_some() {
            return self.mul(a, a);
        }
        let mut t = [[0u64; L]; 2];
        let t = t.as_flattened_mut();
        let a = &a.0;
        // Cross products a_i a_j, i < j, row by row; row i adds into t[2i+1..i+L] and
        // its carry is limb i+L, not written before.
        for i in 0..L {
            t[i + L] = row(self.kernel, &mut t[2 * i + 1..i + L], &a[i + 1..], a[i]);
        }
        // Double them, add the squares a_i^2 at 2i.
        let mut top = 0u64;
        for limb in t.iter_mut() {
            let v = *limb;
            *limb = (v << 1) | top;
            top = v >> 63;
        }
        let mut c = 0u64;
        for i in 0..L {
            let sq = (a[i] as u128) * (a[i] as u128);
            let s = t[2 * i] as u128 + (sq as u64) as u128 + c as u128;
            t[2 * i] = s as u64;
            let s2 = t[2 * i + 1] as u128 + (sq >> 64) + (s >> 64);
            t[2 * i + 1] = s2 as u64;
            c = (s2 >> 64) as u64;
        }
        self.redc(t)
    }

    /// Montgomery reduction of a 2L-limb value t < n R: returns t R^-1 mod n.
    #[inline(always)]
    fn redc(&self, t: &mut [u64]) -> Uint<L> {
        let n = &self.n.0;
        let mut carry_top = 0u64;
        for i in 0..L {
            let m = t[i].wrapping_mul(self.n0inv);
            let c = row(self.kernel, &mut t[i..i + L], n, m);
            let s = t[i + L] as u128 + c as u128 + carry_top as u128;
            t[i + L] = s as u64;
            carry_top = (s >> 64) as u64;
        }
        let mut out = [0u64; L];
        out.copy_from_slice(&t[L..2 * L]);
        self.finish(&Uint(out), carry_top)
    }

    /// a^(2^k) in Montgomery form: k squarings.
    ///
    /// With the IFMA kernel, chains of at least [`FOLD_MIN`] squarings at 1024 to 2048
    /// bits (where [`MontCtx::chain_kernel`] says `ifma-fold`) leave Montgomery form and
    /// run the folding kernel ([`crate::fold`]), whose squarings have no digit-serial
    /// dependency chain. Those chains are variable time (a rare exact normalisation is a
    /// branch on the values): for public values only, as in a VDF.
    pub fn sqr_n(&self, a: &Uint<L>, k: u64) -> Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            if k >= FOLD_MIN {
                if let Some(fold) = self.fold(false) {
                    let plain = self.from_mont(a);
                    let mut wide = [0u64; MAX_LIMBS + 2];
                    // SAFETY: `fold()` is Some only where the CPU has AVX-512 F and IFMA
                    // and the width has the kernel; `plain` has L limbs, `wide` L + 2.
                    unsafe { fold.sqr_n(&plain.0, k, &mut wide[..L + 2]) };
                    return self.wide_to_mont(&wide[..L + 2]);
                }
            }
            let mut out = [0u64; L];
            // SAFETY: as in `mul`.
            let top = unsafe { f.ctx.sqr_n(&a.0, k, &mut out) };
            return self.finish(&Uint(out), top);
        }
        let mut x = *a;
        for _ in 0..k {
            x = self.sqr(&x);
        }
        x
    }

    /// base^e for base in Montgomery form, in time independent of the values of base and
    /// e (for secret exponents): a fixed window of [`CT_WINDOW`] bits over all 64 L
    /// exponent bits, each window costing the same squarings and one multiplication by a
    /// table entry chosen by a masked scan of the whole table (no secret-dependent branch
    /// or memory address).
    pub fn pow_ct(&self, base: &Uint<L>, e: &Uint<L>) -> Uint<L> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            let mut out = [0u64; L];
            // SAFETY: as in `mul`; e has L limbs for 64 L bits.
            let top = unsafe { f.ctx.pow(&base.0, &e.0, Uint::<L>::BITS, true, &mut out) };
            return self.finish(&Uint(out), top);
        }
        let mut table = [self.one(); 1 << CT_WINDOW];
        table[1] = *base;
        for i in 2..table.len() {
            table[i] = self.mul(&table[i - 1], base);
        }
        let mut acc = self.one();
        for w in (0..Uint::<L>::BITS.div_ceil(CT_WINDOW)).rev() {
            for _ in 0..CT_WINDOW {
                acc = self.sqr(&acc);
            }
            let idx = window_bits(&e.0, w * CT_WINDOW, CT_WINDOW);
            let mut sel = Uint::ZERO;
            for (i, t) in table.iter().enumerate() {
                sel = Uint::select(&sel, t, ct_eq(i as u64, idx));
            }
            acc = self.mul(&acc, &sel);
        }
        acc
    }

    /// [`MontCtx::pow_ct`] under this context and under `other` (same width) at once:
    /// (base^e, base2^e2), each in its own context's Montgomery form. With the IFMA
    /// kernel on both, the two powers run interleaved in one loop (the CRT halves of an
    /// RSA private operation): on the folding kernel ([`crate::fold`], constant-time
    /// form) at 1024 and 1536 bits where it was measured faster (Zen 5), on the
    /// Montgomery kernel otherwise; without IFMA, one after the other.
    pub fn pow_ct_pair(
        &self,
        base: &Uint<L>,
        e: &Uint<L>,
        other: &MontCtx<L>,
        base2: &Uint<L>,
        e2: &Uint<L>,
    ) -> (Uint<L>, Uint<L>) {
        #[cfg(target_arch = "x86_64")]
        if let (Some(f), Some(g)) = (self.fold(true), other.fold(true)) {
            let (b1, b2) = (self.from_mont(base), other.from_mont(base2));
            let (mut o1, mut o2) = ([0u64; MAX_LIMBS + 2], [0u64; MAX_LIMBS + 2]);
            // SAFETY: `fold()` is Some only where the CPU has AVX-512 F and IFMA and the
            // width has the kernel (both contexts of width L); the exponents have L
            // limbs for 64 L bits, the outputs L + 2.
            unsafe {
                f.pow_ct_pair(
                    g,
                    (&b1.0, &b2.0),
                    (&e.0, &e2.0),
                    Uint::<L>::BITS,
                    (&mut o1[..L + 2], &mut o2[..L + 2]),
                )
            };
            return (
                self.wide_to_mont(&o1[..L + 2]),
                other.wide_to_mont(&o2[..L + 2]),
            );
        }
        #[cfg(target_arch = "x86_64")]
        if let (Some(f), Some(g)) = (self.ifma(), other.ifma()) {
            let (mut o1, mut o2) = ([0u64; L], [0u64; L]);
            // SAFETY: as in `mul`, for both contexts (same width L); e and e2 have L
            // limbs for 64 L bits.
            let (t1, t2) = unsafe {
                f.ctx.pow_ct_pair(
                    &g.ctx,
                    (&base.0, &base2.0),
                    (&e.0, &e2.0),
                    Uint::<L>::BITS,
                    (&mut o1, &mut o2),
                )
            };
            return (self.finish(&Uint(o1), t1), other.finish(&Uint(o2), t2));
        }
        (self.pow_ct(base, e), other.pow_ct(base2, e2))
    }

    /// base^e for base in Montgomery form and a public exponent given as little-endian
    /// limbs of any length; left-to-right sliding window (width from the exponent's
    /// length: square-and-multiply up to 24 bits, so e = 65537 costs 16 squarings and
    /// one multiplication; 6 bits and a 32-entry table of odd powers past 672 bits).
    /// Variable time in `e`: public exponents only.
    pub fn vartime_pow(&self, base: &Uint<L>, e: &[u64]) -> Uint<L> {
        let bits = e
            .iter()
            .rposition(|&l| l != 0)
            .map_or(0, |i| 64 * i + 64 - e[i].leading_zeros() as usize);
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.ifma() {
            let mut out = [0u64; L];
            // SAFETY: as in `mul`; `bits` counts bits within `e`.
            let top = unsafe { f.ctx.pow(&base.0, e, bits, false, &mut out) };
            return self.finish(&Uint(out), top);
        }
        let w = sliding_width(bits);
        let b2 = self.sqr(base);
        let mut table = vec![*base; 1 << (w - 1)];
        for k in 1..table.len() {
            table[k] = self.mul(&table[k - 1], &b2);
        }
        let mut acc: Option<Uint<L>> = None;
        for (sq, val) in sliding_windows(e, bits, w) {
            acc = Some(match acc {
                // The top window: its value is odd.
                None => table[(val >> 1) as usize],
                Some(mut a) => {
                    for _ in 0..sq {
                        a = self.sqr(&a);
                    }
                    if val != 0 {
                        a = self.mul(&a, &table[(val >> 1) as usize]);
                    }
                    a
                }
            });
        }
        acc.unwrap_or_else(|| self.one())
    }
}
