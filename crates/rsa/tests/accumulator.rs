//! The RSA accumulator: root-factor witnesses against one num-bigint power per member,
//! verification (members, non-members, tampered witnesses), trapdoor removal against
//! accumulating the smaller set, witness updates after additions and removals, the
//! hash-to-prime, and malformed inputs.

use num_bigint::BigUint;
use openssl::rsa::Rsa;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use wirespeed_rsa::accumulator::{
    derive_base, hash_to_prime, verify_element, verify_prime, Accumulator, AccumulatorError,
    RsaGroup, Trapdoor, MAX_MEMBERS, PRIME_BITS, U256,
};
use wirespeed_rsa::PrivateKey;

fn big(b: &openssl::bn::BigNumRef) -> BigUint {
    BigUint::from_bytes_be(&b.to_vec())
}

/// A fresh RSA key of `bits` bits: (n, p, q).
fn key(bits: u32) -> (BigUint, BigUint, BigUint) {
    let k = Rsa::generate(bits).expect("keygen");
    (big(k.n()), big(k.p().expect("p")), big(k.q().expect("q")))
}

fn prime_big(x: &U256) -> BigUint {
    BigUint::from_bytes_be(&x.to_be_bytes())
}

fn elements(tag: &str, count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("{tag}-{i}").into_bytes())
        .collect()
}

/// g^(product of every prime but the i-th) mod n, with num-bigint: the one-power-per-member
/// method the root factor replaces.
fn naive_witness(n: &BigUint, g: &BigUint, primes: &[U256], i: usize) -> BigUint {
    let e = primes
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .fold(BigUint::from(1u8), |acc, (_, x)| acc * prime_big(x));
    g.modpow(&e, n)
}

