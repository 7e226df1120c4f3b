//! Helpers shared by the load generator's tests: a wirespeed server on a free port in a
//! thread, and memcached on a free port.

// Not every test binary uses every helper.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wirespeed_kvs::server::{Server, ServerConfig};

/// A server running in a thread, stopped and joined on drop.
pub struct Running {
    pub addr: SocketAddr,
    pub stop: Arc<AtomicBool>,
    pub handle: Option<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Binds a server on 127.0.0.1 on a free port and runs it in a thread.
pub fn start(config: ServerConfig) -> Running {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    let mut server = Server::bind(addr, config).unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = server.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let handle = std::thread::spawn(move || {
        server.run(s).unwrap_or_else(|e| panic!("run: {e}"));
    });
    Running {
        addr,
        stop,
        handle: Some(handle),
    }
}

/// memcached on a free port, killed on drop.
pub struct Memcached(pub Child, pub SocketAddr);

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts memcached on a free port and waits until it listens; `None` when it is not
/// installed.
pub fn memcached() -> Option<Memcached> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new("memcached");
    cmd.args(["-p", &port.to_string(), "-U", "0", "-l", "127.0.0.1"]);
    // memcached refuses to run as root without a user to become.
    if wirespeed_util::proc::is_root() {
        cmd.args(["-u", "root"]);
    }
    let child = match cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn() {
        Ok(c) => c,
        Err(_) => {
            // In CI (`.ci/run` installs it) a missing peer is a failure, not a skip.
            let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
            assert!(!ci, "memcached is required in CI and is missing");
            eprintln!("skipped: memcached not installed");
            return None;
        }
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut m = Memcached(child, addr);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = m.0.try_wait() {
            panic!("memcached exited: {status}");
        }
        assert!(Instant::now() < deadline, "memcached never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(m)
}
