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
//! server's records, so a PSYNC from it never continues, and it is given an id of its
//! own for the stream ([`stream_id`]). Its `REPLCONF ACK`s are
//! counted: the feed remembers which of its RESP offsets ends which record of this
//! server's stream ([`RespFeed::acked`]), so WAIT and `min-replicas-to-write` count a
//! Redis replica as they count a wirespeed one; a WAIT's GETACK record is sent as
//! `REPLCONF GETACK *`.

use std::collections::VecDeque;

use crate::aof::{decode, Effect};
use crate::resp::request as command;

/// The replication id a Redis replica is given for this server's stream `replid`: each
/// hex digit `d` as `15 - d`, so never `replid` itself (the two streams count offsets
/// differently).
pub fn stream_id(replid: &str) -> String {
    replid
        .chars()
        .map(|c| match c.to_digit(16) {
            Some(d) => std::char::from_digit(15 - d, 16).unwrap_or(c),
            None => c,
        })
        .collect()
}

/// Marks kept between acknowledgements at most (the oldest go first: an
/// acknowledgement then counts a little less, never more).
const MAX_MARKS: usize = 4096;

/// What one Redis-protocol replica's stream has said so far.
#[derive(Debug, Default)]
pub struct RespFeed {
    /// The database the last `SELECT` chose (None: none yet).
    db: Option<usize>,
    /// When something was last sent, ms since the epoch.
    pub last_ms: u64,
    /// `repl-ping-replica-period` when it attached, in ms (0: no PING).
    pub ping_ms: u64,
    /// The replica's offset after what was sent (Redis's numbering: the offset of
    /// `+FULLRESYNC`, plus the RESP bytes since).
    resp: u64,
    /// `(resp, record)`: once the replica acknowledges `resp`, it has this server's
    /// stream up to `record`. Ascending in both.
    marks: VecDeque<(u64, u64)>,
}

impl RespFeed {
    /// A feed that PINGs every `ping_ms` (0: never) of silence, from `now_ms`, to a
    /// replica that synced at `offset`.
    pub fn new(ping_ms: u64, now_ms: u64, offset: u64) -> RespFeed {
        RespFeed {
            db: None,
            last_ms: now_ms,
            ping_ms,
            resp: offset,
            marks: VecDeque::new(),
        }
    }

    /// Appends to `out` the commands the whole records in `bytes` make; `bytes` start
    /// at offset `from` of this server's stream.
    pub fn translate(&mut self, bytes: &[u8], from: u64, out: &mut Vec<u8>) {
        let start = out.len();
        let mut at = 0;
        while let Some(head) = bytes.get(at..at + 8) {
            let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
            let Some(payload) = bytes.get(at + 8..at + 8 + len) else {
                break;
            };
            at += 8 + len;
            match decode(payload) {
                Some(Effect::GetAck) => {
                    // A replica may acknowledge before or after counting the GETACK.
                    let end = from + at as u64;
                    self.mark(self.resp + (out.len() - start) as u64, end);
                    command(out, &[b"REPLCONF", b"GETACK", b"*"]);
                    self.mark(self.resp + (out.len() - start) as u64, end);
                }
                Some(e) => self.effect(&e, 0, out),
                None => {}
            }
        }
        self.resp += (out.len() - start) as u64;
        self.mark(self.resp, from + at as u64);
    }

    fn mark(&mut self, resp: u64, record: u64) {
        if self.marks.back().is_some_and(|&(r, _)| r == resp) {
            self.marks.pop_back();
        }
        if self.marks.len() >= MAX_MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back((resp, record));
    }

    /// The offset of this server's stream that the replica's `REPLCONF ACK resp`
    /// acknowledges (None: none yet).
    pub fn acked(&mut self, resp: u64) -> Option<u64> {
        let mut got = None;
        while let Some(&(r, record)) = self.marks.front() {
            if r > resp {
                break;
            }
            got = Some(record);
            self.marks.pop_front();
        }
        if let Some(record) = got {
            // The next acknowledgement may repeat this one.
            self.marks.push_front((resp, record));
        }
        got
    }

