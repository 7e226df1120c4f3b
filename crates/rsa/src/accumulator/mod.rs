//! An RSA accumulator: a constant-size commitment A to a set of byte strings, with
//! membership witnesses, in the group (Z/nZ)* of an RSA modulus n whose factorization
//! nobody knows.
//!
//! Each element is hashed to a 256-bit prime x ([`hash_to_prime`]); the set
//! {x_1, ..., x_m} is committed to as A = g^(x_1 ... x_m) mod n for a base g. A witness
//! for x is w = g^(product of the other primes), and checking it is one 256-bit power:
//! w^x == A ([`Accumulator::verify`]).
//!
//! - [`Accumulator::add_batch`]: hashes the elements, multiplies their primes with a
//!   product tree, and raises A to the product: one power for the whole batch.
//! - [`Accumulator::witnesses`]: witnesses for many members at once by the root-factor
//!   method (Sander, Ta-Shma, Yung, "Blind, auditable membership proofs", FC 2000;
//!   Boneh, Bunz, Fisch, "Batching techniques for accumulators with applications to IOPs
//!   and stateless blockchains", CRYPTO 2019): for a set split into halves L and R, the
//!   witnesses of L are those of the accumulator g^(prod R) over L alone, and the
//!   witnesses of R those of g^(prod L) over R; recursing to single members gives all m
//!   witnesses with O(m log m) 256-bit exponent steps instead of the O(m^2) of one power
//!   per member. The two halves and the two recursive calls run in parallel (rayon) while
//!   a subset holds at least [`PARALLEL_MIN`] members; halves that hold no requested
//!   member are skipped.
//! - [`Accumulator::update_witness_on_add`], [`Accumulator::update_witness_on_remove`]:
//!   a member's witness after other elements were added (w^(product of the new primes))
//!   or removed (with Bezout coefficients, no trapdoor).
//! - With the trapdoor ([`Trapdoor`]: the factors p and q of n), [`Accumulator::remove`]
//!   takes x out (A' = A^(x^-1 mod lambda(n))) and [`Accumulator::trapdoor_witness`]
//!   computes one witness with a single power, whatever the size of the set.
//!
//! Set semantics: the accumulator holds a set of primes. Adding an element whose prime is
//! already a member, or that appears twice in one batch, is an error
//! ([`AccumulatorError::AlreadyMember`]) and leaves the accumulator unchanged (a batch
//! is added whole or not at all); removing or asking a witness for a non-member is
//! [`AccumulatorError::NotMember`]. Members are kept in insertion order; a removal moves
//! the last member into the freed slot.
//!
//! # Security assumptions
//!
//! - **Strong RSA assumption**: given n and a random y in (Z/nZ)*, nobody can find
//!   u and an e > 1 with u^e = y mod n. Under it, no one without the trapdoor can produce
//!   a witness for a prime that is not a member: w^x = A with x coprime to every member
//!   would give an x-th root of g (Baric, Pfitzmann, "Collision-free accumulators and
//!   fail-stop signature schemes without trees", EUROCRYPT 1997).
//! - **Unknown factorization**: the modulus must be one whose factors nobody holds, such
//!   as the RSA-2048 factoring challenge number ([`wirespeed_bigint::RSA_2048_HEX`]; RSA
//!   Laboratories, 1991; the CLI's default), or a modulus from a ceremony in which the factors were discarded. Whoever
//!   knows p and q can compute x-th roots and so forge a witness for any element: the
//!   [`Trapdoor`] operations are for the accumulator's manager only, and verifiers must
//!   not accept a modulus whose factors the manager kept unless they trust the manager.
//!   Moduli of 1024 to 4096 bits are accepted; 1024 bits is for tests only (at least 2048
//!   bits for 112-bit security).
//! - **The base**: g must not be of known small order (1, -1) nor chosen with a known
//!   root. [`derive_base`] hashes n to a number below n and squares it: a quadratic
//!   residue that nobody chose, so no one knows a root of it.
//! - **Hash to prime**: distinct elements must map to distinct primes, and no one may
//!   find a non-member whose prime divides the product of the members (for a prime: equals
//!   a member's prime). [`hash_to_prime`] behaves as a random choice among the roughly
//!   2^247 primes of 256 bits, so a collision costs about 2^124 SHA-256 evaluations (a
//!   birthday bound) and hitting a given member's prime about 2^247: primes of
//!   2 lambda = 256 bits for lambda = 128-bit security, as is usual for hashed
//!   accumulators (shorter primes make collisions, and so forged memberships, feasible).
//!   Primality is decided by Baillie-PSW ([`wirespeed_bigint::prime`]), for which no
//!   counterexample is known.
//! - **Witness order**: -1 has order 2 in (Z/nZ)*; since every x is odd, (-w)^x = -A, so
//!   a sign flip never verifies.
//!
//! # Timing
//!
//! Everything except the trapdoor operations works on public data and runs in variable
//! time (the internal powers are named `vartime_`). The trapdoor operations compute
//! x^-1 mod lambda(n) and A^(x^-1) in time independent of the trapdoor: lambda(n) mod x
//! by Montgomery arithmetic, its inverse by Fermat's little theorem modulo the public
//! prime x, the exact division by x as a multiplication by x^-1 mod 2^k, and the power
//! with [`wirespeed_bigint::MontCtx::pow_ct`]. Building a [`Trapdoor`] (lambda(n) = lcm(p - 1, q - 1), once
//! per key) uses num-bigint and is not constant time, like key loading in [`crate::key`].
//! Each trapdoor result is checked (its x-th power must give A back) before it is used.
//!
//! # Layout
//!
//! - `error`: [`AccumulatorError`];
//! - `hash`: [`hash_to_prime`] and [`derive_base`];
//! - `group`: [`RsaGroup`] (the modulus and its [`wirespeed_bigint::DynMontCtx`]) and the
//!   variable-time powers, root factor and product tree;
//! - `trapdoor`: [`Trapdoor`] and the constant-time root;
//! - this file: [`Accumulator`] and the verifiers' functions [`verify_prime`] and
//!   [`verify_element`].

