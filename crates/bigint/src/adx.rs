//! The multiply-accumulate row kernel with BMI2 `mulx` and ADX `adcx`/`adox`: two
//! independent carry chains (CF for the low halves, OF for the high halves), as in
//! Gopal et al., "New instructions supporting large integer arithmetic on Intel
//! architecture processors" (Intel, 2012). Loop control uses `lea` and `jrcxz`, which
//! leave both flags alone, so the chains run across iterations.
//!
//! `row(acc, b, a)`: acc[0..len] += a * b[0..len], returning the carry word (the new
//! limb len). The caller guarantees acc and b hold `len` limbs; the sum fits len + 1
//! limbs because acc < 2^(64 len) and a b < 2^(64 (len + 1)) - 2^(64 len).
//!
//! Chosen when a context is built, from the features it is given ([`available_on`]), with the portable row in `mont.rs` as its twin;
//! both are tested against each other and against num-bigint.

use core::arch::asm;

use wirespeed_util::cpu::CpuFeatures;

/// True when a CPU with features `f` has BMI2 and ADX (`f` never claims more than
/// this CPU has, so true makes [`row`] safe to call).
pub fn available_on(f: &CpuFeatures) -> bool {
    f.adx()
}

/// acc[0..len] += a * b[0..len]; returns the carry word.
///
/// # Safety
/// The CPU has BMI2 and ADX; `acc` and `b` are valid for `len` limbs (`len` may be 0).
#[inline]
pub unsafe fn row(acc: *mut u64, b: *const u64, a: u64, len: usize) -> u64 {
    let hi: u64;
    // SAFETY: caller's contract: valid pointers for `len` limbs, BMI2 + ADX present.
    // Registers: rdx = a (implicit mulx operand), rcx = loop counter for jrcxz.
    unsafe {
        asm!(
            "mov {rem}, {n}",
            "and {rem}, 3",
            "shr {n}, 2",
            "xor {hi:e}, {hi:e}", // hi = 0, clears CF and OF
            "mov rcx, {n}",
            "jrcxz 3f",
            "2:",
            "mulx {h1}, {lo}, [{b}]",
            "adcx {lo}, [{acc}]",
            "adox {lo}, {hi}",
            "mov [{acc}], {lo}",
            "mulx {hi}, {lo}, [{b} + 8]",
            "adcx {lo}, [{acc} + 8]",
            "adox {lo}, {h1}",
            "mov [{acc} + 8], {lo}",
            "mulx {h1}, {lo}, [{b} + 16]",
            "adcx {lo}, [{acc} + 16]",
            "adox {lo}, {hi}",
            "mov [{acc} + 16], {lo}",
            "mulx {hi}, {lo}, [{b} + 24]",
            "adcx {lo}, [{acc} + 24]",
            "adox {lo}, {h1}",
            "mov [{acc} + 24], {lo}",
            "lea {b}, [{b} + 32]",
            "lea {acc}, [{acc} + 32]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            "mov rcx, {rem}",
            "jrcxz 5f",
            "4:",
            "mulx {h1}, {lo}, [{b}]",
            "adcx {lo}, [{acc}]",
            "adox {lo}, {hi}",
            "mov [{acc}], {lo}",
            "mov {hi}, {h1}",
            "lea {b}, [{b} + 8]",
            "lea {acc}, [{acc} + 8]",
            "lea rcx, [rcx - 1]",
            "jrcxz 5f",
            "jmp 4b",
            "5:",
            "mov {lo}, 0",
            "adcx {hi}, {lo}",
            "adox {hi}, {lo}",
            acc = inout(reg) acc => _,
            b = inout(reg) b => _,
            n = inout(reg) len => _,
            rem = out(reg) _,
            hi = out(reg) hi,
            h1 = out(reg) _,
            lo = out(reg) _,
            in("rdx") a,
            out("rcx") _,
            options(nostack),
        );
    }
    hi
}
