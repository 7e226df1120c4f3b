//! RSA keys: parsing (PKCS#1 and PKCS#8, PEM or DER, through the `rsa` crate's
//! decoders), validation, and the raw operations on our Montgomery arithmetic.
//!
//! Sizes: 2048-, 3072- and 4096-bit moduli with balanced primes (each prime fits half
//! the modulus width). The private operation uses the CRT with a fault check: the result
//! is raised to e and compared with the input before it is released, so a glitched
//! half-exponentiation cannot leak a factor (the Bellcore attack).
//!
//! Contexts: a public key holds one [`DynMontCtx`] (the Montgomery context of n at its
//! width); a private key one CRT context per key size, whose two half-width prime
//! contexts share a width so that their powers can run interleaved
//! ([`MontCtx::pow_ct_pair`]). Every constructor has a `_with` form that takes the
//! [`CpuFeatures`] its contexts choose their kernel by (the engine passes its own); the
//! plain names use this process's detected features.
//!
//! Timing: the private operation is constant-time in the key and the input: reductions,
//! Montgomery products, fixed-window powers with masked table scans
//! ([`MontCtx::pow_ct`]), branch-free modular subtraction. Key loading and validation
//! (once per key) use num-bigint and are not constant-time. Public operations are
//! variable-time (`vartime_`) on public data.

use num_bigint::BigUint;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use wirespeed_bigint::{CpuFeatures, DynMontCtx, Kernel, MontCtx, Uint, U4096};

use crate::RsaError;

/// Montgomery contexts and CRT constants for one key width (L limbs, H = L / 2).
#[derive(Clone, Debug)]
pub(crate) struct CrtCtx<const L: usize, const H: usize> {
    n: MontCtx<L>,
    p: MontCtx<H>,
    q: MontCtx<H>,
    q_full: Uint<L>,
    dp: Uint<H>,
    dq: Uint<H>,
    /// q^-1 mod p in p's Montgomery form.
    qinv_m: Uint<H>,
    /// 2^(64 H) mod p and mod q in Montgomery form (to reduce the high half of m).
    xp_m: Uint<H>,
    xq_m: Uint<H>,
}

/// The per-width contexts of a private key.
#[derive(Clone, Debug)]
pub(crate) enum PrivCtx {
    K2048(Box<CrtCtx<32, 16>>),
    K3072(Box<CrtCtx<48, 24>>),
    K4096(Box<CrtCtx<64, 32>>),
}

/// An RSA public key.
#[derive(Clone, Debug)]
pub struct PublicKey {
    n: BigUint,
    e: BigUint,
    e_limbs: Vec<u64>,
    bits: usize,
    /// n's Montgomery context at its working width (2048, 3072 or 4096 bits).
    ctx: DynMontCtx,
}

/// The CRT form of a private key: p, q, dp = d mod (p - 1), dq = d mod (q - 1) and
/// qinv = q^(-1) mod p, so that m^d mod n = m2 + q (qinv (m1 - m2) mod p) with
/// m1 = m^dp mod p and m2 = m^dq mod q. Secret: for backends that run the private
/// operation on other hardware (the GPU), which must guard it as they guard the key.
/// `Debug` prints no values.
#[derive(Clone)]
pub struct CrtParams {
    /// The first prime (the one the CRT recombination reduces modulo).
    pub p: BigUint,
    /// The second prime.
    pub q: BigUint,
    /// d mod (p - 1).
    pub dp: BigUint,
    /// d mod (q - 1).
    pub dq: BigUint,
    /// q^(-1) mod p.
    pub qinv: BigUint,
}

impl std::fmt::Debug for CrtParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CrtParams { .. }")
    }
}

/// An RSA private key (with its public half).
#[derive(Clone, Debug)]
pub struct PrivateKey {
    public: PublicKey,
    ctx: PrivCtx,
}

