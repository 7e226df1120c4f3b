//! The kernel headers compiled as host C++ (kernels/host/*.cpp, built by build.rs), and
//! their tests against the Rust implementations.

mod eccvm;
mod ed25519;
mod mont;
mod msm;
mod rsa;

extern "C" {
    fn ws_host_mul_add(a: u32, b: u32, c: u32, out: *mut u32);
}

/// a * b + c through the kernels' carry helpers.
pub fn mul_add(a: u32, b: u32, c: u32) -> u64 {
    let mut o = [0u32; 2];
    // SAFETY: `o` has the two words the function writes.
    unsafe { ws_host_mul_add(a, b, c, o.as_mut_ptr()) };
    o[0] as u64 | (o[1] as u64) << 32
}

#[cfg(test)]
mod tests {
    #[test]
    fn carry_helpers_match_u64() {
        for (a, b, c) in [
            (0, 0, 0),
            (u32::MAX, u32::MAX, u32::MAX),
            (7, 9, 3),
            (1 << 31, 2, 1),
        ] {
            assert_eq!(super::mul_add(a, b, c), a as u64 * b as u64 + c as u64);
        }
    }
}
