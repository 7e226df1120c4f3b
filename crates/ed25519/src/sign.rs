//! Ed25519 signing (RFC 8032 section 5.1.5 key generation, 5.1.6 signing), constant
//! time with respect to the secret key and the nonce. This is the signing path of the
//! crate; everything else in it verifies public data and may be variable time.
//!
//! - Key: h = SHA-512(seed); s = h[0..32] clamped (bits 0..2 and 255 cleared, bit 254
//!   set); prefix = h[32..64]; A = [s]B.
//! - Signature of M: r = SHA-512(prefix || M) mod L; R = [r]B;
//!   k = SHA-512(R || A || M) mod L; S = (r + k s) mod L; the signature is R || S.
//!
//! Constant time: [s]B and [r]B run [`ct_basepoint_mul`]: 64 fixed windows of 4 bits,
//! four doublings and one addition each, the addend chosen from a table of the 16
//! multiples 0B..15B by scanning every entry with a mask (no index or branch depends on
//! a digit). The formulas are the complete extended-coordinate ones of `crate::point`
//! (HWCD add-2008-hwcd-3, dbl-2008-hwcd), so adding the identity needs no special case.
//! The scalar arithmetic on s and r uses the `ct_` forms of `wirespeed_field::Scalar`;
//! k and everything derived from public values only (A, R, M) may use the others.
//! The expanded key is wiped when a [`SigningKey`] is dropped.

use std::sync::OnceLock;

use sha2::{Digest, Sha512};
use wirespeed_field::{Fe51, Scalar};

use crate::point::{Extended, ProjNiels};
use crate::serial::basepoint;

/// An Ed25519 signing key: the 32-byte seed's expansion (the clamped scalar, the nonce
/// prefix) and the public key. `Debug` shows the public key only.
pub struct SigningKey {
    /// s mod L (the clamped scalar, reduced in constant time).
    scalar: Scalar,
    /// The nonce prefix, h[32..64].
    prefix: [u8; 32],
    /// A, encoded.
    public: [u8; 32],
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey {{ public: ")?;
        for b in self.public {
            write!(f, "{b:02x}")?;
        }
        write!(f, ", .. }}")
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        // The expanded secret must not stay in freed memory.
        for w in self.scalar.0.iter_mut() {
            // SAFETY: `w` is a valid, aligned, exclusive reference.
            unsafe { std::ptr::write_volatile(w, 0) };
        }
        for b in self.prefix.iter_mut() {
            // SAFETY: `b` is a valid, aligned, exclusive reference.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl SigningKey {
    /// The key of a 32-byte seed (RFC 8032's "private key").
    pub fn from_seed(seed: &[u8; 32]) -> SigningKey {
        let h: [u8; 64] = Sha512::digest(seed).into();
        let mut s = [0u8; 32];
        s.copy_from_slice(&h[..32]);
        s[0] &= 248;
        s[31] &= 127;
        s[31] |= 64;
        let mut prefix = [0u8; 32];
        prefix.copy_from_slice(&h[32..]);
        let public = ct_basepoint_mul(&s).compress();
        let key = SigningKey {
            scalar: Scalar::ct_from_bytes_mod_order(&s),
            prefix,
            public,
        };
        wipe(&mut s);
        key
    }

    /// The public key A (32 bytes).
    pub fn public_key(&self) -> [u8; 32] {
        self.public
    }

    /// The signature R || S of `msg` (deterministic: the same key and message give the
    /// same signature).
    pub fn sign(&self, msg: &[u8]) -> [u8; 64] {
        let mut h = Sha512::new();
        h.update(self.prefix);
        h.update(msg);
        let mut digest: [u8; 64] = h.finalize().into();
        let r = Scalar::ct_from_bytes_mod_order_wide(&digest);
        wipe(&mut digest);
        let big_r = ct_basepoint_mul(&r.to_bytes()).compress();
        // k depends on public values only (R, A, M).
        let mut h = Sha512::new();
        h.update(big_r);
        h.update(self.public);
        h.update(msg);
        let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
        let s = r.ct_add(&k.ct_mul(&self.scalar));
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&big_r);
        sig[32..].copy_from_slice(&s.to_bytes());
        sig
    }
}

/// Overwrites secret bytes so the compiler keeps the stores.
fn wipe(b: &mut [u8]) {
    for x in b.iter_mut() {
        // SAFETY: `x` is a valid, aligned, exclusive reference.
        unsafe { std::ptr::write_volatile(x, 0) };
    }
}

/// [j]B for j in 0..16, in the cached form the addition takes (public values).
fn table() -> &'static [ProjNiels<Fe51>; 16] {
    static T: OnceLock<[ProjNiels<Fe51>; 16]> = OnceLock::new();
    T.get_or_init(|| {
        let b = basepoint().to_proj_niels();
        let mut p = Extended::<Fe51>::identity();
        std::array::from_fn(|_| {
            let here = p.to_proj_niels();
            p = p.add_niels(&b).to_extended();
            here
        })
    })
}

/// `dst` = `src` where `mask` is all ones, unchanged where it is zero.
#[inline(always)]
fn ct_assign(dst: &mut Fe51, src: &Fe51, mask: u64) {
    for (d, s) in dst.0.iter_mut().zip(src.0) {
        *d = (*d & !mask) | (s & mask);
    }
}

/// The table entry `digit` (0..16), read by scanning all 16 with masks.
fn ct_select(digit: u8) -> ProjNiels<Fe51> {
    let t = table();
    let mut out = t[0];
    for (j, e) in t.iter().enumerate() {
        let x = u64::from(digit ^ j as u8);
        // All ones where digit == j: x - 1 borrows only for x = 0.
        let mask = core::hint::black_box(0u64.wrapping_sub((x.wrapping_sub(1) >> 63) & 1));
        ct_assign(&mut out.y_plus_x, &e.y_plus_x, mask);
        ct_assign(&mut out.y_minus_x, &e.y_minus_x, mask);
        ct_assign(&mut out.z, &e.z, mask);
        ct_assign(&mut out.t2d, &e.t2d, mask);
    }
    out
}

/// [s]B for a secret 256-bit little-endian `s`, in constant time: the signing path's
/// base multiplication (64 windows of 4 bits from the top, four doublings and one
/// masked table addition each; the same operations for every `s`).
pub fn ct_basepoint_mul(s: &[u8; 32]) -> Extended<Fe51> {
    let mut q = Extended::<Fe51>::identity();
    for i in (0..64).rev() {
        for _ in 0..4 {
            q = q.double();
        }
        let digit = (s[i / 2] >> (4 * (i % 2))) & 15;
        q = q.add_niels(&ct_select(digit)).to_extended();
    }
    q
}
