//! Configuration files in the form of `redis.conf`: one setting a line, `name value`,
//! `#` comments, values split and unescaped as Redis does (see [`split_args`]).
//!
//! Every setting of CONFIG GET can be given: the ones CONFIG SET changes at run time
//! (through the same [`Config::set`], so the checks and messages are the same) and
//! the ones fixed at start: `port`, `bind` (the first address), `threads` (also
//! `io-threads`), `tcp-backlog`, `appendonly yes|no`, `appendfilename`, the TLS
//! directives ([`crate::tls`]), `aclfile` and `user` lines (ACL users, see
//! [`crate::acl::file`]). A bad value or
//! a malformed line is an error naming its line; nothing is applied then. A directive
//! this server does not have (`save`, `daemonize`, `include`, ...) is accepted with one
//! warning naming its line, so a Redis 7 `redis.conf` loads.

use std::fmt;
use std::path::PathBuf;

use crate::config::Config;
use crate::resp::split_args;
use crate::server::ServerConfig;
use crate::tls::DIRECTIVES;

/// The settings fixed at start, read here rather than by CONFIG SET.
const FIXED: &[&str] = &[
    "port",
    "bind",
    "threads",
    "io-threads",
    "tcp-backlog",
    "appendonly",
    "appendfilename",
    "client-output-buffer-limit",
    "databases",
    "replicaof",
    "slaveof",
    "cluster-enabled",
    "cluster-config-file",
    "cluster-node-timeout",
    "enable-protected-configs",
    "enable-debug-command",
    "cluster-port",
    "user",
    "aclfile",
];

/// Longest configuration file read (bytes).
pub const MAX_FILE: usize = 1 << 20;

/// A line of a configuration file that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ConfError {}

