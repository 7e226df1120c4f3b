//! Differential tests on random and mutated inputs (100,000 in all, deterministic seeds):
//!
//! - `strict` against ed25519-dalek `verify_strict`, `zip215` against ed25519-zebra,
//!   `cofactored-strict` and `libsodium` against the reference models in `common`;
//! - `verify_many` against `verify`, one verdict (and the same error) per item: every lane
//!   backend this CPU has (AVX2, AVX-512 IFMA) on every input, `Lanes::Serial` (a loop
//!   over `verify`, so only ordering and chunking can go wrong) on the first
//!   `SERIAL_SUBSET` inputs of each seed.
//!
//! Inputs start from honest signatures and are mutated: bit flips in msg/sig/pk, R or A
//! replaced by small-order points (some re-signed so the cofactored equation holds), S
//! replaced by S + L, random keys and R, mixed-order keys and R, y >= p encodings, length
//! changes, and pairs of mutations. A disagreement is reported with its exact input.

mod common;

use common::{
    add, base_encoding, encode, expected, model_cofactored_strict, model_libsodium, mul_base,
    noncanonical_ordinary_encodings, random_scalar, sign_raw, small_order_encodings, torsion,
    Point, Scalar, L_BYTES,
};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wirespeed_ed25519::{verify, verify_many_with, Item, Lanes, Mode};

/// Inputs per test function; four functions make 100,000.
const PER_TEST: usize = 25_000;

/// Inputs per seed that also go through `verify_many` with the serial backend.
const SERIAL_SUBSET: usize = 5_000;

#[derive(Clone, Debug)]
struct Input {
    kind: &'static str,
    msg: Vec<u8>,
    sig: Vec<u8>,
    pk: Vec<u8>,
}

/// Precomputed material the generator draws from.
struct Pools {
    small: Vec<[u8; 32]>,
    noncanonical: Vec<[u8; 32]>,
    torsion: [Point; 8],
}

impl Pools {
    fn new() -> Pools {
        Pools {
            small: small_order_encodings().iter().map(|e| e.bytes).collect(),
            noncanonical: noncanonical_ordinary_encodings(),
            torsion: torsion(),
        }
    }
}

