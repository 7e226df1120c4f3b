//! Point decoding with one mode's checks for one point role, as a verdict plus affine
//! coordinates: the contract of the RFC 8032 decoding programs of
//! `python/wirespeed_trace/rfc8032.py` (docs/trace-format.md section 7), so the two can be
//! compared output for output. The checks per (mode, role) are those verification applies
//! (`crate::verify::prepare_decoded`).
//!
//! Variable time: public data only.

use wirespeed_field::cpu::CpuFeatures;
use wirespeed_field::Fe51;

use crate::many::Lanes;
use crate::mode::Mode;
use crate::serial::{vartime_decompress, Decoded, DecompressStart};

/// Which point of a signature an encoding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The public key.
    A,
    /// The first half of the signature.
    R,
}

impl Role {
    /// Both roles.
    pub const ALL: [Role; 2] = [Role::A, Role::R];

    /// "A" or "R".
    pub fn name(&self) -> &'static str {
        match self {
            Role::A => "A",
            Role::R => "R",
        }
    }
}

/// Affine (x, y) as canonical encodings of the two field elements (not a point encoding).
pub type Coordinates = ([u8; 32], [u8; 32]);

/// The mode's rules for `role` on a decoding result (None: not a curve point).
fn check(d: Option<Decoded>, mode: Mode, role: Role) -> Option<Coordinates> {
    let d = d?;
    let canonical = match role {
        Role::A => mode.requires_canonical_a(),
        Role::R => mode.requires_canonical_r(),
    };
    if canonical && !d.is_canonical() {
        return None;
    }
    if mode.rejects_small_order() && d.point.is_small_order() {
        return None;
    }
    // Decoded points have Z = 1: x and y are affine.
    Some((d.point.x.to_bytes(), d.point.y.to_bytes()))
}

/// Decodes `enc` as point `role` under `mode`: Some((x, y)) iff the encoding decodes and
/// passes every rule verification applies to that point in that mode (A: canonical in
/// cofactored-strict and libsodium, not of small order except in zip215; R: canonical and
/// not of small order except in zip215). x and y are canonical encodings of the affine
/// coordinates: y reduced mod p (a non-canonical y >= p, where accepted, gives y - p), x
/// with the sign bit applied (0 for the accepted negative zero). None corresponds to the
/// programs' ok = false with x = y = 0.
pub fn vartime_decode_checked(enc: &[u8; 32], mode: Mode, role: Role) -> Option<Coordinates> {
    check(vartime_decompress(enc), mode, role)
}

/// [`vartime_decode_checked`] of every encoding into `out` (as long as `encs`), with the
/// square-root exponentiations N at a time in the lanes of `backend` (as many-signature
/// verification does); the rest per encoding. An unavailable backend runs serially.
/// Same results as the single version.
///
/// Convenience wrapper: [`vartime_decode_checked_many_with`] this process's detected
/// features.
pub fn vartime_decode_checked_many(
    encs: &[[u8; 32]],
    mode: Mode,
    role: Role,
    backend: Lanes,
    out: &mut [Option<Coordinates>],
) {
    vartime_decode_checked_many_with(encs, mode, role, backend, CpuFeatures::get(), out);
}

