//! Serving an event loop's other clients while one of its own clients' scripts runs
//! past the busy threshold, as Redis does: each of them gets `-BUSY` for every request,
//! except SCRIPT KILL / FUNCTION KILL (which stop a script that has not written) and
//! SHUTDOWN NOSAVE (which ends the server at once). Without this, a script on a loop
//! would keep that loop's other clients waiting, unanswered, until it ends, and a
//! script that never ends could not be stopped from them.
//!
//! How: while a loop runs a connection's requests, the connection is taken out of the
//! loop's table (boxed, so that costs a pointer move) and the table, with the inbox of
//! connections the acceptor deals to the loop, is lent to this module ([`lend`], a
//! guard that takes it back). The script's instruction hook calls [`pump`] at most
//! once a millisecond once the threshold has passed: it registers new connections,
//! reads what each other connection sent (non-blocking), answers its complete
//! requests, and writes the answers it can. It never touches the keyspace (the script
//! holds it) and runs no command; the loop reads those connections again and flushes
//! them once the script ends ([`Loan::end`] names them).
//!
//! A client that has not authenticated (the default user needs a password) gets
//! `-NOAUTH` for everything here but AUTH: SCRIPT KILL and SHUTDOWN NOSAVE are for
//! authenticated clients allowed them by their ACL user only.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::ptr::NonNull;
use std::sync::mpsc::Receiver;

use mio::net::TcpStream;
use mio::Token;

use crate::cmd::{eq, multi};
use crate::config::Config;
use crate::conn::Conn;
use crate::resp::{Limits, Writer};
use crate::server::Acceptor;
use crate::state::Shared;

/// What a lent table gives the pump.
#[derive(Clone, Copy)]
struct Lent {
    conns: NonNull<crate::conn::Conns>,
    inbox: NonNull<Receiver<(TcpStream, u64, bool)>>,
    registry: NonNull<mio::Registry>,
    /// The loop's acceptor (its lifetime erased: it outlives the loan).
    accept: Option<NonNull<Acceptor<'static>>>,
    shared: NonNull<Shared>,
    limits: Limits,
    /// When the pump last ran, ms since the epoch.
    last: u64,
}

thread_local! {
    static LENT: Cell<Option<Lent>> = const { Cell::new(None) };
    /// The connections the pump served or adopted during the loan.
    static PUMPED: RefCell<Vec<Token>> = const { RefCell::new(Vec::new()) };
}

/// The loan of a loop's connection table for the time one connection's requests run;
/// dropping it ends the loan.
#[derive(Debug)]
pub(crate) struct Loan(());

impl Drop for Loan {
    fn drop(&mut self) {
        LENT.with(|l| l.set(None));
    }
}

impl Loan {
    /// Ends the loan; the connections the pump served or adopted meanwhile (usually
    /// none).
    pub(crate) fn end(self) -> Vec<Token> {
        drop(self);
        PUMPED.with(|p| {
            let mut p = p.borrow_mut();
            if p.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut *p)
            }
        })
    }
}

/// Lends `conns` (which must not hold the connection being served), the loop's inbox
/// and its poll's registry to the pump until the returned guard drops. The caller must
/// not touch them while the guard lives.
pub(crate) fn lend(
    conns: &mut crate::conn::Conns,
    inbox: &Receiver<(TcpStream, u64, bool)>,
    registry: &mio::Registry,
    accept: Option<&Acceptor>,
    shared: &Shared,
    limits: Limits,
) -> Loan {
    LENT.with(|l| {
        l.set(Some(Lent {
            conns: NonNull::from(conns),
            inbox: NonNull::from(inbox),
            registry: NonNull::from(registry),
            accept: accept.map(|a| NonNull::from(a).cast()),
            shared: NonNull::from(shared),
            limits,
            last: 0,
        }))
    });
    Loan(())
}

/// Answers the loop's other connections (see the module note); called by a script's
/// hook once it has run past the busy threshold.
pub(crate) fn pump() {
    let Some(mut lent) = LENT.with(|l| l.take()) else {
        return;
    };
    let now = wirespeed_util::time::unix_ms();
    if now > lent.last {
        lent.last = now;
        // SAFETY: the table and the shared state were lent by `lend` from references
        // that outlive the guard, which is still alive (it clears LENT when dropped);
        // the loop does not touch the table while it is lent, the connection being
        // served is not in it, and LENT was taken out, so no other pump call holds it.
        let (conns, inbox, registry, shared) = unsafe {
            (
                lent.conns.as_mut(),
                lent.inbox.as_ref(),
                lent.registry.as_ref(),
                lent.shared.as_ref(),
            )
        };
        if let Some(a) = lent.accept {
            // SAFETY: as above: the acceptor was lent with the table and outlives it.
            let a = unsafe { a.as_ref() };
            a.accept(false);
            a.accept(true);
        }
        let mut fresh = Vec::new();
        crate::server::adopt(inbox, registry, conns, shared, &mut fresh);
        let config = shared.config().0;
        let open = config.acl.open();
        PUMPED.with(|p| {
            let mut p = p.borrow_mut();
            for (token, c) in conns.iter_mut() {
                if std::mem::take(&mut c.fresh) {
                    c.session.authed = open;
                }
                if answer(c, shared, &config, &lent.limits) && !p.contains(token) {
                    p.push(*token);
                }
            }
        });
    }
    LENT.with(|l| l.set(Some(lent)));
}