/// The limbs of b; callers only pass values that fit (checked against the key width).
fn to_uint<const L: usize>(b: &BigUint) -> Uint<L> {
    Uint::from_biguint_wrapping(b)
}

fn dig(b: &rsa::BigUint) -> BigUint {
    BigUint::from_bytes_be(&b.to_bytes_be())
}

fn limbs(b: &BigUint) -> Vec<u64> {
    b.to_u64_digits()
}

impl PublicKey {
    /// From the modulus and public exponent (big-endian integers).
    pub fn from_components(n: &BigUint, e: &BigUint) -> Result<PublicKey, RsaError> {
        Self::from_components_with(n, e, CpuFeatures::get())
    }

    /// [`PublicKey::from_components`] with n's context built for a CPU with features `f`.
    pub fn from_components_with(
        n: &BigUint,
        e: &BigUint,
        f: &CpuFeatures,
    ) -> Result<PublicKey, RsaError> {
        let bits = n.bits() as usize;
        if !matches!(bits, 2048 | 3072 | 4096) {
            return Err(RsaError::UnsupportedSize(bits));
        }
        if !n.bit(0) {
            return Err(RsaError::BadKey("even modulus"));
        }
        if e < &BigUint::from(3u8) || !e.bit(0) || e >= n {
            return Err(RsaError::BadKey(
                "public exponent must be odd, >= 3 and < n",
            ));
        }
        let err = |_| RsaError::BadKey("modulus rejected by the Montgomery context");
        let ctx = DynMontCtx::from_biguint_with(n, f).map_err(err)?;
        Ok(PublicKey {
            n: n.clone(),
            e: e.clone(),
            e_limbs: limbs(e),
            bits,
            ctx,
        })
    }

    /// From PEM: PKCS#1 (`RSA PUBLIC KEY`) or SubjectPublicKeyInfo (`PUBLIC KEY`).
    pub fn from_pem(pem: &str) -> Result<PublicKey, RsaError> {
        Self::from_pem_with(pem, CpuFeatures::get())
    }

    /// [`PublicKey::from_pem`] for a CPU with features `f`.
    pub fn from_pem_with(pem: &str, f: &CpuFeatures) -> Result<PublicKey, RsaError> {
        use rsa::pkcs1::DecodeRsaPublicKey;
        use rsa::pkcs8::DecodePublicKey;
        let k = rsa::RsaPublicKey::from_pkcs1_pem(pem)
            .or_else(|_| rsa::RsaPublicKey::from_public_key_pem(pem))
            .map_err(|e| RsaError::Parse(explain_pem(pem).unwrap_or_else(|| e.to_string())))?;
        PublicKey::from_components_with(&dig(k.n()), &dig(k.e()), f)
    }

    /// From DER: PKCS#1 or SubjectPublicKeyInfo.
    pub fn from_der(der: &[u8]) -> Result<PublicKey, RsaError> {
        Self::from_der_with(der, CpuFeatures::get())
    }

    /// [`PublicKey::from_der`] for a CPU with features `f`.
    pub fn from_der_with(der: &[u8], f: &CpuFeatures) -> Result<PublicKey, RsaError> {
        use rsa::pkcs1::DecodeRsaPublicKey;
        use rsa::pkcs8::DecodePublicKey;
        let k = rsa::RsaPublicKey::from_pkcs1_der(der)
            .or_else(|_| rsa::RsaPublicKey::from_public_key_der(der))
            .map_err(|e| RsaError::Parse(e.to_string()))?;
        PublicKey::from_components_with(&dig(k.n()), &dig(k.e()), f)
    }

    /// Modulus size in bits.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// The Montgomery kernel n's context runs.
    pub fn kernel(&self) -> Kernel {
        self.ctx.kernel()
    }

    /// Modulus size in bytes (the signature length).
    pub fn size(&self) -> usize {
        self.bits.div_ceil(8)
    }

    /// The modulus.
    pub fn n(&self) -> &BigUint {
        &self.n
    }

