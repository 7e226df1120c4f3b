//! RSA through the engine: batched private operations for one key and batch signing
//! ([`private_many`], [`batch_sign`]: CRT, constant time) and batched powers and
//! products modulo a public modulus ([`modexp_many`], [`modmul_many`]: the group
//! operations of VDF proof generation), on the backend [`Backend::select`] picks
//! ([`Op::Rsa`], [`Op::Modexp`]). Every backend gives the same bytes; a GPU failure
//! falls back by the rules of [`crate::fallback`].
//!
//! Private operations follow `wirespeed_rsa::PrivateKey::raw` exactly on either side
//! (range checks first; every GPU result checked against the public key before it is
//! released). The public batches run on the CPU in crates/bigint's Montgomery contexts
//! at the smallest width that holds the modulus (variable time: public data only).
//!
//! Lanes: the CPU paths run one item per core (rayon); [`Lanes`] does not narrow them.
//!
//! Keys: [`private_key_from_pem`] and [`public_key_from_pem`] build the keys' Montgomery
//! contexts for this CPU's features ([`crate::backend::cpu`]), as the batches' own
//! contexts are.

use num_bigint::BigUint;
use rayon::prelude::*;
use wirespeed_bigint::{MontCtx, Uint};
use wirespeed_gpu::rsa::GPU_MAX_MODULUS_BITS;
use wirespeed_gpu::{Gpu, GpuError};
use wirespeed_rsa::{PrivateKey, PublicKey, RsaError};

use crate::backend::{Backend, Chosen, Lanes, Op};
use crate::fallback::{dispatch, dispatch_on, Policy};

/// A private key from PEM (PKCS#1 or PKCS#8), its contexts built for this CPU's features.
pub fn private_key_from_pem(pem: &str) -> Result<PrivateKey, RsaError> {
    PrivateKey::from_pem_with(pem, crate::backend::cpu())
}

/// A public key from PEM (PKCS#1 or SubjectPublicKeyInfo), its context built for this
/// CPU's features.
pub fn public_key_from_pem(pem: &str) -> Result<PublicKey, RsaError> {
    PublicKey::from_pem_with(pem, crate::backend::cpu())
}

/// m^d mod n for every input, as `key.raw(m)` would give it: one result per input, in
/// order, each exactly `key.public().size()` bytes or the same error as the CPU path
/// (inputs not below n: [`RsaError::OutOfRange`]; a result failing its check against
/// the public key: [`RsaError::FaultDetected`]). The outer error is the GPU's (none with
/// `cpu`; `auto` uses the CPU for batches under [`Op::Rsa`]'s threshold, without a
/// usable GPU, and where the GPU run fails: key sizes without a kernel, unbalanced
/// primes, too little device memory, a failed launch).
pub fn private_many(
    backend: Backend,
    key: &PrivateKey,
    inputs: &[&[u8]],
) -> Result<Vec<Result<Vec<u8>, RsaError>>, GpuError> {
    dispatch(
        backend,
        Op::Rsa,
        inputs.len(),
        Policy::Call,
        |_| inputs.par_iter().map(|m| key.raw(m)).collect(),
        |g| device_private_many(g, key, inputs),
    )
    .map(|r| r.value)
}

/// The device's private batch for `key` (its numbers handed over as a
/// `wirespeed_gpu::rsa::CrtKey`), with the per-item errors as the CPU path names them.
fn device_private_many(
    g: &Gpu,
    key: &PrivateKey,
    inputs: &[&[u8]],
) -> Result<Vec<Result<Vec<u8>, RsaError>>, GpuError> {
    let c = key.crt_params();
    let k = wirespeed_gpu::rsa::CrtKey {
        n: key.public().n().clone(),
        e: key.public().e().clone(),
        p: c.p,
        q: c.q,
        dp: c.dp,
        dq: c.dq,
        qinv: c.qinv,
    };
    let out = wirespeed_gpu::rsa::private_many(g, &k, inputs)?;
    Ok(out
        .into_iter()
        .map(|r| {
            r.map_err(|e| match e {
                wirespeed_gpu::rsa::ItemError::OutOfRange => RsaError::OutOfRange,
                wirespeed_gpu::rsa::ItemError::FaultDetected => RsaError::FaultDetected,
            })
        })
        .collect())
}