/// Reads one connection's input and answers its complete requests; true when it read
/// or wrote anything.
fn answer(c: &mut Conn, shared: &Shared, config: &Config, limits: &Limits) -> bool {
    // A blocked or paused client's later requests wait behind the one it waits on
    // (an answer now would come before that one's), and a replica's connection
    // carries the replication stream, not requests.
    if c.closing || c.killed || c.blocked.is_some() || c.paused || c.session.replica.is_some() {
        return false;
    }
    let mut active = false;
    if !c.input.ready() {
        active |= matches!(
            c.input.read_from(&mut c.sock, c.max_query_buffer),
            Ok(crate::input::Received::Bytes { .. } | crate::input::Received::End)
        );
    }
    while let Ok(Some(_)) = c.input.parse(limits, c.session.authed) {
        active = true;
        let (input, ranges) = c.input.request();
        let args: Vec<&[u8]> = ranges.iter().map(|r| &input[r.clone()]).collect();
        let mut w = Writer::new(&mut c.output, c.session.proto);
        if let Some(name) = args.first() {
            let sub = args.get(1).copied().unwrap_or_default();
            if eq(name, "auth") && (2..=3).contains(&args.len()) {
                // AUTH is served while busy, as in Redis (it may be needed for a kill).
                let (user, pass): (&[u8], &[u8]) = match args.len() {
                    2 => (b"default", args[1]),
                    _ => (args[1], args[2]),
                };
                if config.acl.authenticate(user, pass).is_some() {
                    let name = (user != b"default").then(|| std::sync::Arc::from(user));
                    crate::acl::set_user(&mut c.session, name);
                    c.session.authed = true;
                    w.simple("OK");
                } else {
                    let now = wirespeed_util::time::unix_ms();
                    let client = c.session.meta.as_ref().map(|m| m.line(now));
                    shared.acl_log.add(
                        crate::acl::Denial {
                            reason: crate::acl::Reason::Auth,
                            context: crate::acl::Context::Toplevel,
                            object: name,
                            username: user,
                            client: client.unwrap_or_default(),
                        },
                        now,
                        config.acllog_max_len,
                    );
                    w.error(crate::cmd::WRONGPASS);
                }
            } else if !c.session.authed {
                w.error("NOAUTH Authentication required.");
            } else if let Err(e) = crate::acl::permits(&config.acl, &mut c.session, &args) {
                // The commands served here are checked against the user's ACLs too.
                w.error(&e);
            } else if (eq(name, "script") || eq(name, "function")) && eq(sub, "kill") {
                let busy = &shared.scripts.busy;
                match busy.kill(eq(name, "function")) {
                    Ok(()) => w.simple("OK"),
                    Err(e) => w.error(&e),
                }
            } else if eq(name, "function") && eq(sub, "stats") && args.len() == 2 {
                crate::cmd::scripting::functions::stats(&shared.scripts, &mut w);
            } else if eq(name, "shutdown") && args[1..].iter().any(|a| eq(a, "nosave")) {
                eprintln!("kvs: SHUTDOWN NOSAVE while a script runs: exiting now");
                std::process::exit(0);
            } else if eq(name, "multi") {
                // MULTI, DISCARD and EXEC keep the transaction whole, as in Redis: a
                // transaction is started, dropped, or aborted here, never half run.
                if c.session.tx.begin() {
                    w.simple("OK");
                } else {
                    w.error(multi::MULTI_NESTED);
                }
            } else if eq(name, "discard") {
                if c.session.tx.queuing() {
                    c.session.tx.end();
                    w.simple("OK");
                } else {
                    w.error(multi::DISCARD_WITHOUT);
                }
            } else if eq(name, "exec") && c.session.tx.queuing() {
                c.session.tx.end();
                w.error(&format!(
                    "EXECABORT Transaction discarded because of: {}",
                    crate::script::busy_error(&shared.scripts.busy)
                ));
            } else {
                // Refused inside MULTI: EXEC then discards the transaction.
                c.session.tx.refuse();
                w.error(&crate::script::busy_error(&shared.scripts.busy));
            }
        }
        c.input.consume();
    }
    // Write what the socket takes now; the rest waits for the loop. Replies that wait
    // for a log record not yet written stay held (the loop sends them once it is).
    if let Some(log) = &shared.log {
        if c.wait_seq > 0 && !log.covers(c.wait_seq) {
            return active;
        }
    }
    let mut written = 0;
    while written < c.output.len() {
        match c.sock.write(&c.output[written..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => written += k,
        }
    }
    c.output.drain(..written);
    active || !c.output.is_empty()
}
