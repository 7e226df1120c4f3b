//! `wirespeed kvs serve`: the Redis-protocol key-value server; `wirespeed kvs bench`: its
//! load generator; `wirespeed kvs check-aof`: the append-only log's checker and repair.
//!
//! A log the server refuses to open (damage other than a torn tail, a foreign file,
//! another version) stops `serve` with one line naming the file, where and what, and
//! exit status 2; the file is unchanged. `check-aof` exits 0 for a whole log (or after
//! `--fix` repaired it) and 2 for a damaged one or a file `--fix` will not touch.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Subcommand};
use std::path::PathBuf;

use wirespeed_kvs::aof::{self, Fsync, OpenError};
use wirespeed_kvs::conf;
use wirespeed_kvs::config::{parse_memory, Eviction};
use wirespeed_kvs::server::{somaxconn, BindError, Server, ServerConfig};
use wirespeed_loadgen::{self as loadgen, KeyDist, LoadSpec, ValueSize};

use crate::error::CliError;

/// `wirespeed kvs ...`
#[derive(Subcommand, Debug)]
pub enum KvsCommand {
    /// Serve the Redis protocol (RESP2/RESP3) until interrupted
    Serve(Box<ServeArgs>),
    /// Load against a RESP or memcached server (wirespeed, Redis, memcached): closed or open loop, every reply checked
    Bench(Box<BenchArgs>),
    /// Check an append-only log without changing it (exit 0 whole, 2 damaged); --fix keeps the valid prefix and moves the rest to a side file
    CheckAof(CheckAofArgs),
}

/// Arguments of `wirespeed kvs check-aof`.
#[derive(Args, Debug)]
pub struct CheckAofArgs {
    /// The log file
    pub file: PathBuf,

    /// Repair: keep the header and the records before the first bad one, move the rest
    /// to FILE.corrupt-<time> (a torn tail: FILE.torn-<time>); add the header to an old
    /// headerless log. A foreign file is left unchanged
    #[arg(long)]
    pub fix: bool,
}

/// Arguments of `wirespeed kvs bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Server address, HOST:PORT (a name such as localhost is resolved)
    #[arg(long, default_value = "127.0.0.1:6379", value_parser = host_port)]
    pub addr: SocketAddr,

    /// Authenticate every connection with AUTH PASSWORD first (a server with requirepass)
    #[arg(long)]
    pub password: Option<String>,

    /// Redis Cluster: --addr is one node; read the slot map (CLUSTER SLOTS) from it, keep
    /// a connection to every primary per client connection, send each request to the
    /// primary serving its key's slot, follow -MOVED and -ASK (RESP only)
    #[arg(long)]
    pub cluster: bool,

    /// Concurrent connections
    #[arg(long, default_value_t = 50)]
    pub connections: usize,

    /// Event-loop threads of the load generator; the connections are split across them
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// Requests per batch on a connection (closed loop only)
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,

    /// Requests in total (per rate, with --sweep)
    #[arg(long, default_value_t = 200_000)]
    pub requests: u64,

    /// Run for this many seconds (per rate, with --sweep) instead of --requests
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,

    /// Wire protocol: resp (Redis) or memcache (memcached text protocol)
    #[arg(long, default_value = "resp")]
    pub protocol: loadgen::Protocol,

    /// Open loop: requests/s in total on a fixed schedule, latency from each scheduled send
    #[arg(long, value_name = "R", conflicts_with = "sweep")]
    pub rate: Option<f64>,

    /// Open loop at each of these offered rates in turn, e.g. 20000,40000,60000
    #[arg(long, value_name = "RATES")]
    pub sweep: Option<String>,

    /// Linux: report this server process's CPU seconds over the run (from /proc/PID/stat);
    /// several (a cluster's nodes: PID,PID,... or the flag repeated) are reported each
    /// and summed
    #[arg(long, value_name = "PID", value_delimiter = ',')]
    pub server_pid: Vec<u32>,

    /// Name of the server in the sweep's JSON and plot [default: the address]
    #[arg(long)]
    pub label: Option<String>,

    /// Write the sweep's results to this JSON file (input of --svg-merge)
    #[arg(long, value_name = "FILE", requires = "sweep")]
    pub sweep_json: Option<PathBuf>,

    /// Write an SVG plot of latency against offered rate (with --sweep or --svg-merge)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Draw these --sweep-json files (a server each) on one --svg plot; no load is run
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "svg", conflicts_with_all = ["sweep", "rate"])]
    pub svg_merge: Vec<PathBuf>,

    /// Key space (16-byte keys)
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,

    /// How requests pick keys: uniform; zipf[:S] (rank r with probability proportional
    /// to 1/(r+1)^S, S 0.99 by default, the ranks spread over the key space); or
    /// hot:KEYFRAC:REQFRAC (share REQFRAC of the requests to the first share KEYFRAC of
    /// the keys, e.g. hot:0.2:0.8)
    #[arg(long, value_name = "DIST", default_value = "uniform")]
    pub key_dist: KeyDist,

    /// Value size in bytes: N; a range MIN-MAX (every size alike); or weighted sizes
    /// SIZE:WEIGHT,... (e.g. 64:0.7,1024:0.2,16384:0.1). Each key's size is fixed by the
    /// key, so the preload and every SET write it and every GET reply is checked
    #[arg(long, value_name = "SIZES", default_value = "64")]
    pub value_size: ValueSize,

    /// Share of GETs (the rest are SETs)
    #[arg(long, default_value_t = 0.9)]
    pub get_ratio: f64,

    /// Print {requests, secs, per_sec, p50_us, p90_us, p99_us, p999_us, max_us, mismatches,
    /// protocol, mode, offered_rate, key_dist, value_sizes, server_cpu_s,
    /// cpu_s_per_million, server_cpu_s_by_pid, cluster, moved, asks} (with --sweep: the
    /// sweep's document)
    #[arg(long)]
    pub json: bool,
}

