//! Time-lock puzzles (Rivest, Shamir, Wagner, "Time-lock puzzles and timed-release
//! crypto", 1996): a message locked so that opening it takes T sequential squarings.
//!
//! - [`create`]: knowing p and q, compute w = a^(2^T) mod N fast through phi(N), derive
//!   a key from w and encrypt (ChaCha20-Poly1305). p and q are dropped afterwards.
//! - [`solve`]: T squarings (the VDF evaluation, resumable through [`crate::resume`]).
//! - [`open`]: decrypt with the key derived from w; a wrong w fails authentication.
//! - [`Lcs35`]: the published form of Rivest's LCS35 puzzle, (n, t, z) in decimal, whose
//!   secret is z XOR w with a = 2.
//!
//! The trapdoor: w = a^e mod N with e = 2^T mod phi(N), computed as w_p = a^(e_p) mod p,
//! w_q likewise, and CRT. Montgomery needs odd moduli, so e_p = 2^T mod (p - 1) is found
//! by writing p - 1 = 2^s m (m odd): for T >= s, e_p = 2^s (2^(T - s) mod m). The powers
//! with secret exponents and the primality tests on secret candidates use the
//! constant-time [`MontCtx::pow_ct`].

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};
use wirespeed_bigint::{CpuFeatures, MontCtx, Uint};

use crate::modulus::Modulus;
use crate::{eval, EvalOptions, VdfError, U4096};

/// The largest message a puzzle carries (bounded before any allocation when decoding).
pub const MAX_MESSAGE: usize = 1 << 20;

/// A time-lock puzzle: whoever squares a T times modulo N can open the ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Puzzle {
    /// N = p q (factors discarded).
    pub modulus: Modulus,
    /// The base a.
    pub base: U4096,
    /// T.
    pub t: u64,
    /// The AEAD nonce.
    pub nonce: [u8; 12],
    /// ChaCha20-Poly1305 ciphertext of the message (with its 16-byte tag).
    pub ciphertext: Vec<u8>,
}

/// Why a puzzle cannot be created, solved or opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelockError {
    /// Unsupported size (N of 1024 or 2048 bits are created).
    Bits(usize),
    /// A message longer than [`MAX_MESSAGE`].
    MessageTooLong(usize),
    /// The evaluation refused its inputs.
    Vdf(VdfError),
    /// Decryption failed: wrong solution or a damaged puzzle.
    WrongSolution,
    /// A malformed puzzle or LCS35 text (one line).
    Malformed(String),
}

impl std::fmt::Display for TimelockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimelockError::Bits(b) => write!(
                f,
                "puzzles are created with 1024 or 2048-bit moduli, not {b}"
            ),
            TimelockError::MessageTooLong(n) => {
                write!(f, "message has {n} bytes; at most {MAX_MESSAGE}")
            }
            TimelockError::Vdf(e) => write!(f, "{e}"),
            TimelockError::WrongSolution => f.write_str("the solution does not open this puzzle"),
            TimelockError::Malformed(m) => write!(f, "malformed puzzle: {m}"),
        }
    }
}

impl std::error::Error for TimelockError {}

impl From<VdfError> for TimelockError {
    fn from(e: VdfError) -> Self {
        TimelockError::Vdf(e)
    }
}

/// First primes for trial division (all below 2^16).
fn small_primes() -> Vec<u64> {
    let mut sieve = vec![true; 1 << 16];
    let mut out = vec![];
    for i in 3..sieve.len() {
        if sieve[i] {
            out.push(i as u64);
            let mut j = i * i;
            while j < sieve.len() {
                sieve[j] = false;
                j += i;
            }
        }
    }
    out
}

/// Miller-Rabin with `rounds` random bases, constant time in the candidate's value.
fn is_probable_prime<const H: usize>(
    n: &Uint<H>,
    rounds: usize,
    rng: &mut dyn RngCore,
    f: &CpuFeatures,
) -> bool {
    let Ok(ctx) = MontCtx::new_with(n, f) else {
        return false;
    };
    let (nm1, _) = n.overflowing_sub(&Uint::ONE);
    let s = (0..Uint::<H>::BITS).find(|&i| nm1.bit(i)).unwrap_or(0);
    let d = nm1.shr(s);
    let one = ctx.one();
    let minus_one = ctx.to_mont(&nm1);
    for _ in 0..rounds {
        let mut a = [0u64; H];
        for l in a.iter_mut() {
            *l = rng.next_u64();
        }
        a[H - 1] >>= 2; // a < n (n has its top bit set)
        let a = Uint(a);
        if a.bits() < 2 {
            continue;
        }
        let mut x = ctx.pow_ct(&ctx.to_mont(&a), &d);
        if x == one || x == minus_one {
            continue;
        }
        let mut composite = true;
        for _ in 1..s {
            x = ctx.sqr(&x);
            if x == minus_one {
                composite = false;
                break;
            }
        }
        if composite {
            return false;
        }
    }
    true
}

