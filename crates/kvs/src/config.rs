//! The server's settings ([`Config`]): their values, names, defaults and parsing, which
//! of them CONFIG SET may change (and how protected ones are guarded), and Redis's
//! settings taken for compatibility. The CONFIG command is `crate::cmd::config`; the
//! `redis.conf` file form is [`crate::conf`].

use crate::aof::Fsync;
use crate::limits::OutputLimits;
use crate::resp::Limits;

/// Databases when none is configured (Redis's default).
pub const DEFAULT_DATABASES: usize = 16;

/// Most databases a server takes (`databases`).
pub const MAX_DATABASES: usize = 1024;

/// Server-wide settings a command can read or change.
#[derive(Clone, Debug)]
pub struct Config {
    /// `requirepass`: clients must AUTH first when set.
    pub requirepass: Option<Vec<u8>>,
    /// `proto-max-bulk-len`, `proto-max-multibulk-len`, `proto-inline-max-size`.
    pub limits: Limits,
    /// `client-query-buffer-limit`: largest input buffer of one client before it is
    /// disconnected.
    pub max_query_buffer: usize,
    /// Port, for INFO and CLUSTER replies.
    pub port: u16,
    /// Address the server listens on, for CLUSTER replies.
    pub bind: String,
    /// `maxmemory` in bytes of [`crate::store::Store::memory`], summed over the shards
    /// (0: no limit).
    pub maxmemory: usize,
    /// What happens at the limit.
    pub policy: Eviction,
    /// `appendonly` (set at start only).
    pub appendonly: bool,
    /// `appendfsync`: CONFIG SET changes the running log's policy.
    pub appendfsync: Fsync,
    /// Event loops (`threads`, set at start only).
    pub threads: usize,
    /// `client-output-buffer-limit`: pending reply bytes allowed per client class.
    pub output_limits: OutputLimits,
    /// `tcp-backlog`: the listening socket's queue of connections not yet accepted
    /// (set at start only; the kernel caps it at `net.core.somaxconn`).
    pub tcp_backlog: u32,
    /// `databases`: SELECT takes 0 to this less one (set at start only).
    pub databases: usize,
    /// `slowlog-log-slower-than`: microseconds from which a command enters the slow
    /// log (negative: none).
    pub slowlog_slower_than: i64,
    /// `slowlog-max-len`: entries the slow log keeps.
    pub slowlog_max_len: usize,
    /// `latency-monitor-threshold`: milliseconds from which the latency monitor
    /// records an event (`crate::latency`; 0: off).
    pub latency_threshold: u64,
    /// `latency-tracking`: per-command latency histograms (LATENCY HISTOGRAM).
    pub latency_tracking: bool,
    /// `latency-tracking-info-percentiles`: the percentiles INFO latencystats gives of
    /// each command's latency (0 to 100; none: the section's lines list none).
    pub latency_percentiles: Vec<f64>,
    /// `tracking-table-max-keys`: keys the client-side caching table remembers before
    /// it forgets some (sending their invalidations); 0: no bound.
    pub tracking_max_keys: usize,
    /// `notify-keyspace-events`: the classes of keyspace notifications sent
    /// ([`notify`] flags; 0: none).
    pub notify: u32,
    /// `min-replicas-to-write`: writes are refused (NOREPLICAS) while fewer replicas
    /// than this acknowledged within `min-replicas-max-lag` seconds (0: no check).
    pub min_replicas: u32,
    /// `min-replicas-max-lag`, seconds.
    pub min_replicas_lag: u32,
    /// Values given to the Redis settings in [`COMPAT`] (accepted, shown, no effect).
    pub compat: std::collections::BTreeMap<&'static str, String>,
    /// The configuration file the server was started with (CONFIG REWRITE writes it).
    pub config_file: Option<std::path::PathBuf>,
    /// `appendfilename`: the log's file as the server runs with it (set at start only;
    /// CONFIG REWRITE writes it, so a restart opens the same log).
    pub appendfilename: String,
    /// `enable-protected-configs`: who may CONFIG SET the path-valued settings in
    /// [`PROTECTED`] (set at start only).
    pub protected_configs: Access,
    /// `enable-debug-command`: who may run DEBUG (set at start only).
    pub debug_command: Access,
    /// `cluster-port`: the cluster bus's port (0: the client port plus 10000; set at
    /// start only).
    pub cluster_port: u16,
    /// The TLS directives (`tls-port`, `tls-replication`, `tls-cluster`, the files;
    /// set at start only).
    pub tls: crate::tls::TlsSettings,
    /// The ACL users (`crate::acl`): a snapshot replaced whole by ACL SETUSER, DELUSER,
    /// LOAD and by `requirepass` (the default user's password).
    pub acl: std::sync::Arc<crate::acl::Users>,
    /// The `user` directives of the configuration, name first (applied at start).
    pub acl_users: Vec<Vec<Vec<u8>>>,
    /// `aclfile`: the ACL file (read at start, ACL LOAD and SAVE; set at start only).
    pub aclfile: Option<std::path::PathBuf>,
    /// `acllog-max-len`: entries ACL LOG keeps.
    pub acllog_max_len: usize,
    /// `acl-pubsub-default`: new users get every channel (`allchannels`) or none
    /// (`resetchannels`, the default).
    pub acl_pubsub_all: bool,
}