use std::collections::{HashMap, HashSet};

use num_bigint::BigUint;
use rayon::prelude::*;
use wirespeed_bigint::{prime, with_width, Uint};

mod error;
mod group;
mod hash;
mod trapdoor;

pub use error::AccumulatorError;
pub use group::RsaGroup;
pub use hash::{derive_base, hash_to_prime, hash_to_prime_with};
pub use trapdoor::Trapdoor;

use group::{product_tree, vartime_check, vartime_root_factor, well_shaped};
use trapdoor::ct_root;

/// A 256-bit unsigned integer: the element primes.
pub type U256 = Uint<4>;

/// Size of every element prime in bits (the top bit is always set).
pub const PRIME_BITS: usize = 256;
/// The accepted modulus sizes in bits (`wirespeed_bigint`'s, shared with the VDF; 1024
/// is for tests: use 2048 or more).
pub use wirespeed_bigint::{MAX_MODULUS_BITS, MIN_MODULUS_BITS};
/// Most members an accumulator holds.
pub const MAX_MEMBERS: usize = 1 << 20;
/// Subsets of at least this many members split their work across rayon tasks.
pub const PARALLEL_MIN: usize = 8;

// ---------------------------------------------------------------------------------------
// The accumulator.

/// An RSA accumulator: the group, the base g, the value A = g^(product of the members)
/// and the member primes (needed to compute witnesses).
#[derive(Clone, Debug)]
pub struct Accumulator {
    group: RsaGroup,
    base: BigUint,
    value: BigUint,
    members: Vec<U256>,
    index: HashMap<U256, usize>,
}

impl Accumulator {
    /// An empty accumulator with the hashed base [`derive_base`] (A = g).
    pub fn new(group: RsaGroup) -> Accumulator {
        let base = derive_base(group.modulus());
        Accumulator {
            group,
            value: base.clone(),
            base,
            members: vec![],
            index: HashMap::new(),
        }
    }

    /// An empty accumulator with a given base: a unit other than 0, 1 and n - 1 (prefer
    /// [`Accumulator::new`]: a base with a known root breaks soundness).
    pub fn with_base(group: RsaGroup, base: &BigUint) -> Result<Accumulator, AccumulatorError> {
        group.check_base(base)?;
        Ok(Accumulator {
            group,
            value: base.clone(),
            base: base.clone(),
            members: vec![],
            index: HashMap::new(),
        })
    }

