//! `client-output-buffer-limit`: how many reply bytes may wait for a client that does
//! not read them before the server closes its connection.
//!
//! Redis's setting, with its syntax: one or more groups `CLASS HARD SOFT SECONDS`, the
//! class `normal`, `replica` (also `slave`) or `pubsub`, the sizes in Redis's memory
//! units (`0` for none). A client is closed as soon as its pending replies reach HARD,
//! or when they have stayed at or above SOFT for SECONDS (at once when SECONDS is 0).
//! Defaults as Redis's: `normal 0 0 0` (no limit), `replica 256mb 64mb 60`, `pubsub 32mb
//! 8mb 60`. A client with subscriptions is in the `pubsub` class (a subscriber that
//! does not read is closed at its limit, as in Redis), every other in `normal`; the
//! `replica` class is kept, shown and changed as Redis does so configuration files and
//! CONFIG SET carry over.
//!
//! The bytes measured are the reply bytes not yet written to the socket; the server
//! checks after each command it runs for the client and after each write, so a client
//! that pipelines many large replies without reading is cut off within one reply of the
//! hard limit (see the server's round).

use crate::config::parse_memory;

/// The limits of one client class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClassLimit {
    /// Close at once at this many pending bytes (0: no hard limit).
    pub hard: usize,
    /// Close when at or above this many bytes for `soft_secs` (0: no soft limit).
    pub soft: usize,
    /// How long the soft limit may be exceeded, in seconds.
    pub soft_secs: u64,
}

/// The limits of every client class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    /// Ordinary clients.
    pub normal: ClassLimit,
    /// Replicas.
    pub replica: ClassLimit,
    /// Clients in pub/sub mode.
    pub pubsub: ClassLimit,
}

impl Default for OutputLimits {
    fn default() -> OutputLimits {
        OutputLimits {
            normal: ClassLimit::default(),
            replica: ClassLimit {
                hard: 256 << 20,
                soft: 64 << 20,
                soft_secs: 60,
            },
            pubsub: ClassLimit {
                hard: 32 << 20,
                soft: 8 << 20,
                soft_secs: 60,
            },
        }
    }
}

impl OutputLimits {
    /// The value as CONFIG GET shows it (bytes, Redis's class names and order).
    pub fn show(&self) -> String {
        [
            ("normal", self.normal),
            ("slave", self.replica),
            ("pubsub", self.pubsub),
        ]
        .iter()
        .map(|(name, l)| format!("{name} {} {} {}", l.hard, l.soft, l.soft_secs))
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// Applies `CLASS HARD SOFT SECONDS ...` (all or nothing): the classes named change,
    /// the others keep their limits.
    pub fn set(&mut self, value: &str) -> Result<(), String> {
        let words: Vec<&str> = value.split_ascii_whitespace().collect();
        if words.is_empty() || !words.len().is_multiple_of(4) {
            return Err("Wrong number of arguments in buffer limit configuration.".into());
        }
        let mut next = *self;
        for group in words.chunks(4) {
            let class = match group[0].to_ascii_lowercase().as_str() {
                "normal" => &mut next.normal,
                "replica" | "slave" => &mut next.replica,
                "pubsub" => &mut next.pubsub,
                _ => {
                    return Err(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    )
                }
            };
            let hard = parse_memory(group[1]);
            let soft = parse_memory(group[2]);
            let secs = group[3]
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= i64::MAX as u64 / 1000);
            let (Some(hard), Some(soft), Some(soft_secs)) = (hard, soft, secs) else {
                return Err(
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                        .into(),
                );
            };
            *class = ClassLimit {
                hard,
                soft,
                soft_secs,
            };
        }
        *self = next;
        Ok(())
    }
}

/// Where a client stands against its class's limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputWatch {
    /// When the pending bytes last went to or above the soft limit (ms since the
    /// epoch; 0: they are below it).
    soft_since: u64,
}

impl OutputWatch {
    /// True when a client with `pending` reply bytes at `now` (ms) must be closed.
    pub fn over(&mut self, limit: &ClassLimit, pending: usize, now: u64) -> bool {
        if limit.hard > 0 && pending >= limit.hard {
            return true;
        }
        if limit.soft == 0 || pending < limit.soft {
            self.soft_since = 0;
            return false;
        }
        if self.soft_since == 0 {
            self.soft_since = now.max(1);
        }
        now.saturating_sub(self.soft_since) >= limit.soft_secs.saturating_mul(1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_syntax_round_trips_and_bad_values_change_nothing() {
        let mut l = OutputLimits::default();
        assert_eq!(
            l.show(),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        l.set("normal 1mb 256kb 10")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            l.normal,
            ClassLimit {
                hard: 1 << 20,
                soft: 256 << 10,
                soft_secs: 10
            }
        );
        assert_eq!(l.replica, OutputLimits::default().replica);
        l.set("replica 0 0 0 PUBSUB 1 2 3")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.replica, ClassLimit::default());
        assert_eq!(l.pubsub.soft_secs, 3);
        let before = l;
        for bad in [
            "",
            "normal 1 2",
            "normal 1 2 3 pubsub",
            "master 1 2 3",
            "normal x 2 3",
            "normal 1 2 -3",
        ] {
            assert!(l.set(bad).is_err(), "{bad:?}");
            assert_eq!(l, before, "{bad:?} changed the limits");
        }
    }

    #[test]
    fn hard_closes_at_once_soft_after_its_time() {
        let hard = ClassLimit {
            hard: 100,
            soft: 0,
            soft_secs: 0,
        };
        let mut w = OutputWatch::default();
        assert!(!w.over(&hard, 99, 5));
        assert!(w.over(&hard, 100, 5));
        let soft = ClassLimit {
            hard: 0,
            soft: 50,
            soft_secs: 2,
        };
        let mut w = OutputWatch::default();
        assert!(!w.over(&soft, 60, 1_000));
        assert!(!w.over(&soft, 60, 2_999));
        // Dropping below the soft limit restarts the clock.
        assert!(!w.over(&soft, 10, 3_000));
        assert!(!w.over(&soft, 60, 3_500));
        assert!(!w.over(&soft, 60, 5_499));
        assert!(w.over(&soft, 60, 5_500));
        // No limit at all: never.
        let mut w = OutputWatch::default();
        assert!(!w.over(&ClassLimit::default(), usize::MAX, 1));
        // A soft limit of 0 seconds closes as soon as it is reached.
        let mut w = OutputWatch::default();
        let now = ClassLimit {
            hard: 0,
            soft: 50,
            soft_secs: 0,
        };
        assert!(w.over(&now, 50, 7));
    }
}
