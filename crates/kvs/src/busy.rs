//! Serving an event loop's other clients while one of its own clients' scripts runs
//! past the busy threshold, as Redis does: each of them gets `-BUSY` for every request,
//! except SCRIPT KILL / FUNCTION KILL (which stop a script that has not written) and
//! SHUTDOWN NOSAVE (which ends the server at once). Without this, a script on a loop
//! would keep that loop's other clients waiting, unanswered, until it ends, and a
//! script that never ends could not be stopped from them.
//!
//! How: while a loop runs a connection's requests, and once the server has run a
//! script (a connection that never runs scripts costs nothing more), the connection is
//! taken out of the loop's table and the table is lent to this module
//! ([`lend`], a guard that takes it back). The script's instruction hook calls [`pump`]
//! at most once a millisecond once the threshold has passed: it reads what each other
//! connection sent (non-blocking), answers its complete requests, and writes the
//! answers it can. It never touches the keyspace (the script holds it) and runs no
//! command; the loop carries on with those connections normally once the script ends.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::ptr::NonNull;

use mio::Token;

use crate::cmd::{eq, scripting};
use crate::conn::Conn;
use crate::keyspace::Shared;
use crate::resp::{Limits, Writer};

/// What a lent table gives the pump.
#[derive(Clone, Copy)]
struct Lent {
    conns: NonNull<HashMap<Token, Conn>>,
    shared: NonNull<Shared>,
    limits: Limits,
    /// When the pump last ran, ms since the epoch.
    last: u64,
}

thread_local! {
    static LENT: Cell<Option<Lent>> = const { Cell::new(None) };
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

/// Lends `conns` (which must not hold the connection being served) to the pump until
/// the returned guard drops. The caller must not touch `conns` while the guard lives.
pub(crate) fn lend(conns: &mut HashMap<Token, Conn>, shared: &Shared, limits: Limits) -> Loan {
    LENT.with(|l| {
        l.set(Some(Lent {
            conns: NonNull::from(conns),
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
    let now = crate::server::now_ms();
    if now > lent.last {
        lent.last = now;
        // SAFETY: the table and the shared state were lent by `lend` from references
        // that outlive the guard, which is still alive (it clears LENT when dropped);
        // the loop does not touch the table while it is lent, the connection being
        // served is not in it, and LENT was taken out, so no other pump call holds it.
        let (conns, shared) = unsafe { (lent.conns.as_mut(), lent.shared.as_ref()) };
        for c in conns.values_mut() {
            answer(c, shared, &lent.limits);
        }
    }
    LENT.with(|l| l.set(Some(lent)));
}

/// Reads one connection's input and answers its complete requests.
fn answer(c: &mut Conn, shared: &Shared, limits: &Limits) {
    if c.closing || c.killed {
        return;
    }
    if !c.input.ready() {
        let _ = c.input.read_from(&mut c.sock, c.max_query_buffer);
    }
    while let Ok(Some(_)) = c.input.parse(limits, c.session.authed) {
        let (input, ranges) = c.input.request();
        let args: Vec<&[u8]> = ranges.iter().map(|r| &input[r.clone()]).collect();
        let mut w = Writer::new(&mut c.output, c.session.proto);
        if let Some(name) = args.first() {
            let sub = args.get(1).copied().unwrap_or_default();
            if (eq(name, "script") || eq(name, "function")) && eq(sub, "kill") {
                let busy = &shared.scripts.busy;
                match scripting::kill_now(busy, eq(name, "function")) {
                    Ok(()) => w.simple("OK"),
                    Err(e) => w.error(e),
                }
            } else if eq(name, "shutdown") && args[1..].iter().any(|a| eq(a, "nosave")) {
                eprintln!("kvs: SHUTDOWN NOSAVE while a script runs: exiting now");
                std::process::exit(0);
            } else {
                // Refused inside MULTI: EXEC then discards the transaction.
                c.session.tx.refuse();
                w.error(&scripting::busy_error(&shared.scripts.busy));
            }
        }
        c.input.consume();
    }
    // Write what the socket takes now; the rest waits for the loop. Replies that wait
    // for a log record not yet written stay held (the loop sends them once it is).
    if let Some(log) = &shared.log {
        if c.wait_seq > 0 && !log.covers(c.wait_seq) {
            return;
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
}
