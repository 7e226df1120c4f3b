//! `Store::memory` against the heap the store really holds: a global allocator counts
//! the bytes of every live block (each rounded by `store::block`, the size-class model
//! the estimate uses), and after inserts of values from 0 bytes to 1 MiB, overwrites,
//! APPEND-style values with spare capacity, deadlines, sweeps, removals that shrink the
//! table and a clear, the store's estimate equals the live bytes it added, to the byte.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

use wirespeed_kvs::store::{block, Store, PER_KEY_OVERHEAD};

struct Counting;

/// Live heap bytes allocated by threads that [`track`], each block rounded by `block`.
static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Whether this thread's blocks are counted (the test's thread only: the harness's
    /// own threads allocate at times of their choosing).
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

fn count(delta: isize) {
    if TRACKED.with(Cell::get) {
        LIVE.fetch_add(delta, Ordering::Relaxed);
    }
}

fn track() {
    TRACKED.with(|t| t.set(true));
}

// SAFETY: forwards to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(block(l.size()) as isize);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(block(l.size()) as isize));
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count(block(n) as isize - block(l.size()) as isize);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Keys built outside the measured spans (their own blocks would count).
fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("key:{i:012}").into_bytes())
        .collect()
}

#[test]
fn memory_is_the_heap_the_store_holds() {
    track();
    let names = keys(20_000);
    let sizes = [0usize, 1, 7, 16, 100, 129, 1000, 5000, 20_000, 70_000];
    let values: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![b'v'; n]).collect();
    let base = live();
    let mut s = Store::new();
    let empty = s.memory() as isize;
    assert_eq!(live() - base, empty, "the empty table's buckets");
    let check = |s: &Store, what: &str| {
        let held = live() - base;
        assert_eq!(s.memory() as isize, held, "{what}");
        assert!(
            s.memory() >= s.payload_bytes() + s.len() * PER_KEY_OVERHEAD,
            "{what}"
        );
    };

    // Inserts of every size (the value vectors are cloned inside the span: the store
    // owns them).
    for (i, k) in names.iter().enumerate() {
        let v = values[i % sizes.len()].clone();
        s.set(k, v, 0, 0);
    }
    check(&s, "after inserts");
    // One 1 MiB value.
    s.set(b"big", vec![1; 1 << 20], 0, 0);
    check(&s, "after a 1 MiB value");
    // Overwrites with other sizes, and values with spare capacity.
    for (i, k) in names.iter().enumerate().step_by(3) {
        let mut v = Vec::with_capacity(4 * sizes[(i + 1) % sizes.len()] + 1);
        v.extend_from_slice(&values[(i + 1) % sizes.len()]);
        s.set(k, v, 0, 0);
    }
    check(&s, "after overwrites");
    for k in names.iter().step_by(7) {
        let mut v = Vec::with_capacity(64);
        v.extend_from_slice(b"appended");
        s.set_value(k, v, 0);
    }
    check(&s, "after set_value");
    // Deadlines (records for the sweep), half of them expired by the sweep.
    for (i, k) in names.iter().enumerate().step_by(2) {
        s.set_deadline(k, 100 + (i % 2) as u64 * 1_000_000 + (i % 4) as u64, 0);
    }
    check(&s, "after deadlines");
    while s.sweep(1000, 500) > 0 {}
    check(&s, "after sweeps");
    // Removals down to a few keys: the table halves.
    for k in &names[..19_900] {
        s.remove(k);
    }
    check(&s, "after removals");
    s.clear();
    check(&s, "after clear");
    assert_eq!(s.memory() as isize, empty);
}
