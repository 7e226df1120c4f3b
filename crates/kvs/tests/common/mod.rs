//! Helpers shared by the integration tests: the server on a free port in a thread.

// Not every test binary uses every helper.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

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

/// INFO memory's `used_memory`.
pub fn info_used_memory(c: &mut redis::Connection) -> usize {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(c)
        .unwrap_or_else(|e| panic!("{e}"));
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no used_memory in {info}"))
}