    /// A PING when the stream has been silent for the period.
    pub fn keepalive(&mut self, now_ms: u64, out: &mut Vec<u8>) -> bool {
        if self.ping_ms == 0 || now_ms < self.last_ms + self.ping_ms {
            return false;
        }
        let start = out.len();
        command(out, &[b"PING"]);
        self.resp += (out.len() - start) as u64;
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
        RespFeed::default().translate(&bytes, 0, &mut out);
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
                    *3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nm\r\n*1\r\n$4\r\nEXEC\r\n\
                    *3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
        assert_eq!(got, want);
    }

    #[test]
    fn a_silent_stream_pings_at_its_period() {
        let mut f = RespFeed::new(10_000, 1_000, 0);
        let mut out = Vec::new();
        assert!(!f.keepalive(5_000, &mut out));
        assert!(f.keepalive(11_000, &mut out));
        assert_eq!(out, b"*1\r\n$4\r\nPING\r\n");
        assert!(!f.keepalive(12_000, &mut out));
        assert!(!RespFeed::new(0, 0, 0).keepalive(u64::MAX / 2, &mut out));
    }

    #[test]
    fn a_redis_replica_gets_an_id_of_its_own() {
        let id = crate::repl::new_replid();
        let other = stream_id(&id);
        assert_eq!(other.len(), 40);
        assert!(other.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(id.chars().zip(other.chars()).all(|(a, b)| a != b));
        assert_eq!(stream_id(&other), id);
    }

    #[test]
    fn acknowledgements_map_to_this_servers_offsets() {
        let set = |k: &[u8]| Effect::Set {
            key: k.to_vec(),
            value: b"v".to_vec(),
            expires_at: 0,
        };
        let mut bytes = Vec::new();
        encode(&set(b"a"), &mut bytes);
        let first = bytes.len() as u64;
        encode(&Effect::GetAck, &mut bytes);
        let second = bytes.len() as u64;
        // Synced at offset 100 of this server's stream and 1000 of the replica's.
        let mut f = RespFeed::new(0, 0, 1000);
        let mut out = Vec::new();
        f.translate(&bytes[..first as usize], 100, &mut out);
        let after_set = 1000 + out.len() as u64;
        assert_eq!(f.acked(999), None, "nothing acknowledged");
        assert_eq!(f.acked(after_set - 1), None, "the SET in part");
        f.translate(&bytes[first as usize..], 100 + first, &mut out);
        let getack = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n".len() as u64;
        assert_eq!(1000 + out.len() as u64, after_set + getack);
        // Acknowledged before the GETACK counts itself, and after.
        assert_eq!(f.acked(after_set), Some(100 + second));
        assert_eq!(f.acked(after_set + getack), Some(100 + second));
        assert_eq!(f.acked(after_set + getack), Some(100 + second), "again");
        // A PING moves the replica's offset, not this server's.
        let mut f2 = RespFeed::new(1, 0, 0);
        let mut o2 = Vec::new();
        f2.translate(&bytes[..first as usize], 0, &mut o2);
        assert!(f2.keepalive(10, &mut o2));
        assert_eq!(f2.acked(o2.len() as u64), Some(first));
        // Marks are bounded: an old acknowledgement counts less, never more.
        let mut f3 = RespFeed::new(0, 0, 0);
        let mut o3 = Vec::new();
        for i in 0..(MAX_MARKS as u64 + 10) {
            f3.translate(&bytes[..first as usize], i * first, &mut o3);
        }
        assert!(f3.marks.len() <= MAX_MARKS);
        let all = f3.acked(o3.len() as u64).unwrap();
        assert_eq!(all, (MAX_MARKS as u64 + 10) * first);
    }
}
