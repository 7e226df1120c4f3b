//! A Redis-protocol key-value server.
//!
//! - [`resp`]: the RESP2/RESP3 request parser (bounded, on a whole buffer) and reply writer.
//! - [`input`]: a connection's input buffer and incremental request parser (each read
//!   costs its new bytes; bounded requests before AUTH).
//! - [`store`]: a keyspace shard, with lazy and incremental active expiry, on [`table`]:
//!   our chained hash table with a resize-proof SCAN cursor.
//! - [`keyspace`]: the striped keyspace the event loops share (shards under their own
//!   locks, taken per command in ascending order), settings and counters.
//! - [`cmd`]: command execution with Redis's replies and error texts.
//! - [`conf`]: configuration files in the form of `redis.conf`.
//! - [`aof`]: the append-only log (checksummed effect records, group commit, torn-tail
//!   trimming on replay).
//! - [`dist`]: the load generator's key distributions (uniform, Zipf, hot set) and value
//!   sizes (fixed, a range, weighted).
//! - [`loadgen`]: a load generator (RESP or memcached text protocol, closed or open loop)
//!   that checks every reply, and a process's CPU time from `/proc`.
//! - [`plot`]: latency-against-load charts as hand-written SVG.
//! - [`server`]: the mio event loops, pipelined batches with one write per batch.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod aof;
pub mod cmd;
pub mod conf;
pub mod dist;
pub mod input;
pub mod keyspace;
pub mod loadgen;
pub mod plot;
pub mod resp;
pub mod server;
pub mod store;
pub mod table;