    /// The public exponent.
    pub fn e(&self) -> &BigUint {
        &self.e
    }

    /// s^e mod n for a big-endian s of at most [`PublicKey::size`] bytes; the result has
    /// exactly `size` bytes. Variable time (public data).
    pub fn vartime_raw(&self, s: &[u8]) -> Result<Vec<u8>, RsaError> {
        let v = BigUint::from_bytes_be(s);
        if s.len() > self.size() || v >= self.n {
            return Err(RsaError::OutOfRange);
        }
        let out = self
            .ctx
            .vartime_modpow(&U4096::from_biguint_wrapping(&v), &self.e_limbs)
            .to_be_bytes();
        // out < n has at most `size` significant bytes.
        Ok(out[out.len() - self.size()..].to_vec())
    }
}

/// (a - b) mod m for a, b < m, without a branch.
fn sub_mod<const L: usize>(a: &Uint<L>, b: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (d, borrow) = a.overflowing_sub(b);
    let (e, _) = d.overflowing_add(m);
    Uint::select(&d, &e, borrow as u64)
}

/// (a + b) mod m for a, b < m, without a branch.
fn add_mod<const L: usize>(a: &Uint<L>, b: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(m);
    // Keep s only when there was no carry and s < m.
    Uint::select(&t, &s, (borrow as u64) & !(carry as u64) & 1)
}

impl<const L: usize, const H: usize> CrtCtx<L, H> {
    fn new(p: &BigUint, q: &BigUint, d: &BigUint, f: &CpuFeatures) -> Result<Self, RsaError> {
        let one = BigUint::from(1u8);
        let bad = |_| RsaError::BadKey("prime rejected by the Montgomery context");
        let (pc, qc) = (
            MontCtx::new_with(&to_uint::<H>(p), f).map_err(bad)?,
            MontCtx::new_with(&to_uint::<H>(q), f).map_err(bad)?,
        );
        let n = p * q;
        let nc = MontCtx::new_with(&to_uint::<L>(&n), f).map_err(bad)?;
        let qinv = q
            .modinv(p)
            .ok_or(RsaError::BadKey("primes are not coprime"))?;
        let x = BigUint::from(1u8) << (64 * H);
        Ok(CrtCtx {
            n: nc,
            q_full: to_uint(q),
            dp: to_uint(&(d % (p - &one))),
            dq: to_uint(&(d % (q - &one))),
            qinv_m: pc.to_mont(&to_uint(&qinv)),
            xp_m: pc.to_mont(&to_uint(&(&x % p))),
            xq_m: qc.to_mont(&to_uint(&(&x % q))),
            p: pc,
            q: qc,
        })
    }

    /// The CRT parameters as integers.
    fn params(&self) -> CrtParams {
        let (p, q) = self.factors();
        CrtParams {
            dp: self.dp.to_biguint(),
            dq: self.dq.to_biguint(),
            qinv: self.p.from_mont(&self.qinv_m).to_biguint(),
            p,
            q,
        }
    }

    /// The prime factors (p, q).
    fn factors(&self) -> (BigUint, BigUint) {
        (self.p.modulus().to_biguint(), self.q.modulus().to_biguint())
    }

    /// m mod p in p's Montgomery form, for m < 2^(64 L), constant time.
    fn reduce(c: &MontCtx<H>, x_m: &Uint<H>, m: &Uint<L>) -> Uint<H> {
        let lo: Uint<H> = Uint(std::array::from_fn(|i| m.0[i]));
        let hi: Uint<H> = Uint(std::array::from_fn(|i| m.0[H + i]));
        let (a, b) = (c.reduce_to_mont(&lo), c.reduce_to_mont(&hi));
        add_mod(&a, &c.mul(&b, x_m), c.modulus())
    }