    /// Rebuilds an accumulator from saved parts. Checks the base, that the value is a
    /// number from 2 to n - 2, and that the members are distinct odd 256-bit numbers, at
    /// most [`MAX_MEMBERS`]; it does not recompute the value (one power over all members:
    /// [`Accumulator::vartime_recompute_value`]) nor test the members for primality.
    pub fn from_parts(
        group: RsaGroup,
        base: &BigUint,
        value: &BigUint,
        members: Vec<U256>,
    ) -> Result<Accumulator, AccumulatorError> {
        group.check_base(base)?;
        // 0, 1 and n - 1 are refused: with value 1 (or n - 1) the witness 1 (or n - 1)
        // raised to any odd prime gives the value back, so every element would verify.
        let n_minus_1 = group.modulus() - BigUint::from(1u8);
        if *value >= *group.modulus() || *value <= BigUint::from(1u8) || *value == n_minus_1 {
            return Err(AccumulatorError::ValueOutOfRange);
        }
        if members.len() > MAX_MEMBERS {
            return Err(AccumulatorError::TooManyMembers {
                count: members.len(),
            });
        }
        let mut index = HashMap::with_capacity(members.len());
        for (i, x) in members.iter().enumerate() {
            if !well_shaped(x) {
                return Err(AccumulatorError::BadMember { index: i });
            }
            if index.insert(*x, i).is_some() {
                return Err(AccumulatorError::AlreadyMember { index: i });
            }
        }
        Ok(Accumulator {
            group,
            base: base.clone(),
            value: value.clone(),
            members,
            index,
        })
    }

    /// The group.
    pub fn group(&self) -> &RsaGroup {
        &self.group
    }

    /// The modulus n.
    pub fn modulus(&self) -> &BigUint {
        self.group.modulus()
    }

    /// The base g.
    pub fn base(&self) -> &BigUint {
        &self.base
    }

    /// The value A = g^(product of the members) mod n: the commitment.
    pub fn value(&self) -> &BigUint {
        &self.value
    }