/// Who may use a protected setting or command (`enable-protected-configs`,
/// `enable-debug-command`), as Redis 7 has it: nobody (the default), everybody, or
/// clients connected from the loopback address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// Nobody.
    #[default]
    No,
    /// Every client.
    Yes,
    /// Clients on a loopback address.
    Local,
}

impl Access {
    /// `no`, `yes` or `local`.
    pub fn parse(s: &str) -> Option<Access> {
        match s.to_ascii_lowercase().as_str() {
            "no" => Some(Access::No),
            "yes" => Some(Access::Yes),
            "local" => Some(Access::Local),
            _ => None,
        }
    }

    /// As CONFIG GET shows it.
    pub fn name(self) -> &'static str {
        match self {
            Access::No => "no",
            Access::Yes => "yes",
            Access::Local => "local",
        }
    }

    /// Whether a client at `peer` (`ip:port`, as CLIENT LIST shows it) may.
    pub fn allows(self, peer: Option<&str>) -> bool {
        match self {
            Access::No => false,
            Access::Yes => true,
            Access::Local => peer
                .and_then(|p| p.parse::<std::net::SocketAddr>().ok())
                .is_some_and(|a| a.ip().is_loopback()),
        }
    }
}

/// Settings that name files and so can't be changed at run time unless
/// `enable-protected-configs` allows it (Redis's protected configs).
pub const PROTECTED: &[&str] = &["dir", "dbfilename"];

/// The error for a protected setting.
pub const PROTECTED_ERR: &str = "can't set protected config";

/// Redis 7 settings this server accepts (CONFIG SET, configuration files) and shows
/// (CONFIG GET) with Redis's defaults, so that clients, tools and test suites that set
/// them work; they tune encodings and subsystems this server does not have, and have
/// no effect here.
pub const COMPAT: &[(&str, &str)] = &[
    ("active-expire-effort", "1"),
    ("activedefrag", "no"),
    ("activerehashing", "yes"),
    ("aof-load-truncated", "yes"),
    ("aof-rewrite-incremental-fsync", "yes"),
    ("aof-timestamp-enabled", "no"),
    ("aof-use-rdb-preamble", "yes"),
    ("auto-aof-rewrite-min-size", "67108864"),
    ("auto-aof-rewrite-percentage", "100"),
    ("busy-reply-threshold", "5000"),
    ("dbfilename", "dump.rdb"),
    ("dir", "."),
    ("dynamic-hz", "yes"),
    ("hash-max-listpack-entries", "128"),
    ("hash-max-listpack-value", "64"),
    ("hash-max-ziplist-entries", "128"),
    ("hash-max-ziplist-value", "64"),
    // Read by the HyperLogLog commands (`crate::cmd::hll`): checked when set.
    ("hll-sparse-max-bytes", "3000"),
    ("hz", "10"),
    ("lazyfree-lazy-eviction", "no"),
    ("lazyfree-lazy-expire", "no"),
    ("lazyfree-lazy-server-del", "no"),
    ("lazyfree-lazy-user-del", "no"),
    ("lazyfree-lazy-user-flush", "no"),
    ("lfu-decay-time", "1"),
    ("lfu-log-factor", "10"),
    ("list-compress-depth", "0"),
    ("list-max-listpack-size", "-2"),
    ("list-max-ziplist-size", "-2"),
    ("loglevel", "notice"),
    ("lua-time-limit", "5000"),
    ("masterauth", ""),
    ("masteruser", ""),
    ("maxclients", "10000"),
    ("maxmemory-eviction-tenacity", "10"),
    ("maxmemory-samples", "5"),
    ("protected-mode", "no"),
    ("rdbchecksum", "yes"),
    ("rdbcompression", "yes"),
    ("repl-backlog-size", "1048576"),
    ("repl-ping-replica-period", "10"),
    ("repl-timeout", "60"),
    ("replica-announced", "yes"),
    ("replica-priority", "100"),
    ("replica-read-only", "yes"),
    ("replica-serve-stale-data", "yes"),
    ("sanitize-dump-payload", "no"),
    ("save", ""),
    ("set-max-intset-entries", "512"),
    ("set-max-listpack-entries", "128"),
    ("set-max-listpack-value", "64"),
    ("stop-writes-on-bgsave-error", "yes"),
    ("stream-node-max-bytes", "4096"),
    ("stream-node-max-entries", "100"),
    ("tcp-keepalive", "300"),
    ("timeout", "0"),
    ("zset-max-listpack-entries", "128"),
    ("zset-max-listpack-value", "64"),
    ("zset-max-ziplist-entries", "128"),
    ("zset-max-ziplist-value", "64"),
];