    /// m^d mod n by the CRT (Garner), constant time; None when m >= n.
    fn private(&self, m: &Uint<L>, e: &[u64]) -> Result<Uint<L>, RsaError> {
        let mp = Self::reduce(&self.p, &self.xp_m, m);
        let mq = Self::reduce(&self.q, &self.xq_m, m);
        // Both half-size powers at once (interleaved on one core with the IFMA kernel).
        let (sp, sq_m) = self.p.pow_ct_pair(&mp, &self.dp, &self.q, &mq, &self.dq);
        let sq = self.q.from_mont(&sq_m);
        // h = qinv (s_p - s_q) mod p, all in p's Montgomery form.
        let sq_p = self.p.reduce_to_mont(&sq);
        let h = self.p.from_mont(
            &self
                .p
                .mul(&sub_mod(&sp, &sq_p, self.p.modulus()), &self.qinv_m),
        );
        // s = s_q + q h < q + q (p - 1) = n.
        let (s, _) = self
            .q_full
            .wrapping_mul(&h.resize::<L>())
            .overflowing_add(&sq.resize::<L>());
        // Fault check before release: s^e must give m back.
        let back = self
            .n
            .from_mont(&self.n.vartime_pow(&self.n.to_mont(&s), e));
        if back != *m {
            return Err(RsaError::FaultDetected);
        }
        Ok(s)
    }
}

impl PrivateKey {
    fn from_rsa(k: &rsa::RsaPrivateKey, f: &CpuFeatures) -> Result<PrivateKey, RsaError> {
        let primes = k.primes();
        if primes.len() != 2 {
            return Err(RsaError::BadKey("only two-prime keys are supported"));
        }
        let (n, e, d) = (dig(k.n()), dig(k.e()), dig(k.d()));
        let (p, q) = (dig(&primes[0]), dig(&primes[1]));
        let public = PublicKey::from_components_with(&n, &e, f)?;
        if &p * &q != n {
            return Err(RsaError::BadKey("p q != n"));
        }
        let half = public.bits / 2;
        if p.bits() as usize > half || q.bits() as usize > half {
            return Err(RsaError::BadKey(
                "primes must be balanced (each half the modulus size)",
            ));
        }
        let one = BigUint::from(1u8);
        for pr in [&p, &q] {
            if (&e * (&d % (pr - &one))) % (pr - &one) != one {
                return Err(RsaError::BadKey("e d != 1 modulo p - 1 or q - 1"));
            }
        }
        let ctx = match public.bits {
            2048 => PrivCtx::K2048(Box::new(CrtCtx::new(&p, &q, &d, f)?)),
            3072 => PrivCtx::K3072(Box::new(CrtCtx::new(&p, &q, &d, f)?)),
            _ => PrivCtx::K4096(Box::new(CrtCtx::new(&p, &q, &d, f)?)),
        };
        Ok(PrivateKey { public, ctx })
    }

    /// From PEM: PKCS#1 (`RSA PRIVATE KEY`) or PKCS#8 (`PRIVATE KEY`).
    pub fn from_pem(pem: &str) -> Result<PrivateKey, RsaError> {
        Self::from_pem_with(pem, CpuFeatures::get())
    }

