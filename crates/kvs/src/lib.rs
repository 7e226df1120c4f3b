//! A Redis-protocol key-value server.
//!
//! - [`resp`]: the RESP2/RESP3 request parser (bounded, on a whole buffer) and reply writer.
//! - [`input`]: a connection's input buffer and incremental request parser (each read
//!   costs its new bytes; bounded requests before AUTH).
//! - [`value`]: what a key holds (string, hash, set, list, sorted set) and its byte counts.
//! - [`store`]: a keyspace shard, with lazy and incremental active expiry, on [`table`]:
//!   our chained hash table with a resize-proof SCAN cursor.
//! - [`keyspace`]: the striped keyspace the event loops share (shards under their own
//!   locks, taken per command in ascending order); it knows nothing else of the server.
//! - [`state`]: the server's state apart from the keys (settings, counters, the log,
//!   replication, cluster, scripts, ...) and the one place a command's effects are
//!   propagated to the log and the replicas.
//! - [`cmd`]: command execution with Redis's replies and error texts.
//! - [`acl`]: access control lists (users, their passwords, commands, keys and
//!   channels, ACL LOG, the ACL file), checked for every command.
//! - [`script`]: the Lua engine, the script cache and the function libraries the
//!   event loops share (the commands that use them are in [`cmd`]).
//! - [`limits`]: `client-output-buffer-limit` (Redis's syntax, hard and soft limits).
//! - [`config`]: the server's settings (values, defaults, parsing, what CONFIG SET may
//!   change).
//! - [`conf`]: configuration files in the form of `redis.conf`.
//! - [`latency`]: the latency monitor (`latency-monitor-threshold`: the events that
//!   took longer, one sample a second, for LATENCY).
//! - [`aof`]: the append-only log (a versioned header, checksummed effect records, group
//!   commit; only a torn tail is cut at start, saved to a side file first; other damage
//!   and foreign files are refused untouched; the `check-aof` checker and repair).
//! - [`glob`]: Redis's glob patterns (KEYS, SCAN MATCH, CONFIG GET, PSUBSCRIBE).
//! - [`hub`]: what the loops tell each other: pub/sub messages, blocked clients'
//!   replies, and the registries of subscribers and blocked clients.
//! - [`repl`]: replication: the stream to replicas (a backlog of the log's records) and
//!   a replica's link to its primary (REPLICAOF).
//! - [`cluster`]: cluster mode: the nodes and slots this node knows, their file, the
//!   routing of keyed commands (MOVED, CROSSSLOT), and the bus between nodes.
//! - [`server`]: the mio event loops, pipelined batches with one write per batch.
//! - `conn` (private): one client connection: read, run, write, its buffer limits.
//! - `busy` (private): a loop's other clients answered while a script runs too long.
//!
//! The load generator that measures it (and other servers) is `wirespeed-loadgen`.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod acl;
pub mod aof;
mod busy;
pub mod cluster;
pub mod cmd;
pub mod conf;
pub mod config;
mod conn;
pub mod glob;
pub mod hub;
pub mod input;
pub mod keyspace;
pub mod latency;
pub mod lazyfree;
pub mod limits;
pub mod repl;
pub mod resp;
pub mod script;
pub mod server;
pub mod snapshot;
pub mod state;
pub mod store;
pub mod stream;
pub mod table;
pub mod tls;
pub mod tracking;
pub mod value;
