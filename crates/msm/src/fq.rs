//! The BLS12-377 base field Fq (p: 377 bits) in Montgomery form, six 64-bit limbs,
//! R = 2^384.
//!
//! Multiplication is CIOS (Koc, Acar, Kaliski 1996) in the "no-carry" shape that applies
//! when the top limb of p is below 2^63 - 1 (here it is below 2^57): the running value
//! never needs a seventh limb. Every result is fully reduced (< p), so equality is limb
//! equality. Two kernels, the same rounds: on x86-64 with BMI2 + ADX (checked at run
//! time) an unrolled `mulx`/`adox`/`adcx` assembly kernel, else portable u128 code;
//! `tests/diff_ark.rs` runs both against arkworks. Timing: multiplication, addition and subtraction
//! are branch-free; [`Fq::vartime_inverse`] and the byte decoder are variable-time and
//! meant for public data (points of an MSM).

/// p, little-endian limbs.
pub const P: [u64; 6] = [
    0x8508c00000000001,
    0x170b5d4430000000,
    0x1ef3622fba094800,
    0x1a22d9f300f5138f,
    0xc63b05c06ca1493b,
    0x01ae3a4617c510ea,
];

/// -p^(-1) mod 2^64.
const INV: u64 = 0x8508bfffffffffff;

/// R^2 mod p.
const R2: [u64; 6] = [
    0xb786686c9400cd22,
    0x0329fcaab00431b1,
    0x22a5f11162d6b46d,
    0xbfdf7d03827dc3ac,
    0x837e92f041790bf9,
    0x006dfccb1e914b88,
];

/// R mod p (1 in Montgomery form).
const ONE: [u64; 6] = [
    0x02cdffffffffff68,
    0x51409f837fffffb1,
    0x9f7db3a98a7d3ff2,
    0x7b4e97b76e7c6305,
    0x4cf495bf803c84e8,
    0x008d6661e2fdf49a,
];

/// An element of Fq, in Montgomery form, fully reduced.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Fq(pub(crate) [u64; 6]);

impl std::fmt::Debug for Fq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.to_bytes_le();
        write!(f, "Fq(0x")?;
        for x in b.iter().rev() {
            write!(f, "{x:02x}")?;
        }
        write!(f, ")")
    }
}

#[inline(always)]
fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + (b as u128) * (c as u128) + carry as u128;
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + b as u128 + carry as u128;
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let t = (a as u128).wrapping_sub(b as u128 + (borrow >> 63) as u128);
    (t as u64, (t >> 64) as u64)
}

/// P followed by INV, for the assembly kernel.
#[cfg(target_arch = "x86_64")]
static P_INV: [u64; 7] = [P[0], P[1], P[2], P[3], P[4], P[5], INV];

/// True when the CPU has BMI2 and ADX: the per-multiplication choice between the
/// `mulx` kernel and its portable twin inside [`Fq::mul`], read from the process's one
/// detection in `wirespeed-util` (a multiplication takes no features argument; the
/// lane and window choices of `crate::msm` take them from their caller).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_adx() -> bool {
    wirespeed_util::cpu::CpuFeatures::get().adx()
}