/// The entry of `name` in [`COMPAT`].
pub(crate) fn compat(name: &str) -> Option<&'static str> {
    COMPAT
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| COMPAT[i].0)
}

/// Redis 7's older names of settings this server has, each with the name it stands
/// for: CONFIG GET answers under either (a pattern matches both), CONFIG SET and the
/// configuration file take either.
pub const ALIASES: &[(&str, &str)] = &[
    ("min-slaves-max-lag", "min-replicas-max-lag"),
    ("min-slaves-to-write", "min-replicas-to-write"),
    ("repl-ping-slave-period", "repl-ping-replica-period"),
    ("slave-priority", "replica-priority"),
    ("slave-read-only", "replica-read-only"),
    ("slave-serve-stale-data", "replica-serve-stale-data"),
    ("slaveof", "replicaof"),
];

/// The setting `name` (lower case) stands for: itself, or the one an alias names.
pub fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, n)| n)
}

/// The names [`Config::set`] takes while running.
pub(crate) const RUNTIME: &[&str] = &[
    "requirepass",
    "acllog-max-len",
    "acl-pubsub-default",
    "maxmemory",
    "maxmemory-policy",
    "proto-max-bulk-len",
    "proto-max-multibulk-len",
    "proto-inline-max-size",
    "client-query-buffer-limit",
    "client-output-buffer-limit",
    "appendfsync",
    "notify-keyspace-events",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "latency-monitor-threshold",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    "tracking-table-max-keys",
    "min-replicas-to-write",
    "min-replicas-max-lag",
];

/// Settings fixed once the server runs (CONFIG GET shows those it has; CONFIG SET
/// refuses them all, as Redis refuses its immutable configs): among them every path
/// the server writes to besides the protected ones.
pub(crate) const IMMUTABLE: &[&str] = &[
    "port",
    "bind",
    "appendonly",
    "threads",
    "databases",
    "tcp-backlog",
    "appendfilename",
    "appenddirname",
    "cluster-config-file",
    "cluster-enabled",
    "cluster-port",
    "enable-protected-configs",
    "enable-debug-command",
    "enable-module-command",
    "logfile",
    "pidfile",
    "unixsocket",
    "aclfile",
    "daemonize",
    // Set by REPLICAOF (CONFIG GET shows the primary followed).
    "replicaof",
];