/// A random prime of exactly 64 H bits (top two bits set, so products have 128 H bits).
fn random_prime<const H: usize>(rng: &mut dyn RngCore, f: &CpuFeatures) -> Uint<H> {
    let primes = small_primes();
    loop {
        let mut l = [0u64; H];
        for x in l.iter_mut() {
            *x = rng.next_u64();
        }
        l[H - 1] |= 3 << 62;
        l[0] |= 1;
        let c = Uint(l);
        if primes.iter().any(|&p| c.rem_u64(p) == 0) {
            continue;
        }
        if is_probable_prime(&c, 40, rng, f) {
            return c;
        }
    }
}

/// 2^T mod (p - 1) for an odd prime p (see the module docs).
fn two_pow_mod_pminus1<const H: usize>(p: &Uint<H>, t: u64, f: &CpuFeatures) -> Uint<H> {
    let (pm1, _) = p.overflowing_sub(&Uint::ONE);
    let s = (0..Uint::<H>::BITS).find(|&i| pm1.bit(i)).unwrap_or(0) as u64;
    if t < s {
        let mut e = Uint::ZERO;
        e.0[(t / 64) as usize] = 1 << (t % 64);
        return e;
    }
    let m = pm1.shr(s as usize);
    let mut e = if m == Uint::ONE {
        Uint::ZERO
    } else {
        // m is odd: 2^(T - s) mod m with Montgomery arithmetic modulo m.
        let Ok(ctx) = MontCtx::new_with(&m, f) else {
            return Uint::ZERO;
        };
        let two = ctx.to_mont(&Uint::from_u64(2));
        ctx.from_mont(&ctx.pow_ct(&two, &Uint::<1>::from_u64(t - s).resize::<H>()))
    };
    for _ in 0..s {
        e = e.shl1().0;
    }
    e
}

/// w = a^(2^T) mod N = p q with the trapdoor, via CRT. H: limbs of p and q; L = 2 H.
fn trapdoor<const H: usize, const L: usize>(
    p: &Uint<H>,
    q: &Uint<H>,
    a: &Uint<L>,
    t: u64,
    f: &CpuFeatures,
) -> Option<Uint<L>> {
    let cp = MontCtx::new_with(p, f).ok()?;
    let cq = MontCtx::new_with(q, f).ok()?;
    let wp = cp.from_mont(&cp.pow_ct(
        &cp.reduce_to_mont(&reduce_wide::<H, L>(a, &cp)),
        &two_pow_mod_pminus1(p, t, f),
    ));
    let wq = cq.from_mont(&cq.pow_ct(
        &cq.reduce_to_mont(&reduce_wide::<H, L>(a, &cq)),
        &two_pow_mod_pminus1(q, t, f),
    ));
    // h = (w_p - w_q) q^-1 mod p, q^-1 = q^(p-2) mod p.
    let (pm2, _) = p.overflowing_sub(&Uint::from_u64(2));
    let qinv = cp.pow_ct(&cp.reduce_to_mont(q), &pm2);
    let wq_p = cp.reduce_to_mont(&wq);
    let diff = sub_mod(&cp.to_mont(&wp), &wq_p, p);
    let h = cp.from_mont(&cp.mul(&diff, &qinv));
    // w = w_q + q h <= (q - 1) + q (p - 1) < N: exact in 2H limbs.
    let (w, _) = mul_wide::<H, L>(q, &h).overflowing_add(&wq.resize());
    Some(w)
}

/// a mod p for a of L limbs and p of H limbs (a < 2^(64 L)): folds the high limbs with
/// Montgomery arithmetic modulo p.
fn reduce_wide<const H: usize, const L: usize>(a: &Uint<L>, ctx: &MontCtx<H>) -> Uint<H> {
    // a = sum_i a_i 2^(64 H i) over H-limb chunks; Horner with R = 2^(64 H), whose
    // Montgomery form is R^2 mod p = reduce_to_mont(R mod p).
    let mut acc = Uint::ZERO;
    let r = ctx.reduce_to_mont(&ctx.one());
    for chunk in (0..L.div_ceil(H)).rev() {
        let mut c = [0u64; H];
        for i in 0..H {
            if chunk * H + i < L {
                c[i] = a.0[chunk * H + i];
            }
        }
        acc = add_mod(
            &ctx.mul(&acc, &r),
            &ctx.reduce_to_mont(&Uint(c)),
            ctx.modulus(),
        );
    }
    ctx.from_mont(&acc)
}