/// The six CIOS rounds with `mulx` and two carry chains (`adox` for the low halves,
/// `adcx` for the high halves), fully unrolled; the seven accumulator registers rotate
/// by one name per round, the limb that reduction zeroes becoming the next top limb.
/// Returns t < 2p, before the final subtraction.
///
/// # Safety
/// The CPU has BMI2 and ADX.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn mul_adx(a: &[u64; 6], b: &[u64; 6]) -> [u64; 6] {
    let (t0, t1, t2, t3, t4, t5): (u64, u64, u64, u64, u64, u64);
    // SAFETY: reads 6 limbs of a and b and 7 words of P_INV; BMI2 + ADX per the caller.
    unsafe {
        core::arch::asm!(
            "mov rdx, [{b} + 0]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r13, r15",
            "adcx r14, rax",
            "mov eax, 0",
            "adox r14, rax",
            "mov rdx, r8",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r13, r15",
            "adcx r14, rax",
            "mov eax, 0",
            "adox r14, rax",
            "mov rdx, [{b} + 8]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r14, r15",
            "adcx r8, rax",
            "mov eax, 0",
            "adox r8, rax",
            "mov rdx, r9",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r14, r15",
            "adcx r8, rax",
            "mov eax, 0",
            "adox r8, rax",
            "mov rdx, [{b} + 16]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r8, r15",
            "adcx r9, rax",
            "mov eax, 0",
            "adox r9, rax",
            "mov rdx, r10",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r8, r15",
            "adcx r9, rax",
            "mov eax, 0",
            "adox r9, rax",
            "mov rdx, [{b} + 24]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r9, r15",
            "adcx r10, rax",
            "mov eax, 0",
            "adox r10, rax",
            "mov rdx, r11",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r11, r15",
            "adcx r12, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r9, r15",
            "adcx r10, rax",
            "mov eax, 0",
            "adox r10, rax",
            "mov rdx, [{b} + 32]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r10, r15",
            "adcx r11, rax",
            "mov eax, 0",
            "adox r11, rax",
            "mov rdx, r12",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r12, r15",
            "adcx r13, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r10, r15",
            "adcx r11, rax",
            "mov eax, 0",
            "adox r11, rax",
            "mov rdx, [{b} + 40]",
            "xor eax, eax",
            "mulx rax, r15, [{a} + 0]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{a} + 8]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{a} + 16]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{a} + 24]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{a} + 32]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{a} + 40]",
            "adox r11, r15",
            "adcx r12, rax",
            "mov eax, 0",
            "adox r12, rax",
            "mov rdx, r13",
            "imul rdx, [{p} + 48]",
            "xor eax, eax",
            "mulx rax, r15, [{p} + 0]",
            "adox r13, r15",
            "adcx r14, rax",
            "mulx rax, r15, [{p} + 8]",
            "adox r14, r15",
            "adcx r8, rax",
            "mulx rax, r15, [{p} + 16]",
            "adox r8, r15",
            "adcx r9, rax",
            "mulx rax, r15, [{p} + 24]",
            "adox r9, r15",
            "adcx r10, rax",
            "mulx rax, r15, [{p} + 32]",
            "adox r10, r15",
            "adcx r11, rax",
            "mulx rax, r15, [{p} + 40]",
            "adox r11, r15",
            "adcx r12, rax",
            "mov eax, 0",
            "adox r12, rax",
            a = in(reg) a.as_ptr(),
            b = in(reg) b.as_ptr(),
            p = in(reg) P_INV.as_ptr(),
            inout("r8") 0u64 => t1,
            inout("r9") 0u64 => t2,
            inout("r10") 0u64 => t3,
            inout("r11") 0u64 => t4,
            inout("r12") 0u64 => t5,
            inout("r13") 0u64 => _,
            inout("r14") 0u64 => t0,
            out("rax") _,
            out("rdx") _,
            out("r15") _,
            options(pure, readonly, nostack),
        );
    }
    [t0, t1, t2, t3, t4, t5]
}

/// One CIOS round: t = (t + a b_i + m p) / 2^64 with m making the low limb vanish.
#[inline(always)]
fn cios_round(t: &mut [u64; 6], a: &[u64; 6], bi: u64) {
    let (t0, mut ca) = mac(t[0], a[0], bi, 0);
    let m = t0.wrapping_mul(INV);
    let (_, mut cm) = mac(t0, m, P[0], 0);
    macro_rules! step {
        ($j:expr) => {
            let (tj, c1) = mac(t[$j], a[$j], bi, ca);
            ca = c1;
            let (tj1, c2) = mac(tj, m, P[$j], cm);
            cm = c2;
            t[$j - 1] = tj1;
        };
    }
    step!(1);
    step!(2);
    step!(3);
    step!(4);
    step!(5);
    t[5] = ca.wrapping_add(cm);
}

/// t - p if t >= p, else t (t < 2p), without a branch.
#[inline(always)]
fn reduce_once(t: [u64; 6]) -> [u64; 6] {
    let mut s = [0u64; 6];
    let mut borrow = 0u64;
    for i in 0..6 {
        (s[i], borrow) = sbb(t[i], P[i], borrow);
    }
    // borrow is all ones when t < p: keep t.
    let mut out = [0u64; 6];
    for i in 0..6 {
        out[i] = (t[i] & borrow) | (s[i] & !borrow);
    }
    out
}