impl Config {
    /// Every setting, by its Redis name, with its current value as CONFIG GET shows it.
    pub fn params(&self) -> Vec<(&'static str, String)> {
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
        let path = |p: &Option<std::path::PathBuf>| {
            p.as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut params = vec![
            ("port", self.port.to_string()),
            ("bind", self.bind.clone()),
            (
                "requirepass",
                self.requirepass
                    .as_ref()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .unwrap_or_default(),
            ),
            ("proto-max-bulk-len", self.limits.max_bulk.to_string()),
            (
                "proto-max-multibulk-len",
                self.limits.max_multibulk.to_string(),
            ),
            ("proto-inline-max-size", self.limits.max_inline.to_string()),
            (
                "client-query-buffer-limit",
                self.max_query_buffer.to_string(),
            ),
            ("client-output-buffer-limit", self.output_limits.show()),
            ("maxmemory", self.maxmemory.to_string()),
            ("maxmemory-policy", self.policy.name().into()),
            ("appendonly", yes_no(self.appendonly)),
            ("appendfsync", self.appendfsync.name().into()),
            ("threads", self.threads.to_string()),
            ("tcp-backlog", self.tcp_backlog.to_string()),
            ("databases", self.databases.to_string()),
            ("notify-keyspace-events", notify::show(self.notify)),
            (
                "slowlog-log-slower-than",
                self.slowlog_slower_than.to_string(),
            ),
            ("slowlog-max-len", self.slowlog_max_len.to_string()),
            (
                "latency-monitor-threshold",
                self.latency_threshold.to_string(),
            ),
            ("latency-tracking", yes_no(self.latency_tracking)),
            (
                "latency-tracking-info-percentiles",
                self.latency_percentiles
                    .iter()
                    .map(|&p| percentile_text(p))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            (
                "tracking-table-max-keys",
                self.tracking_max_keys.to_string(),
            ),
            ("min-replicas-to-write", self.min_replicas.to_string()),
            ("min-replicas-max-lag", self.min_replicas_lag.to_string()),
            ("appendfilename", self.appendfilename.clone()),
            (
                "enable-protected-configs",
                self.protected_configs.name().into(),
            ),
            ("enable-debug-command", self.debug_command.name().into()),
            ("cluster-port", self.cluster_port.to_string()),
            ("tls-port", self.tls.port.to_string()),
            ("tls-cert-file", path(&self.tls.cert_file)),
            ("tls-key-file", path(&self.tls.key_file)),
            ("tls-ca-cert-file", path(&self.tls.ca_cert_file)),
            ("tls-auth-clients", self.tls.auth_clients.name().into()),
            ("tls-replication", yes_no(self.tls.replication)),
            ("tls-cluster", yes_no(self.tls.cluster)),
            ("aclfile", path(&self.aclfile)),
            ("acllog-max-len", self.acllog_max_len.to_string()),
            (
                "acl-pubsub-default",
                if self.acl_pubsub_all {
                    "allchannels"
                } else {
                    "resetchannels"
                }
                .into(),
            ),
        ];
        for (name, default) in COMPAT {
            let v = self.compat.get(name).cloned();
            params.push((name, v.unwrap_or_else(|| default.to_string())));
        }
        params
    }

    /// What the stores count of accesses (see [`crate::store::Store::set_lfu`]): 0
    /// unless the policy is an LFU one, else `lfu-log-factor` and `lfu-decay-time`.
    pub fn lfu(&self) -> u64 {
        if !self.policy.is_lfu() {
            return 0;
        }
        crate::store::lfu_settings(
            self.compat_u64("lfu-log-factor", 10),
            self.compat_u64("lfu-decay-time", 1),
        )
    }

    /// A numeric setting kept for compatibility (`stream-node-max-entries`, ...): its
    /// value, or `default` when not set.
    pub fn compat_u64(&self, name: &str, default: u64) -> u64 {
        self.compat
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// Applies one setting that may change while the server runs. The error is the
    /// reason, for `ERR CONFIG SET failed (possibly related to argument 'NAME') - ...`.
    pub fn set(&mut self, name: &str, value: &[u8]) -> Result<(), String> {
        let text = || String::from_utf8_lossy(value).into_owned();
        let memory =
            |min: usize, what: &str| match std::str::from_utf8(value).ok().and_then(parse_memory) {
                Some(v) if v >= min => Ok(v),
                _ => Err(format!("argument must be {what}")),
            };
        let name = canonical(&name.to_ascii_lowercase()).to_string();
        match name.as_str() {
            "requirepass" => {
                self.requirepass = (!value.is_empty()).then(|| value.to_vec());
                // The default user's password, as in Redis.
                self.acl = std::sync::Arc::new(
                    self.acl.with_default_password(self.requirepass.as_deref()),
                );
            }
            "acllog-max-len" => {
                self.acllog_max_len = match std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) if n >= 0 => n as usize,
                    Some(_) => {
                        return Err(format!(
                            "argument must be between 0 and {} inclusive",
                            i64::MAX
                        ))
                    }
                    None => return Err("argument couldn't be parsed into an integer".into()),
                }
            }
            "acl-pubsub-default" => {
                let v = text().to_ascii_lowercase();
                if v != "allchannels" && v != "resetchannels" {
                    return Err(
                        "argument(s) must be one of the following: allchannels, resetchannels"
                            .into(),
                    );
                }
                self.acl_pubsub_all = v == "allchannels";
            }
            "maxmemory" => self.maxmemory = memory(0, "a memory value")?,
            "maxmemory-policy" => self.policy = text().parse()?,
            "proto-max-bulk-len" => {
                self.limits.max_bulk = memory(1 << 20, "a memory value of at least 1mb")?
            }
            "proto-max-multibulk-len" => {
                self.limits.max_multibulk = memory(1, "a count of at least 1")?
            }
            "proto-inline-max-size" => {
                self.limits.max_inline = memory(1024, "a memory value of at least 1kb")?
            }
            "client-query-buffer-limit" => {
                self.max_query_buffer = memory(1 << 20, "a memory value of at least 1mb")?
            }
            "client-output-buffer-limit" => self.output_limits.set(&text())?,
            "appendfsync" => self.appendfsync = text().parse()?,
            "slowlog-log-slower-than" => {
                self.slowlog_slower_than = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or("argument couldn't be parsed into an integer")?
            }
            "slowlog-max-len" => {
                self.slowlog_max_len = match std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    Some(n) if n <= i64::MAX as u64 => n as usize,
                    _ => return Err("argument couldn't be parsed into an integer".into()),
                }
            }
            "latency-monitor-threshold" => {
                self.latency_threshold = match std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) if n >= 0 => n as u64,
                    Some(_) => {
                        return Err(format!(
                            "argument must be between 0 and {} inclusive",
                            i64::MAX
                        ))
                    }
                    None => return Err("argument couldn't be parsed into an integer".into()),
                }
            }
            "latency-tracking" => {
                self.latency_tracking = match text().to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err("argument must be 'yes' or 'no'".into()),
                }
            }
            "latency-tracking-info-percentiles" => {
                self.latency_percentiles = parse_percentiles(&text())?;
            }
            "tracking-table-max-keys" => {
                self.tracking_max_keys = match std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    Some(n) if n <= i64::MAX as u64 => n as usize,
                    _ => return Err("argument couldn't be parsed into an integer".into()),
                }
            }
            "min-replicas-to-write" | "min-replicas-max-lag" => {
                let n = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok().filter(|&n| n <= i32::MAX as u32))
                    .ok_or("argument couldn't be parsed into an integer")?;
                if name == "min-replicas-to-write" {
                    self.min_replicas = n;
                } else {
                    self.min_replicas_lag = n;
                }
            }
            "notify-keyspace-events" => {
                self.notify = notify::parse(&text())
                    .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?
            }
            "hll-sparse-max-bytes" | "stream-node-max-bytes" => {
                let v = redis_memory(value)?;
                let key = compat(&name).unwrap_or("hll-sparse-max-bytes");
                self.compat.insert(key, v.to_string());
            }
            "lfu-log-factor" | "lfu-decay-time" => {
                let v = std::str::from_utf8(value)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok())
                    .ok_or("argument couldn't be parsed into an integer")?;
                if !(0..=i32::MAX as i64).contains(&v) {
                    return Err(format!(
                        "argument must be between 0 and {} inclusive",
                        i32::MAX
                    ));
                }
                let key = compat(&name).unwrap_or("lfu-log-factor");
                self.compat.insert(key, v.to_string());
            }
            "stream-node-max-entries" => {
                let v = std::str::from_utf8(value)
                    .ok()
                    .and_then(|t| t.parse::<u64>().ok())
                    .filter(|&n| n <= i64::MAX as u64)
                    .ok_or("argument couldn't be parsed into an integer")?;
                self.compat.insert("stream-node-max-entries", v.to_string());
            }
            "dbfilename" => {
                let t = text();
                if t.is_empty() || t.contains('/') || t == "." || t == ".." {
                    return Err("dbfilename can't be a path, just a filename".into());
                }
                self.compat.insert("dbfilename", t);
            }
            "dir" => {
                let t = text();
                if !std::path::Path::new(&t).is_dir() {
                    return Err(format!("'{t}' is not a directory"));
                }
                self.compat.insert("dir", t);
            }
            "save" => {
                let pairs =
                    crate::snapshot::parse_schedule(&text()).ok_or("Invalid save parameters")?;
                let t: Vec<String> = pairs.iter().map(|(s, c)| format!("{s} {c}")).collect();
                self.compat.insert("save", t.join(" "));
            }
            n if compat(n).is_some() => {
                if let Some(key) = compat(n) {
                    self.compat.insert(key, text());
                }
            }
            _ if IMMUTABLE.contains(&name.as_str())
                || crate::tls::DIRECTIVES.contains(&name.as_str()) =>
            {
                return Err("can't set immutable config".into())
            }
            _ => return Err(format!("unknown setting '{name}'")),
        }
        debug_assert!(RUNTIME.contains(&name.as_str()) || compat(&name).is_some());
        Ok(())
    }
}