/// `no`, `yes` or `local` (enable-debug-command, enable-protected-configs).
fn access(s: &str) -> Result<wirespeed_kvs::config::Access, String> {
    wirespeed_kvs::config::Access::parse(s)
        .ok_or_else(|| format!("'{s}': expected no, yes or local"))
}

/// Arguments of `wirespeed kvs serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Settings file in redis.conf form (`name value` lines); flags given here win
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// TCP port, 0 picks a free one [default: 6379]
    #[arg(long)]
    pub port: Option<u16>,

    /// Address to listen on, an IP address or a name such as localhost [default: 127.0.0.1, loopback only]
    #[arg(long, value_parser = host)]
    pub bind: Option<IpAddr>,

    /// Event loops, one per core to use [default: 1]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,

    /// Clients must AUTH with this password first
    #[arg(long)]
    pub requirepass: Option<String>,

    /// An ACL user, "NAME RULES...", e.g. "alice on >pw ~app:* +@read" (user; repeat the
    /// flag for more users)
    #[arg(long, value_name = "USER RULES")]
    pub user: Vec<String>,

    /// The ACL file: its users are loaded at start and by ACL LOAD, written by ACL SAVE
    /// (aclfile; not with --user)
    #[arg(long, value_name = "FILE")]
    pub aclfile: Option<PathBuf>,

    /// Entries ACL LOG keeps (acllog-max-len) [default: 128]
    #[arg(long, value_name = "N")]
    pub acllog_max_len: Option<u64>,

    /// Channels of new ACL users: resetchannels (none) or allchannels (acl-pubsub-default)
    /// [default: resetchannels]
    #[arg(long, value_name = "WHICH")]
    pub acl_pubsub_default: Option<String>,

    /// A replica authenticates to its primary with this password (masterauth)
    #[arg(long)]
    pub masterauth: Option<String>,

    /// ... and as this ACL user of the primary (masteruser) [default: its default user]
    #[arg(long)]
    pub masteruser: Option<String>,

    /// Longest bulk string accepted, e.g. 512mb (proto-max-bulk-len) [default: 512mb]
    #[arg(long, value_parser = memory_size)]
    pub max_bulk: Option<usize>,

    /// Follow a wirespeed primary from the start, as REPLICAOF host port does
    #[arg(long, num_args = 2, value_names = ["HOST", "PORT"])]
    pub replicaof: Option<Vec<String>>,

    /// Cluster mode (cluster-enabled yes): a node of a Redis Cluster, its bus on the port plus 10000
    #[arg(long)]
    pub cluster_enabled: bool,

    /// The cluster's node file, written by the server (cluster-config-file) [default: nodes.conf]
    #[arg(long, value_name = "FILE")]
    pub cluster_config_file: Option<PathBuf>,

    /// The cluster bus's port (cluster-port) [default: the port plus 10000]
    #[arg(long, value_name = "PORT")]
    pub cluster_port: Option<u16>,

    /// Milliseconds a node may be silent before it is flagged as failing (cluster-node-timeout) [default: 15000]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub cluster_node_timeout: Option<u64>,

    /// Who may run DEBUG: no, yes, or local (clients on a loopback address) (enable-debug-command) [default: no]
    #[arg(long, value_name = "WHO", value_parser = access)]
    pub enable_debug_command: Option<wirespeed_kvs::config::Access>,

    /// Who may CONFIG SET dir and dbfilename: no, yes, or local (enable-protected-configs) [default: no]
    #[arg(long, value_name = "WHO", value_parser = access)]
    pub enable_protected_configs: Option<wirespeed_kvs::config::Access>,

    /// Append-only log: replayed at start, every write appended [default: none, memory only]
    #[arg(long, value_name = "FILE")]
    pub aof: Option<PathBuf>,

    /// Directory of the RDB file (dir) [default: .]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,

    /// The RDB file, in Redis's format: loaded at start when there is no --aof, written
    /// by SAVE, BGSAVE, the save schedule and SHUTDOWN SAVE (dbfilename) [default: dump.rdb]
    #[arg(long, value_name = "NAME")]
    pub dbfilename: Option<String>,

    /// Save the RDB file after SECONDS if at least CHANGES writes were made, e.g.
    /// "3600 1 300 100"; "" for never (save) [default: ""]
    #[arg(long, value_name = "SECONDS CHANGES ...")]
    pub save: Option<String>,

    /// When the log reaches the disk: always (before the reply), everysec, no [default: everysec]
    #[arg(long)]
    pub appendfsync: Option<Fsync>,

    /// Memory limit of the dataset (e.g. 100mb, 2gb; 0: none), as INFO memory reports it [default: 0]
    #[arg(long, value_parser = memory_size)]
    pub maxmemory: Option<usize>,

    /// At the limit: noeviction (writes get an OOM error), allkeys-lru, allkeys-lfu, allkeys-random, volatile-lru, volatile-lfu, volatile-random or volatile-ttl [default: noeviction]
    #[arg(long)]
    pub maxmemory_policy: Option<Eviction>,

    /// Connections the kernel queues before they are accepted (listen backlog; capped by
    /// net.core.somaxconn) [default: 511]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i32::MAX as i64))]
    pub tcp_backlog: Option<u32>,

    /// Number of databases (SELECT 0 to N-1) [default: 16]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=wirespeed_kvs::config::MAX_DATABASES as i64))]
    pub databases: Option<u32>,
}

