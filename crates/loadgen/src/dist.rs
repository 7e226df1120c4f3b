//! The load generator's key-space and value-size distributions ([`crate`]).
//!
//! # Keys ([`KeyDist`], drawn by [`KeySampler`])
//!
//! - [`KeyDist::Uniform`]: every key index in `0..keys` alike.
//! - [`KeyDist::Zipf`]: rank r (0-based, of n = `keys`) with probability
//!   `(r + 1)^-s / H(n, s)`, where `H(n, s) = sum over k = 1..=n of k^-s` (YCSB uses
//!   s = 0.99). The ranks are drawn by [`Zipf`] and then spread over the key space by
//!   [`Scatter`], a fixed bijection, so the hottest keys are not neighbours.
//! - [`KeyDist::Hot`]: a share of the requests goes to the first share of the key
//!   indices (the hot set), the rest to the others, uniformly within each part (the
//!   "hotspot" of YCSB and memtier).
//!
//! ## Zipf by rejection-inversion
//!
//! W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates from
//! monotone discrete distributions", ACM TOMACS 6(3), 1996; the method of Apache
//! Commons RNG's `RejectionInversionZipfSampler`. With ranks k = 1..=n, `h(x) = x^-s`
//! and its antiderivative `H(x) = (x^(1-s) - 1) / (1 - s)` (`ln x` when s = 1): draw u
//! uniformly in `(H(1.5) - 1, H(n + 0.5)]`, let `x = H^-1(u)` and k the integer nearest
//! to x (clamped to 1..=n). Rank 1 owns `(H(1.5) - 1, H(1.5)]`, of width `h(1) = 1`;
//! rank k ≥ 2 owns `(H(k - 0.5), H(k + 0.5)]`, at least `h(k)` wide since h is convex,
//! and is accepted when u falls in its last `h(k)`, i.e. `u ≥ H(k + 0.5) - h(k)`.
//! Every rank is therefore accepted with probability proportional to `h(k)`, exactly,
//! in O(1) expected time and memory whatever n. The test `k - x ≤ cut`, with
//! `cut = 2 - H^-1(H(2.5) - h(2))`, accepts most draws without evaluating H.
//! `H` and `H^-1` are computed as `ln x · expm1(t) / t` with `t = (1 - s) ln x`, and
//! `exp(y · ln1p(t) / t)` with `t = (1 - s) y`; where `|t| ≤ 1e-8` (s at or near 1)
//! the quotients come from their Taylor series, whose value at t = 0 is 1, which turns
//! the formulas into `ln x` and `exp(y)`, the case s = 1.
//!
//! # Value sizes ([`ValueSize`])
//!
//! A key's value size is a function of its index alone ([`ValueSize::of`]): a 64-bit
//! mix of the index, mapped through the distribution (a fixed size, a range with every
//! size alike, or sizes with weights). The preload and every SET therefore write the
//! same size for a key, and every GET's reply is known exactly.

use std::fmt;
use std::str::FromStr;

/// Largest value size accepted, in bytes (Redis's default `proto-max-bulk-len`).
pub const MAX_VALUE_SIZE: usize = 512 << 20;

/// Most entries in a weighted list of value sizes.
pub const MAX_SIZES: usize = 256;

/// Largest Zipf exponent accepted.
pub const MAX_ZIPF_EXPONENT: f64 = 100.0;

