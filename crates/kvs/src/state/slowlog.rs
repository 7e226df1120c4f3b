//! The slow log the loops share (SLOWLOG reads it: `crate::cmd::admin`): the commands
//! that ran at least `slowlog-log-slower-than` microseconds, the newest first, at most
//! `slowlog-max-len`, with Redis's trimming of long argument lists (32 arguments, 128
//! bytes each).

use std::collections::VecDeque;
use std::sync::Mutex;

/// One slow command.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) time_secs: u64,
    pub(crate) micros: u64,
    pub(crate) argv: Vec<Vec<u8>>,
    pub(crate) addr: String,
    pub(crate) name: String,
}

/// The slow log the loops share.
#[derive(Debug, Default)]
pub struct SlowLog {
    inner: Mutex<(VecDeque<Entry>, u64)>,
}

/// Most arguments kept of one command, and bytes of one argument.
const MAX_ARGS: usize = 32;
const MAX_ARG_BYTES: usize = 128;

impl SlowLog {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, (VecDeque<Entry>, u64)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a command that took `micros` at `now` (ms since the epoch), run by the
    /// client at `addr` named `name`, keeping at most `max` entries.
    pub(crate) fn record(
        &self,
        args: &[&[u8]],
        micros: u64,
        max: usize,
        now: u64,
        (addr, name): (String, String),
    ) {
        let mut argv: Vec<Vec<u8>> = Vec::with_capacity(args.len().min(MAX_ARGS));
        // Passwords are not kept (AUTH, HELLO AUTH, ACL SETUSER, MIGRATE AUTH).
        let redact = crate::cmd::monitor::redacted(args);
        for (i, a) in args.iter().enumerate() {
            if i == MAX_ARGS - 1 && args.len() > MAX_ARGS {
                argv.push(format!("... ({} more arguments)", args.len() - i).into_bytes());
                break;
            }
            if redact(i) {
                argv.push(b"(redacted)".to_vec());
                continue;
            }
            if a.len() > MAX_ARG_BYTES {
                let mut v = a[..MAX_ARG_BYTES].to_vec();
                v.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - MAX_ARG_BYTES).as_bytes(),
                );
                argv.push(v);
            } else {
                argv.push(a.to_vec());
            }
        }
        let mut g = self.lock();
        let id = g.1;
        g.1 += 1;
        g.0.push_front(Entry {
            id,
            time_secs: now / 1000,
            micros,
            argv,
            addr,
            name,
        });
        g.0.truncate(max);
    }
}
