//! The stream a Redis replica follows: the RDB snapshot ([`crate::snapshot`]), then
//! every change as the Redis commands that make it, in RESP, as a Redis primary
//! propagates them (`SELECT` whenever the database changes, a transaction as
//! `MULTI` ... `EXEC`, `PING` when nothing was sent for `repl-ping-replica-period`).
//!
//! Served to a connection that asks with SYNC (Redis's old protocol, and its test
//! suite's view of the stream) or with PSYNC without having announced `capa wirespeed`
//! in REPLCONF (a redis-server replica, `redis-cli --replica`); wirespeed replicas say
//! `capa wirespeed` and get this server's own records. The records of the backlog are
//! translated as they are copied to the connection ([`RespFeed::translate`]):
//! a string as `SET` (with `PXAT` for a deadline), a removal as `DEL`, a deadline as
//! `PEXPIREAT` or `PERSIST`, a flush as `FLUSHDB`, a collection's change as the command
//! the log records (HSET, SADD, RPUSH, ZADD, XADD, ... in Redis's syntax), SWAPDB and
//! FUNCTION as they are.
//!
//! Such a replica always syncs in full: its offsets count RESP bytes, not this
//! server's records, so a PSYNC from it never continues, and its `REPLCONF ACK`s are
//! not counted (WAIT and `min-replicas-to-write` count wirespeed replicas only).

use crate::aof::{decode, Effect};
use crate::resp::request as command;

/// What one Redis-protocol replica's stream has said so far.
#[derive(Debug, Default)]
pub struct RespFeed {
    /// The database the last `SELECT` chose (None: none yet).
    db: Option<usize>,
    /// When something was last sent, ms since the epoch.
    pub last_ms: u64,
    /// `repl-ping-replica-period` when it attached, in ms (0: no PING).
    pub ping_ms: u64,
}

impl RespFeed {
    /// A feed that PINGs every `ping_ms` (0: never) of silence, from `now_ms`.
    pub fn new(ping_ms: u64, now_ms: u64) -> RespFeed {
        RespFeed {
            db: None,
            last_ms: now_ms,
            ping_ms,
        }
    }

    /// Appends to `out` the commands the whole records in `bytes` make.
    pub fn translate(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut at = 0;
        while let Some(head) = bytes.get(at..at + 8) {
            let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
            let Some(payload) = bytes.get(at + 8..at + 8 + len) else {
                break;
            };
            if let Some(e) = decode(payload) {
                self.effect(&e, 0, out);
            }
            at += 8 + len;
        }
    }

    /// A PING when the stream has been silent for the period.
    pub fn keepalive(&mut self, now_ms: u64, out: &mut Vec<u8>) -> bool {
        if self.ping_ms == 0 || now_ms < self.last_ms + self.ping_ms {
            return false;
        }
        command(out, &[b"PING"]);
        self.last_ms = now_ms;
        true
    }

    fn select(&mut self, db: usize, out: &mut Vec<u8>) {
        if self.db != Some(db) {
            command(out, &[b"SELECT", db.to_string().as_bytes()]);
            self.db = Some(db);
        }
    }

    fn effect(&mut self, e: &Effect, db: usize, out: &mut Vec<u8>) {
        match e {
            Effect::Db { db, effect } => self.effect(effect, *db as usize, out),
            Effect::Batch(b) => {
                if let Some(first) = b.first() {
                    self.select(first.db(), out);
                }
                command(out, &[b"MULTI"]);
                for e in b {
                    self.effect(e, 0, out);
                }
                command(out, &[b"EXEC"]);
            }
            Effect::SwapDb { a, b } => command(
                out,
                &[
                    b"SWAPDB",
                    a.to_string().as_bytes(),
                    b.to_string().as_bytes(),
                ],
            ),
            Effect::Function(argv) => {
                let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                command(out, &args);
            }
            Effect::Position { .. } | Effect::GetAck => {}
            Effect::Set {
                key,
                value,
                expires_at,
            } => {
                self.select(db, out);
                if *expires_at == 0 {
                    command(out, &[b"SET", key, value]);
                } else {
                    let at = expires_at.to_string();
                    command(out, &[b"SET", key, value, b"PXAT", at.as_bytes()]);
                }
            }
            Effect::Del { key } => {
                self.select(db, out);
                command(out, &[b"DEL", key]);
            }
            Effect::Deadline { key, at } => {
                self.select(db, out);
                if *at == 0 {
                    command(out, &[b"PERSIST", key]);
                } else {
                    command(out, &[b"PEXPIREAT", key, at.to_string().as_bytes()]);
                }
            }
            Effect::Clear => {
                self.select(db, out);
                command(out, &[b"FLUSHDB"]);
            }
            Effect::Cmd(argv) => {
                self.select(db, out);
                let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                command(out, &args);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aof::encode;

    fn resp(effects: &[Effect]) -> String {
        let mut bytes = Vec::new();
        effects.iter().for_each(|e| encode(e, &mut bytes));
        let mut out = Vec::new();
        RespFeed::default().translate(&bytes, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn records_become_the_commands_redis_propagates() {
        let set = |k: &[u8], at| Effect::Set {
            key: k.to_vec(),
            value: b"v".to_vec(),
            expires_at: at,
        };
        let got = resp(&[
            set(b"a", 0),
            Effect::in_db(3, set(b"b", 1234)),
            Effect::in_db(
                3,
                Effect::Deadline {
                    key: b"b".to_vec(),
                    at: 0,
                },
            ),
            Effect::Batch(vec![
                Effect::Del { key: b"a".to_vec() },
                Effect::Cmd(vec![b"SADD".to_vec(), b"s".to_vec(), b"m".to_vec()]),
            ]),
            Effect::GetAck,
        ]);
        let want = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nv\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*5\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$4\r\n1234\r\n\
                    *2\r\n$7\r\nPERSIST\r\n$1\r\nb\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*1\r\n$5\r\nMULTI\r\n*2\r\n$3\r\nDEL\r\n$1\r\na\r\n\
                    *3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nm\r\n*1\r\n$4\r\nEXEC\r\n";
        assert_eq!(got, want);
    }

    #[test]
    fn a_silent_stream_pings_at_its_period() {
        let mut f = RespFeed::new(10_000, 1_000);
        let mut out = Vec::new();
        assert!(!f.keepalive(5_000, &mut out));
        assert!(f.keepalive(11_000, &mut out));
        assert_eq!(out, b"*1\r\n$4\r\nPING\r\n");
        assert!(!f.keepalive(12_000, &mut out));
        assert!(!RespFeed::new(0, 0).keepalive(u64::MAX / 2, &mut out));
    }
}
