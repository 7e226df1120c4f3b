//! ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, LOG, DRYRUN,
//! LOAD, SAVE, HELP, over the users of [`crate::acl`], with Redis 7.2's replies.
//!
//! A change builds a new snapshot of the users from the current one under the
//! settings' lock (two changes from two loops never lose one another) and publishes it
//! to every loop as CONFIG SET does. DELUSER closes the connections of the users it
//! deleted, LOAD those of every user but `default` (their users were replaced), and
//! SETUSER those subscribers whose channels were taken away, as Redis does.

use std::sync::Arc;

use super::{eq, parse_i64, Ctx, NOT_INT};
use crate::acl::catalog::{self, catalog};
use crate::acl::{self, file, has_spaces, Users};
use crate::resp::Writer;

/// ACL subcommand [arg...]: an unknown subcommand and a wrong argument count get
/// Redis's errors (the subcommands' arities are Redis's), then the subcommand runs.
pub fn acl(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let cat = catalog();
    let Some(id) = cat.find(&[b"acl|", sub].concat()) else {
        return w.error(&format!(
            "ERR unknown subcommand '{}'. Try ACL HELP.",
            String::from_utf8_lossy(sub)
        ));
    };
    let e = cat.entry(id);
    let ok = if e.arity >= 0 {
        args.len() == e.arity as usize
    } else {
        args.len() >= e.arity.unsigned_abs() as usize
    };
    if !ok {
        return super::arity(w, e.name.as_bytes());
    }
    let name = &e.name[4..];
    let aclfile = ctx.config.aclfile.clone();
    match name {
        "setuser" => setuser(ctx, args, w),
        "deluser" => deluser(ctx, args, w),
        "getuser" => getuser(ctx, args[2], w),
        "list" | "users" => {
            let users = ctx.config.acl.clone();
            w.array(users.len());
            for u in users.iter() {
                if name == "users" {
                    w.bulk(u.name());
                } else {
                    let line = [b"user ", u.name(), b" ", &u.describe()].concat();
                    w.bulk(&line);
                }
            }
        }
        "whoami" => w.bulk(ctx.session.acl.name()),
        "load" | "save" if aclfile.is_none() => w.error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."),
        "load" => load(ctx, aclfile.as_deref().unwrap_or(std::path::Path::new("")), w),
        "save" => {
            let path = aclfile.unwrap_or_default();
            match file::save(&ctx.config.acl, &path) {
                Ok(()) => w.simple("OK"),
                Err(e) => {
                    eprintln!("kvs: ACL SAVE to {}: {e}", path.display());
                    w.error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
                }
            }
        }
        "cat" if args.len() == 2 => {
            w.array(catalog::NAMES.len());
            for n in catalog::NAMES {
                w.bulk(n.as_bytes());
            }
        }
        "cat" if args.len() == 3 => {
            let Some(flag) = catalog::category(args[2]) else {
                return w.error(&format!(
                    "ERR Unknown category '{}'",
                    String::from_utf8_lossy(&args[2][..args[2].len().min(128)])
                ));
            };
            let names: Vec<&str> = cat
                .entries()
                .iter()
                .filter(|e| e.cats & flag != 0)
                .map(|e| e.name.as_str())
                .collect();
            w.array(names.len());
            for n in names {
                w.bulk(n.as_bytes());
            }
        }
        "genpass" if args.len() <= 3 => genpass(args, w),
        "log" if args.len() <= 3 => log(ctx, args, w),
        "dryrun" => dryrun(ctx, args, w),
        "help" => super::help(w, HELP),
        _ => w.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try ACL HELP.",
            String::from_utf8_lossy(sub)
        )),
    }
}

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

/// Publishes the users `change` makes of the current ones (under the settings' lock);
/// the loop's copy of the settings follows. Returns what `change` returned.
fn change_users<T>(
    ctx: &mut Ctx,
    change: impl FnOnce(&Users, bool) -> Result<(Users, T), String>,
) -> Result<T, String> {
    let mut out = None;
    let next = ctx.shared.update_config(|c| {
        let (users, t) = change(&c.acl, c.acl_pubsub_all)?;
        c.acl = Arc::new(users);
        out = Some(t);
        Ok::<(), String>(())
    })?;
    *ctx.config = next;
    out.ok_or_else(|| "ERR no change".into())
}

/// ACL SETUSER name rule...
fn setuser(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = args[2];
    if has_spaces(name) {
        return w.error("ERR Usernames can't contain spaces or null characters");
    }
    let changed = change_users(ctx, |users, all_channels| {
        users
            .set_user(name, &args[3..], all_channels)
            .map_err(|e| format!("ERR {e}"))
    });
    match changed {
        Ok(old) => {
            if let (Some(old), Some(new)) = (old, ctx.config.acl.get(name).cloned()) {
                acl::kill_revoked_subscribers(ctx, &old, &new);
            }
            w.simple("OK");
        }
        Err(e) => w.error(&e),
    }
}