/// Why a distribution is refused.
#[derive(Clone, Debug, PartialEq)]
pub enum DistError {
    /// Text that is not of the form expected.
    Syntax {
        /// The text.
        text: String,
        /// What it should have been, in words.
        expected: &'static str,
    },
    /// A Zipf exponent that is not above 0 and at most [`MAX_ZIPF_EXPONENT`].
    Exponent(f64),
    /// A hot set's share of the keys that is not above 0 and below 1.
    HotKeys(f64),
    /// A hot set's share of the requests that is not between 0 and 1.
    HotRequests(f64),
    /// A value size above [`MAX_VALUE_SIZE`].
    TooLarge(usize),
    /// A range of sizes whose minimum is above its maximum.
    Range {
        /// The minimum.
        min: usize,
        /// The maximum.
        max: usize,
    },
    /// A weight that is not a positive finite number.
    Weight(f64),
    /// A weighted list with no entries, or more than [`MAX_SIZES`].
    Entries(usize),
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::Syntax { text, expected } => write!(f, "'{text}' is not {expected}"),
            DistError::Exponent(s) => write!(
                f,
                "the Zipf exponent must be above 0 and at most {MAX_ZIPF_EXPONENT}, not {s}"
            ),
            DistError::HotKeys(v) => write!(
                f,
                "the hot set's share of the keys must be above 0 and below 1, not {v}"
            ),
            DistError::HotRequests(v) => write!(
                f,
                "the hot set's share of the requests must be between 0 and 1, not {v}"
            ),
            DistError::TooLarge(n) => write!(
                f,
                "a value size of {n} bytes is above the limit of {} MiB",
                MAX_VALUE_SIZE >> 20
            ),
            DistError::Range { min, max } => write!(
                f,
                "the size range {min}-{max} is empty (its minimum is above its maximum)"
            ),
            DistError::Weight(w) => {
                write!(f, "a size's weight must be a positive number, not {w}")
            }
            DistError::Entries(n) => write!(
                f,
                "a list of sizes needs 1 to {MAX_SIZES} SIZE:WEIGHT entries, not {n}"
            ),
        }
    }
}

impl std::error::Error for DistError {}

/// How the requests pick among the key indices `0..keys` (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum KeyDist {
    /// Every key alike.
    #[default]
    Uniform,
    /// Rank r with probability proportional to `(r + 1)^-s`, ranks scattered over the
    /// keys.
    Zipf {
        /// The exponent, above 0 (0.99 in YCSB).
        s: f64,
    },
    /// Share `requests` of the requests to the first share `keys` of the key indices,
    /// the rest to the others.
    Hot {
        /// The hot set's share of the keys, above 0 and below 1.
        keys: f64,
        /// The hot set's share of the requests, 0 to 1.
        requests: f64,
    },
}

impl KeyDist {
    /// The Zipf exponent when none is given.
    pub const DEFAULT_ZIPF_EXPONENT: f64 = 0.99;

    /// Checks the parameters.
    pub fn check(&self) -> Result<(), DistError> {
        match *self {
            KeyDist::Uniform => Ok(()),
            KeyDist::Zipf { s } if s > 0.0 && s <= MAX_ZIPF_EXPONENT => Ok(()),
            KeyDist::Zipf { s } => Err(DistError::Exponent(s)),
            KeyDist::Hot { keys, .. } if !(keys > 0.0 && keys < 1.0) => {
                Err(DistError::HotKeys(keys))
            }
            KeyDist::Hot { requests, .. } if !(0.0..=1.0).contains(&requests) => {
                Err(DistError::HotRequests(requests))
            }
            KeyDist::Hot { .. } => Ok(()),
        }
    }
}

/// `uniform`, `zipf:S`, `hot:KEYFRAC:REQFRAC`: the form [`FromStr`] reads.
impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Zipf { s } => write!(f, "zipf:{s}"),
            KeyDist::Hot { keys, requests } => write!(f, "hot:{keys}:{requests}"),
        }
    }
}

const KEY_DIST_FORM: &str =
    "a key distribution: uniform, zipf, zipf:S or hot:KEYFRAC:REQFRAC (e.g. hot:0.2:0.8)";

/// Reads `uniform`, `zipf` (exponent 0.99), `zipf:S` or `hot:KEYFRAC:REQFRAC`.
impl FromStr for KeyDist {
    type Err = DistError;

    fn from_str(text: &str) -> Result<KeyDist, DistError> {
        let syntax = || DistError::Syntax {
            text: text.to_string(),
            expected: KEY_DIST_FORM,
        };
        let number = |t: &str| t.trim().parse::<f64>().map_err(|_| syntax());
        let lower = text.trim().to_ascii_lowercase();
        let parts: Vec<&str> = lower.split(':').collect();
        let dist = match parts[..] {
            ["uniform"] => KeyDist::Uniform,
            ["zipf"] => KeyDist::Zipf {
                s: KeyDist::DEFAULT_ZIPF_EXPONENT,
            },
            ["zipf", s] => KeyDist::Zipf { s: number(s)? },
            ["hot", keys, requests] => KeyDist::Hot {
                keys: number(keys)?,
                requests: number(requests)?,
            },
            _ => return Err(syntax()),
        };
        dist.check()?;
        Ok(dist)
    }
}

