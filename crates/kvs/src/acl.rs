//! Access control lists, as Redis 7.2 has them: users, each with its passwords and
//! one or more selectors of what it may run (commands and subcommands, key patterns
//! with read and write permissions, channel patterns).
//!
//! **Rules** ([`User::apply`], ACL SETUSER, `user` directives, the ACL file): `on` /
//! `off`; `>pass` and `<pass` add and remove a password, `#hash` and `!hash` the same
//! by its SHA-256 (only hashes are kept, shown and saved; a password is checked by
//! comparing its hash with each one in constant time), `nopass`, `resetpass`;
//! `+cmd`, `-cmd`, `+cmd|sub`, `-cmd|sub`, `+cmd|firstarg` (a command without
//! subcommands allowed with that first argument only: `+select|0`), `+@category`,
//! `-@category`, `allcommands` (`+@all`), `nocommands` (`-@all`); `~pattern` (read and
//! write), `%R~pattern`, `%W~pattern`, `%RW~pattern`, `allkeys` (`~*`), `resetkeys`;
//! `&pattern`, `allchannels` (`&*`), `resetchannels` (new users and selectors start
//! with no channel unless `acl-pubsub-default` is `allchannels`); `(...)` adds a
//! selector, `clearselectors` drops them; `reset` makes the user as new. The command
//! rules are kept as the ordered list that ACL GETUSER and ACL LIST show, compacted as
//! Redis compacts them (a rule replaces an earlier one for the same command or
//! category, and a command's rule replaces those of its subcommands).
//!
//! **Checks** ([`User::check`]), in Redis's order for each selector: the command (or
//! the subcommand of a container), then each key argument against the patterns with
//! the access the command needs of it (read, write, both, or either for existence and
//! length tests such as EXISTS, TYPE, STRLEN: see [`key_needs`]), then each channel
//! (PUBLISH, SUBSCRIBE, SSUBSCRIBE, SPUBLISH; PSUBSCRIBE's patterns must equal one of
//! the user's). A command passes when one selector allows all of it; otherwise the
//! denial reported is the worst one across selectors (a channel before a key before
//! the command, then the later argument), as Redis picks it.
//!
//! **Where it is checked**: for every command a client sends, after the arity and
//! authentication checks (`crate::cmd::exec`), queued commands included; again at
//! EXEC for each queued command; for each `redis.call` of a script, as the caller's
//! user; for a blocked command run again when its key is ready; and for the commands
//! served while a script is busy. A refusal is logged (ACL LOG) and counted (INFO).
//!
//! **Cost**: the users are an immutable snapshot ([`Users`]) in the settings each loop
//! holds, swapped whole by every change (ACL SETUSER, DELUSER, LOAD, CONFIG SET
//! requirepass) with a new epoch number. A session remembers the epoch at which its
//! user was found allowed everything (`allcommands allkeys allchannels`: the default
//! user as it starts); the check of a command is then one comparison of that number
//! with the snapshot's ([`open`]). Anything else takes the full check.
//!
//! **An attacker's pass** (a client with a password and limited permissions), and what
//! stops it here:
//! - *Scripts*: `redis.call` is checked as the caller's user with the script context,
//!   so EVAL cannot reach keys or commands the user lacks; EVAL's own keys need read
//!   and write (EVAL_RO's read).
//! - *MULTI/EXEC*: commands are checked when queued (a refusal makes EXEC abort) and
//!   again at EXEC, so permissions revoked in between apply.
//! - *Blocked commands* carry their user and are checked again when served.
//! - *SORT BY / GET* patterns name keys only known while sorting: as in Redis they need
//!   a selector with read access to every key (SORT's own keys are checked as usual).
//! - *MIGRATE*: its key (or the keys after KEYS) are checked for read and write.
//! - *OBJECT, MEMORY USAGE, DEBUG*: the first two check their key; DEBUG is
//!   `@admin @dangerous` (and `enable-debug-command` still applies).
//! - *CLIENT KILL* of other users' connections, CONFIG SET, ACL itself: `@admin
//!   @dangerous` subcommands, each nameable (`-client|kill`); `aclfile` cannot be
//!   changed at run time (immutable), so a user allowed CONFIG SET cannot point ACL
//!   SAVE or LOAD at another file.
//! - *Passwords*: compared by hash in constant time against every hash of the user;
//!   AUTH failures are logged with the user name tried (never the password), and AUTH,
//!   HELLO AUTH and ACL SETUSER arguments are redacted from MONITOR and the slow log.
//! - *Deleted users*: their connections are closed (ACL DELUSER, ACL LOAD), and a
//!   session whose user is gone is refused and closed on its next command. As in
//!   Redis 7.2, ACL SETUSER `off` or `resetpass` only stops new logins (the user's
//!   connections stay), and a subscriber is closed when its channels are taken away.
//! - *Bounds*: an ACL SETUSER (or a `user` line) applies at most [`MAX_RULES`] rules;
//!   a selector holds at most [`MAX_ITEMS`] key patterns, channel patterns and
//!   first arguments together, a user at most [`MAX_SELECTORS`] selectors and
//!   [`MAX_ITEMS`] passwords; the ACL file is read up to [`file::MAX_FILE`] bytes, with
//!   lines up to [`file::MAX_LINE`]; a bad file is a typed error ([`file::LoadError`])
//!   that names its lines, and nothing of it applies.

pub mod catalog;
pub mod file;
pub mod log;
mod sha256;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::cmd::table::{self, Command};
use crate::cmd::{eq, Ctx, Session};
use catalog::{catalog, WORDS};
pub use log::{Context, Denial, Log, Reason};

/// Most rules one ACL SETUSER (or one `user` line) applies.
pub const MAX_RULES: usize = 10_000;
/// Most key patterns, channel patterns and first arguments of one selector together
/// (and most passwords of one user).
pub const MAX_ITEMS: usize = 10_000;
/// Most selectors of one user (the root one included).
pub const MAX_SELECTORS: usize = 1024;

/// Epochs of user snapshots (0 is never one).
static EPOCH: AtomicU64 = AtomicU64::new(1);

fn next_epoch() -> u64 {
    EPOCH.fetch_add(1, Ordering::Relaxed) + 1
}

/// Why a rule was refused (the texts are Redis's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    /// Not a rule.
    Syntax,
    /// A command, subcommand or category this server does not have.
    Unknown,
    /// A key pattern after `allkeys`.
    KeysAfterAll,
    /// A channel pattern after `allchannels`.
    ChannelsAfterAll,
    /// `<pass` or `!hash` of a password the user does not have.
    NoSuchPassword,
    /// `#hash` or `!hash` that is not 64 lower-case hexadecimal digits.
    BadHash,
    /// `+container|subcommand|arg`.
    FirstArgOfSubcommand,
    /// Past [`MAX_ITEMS`] or [`MAX_SELECTORS`].
    TooMany,
}

impl RuleError {
    /// The reason, as ACL SETUSER says it.
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Syntax => "Syntax error",
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::KeysAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelsAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => {
                "The password you are trying to remove from the user does not exist"
            }
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
            RuleError::TooMany => "Too many patterns, passwords or selectors for one user",
        }
    }
}

/// True when `s` holds white space or NUL (not allowed in user names and patterns).
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&b| b == 0 || b == b' ' || (b'\t'..=b'\r').contains(&b))
}

/// What a command needs of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    /// Reads it.
    pub read: bool,
    /// Writes it.
    pub write: bool,
}