fn add_mod<const H: usize>(a: &Uint<H>, b: &Uint<H>, n: &Uint<H>) -> Uint<H> {
    let (s, carry) = a.overflowing_add(b);
    let (d, borrow) = s.overflowing_sub(n);
    Uint::select(&s, &d, (carry || !borrow) as u64)
}

fn sub_mod<const H: usize>(a: &Uint<H>, b: &Uint<H>, n: &Uint<H>) -> Uint<H> {
    let (d, borrow) = a.overflowing_sub(b);
    let (e, _) = d.overflowing_add(n);
    Uint::select(&d, &e, borrow as u64)
}

/// Full product of two H-limb values into L = 2H limbs.
fn mul_wide<const H: usize, const L: usize>(a: &Uint<H>, b: &Uint<H>) -> Uint<L> {
    let mut r = [0u64; L];
    for i in 0..H {
        let mut c = 0u128;
        for j in 0..H {
            let t = r[i + j] as u128 + a.0[i] as u128 * b.0[j] as u128 + c;
            r[i + j] = t as u64;
            c = t >> 64;
        }
        r[i + H] = c as u64;
    }
    Uint(r)
}

/// The AEAD key for a solution w (domain-separated hash of N, a, T and w).
fn key(p: &Puzzle, w: &U4096) -> [u8; 32] {
    let m = p.modulus.byte_len();
    let fixed = |v: &U4096| v.to_be_bytes()[512 - m..].to_vec();
    let mut h = Sha256::new();
    h.update(b"wirespeed timelock v1");
    h.update(fixed(p.modulus.value()));
    h.update(fixed(&p.base));
    h.update(p.t.to_be_bytes());
    h.update(fixed(w));
    h.finalize().into()
}

/// Creates a puzzle for `message` that takes `t` squarings modulo a fresh `bits`-bit N
/// (1024 or 2048). Returns the puzzle and w (for tests; the creator may discard it).
pub fn create(
    bits: usize,
    t: u64,
    message: &[u8],
    rng: &mut dyn RngCore,
) -> Result<(Puzzle, U4096), TimelockError> {
    create_with(bits, t, message, rng, CpuFeatures::get())
}

/// [`create`] with every Montgomery context (the prime tests, the trapdoor, N's) built
/// for a CPU with features `f`.
pub fn create_with(
    bits: usize,
    t: u64,
    message: &[u8],
    rng: &mut dyn RngCore,
    f: &CpuFeatures,
) -> Result<(Puzzle, U4096), TimelockError> {
    if message.len() > MAX_MESSAGE {
        return Err(TimelockError::MessageTooLong(message.len()));
    }
    crate::eval::check_delay(t)?;
    let a = U4096::from_u64(2);
    let (n, w) = match bits {
        1024 => make::<8, 16>(t, rng, f),
        2048 => make::<16, 32>(t, rng, f),
        b => return Err(TimelockError::Bits(b)),
    }
    .ok_or_else(|| TimelockError::Malformed("prime generation failed".into()))?;
    let modulus = Modulus::new_with(&n, f)?;
    let mut nonce = [0u8; 12];
    rng.fill_bytes(&mut nonce);
    let mut puzzle = Puzzle {
        modulus,
        base: a,
        t,
        nonce,
        ciphertext: vec![],
    };
    let cipher = ChaCha20Poly1305::new(Key::from_slice(&key(&puzzle, &w)));
    puzzle.ciphertext = cipher
        .encrypt(Nonce::from_slice(&nonce), message)
        .map_err(|_| TimelockError::Malformed("encryption failed".into()))?;
    Ok((puzzle, w))
}

fn make<const H: usize, const L: usize>(
    t: u64,
    rng: &mut dyn RngCore,
    f: &CpuFeatures,
) -> Option<(U4096, U4096)> {
    let p = random_prime::<H>(rng, f);
    let mut q = random_prime::<H>(rng, f);
    while q == p {
        q = random_prime::<H>(rng, f);
    }
    let n: Uint<L> = mul_wide(&p, &q);
    let w = trapdoor::<H, L>(&p, &q, &Uint::from_u64(2), t, f)?;
    Some((n.resize(), w.resize()))
}

