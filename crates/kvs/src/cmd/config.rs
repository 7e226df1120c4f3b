//! CONFIG GET/SET/RESETSTAT over the server's settings ([`crate::config`]; REWRITE and
//! HELP: [`super::rewrite`]).

use super::{eq, glob, Ctx};
use crate::config::*;
use crate::resp::Writer;
use crate::state::Stats;

/// CONFIG GET/SET over the settings this server has.
pub fn config(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if eq(args[1], "get") && args.len() >= 3 {
        let mut params = ctx.config.params();
        // The primary this server follows ("host port"), empty on a primary.
        let replicaof = match ctx.shared.repl.role() {
            crate::repl::Role::Replica { host, port } => format!("{host} {port}"),
            crate::repl::Role::Primary => String::new(),
        };
        params.push(("replicaof", replicaof));
        let hits = config_get(&params, &args[2..]);
        w.map(hits.len());
        for (k, v) in hits {
            w.bulk(&k);
            w.bulk(v.as_bytes());
        }
    } else if eq(args[1], "set") && args.len() >= 4 && args.len().is_multiple_of(2) {
        // Check every pair before applying any (all or nothing, as Redis does), on the
        // shared settings (every loop sees the change from its next round on).
        let peer = ctx.session.meta.as_ref().map(|m| m.addr.clone());
        let applied = ctx.shared.update_config(|next| {
            let mut seen = std::collections::HashSet::new();
            for kv in args[2..].chunks(2) {
                let given = String::from_utf8_lossy(kv[0]).to_ascii_lowercase();
                // An alias sets what it stands for; messages name it as given.
                let name = canonical(&given).to_string();
                if !seen.insert(given.clone()) {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{given}') - duplicate parameter"
                    ));
                }
                if PROTECTED.contains(&name.as_str())
                    && !next.protected_configs.allows(peer.as_deref())
                {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{given}') - {PROTECTED_ERR}"
                    ));
                }
                if !RUNTIME.contains(&name.as_str())
                    && !IMMUTABLE.contains(&name.as_str())
                    && !crate::tls::DIRECTIVES.contains(&name.as_str())
                    && compat(&name).is_none()
                {
                    return Err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{given}'"
                    ));
                }
                if let Err(why) = next.set(&name, kv[1]) {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{given}') - {why}"
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

/// CONFIG GET's answer for the arguments `asked` over the settings `params` (name,
/// value), as Redis 7.0 gives it: a name without glob characters is looked up (its
/// alias too) and answered under the name as asked; a pattern (any case) matches the
/// settings' names and their aliases, each answered under the name it matched. A name
/// answered once is not repeated. The answers come in the settings' order (Redis's is
/// its table's).
fn config_get(params: &[(&'static str, String)], asked: &[&[u8]]) -> Vec<(Vec<u8>, String)> {
    let patterns: Vec<Option<Vec<u8>>> = asked
        .iter()
        .map(|a| {
            a.iter()
                .any(|b| matches!(b, b'*' | b'?' | b'['))
                .then(|| a.to_ascii_lowercase())
        })
        .collect();
    let mut hits: Vec<(Vec<u8>, String)> = Vec::new();
    for (name, value) in params {
        let aliases = ALIASES.iter().filter(|(_, n)| n == name).map(|(a, _)| *a);
        for n in std::iter::once(*name).chain(aliases) {
            for (a, pattern) in asked.iter().zip(&patterns) {
                let shown: &[u8] = match pattern {
                    Some(p) if glob(p, n.as_bytes()) => n.as_bytes(),
                    None if a.eq_ignore_ascii_case(n.as_bytes()) => a,
                    _ => continue,
                };
                if !hits.iter().any(|(h, _)| h.eq_ignore_ascii_case(shown)) {
                    hits.push((shown.to_vec(), value.clone()));
                }
            }
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(params: &[(&'static str, String)], asked: &[&str]) -> Vec<(String, String)> {
        let asked: Vec<&[u8]> = asked.iter().map(|a| a.as_bytes()).collect();
        config_get(params, &asked)
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), v))
            .collect()
    }

    #[test]
    fn config_get_answers_aliases_as_redis_7_0_does() {
        let mut params = Config::default().params();
        params.push(("replicaof", "10.0.0.1 6379".into()));
        let p = |n: &str, v: &str| (n.to_string(), v.to_string());
        // Exact names, alias or not, answered as asked (case kept).
        assert_eq!(
            names(&params, &["replicaof", "SLAVEOF"]),
            [
                p("replicaof", "10.0.0.1 6379"),
                p("SLAVEOF", "10.0.0.1 6379")
            ]
        );
        assert_eq!(names(&params, &["slaveof", "SlaveOf", "slave*of"]).len(), 1);
        assert_eq!(
            names(&params, &["MAXMEMORY"]),
            [p("MAXMEMORY", "0")],
            "Redis 7.0 echoes the name asked"
        );
        // Patterns match names and aliases alike.
        let got = names(&params, &["*of"]);
        assert_eq!(
            got,
            [
                p("replicaof", "10.0.0.1 6379"),
                p("slaveof", "10.0.0.1 6379")
            ]
        );
        let slave = names(&params, &["SLAVE*"]);
        for n in [
            "slave-read-only",
            "slave-priority",
            "slave-serve-stale-data",
            "slaveof",
        ] {
            assert!(slave.iter().any(|(k, _)| k == n), "{n}: {slave:?}");
        }
        assert!(slave.iter().all(|(k, _)| k.starts_with("slave")));
        let min = names(&params, &["min-*"]);
        assert_eq!(min.len(), 4, "{min:?}");
        // Nothing for unknown names; an empty pattern matches nothing.
        assert!(names(&params, &["slave-nosuch", ""]).is_empty());
        // Every alias names a setting CONFIG GET has.
        for (alias, name) in ALIASES {
            assert!(params.iter().any(|(n, _)| n == name), "{alias} -> {name}");
            assert_eq!(names(&params, &[alias]).len(), 1, "{alias}");
        }
    }

    #[test]
    fn an_alias_sets_what_it_stands_for() {
        let mut c = Config::default();
        c.set("SLAVE-READ-ONLY", b"no").unwrap();
        c.set("min-slaves-to-write", b"3").unwrap();
        assert_eq!(c.min_replicas, 3);
        let p = c.params();
        assert!(p.contains(&("replica-read-only", "no".to_string())));
        assert_eq!(
            c.set("slaveof", b"127.0.0.1 1"),
            Err("can't set immutable config".into())
        );
        assert_eq!(
            c.set("replicaof", b"127.0.0.1 1"),
            Err("can't set immutable config".into())
        );
    }
}