/// The key arguments of `cmd` called with `args` (name first), with what each needs,
/// read from the key-spec flags of the command table ([`Command::key_flags`]) as
/// Redis reads them: reading the value (`access`) needs read permission, changing it
/// (`update`, `insert`, `delete`) write permission, and existence, type and length
/// tests (neither) either one. Shard channels (SPUBLISH, SSUBSCRIBE) are not keys
/// here; MIGRATE's keys are found as Redis finds them; a key count that is not valid
/// means no keys (the command itself will refuse it).
pub fn key_needs(cmd: &Command, args: &[&[u8]]) -> Vec<(usize, Need)> {
    let flags: Vec<(usize, u16)> = if cmd.name == "migrate" {
        let f = table::KEY_RW | table::KEY_ACCESS | table::KEY_DELETE;
        migrate_keys(args).into_iter().map(|i| (i, f)).collect()
    } else {
        cmd.key_flags(args).unwrap_or_default()
    };
    let writes = table::KEY_UPDATE | table::KEY_INSERT | table::KEY_DELETE;
    flags
        .into_iter()
        .map(|(i, f)| {
            let need = Need {
                read: f & table::KEY_ACCESS != 0,
                write: f & writes != 0,
            };
            (i, need)
        })
        .collect()
}

/// MIGRATE's keys: the one key, or (with an empty key) those after KEYS.
fn migrate_keys(args: &[&[u8]]) -> Vec<usize> {
    let Some(key) = args.get(3) else {
        return Vec::new();
    };
    let mut i = 6;
    while i < args.len() {
        if eq(args[i], "keys") {
            return if key.is_empty() {
                (i + 1..args.len()).collect()
            } else {
                Vec::new()
            };
        }
        if eq(args[i], "auth") {
            i += 1;
        } else if eq(args[i], "auth2") {
            i += 2;
        }
        i += 1;
    }
    vec![3]
}

/// The channel arguments of `cmd` (true for PSUBSCRIBE's patterns).
pub fn channel_args(cmd: &Command, args: &[&[u8]]) -> Vec<(usize, bool)> {
    match cmd.name {
        "publish" | "spublish" => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..args.len()).map(|i| (i, false)).collect(),
        "psubscribe" => (1..args.len()).map(|i| (i, true)).collect(),
        _ => Vec::new(),
    }
}

/// A key pattern and its permissions.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyPattern {
    pattern: Vec<u8>,
    read: bool,
    write: bool,
}

impl KeyPattern {
    fn describe(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match (self.read, self.write) {
            (true, false) => b"%R~",
            (false, true) => b"%W~",
            _ => b"~",
        });
        out.extend_from_slice(&self.pattern);
    }
}

/// What one selector allows.
#[derive(Clone, Debug)]
struct Selector {
    /// Every command (`+@all` and nothing taken away since).
    all_commands: bool,
    /// The command rules start from `+@all` (commands added later would be allowed).
    from_all: bool,
    allowed: [u64; WORDS],
    /// Commands allowed with these first arguments only (`+select|0`).
    first_args: BTreeMap<u16, Vec<Vec<u8>>>,
    all_keys: bool,
    keys: Vec<KeyPattern>,
    all_channels: bool,
    channels: Vec<Vec<u8>>,
    /// The command rules as shown (allowed?, rule in lower case).
    rules: Vec<(bool, String)>,
}

/// Why a selector refused a command: the reason and the argument.
type Refusal = (Reason, usize);

impl Selector {
    fn new(all_channels: bool) -> Selector {
        Selector {
            all_commands: false,
            from_all: false,
            allowed: [0; WORDS],
            first_args: BTreeMap::new(),
            all_keys: false,
            keys: Vec::new(),
            all_channels,
            channels: Vec::new(),
            rules: Vec::new(),
        }
    }

    fn items(&self) -> usize {
        self.keys.len()
            + self.channels.len()
            + self.first_args.values().map(Vec::len).sum::<usize>()
    }

    fn bit(&self, id: u16) -> bool {
        self.allowed[id as usize / 64] >> (id % 64) & 1 == 1
    }

    fn set_bit(&mut self, id: u16, on: bool) {
        let (w, b) = (id as usize / 64, id % 64);
        if on {
            self.allowed[w] |= 1 << b;
        } else {
            self.allowed[w] &= !(1 << b);
            self.all_commands = false;
        }
    }

    /// Allows or denies a command (a container: with all its subcommands).
    fn change(&mut self, id: u16, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.remove(&id);
        for s in catalog().entry(id).subs.clone() {
            self.set_bit(s, allow);
        }
    }

    /// Records a command rule: it replaces the same rule and the rules of the same
    /// command's subcommands.
    fn remember(&mut self, allow: bool, rule: &[u8]) {
        let rule = String::from_utf8_lossy(rule).to_ascii_lowercase();
        self.rules.retain(|(_, r)| {
            !(r == &rule
                || (r.len() > rule.len()
                    && r.starts_with(&rule)
                    && r.as_bytes()[rule.len()] == b'|'))
        });
        self.rules.push((allow, rule));
    }

    fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("allkeys") || is("~*") {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || is("&*") {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed = [u64::MAX; WORDS];
            self.all_commands = true;
            self.from_all = true;
            self.rules.clear();
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed = [0; WORDS];
            self.all_commands = false;
            self.from_all = false;
            self.rules.clear();
            self.first_args.clear();
        } else if op[0] == b'~' || op[0] == b'%' {
            return self.add_key_pattern(op);
        } else if op[0] == b'&' {
            if self.all_channels {
                return Err(RuleError::ChannelsAfterAll);
            }
            let p = &op[1..];
            if has_spaces(p) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == p) {
                if self.items() >= MAX_ITEMS {
                    return Err(RuleError::TooMany);
                }
                self.channels.push(p.to_vec());
            }
        } else if op.len() > 1 && op[1] == b'@' && (op[0] == b'+' || op[0] == b'-') {
            let allow = op[0] == b'+';
            let cat = catalog::category(&op[2..]).ok_or(RuleError::Unknown)?;
            self.remember(allow, &op[1..]);
            for (id, e) in catalog().entries().iter().enumerate() {
                if e.cats & cat != 0 {
                    self.change(id as u16, allow);
                }
            }
        } else if op[0] == b'+' {
            self.allow_command(&op[1..])?;
        } else if op[0] == b'-' {
            let id = catalog().find(&op[1..]).ok_or(RuleError::Unknown)?;
            self.change(id, false);
            let name = catalog().entry(id).name.clone();
            self.remember(false, name.as_bytes());
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeysAfterAll);
        }
        let (read, write, pattern) = if op[0] == b'%' {
            let tilde = op
                .iter()
                .position(|&b| b == b'~')
                .ok_or(RuleError::Syntax)?;
            let flags = &op[1..tilde];
            let r = flags
                .iter()
                .filter(|b| b.eq_ignore_ascii_case(&b'r'))
                .count();
            let w = flags
                .iter()
                .filter(|b| b.eq_ignore_ascii_case(&b'w'))
                .count();
            if flags.is_empty() || r > 1 || w > 1 || r + w != flags.len() {
                return Err(RuleError::Syntax);
            }
            (r == 1, w == 1, &op[tilde + 1..])
        } else {
            (true, true, &op[1..])
        };
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(k) => {
                k.read |= read;
                k.write |= write;
            }
            None => {
                if self.items() >= MAX_ITEMS {
                    return Err(RuleError::TooMany);
                }
                self.keys.push(KeyPattern {
                    pattern: pattern.to_vec(),
                    read,
                    write,
                });
            }
        }
        Ok(())
    }

    /// `+name`: a command, a subcommand, or a command with one first argument.
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let cat = catalog();
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let id = cat.find(name).ok_or(RuleError::Unknown)?;
            self.change(id, true);
            let full = cat.entry(id).name.clone();
            self.remember(true, full.as_bytes());
            return Ok(());
        };
        let (head, arg) = (&name[..bar], &name[bar + 1..]);
        let id = cat.find(head).ok_or(RuleError::Unknown)?;
        if cat.entry(id).container.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if arg.is_empty() || has_spaces(arg) {
            return Err(RuleError::Syntax);
        }
        if !cat.entry(id).subs.is_empty() {
            let sub = cat.find(name).ok_or(RuleError::Unknown)?;
            self.change(sub, true);
        } else {
            let list = self.first_args.entry(id).or_default();
            if !list.iter().any(|a| a.eq_ignore_ascii_case(arg)) {
                if list.len() >= MAX_ITEMS {
                    return Err(RuleError::TooMany);
                }
                list.push(arg.to_vec());
            }
            if self.items() > MAX_ITEMS {
                if let Some(l) = self.first_args.get_mut(&id) {
                    l.pop();
                }
                return Err(RuleError::TooMany);
            }
        }
        self.remember(true, name);
        Ok(())
    }

    /// The command rules as ACL GETUSER shows them.
    fn describe_commands(&self) -> String {
        let mut s = String::from(if self.from_all { "+@all" } else { "-@all" });
        for (allow, r) in &self.rules {
            s.push(' ');
            s.push(if *allow { '+' } else { '-' });
            s.push_str(r);
        }
        s
    }

    /// The key patterns as ACL GETUSER shows them.
    fn describe_keys(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            k.describe(&mut out);
        }
        out
    }

    /// The channel patterns as ACL GETUSER shows them.
    fn describe_channels(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(c);
        }
        out
    }

    /// The selector as ACL LIST shows it (keys, channels, commands).
    fn describe(&self, out: &mut Vec<u8>) {
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                k.describe(out);
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend_from_slice(self.describe_commands().as_bytes());
    }

    /// Whether this selector lets `cmd` (its id: `call`) run with `args`; the keys
    /// are worked out once for all selectors (`keys`).
    fn check(
        &self,
        call: (u16, bool),
        cmd: &Command,
        args: &[&[u8]],
        keys: &mut Option<Vec<(usize, Need)>>,
    ) -> Result<(), Refusal> {
        let (id, sub) = call;
        if !self.all_commands && !cmd.has(table::NO_AUTH) && !self.bit(id) {
            let arg = args.get(if sub { 2 } else { 1 });
            let ok = match (self.first_args.get(&id), arg) {
                (Some(list), Some(a)) => list.iter().any(|f| f.eq_ignore_ascii_case(a)),
                _ => false,
            };
            if !ok {
                return Err((Reason::Command, 0));
            }
        }
        if !self.all_keys {
            for &(i, need) in keys.get_or_insert_with(|| key_needs(cmd, args)).iter() {
                if !self.key_allowed(args[i], need) {
                    return Err((Reason::Key, i));
                }
            }
        }
        if !self.all_channels {
            for (i, pattern) in channel_args(cmd, args) {
                if !self.channel_allowed(args[i], pattern) {
                    return Err((Reason::Channel, i));
                }
            }
        }
        Ok(())
    }

    fn key_allowed(&self, key: &[u8], need: Need) -> bool {
        self.all_keys
            || self.keys.iter().any(|p| {
                (p.read || !need.read)
                    && (p.write || !need.write)
                    && crate::glob::glob(&p.pattern, key)
            })
    }

    fn channel_allowed(&self, channel: &[u8], pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if pattern {
                    p == channel
                } else {
                    crate::glob::glob(p, channel)
                }
            })
    }

    /// Read access to every key (`allkeys`, or `~*` / `%R~*`).
    fn reads_every_key(&self) -> bool {
        self.all_keys || self.keys.iter().any(|k| k.read && k.pattern == b"*")
    }
}

/// One user.
#[derive(Clone, Debug)]
pub struct User {
    name: Vec<u8>,
    on: bool,
    nopass: bool,
    skip_sanitize: bool,
    passwords: Vec<[u8; 32]>,
    /// The root selector first.
    selectors: Vec<Selector>,
}

/// A refused command: why, and the argument at fault (0: the command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Denied {
    /// Why.
    pub reason: Reason,
    /// The argument (a key or a channel), 0 for the command.
    pub at: usize,
    /// The command's (or subcommand's) id in the catalog.
    pub id: u16,
}

/// A `#hash` or `!hash` argument: 64 lower-case hexadecimal digits.
fn parse_hash(h: &[u8]) -> Result<[u8; 32], RuleError> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if h.len() != 64 {
        return Err(RuleError::BadHash);
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(h.chunks_exact(2)) {
        let (a, b) = (digit(pair[0]), digit(pair[1]));
        *o = (a.ok_or(RuleError::BadHash)? << 4) | b.ok_or(RuleError::BadHash)?;
    }
    Ok(out)
}

impl User {
    /// A new user: off, no password, no permissions (channels per `all_channels`, the
    /// `acl-pubsub-default`).
    pub fn new(name: &[u8], all_channels: bool) -> User {
        User {
            name: name.to_vec(),
            on: false,
            nopass: false,
            skip_sanitize: false,
            passwords: Vec::new(),
            selectors: vec![Selector::new(all_channels)],
        }
    }

    /// The default user as it starts: on, no password, every command, key and channel.
    pub fn default_user() -> User {
        let mut u = User::new(b"default", false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            let _ = u.apply(op.as_bytes(), false);
        }
        u
    }

    /// The name.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// On (may authenticate).
    pub fn enabled(&self) -> bool {
        self.on
    }

    /// Takes any password.
    pub fn nopass(&self) -> bool {
        self.nopass
    }

    /// May run anything: a selector with every command, key and channel.
    pub fn unrestricted(&self) -> bool {
        self.selectors
            .iter()
            .any(|s| s.all_commands && s.all_keys && s.all_channels)
    }