/// Solves a puzzle the slow way: w = a^(2^T) mod N by T squarings.
pub fn solve(p: &Puzzle, opts: &EvalOptions<'_>) -> Result<U4096, TimelockError> {
    Ok(eval(&p.modulus, &p.base, p.t, opts)?.y)
}

/// Opens a puzzle with its solution w.
pub fn open(p: &Puzzle, w: &U4096) -> Result<Vec<u8>, TimelockError> {
    let cipher = ChaCha20Poly1305::new(Key::from_slice(&key(p, w)));
    cipher
        .decrypt(Nonce::from_slice(&p.nonce), p.ciphertext.as_slice())
        .map_err(|_| TimelockError::WrongSolution)
}

/// A puzzle in the published form of Rivest's LCS35: decimal n, t and z, with the secret
/// s = z XOR w, w = 2^(2^t) mod n.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lcs35 {
    /// n.
    pub modulus: Modulus,
    /// t.
    pub t: u64,
    /// z.
    pub z: U4096,
}

/// `v * 10 + d`, or None on overflow.
fn mul10_add(v: &U4096, d: u64) -> Option<U4096> {
    let mut out = [0u64; 64];
    let mut carry = d as u128;
    for i in 0..64 {
        let t = v.0[i] as u128 * 10 + carry;
        out[i] = t as u64;
        carry = t >> 64;
    }
    (carry == 0).then_some(Uint(out))
}

/// Parses a non-negative decimal integer (digits only; at most 1,300 of them).
pub fn parse_decimal(s: &str) -> Option<U4096> {
    if s.is_empty() || s.len() > 1300 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.bytes()
        .try_fold(U4096::ZERO, |v, b| mul10_add(&v, (b - b'0') as u64))
}

/// Decimal digits of v.
pub fn to_decimal(v: &U4096) -> String {
    let mut v = *v;
    let mut chunks = vec![];
    const BASE: u64 = 10_000_000_000_000_000_000;
    loop {
        let mut rem = 0u128;
        for i in (0..64).rev() {
            let cur = (rem << 64) | v.0[i] as u128;
            v.0[i] = (cur / BASE as u128) as u64;
            rem = cur % BASE as u128;
        }
        chunks.push(rem as u64);
        if v.is_zero() {
            break;
        }
    }
    let mut s = chunks.last().map(|c| c.to_string()).unwrap_or_default();
    for c in chunks.iter().rev().skip(1) {
        s.push_str(&format!("{c:019}"));
    }
    s
}

impl Lcs35 {
    /// Parses `n = ...`, `t = ...`, `z = ...` (decimal; a number may span lines and
    /// contain spaces; other text is ignored). The text is bounded before parsing.
    pub fn parse(text: &str) -> Result<Lcs35, TimelockError> {
        Self::parse_with(text, CpuFeatures::get())
    }

    /// [`Lcs35::parse`] with n's context built for a CPU with features `f`.
    pub fn parse_with(text: &str, f: &CpuFeatures) -> Result<Lcs35, TimelockError> {
        if text.len() > 64 * 1024 {
            return Err(TimelockError::Malformed(
                "LCS35 text longer than 64 KiB".into(),
            ));
        }
        let field = |name: &str| -> Result<String, TimelockError> {
            let missing =
                || TimelockError::Malformed(format!("no '{name} =' with a decimal number"));
            let mut rest = text;
            loop {
                let i = rest.find(name).ok_or_else(missing)?;
                let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
                let after = rest[i + name.len()..].trim_start();
                if before_ok && after.starts_with('=') {
                    let digits: String = after[1..]
                        .chars()
                        .take_while(|c| c.is_ascii_digit() || c.is_whitespace())
                        .filter(|c| c.is_ascii_digit())
                        .collect();
                    return if digits.is_empty() {
                        Err(missing())
                    } else {
                        Ok(digits)
                    };
                }
                rest = &rest[i + name.len()..];
            }
        };
        let n = parse_decimal(&field("n")?).ok_or_else(|| {
            TimelockError::Malformed("n is not a decimal number below 2^4096".into())
        })?;
        let t: u64 = field("t")?
            .parse()
            .map_err(|_| TimelockError::Malformed("t is not a 64-bit number".into()))?;
        let z = parse_decimal(&field("z")?).ok_or_else(|| {
            TimelockError::Malformed("z is not a decimal number below 2^4096".into())
        })?;
        Ok(Lcs35 {
            modulus: Modulus::new_with(&n, f)?,
            t,
            z,
        })
    }