impl Fq {
    /// 0.
    pub const ZERO: Fq = Fq([0; 6]);
    /// 1.
    pub const ONE: Fq = Fq(ONE);

    /// From Montgomery-form limbs (must be < p).
    pub(crate) const fn from_mont_limbs(l: [u64; 6]) -> Fq {
        Fq(l)
    }

    /// The Montgomery-form limbs (x R mod p, R = 2^384), little-endian: as twelve 32-bit
    /// words this is also the layout of the GPU kernels, so points upload as they are.
    pub const fn to_mont_limbs(&self) -> [u64; 6] {
        self.0
    }

    /// From Montgomery-form limbs (x R mod p); None unless below p.
    pub fn from_mont_limbs_checked(l: [u64; 6]) -> Option<Fq> {
        let mut borrow = 0u64;
        for i in 0..6 {
            (_, borrow) = sbb(l[i], P[i], borrow);
        }
        (borrow != 0).then_some(Fq(l))
    }

    /// True for 0.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0.iter().fold(0, |acc, &l| acc | l) == 0
    }

    /// a + b.
    #[inline(always)]
    pub fn add(&self, b: &Fq) -> Fq {
        let mut t = [0u64; 6];
        let mut c = 0u64;
        for i in 0..6 {
            (t[i], c) = adc(self.0[i], b.0[i], c);
        }
        // a + b < 2p < 2^384: no carry out.
        Fq(reduce_once(t))
    }

    /// 2a.
    #[inline(always)]
    pub fn double(&self) -> Fq {
        self.add(self)
    }

    /// a - b.
    #[inline(always)]
    pub fn sub(&self, b: &Fq) -> Fq {
        let mut t = [0u64; 6];
        let mut borrow = 0u64;
        for i in 0..6 {
            (t[i], borrow) = sbb(self.0[i], b.0[i], borrow);
        }
        // Add p back when it borrowed (mask all ones).
        let mut c = 0u64;
        for i in 0..6 {
            (t[i], c) = adc(t[i], P[i] & borrow, c);
        }
        Fq(t)
    }

    /// -a.
    #[inline(always)]
    pub fn neg(&self) -> Fq {
        Fq::ZERO.sub(self)
    }

    /// a b.
    #[inline(always)]
    pub fn mul(&self, b: &Fq) -> Fq {
        #[cfg(target_arch = "x86_64")]
        if has_adx() {
            // SAFETY: BMI2 and ADX are present.
            return Fq(reduce_once(unsafe { mul_adx(&self.0, &b.0) }));
        }
        self.mul_portable(b)
    }

    /// a b with the portable kernel (what [`Fq::mul`] runs without BMI2 + ADX).
    #[inline(always)]
    pub fn mul_portable(&self, b: &Fq) -> Fq {
        let (a, b) = (&self.0, &b.0);
        let mut t = [0u64; 6];
        // Six explicit rounds: the compiler keeps t in registers only when unrolled.
        cios_round(&mut t, a, b[0]);
        cios_round(&mut t, a, b[1]);
        cios_round(&mut t, a, b[2]);
        cios_round(&mut t, a, b[3]);
        cios_round(&mut t, a, b[4]);
        cios_round(&mut t, a, b[5]);
        Fq(reduce_once(t))
    }

    /// a^2.
    #[inline(always)]
    pub fn square(&self) -> Fq {
        self.mul(self)
    }

    /// a^e for little-endian exponent limbs (variable time in e: public exponents).
    pub fn vartime_pow(&self, e: &[u64]) -> Fq {
        let mut acc = Fq::ONE;
        for &limb in e.iter().rev() {
            for bit in (0..64).rev() {
                acc = acc.square();
                if (limb >> bit) & 1 == 1 {
                    acc = acc.mul(self);
                }
            }
        }
        acc
    }

    /// a^(-1) (Fermat: a^(p-2)); None for 0. Variable time: public values only.
    pub fn vartime_inverse(&self) -> Option<Fq> {
        if self.is_zero() {
            return None;
        }
        let mut e = P;
        e[0] -= 2;
        Some(self.vartime_pow(&e))
    }

    /// The canonical integer, little-endian bytes (48).
    pub fn to_bytes_le(&self) -> [u8; 48] {
        let plain = self.mul(&Fq([1, 0, 0, 0, 0, 0]));
        let mut out = [0u8; 48];
        for (i, l) in plain.0.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&l.to_le_bytes());
        }
        out
    }

    /// From 48 little-endian bytes holding an integer < p; None when not canonical.
    pub fn from_bytes_le(b: &[u8; 48]) -> Option<Fq> {
        let mut l = [0u64; 6];
        for (i, x) in l.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[8 * i..8 * i + 8]);
            *x = u64::from_le_bytes(w);
        }
        Fq::from_limbs(l)
    }

    /// From little-endian limbs of an integer < p; None when not canonical.
    pub fn from_limbs(l: [u64; 6]) -> Option<Fq> {
        // l < p iff l - p borrows.
        let mut borrow = 0u64;
        for i in 0..6 {
            (_, borrow) = sbb(l[i], P[i], borrow);
        }
        if borrow == 0 {
            return None;
        }
        Some(Fq(l).mul(&Fq(R2)))
    }

    /// The canonical integer as little-endian limbs.
    pub fn to_limbs(&self) -> [u64; 6] {
        self.mul(&Fq([1, 0, 0, 0, 0, 0])).0
    }

    /// From a small integer.
    pub fn from_u64(v: u64) -> Fq {
        Fq([v, 0, 0, 0, 0, 0]).mul(&Fq(R2))
    }
}