    /// Applies one rule (`all_channels`: the `acl-pubsub-default` for new selectors and
    /// `reset`). On error the user may be half changed: callers apply rules to a copy.
    pub fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if op.is_empty() {
            return Ok(());
        }
        if is("on") {
            self.on = true;
        } else if is("off") {
            self.on = false;
        } else if is("skip-sanitize-payload") {
            self.skip_sanitize = true;
        } else if is("sanitize-payload") {
            self.skip_sanitize = false;
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                sha256::digest(&op[1..])
            } else {
                parse_hash(&op[1..])?
            };
            if !self.passwords.contains(&hash) {
                if self.passwords.len() >= MAX_ITEMS {
                    return Err(RuleError::TooMany);
                }
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                sha256::digest(&op[1..])
            } else {
                parse_hash(&op[1..])?
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            if self.selectors.len() >= MAX_SELECTORS {
                return Err(RuleError::TooMany);
            }
            let mut inner = op[1..op.len() - 1].to_vec();
            let mut ranges = Vec::new();
            crate::resp::split_args(&mut inner, &mut ranges).map_err(|_| RuleError::Syntax)?;
            let mut s = Selector::new(all_channels);
            for r in ranges {
                let rule = &inner[r];
                if !rule.is_empty() {
                    s.apply(rule)?;
                }
            }
            self.selectors.push(s);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            for rule in ["resetpass", "resetkeys", "resetchannels"] {
                self.apply(rule.as_bytes(), all_channels)?;
            }
            if all_channels {
                self.apply(b"allchannels", all_channels)?;
            }
            for rule in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                self.apply(rule.as_bytes(), all_channels)?;
            }
        } else {
            self.selectors[0].apply(op)?;
        }
        Ok(())
    }

    /// True when `pass` is one of the user's passwords (or it takes any); every hash
    /// is compared, in constant time.
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        if self.nopass {
            return true;
        }
        let hash = sha256::digest(pass);
        self.passwords
            .iter()
            .fold(false, |ok, p| crate::cmd::ct_eq(p, &hash) | ok)
    }

    /// The flags as ACL GETUSER lists them.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.on { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        f.push(if self.skip_sanitize {
            "skip-sanitize-payload"
        } else {
            "sanitize-payload"
        });
        f
    }

    /// The password hashes, in hexadecimal.
    pub fn password_hashes(&self) -> Vec<String> {
        self.passwords.iter().map(|p| sha256::hex(p)).collect()
    }

    /// The rules that make this user, as ACL LIST and the ACL file write them.
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for f in self.flags() {
            out.extend_from_slice(f.as_bytes());
            out.push(b' ');
        }
        for h in self.password_hashes() {
            out.push(b'#');
            out.extend_from_slice(h.as_bytes());
            out.push(b' ');
        }
        for (i, s) in self.selectors.iter().enumerate() {
            if i == 0 {
                s.describe(&mut out);
            } else {
                out.extend_from_slice(b" (");
                s.describe(&mut out);
                out.push(b')');
            }
        }
        out
    }

    /// ACL GETUSER's commands, keys and channels of each selector (the root first).
    pub fn selector_fields(&self) -> Vec<[(&'static str, Vec<u8>); 3]> {
        self.selectors
            .iter()
            .map(|s| {
                [
                    ("commands", s.describe_commands().into_bytes()),
                    ("keys", s.describe_keys()),
                    ("channels", s.describe_channels()),
                ]
            })
            .collect()
    }

    /// Whether the user may run `cmd` with `args` (name first).
    pub fn check(&self, cmd: &Command, args: &[&[u8]]) -> Result<(), Denied> {
        let call = catalog().call(cmd, args);
        let mut keys = None;
        let mut worst: Refusal = (Reason::Command, 0);
        let rank = |r: Reason| match r {
            Reason::Command | Reason::Auth => 1,
            Reason::Key => 2,
            Reason::Channel => 3,
        };
        for s in &self.selectors {
            match s.check(call, cmd, args, &mut keys) {
                Ok(()) => return Ok(()),
                Err((r, i)) => {
                    if rank(r) > rank(worst.0) || (r == worst.0 && i > worst.1) {
                        worst = (r, i);
                    }
                }
            }
        }
        Err(Denied {
            reason: worst.0,
            at: worst.1,
            id: call.0,
        })
    }

    /// Whether one selector both lets `cmd` run and reads every key (SORT's BY and GET
    /// patterns name keys only known while sorting).
    pub fn reads_every_key(&self, cmd: &Command, args: &[&[u8]]) -> bool {
        let call = catalog().call(cmd, args);
        let mut keys = None;
        self.selectors
            .iter()
            .any(|s| s.reads_every_key() && s.check(call, cmd, args, &mut keys).is_ok())
    }

    /// Whether a subscription (a channel, or a pattern with `pattern`) is allowed.
    pub fn may_subscribe(&self, name: &[u8], pattern: bool) -> bool {
        self.selectors
            .iter()
            .any(|s| s.channel_allowed(name, pattern))
    }

    /// True when every channel permission of `old` is still in this user's (a
    /// subscriber of `old` keeps its subscriptions).
    pub fn keeps_channels_of(&self, old: &User) -> bool {
        if self.selectors.iter().any(|s| s.all_channels) {
            return true;
        }
        old.selectors.iter().all(|o| {
            !o.all_channels
                && o.channels
                    .iter()
                    .all(|c| self.selectors.iter().any(|s| s.channels.contains(c)))
        })
    }
}

/// The error text of a denial (`verbose`: naming the key or channel, as ACL DRYRUN).
pub fn denial_message(d: &Denied, user: &[u8], args: &[&[u8]], verbose: bool) -> String {
    let user = String::from_utf8_lossy(user);
    let arg = || String::from_utf8_lossy(args.get(d.at).copied().unwrap_or_default());
    match d.reason {
        Reason::Command | Reason::Auth => format!(
            "User {user} has no permissions to run the '{}' command",
            catalog().entry(d.id).name
        ),
        Reason::Key if verbose => {
            format!(
                "User {user} has no permissions to access the '{}' key",
                arg()
            )
        }
        Reason::Key => "No permissions to access a key".into(),
        Reason::Channel if verbose => format!(
            "User {user} has no permissions to access the '{}' channel",
            arg()
        ),
        Reason::Channel => "No permissions to access a channel".into(),
    }
}

/// The users: an immutable snapshot, replaced whole by every change.
#[derive(Debug)]
pub struct Users {
    map: BTreeMap<Vec<u8>, Arc<User>>,
    epoch: u64,
    /// The default user is on and takes any password: connections start
    /// authenticated.
    open: bool,
}

impl Default for Users {
    fn default() -> Users {
        Users::initial(None)
    }
}

/// Applies `ops` (selector arguments merged) to `user`; the error names the rule.
fn apply_all(
    user: &mut User,
    ops: &[Vec<u8>],
    all_channels: bool,
) -> Result<(), (Vec<u8>, RuleError)> {
    if ops.len() > MAX_RULES {
        return Err((ops[MAX_RULES].clone(), RuleError::TooMany));
    }
    for op in ops {
        user.apply(op, all_channels).map_err(|e| (op.clone(), e))?;
    }
    Ok(())
}

/// Joins a selector spread over several arguments (`(~key`, `+get)`) into one; Err
/// with the index of the argument that opened a selector never closed.
pub fn merge_selectors(ops: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::with_capacity(ops.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, op) in ops.iter().enumerate() {
        match open.as_mut() {
            Some((_, sel)) => {
                sel.push(b' ');
                sel.extend_from_slice(op);
                if op.last() == Some(&b')') {
                    out.extend(open.take().map(|(_, s)| s));
                }
            }
            None if op.first() == Some(&b'(') && op.last() != Some(&b')') => {
                open = Some((i, op.to_vec()));
            }
            None => out.push(op.to_vec()),
        }
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(out),
    }
}

impl Users {
    /// The users at start: the default user, with `requirepass` as its password.
    pub fn initial(requirepass: Option<&[u8]>) -> Users {
        let mut map = BTreeMap::new();
        map.insert(
            b"default".to_vec(),
            Arc::new(with_password(User::default_user(), requirepass)),
        );
        Users::from_map(map)
    }

    fn from_map(map: BTreeMap<Vec<u8>, Arc<User>>) -> Users {
        let open = map.get(&b"default"[..]).is_some_and(|u| u.on && u.nopass);
        Users {
            map,
            epoch: next_epoch(),
            open,
        }
    }

    /// This snapshot's number (a new one for every change).
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Connections start authenticated (the default user is on and takes any
    /// password).
    #[inline]
    pub fn open(&self) -> bool {
        self.open
    }

    /// The user named `name`.
    pub fn get(&self, name: &[u8]) -> Option<&Arc<User>> {
        self.map.get(name)
    }

    /// Every user, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<User>> {
        self.map.values()
    }

    /// How many users.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Never: the default user is always there.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The user `name` if it is on and `pass` is its password.
    pub fn authenticate(&self, name: &[u8], pass: &[u8]) -> Option<&Arc<User>> {
        self.map
            .get(name)
            .filter(|u| u.on)
            .filter(|u| u.password_ok(pass))
    }