/// [`vartime_decode_checked_many`] with `backend` checked against (and `Auto` resolved
/// on) the CPU features `cpu`; a backend `cpu` lacks runs serially.
pub fn vartime_decode_checked_many_with(
    encs: &[[u8; 32]],
    mode: Mode,
    role: Role,
    backend: Lanes,
    cpu: &CpuFeatures,
    out: &mut [Option<Coordinates>],
) {
    assert_eq!(encs.len(), out.len(), "one output per encoding");
    let backend = crate::many::resolve(backend, cpu);
    type Pow = unsafe fn(&[Fe51], &mut [Fe51]);
    let (pow, n): (Pow, usize) = match backend {
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 => (crate::lanes::pow_p58_avx2, 4),
        #[cfg(target_arch = "x86_64")]
        Lanes::Ifma => (crate::lanes::pow_p58_ifma, 8),
        #[cfg(target_arch = "x86_64")]
        Lanes::Ifma4 => (crate::lanes::pow_p58_ifma4, 4),
        _ => {
            for (o, e) in out.iter_mut().zip(encs) {
                *o = vartime_decode_checked(e, mode, role);
            }
            return;
        }
    };
    let mut starts = [None::<DecompressStart>; 8];
    let mut x = [Fe51::ZERO; 8];
    let mut pw = [Fe51::ZERO; 8];
    for (e, o) in encs.chunks(n).zip(out.chunks_mut(n)) {
        for (j, enc) in e.iter().enumerate() {
            let s = DecompressStart::new(enc);
            x[j] = s.uv7;
            starts[j] = Some(s);
        }
        // SAFETY: `backend` passed `available()`, so the CPU has its instruction set.
        unsafe { pow(&x[..e.len()], &mut pw[..e.len()]) };
        for (j, enc) in e.iter().enumerate() {
            o[j] = starts[j].and_then(|s| check(s.finish(enc, &pw[j]), mode, role));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serial::{vartime_basepoint_mul, BASEPOINT_BYTES};
    use wirespeed_field::Scalar;

    const P: [u8; 32] = {
        let mut p = [0xffu8; 32];
        p[0] = 0xed;
        p[31] = 0x7f;
        p
    };

    fn le(v: u64) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&v.to_le_bytes());
        b
    }

    /// p + k as a 255-bit encoding with sign bit `sign`.
    fn p_plus(k: u8, sign: bool) -> [u8; 32] {
        let mut b = P;
        b[0] += k;
        b[31] |= (sign as u8) << 7;
        b
    }

    #[test]
    fn base_point_decodes_in_every_mode() {
        let y = {
            let mut y = BASEPOINT_BYTES;
            y[31] &= 0x7f;
            y
        };
        for mode in Mode::ALL {
            for role in Role::ALL {
                let (x, yy) = vartime_decode_checked(&BASEPOINT_BYTES, mode, role)
                    .expect("the base point passes every rule");
                assert_eq!(yy, y);
                assert_eq!(x[0] & 1, 0, "the base point's x is even");
            }
        }
    }

    #[test]
    fn identity_is_small_order_everywhere_but_zip215() {
        // y = 1, x = 0: the neutral element.
        for mode in Mode::ALL {
            for role in Role::ALL {
                let r = vartime_decode_checked(&le(1), mode, role);
                assert_eq!(r.is_some(), mode == Mode::Zip215, "{mode} {role:?}");
                if let Some((x, y)) = r {
                    assert_eq!((x, y), (le(0), le(1)));
                }
            }
        }
    }

    #[test]
    fn non_canonical_y_reduces_where_accepted() {
        // p + 1 encodes y = 1 non-canonically (the identity): accepted only by zip215,
        // where it decodes to y = 1.
        let enc = p_plus(1, false);
        assert_eq!(
            vartime_decode_checked(&enc, Mode::Zip215, Role::A),
            Some((le(0), le(1)))
        );
        for mode in [Mode::Strict, Mode::CofactoredStrict, Mode::Libsodium] {
            assert_eq!(vartime_decode_checked(&enc, mode, Role::R), None, "{mode}");
        }
        // The negative zero (x = 0 with the sign bit set) decodes to x = 0 in zip215.
        let mut neg_zero = le(1);
        neg_zero[31] |= 0x80;
        assert_eq!(
            vartime_decode_checked(&neg_zero, Mode::Zip215, Role::R),
            Some((le(0), le(1)))
        );
    }

    #[test]
    fn strict_a_accepts_a_non_canonical_large_order_key() {
        // Find a y in p..2^255 whose reduction is the y of a large-order point: y - p is
        // in 0..19; y = p + k is non-canonical. Strict A accepts it, cofactored-strict not.
        let mut found = false;
        for k in 0..19u8 {
            for sign in [false, true] {
                let enc = p_plus(k, sign);
                if let Some((_, y)) = vartime_decode_checked(&enc, Mode::Strict, Role::A) {
                    assert_eq!(y, le(k as u64));
                    assert_eq!(
                        vartime_decode_checked(&enc, Mode::CofactoredStrict, Role::A),
                        None
                    );
                    assert_eq!(vartime_decode_checked(&enc, Mode::Strict, Role::R), None);
                    found = true;
                }
            }
        }
        assert!(found, "some y in 0..19 is a large-order point's y");
    }

    #[test]
    fn many_matches_single_on_every_backend() {
        let mut encs: Vec<[u8; 32]> = (1..=11u64)
            .map(|k| vartime_basepoint_mul(&Scalar([k * 7919, 0, 0, 0])).compress())
            .collect();
        encs.extend([le(1), le(0), p_plus(3, true), [0xff; 32], le(2)]);
        for backend in Lanes::CONCRETE {
            for mode in Mode::ALL {
                for role in Role::ALL {
                    for len in [0, 1, 3, 8, 9, encs.len()] {
                        let mut out = vec![None; len];
                        vartime_decode_checked_many(&encs[..len], mode, role, backend, &mut out);
                        for (e, o) in encs.iter().zip(&out) {
                            assert_eq!(*o, vartime_decode_checked(e, mode, role));
                        }
                    }
                }
            }
        }
    }
}