    /// [`PrivateKey::from_pem`] with the contexts built for a CPU with features `f`.
    pub fn from_pem_with(pem: &str, f: &CpuFeatures) -> Result<PrivateKey, RsaError> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let k = rsa::RsaPrivateKey::from_pkcs1_pem(pem)
            .or_else(|_| rsa::RsaPrivateKey::from_pkcs8_pem(pem))
            .map_err(|e| RsaError::Parse(explain_pem(pem).unwrap_or_else(|| e.to_string())))?;
        PrivateKey::from_rsa(&k, f)
    }

    /// From DER: PKCS#1 or PKCS#8.
    pub fn from_der(der: &[u8]) -> Result<PrivateKey, RsaError> {
        Self::from_der_with(der, CpuFeatures::get())
    }

    /// [`PrivateKey::from_der`] with the contexts built for a CPU with features `f`.
    pub fn from_der_with(der: &[u8], f: &CpuFeatures) -> Result<PrivateKey, RsaError> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let k = rsa::RsaPrivateKey::from_pkcs1_der(der)
            .or_else(|_| rsa::RsaPrivateKey::from_pkcs8_der(der))
            .map_err(|e| RsaError::Parse(e.to_string()))?;
        PrivateKey::from_rsa(&k, f)
    }

    /// The prime factors (p, q) of the modulus: secret (the accumulator's trapdoor is
    /// built from them).
    pub(crate) fn primes(&self) -> (BigUint, BigUint) {
        match &self.ctx {
            PrivCtx::K2048(c) => c.factors(),
            PrivCtx::K3072(c) => c.factors(),
            PrivCtx::K4096(c) => c.factors(),
        }
    }

    /// The CRT parameters [`PrivateKey::raw`] computes with (secret; see [`CrtParams`]).
    pub fn crt_params(&self) -> CrtParams {
        match &self.ctx {
            PrivCtx::K2048(c) => c.params(),
            PrivCtx::K3072(c) => c.params(),
            PrivCtx::K4096(c) => c.params(),
        }
    }

    /// The public half.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The Montgomery kernel the CRT contexts (modulo p and q) run.
    pub fn kernel(&self) -> Kernel {
        match &self.ctx {
            PrivCtx::K2048(c) => c.p.kernel(),
            PrivCtx::K3072(c) => c.p.kernel(),
            PrivCtx::K4096(c) => c.p.kernel(),
        }
    }

    /// The kernel the private operation's two CRT powers run (`ifma-fold`, `ifma`,
    /// `adx` or `portable`; [`wirespeed_bigint::MontCtx::pair_kernel`]).
    pub fn private_kernel(&self) -> &'static str {
        match &self.ctx {
            PrivCtx::K2048(c) => c.p.pair_kernel(),
            PrivCtx::K3072(c) => c.p.pair_kernel(),
            PrivCtx::K4096(c) => c.p.pair_kernel(),
        }
    }

    /// m^d mod n for a big-endian m < n of at most [`PublicKey::size`] bytes: CRT,
    /// constant time, fault-checked; exactly `size` bytes out.
    pub fn raw(&self, m: &[u8]) -> Result<Vec<u8>, RsaError> {
        let v = BigUint::from_bytes_be(m);
        if m.len() > self.public.size() || v >= self.public.n {
            return Err(RsaError::OutOfRange);
        }
        let e = &self.public.e_limbs;
        let out = match &self.ctx {
            PrivCtx::K2048(c) => c.private(&to_uint(&v), e)?.to_be_bytes(),
            PrivCtx::K3072(c) => c.private(&to_uint(&v), e)?.to_be_bytes(),
            PrivCtx::K4096(c) => c.private(&to_uint(&v), e)?.to_be_bytes(),
        };
        Ok(out[out.len() - self.public.size()..].to_vec())
    }
}

