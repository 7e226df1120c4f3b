//! The striped keyspace's own tests.

use super::*;
use std::collections::HashSet;

fn shared(n: usize) -> Keyspace {
    Keyspace::new(
        (0..n).map(|_| Store::new()).collect(),
        1,
        0,
        Default::default(),
    )
}

#[test]
fn kept_shards_are_let_go_before_a_lower_one_is_locked() {
    let s = shared(16);
    let key = |want: &dyn Fn(usize) -> bool| {
        (0..1000u32)
            .map(|i| format!("k{i}").into_bytes())
            .find(|k| want(s.shard_of(k)))
            .unwrap_or_else(|| panic!("no key"))
    };
    let hi = key(&|i| i >= 12);
    let lo = key(&|i| i <= 3);
    let (ih, il) = (s.shard_of(&hi), s.shard_of(&lo));
    let mut k = Keys::new(&s);
    k.set(&hi, b"1".to_vec(), 0, 0);
    k.end_command();
    // Kept after its command.
    assert!(s.try_lock(ih).is_none());
    // The next command on the same shard reuses the lock.
    assert!(k.get(&hi, 0).is_some());
    k.end_command();
    // A lower shard: the kept one is let go first (no out-of-order locking).
    k.set(&lo, b"2".to_vec(), 0, 0);
    assert!(s.try_lock(ih).is_some());
    assert!(s.try_lock(il).is_none());
    k.end_command();
    k.unlock();
    assert!(s.try_lock(il).is_some());
    assert!(
        s.memory() > 0,
        "memory accounted when the shards were let go"
    );
}

#[test]
fn databases_are_apart_and_swap_whole() {
    let s = Keyspace::new(
        (0..4 * 8).map(|_| Store::new()).collect(),
        4,
        0,
        Default::default(),
    );
    let mut k = Keys::new(&s);
    for i in 0..50u32 {
        k.set(format!("a{i}").as_bytes(), vec![1; 10], 0, 0);
        k.end_command();
        k.unlock();
    }
    k.select(2);
    assert_eq!(s.max_used(), 2);
    assert!(k.is_empty());
    k.set(b"b", vec![2], 0, 0);
    k.end_command();
    k.unlock();
    let total = s.memory();
    k.swap_dbs(0, 2);
    k.end_command();
    k.unlock();
    assert_eq!(s.memory(), total, "a swap moves no memory");
    assert_eq!(k.len(), 50);
    k.end_command();
    k.unlock();
    k.select(0);
    assert_eq!(k.len(), 1);
    assert!(k.get(b"b", 0).is_some());
    k.end_command();
    k.unlock();
    assert_eq!(s.len(), 51);
    // A transaction in database 2 holds databases 0 to 2 (a SELECT inside it only
    // ever locks shards above those).
    k.select(2);
    k.lock_atomic();
    assert!((0..3 * 8).all(|i| s.try_lock(i).is_none()));
    assert!((3 * 8..4 * 8).all(|i| s.try_lock(i).is_some()));
    k.select(3);
    k.set(b"c", vec![3], 0, 0);
    k.end_command();
    k.unlock();
    assert_eq!(s.max_used(), 3);
}

#[test]
fn keys_spread_over_the_shards() {
    let s = shared(16);
    let mut per = [0usize; 16];
    for i in 0..16_000u32 {
        per[s.shard_of(format!("key:{i:012}").as_bytes())] += 1;
    }
    assert!(per.iter().all(|&n| (700..1300).contains(&n)), "{per:?}");
    assert_eq!(shared(1).shard_of(b"anything"), 0);
}

#[test]
fn memory_totals_follow_every_shard() {
    let s = shared(8);
    let mut k = Keys::new(&s);
    for i in 0..100u32 {
        k.set(format!("k{i}").as_bytes(), vec![1; 10], 0, 0);
        k.end_command();
        k.unlock();
    }
    let want: usize = (0..8).map(|i| s.lock(i).memory()).sum();
    assert_eq!(s.memory(), want);
    k.lock_keys([&b"k1"[..], b"k2", b"k3", b"k50"].into_iter());
    k.remove(b"k1");
    assert!(k.memory() < want, "the view counts its own changes");
    k.end_command();
    k.unlock();
    assert_eq!(s.memory(), want - Store::key_cost(2, 10));
    assert_eq!(k.len(), 99);
    k.end_command();
    k.unlock();
}

#[test]
fn scan_visits_every_shard_with_small_and_large_counts() {
    let s = shared(16);
    let mut k = Keys::new(&s);
    for i in 0..500u32 {
        k.set(format!("k{i}").as_bytes(), vec![1], 0, 0);
        k.end_command();
        k.unlock();
    }
    for count in [1, 7, 100, 10_000] {
        let mut seen = HashSet::new();
        let mut cursor = 0;
        let mut calls = 0;
        loop {
            cursor = k.scan(cursor, count, 0, |key, _| {
                seen.insert(key.to_vec());
            });
            k.end_command();
            k.unlock();
            calls += 1;
            if cursor == 0 {
                break;
            }
            assert!(calls < 10_000);
        }
        assert_eq!(seen.len(), 500, "count {count}");
        if count == 10_000 {
            assert_eq!(calls, 1, "one call covers every shard");
        }
    }
}