/// ACL DELUSER name...: how many existed; their connections are closed.
fn deluser(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let names = &args[2..];
    if names.iter().any(|n| *n == b"default") {
        return w.error("ERR The 'default' user cannot be removed");
    }
    let existed: Vec<Vec<u8>> = names
        .iter()
        .filter(|n| ctx.config.acl.get(n).is_some())
        .map(|n| n.to_vec())
        .collect();
    match change_users(ctx, |users, _| Ok(users.delete(names))) {
        Ok(n) => {
            acl::kill_users(ctx, |u| existed.iter().any(|e| e == u));
            w.int(n as i64);
        }
        Err(e) => w.error(&e),
    }
}

/// ACL GETUSER name.
fn getuser(ctx: &mut Ctx, name: &[u8], w: &mut Writer) {
    let Some(u) = ctx.config.acl.get(name).cloned() else {
        return w.null();
    };
    w.map(6);
    w.bulk(b"flags");
    let flags = u.flags();
    w.set(flags.len());
    for f in flags {
        w.bulk(f.as_bytes());
    }
    w.bulk(b"passwords");
    let hashes = u.password_hashes();
    w.array(hashes.len());
    for h in hashes {
        w.bulk(h.as_bytes());
    }
    let selectors = u.selector_fields();
    for (k, v) in &selectors[0] {
        w.bulk(k.as_bytes());
        w.bulk(v);
    }
    w.bulk(b"selectors");
    w.array(selectors.len() - 1);
    for s in &selectors[1..] {
        w.map(3);
        for (k, v) in s {
            w.bulk(k.as_bytes());
            w.bulk(v);
        }
    }
}

/// ACL LOAD: the ACL file's users replace them all (or nothing changes).
fn load(ctx: &mut Ctx, path: &std::path::Path, w: &mut Writer) {
    let all_channels = ctx.config.acl_pubsub_all;
    let loaded = match file::load(path, all_channels) {
        Ok(u) => u,
        Err(e) => return w.error(&format!("ERR {e}")),
    };
    let mut loaded = Some(loaded);
    let r = change_users(ctx, |_, _| {
        loaded
            .take()
            .map(|u| (u, ()))
            .ok_or_else(|| "ERR ACL LOAD failed".to_string())
    });
    match r {
        Ok(()) => {
            // Every user but the default one was replaced: their connections go.
            acl::kill_users(ctx, |u| u != b"default");
            w.simple("OK");
        }
        Err(e) => w.error(&e),
    }
}

/// ACL GENPASS [bits].
fn genpass(args: &[&[u8]], w: &mut Writer) {
    const MAX_BITS: i64 = 4096;
    let bits = match args.get(2) {
        None => 256,
        Some(a) => match parse_i64(a) {
            Some(n) => n,
            None => return w.error(NOT_INT),
        },
    };
    if bits <= 0 || bits > MAX_BITS {
        return w.error(&format!(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {MAX_BITS}"
        ));
    }
    match acl::random_hex((bits as usize).div_ceil(4)) {
        Ok(p) => w.bulk(p.as_bytes()),
        Err(e) => w.error(&format!("ERR no random source: {e}")),
    }
}

/// ACL LOG [count | RESET].
fn log(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut count = 10;
    if let Some(a) = args.get(2) {
        if eq(a, "reset") {
            ctx.shared.acl_log.reset();
            return w.simple("OK");
        }
        match parse_i64(a) {
            Some(n) => count = n.max(0) as usize,
            None => return w.error(NOT_INT),
        }
    }
    ctx.shared.acl_log.write(count, ctx.now, w);
}

/// ACL DRYRUN user command arg...: OK, or (as a bulk string) why the user may not.
fn dryrun(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(user) = ctx.config.acl.get(args[2]).cloned() else {
        return w.error(&format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(args[2])
        ));
    };
    let call = &args[3..];
    let not_found = || {
        format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(call[0])
        )
    };
    let Some(cmd) = super::table::lookup(call[0]) else {
        return w.error(&not_found());
    };
    let cat = catalog();
    let (id, sub) = cat.call(cmd, call);
    if !cat.entry(id).subs.is_empty() && call.len() > 1 && !sub {
        return w.error(&not_found());
    }
    let e = cat.entry(id);
    let arity_ok = if e.arity >= 0 {
        call.len() == e.arity as usize
    } else {
        call.len() >= e.arity.unsigned_abs() as usize
    };
    if !arity_ok {
        return super::arity(w, e.name.as_bytes());
    }
    match user.check(cmd, call) {
        Ok(()) => w.simple("OK"),
        Err(d) => w.bulk(acl::denial_message(&d, user.name(), call, true).as_bytes()),
    }
}