/// `latency-tracking-info-percentiles`: percentiles separated by spaces (none for an
/// empty value), each a number from 0 to 100, with Redis's errors.
fn parse_percentiles(text: &str) -> Result<Vec<f64>, String> {
    text.split_ascii_whitespace()
        .map(|t| {
            let v = t
                .parse::<f64>()
                .ok()
                // Not a number, or one past a double's range (Redis's strtod check).
                .filter(|v| {
                    !v.is_nan() && (v.is_finite() || t.to_ascii_lowercase().contains("inf"))
                })
                .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
            if !(0.0..=100.0).contains(&v) {
                return Err(
                    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                        .into(),
                );
            }
            Ok(v)
        })
        .collect()
}

/// A percentile as Redis writes it (`%f` without trailing zeros: `50`, `99.9`,
/// `12.5`), in CONFIG GET and in INFO latencystats (`p99.9=`).
pub fn percentile_text(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// `maxmemory-policy`: Redis's eight. The `volatile-*` ones evict only keys with a
/// deadline and, when none is left, refuse the write as noeviction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Eviction {
    /// Writes that may add memory get Redis's OOM error.
    #[default]
    NoEviction,
    /// Evict keys by sampled LRU (5 samples) until under the limit.
    AllKeysLru,
    /// Sampled LRU among the keys with a deadline.
    VolatileLru,
    /// Any key, drawn at random.
    AllKeysRandom,
    /// A key with a deadline, drawn at random.
    VolatileRandom,
    /// Of 5 keys with a deadline drawn at random, the one due first.
    VolatileTtl,
    /// Sampled LFU: of 5 keys drawn at random, the least frequently used (the access
    /// counter of [`crate::store::Entry::touched`], decayed; the least recently used
    /// of equals).
    AllKeysLfu,
    /// Sampled LFU among the keys with a deadline.
    VolatileLfu,
}

