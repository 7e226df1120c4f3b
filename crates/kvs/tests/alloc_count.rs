//! Allocations on the request path, counted by a global allocator: pipelined GETs of
//! existing keys allocate nothing per request once buffers have grown (the reply goes
//! into the connection's output buffer, the arguments are ranges of the input buffer).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use wirespeed_kvs::server::{Server, ServerConfig};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn pipelined_gets_do_not_allocate_per_request() {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    let mut server = Server::bind(addr, ServerConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    let addr = server.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let h = std::thread::spawn(move || server.run(flag));
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
    s.write_all(b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok).unwrap_or_else(|e| panic!("{e}"));
    // 1,000 GETs per batch; each reply is "$5\r\nvalue\r\n" (11 bytes).
    let get = b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
    let batch: Vec<u8> = get.iter().copied().cycle().take(get.len() * 1000).collect();
    let mut replies = vec![0u8; 11 * 1000];
    let mut round = |s: &mut TcpStream| {
        s.write_all(&batch).unwrap_or_else(|e| panic!("{e}"));
        s.read_exact(&mut replies).unwrap_or_else(|e| panic!("{e}"));
        assert!(replies.chunks(11).all(|r| r == b"$5\r\nvalue\r\n"));
    };
    // Warm up: buffers grow to their working size.
    for _ in 0..5 {
        round(&mut s);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..20 {
        round(&mut s);
    }
    let per_request = (ALLOCS.load(Ordering::Relaxed) - before) as f64 / 20_000.0;
    stop.store(true, Ordering::Relaxed);
    let _ = h.join();
    assert!(per_request < 0.01, "{per_request} allocations per GET");
}
