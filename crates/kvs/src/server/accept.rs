//! The listening socket, the acceptor that deals new connections to the loops, and a
//! loop's adoption of the connections dealt to it.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::mpsc::Receiver;

use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Token};

use super::{now_ms, Mailbox, FIRST_CONN};
use crate::cmd::Session;
use crate::config::Config;
use crate::conn::Conn;
use crate::input::Input;
use crate::limits::OutputWatch;
use crate::state::Shared;
use crate::tls::Sock;

/// The listening socket: SO_REUSEADDR (a restarted server binds at once, past the
/// old one's connections in TIME_WAIT), bound to `addr`, listening with a queue of
/// `backlog` connections not yet accepted (`tcp-backlog`; the kernel caps it at
/// `net.core.somaxconn`), non-blocking for the poll.
pub(super) fn listen(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(backlog.min(i32::MAX as u32) as i32)?;
    socket.set_nonblocking(true)?;
    Ok(TcpListener::from_std(socket.into()))
}

/// The kernel's cap on a listening socket's backlog (`net.core.somaxconn`), where it
/// can be read.
pub fn somaxconn() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Accepts on the first loop and deals connections round-robin.
pub(crate) struct Acceptor<'a> {
    pub(super) listener: &'a TcpListener,
    /// The TLS port's (`tls-port`), if any.
    pub(super) tls_listener: Option<&'a TcpListener>,
    pub(super) mailboxes: &'a [Mailbox],
    pub(super) next_id: &'a AtomicU64,
    pub(super) shared: &'a Shared,
}

/// Another handle on the listening socket (one per event loop).
pub(super) fn listener_copy(l: &TcpListener) -> io::Result<TcpListener> {
    use std::os::fd::AsFd;
    let fd = l.as_fd().try_clone_to_owned()?;
    Ok(TcpListener::from_std(std::net::TcpListener::from(fd)))
}

impl Acceptor<'_> {
    /// Accepts what is waiting: round-robin over the loops, passing over one whose
    /// client runs a script past the busy threshold (its new clients would wait).
    /// `tls`: on the TLS port's socket.
    pub(crate) fn accept(&self, tls: bool) {
        let loops = self.mailboxes.len();
        let listener = match (tls, self.tls_listener) {
            (false, _) => self.listener,
            (true, Some(l)) => l,
            (true, None) => return,
        };
        loop {
            match listener.accept() {
                Ok((sock, _)) => {
                    let _ = sock.set_nodelay(true);
                    let mut id = self.next_id.fetch_add(1, Ordering::Relaxed);
                    let busy = self.shared.scripts.busy_loop(&self.shared.hub);
                    // A client's loop is its id modulo the loops (the hub's routing):
                    // the next id, then, for a client the busy loop would get.
                    while loops > 1 && busy == Some(id as usize % loops) {
                        id = self.next_id.fetch_add(1, Ordering::Relaxed);
                    }
                    let i = id as usize % loops;
                    if self.mailboxes[i].send.send((sock, id, tls)).is_ok() {
                        self.shared.hub.wake(i);
                        self.shared.stats.connected(1);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A failed accept (out of descriptors, a reset) must not stop the server.
                Err(e) => {
                    eprintln!("kvs: accept failed: {e}");
                    return;
                }
            }
        }
    }
}

/// Registers the connections the acceptor dealt to this loop (`ready` gets their
/// tokens).
pub(crate) fn adopt(
    inbox: &Receiver<(TcpStream, u64, bool)>,
    registry: &mio::Registry,
    conns: &mut crate::conn::Conns,
    shared: &Shared,
    ready: &mut Vec<Token>,
) {
    while let Ok((tcp, id, tls)) = inbox.try_recv() {
        let token = Token(FIRST_CONN + id as usize);
        let sock = match (tls, &shared.tls) {
            (false, _) => Ok(Sock::plain(tcp)),
            (true, Some(t)) => Sock::tls(tcp, &t.server),
            (true, None) => Err(io::ErrorKind::Unsupported.into()),
        };
        let Ok(mut sock) = sock else {
            shared.stats.disconnected(1);
            continue;
        };
        if registry
            .register(&mut sock, token, Interest::READABLE)
            .is_err()
        {
            shared.stats.disconnected(1);
            continue;
        }
        let addr = |a: io::Result<SocketAddr>| a.map(|a| a.to_string()).unwrap_or_default();
        let meta = std::sync::Arc::new(crate::hub::ClientMeta::new(
            id,
            addr(sock.tcp().peer_addr()),
            addr(sock.tcp().local_addr()),
            now_ms(),
        ));
        shared.hub.register(meta.clone());
        conns.insert(
            token,
            Box::new(Conn {
                sock,
                input: Input::default(),
                output: Vec::new(),
                session: Session {
                    id,
                    meta: Some(meta),
                    tls,
                    ..Session::default()
                },
                closing: false,
                writable: false,
                fresh: true,
                max_query_buffer: Config::default().max_query_buffer,
                wait_seq: 0,
                watch: OutputWatch::default(),
                killed: false,
                accounted: 0,
                input_peak: 0,
                output_peak: 0,
                unread: false,
                read_round: 0,
                blocked: None,
                paused: false,
            }),
        );
        ready.push(token);
    }
}