/// Why a batch of public powers or products cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModexpError {
    /// The modulus is even, below 3, or wider than 4096 bits.
    BadModulus(&'static str),
    /// The operand lists differ in length.
    LengthMismatch {
        /// Items in the first list.
        left: usize,
        /// Items in the second list.
        right: usize,
    },
    /// The GPU failed (or is absent with `gpu`, or the modulus is wider than
    /// the GPU kernels' 2048 bits).
    Gpu(GpuError),
}

impl std::fmt::Display for ModexpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModexpError::BadModulus(why) => write!(f, "bad modulus: {why}"),
            ModexpError::LengthMismatch { left, right } => {
                write!(f, "{left} left operands but {right} right operands")
            }
            ModexpError::Gpu(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ModexpError {}

impl From<GpuError> for ModexpError {
    fn from(e: GpuError) -> ModexpError {
        ModexpError::Gpu(e)
    }
}

/// The public modulus of a batch.
struct Modulus {
    m: BigUint,
    bits: usize,
    /// Bytes of every result.
    len: usize,
}

fn modulus(m: &[u8]) -> Result<Modulus, ModexpError> {
    let m = BigUint::from_bytes_be(m);
    let bits = m.bits() as usize;
    if !m.bit(0) || bits < 2 {
        return Err(ModexpError::BadModulus("must be odd and at least 3"));
    }
    if bits > 4096 {
        return Err(ModexpError::BadModulus("wider than 4096 bits"));
    }
    Ok(Modulus {
        m,
        bits,
        len: bits.div_ceil(8),
    })
}

/// The backend for a public batch: the GPU only for moduli its kernels take (`auto`
/// keeps wider ones on the CPU; `gpu` is then an error).
fn choose_public(backend: Backend, m: &Modulus, work: usize) -> Result<Chosen, ModexpError> {
    if m.bits > GPU_MAX_MODULUS_BITS {
        return match backend {
            Backend::Gpu => Err(ModexpError::Gpu(GpuError::Unsupported(format!(
                "{}-bit modulus (the GPU kernels take up to {GPU_MAX_MODULUS_BITS} bits)",
                m.bits
            )))),
            Backend::Cpu(l) => Ok(Chosen::Cpu(l)),
            Backend::Auto => Ok(Chosen::Cpu(Lanes::Auto)),
        };
    }
    Ok(backend.select(Op::Modexp, work)?)
}

/// bases\[i\]^exponents\[i\] mod m for every i (big-endian integers of any length; bases
/// are reduced modulo m first, x^0 = 1), each result exactly as many bytes as m. Public
/// data only: the CPU path is variable-time; the GPU runs every item over the longest
/// exponent's bits. The GPU takes moduli up to [`GPU_MAX_MODULUS_BITS`] bits; under
/// `auto` wider ones, small batches and machines without a GPU use the CPU.
pub fn modexp_many(
    backend: Backend,
    m: &[u8],
    bases: &[&[u8]],
    exponents: &[&[u8]],
) -> Result<Vec<Vec<u8>>, ModexpError> {
    if bases.len() != exponents.len() {
        return Err(ModexpError::LengthMismatch {
            left: bases.len(),
            right: exponents.len(),
        });
    }
    let m = modulus(m)?;
    let exps: Vec<BigUint> = exponents
        .iter()
        .map(|e| BigUint::from_bytes_be(e))
        .collect();
    let chosen = choose_public(backend, &m, bases.len())?;
    let cpu = |_: Lanes| cpu_public(&m, bases, |ctx, i, x| ctx.pow(x, &exps[i]));
    let gpu = |g: &'static Gpu| wirespeed_gpu::rsa::modexp_many(g, &m.m, bases, &exps);
    Ok(dispatch_on(chosen, backend, Policy::Call, cpu, gpu)?.value)
}

/// a\[i\] b\[i\] mod m for every i (big-endian integers of any length, reduced modulo m
/// first), each result exactly as many bytes as m. Public data; backends as for
/// [`modexp_many`].
pub fn modmul_many(
    backend: Backend,
    m: &[u8],
    a: &[&[u8]],
    b: &[&[u8]],
) -> Result<Vec<Vec<u8>>, ModexpError> {
    if a.len() != b.len() {
        return Err(ModexpError::LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    let m = modulus(m)?;
    let chosen = choose_public(backend, &m, a.len())?;
    let cpu = |_: Lanes| {
        cpu_public(&m, a, |ctx, i, x| {
            ctx.mul(x, &(BigUint::from_bytes_be(b[i]) % &m.m))
        })
    };
    let gpu = |g: &'static Gpu| wirespeed_gpu::rsa::modmul_many(g, &m.m, a, b);
    Ok(dispatch_on(chosen, backend, Policy::Call, cpu, gpu)?.value)
}

/// Montgomery arithmetic of crates/bigint at the smallest width that holds the modulus.
enum CpuCtx {
    W1024(Box<MontCtx<16>>),
    W2048(Box<MontCtx<32>>),
    W3072(Box<MontCtx<48>>),
    W4096(Box<MontCtx<64>>),
}

impl CpuCtx {
    fn new(m: &BigUint) -> CpuCtx {
        fn ctx<const L: usize>(m: &BigUint) -> MontCtx<L> {
            let u = Uint::<L>::from_be_bytes(&m.to_bytes_be()).expect("the modulus fits");
            MontCtx::new_with(&u, crate::backend::cpu()).expect("odd modulus above 1")
        }
        match m.bits() {
            0..=1024 => CpuCtx::W1024(Box::new(ctx(m))),
            1025..=2048 => CpuCtx::W2048(Box::new(ctx(m))),
            2049..=3072 => CpuCtx::W3072(Box::new(ctx(m))),
            _ => CpuCtx::W4096(Box::new(ctx(m))),
        }
    }

    /// x^e mod m for x < m (variable time: public data).
    fn pow(&self, x: &BigUint, e: &BigUint) -> BigUint {
        fn run<const L: usize>(c: &MontCtx<L>, x: &BigUint, e: &BigUint) -> BigUint {
            let xm = c.to_mont(&to_uint(x));
            let r = c.from_mont(&c.vartime_pow(&xm, &e.to_u64_digits()));
            BigUint::from_bytes_be(&r.to_be_bytes())
        }
        match self {
            CpuCtx::W1024(c) => run(c, x, e),
            CpuCtx::W2048(c) => run(c, x, e),
            CpuCtx::W3072(c) => run(c, x, e),
            CpuCtx::W4096(c) => run(c, x, e),
        }
    }

    /// x y mod m for x, y < m.
    fn mul(&self, x: &BigUint, y: &BigUint) -> BigUint {
        fn run<const L: usize>(c: &MontCtx<L>, x: &BigUint, y: &BigUint) -> BigUint {
            let r = c.mul(&c.to_mont(&to_uint(x)), &to_uint(y));
            BigUint::from_bytes_be(&r.to_be_bytes())
        }
        match self {
            CpuCtx::W1024(c) => run(c, x, y),
            CpuCtx::W2048(c) => run(c, x, y),
            CpuCtx::W3072(c) => run(c, x, y),
            CpuCtx::W4096(c) => run(c, x, y),
        }
    }
}

fn to_uint<const L: usize>(x: &BigUint) -> Uint<L> {
    Uint::from_be_bytes(&x.to_bytes_be()).expect("values are reduced modulo m")
}

/// The CPU path of the public batches: `op(ctx, i, x_i mod m)` for every item, in
/// parallel, as fixed-length big-endian bytes.
fn cpu_public(
    m: &Modulus,
    xs: &[&[u8]],
    op: impl Fn(&CpuCtx, usize, &BigUint) -> BigUint + Sync,
) -> Vec<Vec<u8>> {
    let ctx = CpuCtx::new(&m.m);
    xs.par_iter()
        .enumerate()
        .map(|(i, x)| {
            let r = op(&ctx, i, &(BigUint::from_bytes_be(x) % &m.m));
            let b = r.to_bytes_be();
            let mut out = vec![0u8; m.len - b.len()];
            out.extend_from_slice(&b);
            out
        })
        .collect()
}

/// Signs every message as [`wirespeed_rsa::batch_sign`] does (PKCS#1 v1.5, or PSS with a
/// fresh random salt of the digest's length), with the private operations on the chosen
/// backend: encoding on the CPU cores, then [`private_many`]. The inner error is the
/// first signing error (as the CPU path reports it); the outer one is the GPU's.
pub fn batch_sign(
    backend: Backend,
    key: &PrivateKey,
    padding: wirespeed_rsa::Padding,
    h: wirespeed_rsa::Hash,
    msgs: &[Vec<u8>],
) -> Result<Result<Vec<Vec<u8>>, RsaError>, GpuError> {
    let chosen = backend.select(Op::Rsa, msgs.len())?;
    if let Chosen::Cpu(_) = chosen {
        return Ok(wirespeed_rsa::batch_sign(key, padding, h, msgs));
    }
    let size = key.public().size();
    let bits = key.public().bits();
    let encoded: Result<Vec<Vec<u8>>, RsaError> = msgs
        .par_iter()
        .map(|m| match padding {
            wirespeed_rsa::Padding::Pkcs1v15 => wirespeed_rsa::pkcs1v15::encode(h, m, size),
            wirespeed_rsa::Padding::Pss => {
                let mut salt = vec![0u8; h.len()];
                rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut salt);
                wirespeed_rsa::pss::encode(h, m, &salt, bits)
            }
        })
        .collect();
    let encoded = match encoded {
        Ok(e) => e,
        Err(e) => return Ok(Err(e)),
    };
    let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
    // The choice is made: `auto` on the GPU keeps its fallback, `gpu` its errors.
    let cpu = |_: Lanes| refs.par_iter().map(|m| key.raw(m)).collect();
    let gpu = |g: &'static Gpu| device_private_many(g, key, &refs);
    Ok(dispatch_on(chosen, backend, Policy::Call, cpu, gpu)?
        .value
        .into_iter()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// A fresh key of `bits` bits (OpenSSL's generator, for tests).
    fn key(bits: u32) -> PrivateKey {
        let k = openssl::rsa::Rsa::generate(bits).expect("keygen");
        let pem = String::from_utf8(k.private_key_to_pem().expect("pem")).expect("utf8");
        private_key_from_pem(&pem).expect("key")
    }

    #[test]
    fn cpu_private_many_is_raw_with_its_errors() {
        let k = key(2048);
        let n = k.public().n().clone();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut inputs: Vec<Vec<u8>> = (0..6)
            .map(|_| {
                let mut b = vec![0u8; 256];
                rng.fill(&mut b[..]);
                b[0] &= 0x7f;
                b
            })
            .collect();
        inputs.push(n.to_bytes_be()); // = n: out of range
        inputs.push(vec![1; 257]); // too long
        inputs.push(vec![]); // 0
        inputs.push((&n - 1u8).to_bytes_be());
        let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
        let got = private_many(Backend::CPU, &k, &refs).unwrap();
        assert_eq!(got.len(), refs.len());
        for (m, r) in refs.iter().zip(&got) {
            assert_eq!(r, &k.raw(m));
        }
        assert_eq!(got[6], Err(RsaError::OutOfRange));
        assert_eq!(got[7], Err(RsaError::OutOfRange));
        // A batch too small for the GPU runs on the CPU under auto.
        assert_eq!(
            private_many(Backend::Auto, &k, &refs[..2]).unwrap(),
            got[..2]
        );
    }

    #[test]
    fn cpu_modexp_and_modmul_match_num_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for bits in [1000usize, 2048, 3072, 4096] {
            let mut m = vec![0u8; bits / 8];
            rng.fill(&mut m[..]);
            m[0] |= 0x80;
            *m.last_mut().unwrap() |= 1;
            let mb = BigUint::from_bytes_be(&m);
            let xs: Vec<Vec<u8>> = (0..5)
                .map(|i| {
                    let mut b = vec![0u8; bits / 8 + i];
                    rng.fill(&mut b[..]);
                    b
                })
                .collect();
            let es: Vec<Vec<u8>> = (0..5)
                .map(|i| (0..i * 7).map(|_| rng.gen()).collect())
                .collect();
            let xr: Vec<&[u8]> = xs.iter().map(|v| v.as_slice()).collect();
            let er: Vec<&[u8]> = es.iter().map(|v| v.as_slice()).collect();
            let p = modexp_many(Backend::CPU, &m, &xr, &er).unwrap();
            let q = modmul_many(Backend::CPU, &m, &xr, &er).unwrap();
            for i in 0..5 {
                let x = BigUint::from_bytes_be(xr[i]);
                let e = BigUint::from_bytes_be(er[i]);
                assert_eq!(p[i].len(), m.len());
                assert_eq!(
                    BigUint::from_bytes_be(&p[i]),
                    x.modpow(&e, &mb),
                    "{bits} {i}"
                );
                assert_eq!(BigUint::from_bytes_be(&q[i]), x * e % &mb, "{bits} {i}");
            }
        }
    }

    #[test]
    fn bad_public_batches_are_typed_errors() {
        let one: &[u8] = &[1];
        assert!(matches!(
            modexp_many(Backend::CPU, &[10], &[one], &[one]),
            Err(ModexpError::BadModulus(_))
        ));
        assert!(matches!(
            modexp_many(Backend::CPU, &[11], &[one], &[]),
            Err(ModexpError::LengthMismatch { left: 1, right: 0 })
        ));
        let wide = vec![0xffu8; 513];
        assert!(matches!(
            modmul_many(Backend::CPU, &wide, &[one], &[one]),
            Err(ModexpError::BadModulus(_))
        ));
    }

    #[test]
    fn gpu_without_a_device_is_an_error_not_a_fallback() {
        if Backend::Gpu.choose(1, 1).is_ok() {
            eprintln!("a GPU is present: the no-GPU error path is not exercised here");
            return;
        }
        let k = key(2048);
        assert!(private_many(Backend::Gpu, &k, &[&[5u8][..]]).is_err());
        assert!(matches!(
            modexp_many(Backend::Gpu, &[11], &[&[2u8][..]], &[&[3u8][..]]),
            Err(ModexpError::Gpu(_))
        ));
    }

    #[test]
    fn batch_sign_on_each_backend_verifies_and_matches_the_cpu() {
        let k = key(2048);
        let msgs: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 10 + i as usize]).collect();
        let h = wirespeed_rsa::Hash::Sha256;
        let cpu =
            wirespeed_rsa::batch_sign(&k, wirespeed_rsa::Padding::Pkcs1v15, h, &msgs).unwrap();
        for b in [Backend::CPU, Backend::Auto, Backend::Gpu] {
            let Ok(r) = batch_sign(b, &k, wirespeed_rsa::Padding::Pkcs1v15, h, &msgs) else {
                assert_eq!(b, Backend::Gpu, "only an explicit gpu may fail without one");
                continue;
            };
            assert_eq!(r.unwrap(), cpu, "{b}");
            let pss = batch_sign(b, &k, wirespeed_rsa::Padding::Pss, h, &msgs)
                .unwrap()
                .unwrap();
            for (m, sig) in msgs.iter().zip(&pss) {
                wirespeed_rsa::pss::verify(k.public(), h, m, sig).unwrap();
            }
        }
    }
}