/// The start-up warning of a server reachable from other hosts with no password (Redis
/// refuses such clients in its protected mode; this server serves them, and says so).
fn open_warning(local: &SocketAddr) -> String {
    format!(
        "kvs: warning: listening on {local}, not a loopback address, with no requirepass: \
         anyone who can reach this port can read and change every key; \
         set requirepass or bind 127.0.0.1"
    )
}

/// An IP address, or a host name resolved to its first address (IPv4 first).
fn host(s: &str) -> Result<IpAddr, String> {
    if let Ok(ip) = s.parse() {
        return Ok(ip);
    }
    resolve(s, 0).map(|a| a.ip())
}

/// HOST:PORT with HOST an IP address or a name (resolved, IPv4 first).
fn host_port(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let (h, p) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("'{s}' is not HOST:PORT"))?;
    let port: u16 = p.parse().map_err(|_| format!("'{p}' is not a port"))?;
    resolve(h.trim_start_matches('[').trim_end_matches(']'), port)
}

fn resolve(h: &str, port: u16) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let addrs: Vec<SocketAddr> = (h, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{h}': {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("'{h}' has no address"))
}

fn memory_size(s: &str) -> Result<usize, String> {
    parse_memory(s).ok_or_else(|| format!("'{s}' is not a memory size (e.g. 100mb, 2gb)"))
}