struct Gen {
    rng: ChaCha8Rng,
    pools: Pools,
    /// Honest key pairs (secret, canonical encoding), reused across inputs.
    keys: Vec<(Scalar, [u8; 32])>,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let keys = (0..64)
            .map(|_| {
                let a = random_scalar(&mut rng);
                (a, base_encoding(&a))
            })
            .collect();
        Gen {
            rng,
            pools: Pools::new(),
            keys,
        }
    }

    fn msg(&mut self) -> Vec<u8> {
        let len = match self.rng.gen_range(0..10) {
            0 => 0,
            1..=7 => self.rng.gen_range(1..64),
            _ => self.rng.gen_range(64..300),
        };
        let mut m = vec![0u8; len];
        self.rng.fill_bytes(&mut m);
        m
    }

    fn scalar(&mut self) -> Scalar {
        random_scalar(&mut self.rng)
    }

    fn bytes32(&mut self) -> [u8; 32] {
        let mut b = [0u8; 32];
        self.rng.fill_bytes(&mut b);
        b
    }

    fn small(&mut self) -> [u8; 32] {
        self.pools.small[self.rng.gen_range(0..self.pools.small.len())]
    }

    fn noncanonical(&mut self) -> [u8; 32] {
        self.pools.noncanonical[self.rng.gen_range(0..self.pools.noncanonical.len())]
    }

    /// A small-order point other than the identity.
    fn torsion_point(&mut self) -> Point {
        self.pools.torsion[self.rng.gen_range(1..8)]
    }

    fn flip(&mut self, bytes: &mut [u8]) {
        if !bytes.is_empty() {
            let bit = self.rng.gen_range(0..bytes.len() * 8);
            bytes[bit / 8] ^= 1 << (bit % 8);
        }
    }

    /// An honest key, message and signature: (secret, pk, msg, sig).
    fn honest(&mut self) -> (Scalar, [u8; 32], Vec<u8>, [u8; 64]) {
        let (a, pk) = self.keys[self.rng.gen_range(0..self.keys.len())];
        let msg = self.msg();
        let r = self.scalar();
        let sig = sign_raw(&base_encoding(&r), &pk, &r, &a, &msg);
        (a, pk, msg, sig)
    }

    /// One input: a base case, sometimes mutated twice.
    fn input(&mut self) -> Input {
        let mut inp = self.base();
        if self.rng.gen_range(0..8) == 0 {
            let second = self.mutate_bits(inp);
            inp = second;
        }
        inp
    }

    fn mutate_bits(&mut self, mut inp: Input) -> Input {
        match self.rng.gen_range(0..3) {
            0 => self.flip(&mut inp.msg),
            1 => self.flip(&mut inp.sig),
            _ => self.flip(&mut inp.pk),
        }
        inp.kind = "double mutation";
        inp
    }

    fn base(&mut self) -> Input {
        let (a, pk, mut msg, mut sig) = self.honest();
        let mut pk = pk.to_vec();
        let kind = match self.rng.gen_range(0..20) {
            0 | 1 => "valid",
            2 => {
                if msg.is_empty() {
                    msg.push(0);
                } else {
                    self.flip(&mut msg);
                }
                "msg bit flip"
            }
            3 => {
                self.flip(&mut sig[..32]);
                "R bit flip"
            }
            4 => {
                self.flip(&mut sig[32..]);
                "S bit flip"
            }
            5 => {
                self.flip(&mut pk);
                "pk bit flip"
            }
            6 => {
                // Small-order R, re-signed with nonce 0: the cofactored equation holds.
                let r = self.small();
                let s = sign_raw(&r, pk[..].try_into().unwrap(), &Scalar::ZERO, &a, &msg);
                sig = s;
                "small-order R, S = k a"
            }
            7 => {
                let r = self.small();
                sig[..32].copy_from_slice(&r);
                "small-order R substituted"
            }
            8 => {
                // Small-order A with R = [r]B, S = r: the cofactored equation holds.
                let t = self.small();
                let r = self.scalar();
                sig = sign_raw(&base_encoding(&r), &t, &r, &Scalar::ZERO, &msg);
                pk = t.to_vec();
                "small-order A, S = r"
            }
            9 => {
                pk = self.small().to_vec();
                "small-order A substituted"
            }
            10 => {
                let s: [u8; 32] = sig[32..].try_into().unwrap();
                sig[32..].copy_from_slice(&common::add_le(&s, &L_BYTES));
                "S + L"
            }
            11 => {
                pk = self.bytes32().to_vec();
                "random key"
            }
            12 => {
                let r = self.bytes32();
                sig[..32].copy_from_slice(&r);
                "random R"
            }
            13 => {
                pk = self.bytes32().to_vec();
                self.rng.fill_bytes(&mut sig);
                // Keep S below 2^252 half of the time so decoding and the equation run.
                if self.rng.gen() {
                    sig[63] &= 0x0f;
                }
                "random everything"
            }
            14 => {
                // Mixed-order key A = [a]B + T, honest signature.
                let t = self.torsion_point();
                let p = encode(&add(&mul_base(&a), &t));
                let r = self.scalar();
                sig = sign_raw(&base_encoding(&r), &p, &r, &a, &msg);
                pk = p.to_vec();
                "mixed-order A"
            }
            15 => {
                // Mixed-order R = [r]B + T.
                let t = self.torsion_point();
                let r = self.scalar();
                let rb = encode(&add(&mul_base(&r), &t));
                sig = sign_raw(&rb, pk[..].try_into().unwrap(), &r, &a, &msg);
                "mixed-order R"
            }
            16 => {
                let e = self.noncanonical();
                if self.rng.gen() {
                    pk = e.to_vec();
                    "y >= p A"
                } else {
                    sig = sign_raw(&e, pk[..].try_into().unwrap(), &Scalar::ZERO, &a, &msg);
                    "y >= p R"
                }
            }
            17 => {
                // The key's sign bit flipped: -A, which has the same y.
                pk[31] ^= 0x80;
                "negated A"
            }
            18 => {
                // Small-order A and R with S = 0: [8](-[k]A - R) = 0 whatever k is.
                let r = self.small();
                sig = [0u8; 64];
                sig[..32].copy_from_slice(&r);
                pk = self.small().to_vec();
                "small-order A and R, S = 0"
            }
            _ => {
                let mut s = sig.to_vec();
                match self.rng.gen_range(0..4) {
                    0 => {
                        s.pop();
                    }
                    1 => s.push(0),
                    2 => {
                        pk.pop();
                    }
                    _ => pk.push(0),
                }
                return Input {
                    kind: "length change",
                    msg,
                    sig: s,
                    pk,
                };
            }
        };
        Input {
            kind,
            msg,
            sig: sig.to_vec(),
            pk,
        }
    }
}

