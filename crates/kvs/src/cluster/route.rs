//! The routing of a keyed command in cluster mode, checked before it runs: here, or
//! MOVED, ASK, CROSSSLOT, CLUSTERDOWN or TRYAGAIN ([`super::Cluster::route`] decides from the
//! slots of its keys; a slot moving out is served while its keys are still here).

use super::Route;
use crate::cmd::{table, Ctx};
use wirespeed_util::keyslot::key_slot;

/// The routing of a keyed command in cluster mode: None to run it here, else the
/// error (MOVED, ASK, CROSSSLOT, CLUSTERDOWN, TRYAGAIN). ASKING counts for this
/// command only.
pub(crate) fn check(ctx: &mut Ctx, cmd: &table::Command, args: &[&[u8]]) -> Option<String> {
    let c = ctx.shared.cluster.as_ref()?;
    let asking = std::mem::take(&mut ctx.session.asking) || cmd.name == "restore-asking";
    if cmd.name == "asking" {
        ctx.session.asking = true;
    }
    if cmd.first == 0 && !cmd.has(table::MOVABLEKEYS) {
        return None;
    }
    let keys = cmd.keys_of(args)?;
    if keys.is_empty() {
        return None;
    }
    let read_ok = ctx.session.cluster_readonly && !cmd.has(table::WRITE);
    let slots = keys.iter().map(|&i| key_slot(args[i]));
    match c.route(slots, read_ok, asking, ctx.session.tls) {
        Route::Here => None,
        Route::Error(e) => Some(e),
        Route::AskIfMissing(ask) => {
            // Moving out: served while its keys are still here.
            let now = ctx.now;
            ctx.keys.select(0);
            ctx.keys.lock_keys(keys.iter().map(|&i| args[i]));
            let here = keys
                .iter()
                .filter(|&&i| ctx.keys.contains(args[i], now))
                .count();
            ctx.keys.unlock();
            if here == keys.len() {
                None
            } else if here == 0 {
                Some(ask)
            } else {
                Some("TRYAGAIN Multiple keys request during rehashing of slot".into())
            }
        }
    }
}