/// Every policy, in the order Redis's error lists them.
const POLICIES: [Eviction; 8] = [
    Eviction::VolatileLru,
    Eviction::VolatileLfu,
    Eviction::VolatileRandom,
    Eviction::VolatileTtl,
    Eviction::AllKeysLru,
    Eviction::AllKeysLfu,
    Eviction::AllKeysRandom,
    Eviction::NoEviction,
];

impl Eviction {
    /// The Redis name.
    pub fn name(self) -> &'static str {
        match self {
            Eviction::NoEviction => "noeviction",
            Eviction::AllKeysLru => "allkeys-lru",
            Eviction::VolatileLru => "volatile-lru",
            Eviction::AllKeysRandom => "allkeys-random",
            Eviction::VolatileRandom => "volatile-random",
            Eviction::VolatileTtl => "volatile-ttl",
            Eviction::AllKeysLfu => "allkeys-lfu",
            Eviction::VolatileLfu => "volatile-lfu",
        }
    }

    /// How keys are chosen and whether only keys with a deadline are (None:
    /// noeviction).
    pub fn pick(self) -> Option<(crate::store::Pick, bool)> {
        use crate::store::Pick;
        Some(match self {
            Eviction::NoEviction => return None,
            Eviction::AllKeysLru => (Pick::Lru, false),
            Eviction::VolatileLru => (Pick::Lru, true),
            Eviction::AllKeysRandom => (Pick::Random, false),
            Eviction::VolatileRandom => (Pick::Random, true),
            Eviction::VolatileTtl => (Pick::Ttl, true),
            Eviction::AllKeysLfu => (Pick::Lfu, false),
            Eviction::VolatileLfu => (Pick::Lfu, true),
        })
    }

    /// An LFU policy: the stores count accesses (OBJECT FREQ answers).
    pub fn is_lfu(self) -> bool {
        matches!(self, Eviction::AllKeysLfu | Eviction::VolatileLfu)
    }
}

