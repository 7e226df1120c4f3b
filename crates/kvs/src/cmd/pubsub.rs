//! The pub/sub family: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE,
//! SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB, with Redis's replies.
//!
//! A connection's subscriptions are in its session ([`Subs`]) and in the registry the
//! loops share ([`crate::hub::Subscriptions`]); PUBLISH sends each subscriber a shared
//! copy through its loop's inbox (see [`crate::hub`]), and the count it replies is the
//! number of receivers at that moment. A RESP2 client with subscriptions may only
//! (un)subscribe, PING, QUIT and RESET (checked in [`super::exec`]); RESP3 clients get
//! messages as push frames and may run anything. Shard channels behave as channels in
//! their own namespace (one node holds every slot). Closing a connection or RESET
//! drops its subscriptions.

use std::collections::BTreeSet;

use super::table::Command;
use super::{eq, Ctx};
use crate::hub::{Hub, Kind, Msg, Published};
use crate::resp::{Proto, Writer};

/// A connection's subscriptions.
#[derive(Debug, Default)]
pub struct Subs {
    channels: BTreeSet<Vec<u8>>,
    patterns: BTreeSet<Vec<u8>>,
    shard: BTreeSet<Vec<u8>>,
}

impl Subs {
    /// True with at least one subscription (the client is in the pub/sub context).
    pub fn active(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shard.is_empty())
    }

    fn set(&mut self, kind: Kind) -> &mut BTreeSet<Vec<u8>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// The count a (un)subscribe reply carries: channels and patterns, or shard
    /// channels for the shard commands.
    fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Shard => self.shard.len(),
            _ => self.channels.len() + self.patterns.len(),
        }
    }

    /// True when a message that came through `kind` (`via` a pattern, or `channel`)
    /// is still wanted: the client may have unsubscribed since it was published.
    pub fn wants(&self, kind: Kind, via: &[u8], channel: &[u8]) -> bool {
        match kind {
            Kind::Channel => self.channels.contains(channel),
            Kind::Pattern => self.patterns.contains(via),
            Kind::Shard => self.shard.contains(channel),
        }
    }

    /// Mirrors the counts into what CLIENT LIST shows.
    fn show(&self, meta: Option<&std::sync::Arc<crate::hub::ClientMeta>>) {
        if let Some(m) = meta {
            use std::sync::atomic::Ordering::Relaxed;
            m.subs[0].store(self.channels.len(), Relaxed);
            m.subs[1].store(self.patterns.len(), Relaxed);
            m.subs[2].store(self.shard.len(), Relaxed);
        }
    }

    /// Drops every subscription of client `id` from the registry (the connection
    /// closed, or RESET).
    pub fn forget(&mut self, hub: &Hub, id: u64) {
        if !self.active() {
            return;
        }
        let mut reg = hub.subs();
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in std::mem::take(self.set(kind)) {
                reg.remove(kind, &name, id);
            }
        }
    }
}

/// True for the commands whose replies are pub/sub frames ((P|S)(UN)SUBSCRIBE).
pub(crate) fn is_subscription(name: &[u8]) -> bool {
    [
        "subscribe",
        "psubscribe",
        "ssubscribe",
        "unsubscribe",
        "punsubscribe",
        "sunsubscribe",
    ]
    .iter()
    .any(|n| eq(name, n))
}

/// The commands a RESP2 client may run while subscribed.
pub(crate) fn allowed(cmd: &Command) -> bool {
    matches!(
        cmd.name,
        "subscribe"
            | "psubscribe"
            | "ssubscribe"
            | "unsubscribe"
            | "punsubscribe"
            | "sunsubscribe"
            | "ping"
            | "quit"
            | "reset"
    )
}

fn kind_of(name: &[u8]) -> Kind {
    if eq(name, "psubscribe") || eq(name, "punsubscribe") {
        Kind::Pattern
    } else if eq(name, "ssubscribe") || eq(name, "sunsubscribe") || eq(name, "spublish") {
        Kind::Shard
    } else {
        Kind::Channel
    }
}

fn verbs(kind: Kind) -> (&'static [u8], &'static [u8]) {
    match kind {
        Kind::Channel => (b"subscribe", b"unsubscribe"),
        Kind::Pattern => (b"psubscribe", b"punsubscribe"),
        Kind::Shard => (b"ssubscribe", b"sunsubscribe"),
    }
}

/// A push frame header: RESP3 `>`, RESP2 an array.
fn push(w: &mut Writer, n: usize) {
    match w.proto() {
        Proto::Resp2 => w.array(n),
        Proto::Resp3 => w.raw(format!(">{n}\r\n").as_bytes()),
    }
}

/// SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE name [name ...].
pub fn subscribe(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let kind = kind_of(args[0]);
    let id = ctx.session.id;
    let hub = &ctx.shared.hub;
    let mut reg = hub.subs();
    for name in &args[1..] {
        if ctx.session.subs.set(kind).insert(name.to_vec()) {
            reg.add(kind, name, id);
        }
        push(w, 3);
        w.bulk(verbs(kind).0);
        w.bulk(name);
        w.int(ctx.session.subs.count(kind) as i64);
    }
    ctx.session.subs.show(ctx.session.meta.as_ref());
}

/// UNSUBSCRIBE / PUNSUBSCRIBE / SUNSUBSCRIBE [name ...]: none named, all of that kind.
pub fn unsubscribe(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let kind = kind_of(args[0]);
    let id = ctx.session.id;
    let names: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].iter().map(|a| a.to_vec()).collect()
    } else {
        ctx.session.subs.set(kind).iter().cloned().collect()
    };
    let verb = verbs(kind).1;
    if names.is_empty() {
        push(w, 3);
        w.bulk(verb);
        w.null();
        w.int(ctx.session.subs.count(kind) as i64);
        return;
    }
    let hub = &ctx.shared.hub;
    let mut reg = hub.subs();
    for name in &names {
        if ctx.session.subs.set(kind).remove(name) {
            reg.remove(kind, name, id);
        }
        push(w, 3);
        w.bulk(verb);
        w.bulk(name);
        w.int(ctx.session.subs.count(kind) as i64);
    }
    ctx.session.subs.show(ctx.session.meta.as_ref());
}

/// PUBLISH / SPUBLISH channel message: the number of clients that receive it.
pub fn publish(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let shard = kind_of(args[0]) == Kind::Shard;
    let hub = &ctx.shared.hub;
    let msgs = hub.subs().publish(shard, args[1], args[2]);
    let n = msgs.len();
    hub.deliver(msgs);
    w.int(n as i64);
}

/// PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | SHARDCHANNELS [pattern]
/// | SHARDNUMSUB [channel ...] | HELP.
pub fn pubsub(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    let hub = &ctx.shared.hub;
    let shardy = eq(sub, "shardchannels") || eq(sub, "shardnumsub");
    if (eq(sub, "channels") || eq(sub, "shardchannels")) && args.len() <= 3 {
        let mut names = hub.subs().channels(shardy, args.get(2).copied());
        names.sort();
        w.array(names.len());
        names.iter().for_each(|n| w.bulk(n));
    } else if eq(sub, "numsub") || eq(sub, "shardnumsub") {
        let reg = hub.subs();
        // A flat array in RESP3 too, as Redis answers.
        w.array(2 * (args.len() - 2));
        for c in &args[2..] {
            w.bulk(c);
            w.int(reg.count(shardy, c) as i64);
        }
    } else if eq(sub, "numpat") && args.len() == 2 {
        w.int(hub.subs().patterns() as i64);
    } else if eq(sub, "help") && args.len() == 2 {
        super::help(
            w,
            &[
                "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "CHANNELS [<pattern>]",
                "    Return the currently active channels matching a <pattern> (default: '*').",
                "NUMPAT",
                "    Return number of subscriptions to patterns.",
                "NUMSUB [<channel> ...]",
                "    Return the number of subscribers for the specified channels, excluding",
                "    pattern subscriptions(default: no channels).",
                "SHARDCHANNELS [<pattern>]",
                "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                "SHARDNUMSUB [<shardchannel> ...]",
                "    Return the number of subscribers for the specified shard level channel(s)",
            ],
        );
    } else if ["channels", "shardchannels", "numpat", "help"]
        .iter()
        .any(|n| eq(sub, n))
    {
        w.error(&format!(
            "ERR wrong number of arguments for 'pubsub|{}' command",
            super::lower(sub)
        ));
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// Encodes a delivered message for a client speaking `proto`, unless it no longer
/// wants it; true when something was written.
pub(crate) fn encode(out: &mut Vec<u8>, proto: Proto, subs: &Subs, msg: &Msg) -> bool {
    let Msg::Message { kind, via, msg } = msg else {
        return false;
    };
    let Published { channel, payload } = &**msg;
    if !subs.wants(*kind, via, channel) {
        return false;
    }
    let mut w = Writer::new(out, proto);
    match kind {
        Kind::Pattern => {
            push(&mut w, 4);
            w.bulk(b"pmessage");
            w.bulk(via);
        }
        Kind::Channel => {
            push(&mut w, 3);
            w.bulk(b"message");
        }
        Kind::Shard => {
            push(&mut w, 3);
            w.bulk(b"smessage");
        }
    }
    w.bulk(channel);
    w.bulk(payload);
    true
}