    /// These users with the default user's password set as `requirepass` sets it
    /// (none: any password).
    pub fn with_default_password(&self, pass: Option<&[u8]>) -> Users {
        let mut map = self.map.clone();
        let default = map
            .get(&b"default"[..])
            .map(|u| (**u).clone())
            .unwrap_or_else(User::default_user);
        map.insert(b"default".to_vec(), Arc::new(with_password(default, pass)));
        Users::from_map(map)
    }

    /// ACL SETUSER: these users with `name` created or changed by `ops` (all or
    /// nothing); also the user as it was, if it existed. The error is the reply's text
    /// without its `ERR`.
    pub fn set_user(
        &self,
        name: &[u8],
        ops: &[&[u8]],
        all_channels: bool,
    ) -> Result<(Users, Option<Arc<User>>), String> {
        let merged = merge_selectors(ops).map_err(|i| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(ops[i])
            )
        })?;
        let old = self.map.get(name).cloned();
        let mut user = match &old {
            Some(u) => (**u).clone(),
            None => User::new(name, all_channels),
        };
        apply_all(&mut user, &merged, all_channels).map_err(|(op, e)| {
            format!(
                "Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(&op),
                e.message()
            )
        })?;
        let mut map = self.map.clone();
        map.insert(name.to_vec(), Arc::new(user));
        Ok((Users::from_map(map), old))
    }

    /// ACL DELUSER: these users without `names` (never the default user); how many
    /// there were.
    pub fn delete(&self, names: &[&[u8]]) -> (Users, usize) {
        let mut map = self.map.clone();
        let gone = names
            .iter()
            .filter(|n| **n != b"default" && map.remove(**n).is_some())
            .count();
        (Users::from_map(map), gone)
    }
}

/// `user` with its password reset to `pass` (none: `nopass`), as `requirepass` does.
fn with_password(mut user: User, pass: Option<&[u8]>) -> User {
    let _ = user.apply(b"resetpass", false);
    match pass {
        Some(p) => {
            let mut op = b">".to_vec();
            op.extend_from_slice(p);
            let _ = user.apply(&op, false);
        }
        None => {
            let _ = user.apply(b"nopass", false);
        }
    }
    user
}

/// A session's user: its name, and what was found of it in the users' snapshot it last
/// looked at.
#[derive(Debug, Default)]
pub struct Principal {
    /// The user's name (None: `default`).
    name: Option<Arc<[u8]>>,
    user: Option<Arc<User>>,
    /// The snapshot `user` was found in (0: not yet looked up).
    epoch: u64,
    /// The snapshot in which the user may run anything (0: none).
    open_epoch: u64,
}

impl Principal {
    /// The user's name.
    pub fn name(&self) -> &[u8] {
        self.name.as_deref().unwrap_or(b"default")
    }

    /// The name to share (None: `default`).
    pub fn shared_name(&self) -> Option<Arc<[u8]>> {
        self.name.clone()
    }

    /// Switches to the user `name` (None: `default`), looked up on the next command.
    pub fn switch(&mut self, name: Option<Arc<[u8]>>) {
        *self = Principal {
            name,
            ..Principal::default()
        };
    }

    /// The user as of `users` (None once it was deleted).
    fn resolve(&mut self, users: &Users) -> Option<Arc<User>> {
        if self.epoch != users.epoch {
            let user = users.get(self.name()).cloned()?;
            self.open_epoch = if user.unrestricted() { users.epoch } else { 0 };
            self.user = Some(user);
            self.epoch = users.epoch;
        }
        self.user.clone()
    }
}

/// True when the session's user may run anything, as of the settings' users (the
/// check on every command: one comparison).
#[inline]
pub fn open(ctx: &Ctx) -> bool {
    ctx.session.acl.open_epoch == ctx.config.acl.epoch()
}

/// The outcome of the full check.
enum Verdict {
    Allowed,
    /// The session's user was deleted.
    Gone,
    Denied(Denied, Arc<User>),
}

fn judge(users: &Users, session: &mut Session, cmd: &Command, args: &[&[u8]]) -> Verdict {
    let Some(user) = session.acl.resolve(users) else {
        return Verdict::Gone;
    };
    if session.acl.open_epoch == users.epoch {
        return Verdict::Allowed;
    }
    match user.check(cmd, args) {
        Ok(()) => Verdict::Allowed,
        Err(d) => Verdict::Denied(d, user),
    }
}

/// The error for a session whose user no longer exists (it is closed).
fn gone(session: &mut Session) -> String {
    session.quit = true;
    format!(
        "NOPERM User {} no longer exists",
        String::from_utf8_lossy(session.acl.name())
    )
}

/// The CLIENT LIST line of the session's client (ACL LOG's client-info).
fn client_line(ctx: &Ctx) -> String {
    let meta = ctx.session.meta.clone().or_else(|| {
        ctx.shared
            .hub
            .clients()
            .into_iter()
            .find(|m| m.id == ctx.session.id)
    });
    meta.map(|m| m.line(ctx.now)).unwrap_or_default()
}

/// Records a denial in ACL LOG (and INFO's counters).
pub(crate) fn record(ctx: &Ctx, reason: Reason, context: Context, object: &[u8], username: &[u8]) {
    let client = client_line(ctx);
    ctx.shared.acl_log.add(
        Denial {
            reason,
            context,
            object,
            username,
            client,
        },
        ctx.now,
        ctx.config.acllog_max_len,
    );
}

/// Logs a denial of a command (its full name, or the key or channel at fault).
fn log_denied(ctx: &Ctx, d: &Denied, user: &User, args: &[&[u8]], context: Context) {
    let name;
    let object: &[u8] = match d.reason {
        Reason::Command | Reason::Auth => {
            name = catalog().entry(d.id).name.clone();
            name.as_bytes()
        }
        _ => args.get(d.at).copied().unwrap_or_default(),
    };
    record(ctx, d.reason, context, object, user.name());
}