/// The 64-bit xorshift generator (shifts 13, 7, 17) of the load generator's request
/// mix. Not for cryptography.
#[derive(Clone, Debug)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A generator seeded with `seed` (0, which xorshift cannot leave, is replaced).
    pub fn new(seed: u64) -> XorShift64 {
        XorShift64(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `[0, 1)` (the top 53 bits of the next draw).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// `ln(1 + t) / t`, 1 at t = 0.
fn helper1(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.ln_1p() / t
    } else {
        1.0 - t * (0.5 - t * (1.0 / 3.0 - 0.25 * t))
    }
}

/// `(e^t - 1) / t`, 1 at t = 0.
fn helper2(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.exp_m1() / t
    } else {
        1.0 + t * 0.5 * (1.0 + t * (1.0 / 3.0) * (1.0 + 0.25 * t))
    }
}

/// `h(x) = x^-s`.
fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

/// `H(x) = (x^(1-s) - 1) / (1 - s)`, `ln x` when s = 1.
fn h_integral(x: f64, s: f64) -> f64 {
    let ln_x = x.ln();
    helper2((1.0 - s) * ln_x) * ln_x
}

/// The inverse of [`h_integral`].
fn h_integral_inverse(y: f64, s: f64) -> f64 {
    // (1 - s) y > -1 on the domain; rounding may step past it.
    let t = (y * (1.0 - s)).max(-1.0);
    (helper1(t) * y).exp()
}

/// The Zipf distribution over ranks `0..n` (see the module docs): rank r with
/// probability `(r + 1)^-s / H(n, s)`, drawn by rejection-inversion.
#[derive(Clone, Copy, Debug)]
pub struct Zipf {
    n: u64,
    s: f64,
    /// `H(1.5) - 1`, the low end of the draws.
    h_x1: f64,
    /// `H(n + 0.5)`, the high end of the draws.
    h_n: f64,
    /// Draws with `k - x` at most this are accepted at once.
    cut: f64,
}

impl Zipf {
    /// Ranks `0..n` (at least one) with exponent `s`.
    pub fn new(n: u64, s: f64) -> Result<Zipf, DistError> {
        KeyDist::Zipf { s }.check()?;
        let n = n.max(1);
        Ok(Zipf {
            n,
            s,
            h_x1: h_integral(1.5, s) - 1.0,
            h_n: h_integral(n as f64 + 0.5, s),
            cut: 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s),
        })
    }

    /// A rank in `0..n`, 0 the most likely.
    pub fn sample(&self, rng: &mut XorShift64) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = h_integral_inverse(u, self.s);
            // `as` saturates (and takes NaN to 0); the clamp does the rest.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.cut || u >= h_integral(kf + 0.5, self.s) - h(kf, self.s) {
                return k - 1;
            }
        }
    }
}

/// A fixed bijection on `0..n` that spreads neighbouring ranks over the whole range.
///
/// Over the smallest power of two 2^b ≥ n it applies twice an affine map
/// `x ↦ x·m + a mod 2^b` (m odd, so invertible) followed by `x ↦ x ^ (x >> ⌈b/2⌉)`
/// (invertible), a permutation of `0..2^b`; it repeats that permutation until the
/// result is below n (cycle walking). The cycle of the permutation through a start
/// below n returns to it, so the walk ends, and the result is a permutation of `0..n`;
/// it takes fewer than two steps on average, as n > 2^(b-1).
#[derive(Clone, Copy, Debug)]
pub struct Scatter {
    n: u64,
    mask: u64,
    shift: u32,
}