/// Runs a `kvs` subcommand.
pub fn run(cmd: &KvsCommand) -> Result<(), CliError> {
    match cmd {
        KvsCommand::Serve(a) => serve(a),
        KvsCommand::Bench(a) => bench(a),
        KvsCommand::CheckAof(a) => check_aof(a),
    }
}

fn check_aof(a: &CheckAofArgs) -> Result<(), CliError> {
    let open = |source| CliError::Open {
        path: a.file.clone(),
        source,
    };
    if a.fix {
        let (report, fixed) = aof::check::fix(&a.file).map_err(|e| match e {
            aof::check::FixError::Io(e) => open(e),
            e => CliError::MalformedInput {
                path: a.file.clone(),
                message: e.to_string(),
            },
        })?;
        for line in report.lines(&a.file) {
            println!("{line}");
        }
        println!("{fixed}");
        return Ok(());
    }
    let report = aof::check::check(&a.file).map_err(open)?;
    for line in report.lines(&a.file) {
        println!("{line}");
    }
    if report.whole() {
        Ok(())
    } else {
        Err(CliError::MalformedInput {
            path: a.file.clone(),
            message: report.verdict(&a.file),
        })
    }
}

fn bench(a: &BenchArgs) -> Result<(), CliError> {
    use crate::kvs_bench::{self, SweepOutput};
    if !a.svg_merge.is_empty() {
        let out = a
            .svg
            .as_deref()
            .ok_or_else(|| CliError::Invalid("--svg-merge needs --svg OUT".into()))?;
        return kvs_bench::merge(&a.svg_merge, out);
    }
    if !(0.0..=1.0).contains(&a.get_ratio) {
        return Err(CliError::Invalid(
            "--get-ratio must be between 0 and 1".into(),
        ));
    }
    if a.connections == 0 || a.pipeline == 0 || a.keys == 0 || a.threads == 0 || a.requests == 0 {
        return Err(CliError::Invalid(
            "--connections, --pipeline, --keys, --threads and --requests must be at least 1".into(),
        ));
    }
    for (flag, value) in [("--connections", a.connections), ("--pipeline", a.pipeline)] {
        if value > 10_000 {
            return Err(CliError::Invalid(format!(
                "{flag} must be at most 10,000, not {value}"
            )));
        }
    }
    if a.value_size.max() > 1 << 20 {
        return Err(CliError::Invalid(format!(
            "--value-size must be at most 1 MiB (1,048,576 bytes), not {}",
            a.value_size.max()
        )));
    }
    if !(1..=1024).contains(&a.threads) {
        return Err(CliError::Invalid(
            "--threads must be between 1 and 1,024".into(),
        ));
    }
    if a.rate.is_some_and(|r| !kvs_bench::valid_rate(r)) {
        return Err(CliError::Invalid(
            "--rate must be above 0 and at most 1e9 requests per second".into(),
        ));
    }
    let duration = match a.duration {
        None => None,
        Some(d) if d > 0.0 && d <= 1e6 => std::time::Duration::try_from_secs_f64(d).ok(),
        Some(_) => None,
    };
    if a.duration.is_some() && duration.is_none() {
        return Err(CliError::Invalid(
            "--duration must be above 0 and at most 1,000,000 seconds".into(),
        ));
    }
    let rates = a.sweep.as_deref().map(kvs_bench::parse_rates).transpose()?;
    if a.svg.is_some() && rates.is_none() {
        return Err(CliError::Invalid(
            "--svg needs --sweep RATES (or --svg-merge FILES)".into(),
        ));
    }
    let io = |e: std::io::Error| CliError::Invalid(format!("{}: {e}", a.addr));
    if a.password.is_some() && a.protocol != loadgen::Protocol::Resp {
        return Err(CliError::Invalid(
            "--password needs --protocol resp (memcached has no AUTH)".into(),
        ));
    }
    if a.cluster && a.protocol != loadgen::Protocol::Resp {
        return Err(CliError::Invalid("--cluster needs --protocol resp".into()));
    }
    if a.cluster {
        loadgen::preload_cluster(a.addr, a.keys, &a.value_size, a.password.as_deref())
    } else {
        loadgen::preload_with(
            a.addr,
            a.protocol,
            a.keys,
            &a.value_size,
            a.password.as_deref(),
        )
    }
    .map_err(io)?;
    let spec = LoadSpec {
        addr: a.addr,
        protocol: a.protocol,
        connections: a.connections,
        threads: a.threads,
        pipeline: a.pipeline,
        requests: a.requests,
        duration,
        rate: a.rate,
        keys: a.keys,
        key_dist: a.key_dist,
        value_size: a.value_size.clone(),
        get_ratio: a.get_ratio,
        seed: 1,
        password: a.password.clone(),
        cluster: a.cluster,
    };
    if let Some(rates) = rates {
        let label = a.label.clone().unwrap_or_else(|| a.addr.to_string());
        let out = SweepOutput {
            label: &label,
            json_file: a.sweep_json.as_deref(),
            svg_file: a.svg.as_deref(),
            print_json: a.json,
        };
        return kvs_bench::sweep(&spec, &rates, &a.server_pid, &out);
    }
    let m = kvs_bench::measure(&spec, &a.server_pid)?;
    if a.json {
        println!("{}", m.json(&spec));
    } else {
        println!("{}", m.line(&spec));
    }
    if m.report.mismatches > 0 {
        return Err(CliError::Check(format!(
            "{} replies differed from the expected bytes",
            m.report.mismatches
        )));
    }
    Ok(())
}