/// Runs `n` inputs from `seed`: every mode against its reference, then `verify_many` in
/// both backends against `verify`. Panics with every disagreement's input.
fn run(seed: u64, n: usize) {
    let mut g = Gen::new(seed);
    let inputs: Vec<Input> = (0..n).map(|_| g.input()).collect();

    let mut disagreements = Vec::new();
    let mut accepted = [0usize; 4];
    let mut single: [Vec<_>; 4] = Default::default();
    for (n, inp) in inputs.iter().enumerate() {
        let want = expected(&inp.msg, &inp.sig, &inp.pk);
        if n & 7 == 0 {
            // The joint model evaluation against the step-by-step ones.
            assert_eq!(
                (want[2], want[3]),
                (
                    model_cofactored_strict(&inp.msg, &inp.sig, &inp.pk),
                    model_libsodium(&inp.msg, &inp.sig, &inp.pk)
                ),
                "{inp:?}"
            );
        }
        for (i, mode) in Mode::ALL.iter().enumerate() {
            let got = verify(&inp.msg, &inp.sig, &inp.pk, *mode);
            if got.is_ok() != want[i] {
                disagreements.push(format!(
                    "{} mode {mode}: ours {got:?}, reference accepts = {}\n  msg {}\n  sig {}\n  pk  {}",
                    inp.kind,
                    want[i],
                    hex::encode(&inp.msg),
                    hex::encode(&inp.sig),
                    hex::encode(&inp.pk)
                ));
            }
            accepted[i] += want[i] as usize;
            single[i].push(got);
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements (seed {seed}):\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(20)].join("\n")
    );
    // The mix must exercise both verdicts in every mode, and the cofactored modes must
    // accept strictly more than the cofactorless ones (small-order and mixed-order cases).
    for (i, mode) in Mode::ALL.iter().enumerate() {
        assert!(
            accepted[i] > n / 20 && accepted[i] < n - n / 20,
            "{mode}: {} of {n} accepted",
            accepted[i]
        );
    }
    assert!(accepted[1] > accepted[2] && accepted[2] > accepted[0]);

    let items: Vec<Item> = inputs
        .iter()
        .map(|i| Item {
            msg: &i.msg,
            sig: &i.sig,
            pk: &i.pk,
        })
        .collect();
    let lanes: Vec<Lanes> = Lanes::CONCRETE
        .into_iter()
        .filter(|b| *b != Lanes::Serial && b.available())
        .collect();
    // Without a lane backend on this CPU, the serial backend gets every input instead.
    let serial_n = if lanes.is_empty() {
        items.len()
    } else {
        SERIAL_SUBSET.min(items.len())
    };
    let runs = lanes
        .iter()
        .map(|b| (*b, &items[..]))
        .chain(std::iter::once((Lanes::Serial, &items[..serial_n])));
    for (backend, items) in runs {
        for (mi, mode) in Mode::ALL.iter().enumerate() {
            let many =
                verify_many_with(items, *mode, backend, wirespeed_ed25519::CpuFeatures::get());
            assert_eq!(many.len(), items.len());
            for (j, (m, s)) in many.iter().zip(&single[mi]).enumerate() {
                assert_eq!(
                    m,
                    s,
                    "verify_many {backend:?} mode {mode} item {j} ({}):\n  msg {}\n  sig {}\n  pk  {}",
                    inputs[j].kind,
                    hex::encode(&inputs[j].msg),
                    hex::encode(&inputs[j].sig),
                    hex::encode(&inputs[j].pk)
                );
            }
        }
    }
}

#[test]
fn diff_peers_seed_1() {
    run(0x5eed_0001, PER_TEST);
}

#[test]
fn diff_peers_seed_2() {
    run(0x5eed_0002, PER_TEST);
}

#[test]
fn diff_peers_seed_3() {
    run(0x5eed_0003, PER_TEST);
}

#[test]
fn diff_peers_seed_4() {
    run(0x5eed_0004, PER_TEST);
}

#[test]
fn every_mutation_kind_is_generated() {
    let mut g = Gen::new(7);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..2000 {
        kinds.insert(g.input().kind);
    }
    assert!(kinds.len() >= 21, "{kinds:?}");
}