    /// The text form (`n = ...`, `t = ...`, `z = ...`, decimal).
    pub fn to_text(&self) -> String {
        format!(
            "n = {}\nt = {}\nz = {}\n",
            to_decimal(self.modulus.value()),
            self.t,
            to_decimal(&self.z)
        )
    }

    /// The secret for a solution w: z XOR w.
    pub fn secret(&self, w: &U4096) -> U4096 {
        let mut s = self.z;
        for (a, b) in s.0.iter_mut().zip(w.0.iter()) {
            *a ^= b;
        }
        s
    }

    /// Solves by t squarings of 2 and returns the secret.
    pub fn solve(&self, opts: &EvalOptions<'_>) -> Result<U4096, TimelockError> {
        let w = eval(&self.modulus, &U4096::from_u64(2), self.t, opts)?.y;
        Ok(self.secret(&w))
    }

    /// Creates an LCS35-form puzzle for `secret` (fresh N of `bits` bits, trapdoor).
    pub fn create(
        bits: usize,
        t: u64,
        secret: &U4096,
        rng: &mut dyn RngCore,
    ) -> Result<Lcs35, TimelockError> {
        Self::create_with(bits, t, secret, rng, CpuFeatures::get())
    }

    /// [`Lcs35::create`] for a CPU with features `f`.
    pub fn create_with(
        bits: usize,
        t: u64,
        secret: &U4096,
        rng: &mut dyn RngCore,
        f: &CpuFeatures,
    ) -> Result<Lcs35, TimelockError> {
        let (p, w) = create_with(bits, t, b"", rng, f)?;
        let mut l = Lcs35 {
            modulus: p.modulus,
            t,
            z: *secret,
        };
        l.z = l.secret(&w);
        Ok(l)
    }
}

impl Puzzle {
    /// JSON: `{"modulus": hex, "base": hex, "t": number, "nonce": hex, "ciphertext": hex}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "modulus": self.modulus.value().to_hex(),
            "base": self.base.to_hex(),
            "t": self.t,
            "nonce": hex_bytes(&self.nonce),
            "ciphertext": hex_bytes(&self.ciphertext),
        })
        .to_string()
    }

    /// Strict decoding: every field present and well formed, the text and ciphertext
    /// bounded, base in 2..N-1, T in range.
    pub fn from_json(s: &str) -> Result<Puzzle, TimelockError> {
        Self::from_json_with(s, CpuFeatures::get())
    }

    /// [`Puzzle::from_json`] with N's context built for a CPU with features `f`.
    pub fn from_json_with(s: &str, f: &CpuFeatures) -> Result<Puzzle, TimelockError> {
        let bad = |m: &str| TimelockError::Malformed(m.to_string());
        if s.len() > 3 * MAX_MESSAGE {
            return Err(bad("puzzle text too long"));
        }
        let v: serde_json::Value =
            serde_json::from_str(s).map_err(|e| TimelockError::Malformed(e.to_string()))?;
        let o = v.as_object().ok_or_else(|| bad("not a JSON object"))?;
        if o.len() != 5 {
            return Err(bad("expected exactly modulus, base, t, nonce, ciphertext"));
        }
        let text = |k: &str| {
            o.get(k)
                .and_then(|v| v.as_str())
                .ok_or_else(|| TimelockError::Malformed(format!("'{k}' missing or not a string")))
        };
        let big = |k: &str| {
            U4096::from_hex(text(k)?).map_err(|e| TimelockError::Malformed(format!("'{k}': {e}")))
        };
        let modulus = Modulus::new_with(&big("modulus")?, f)?;
        let base = big("base")?;
        modulus.check_input(&base)?;
        let t = o
            .get("t")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| bad("'t' missing or not a number"))?;
        crate::eval::check_delay(t)?;
        let nonce: [u8; 12] = unhex(text("nonce")?)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("'nonce' must be 12 bytes of hex"))?;
        let ciphertext =
            unhex(text("ciphertext")?).ok_or_else(|| bad("'ciphertext' is not hex"))?;
        if ciphertext.len() < 16 || ciphertext.len() > MAX_MESSAGE + 16 {
            return Err(bad("ciphertext length out of range"));
        }
        Ok(Puzzle {
            modulus,
            base,
            t,
            nonce,
            ciphertext,
        })
    }
}

fn hex_bytes(b: &[u8]) -> String {
    wirespeed_util::hex::encode(b)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    wirespeed_util::hex::decode(s).ok()
}