impl Scatter {
    /// The bijection on `0..n` (at least one element).
    pub fn new(n: u64) -> Scatter {
        let n = n.max(1);
        let bits = u64::BITS - (n - 1).leading_zeros();
        let mask = match bits {
            64 => u64::MAX,
            b => (1u64 << b) - 1,
        };
        Scatter {
            n,
            mask,
            shift: bits.div_ceil(2).max(1),
        }
    }

    /// One step of the permutation of `0..2^b`.
    fn step(&self, x: u64) -> u64 {
        let mut x = x
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(0x632b_e59b_d9b4_e019)
            & self.mask;
        x ^= x >> self.shift;
        x = x
            .wrapping_mul(0xbf58_476d_1ce4_e5b9)
            .wrapping_add(0x94d0_49bb_1331_11eb)
            & self.mask;
        x ^ (x >> self.shift)
    }

    /// The image of `i` (taken modulo n).
    pub fn apply(&self, i: u64) -> u64 {
        let mut x = i % self.n;
        loop {
            x = self.step(x);
            if x < self.n {
                return x;
            }
        }
    }
}

/// Draws key indices in `0..keys` by a [`KeyDist`].
#[derive(Clone, Copy, Debug)]
pub struct KeySampler {
    keys: u64,
    kind: SamplerKind,
}

#[derive(Clone, Copy, Debug)]
enum SamplerKind {
    Uniform,
    Zipf(Zipf, Scatter),
    /// The hot set is `0..hot`; it takes share `requests` of the requests.
    Hot {
        hot: u64,
        requests: f64,
    },
}

impl KeySampler {
    /// A sampler of `dist` over `0..keys` (at least one key). The hot set of
    /// [`KeyDist::Hot`] is the first `keys · share` indices, rounded, at least one.
    pub fn new(dist: KeyDist, keys: u64) -> Result<KeySampler, DistError> {
        dist.check()?;
        let keys = keys.max(1);
        let kind = match dist {
            KeyDist::Uniform => SamplerKind::Uniform,
            KeyDist::Zipf { s } => SamplerKind::Zipf(Zipf::new(keys, s)?, Scatter::new(keys)),
            KeyDist::Hot {
                keys: share,
                requests,
            } => SamplerKind::Hot {
                hot: ((keys as f64 * share).round() as u64).clamp(1, keys),
                requests,
            },
        };
        Ok(KeySampler { keys, kind })
    }

    /// Keys in the hot set of [`KeyDist::Hot`] (the indices below it); all keys for the
    /// other distributions.
    pub fn hot_keys(&self) -> u64 {
        match self.kind {
            SamplerKind::Hot { hot, .. } => hot,
            _ => self.keys,
        }
    }

    /// The next key index. Uniform draws take one number of `rng`: its remainder by
    /// `keys`.
    pub fn next(&self, rng: &mut XorShift64) -> u64 {
        match &self.kind {
            SamplerKind::Uniform => rng.below(self.keys),
            SamplerKind::Zipf(zipf, scatter) => scatter.apply(zipf.sample(rng)),
            SamplerKind::Hot { hot, requests } => {
                let cold = self.keys - hot;
                if cold == 0 || rng.next_f64() < *requests {
                    rng.below(*hot)
                } else {
                    hot + rng.below(cold)
                }
            }
        }
    }
}

/// The size of each key's value, a function of the key index (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum ValueSize {
    /// Every value this many bytes.
    Fixed(usize),
    /// Each size from `min` to `max` (inclusive) alike.
    Uniform {
        /// The smallest size.
        min: usize,
        /// The largest size.
        max: usize,
    },
    /// (size, weight) pairs: a size's share of the keys is its weight over the sum of
    /// the weights.
    Weighted(Vec<(usize, f64)>),
}

impl Default for ValueSize {
    /// 64 bytes.
    fn default() -> ValueSize {
        ValueSize::Fixed(64)
    }
}

