//! CONFIG GET/SET/RESETSTAT over the server's settings ([`crate::config`]; REWRITE and
//! HELP: [`super::rewrite`]).

use super::{eq, glob, Ctx};
use crate::config::*;
use crate::resp::Writer;
use crate::state::Stats;

/// CONFIG GET/SET over the settings this server has.
pub fn config(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if eq(args[1], "get") && args.len() >= 3 {
        let params = ctx.config.params();
        let hits: Vec<&(&str, String)> = params
            .iter()
            .filter(|(k, _)| {
                args[2..]
                    .iter()
                    .any(|p| glob(&p.to_ascii_lowercase(), k.as_bytes()))
            })
            .collect();
        w.map(hits.len());
        for (k, v) in hits {
            w.bulk(k.as_bytes());
            w.bulk(v.as_bytes());
        }
    } else if eq(args[1], "set") && args.len() >= 4 && args.len().is_multiple_of(2) {
        // Check every pair before applying any (all or nothing, as Redis does), on the
        // shared settings (every loop sees the change from its next round on).
        let peer = ctx.session.meta.as_ref().map(|m| m.addr.clone());
        let applied = ctx.shared.update_config(|next| {
            let mut seen = std::collections::HashSet::new();
            for kv in args[2..].chunks(2) {
                let name = String::from_utf8_lossy(kv[0]).to_ascii_lowercase();
                if !seen.insert(name.clone()) {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter"
                    ));
                }
                if PROTECTED.contains(&name.as_str())
                    && !next.protected_configs.allows(peer.as_deref())
                {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - {PROTECTED_ERR}"
                    ));
                }
                if !RUNTIME.contains(&name.as_str())
                    && !IMMUTABLE.contains(&name.as_str())
                    && !crate::tls::DIRECTIVES.contains(&name.as_str())
                    && compat(&name).is_none()
                {
                    return Err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                    ));
                }
                if let Err(why) = next.set(&name, kv[1]) {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                    ));
                }
            }
            Ok(())
        });
        match applied {
            Ok(next) => {
                *ctx.config = next;
                // A lower limit applies at once (keys are evicted now, as in Redis).
                super::evict(ctx);
                w.simple("OK");
            }
            Err(e) => w.error(&e),
        }
    } else if eq(args[1], "rewrite") && args.len() == 2 {
        super::rewrite::rewrite(ctx, w);
    } else if eq(args[1], "help") && args.len() == 2 {
        super::rewrite::help(w);
    } else if eq(args[1], "rewrite") || eq(args[1], "help") {
        w.error(&format!(
            "ERR wrong number of arguments for 'config|{}' command",
            super::lower(args[1])
        ));
    } else if eq(args[1], "resetstat") {
        ctx.shared.stats.reset();
        *ctx.stats = Stats::default();
        crate::lazyfree::reset();
        w.simple("OK");
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CONFIG HELP.",
            String::from_utf8_lossy(args[1])
        ));
    }
}
