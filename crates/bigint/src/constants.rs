//! Public constants shared by the RSA-group crates (the VDF, RSA accumulators), so that
//! neither borrows them from the other.
//!
//! - [`RSA_2048_HEX`]: the RSA-2048 factoring challenge number (RSA Laboratories, 1991),
//!   617 decimal digits, factorization unknown: the default modulus of the VDF and of
//!   accumulators, since nobody holds a trapdoor for it. Its decimal expansion
//!   (2519590847...2120720357) is checked in the VDF's tests and its value here.

use crate::U2048;

/// The RSA-2048 challenge number, big-endian hex (512 digits, no prefix).
pub const RSA_2048_HEX: &str = "\
c7970ceedcc3b0754490201a7aa613cd73911081c790f5f1a8726f463550bb5b7ff0db8e1ea1189ec72f93d165\
0011bd721aeeacc2acde32a04107f0648c2813a31f5b0b7765ff8b44b4b6ffc93384b646eb09c7cf5e8592d40e\
a33c80039f35b4f14a04b51f7bfd781be4d1673164ba8eb991c2c4d730bbbe35f592bdef524af7e8daefd26c66\
fc02c479af89d64d373f442709439de66ceb955f3ea37d5159f6135809f85334b5cb1813addc80cd05609f10ac\
6a95ad65872c909525bdad32bc729592642920f24c61dc5b3c3b7923e56b16a4d9d373d8721f24a3fc0f1b3131\
f55615172866bccc30f95054c824e733a5eb6817f7bc16399d48c6361cc7e5";

/// The RSA-2048 challenge number ([`RSA_2048_HEX`]) as a 2048-bit integer.
pub fn rsa_2048() -> U2048 {
    // 512 hex digits always fit 2048 bits; the test below holds the constant to that.
    U2048::from_hex(RSA_2048_HEX).unwrap_or(U2048::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsa_2048_is_an_odd_2048_bit_number() {
        let n = rsa_2048();
        assert_eq!(n.bits(), 2048);
        assert!(n.is_odd());
        assert_eq!(n.to_hex(), RSA_2048_HEX);
        // The low decimal digits of the published number: ...2120720357.
        assert_eq!(n.rem_u64(10_000_000_000), 2_120_720_357);
    }
}