/// A 64-bit mix of a key index (SplitMix64's finalizer).
fn mix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl ValueSize {
    /// Checks the sizes and weights: every size at most [`MAX_VALUE_SIZE`], a range not
    /// empty, 1 to [`MAX_SIZES`] weighted sizes with positive finite weights.
    pub fn check(&self) -> Result<(), DistError> {
        let size = |n: usize| {
            if n > MAX_VALUE_SIZE {
                Err(DistError::TooLarge(n))
            } else {
                Ok(())
            }
        };
        match self {
            ValueSize::Fixed(n) => size(*n),
            ValueSize::Uniform { min, max } => {
                size(*min)?;
                size(*max)?;
                if min > max {
                    return Err(DistError::Range {
                        min: *min,
                        max: *max,
                    });
                }
                Ok(())
            }
            ValueSize::Weighted(list) => {
                if list.is_empty() || list.len() > MAX_SIZES {
                    return Err(DistError::Entries(list.len()));
                }
                for &(n, w) in list {
                    size(n)?;
                    if !(w.is_finite() && w > 0.0) {
                        return Err(DistError::Weight(w));
                    }
                }
                Ok(())
            }
        }
    }

    /// The size of the value of key `i`. Total, also for sizes that fail
    /// [`check`](Self::check): an empty range gives `min`, an empty list 0.
    pub fn of(&self, i: u64) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Uniform { min, max } => {
                let span = max.saturating_sub(*min) as u64;
                match span.checked_add(1) {
                    Some(span) => min + (mix64(i) % span) as usize,
                    None => mix64(i) as usize,
                }
            }
            ValueSize::Weighted(list) => {
                let total: f64 = list.iter().map(|&(_, w)| w).sum();
                let mut at = (mix64(i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * total;
                for &(n, w) in list {
                    if at < w {
                        return n;
                    }
                    at -= w;
                }
                list.last().map_or(0, |&(n, _)| n)
            }
        }
    }

    /// The largest size a key can have.
    pub fn max(&self) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Uniform { min, max } => *min.max(max),
            ValueSize::Weighted(list) => list.iter().map(|&(n, _)| n).max().unwrap_or(0),
        }
    }

    /// The size of every value, when it is fixed.
    pub fn fixed(&self) -> Option<usize> {
        match self {
            ValueSize::Fixed(n) => Some(*n),
            _ => None,
        }
    }
}

/// `N`, `MIN-MAX` or `SIZE:WEIGHT,...`: the form [`FromStr`] reads.
impl fmt::Display for ValueSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSize::Fixed(n) => write!(f, "{n}"),
            ValueSize::Uniform { min, max } => write!(f, "{min}-{max}"),
            ValueSize::Weighted(list) => {
                for (j, (n, w)) in list.iter().enumerate() {
                    let comma = if j > 0 { "," } else { "" };
                    write!(f, "{comma}{n}:{w}")?;
                }
                Ok(())
            }
        }
    }
}

const VALUE_SIZE_FORM: &str =
    "a value size: bytes N, a range MIN-MAX, or a list SIZE:WEIGHT,... (e.g. 64:0.7,1024:0.3)";

/// Reads bytes `N`, a range `MIN-MAX` (inclusive), or weighted sizes
/// `SIZE:WEIGHT,SIZE:WEIGHT,...` (weights relative, need not sum to 1).
impl FromStr for ValueSize {
    type Err = DistError;

    fn from_str(text: &str) -> Result<ValueSize, DistError> {
        let syntax = || DistError::Syntax {
            text: text.to_string(),
            expected: VALUE_SIZE_FORM,
        };
        let bytes = |t: &str| t.trim().parse::<usize>().map_err(|_| syntax());
        let t = text.trim();
        let sizes = if t.contains([':', ',']) {
            let list = t
                .split(',')
                .map(|entry| {
                    let (n, w) = entry.split_once(':').ok_or_else(syntax)?;
                    let w = w.trim().parse::<f64>().map_err(|_| syntax())?;
                    Ok((bytes(n)?, w))
                })
                .collect::<Result<Vec<_>, DistError>>()?;
            ValueSize::Weighted(list)
        } else if let Some((min, max)) = t.split_once('-') {
            ValueSize::Uniform {
                min: bytes(min)?,
                max: bytes(max)?,
            }
        } else {
            ValueSize::Fixed(bytes(t)?)
        };
        sizes.check()?;
        Ok(sizes)
    }
}