/// Miller-Rabin with `rounds` random bases via num-bigint.
fn mr_oracle(n: &BigUint, rounds: usize, rng: &mut impl Rng) -> bool {
    let one = BigUint::from(1u8);
    let nm1 = n - &one;
    let s = nm1.trailing_zeros().expect("n > 1");
    let d = &nm1 >> s;
    'bases: for _ in 0..rounds {
        let mut buf = [0u8; 40];
        rng.fill(&mut buf[..]);
        let a = BigUint::from_bytes_be(&buf) % (n - 3u8) + 2u8;
        let mut x = a.modpow(&d, n);
        if x == one || x == nm1 {
            continue;
        }
        for _ in 1..s {
            x = &x * &x % n;
            if x == nm1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

#[test]
fn hash_to_prime_is_deterministic_256_bit_and_prime() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut seen = std::collections::HashSet::new();
    for e in [&b""[..], b"a", b"b", b"alice", &[0u8; 100], &[0xffu8; 1000]] {
        let x = hash_to_prime(e);
        assert_eq!(x, hash_to_prime(e), "deterministic");
        assert_eq!(x.bits(), PRIME_BITS);
        assert!(x.is_odd());
        assert!(wirespeed_bigint::prime::is_probable_prime(&x));
        assert!(mr_oracle(&prime_big(&x), 40, &mut rng), "{x:?}");
        assert!(seen.insert(x), "distinct elements, distinct primes");
    }
    // Known answers pin the construction (tag, length prefixes, counter, top and low
    // bits); computed independently from the documented recipe (counters 133, 51, 77).
    for (e, hex) in [
        (
            &b"wirespeed"[..],
            "a6f2dcfa7a33961ab75b3b4f0ab66747856d2264de75b6a5905a2483ac73bbbb",
        ),
        (
            b"",
            "96adc5f37a67caac87bb8c2b69a20435bebd5b5cc08bbcfe28e9adeb40caf91d",
        ),
        (
            b"alice",
            "c94d9b98c1d7b49f5ca592ec1bea04eee68f409add2255df0b4bcfbe6ea4e31f",
        ),
    ] {
        assert_eq!(hash_to_prime(e).to_hex(), hex);
    }
}

#[test]
fn root_factor_witnesses_match_one_power_per_member() {
    let (n, _, _) = key(1024);
    let group = RsaGroup::new(&n).expect("group");
    let g = derive_base(&n);
    assert!(g > BigUint::from(1u8) && g < n);
    for size in [1usize, 2, 3, 7, 64] {
        let mut acc = Accumulator::new(group.clone());
        assert_eq!(acc.base(), &g);
        let elems = elements(&format!("set{size}"), size);
        let primes = acc.add_batch(&elems).expect("add");
        assert_eq!(acc.len(), size);
        // A = g^(product of all primes).
        let all = primes
            .iter()
            .fold(BigUint::from(1u8), |a, x| a * prime_big(x));
        assert_eq!(acc.value(), &g.modpow(&all, &n), "size {size}");
        assert_eq!(acc.vartime_recompute_value(), *acc.value());
        let ws = acc.witnesses(&elems).expect("witnesses");
        assert_eq!(ws, acc.all_witnesses());
        let naive: Vec<BigUint> = (0..size)
            .into_par_iter()
            .map(|i| naive_witness(&n, &g, &primes, i))
            .collect();
        assert_eq!(ws, naive, "size {size}");
        for (e, w) in elems.iter().zip(&ws) {
            acc.verify(e, w).expect("member verifies");
        }
    }
}

#[test]
fn subsets_of_witnesses_in_request_order() {
    let (n, _, _) = key(1024);
    let mut acc = Accumulator::new(RsaGroup::new(&n).expect("group"));
    let elems = elements("sub", 23);
    acc.add_batch(&elems).expect("add");
    let all = acc.all_witnesses();
    let pick = [17usize, 3, 3, 22, 0];
    let req: Vec<&Vec<u8>> = pick.iter().map(|&i| &elems[i]).collect();
    let ws = acc.witnesses(&req).expect("witnesses");
    for (w, &i) in ws.iter().zip(&pick) {
        assert_eq!(*w, all[i]);
    }
    assert_eq!(
        acc.witnesses::<&[u8]>(&[]).expect("none"),
        Vec::<BigUint>::new()
    );
    // A non-member in the list is named by its position.
    let bad = [&elems[1][..], &b"stranger"[..]];
    assert_eq!(
        acc.witnesses(&bad),
        Err(AccumulatorError::NotMember { index: 1 })
    );
}

#[test]
fn non_members_and_tampered_witnesses_fail() {
    let (n, _, _) = key(1024);
    let group = RsaGroup::new(&n).expect("group");
    let mut acc = Accumulator::new(group.clone());
    let elems = elements("v", 5);
    acc.add_batch(&elems).expect("add");
    let ws = acc.all_witnesses();
    // Each witness verifies for its own element only.
    for (i, w) in ws.iter().enumerate() {
        for (j, e) in elems.iter().enumerate() {
            assert_eq!(acc.verify(e, w).is_ok(), i == j, "{i} {j}");
        }
        assert_eq!(
            acc.verify(b"not a member", w),
            Err(AccumulatorError::WitnessRejected)
        );
    }
    // The empty-set witness (g itself) does not prove anything either.
    assert!(acc.verify(b"not a member", acc.base()).is_err());
    let w = &ws[0];
    for tampered in [w + 1u8, w ^ &(BigUint::from(1u8) << 100), &n - w] {
        assert_eq!(
            acc.verify(&elems[0], &tampered),
            Err(AccumulatorError::WitnessRejected)
        );
    }
    assert_eq!(
        acc.verify(&elems[0], &(w + &n)),
        Err(AccumulatorError::WitnessOutOfRange)
    );
    // The free functions agree with the methods.
    verify_element(&group, acc.value(), &elems[0], w).expect("valid");
    verify_prime(&group, acc.value(), &hash_to_prime(&elems[0]), w).expect("valid");
    assert_eq!(
        verify_element(&group, &n, &elems[0], w),
        Err(AccumulatorError::ValueOutOfRange)
    );
    // Values 1 and n - 1 with witnesses 1 and n - 1 (x is odd): every element would pass.
    let one = BigUint::from(1u8);
    let n_minus_1 = &n - &one;
    for (value, witness) in [(&one, &one), (&n_minus_1, &n_minus_1)] {
        assert_eq!(
            verify_element(&group, value, &elems[0], witness),
            Err(AccumulatorError::ValueOutOfRange)
        );
    }
}

#[test]
fn trapdoor_removal_equals_accumulating_the_smaller_set() {
    let (n, p, q) = key(1024);
    let group = RsaGroup::new(&n).expect("group");
    let trapdoor = Trapdoor::new(&p, &q).expect("trapdoor");
    assert_eq!(trapdoor.modulus(), &n);
    assert!(!format!("{trapdoor:?}").contains(&p.to_str_radix(16)));
    let elems = elements("r", 9);
    let mut acc = Accumulator::new(group.clone());
    acc.add_batch(&elems).expect("add");
    let before = acc.all_witnesses();
    // The fast witness equals the root-factor one.
    for (e, w) in elems.iter().zip(&before) {
        assert_eq!(acc.trapdoor_witness(e, &trapdoor).expect("witness"), *w);
    }
    acc.remove(&elems[4], &trapdoor).expect("remove");
    let mut rest = elems.clone();
    rest.remove(4);
    let mut fresh = Accumulator::new(group.clone());
    fresh.add_batch(&rest).expect("add");
    assert_eq!(acc.value(), fresh.value());
    assert_eq!(acc.len(), 8);
    assert!(!acc.contains(&elems[4]));
    // The removed element's old witness no longer verifies; the others' do after the
    // update (no trapdoor), and equal the fresh root-factor witnesses.
    assert!(acc.verify(&elems[4], &before[4]).is_err());
    let removed = hash_to_prime(&elems[4]);
    for (i, e) in elems.iter().enumerate().filter(|&(i, _)| i != 4) {
        let x = hash_to_prime(e);
        assert!(acc.verify(e, &before[i]).is_err());
        let w = acc
            .update_witness_on_remove(&before[i], &x, &removed)
            .expect("update");
        acc.verify(e, &w).expect("updated witness verifies");
        assert_eq!(w, fresh.witnesses(&[e]).expect("witness")[0]);
    }
    // Typed errors: non-member, removed twice, another modulus' trapdoor.
    assert_eq!(
        acc.remove(b"stranger", &trapdoor),
        Err(AccumulatorError::NotMember { index: 0 })
    );
    assert_eq!(
        acc.remove(&elems[4], &trapdoor),
        Err(AccumulatorError::NotMember { index: 0 })
    );
    let (_, p2, q2) = key(1024);
    let other = Trapdoor::new(&p2, &q2).expect("trapdoor");
    assert_eq!(
        acc.remove(&elems[0], &other),
        Err(AccumulatorError::TrapdoorMismatch)
    );
    // Emptying the set gives the base back.
    for e in &rest {
        acc.remove(e, &trapdoor).expect("remove");
    }
    assert!(acc.is_empty());
    assert_eq!(acc.value(), acc.base());
}

#[test]
fn trapdoor_from_a_2048_bit_private_key() {
    let k = Rsa::generate(2048).expect("keygen");
    let pem = String::from_utf8(k.private_key_to_pem().expect("pem")).expect("utf8");
    let key = PrivateKey::from_pem(&pem).expect("key");
    let trapdoor = Trapdoor::from_private_key(&key).expect("trapdoor");
    let group = RsaGroup::new(key.public().n()).expect("group");
    assert_eq!(group.bits(), 2048);
    let elems = elements("k", 4);
    let mut acc = Accumulator::new(group.clone());
    acc.add_batch(&elems).expect("add");
    let w = acc.trapdoor_witness(&elems[2], &trapdoor).expect("witness");
    assert_eq!(w, acc.witnesses(&[&elems[2]]).expect("witness")[0]);
    acc.remove(&elems[2], &trapdoor).expect("remove");
    let mut fresh = Accumulator::new(group);
    fresh
        .add_batch(&[&elems[0], &elems[1], &elems[3]])
        .expect("add");
    assert_eq!(acc.value(), fresh.value());
    // Factors that are not n's factors, or not odd and distinct, are refused.
    let (p, q) = (big(k.p().expect("p")), big(k.q().expect("q")));
    assert!(matches!(
        Trapdoor::new(&p, &p),
        Err(AccumulatorError::BadTrapdoor(_))
    ));
    assert!(matches!(
        Trapdoor::new(&(&p + 1u8), &q),
        Err(AccumulatorError::BadTrapdoor(_))
    ));
    // Odd but not the factorization of n: a different modulus.
    let wrong = Trapdoor::new(&(&p + 2u8), &q).expect("shape is fine");
    assert_eq!(
        acc.trapdoor_witness(&elems[0], &wrong),
        Err(AccumulatorError::TrapdoorMismatch)
    );
}

#[test]
fn witness_update_after_add() {
    let (n, _, _) = key(1024);
    let mut acc = Accumulator::new(RsaGroup::new(&n).expect("group"));
    let first = elements("a", 6);
    acc.add_batch(&first).expect("add");
    let ws = acc.all_witnesses();
    let more = elements("b", 5);
    let added = acc.add_batch(&more).expect("add");
    for (e, w) in first.iter().zip(&ws) {
        assert!(acc.verify(e, w).is_err(), "stale witness");
        let x = hash_to_prime(e);
        let w2 = acc.update_witness_on_add(w, &x, &added).expect("update");
        acc.verify(e, &w2).expect("updated witness verifies");
        assert_eq!(w2, acc.witnesses(&[e]).expect("witness")[0]);
    }
    // A wrong witness stays wrong and is reported.
    let x = hash_to_prime(&first[0]);
    assert_eq!(
        acc.update_witness_on_add(&ws[1], &x, &added),
        Err(AccumulatorError::WitnessRejected)
    );
}

#[test]
fn duplicates_are_errors_and_change_nothing() {
    let (n, _, _) = key(1024);
    let mut acc = Accumulator::new(RsaGroup::new(&n).expect("group"));
    acc.add_batch(&elements("d", 3)).expect("add");
    let value = acc.value().clone();
    // Already a member.
    assert_eq!(
        acc.add_batch(&[&b"new"[..], &b"d-1"[..]]),
        Err(AccumulatorError::AlreadyMember { index: 1 })
    );
    // Twice in one batch.
    assert_eq!(
        acc.add_batch(&[&b"x"[..], &b"y"[..], &b"x"[..]]),
        Err(AccumulatorError::AlreadyMember { index: 2 })
    );
    assert_eq!(acc.value(), &value);
    assert_eq!(acc.len(), 3);
    assert!(!acc.contains(b"new") && !acc.contains(b"x"));
    // Adding primes directly: a composite or a short number is refused.
    let p = hash_to_prime(b"p");
    let mut composite = p;
    composite.0[0] = composite.0[0].wrapping_add(2);
    while wirespeed_bigint::prime::is_probable_prime(&composite) {
        composite.0[0] = composite.0[0].wrapping_add(2);
    }
    assert_eq!(
        acc.add_primes(&[p, composite]),
        Err(AccumulatorError::BadMember { index: 1 })
    );
    assert_eq!(
        acc.add_primes(&[U256::from_u64(65537)]),
        Err(AccumulatorError::BadMember { index: 0 })
    );
    assert_eq!(acc.value(), &value);
    // An empty batch changes nothing.
    assert_eq!(acc.add_batch::<&[u8]>(&[]), Ok(vec![]));
    assert_eq!(acc.value(), &value);
}

#[test]
fn malformed_inputs_are_errors() {
    let (n, p, _) = key(1024);
    assert_eq!(
        RsaGroup::new(&(&n + 1u8)).err(),
        Some(AccumulatorError::EvenModulus)
    );
    assert_eq!(
        RsaGroup::new(&BigUint::from(1u8 << 7 | 1)).err(),
        Some(AccumulatorError::ModulusSize { bits: 8 })
    );
    assert_eq!(
        RsaGroup::new(&((BigUint::from(1u8) << 4096) + 1u8)).err(),
        Some(AccumulatorError::ModulusSize { bits: 4097 })
    );
    assert_eq!(
        RsaGroup::new(&((BigUint::from(1u8) << 1000) + 1u8)).err(),
        Some(AccumulatorError::ModulusSize { bits: 1001 })
    );
    let group = RsaGroup::new(&n).expect("group");
    let one = BigUint::from(1u8);
    for bad in [
        BigUint::from(0u8),
        one.clone(),
        &n - &one,
        n.clone(),
        &n + 5u8,
        p.clone(),
    ] {
        assert!(matches!(
            Accumulator::with_base(group.clone(), &bad),
            Err(AccumulatorError::BadBase(_))
        ));
    }
    let g = derive_base(&n);
    let x = hash_to_prime(b"m");
    // 1 and n - 1 as well: witness 1 (or n - 1) would verify any element against them.
    for bad_value in [BigUint::from(0u8), BigUint::from(1u8), &n - &one, n.clone()] {
        assert_eq!(
            Accumulator::from_parts(group.clone(), &g, &bad_value, vec![]).err(),
            Some(AccumulatorError::ValueOutOfRange)
        );
    }
    assert_eq!(
        Accumulator::from_parts(group.clone(), &g, &g, vec![x, x]).err(),
        Some(AccumulatorError::AlreadyMember { index: 1 })
    );
    assert_eq!(
        Accumulator::from_parts(group.clone(), &g, &g, vec![x, U256::from_u64(3)]).err(),
        Some(AccumulatorError::BadMember { index: 1 })
    );
    let too_many = vec![x; MAX_MEMBERS + 1];
    assert_eq!(
        Accumulator::from_parts(group.clone(), &g, &g, too_many).err(),
        Some(AccumulatorError::TooManyMembers {
            count: MAX_MEMBERS + 1
        })
    );
    // A consistent saved state round-trips.
    let mut acc = Accumulator::new(group.clone());
    acc.add_batch(&elements("s", 4)).expect("add");
    let back = Accumulator::from_parts(
        group.clone(),
        acc.base(),
        acc.value(),
        acc.members().to_vec(),
    )
    .expect("from parts");
    assert_eq!(back.all_witnesses(), acc.all_witnesses());
    // Witnesses on an empty accumulator: every element is a non-member.
    let empty = Accumulator::new(group);
    assert_eq!(empty.value(), empty.base());
    assert_eq!(
        empty.witnesses(&[b"a"]),
        Err(AccumulatorError::NotMember { index: 0 })
    );
    assert!(empty.all_witnesses().is_empty());
    // Errors print one line.
    for e in [
        AccumulatorError::NotMember { index: 3 },
        AccumulatorError::ModulusSize { bits: 8 },
        AccumulatorError::BadBase("x"),
    ] {
        assert!(!e.to_string().contains('\n'));
    }
}