/// Replaces every nonzero element by its inverse with one inversion and 3 (n - 1)
/// multiplications (Montgomery's trick); zeros stay zero. `scratch` is reused.
pub fn batch_inverse(v: &mut [Fq], scratch: &mut Vec<Fq>) {
    scratch.clear();
    let mut acc = Fq::ONE;
    for x in v.iter() {
        scratch.push(acc);
        if !x.is_zero() {
            acc = acc.mul(x);
        }
    }
    let Some(mut inv) = acc.vartime_inverse() else {
        return; // acc is a product of nonzero elements: never zero
    };
    for (x, before) in v.iter_mut().zip(scratch.iter()).rev() {
        if x.is_zero() {
            continue;
        }
        let xi = inv.mul(before);
        inv = inv.mul(x);
        *x = xi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_agree() {
        // R2 and ONE are consistent: 1 * R2 -> R, and from_u64(1) == ONE.
        assert_eq!(Fq::from_u64(1), Fq::ONE);
        assert_eq!(Fq::ONE.to_limbs(), [1, 0, 0, 0, 0, 0]);
        // -p^-1 * p = -1 mod 2^64.
        assert_eq!(P[0].wrapping_mul(INV), u64::MAX);
        let mut pm1 = P;
        pm1[0] -= 1;
        let m1 = Fq::from_limbs(pm1).unwrap_or_else(|| panic!("p - 1 canonical"));
        assert_eq!(m1, Fq::ONE.neg());
        assert_eq!(m1.mul(&m1), Fq::ONE);
        assert!(Fq::from_limbs(P).is_none());
    }

    #[test]
    fn both_kernels_agree() {
        // Random-looking elements from a xorshift stream, plus the extremes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            let mut l = [0u64; 6];
            for v in l.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = x;
            }
            l[5] &= (1 << 56) - 1;
            Fq::from_limbs(l).unwrap_or(Fq::ONE)
        };
        let mut vals: Vec<Fq> = (0..500).map(|_| next()).collect();
        vals.extend([Fq::ZERO, Fq::ONE, Fq::ONE.neg(), Fq::from_u64(2).neg()]);
        for a in &vals {
            for b in vals.iter().step_by(37) {
                assert_eq!(a.mul(b), a.mul_portable(b));
            }
        }
    }

    #[test]
    fn batch_inverse_skips_zeros() {
        let mut v: Vec<Fq> = (0..10u64).map(Fq::from_u64).collect();
        let orig = v.clone();
        batch_inverse(&mut v, &mut Vec::new());
        assert!(v[0].is_zero());
        for (a, b) in orig.iter().zip(&v).skip(1) {
            assert_eq!(a.mul(b), Fq::ONE);
        }
    }
}
