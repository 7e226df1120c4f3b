//! From records to the keyspace and back: [`apply`] replays one record into a store,
//! [`dump`] gives the records that rebuild one key (the rewrite's snapshot, and a
//! collection copied or renamed).

use super::Effect;
use crate::store::{Entry, Store, Value};

/// The records that make `key` hold `e` again (the rewrite's snapshot, and a
/// collection copied or renamed): a string is one record; a hash or a set is one
/// command per 256 members, then its deadline.
pub fn dump(key: &[u8], e: &Entry) -> Vec<Effect> {
    const CHUNK: usize = 256;
    let mut out = Vec::new();
    let mut push = |name: &[u8], items: Vec<Vec<u8>>| {
        let mut argv = Vec::with_capacity(items.len() + 2);
        argv.push(name.to_vec());
        argv.push(key.to_vec());
        argv.extend(items);
        out.push(Effect::Cmd(argv));
    };
    match &e.value {
        Value::Str(v) => {
            return vec![Effect::Set {
                key: key.to_vec(),
                value: v.clone(),
                expires_at: e.expires_at,
            }]
        }
        Value::Hash(h) => {
            let pairs: Vec<(&[u8], &[u8])> = h.iter().collect();
            for c in pairs.chunks(CHUNK) {
                push(
                    b"HSET",
                    c.iter()
                        .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
                        .collect(),
                );
            }
        }
        Value::Set(s) => {
            let members: Vec<&[u8]> = s.iter().collect();
            for c in members.chunks(CHUNK) {
                push(b"SADD", c.iter().map(|m| m.to_vec()).collect());
            }
        }
        Value::List(l) => {
            let items: Vec<&[u8]> = l.iter().collect();
            for c in items.chunks(CHUNK) {
                push(b"RPUSH", c.iter().map(|m| m.to_vec()).collect());
            }
        }
        Value::Stream(s) => {
            for argv in crate::cmd::streams::dump(key, s) {
                out.push(Effect::Cmd(argv));
            }
        }
        Value::ZSet(z) => {
            let items: Vec<(&[u8], f64)> = z.iter().collect();
            for c in items.chunks(CHUNK) {
                push(
                    b"ZADD",
                    c.iter()
                        .flat_map(|(m, s)| {
                            [crate::cmd::zsets::score_text(*s).into_bytes(), m.to_vec()]
                        })
                        .collect(),
                );
            }
        }
    }
    if e.expires_at != 0 {
        out.push(Effect::Deadline {
            key: key.to_vec(),
            at: e.expires_at,
        });
    }
    out
}

/// Applies one effect to the store (replay), at time `now`.
pub fn apply(store: &mut Store, e: &Effect, now: u64) {
    match e {
        Effect::Set {
            key,
            value,
            expires_at,
        } => {
            if *expires_at != 0 && *expires_at <= now {
                store.remove(key);
            } else {
                store.set(key, value.clone(), *expires_at, now);
            }
        }
        Effect::Del { key } => {
            store.remove(key);
        }
        Effect::Deadline { key, at } => {
            if *at != 0 && *at <= now {
                store.remove(key);
            } else {
                store.set_deadline(key, *at, now);
            }
        }
        Effect::Clear => store.clear(),
        Effect::Cmd(argv) => crate::cmd::replay(store, argv, now),
        Effect::Batch(b) => b.iter().for_each(|e| apply(store, e, now)),
        // Between databases: the caller's part (see the server's replay).
        Effect::SwapDb { .. } | Effect::Function(_) | Effect::Position { .. } | Effect::GetAck => {}
        // The caller chose the database's store.
        Effect::Db { effect, .. } => apply(store, effect, now),
    }
}