/// Redis's reason for a `maxmemory-policy` it does not know (CONFIG SET, the file).
pub const POLICY_ERROR: &str = "argument(s) must be one of the following: volatile-lru, \
     volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, \
     noeviction";

impl std::str::FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> Result<Eviction, String> {
        let lower = s.to_ascii_lowercase();
        POLICIES
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| POLICY_ERROR.to_string())
    }
}

/// A memory size as Redis writes them: `100`, `10k` (1000), `10kb` (1024), `m`/`mb`,
/// `g`/`gb`.
pub fn parse_memory(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: usize = num.parse().ok()?;
    let mul: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mul)
}

/// A size as Redis's memory settings read it (`memtoull`): digits, then an optional
/// unit (b, k, kb, m, mb, g, gb, any case); no sign, no spaces; nothing at all is 0.
/// The product wraps as in Redis, and above `i64::MAX` is out of range.
fn redis_memory(value: &[u8]) -> Result<u64, String> {
    let not_memory = || "argument must be a memory value".to_string();
    let split = value
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(split);
    let mul: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1 << 10,
        b"m" => 1_000_000,
        b"mb" => 1 << 20,
        b"g" => 1_000_000_000,
        b"gb" => 1 << 30,
        _ => return Err(not_memory()),
    };
    if digits.len() >= 128 {
        return Err(not_memory());
    }
    // strtoull saturates on overflow.
    let n = digits.iter().fold(0u64, |n, &d| {
        n.checked_mul(10)
            .and_then(|n| n.checked_add((d - b'0') as u64))
            .unwrap_or(u64::MAX)
    });
    let v = n.wrapping_mul(mul);
    if v > i64::MAX as u64 {
        return Err(format!(
            "argument must be between 0 and {} inclusive",
            i64::MAX
        ));
    }
    Ok(v)
}

impl Default for Config {
    fn default() -> Config {
        Config {
            requirepass: None,
            limits: Limits::default(),
            max_query_buffer: 1 << 30,
            port: 6379,
            bind: "127.0.0.1".into(),
            maxmemory: 0,
            policy: Eviction::NoEviction,
            appendonly: false,
            appendfsync: Fsync::EverySec,
            threads: 1,
            output_limits: OutputLimits::default(),
            tcp_backlog: 511,
            databases: DEFAULT_DATABASES,
            notify: 0,
            slowlog_slower_than: 10_000,
            slowlog_max_len: 128,
            latency_threshold: 0,
            latency_tracking: true,
            latency_percentiles: vec![50.0, 99.0, 99.9],
            tracking_max_keys: 1_000_000,
            min_replicas: 0,
            min_replicas_lag: 10,
            compat: Default::default(),
            config_file: None,
            appendfilename: "appendonly.aof".into(),
            protected_configs: Access::No,
            debug_command: Access::No,
            cluster_port: 0,
            tls: Default::default(),
            acl: Default::default(),
            acl_users: Vec::new(),
            aclfile: None,
            acllog_max_len: 128,
            acl_pubsub_all: false,
        }
    }
}

/// The `notify-keyspace-events` setting: its event classes as flags, their letters, and
/// which keys the stores keep for them (the notifications themselves are
/// `crate::cmd::notify`).
pub mod notify {
    /// Generic commands (DEL, EXPIRE, RENAME, ...): `g`.
    pub const GENERIC: u32 = 1 << 0;
    /// String commands: `$`.
    pub const STRING: u32 = 1 << 1;
    /// List commands: `l`.
    pub const LIST: u32 = 1 << 2;
    /// Set commands: `s`.
    pub const SET: u32 = 1 << 3;
    /// Hash commands: `h`.
    pub const HASH: u32 = 1 << 4;
    /// Sorted-set commands: `z`.
    pub const ZSET: u32 = 1 << 5;
    /// Keys removed by their deadline: `x`.
    pub const EXPIRED: u32 = 1 << 6;
    /// Keys removed by maxmemory: `e`.
    pub const EVICTED: u32 = 1 << 7;
    /// Stream commands: `t`.
    pub const STREAM: u32 = 1 << 8;
    /// Module events: `d`.
    pub const MODULE: u32 = 1 << 9;
    /// Keyspace channel: `K`.
    pub const KEYSPACE: u32 = 1 << 10;
    /// Keyevent channel: `E`.
    pub const KEYEVENT: u32 = 1 << 11;
    /// Key misses: `m`.
    pub const KEY_MISS: u32 = 1 << 12;
    /// New keys: `n`.
    pub const NEW: u32 = 1 << 13;
    /// `A`: every class but key misses and new keys.
    pub const ALL: u32 =
        GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