fn serve(a: &ServeArgs) -> Result<(), CliError> {
    let mut config = ServerConfig::default();
    if let Some(path) = &a.config {
        let text = crate::files::read_bounded_text(path, conf::MAX_FILE)?;
        let warnings = conf::apply(&mut config, &text).map_err(|e| CliError::MalformedInput {
            path: path.clone(),
            message: e.to_string(),
        })?;
        for w in warnings {
            eprintln!("kvs: {}: {w}", path.display());
        }
        // CONFIG REWRITE writes it back.
        config.cmd.config_file = Some(std::path::absolute(path).unwrap_or_else(|_| path.clone()));
    }
    if let Some(p) = &a.requirepass {
        config.cmd.requirepass = (!p.is_empty()).then(|| p.as_bytes().to_vec());
    }
    for (name, value) in [
        ("acllog-max-len", a.acllog_max_len.map(|n| n.to_string())),
        ("acl-pubsub-default", a.acl_pubsub_default.clone()),
        ("masterauth", a.masterauth.clone()),
        ("masteruser", a.masteruser.clone()),
        ("dir", a.dir.clone()),
        ("dbfilename", a.dbfilename.clone()),
        ("save", a.save.clone()),
    ] {
        if let Some(v) = value {
            config
                .cmd
                .set(name, v.as_bytes())
                .map_err(|e| CliError::Invalid(format!("--{name}: {e}")))?;
        }
    }
    for u in &a.user {
        let mut line = u.as_bytes().to_vec();
        let mut ranges = Vec::new();
        wirespeed_kvs::resp::split_args(&mut line, &mut ranges)
            .map_err(|e| CliError::Invalid(format!("--user: {e}")))?;
        let words: Vec<&[u8]> = ranges.iter().map(|r| &line[r.clone()]).collect();
        wirespeed_kvs::acl::file::add_config_user(&mut config.cmd, &words)
            .map_err(|e| CliError::Invalid(format!("--user: {e}")))?;
    }
    if let Some(f) = &a.aclfile {
        config.cmd.aclfile = Some(f.clone());
    }
    if let Some(b) = a.max_bulk {
        config
            .cmd
            .set("proto-max-bulk-len", b.to_string().as_bytes())
            .map_err(|e| CliError::Invalid(format!("--max-bulk: {e}")))?;
    }
    if let Some(f) = a.appendfsync {
        config.cmd.appendfsync = f;
    }
    if let Some(v) = &a.replicaof {
        let port = v[1]
            .parse::<u16>()
            .map_err(|_| CliError::Invalid(format!("--replicaof: a bad port '{}'", v[1])))?;
        config.replicaof = Some((v[0].clone(), port));
    }
    if let Some(p) = a.cluster_port {
        config.cmd.cluster_port = p;
    }
    if a.cluster_enabled || a.cluster_config_file.is_some() || a.cluster_node_timeout.is_some() {
        let (file, timeout) = config.cluster.clone().unwrap_or_else(|| {
            (
                PathBuf::from(wirespeed_kvs::cluster::DEFAULT_FILE),
                wirespeed_kvs::cluster::DEFAULT_TIMEOUT,
            )
        });
        if a.cluster_enabled || config.cluster.is_some() {
            config.cluster = Some((
                a.cluster_config_file.clone().unwrap_or(file),
                a.cluster_node_timeout.unwrap_or(timeout),
            ));
        }
    }
    if let Some(path) = &a.aof {
        config.aof = Some((path.clone(), config.cmd.appendfsync));
    }
    if let Some((_, policy)) = &mut config.aof {
        *policy = config.cmd.appendfsync;
    }
    if let Some(m) = a.maxmemory {
        config.cmd.maxmemory = m;
    }
    if let Some(p) = a.maxmemory_policy {
        config.cmd.policy = p;
    }
    if let Some(t) = a.threads {
        config.threads = t as usize;
    }
    if let Some(n) = a.tcp_backlog {
        config.cmd.tcp_backlog = n;
    }
    if let Some(n) = a.databases {
        config.cmd.databases = n as usize;
    }
    if let Some(v) = a.enable_debug_command {
        config.cmd.debug_command = v;
    }
    if let Some(v) = a.enable_protected_configs {
        config.cmd.protected_configs = v;
    }
    let ip: IpAddr = match a.bind {
        Some(ip) => ip,
        None => host(&config.cmd.bind).map_err(|e| CliError::Invalid(format!("bind: {e}")))?,
    };
    let addr = SocketAddr::new(ip, a.port.unwrap_or(config.cmd.port));
    let backlog = config.cmd.tcp_backlog;
    let server_aof = config.aof.clone();
    wirespeed_kvs::server::exit_on_panic();
    let mut server = Server::bind(addr, config).map_err(|e| match e {
        BindError::Io(e) => CliError::Invalid(format!("cannot listen on {addr}: {e}")),
        BindError::Log {
            path,
            error: OpenError::Io(source),
        } => CliError::Open { path, source },
        BindError::Log { path, error } => CliError::MalformedInput {
            message: error.message(&path),
            path,
        },
        e @ (BindError::Databases { .. }
        | BindError::Cluster(_)
        | BindError::Tls(_)
        | BindError::Acl(_)
        | BindError::Rdb(_)) => CliError::Invalid(e.to_string()),
    })?;
    let local = server
        .local_addr()
        .map_err(|e| CliError::Invalid(format!("listening address: {e}")))?;
    if let Some((path, _)) = &server_aof {
        let load = server.load_report();
        if let Some(cut) = &load.torn {
            eprintln!("kvs: warning: {}: {cut}", path.display());
        }
        if let Some((stale, bytes)) = &load.removed_rewrite {
            eprintln!(
                "kvs: removed {} ({bytes} bytes), left by a log rewrite that did not finish; the log is {}",
                stale.display(),
                path.display()
            );
        }
        eprintln!(
            "kvs: {}: {} records replayed, {} keys",
            path.display(),
            server.load_report().records,
            server.keys()
        );
    }
    eprintln!("kvs: {} event loop(s)", server.threads());
    if let Some(max) = somaxconn().filter(|&max| max < backlog) {
        eprintln!(
            "kvs: warning: the tcp-backlog of {backlog} cannot be had: \
             /proc/sys/net/core/somaxconn caps it at {max}"
        );
    }
    if server.open() && !local.ip().is_loopback() {
        eprintln!("{}", open_warning(&local));
    }
    if let Some(tls) = server.tls_addr() {
        eprintln!("kvs: TLS on {tls}");
    }
    eprintln!("kvs: listening on {local}");
    // SIGTERM and SIGINT stop the loop, which then syncs the log.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Invalid(format!("cannot handle signal {sig}: {e}")))?;
    }
    server
        .run(stop)
        .map_err(|e| CliError::Invalid(format!("server stopped: {e}")))?;
    eprintln!("kvs: stopped");
    Ok(())
}