/// The check of a command a client sent (or queues in MULTI) when its user may not run
/// everything: Err is the `-NOPERM` reply; the denial is logged.
pub(crate) fn admit(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> Result<(), String> {
    if cmd.name == "debug" {
        // `enable-debug-command` comes first in Redis: the handler refuses it then.
        let peer = ctx.session.meta.as_ref().map(|m| m.addr.as_str());
        if !ctx.config.debug_command.allows(peer) {
            return Ok(());
        }
    }
    let users = ctx.config.acl.clone();

    match judge(&users, ctx.session, cmd, args) {
        Verdict::Allowed => Ok(()),
        Verdict::Gone => Err(gone(ctx.session)),
        Verdict::Denied(d, user) => {
            let context = if ctx.session.tx.queuing() {
                Context::Multi
            } else {
                Context::Toplevel
            };
            log_denied(ctx, &d, &user, args, context);
            Err(format!(
                "NOPERM {}",
                denial_message(&d, user.name(), args, false)
            ))
        }
    }
}

/// The check of a `redis.call` from a script, as the caller's user.
pub(crate) fn admit_script(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> Result<(), String> {
    let users = ctx.config.acl.clone();
    match judge(&users, ctx.session, cmd, args) {
        Verdict::Allowed => Ok(()),
        Verdict::Gone => Err(gone(ctx.session)),
        Verdict::Denied(d, user) => {
            log_denied(ctx, &d, &user, args, Context::Lua);
            Err(format!(
                "ERR ACL failure in script: {}",
                denial_message(&d, user.name(), args, false)
            ))
        }
    }
}

/// Whether the session's user may run `cmd` with `args` (`redis.acl_check_cmd`): the
/// full check (command, keys, channels), nothing logged; false for a user deleted.
pub(crate) fn allows(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> bool {
    if open(ctx) {
        return true;
    }
    let users = ctx.config.acl.clone();
    matches!(judge(&users, ctx.session, cmd, args), Verdict::Allowed)
}

/// The check at EXEC of a command queued before (the rules may have changed since).
pub(crate) fn admit_queued(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> Result<(), String> {
    let users = ctx.config.acl.clone();
    let reason = match judge(&users, ctx.session, cmd, args) {
        Verdict::Allowed => return Ok(()),
        Verdict::Gone => return Err(gone(ctx.session)),
        Verdict::Denied(d, user) => {
            log_denied(ctx, &d, &user, args, Context::Multi);
            d.reason
        }
    };
    Err(format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {}",
        match reason {
            Reason::Key => "no permission to touch the specified keys",
            Reason::Channel => "no permission to access one of the channels used as arguments",
            _ => "no permission to execute the command or subcommand",
        }
    ))
}

/// The check of a command served while a script is busy (not logged).
pub(crate) fn permits(users: &Users, session: &mut Session, args: &[&[u8]]) -> Result<(), String> {
    if session.acl.open_epoch == users.epoch {
        return Ok(());
    }
    let Some(cmd) = table::lookup(args[0]) else {
        return Ok(());
    };
    match judge(users, session, cmd, args) {
        Verdict::Allowed => Ok(()),
        Verdict::Gone => Err(gone(session)),
        Verdict::Denied(d, user) => Err(format!(
            "NOPERM {}",
            denial_message(&d, user.name(), args, false)
        )),
    }
}

/// Whether the session's user may read every key with `cmd` (SORT's BY and GET).
pub(crate) fn reads_every_key(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) -> bool {
    if open(ctx) {
        return true;
    }
    let users = ctx.config.acl.clone();
    ctx.session
        .acl
        .resolve(&users)
        .is_some_and(|u| u.reads_every_key(cmd, args))
}

/// Makes `name` (None: `default`) the session's user, also where CLIENT LIST reads it.
pub(crate) fn set_user(session: &mut Session, name: Option<Arc<[u8]>>) {
    if let Some(m) = &session.meta {
        *m.user.lock().unwrap_or_else(|p| p.into_inner()) = name.clone();
    }
    session.acl.switch(name);
}

/// AUTH and HELLO AUTH: on success the session is authenticated as `name`; a failure
/// is logged (`object`: the command's name as sent).
pub(crate) fn login(ctx: &mut Ctx, name: &[u8], pass: &[u8], object: &[u8]) -> bool {
    if ctx.config.acl.authenticate(name, pass).is_some() {
        let shared = (name != b"default").then(|| Arc::from(name));
        set_user(ctx.session, shared);
        ctx.session.authed = true;
        true
    } else {
        let context = if ctx.session.tx.queuing() {
            Context::Multi
        } else {
            Context::Toplevel
        };
        record(ctx, Reason::Auth, context, object, name);
        false
    }
}

/// Closes the connections whose user `doomed` says (ACL DELUSER, ACL LOAD); the
/// caller's own is closed after its reply.
pub(crate) fn kill_users(ctx: &mut Ctx, doomed: impl Fn(&[u8]) -> bool) {
    let me = ctx.session.id;
    let mut msgs = Vec::new();
    for m in ctx.shared.hub.clients() {
        let user = m.user.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if !doomed(user.as_deref().unwrap_or(b"default")) {
            continue;
        }
        if m.id == me {
            ctx.session.quit = true;
        } else {
            msgs.push((m.id, crate::hub::Msg::Kill));
        }
    }
    if doomed(ctx.session.acl.name()) {
        ctx.session.quit = true;
    }
    ctx.shared.hub.deliver(msgs);
}

/// After ACL SETUSER changed `new`'s channel permissions: closes its subscribers that
/// hold a subscription the user no longer allows, as Redis does.
pub(crate) fn kill_revoked_subscribers(ctx: &mut Ctx, old: &User, new: &User) {
    if new.keeps_channels_of(old) {
        return;
    }
    let hub = &ctx.shared.hub;
    let mine: Vec<u64> = hub
        .clients()
        .into_iter()
        .filter(|m| {
            let u = m.user.lock().unwrap_or_else(|p| p.into_inner());
            u.as_deref().unwrap_or(b"default") == new.name()
        })
        .map(|m| m.id)
        .collect();
    if mine.is_empty() {
        return;
    }
    let mut doomed = Vec::new();
    hub.subs().each(|kind, name, id| {
        let pattern = kind == crate::hub::Kind::Pattern;
        if mine.contains(&id) && !doomed.contains(&id) && !new.may_subscribe(name, pattern) {
            doomed.push(id);
        }
    });
    let me = ctx.session.id;
    if doomed.contains(&me) {
        ctx.session.quit = true;
    }
    hub.deliver(
        doomed
            .into_iter()
            .filter(|&id| id != me)
            .map(|id| (id, crate::hub::Msg::Kill))
            .collect(),
    );
}

/// Random hexadecimal characters (ACL GENPASS), from the system's random source.
pub fn random_hex(chars: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    let mut s = sha256::hex(&bytes);
    s.truncate(chars);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &str) -> User {
        let mut u = User::new(b"u", false);
        let words: Vec<&[u8]> = rules.split(' ').map(str::as_bytes).collect();
        for r in merge_selectors(&words).expect("balanced") {
            u.apply(&r, false)
                .unwrap_or_else(|e| panic!("{}: {}", String::from_utf8_lossy(&r), e.message()));
        }
        u
    }

    fn commands(u: &User) -> String {
        u.selectors[0].describe_commands()
    }

    fn run(u: &User, args: &[&str]) -> Result<(), (Reason, usize)> {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        let cmd = table::lookup(a[0]).expect("a command");
        u.check(cmd, &a).map_err(|d| (d.reason, d.at))
    }

    #[test]
    fn flags_passwords_and_description() {
        let mut u =
            user("on >p1 >p2 #34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6");
        assert!(u.password_ok(b"p1") && u.password_ok(b"p2") && u.password_ok(b"passwd4"));
        assert!(!u.password_ok(b"p3"));
        u.apply(b"<p1", false).unwrap();
        assert!(!u.password_ok(b"p1"));
        assert_eq!(u.apply(b"<p1", false), Err(RuleError::NoSuchPassword));
        assert_eq!(u.apply(b"#abc", false), Err(RuleError::BadHash));
        assert_eq!(u.apply(&[b'#'; 65][..], false), Err(RuleError::BadHash));
        u.apply(
            b"!34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6",
            false,
        )
        .unwrap();
        assert_eq!(u.password_hashes().len(), 1);
        u.apply(b"nopass", false).unwrap();
        assert!(u.password_ok(b"anything") && u.password_hashes().is_empty());
        let h = user("on nopass resetchannels &foo +@all");
        assert_eq!(
            String::from_utf8(h.describe()).unwrap(),
            "on nopass sanitize-payload resetchannels &foo +@all"
        );
        let d = User::default_user();
        assert_eq!(
            String::from_utf8(d.describe()).unwrap(),
            "on nopass sanitize-payload ~* &* +@all"
        );
        assert!(d.unrestricted());
        let s =
            user("-@all +get resetchannels &c1 %R~foo1 %W~bar1 ~baz1 (-@all +set %R~foo2 %W~foo2)");
        assert_eq!(
            String::from_utf8(s.describe()).unwrap(),
            "off sanitize-payload %R~foo1 %W~bar1 ~baz1 resetchannels &c1 -@all +get (~foo2 resetchannels -@all +set)"
        );
    }

    #[test]
    fn command_rules_compact_as_redis_does() {
        let mut u = user("+@all -@hash -@slow +hget");
        assert_eq!(commands(&u), "+@all -@hash -@slow +hget");
        u.apply(b"-@hash", false).unwrap();
        assert_eq!(commands(&u), "+@all -@slow +hget -@hash");
        u.apply(b"-@all", false).unwrap();
        assert_eq!(commands(&u), "-@all");
        for (rules, want) in [
            ("-@all +@HASH +@hash +@HaSh", "-@all +@hash"),
            ("-@all +HGET +hget +hGeT", "-@all +hget"),
            ("-@all +hget -hset +hset -hget", "-@all +hset -hget"),
            (
                "-@all +client|list +client|list +config|get +config +acl|list -acl",
                "-@all +client|list +config -acl",
            ),
            (
                "-@all +select|0 +select|0 +debug|segfault +debug",
                "-@all +select|0 +debug",
            ),
            (
                "-@all +config +config|get -config|set +config",
                "-@all +config",
            ),
            ("-@all -@dangerous", "-@all -@dangerous"),
            ("+@all -client|kill", "+@all -client|kill"),
        ] {
            assert_eq!(commands(&user(rules)), want, "{rules}");
        }
        for cat in catalog::NAMES {
            assert_eq!(
                commands(&user(&format!("+@all -@{cat}"))),
                format!("+@all -@{cat}")
            );
        }
    }

    #[test]
    fn rule_errors() {
        let mut u = user("");
        for (rule, e) in [
            ("+nosuch", RuleError::Unknown),
            ("+@nosuch", RuleError::Unknown),
            ("+config|get|appendonly", RuleError::FirstArgOfSubcommand),
            ("+config|asdf", RuleError::Unknown),
            ("-config|asdf", RuleError::Unknown),
            ("+get|key1|key2", RuleError::Unknown),
            ("+debug|", RuleError::Syntax),
            ("+select|a b", RuleError::Syntax),
            ("what", RuleError::Syntax),
            ("%~x", RuleError::Syntax),
            ("%RR~x", RuleError::Syntax),
            ("%X~x", RuleError::Syntax),
            ("(this-is-invalid)", RuleError::Syntax),
            (")", RuleError::Syntax),
        ] {
            assert_eq!(u.apply(rule.as_bytes(), false), Err(e), "{rule}");
        }
        u.apply(b"allkeys", false).unwrap();
        assert_eq!(u.apply(b"~foo", false), Err(RuleError::KeysAfterAll));
        u.apply(b"&*", false).unwrap();
        assert_eq!(u.apply(b"&foo", false), Err(RuleError::ChannelsAfterAll));
        assert_eq!(
            u.apply(b"(&* &fail)", false),
            Err(RuleError::ChannelsAfterAll)
        );
        // Bounded: past the most patterns a selector holds.
        let mut big = user("");
        for i in 0..MAX_ITEMS {
            big.apply(format!("~k{i}").as_bytes(), false).unwrap();
        }
        assert_eq!(big.apply(b"~one-more", false), Err(RuleError::TooMany));
        assert_eq!(big.apply(b"&one-more", false), Err(RuleError::TooMany));
        assert!(
            big.apply(b"~k7", false).is_ok(),
            "a pattern it has is no new item"
        );
    }

    #[test]
    fn keys_are_checked_with_the_access_the_command_needs() {
        let u = user("+@all %R~read* %W~write* %RW~rw*");
        assert_eq!(run(&u, &["get", "read"]), Ok(()));
        assert_eq!(run(&u, &["get", "write"]), Err((Reason::Key, 1)));
        assert_eq!(run(&u, &["lpush", "write", "x"]), Ok(()));
        assert_eq!(run(&u, &["set", "write", "x"]), Ok(()));
        assert_eq!(
            run(&u, &["set", "write", "x", "get"]),
            Err((Reason::Key, 1))
        );
        assert_eq!(run(&u, &["set", "rw", "x", "GET"]), Ok(()));
        assert_eq!(run(&u, &["copy", "read", "write"]), Ok(()));
        assert_eq!(run(&u, &["copy", "write", "read"]), Err((Reason::Key, 1)));
        assert_eq!(run(&u, &["sort", "read", "STORE", "write"]), Ok(()));
        assert_eq!(
            run(&u, &["sort", "write", "STORE", "write"]),
            Err((Reason::Key, 1))
        );
        assert_eq!(run(&u, &["eval", "", "1", "rw1"]), Ok(()));
        assert_eq!(run(&u, &["eval", "", "1", "read"]), Err((Reason::Key, 3)));
        assert_eq!(run(&u, &["eval_ro", "", "1", "read"]), Ok(()));
        assert_eq!(run(&u, &["eval", "", "0", "read"]), Ok(()));
        assert_eq!(run(&u, &["eval", "", "-1", "read"]), Ok(()));
        assert_eq!(run(&u, &["eval", "", "3", "rw", "read"]), Ok(()));
        for c in ["hexists", "sismember", "hstrlen"] {
            assert_eq!(run(&u, &[c, "read", "f"]), Ok(()));
            assert_eq!(run(&u, &[c, "write", "f"]), Ok(()));
            assert_eq!(run(&u, &[c, "nothing", "f"]), Err((Reason::Key, 1)));
        }
        for c in [
            "strlen", "llen", "scard", "zcard", "type", "exists", "touch",
        ] {
            assert_eq!(run(&u, &[c, "write"]), Ok(()), "{c}");
            assert_eq!(run(&u, &[c, "nothing"]), Err((Reason::Key, 1)), "{c}");
        }
        assert_eq!(run(&u, &["memory", "usage", "write"]), Ok(()));
        assert_eq!(
            run(&u, &["sintercard", "2", "write", "read"]),
            Err((Reason::Key, 2))
        );
        assert_eq!(run(&u, &["pfcount", "read", "read"]), Ok(()));
        assert_eq!(
            run(&u, &["zcount", "write", "0", "1"]),
            Err((Reason::Key, 1))
        );
        let m = |tail: &[&str]| {
            let mut a = vec!["migrate", "whatever", "whatever"];
            a.extend_from_slice(tail);
            run(&u, &a)
        };
        assert_eq!(m(&["rw", "0", "500"]), Ok(()));
        assert_eq!(m(&["read", "0", "500"]), Err((Reason::Key, 3)));
        assert_eq!(m(&["", "0", "5000", "KEYS", "rw"]), Ok(()));
        assert_eq!(
            m(&["", "0", "5000", "AUTH", "KEYS", "KEYS", "write"]),
            Err((Reason::Key, 9))
        );
        assert_eq!(
            m(&["", "0", "5000", "AUTH2", "USER", "KEYS", "KEYS", "rw"]),
            Ok(())
        );
        let geo = [
            "georadius",
            "read",
            "1",
            "2",
            "3",
            "M",
            "STOREDIST",
            "write",
        ];
        assert_eq!(run(&u, &geo), Ok(()));
        let geo = ["georadius", "write1", "1", "2", "3", "M", "STORE", "write2"];
        assert_eq!(run(&u, &geo), Err((Reason::Key, 1)));
    }

    #[test]
    fn commands_subcommands_first_args_and_channels() {
        let u = user("-@all +client|id +select|0 +debug|object &foo:1 &bar:* ~*");
        assert_eq!(run(&u, &["client", "id"]), Ok(()));
        assert_eq!(
            run(&u, &["client", "kill", "type", "master"]),
            Err((Reason::Command, 0))
        );
        assert_eq!(run(&u, &["select", "0"]), Ok(()));
        assert_eq!(run(&u, &["select", "1"]), Err((Reason::Command, 0)));
        assert_eq!(run(&u, &["debug", "OBJECT", "k"]), Ok(()));
        assert_eq!(run(&u, &["debug", "segfault"]), Err((Reason::Command, 0)));
        assert_eq!(
            run(&u, &["auth", "x"]),
            Ok(()),
            "no-auth commands always run"
        );
        let p = user("+@all ~* resetchannels &foo:1 &bar:*");
        assert_eq!(run(&p, &["publish", "foo:1", "m"]), Ok(()));
        assert_eq!(run(&p, &["publish", "bar:2", "m"]), Ok(()));
        assert_eq!(run(&p, &["publish", "zap", "m"]), Err((Reason::Channel, 1)));
        assert_eq!(
            run(&p, &["subscribe", "foo:1", "zap"]),
            Err((Reason::Channel, 2))
        );
        assert_eq!(run(&p, &["psubscribe", "bar:*"]), Ok(()));
        assert_eq!(
            run(&p, &["psubscribe", "bar:baz"]),
            Err((Reason::Channel, 1))
        );
        assert_eq!(
            run(&p, &["spublish", "zap", "m"]),
            Err((Reason::Channel, 1))
        );
        assert_eq!(run(&p, &["sunsubscribe", "zap"]), Ok(()));
        // A subcommand's categories, and the container's.
        let s = user("+@all -memory|doctor ~*");
        assert_eq!(run(&s, &["memory", "doctor"]), Err((Reason::Command, 0)));
        assert_eq!(run(&s, &["memory", "stats"]), Ok(()));
        let r = user("-@all +@read ~*");
        assert_eq!(run(&r, &["get", "k"]), Ok(()));
        assert_eq!(run(&r, &["set", "k", "v"]), Err((Reason::Command, 0)));
        assert_eq!(run(&r, &["eval_ro", "", "0"]), Err((Reason::Command, 0)));
    }

    #[test]
    fn selectors_pick_the_worst_denial_and_do_not_combine() {
        let u = user("+mget ~key (+mget ~key ~otherkey)");
        assert_eq!(run(&u, &["get", "key"]), Err((Reason::Command, 0)));
        assert_eq!(
            run(&u, &["mget", "otherkey", "someotherkey"]),
            Err((Reason::Key, 2))
        );
        assert_eq!(
            run(&u, &["mget", "key", "otherkey", "someotherkey"]),
            Err((Reason::Key, 3))
        );
        let v = user("(%R~read* +@all) (%W~write* +@all)");
        assert_eq!(run(&v, &["get", "readx"]), Ok(()));
        assert_eq!(run(&v, &["lpush", "writex", "1"]), Ok(()));
        assert_eq!(run(&v, &["copy", "read", "write"]), Err((Reason::Key, 2)));
        let w = user("+@write ~write::*");
        let mut w2 = w.clone();
        w2.apply(b"(+@read ~read::*)", false).unwrap();
        assert_eq!(run(&w2, &["set", "write::foo", "bar"]), Ok(()));
        assert_eq!(run(&w2, &["get", "read::foo"]), Ok(()));
        assert_eq!(run(&w2, &["get", "write::foo"]), Err((Reason::Key, 1)));
        assert!(!w2.reads_every_key(table::lookup(b"sort").unwrap(), &[b"sort", b"write::x"]));
        let s = user("(+sort ~mylist %R~*)");
        assert!(s.reads_every_key(table::lookup(b"sort").unwrap(), &[b"sort", b"mylist"]));
    }

    #[test]
    fn selectors_merge_across_arguments() {
        let ops: Vec<&[u8]> = vec![b"on", b"(~key5", b"+get", b")", b"(~key6 +get)"];
        assert_eq!(
            merge_selectors(&ops).unwrap(),
            vec![
                b"on".to_vec(),
                b"(~key5 +get )".to_vec(),
                b"(~key6 +get)".to_vec()
            ]
        );
        assert_eq!(merge_selectors(&[b"on", b"(+PING", b"(+SELECT"]), Err(1));
        let users = Users::default();
        let e = users
            .set_user(b"s", &[b"on", b"(+PING", b"(+SELECT", b"(+DEL"], false)
            .err()
            .unwrap();
        assert!(
            e.starts_with("Unmatched parenthesis in acl selector starting at '(+PING'"),
            "{e}"
        );
        let e = users.set_user(b"s", &[b" () "], false).err().unwrap();
        assert!(e.contains("Syntax error"), "{e}");
        let (u, old) = users.set_user(b"s", &[b"()"], false).unwrap();
        assert!(old.is_none());
        let s = u.get(b"s").unwrap();
        assert_eq!(s.selector_fields().len(), 2);
        assert_eq!(s.selector_fields()[1][0].1, b"-@all");
        assert!(u.epoch() > users.epoch());
    }

    #[test]
    fn the_default_user_takes_requirepass_and_reset_restores_a_new_user() {
        let users = Users::initial(Some(b"secret"));
        assert!(!users.open());
        assert!(users.authenticate(b"default", b"secret").is_some());
        assert!(users.authenticate(b"default", b"nope").is_none());
        assert!(users.with_default_password(None).open());
        let (u, _) = users.set_user(b"x", &[b"on", b"nopass"], false).unwrap();
        assert!(u.authenticate(b"x", b"any").is_some());
        let (u, _) = u.set_user(b"x", &[b"off"], false).unwrap();
        assert!(
            u.authenticate(b"x", b"any").is_none(),
            "a user that is off cannot log in"
        );
        let fresh = User::new(b"r", false).describe();
        let mut r = user("on >x +@all ~* &* (+get)");
        r.name = b"r".to_vec();
        r.apply(b"reset", false).unwrap();
        assert_eq!(r.describe(), fresh);
        let mut all = User::new(b"a", true);
        all.apply(b"reset", true).unwrap();
        assert_eq!(all.selector_fields()[0][2].1, b"&*");
        let (u, n) = u.delete(&[b"x", b"default", b"nosuch"]);
        assert_eq!((n, u.len()), (1, 1));
    }

    #[test]
    fn an_unrestricted_user_is_looked_up_once_per_snapshot() {
        let users = Users::default();
        let mut p = Principal::default();
        assert_ne!(p.open_epoch, users.epoch(), "the first command looks it up");
        p.resolve(&users);
        assert_eq!(p.open_epoch, users.epoch(), "then one comparison");
        let (limited, _) = users.set_user(b"default", &[b"-get"], false).unwrap();
        p.resolve(&limited);
        assert_eq!(p.open_epoch, 0, "a user with limits takes the full check");
        p.switch(Some(Arc::from(&b"gone"[..])));
        assert!(p.resolve(&limited).is_none(), "a deleted user");
    }

    #[test]
    fn revoked_channels() {
        let old = user("resetchannels &foo:1 &bar:* &orders");
        let more = user("resetchannels &foo:1 &bar:* &orders &baz:qaz &zoo:*");
        assert!(more.keeps_channels_of(&old));
        assert!(user("allchannels").keeps_channels_of(&old));
        let less = user("resetchannels &foo:1");
        assert!(!less.keeps_channels_of(&old));
        assert!(less.may_subscribe(b"foo:1", false));
        assert!(!less.may_subscribe(b"bar:*", true));
        assert!(!user("resetchannels").keeps_channels_of(&user("allchannels")));
    }
}