/// Applies the settings of `text` to `config` (all or nothing). Returns one warning a
/// directive this server does not implement (`save`, `daemonize`, `include`, ...):
/// those are accepted and ignored, so a Redis 7 `redis.conf` loads.
pub fn apply(config: &mut ServerConfig, text: &str) -> Result<Vec<ConfError>, ConfError> {
    let mut warnings = Vec::new();
    let mut next = config.clone();
    let mut appendonly = next.aof.is_some();
    let mut filename = next.aof.as_ref().map(|(p, _)| p.clone());
    let mut cluster = next.cluster.is_some();
    let mut save_lines = 0;
    let (mut cluster_file, mut node_timeout) = next.cluster.clone().unwrap_or_else(|| {
        (
            PathBuf::from(crate::cluster::DEFAULT_FILE),
            crate::cluster::DEFAULT_TIMEOUT,
        )
    });
    for (n, raw) in text.lines().enumerate() {
        let err = |message: String| ConfError {
            line: n + 1,
            message,
        };
        // A comment is skipped whole (its quotes need not balance), as Redis does.
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut line = raw.as_bytes().to_vec();
        let mut ranges = Vec::new();
        split_args(&mut line, &mut ranges).map_err(|e| err(e.to_string()))?;
        let words: Vec<&[u8]> = ranges.iter().map(|r| &line[r.clone()]).collect();
        let Some(first) = words.first() else {
            continue;
        };
        if first.starts_with(b"#") {
            continue;
        }
        let name = String::from_utf8_lossy(first).to_ascii_lowercase();
        if words.len() < 2 {
            let known = Config::default().params().iter().any(|(n, _)| *n == name);
            if !known && !FIXED.contains(&name.as_str()) && !DIRECTIVES.contains(&name.as_str()) {
                warnings.push(err(format!("'{name}' is not supported here; ignored")));
                continue;
            }
            return Err(err(format!("'{name}' needs a value")));
        }
        let value = words[1];
        let text = String::from_utf8_lossy(value).into_owned();
        let single = |what: &str| {
            if words.len() == 2 {
                Ok(())
            } else {
                Err(err(format!("'{name}' takes one {what}")))
            }
        };
        match name.as_str() {
            "port" => {
                single("port")?;
                next.cmd.port = text
                    .parse()
                    .map_err(|_| err(format!("'{text}' is not a port")))?;
            }
            // Redis accepts several addresses; this server listens on the first.
            "bind" => next.cmd.bind = text,
            "threads" | "io-threads" => {
                single("count")?;
                next.threads = match text.parse() {
                    Ok(t) if (1..=1024).contains(&t) => t,
                    _ => return Err(err(format!("{name} must be 1 to 1024, not '{text}'"))),
                };
            }
            "tcp-backlog" => {
                single("count")?;
                next.cmd.tcp_backlog = match text.parse() {
                    Ok(n) if n <= i32::MAX as u32 => n,
                    _ => {
                        return Err(err(format!(
                            "tcp-backlog must be 0 to 2147483647, not '{text}'"
                        )))
                    }
                };
            }
            "appendonly" => {
                single("yes or no")?;
                appendonly = match text.to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(err(format!("appendonly must be yes or no, not '{text}'"))),
                };
            }
            "replicaof" | "slaveof" => {
                let [_, host, port] = words.as_slice() else {
                    return Err(err(format!("{name} takes a host and a port")));
                };
                let port = std::str::from_utf8(port)
                    .ok()
                    .and_then(|p| p.parse::<u16>().ok())
                    .ok_or_else(|| err(format!("{name}: a bad port")))?;
                next.replicaof = Some((String::from_utf8_lossy(host).into_owned(), port));
            }
            "cluster-enabled" => {
                single("yes or no")?;
                cluster = match text.to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => {
                        return Err(err(format!(
                            "cluster-enabled must be yes or no, not '{text}'"
                        )))
                    }
                };
            }
            "cluster-config-file" => {
                single("path")?;
                cluster_file = PathBuf::from(text);
            }
            "cluster-port" => {
                single("port")?;
                next.cmd.cluster_port = text
                    .parse()
                    .map_err(|_| err(format!("cluster-port must be 0 to 65535, not '{text}'")))?;
            }
            "cluster-node-timeout" => {
                single("milliseconds")?;
                node_timeout = text.parse::<u64>().ok().filter(|&t| t > 0).ok_or_else(|| {
                    err(format!(
                        "cluster-node-timeout must be a positive number of ms, not '{text}'"
                    ))
                })?;
            }
            "tls-port" => {
                single("port")?;
                next.cmd.tls.port = text
                    .parse()
                    .map_err(|_| err(format!("tls-port must be 0 to 65535, not '{text}'")))?;
            }
            "tls-cert-file" | "tls-key-file" | "tls-ca-cert-file" => {
                single("path")?;
                let path = Some(PathBuf::from(&text));
                match name.as_str() {
                    "tls-cert-file" => next.cmd.tls.cert_file = path,
                    "tls-key-file" => next.cmd.tls.key_file = path,
                    _ => next.cmd.tls.ca_cert_file = path,
                }
            }
            "tls-auth-clients" => {
                single("value")?;
                next.cmd.tls.auth_clients =
                    crate::tls::AuthClients::parse(&text).ok_or_else(|| {
                        err(format!(
                            "tls-auth-clients must be yes, no or optional, not '{text}'"
                        ))
                    })?;
            }
            "tls-replication" | "tls-cluster" => {
                single("yes or no")?;
                let on = match text.to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(err(format!("{name} must be yes or no, not '{text}'"))),
                };
                if name == "tls-replication" {
                    next.cmd.tls.replication = on;
                } else {
                    next.cmd.tls.cluster = on;
                }
            }
            "appendfilename" => {
                single("path")?;
                filename = Some(PathBuf::from(&text));
            }
            // `user NAME RULES...`: an ACL user (`crate::acl`), applied at start.
            "user" => crate::acl::file::add_config_user(&mut next.cmd, &words[1..])
                .map_err(|why| err(format!("user: {why}")))?,
            "aclfile" => {
                single("path")?;
                next.cmd.aclfile = Some(PathBuf::from(&text));
            }
            "enable-protected-configs" | "enable-debug-command" => {
                single("value")?;
                let access = crate::config::Access::parse(&text)
                    .ok_or_else(|| err(format!("{name} must be no, yes or local, not '{text}'")))?;
                if name == "enable-debug-command" {
                    next.cmd.debug_command = access;
                } else {
                    next.cmd.protected_configs = access;
                }
            }
            "databases" => {
                single("count")?;
                let max = crate::config::MAX_DATABASES;
                next.cmd.databases = match text.parse::<usize>() {
                    Ok(n) if (1..=max).contains(&n) => n,
                    _ => return Err(err(format!("databases must be 1 to {max}, not '{text}'"))),
                };
            }
            // `CLASS HARD SOFT SECONDS` in one line (a line per class, as in redis.conf).
            "client-output-buffer-limit" => {
                let value: Vec<String> = words[1..]
                    .iter()
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                next.cmd
                    .output_limits
                    .set(&value.join(" "))
                    .map_err(|why| err(format!("{name}: {why}")))?;
            }
            // Several values in one setting, as CONFIG SET takes them in one argument.
            // Each `save` line adds its pairs to those of the lines before it in the
            // file (`save ""` clears them), as Redis reads them.
            "latency-tracking-info-percentiles" => {
                let mut cmd: Config = next.cmd.clone();
                cmd.set(&name, &words[1..].join(&b' '))
                    .map_err(|why| err(format!("{name}: {why}")))?;
                next.cmd = cmd;
            }
            "save" => {
                let mut joined: Vec<u8> = words[1..].join(&b' ');
                if save_lines > 0 && !joined.is_empty() {
                    if let Some(before) = next.cmd.compat.get("save").filter(|s| !s.is_empty()) {
                        joined = [before.as_bytes(), b" ", &joined].concat();
                    }
                }
                save_lines += 1;
                let mut cmd: Config = next.cmd.clone();
                cmd.set(&name, &joined)
                    .map_err(|why| err(format!("{name}: {why}")))?;
                next.cmd = cmd;
            }
            _ => {
                // A name no setting has: a warning, not a refusal.
                let mut probe: Config = next.cmd.clone();
                if let Err(why) = probe.set(&name, value) {
                    // Redis's immutable settings this server lacks (logfile, pidfile,
                    // appenddirname, ...) are refused at run time, ignored here.
                    if why.starts_with("unknown setting") || why.contains("immutable") {
                        warnings.push(err(format!("'{name}' is not supported here; ignored")));
                        continue;
                    }
                }
                single("value")?;
                let mut cmd: Config = next.cmd.clone();
                cmd.set(&name, value).map_err(|why| {
                    err(if why.contains(&name) {
                        why
                    } else {
                        format!("{name}: {why}")
                    })
                })?;
                next.cmd = cmd;
            }
        }
    }
    if let Some(f) = &filename {
        next.cmd.appendfilename = f.to_string_lossy().into_owned();
    }
    next.aof = appendonly.then(|| {
        (
            filename.unwrap_or_else(|| PathBuf::from("appendonly.aof")),
            next.cmd.appendfsync,
        )
    });
    next.cluster = cluster.then_some((cluster_file, node_timeout));
    *config = next;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aof::Fsync;
    use crate::config::Eviction;

    #[test]
    fn a_redis_style_file_applies() {
        let mut c = ServerConfig::default();
        let text = "# a comment\n\nport 7000\nbind 0.0.0.0 ::1\nthreads 2\n\
                    requirepass \"p w\\x21\"\nmaxmemory 100mb\nmaxmemory-policy allkeys-lru\n\
                    appendonly yes\nappendfilename /tmp/x.aof\nappendfsync always\n\
                    proto-max-bulk-len 2mb\nclient-query-buffer-limit 8mb\ntcp-backlog 1024\n\
                    client-output-buffer-limit normal 4mb 1mb 30\n\
                    client-output-buffer-limit pubsub 0 0 0\n";
        apply(&mut c, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.cmd.port, 7000);
        assert_eq!(c.cmd.bind, "0.0.0.0");
        assert_eq!(c.threads, 2);
        assert_eq!(c.cmd.requirepass.as_deref(), Some(&b"p w!"[..]));
        assert_eq!(c.cmd.maxmemory, 100 << 20);
        assert_eq!(c.cmd.policy, Eviction::AllKeysLru);
        assert_eq!(c.cmd.limits.max_bulk, 2 << 20);
        assert_eq!(c.cmd.max_query_buffer, 8 << 20);
        assert_eq!(c.cmd.tcp_backlog, 1024);
        assert_eq!(
            c.cmd.output_limits.show(),
            "normal 4194304 1048576 30 slave 268435456 67108864 60 pubsub 0 0 0"
        );
        assert_eq!(
            c.aof,
            Some((PathBuf::from("/tmp/x.aof"), Fsync::Always)),
            "appendfsync given after appendonly still applies"
        );
    }

    #[test]
    fn directives_not_implemented_are_warnings_naming_their_line() {
        let mut c = ServerConfig::default();
        let text = "port 1\nrename-command FLUSHALL x\ndaemonize yes\nnosuch\nsave 3600 1 300 100\nmaxmemory 1mb\n";
        let w = apply(&mut c, text).expect("accepted");
        let lines: Vec<usize> = w.iter().map(|e| e.line).collect();
        assert_eq!(lines, [2, 3, 4]);
        assert!(
            w[0].message.contains("'rename-command' is not supported"),
            "{}",
            w[0]
        );
        assert_eq!(
            (c.cmd.port, c.cmd.maxmemory),
            (1, 1 << 20),
            "the rest applied"
        );
        // A known setting with a bad value is still an error.
        assert!(apply(&mut c, "daemonize no\nmaxmemory lots\n").is_err());
    }

    #[test]
    fn percentiles_and_aliases_read_from_a_file() {
        let mut c = ServerConfig::default();
        let text = "latency-tracking-info-percentiles 50 99.99\nslave-read-only no\n\
                    min-slaves-to-write 2\n";
        apply(&mut c, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.cmd.latency_percentiles, [50.0, 99.99]);
        assert_eq!(c.cmd.min_replicas, 2);
        assert_eq!(
            c.cmd.compat.get("replica-read-only").map(String::as_str),
            Some("no")
        );
        // As CONFIG REWRITE writes them: one quoted value, or none.
        apply(&mut c, "latency-tracking-info-percentiles \"1 2\"\n").unwrap();
        assert_eq!(c.cmd.latency_percentiles, [1.0, 2.0]);
        apply(&mut c, "latency-tracking-info-percentiles \"\"\n").unwrap();
        assert!(c.cmd.latency_percentiles.is_empty());
        let e = apply(&mut c, "latency-tracking-info-percentiles 50 200\n").unwrap_err();
        assert!(e.message.contains("[0.0,100.0]"), "{e}");
    }

    #[test]
    fn bad_lines_name_their_line_and_change_nothing() {
        for (text, line, says) in [
            ("maxmemory lots\n", 1, "memory value"),
            ("appendfsync sometimes\n", 1, "always, everysec or no"),
            ("port\n", 1, "needs a value"),
            ("port 99999\n", 1, "not a port"),
            ("threads 0\n", 1, "1 to 1024"),
            ("tcp-backlog -1\n", 1, "0 to 2147483647"),
            ("tcp-backlog many\n", 1, "0 to 2147483647"),
            ("requirepass \"open\n", 1, "quotes"),
            ("appendonly maybe\n", 1, "yes or no"),
            ("maxmemory 1mb 2mb\n", 1, "takes one"),
            ("client-output-buffer-limit normal 1mb\n", 1, "Wrong number"),
            (
                "client-output-buffer-limit nobody 1 1 1\n",
                1,
                "client class",
            ),
        ] {
            let mut c = ServerConfig::default();
            let e = apply(&mut c, text)
                .err()
                .unwrap_or_else(|| panic!("{text}"));
            assert_eq!(e.line, line, "{text}");
            assert!(e.message.contains(says), "{text}: {e}");
            assert_eq!(c.cmd.port, 6379, "nothing applied");
        }
    }
}