    /// The member primes, in insertion order (a removal moves the last one into the
    /// freed slot).
    pub fn members(&self) -> &[U256] {
        &self.members
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// True when the prime is a member.
    pub fn contains_prime(&self, x: &U256) -> bool {
        self.index.contains_key(x)
    }

    /// The prime of an element: [`hash_to_prime_with`] the group's CPU features.
    fn prime_of(&self, element: &[u8]) -> U256 {
        hash_to_prime_with(element, self.group.features())
    }

    /// True when the element (hashed to its prime) is a member.
    pub fn contains(&self, element: &[u8]) -> bool {
        self.contains_prime(&self.prime_of(element))
    }

    /// g^(product of the members), recomputed with one power (to check a loaded value).
    pub fn vartime_recompute_value(&self) -> BigUint {
        let e = product_tree(&self.members);
        self.group.vartime_pow(&self.base, &e)
    }

    /// Adds a batch of elements (hashed in parallel with [`hash_to_prime`]): A becomes
    /// A^(product of their primes), one variable-time power. Returns the primes, in
    /// batch order (for [`Accumulator::update_witness_on_add`]). An element that is
    /// already a member or repeats within the batch is an error and nothing is added.
    pub fn add_batch<E: AsRef<[u8]> + Sync>(
        &mut self,
        elements: &[E],
    ) -> Result<Vec<U256>, AccumulatorError> {
        let primes: Vec<U256> = elements
            .par_iter()
            .map(|e| self.prime_of(e.as_ref()))
            .collect();
        self.add_primes(&primes)?;
        Ok(primes)
    }

    /// Adds primes directly (each must be a 256-bit probable prime; checked with
    /// Baillie-PSW): the same as [`Accumulator::add_batch`] after hashing.
    pub fn add_primes(&mut self, primes: &[U256]) -> Result<(), AccumulatorError> {
        let count = self.members.len().saturating_add(primes.len());
        if count > MAX_MEMBERS {
            return Err(AccumulatorError::TooManyMembers { count });
        }
        let mut seen = HashSet::with_capacity(primes.len());
        for (i, x) in primes.iter().enumerate() {
            if self.index.contains_key(x) || !seen.insert(*x) {
                return Err(AccumulatorError::AlreadyMember { index: i });
            }
        }
        if let Some(i) = primes.par_iter().position_first(|x| {
            !well_shaped(x) || !prime::is_probable_prime_with(x, self.group.features())
        }) {
            return Err(AccumulatorError::BadMember { index: i });
        }
        let e = product_tree(primes);
        self.value = self.group.vartime_pow(&self.value, &e);
        for x in primes {
            self.index.insert(*x, self.members.len());
            self.members.push(*x);
        }
        Ok(())
    }

    /// Witnesses for the listed elements (each hashed to its prime), in list order, by
    /// root factor over the whole member set: subsets without a listed member are
    /// skipped, so a few witnesses cost less than all of them. A non-member is
    /// [`AccumulatorError::NotMember`] with its position in the list.
    pub fn witnesses<E: AsRef<[u8]> + Sync>(
        &self,
        elements: &[E],
    ) -> Result<Vec<BigUint>, AccumulatorError> {
        let primes: Vec<U256> = elements
            .par_iter()
            .map(|e| self.prime_of(e.as_ref()))
            .collect();
        self.witnesses_for_primes(&primes)
    }

    /// Witnesses for member primes, in list order (see [`Accumulator::witnesses`]).
    pub fn witnesses_for_primes(&self, primes: &[U256]) -> Result<Vec<BigUint>, AccumulatorError> {
        let mut want = vec![false; self.members.len()];
        let mut slots = Vec::with_capacity(primes.len());
        for (i, x) in primes.iter().enumerate() {
            let &slot = self
                .index
                .get(x)
                .ok_or(AccumulatorError::NotMember { index: i })?;
            want[slot] = true;
            slots.push(slot);
        }
        let all = self.root_factor(&want);
        Ok(slots
            .into_iter()
            .map(|s| all[s].clone().unwrap_or_default())
            .collect())
    }

    /// The witness of every member, in member order.
    pub fn all_witnesses(&self) -> Vec<BigUint> {
        self.root_factor(&vec![true; self.members.len()])
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    fn root_factor(&self, want: &[bool]) -> Vec<Option<BigUint>> {
        with_width!(self.group.ctx(), c => {
            let mut out = vec![None; self.members.len()];
            if !out.is_empty() {
                let g = c.to_mont(&Uint::from_biguint_wrapping(&self.base));
                vartime_root_factor(c, g, &self.members, want, &mut out);
            }
            out.iter()
                .map(|w| w.map(|w| c.from_mont(&w).to_biguint()))
                .collect()
        })
    }

    /// Checks a membership witness for an element: Ok when witness^x == A for the
    /// element's prime x.
    pub fn verify(&self, element: &[u8], witness: &BigUint) -> Result<(), AccumulatorError> {
        self.verify_prime(&self.prime_of(element), witness)
    }

    /// [`Accumulator::verify`] for a prime.
    pub fn verify_prime(&self, x: &U256, witness: &BigUint) -> Result<(), AccumulatorError> {
        verify_prime(&self.group, &self.value, x, witness)
    }

    /// A member's witness after `added` primes joined (this accumulator's value already
    /// includes them): witness^(product of the added primes). The result is checked
    /// against A for the member's prime `member`.
    pub fn update_witness_on_add(
        &self,
        witness: &BigUint,
        member: &U256,
        added: &[U256],
    ) -> Result<BigUint, AccumulatorError> {
        if *witness >= *self.modulus() {
            return Err(AccumulatorError::WitnessOutOfRange);
        }
        let w = self.group.vartime_pow(witness, &product_tree(added));
        self.verify_prime(member, &w)?;
        Ok(w)
    }

    /// A member's witness after another member `removed` left (this accumulator is the
    /// one after the removal, value A'; `witness` was valid before it, w^x = A = A'^y):
    /// with a x + b y = 1 (a = x^-1 mod y, b <= 0), the new witness is A'^a w^b, since
    /// (A'^a w^b)^x = A'^(a x) A'^(b y) = A'. No trapdoor needed; checked against A'.
    pub fn update_witness_on_remove(
        &self,
        witness: &BigUint,
        member: &U256,
        removed: &U256,
    ) -> Result<BigUint, AccumulatorError> {
        let n = self.modulus();
        if *witness >= *n {
            return Err(AccumulatorError::WitnessOutOfRange);
        }
        if member == removed {
            return Err(AccumulatorError::NotMember { index: 0 });
        }
        let (x, y) = (member.to_biguint(), removed.to_biguint());
        let a = x.modinv(&y).ok_or(AccumulatorError::WitnessRejected)?;
        // b = (1 - a x) / y <= 0; w^b = (w^-1)^((a x - 1) / y).
        let minus_b = (&a * &x - 1u8) / &y;
        let w_inv = witness.modinv(n).ok_or(AccumulatorError::WitnessRejected)?;
        let w =
            self.group.vartime_pow(&self.value, &a) * self.group.vartime_pow(&w_inv, &minus_b) % n;
        self.verify_prime(member, &w)?;
        Ok(w)
    }

    /// Removes an element with the trapdoor: A' = A^(x^-1 mod lambda(n)), constant time
    /// in the trapdoor, checked (A'^x == A) before it replaces A.
    pub fn remove(&mut self, element: &[u8], trapdoor: &Trapdoor) -> Result<(), AccumulatorError> {
        self.remove_prime(&self.prime_of(element), trapdoor)
    }

    /// [`Accumulator::remove`] for a member prime.
    pub fn remove_prime(&mut self, x: &U256, trapdoor: &Trapdoor) -> Result<(), AccumulatorError> {
        let &slot = self
            .index
            .get(x)
            .ok_or(AccumulatorError::NotMember { index: 0 })?;
        let root = self.trapdoor_root(x, trapdoor)?;
        self.value = root;
        self.index.remove(x);
        self.members.swap_remove(slot);
        if let Some(moved) = self.members.get(slot) {
            self.index.insert(*moved, slot);
        }
        Ok(())
    }

    /// One member's witness with the trapdoor: A^(x^-1 mod lambda(n)), a single
    /// constant-time power whatever the number of members (checked before release).
    pub fn trapdoor_witness(
        &self,
        element: &[u8],
        trapdoor: &Trapdoor,
    ) -> Result<BigUint, AccumulatorError> {
        let x = self.prime_of(element);
        if !self.contains_prime(&x) {
            return Err(AccumulatorError::NotMember { index: 0 });
        }
        self.trapdoor_root(&x, trapdoor)
    }

    /// A^(1/x) with the trapdoor, checked.
    fn trapdoor_root(&self, x: &U256, trapdoor: &Trapdoor) -> Result<BigUint, AccumulatorError> {
        if trapdoor.n != *self.modulus() {
            return Err(AccumulatorError::TrapdoorMismatch);
        }
        if !well_shaped(x) {
            return Err(AccumulatorError::NotInvertible);
        }
        let root = with_width!(self.group.ctx(), c => {
            ct_root(c, &self.value, &trapdoor.lambda, x, self.group.features())
        })
        .ok_or(AccumulatorError::NotInvertible)?;
        let ok = with_width!(self.group.ctx(), c => vartime_check(c, &root, x, &self.value));
        if !ok {
            return Err(AccumulatorError::CheckFailed);
        }
        Ok(root)
    }
}

/// Checks witness^x == value in `group`: for verifiers that hold only the modulus and the
/// accumulator value. A witness not below n is an error, and so is a value not below n
/// or one of 0, 1 and n - 1 (for which a witness of 1 or n - 1 would pass for any
/// element).
pub fn verify_prime(
    group: &RsaGroup,
    value: &BigUint,
    x: &U256,
    witness: &BigUint,
) -> Result<(), AccumulatorError> {
    let n_minus_1 = group.modulus() - BigUint::from(1u8);
    if *value >= *group.modulus() || *value <= BigUint::from(1u8) || *value == n_minus_1 {
        return Err(AccumulatorError::ValueOutOfRange);
    }
    if *witness >= *group.modulus() {
        return Err(AccumulatorError::WitnessOutOfRange);
    }
    if with_width!(group.ctx(), c => vartime_check(c, witness, x, value)) {
        Ok(())
    } else {
        Err(AccumulatorError::WitnessRejected)
    }
}

/// [`verify_prime`] for an element (hashed with [`hash_to_prime`]).
pub fn verify_element(
    group: &RsaGroup,
    value: &BigUint,
    element: &[u8],
    witness: &BigUint,
) -> Result<(), AccumulatorError> {
    verify_prime(
        group,
        value,
        &hash_to_prime_with(element, group.features()),
        witness,
    )
}