/// Why a PEM text that is not an RSA key is not one, in plain words, where it can be
/// told: an empty file, text that is not PEM, an encrypted key, or a key of another algorithm (by its PEM
/// label or its PKCS#8 / SubjectPublicKeyInfo algorithm). None: the parser's own error
/// says it best.
fn explain_pem(pem: &str) -> Option<String> {
    use rsa::pkcs8::{PrivateKeyInfo, SubjectPublicKeyInfoRef};
    const ENCRYPTED: &str = "encrypted keys are not supported: decrypt it first \
                             (e.g. openssl pkey -in KEY -out PLAIN.pem)";
    let text = pem.trim();
    if text.is_empty() {
        return Some("the key file is empty".into());
    }
    if !text.contains("-----BEGIN ") {
        return Some("not a PEM key file (no -----BEGIN line)".into());
    }
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Some(ENCRYPTED.into());
    }
    let (label, der) = rsa::pkcs8::der::pem::decode_vec(text.as_bytes()).ok()?;
    let oid = match label {
        "ENCRYPTED PRIVATE KEY" => return Some(ENCRYPTED.into()),
        "EC PRIVATE KEY" => return Some("not an RSA key (found an EC key)".into()),
        "DSA PRIVATE KEY" => return Some("not an RSA key (found a DSA key)".into()),
        "OPENSSH PRIVATE KEY" => {
            return Some(
                "an OpenSSH key file, not PEM: convert it (ssh-keygen -p -m PEM -f KEY)".into(),
            )
        }
        "PRIVATE KEY" => PrivateKeyInfo::try_from(der.as_slice()).ok()?.algorithm.oid,
        "PUBLIC KEY" => {
            SubjectPublicKeyInfoRef::try_from(der.as_slice())
                .ok()?
                .algorithm
                .oid
        }
        _ => return None,
    };
    let found = match oid.to_string().as_str() {
        "1.2.840.113549.1.1.1" => return None,
        "1.3.101.112" => "Ed25519".to_string(),
        "1.3.101.113" => "Ed448".to_string(),
        "1.3.101.110" => "X25519".to_string(),
        "1.3.101.111" => "X448".to_string(),
        "1.2.840.10045.2.1" => "an EC key".to_string(),
        "1.2.840.10040.4.1" => "a DSA key".to_string(),
        "1.2.840.113549.1.1.10" => "an RSASSA-PSS-only key, which is not supported".to_string(),
        other => format!("algorithm {other}"),
    };
    Some(format!("not an RSA key (found {found})"))
}

#[cfg(test)]
mod explain_tests {
    use super::explain_pem;

    #[test]
    fn foreign_keys_are_named_in_plain_words() {
        use openssl::ec::{EcGroup, EcKey};
        use openssl::nid::Nid;
        use openssl::pkey::PKey;
        let text = |b: Vec<u8>| String::from_utf8(b).expect("pem");
        let ed = PKey::generate_ed25519().expect("ed25519");
        let ed_priv = text(ed.private_key_to_pem_pkcs8().expect("pem"));
        let ed_pub = text(ed.public_key_to_pem().expect("pem"));
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("p-256");
        let ec = EcKey::generate(&group).expect("ec");
        let ec_sec1 = text(ec.private_key_to_pem().expect("pem"));
        let ec_pkcs8 = text(
            PKey::from_ec_key(ec)
                .expect("pkey")
                .private_key_to_pem_pkcs8()
                .expect("pem"),
        );
        let rsa = PKey::from_rsa(openssl::rsa::Rsa::generate(2048).expect("rsa")).expect("pkey");
        let encrypted = text(
            rsa.private_key_to_pem_pkcs8_passphrase(openssl::symm::Cipher::aes_128_cbc(), b"pw")
                .expect("pem"),
        );
        for (pem, says) in [
            (ed_priv.as_str(), "not an RSA key (found Ed25519)"),
            (ed_pub.as_str(), "not an RSA key (found Ed25519)"),
            (ec_sec1.as_str(), "not an RSA key (found an EC key)"),
            (ec_pkcs8.as_str(), "not an RSA key (found an EC key)"),
            (encrypted.as_str(), "encrypted keys are not supported"),
            ("", "the key file is empty"),
            ("  \n", "the key file is empty"),
        ] {
            let got = explain_pem(pem).unwrap_or_default();
            assert!(got.contains(says), "{says}: {got}");
        }
        // An RSA key is left to the parser's own words; text that is not PEM at all is
        // named as such (the parser speaks of a NUL byte in the preamble).
        let rsa_pem = text(rsa.private_key_to_pem_pkcs8().expect("pem"));
        assert_eq!(explain_pem(&rsa_pem), None);
        assert_eq!(
            explain_pem("hello").as_deref(),
            Some("not a PEM key file (no -----BEGIN line)")
        );
    }
}