    const CLASSES: &[(char, u32)] = &[
        ('g', GENERIC),
        ('$', STRING),
        ('l', LIST),
        ('s', SET),
        ('h', HASH),
        ('z', ZSET),
        ('x', EXPIRED),
        ('e', EVICTED),
        ('t', STREAM),
        ('d', MODULE),
        ('K', KEYSPACE),
        ('E', KEYEVENT),
        ('m', KEY_MISS),
        ('n', NEW),
    ];

    /// The flags of a `notify-keyspace-events` value, or None for an unknown character.
    pub fn parse(s: &str) -> Option<u32> {
        let mut f = 0;
        for c in s.chars() {
            f |= match c {
                'A' => ALL,
                c => CLASSES.iter().find(|(k, _)| *k == c)?.1,
            };
        }
        Some(f)
    }

    /// The value as CONFIG GET shows it (Redis's order; `A` for every class).
    pub fn show(f: u32) -> String {
        let mut s = String::new();
        if f & ALL == ALL {
            s.push('A');
        }
        for &(c, bit) in CLASSES {
            let in_all = ALL & bit != 0;
            if f & bit != 0 && !(in_all && f & ALL == ALL) {
                s.push(c);
            }
        }
        s
    }

    /// Which keys the stores keep for `flags` ([`crate::store::Store::keep_events`]).
    pub fn keep(flags: u32) -> u8 {
        if flags & (KEYSPACE | KEYEVENT) == 0 {
            return 0;
        }
        let mut keep = 0;
        if flags & EXPIRED != 0 {
            keep |= crate::store::KEEP_EXPIRED;
        }
        if flags & NEW != 0 {
            keep |= crate::store::KEEP_NEW;
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_settings_are_sorted_and_stored() {
        assert!(COMPAT.windows(2).all(|p| p[0].0 < p[1].0));
        let mut c = Config::default();
        c.set("list-max-listpack-size", b"4").unwrap();
        let p = c.params();
        assert!(p.contains(&("list-max-listpack-size", "4".to_string())));
        assert!(p.contains(&("hz", "10".to_string())));
        assert!(c.set("no-such-setting", b"1").is_err());
    }

    #[test]
    fn latency_percentiles_parse_and_show_as_redis_does() {
        let mut c = Config::default();
        let shown = |c: &Config| {
            c.params()
                .into_iter()
                .find(|(n, _)| *n == "latency-tracking-info-percentiles")
                .unwrap()
                .1
        };
        assert_eq!(shown(&c), "50 99 99.9");
        // What redis-server 7.0 shows for these.
        c.set(
            "latency-tracking-info-percentiles",
            b"12.5 -0 1e1 99.990 100 0",
        )
        .unwrap();
        assert_eq!(shown(&c), "12.5 -0 10 99.99 100 0");
        c.set("latency-tracking-info-percentiles", b"").unwrap();
        assert_eq!(shown(&c), "");
        assert!(c.latency_percentiles.is_empty());
        for (bad, why) in [
            ("101", "should sit between [0.0,100.0]"),
            ("-0.5", "should sit between [0.0,100.0]"),
            ("inf", "should sit between [0.0,100.0]"),
            (
                "abc",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
            (
                "nan",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
            (
                "1e400",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
            (
                "50 x",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
        ] {
            let e = c
                .set("latency-tracking-info-percentiles", bad.as_bytes())
                .unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // A refused value leaves the setting as it was.
        assert!(c.latency_percentiles.is_empty());
        assert_eq!(percentile_text(99.9), "99.9");
        assert_eq!(percentile_text(1e-7), "0");
    }
}
