//! Cluster commands for cluster-aware clients: one node that serves every slot
//! (CLUSTER KEYSLOT/INFO/SLOTS/SHARDS), and the key slot function.

use super::{eq, Ctx};
use crate::resp::Writer;

/// CRC16/XMODEM of `key`'s hash tag (Redis Cluster's key slot, mod 16384); one
/// function for the server and the clients that route by it.
pub use wirespeed_util::keyslot::key_slot;

/// CLUSTER: the one-node answers without cluster mode (KEYSLOT, INFO, SLOTS, SHARDS:
/// this node serves every slot), the cluster's commands in cluster mode
/// ([`super::cluster_cmds`]).
pub fn cluster(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_some() {
        return super::cluster_cmds::cluster(ctx, args, w);
    }
    let sub = args[1];
    let node_id = "0000000000000000000000000000000000000001";
    if eq(sub, "keyslot") && args.len() == 3 {
        w.int(key_slot(args[2]) as i64);
    } else if eq(sub, "info") {
        w.verbatim(b"cluster_enabled:1\r\ncluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:1\r\ncluster_my_epoch:1\r\n");
    } else if eq(sub, "slots") {
        w.array(1);
        w.array(3);
        w.int(0);
        w.int(16383);
        w.array(3);
        w.bulk(ctx.config.bind.as_bytes());
        w.int(ctx.config.port as i64);
        w.bulk(node_id.as_bytes());
    } else if eq(sub, "shards") {
        w.array(1);
        w.map(2);
        w.bulk(b"slots");
        w.array(2);
        w.int(0);
        w.int(16383);
        w.bulk(b"nodes");
        w.array(1);
        w.map(6);
        for (k, v) in [
            ("id", node_id.to_string()),
            ("endpoint", ctx.config.bind.clone()),
            ("ip", ctx.config.bind.clone()),
            ("role", "master".into()),
            ("health", "online".into()),
        ] {
            w.bulk(k.as_bytes());
            w.bulk(v.as_bytes());
        }
        w.bulk(b"port");
        w.int(ctx.config.port as i64);
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_slots_match_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"123456789"), 0x31c3 & 16383);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_eq!(key_slot(b"{}x"), key_slot(b"{}x"));
    }
}
