//! Failure detection and replica failover, after Redis Cluster's:
//!
//! - A node silent for longer than `cluster-node-timeout` is `fail?` (PFAIL) to the node
//!   that notices; gossip carries what each node thinks of the others. A primary that
//!   serves slots marks a node `fail` (FAIL) once a majority of the slot-serving
//!   primaries (itself included) found it silent within twice the node timeout; FAIL
//!   then spreads by gossip, and clears when the node is heard from again.
//! - A replica whose primary is FAIL waits 500-1000 ms plus a second per sibling
//!   replica with more of the stream (so the most up-to-date goes first), then starts
//!   an election: it raises the current epoch and asks every slot-serving primary for
//!   its vote (AUTHREQ). A primary votes once per epoch, only for a replica of a primary
//!   it sees as FAIL, and once per failed primary within twice the node timeout
//!   (AUTHACK). With a majority, the replica becomes a primary, takes its old primary's
//!   slots with the election's epoch as its config epoch (a claim newer than the old
//!   one everywhere), and stops following. The other replicas, and the old primary when
//!   it returns, see its primary (or itself) lose its last slot to the winner and follow
//!   the winner.
//! - CLUSTER FAILOVER on a replica is Redis's manual failover: the replica asks its
//!   primary (MFSTART) to hold writes; the primary holds them (as CLIENT PAUSE WRITE,
//!   for at most [`MF_TIMEOUT_MS`] twice) and answers with its replication offset
//!   (MFACK); the replica waits until its own offset reaches it, so it has every write
//!   the primary acknowledged, then takes over (a new epoch, its primary's slots). The
//!   old primary, seeing its slots taken, follows it and lets the held writes go (they
//!   are redirected to the new primary). A replica that is not caught up within
//!   [`MF_TIMEOUT_MS`] gives up, as Redis's does. FORCE and TAKEOVER take over at once,
//!   without the primary.

use super::bus::{About, Kind};
use super::{Cluster, State, SLOTS};
use crate::state::Shared;

/// How long a manual failover may wait for the replica to catch up (ms), as Redis's.
pub const MF_TIMEOUT_MS: u64 = 5000;

/// What the bus asks of the server once the cluster's state is unlocked.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Replicate this primary.
    Follow {
        /// Its address.
        host: String,
        /// Its client port.
        port: u16,
    },
    /// Stop replicating: this node is a primary now.
    Promote,
    /// Hold writes for this replica's manual failover, then tell it the offset.
    PauseForFailover {
        /// The replica's id.
        replica: String,
    },
}

/// Lets the writes held for a manual failover go (every event loop runs them now).
fn release(shared: &Shared) {
    shared.pause.clear();
    for i in 0..shared.hub.loops() {
        shared.hub.wake(i);
    }
}

/// Carries out `a`.
pub fn act(shared: &Shared, a: Action) {
    match a {
        Action::Follow { host, port } => {
            eprintln!("kvs: cluster: now a replica of {host}:{port}");
            let held = shared.cluster.as_ref().is_some_and(|c| {
                let mut st = c.state();
                std::mem::take(&mut st.paused_for_failover) > wirespeed_util::time::unix_ms()
            });
            crate::repl::replica::start(shared, host, port);
            if held {
                release(shared);
            }
        }
        Action::PauseForFailover { replica } => {
            let Some(c) = shared.cluster.as_ref() else {
                return;
            };
            let until = wirespeed_util::time::unix_ms() + 2 * MF_TIMEOUT_MS;
            shared.pause.pause_writes(until);
            // The offset once no write runs: a write that passed the pause's check
            // just before it was set finishes within this wait.
            std::thread::sleep(std::time::Duration::from_millis(5));
            let mut st = c.state();
            st.paused_for_failover = until;
            st.my_offset = shared.repl.offset();
            let line = c.message(&st, Kind::MfAck).encode();
            st.outbox.push((replica, line));
            eprintln!("kvs: cluster: writes held for a replica's manual failover");
        }
        Action::Promote => {
            shared.repl.unfollow();
            eprintln!("kvs: cluster failover: this node is a primary now");
        }
    }
}

impl Cluster {
    /// For each node index, whether it serves at least one slot.
    fn serving(&self, st: &State) -> Vec<bool> {
        let mut out = vec![false; st.nodes.len()];
        for s in 0..SLOTS as u16 {
            if let Some(o) = self.owner_of(s) {
                if let Some(x) = out.get_mut(o) {
                    *x = true;
                }
            }
        }
        out
    }

    /// The slot-serving primaries (the voters) and their majority.
    fn voters(&self, st: &State) -> (Vec<usize>, usize) {
        let serving = self.serving(st);
        let v: Vec<usize> = (0..st.nodes.len())
            .filter(|&i| serving[i] && !st.nodes[i].gone && !st.nodes[i].replica)
            .collect();
        let quorum = v.len() / 2 + 1;
        (v, quorum)
    }

    /// Takes in what node `from` says of the others: its failure reports (when it is a
    /// primary) and FAIL flags (from anyone). True when a node became FAIL.
    pub(super) fn take_reports(
        &self,
        st: &mut State,
        from: usize,
        gossip: &[About],
        now: u64,
    ) -> bool {
        let reporter = st.nodes[from].id.clone();
        let primary = !st.nodes[from].replica;
        let mut changed = false;
        for g in gossip {
            let Some(j) = st.find(&g.id).filter(|&j| j != 0) else {
                continue;
            };
            let n = &mut st.nodes[j];
            if g.health == 2 && !n.fail {
                n.fail = true;
                changed = true;
            }
            if primary {
                n.reports.retain(|(r, _)| *r != reporter);
                if g.health >= 1 {
                    n.reports.push((reporter.clone(), now));
                }
            }
        }
        changed
    }

    /// AUTHACK from `voter` for the election of `epoch`.
    pub(super) fn count_vote(&self, st: &mut State, voter: usize, epoch: u64) {
        let (voters, _) = self.voters(st);
        let id = st.nodes[voter].id.clone();
        if let Some((e, votes, _)) = &mut st.election {
            if *e == epoch && voters.contains(&voter) && !votes.contains(&id) {
                votes.push(id);
            }
        }
    }

    /// AUTHREQ from `candidate`: this primary's vote, if it is due (see the module).
    pub(super) fn maybe_vote(
        &self,
        st: &mut State,
        candidate: usize,
        msg: &super::bus::Msg,
        now: u64,
    ) -> Option<Action> {
        let (voters, _) = self.voters(st);
        if !voters.contains(&0) || msg.current_epoch < st.current_epoch {
            return None;
        }
        if st.last_vote_epoch >= st.current_epoch {
            return None;
        }
        let c = &st.nodes[candidate];
        let master = c.master.as_deref().filter(|_| c.replica)?;
        let m = st.find(master)?;
        if !st.nodes[m].fail {
            return None;
        }
        let master = st.nodes[m].id.clone();
        let recent = st
            .voted
            .get(&master)
            .is_some_and(|&t| now.saturating_sub(t) < 2 * self.node_timeout);
        if recent {
            return None;
        }
        st.last_vote_epoch = st.current_epoch;
        st.voted.insert(master, now);
        let ack = self.message(st, Kind::AuthAck).encode();
        let to = st.nodes[candidate].id.clone();
        st.outbox.push((to, ack));
        self.changed(st);
        None
    }

    /// Failure agreement, and this replica's failover when its primary failed.
    pub(super) fn failover_tick(
        &self,
        st: &mut State,
        now: u64,
        timeout: u64,
        changed: &mut bool,
    ) -> Option<Action> {
        let (voters, quorum) = self.voters(st);
        let window = 2 * timeout;
        if voters.contains(&0) {
            for j in 1..st.nodes.len() {
                let n = &st.nodes[j];
                if n.gone || n.fail || !n.pfail {
                    continue;
                }
                let reports = n
                    .reports
                    .iter()
                    .filter(|(r, t)| {
                        now.saturating_sub(*t) <= window
                            && st.find(r).is_some_and(|k| voters.contains(&k) && k != j)
                    })
                    .count();
                if reports + 1 >= quorum {
                    st.nodes[j].fail = true;
                    *changed = true;
                    eprintln!("kvs: cluster: node {} is failing", st.nodes[j].id);
                }
            }
        }
        let me = &st.nodes[0];
        let master = me
            .master
            .as_deref()
            .filter(|_| me.replica)
            .and_then(|m| st.find(m));
        let Some(m) = master.filter(|&m| st.nodes[m].fail && voters.contains(&m)) else {
            st.failover_at = 0;
            st.election = None;
            return None;
        };
        if st.failover_at == 0 {
            let my_offset = st.my_offset;
            let master_id = st.nodes[m].id.clone();
            let rank = st
                .nodes
                .iter()
                .skip(1)
                .filter(|n| {
                    n.replica
                        && !n.gone
                        && !n.pfail
                        && n.master.as_deref() == Some(master_id.as_str())
                        && n.offset > my_offset
                })
                .count() as u64;
            st.failover_at = now + 500 + now % 500 + rank * 1000;
        }
        match &st.election {
            None if now >= st.failover_at => {
                let Some(epoch) = super::next_epoch(st.current_epoch) else {
                    eprintln!(
                        "kvs: cluster: no failover election: the current epoch is at its bound"
                    );
                    return None;
                };
                st.current_epoch = epoch;
                st.election = Some((epoch, Vec::new(), now));
                let req = self.message(st, Kind::AuthReq).encode();
                for &v in voters.iter().filter(|&&v| v != m && v != 0) {
                    let id = st.nodes[v].id.clone();
                    st.outbox.push((id, req.clone()));
                }
                *changed = true;
                eprintln!("kvs: cluster: starting a failover election, epoch {epoch}");
                None
            }
            Some((epoch, votes, _)) if votes.len() >= quorum => {
                let epoch = *epoch;
                self.promote_self(st, m, epoch);
                st.election = None;
                st.failover_at = 0;
                *changed = true;
                Some(Action::Promote)
            }
            Some((_, _, started)) if now.saturating_sub(*started) > window.max(2000) => {
                // No majority in time: try again a little later, with a new epoch.
                st.election = None;
                st.failover_at = now + 1000;
                None
            }
            _ => None,
        }
    }

    /// This replica becomes a primary serving node `m`'s slots, with config `epoch`.
    fn promote_self(&self, st: &mut State, m: usize, epoch: u64) {
        for s in self.slots_of(m) {
            self.set_owner(s, Some(0));
        }
        let me = &mut st.nodes[0];
        me.replica = false;
        me.master = None;
        me.config_epoch = epoch;
    }

    /// This replica's primary (its index); the error text when it is not a replica.
    fn my_master(st: &State) -> Result<usize, &'static str> {
        let me = &st.nodes[0];
        me.master
            .as_deref()
            .filter(|_| me.replica)
            .and_then(|m| st.find(m))
            .ok_or("ERR You should send CLUSTER FAILOVER to a replica")
    }

    /// Takes primary `m`'s slots now, with a new epoch.
    fn take_slots(&self, st: &mut State, m: usize) -> Action {
        let top = st.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
        st.current_epoch = st.current_epoch.max(top) + 1;
        let epoch = st.current_epoch;
        self.promote_self(st, m, epoch);
        st.manual = None;
        self.changed(st);
        Action::Promote
    }

    /// CLUSTER FAILOVER FORCE|TAKEOVER on a replica: it takes its primary's slots now.
    /// An error text when this node is not a replica.
    pub fn take_over(&self) -> Result<Action, &'static str> {
        let mut st = self.state();
        let m = Self::my_master(&st)?;
        Ok(self.take_slots(&mut st, m))
    }

    /// CLUSTER FAILOVER on a replica: the manual failover starts (see the module docs);
    /// it completes on the bus's rounds. An error text when this node is not a replica.
    pub fn start_manual(&self, now: u64) -> Result<(), &'static str> {
        let mut st = self.state();
        let m = Self::my_master(&st)?;
        st.manual = Some((now + MF_TIMEOUT_MS, None));
        let line = self.message(&st, Kind::MfStart).encode();
        let id = st.nodes[m].id.clone();
        st.outbox.push((id, line));
        Ok(())
    }

    /// A round of this replica's manual failover: it takes over once its offset reached
    /// the one its held primary sent, or gives up at the deadline.
    pub(super) fn manual_tick(&self, st: &mut State, now: u64) -> Option<Action> {
        let (deadline, target) = st.manual?;
        let Ok(m) = Self::my_master(st) else {
            // A primary already (FORCE, TAKEOVER or an election came first).
            st.manual = None;
            return None;
        };
        if now >= deadline {
            st.manual = None;
            eprintln!("kvs: cluster: manual failover timed out");
            return None;
        }
        let target = target?;
        if st.my_offset < target {
            return None;
        }
        eprintln!("kvs: cluster: manual failover: caught up at offset {target}, taking over");
        Some(self.take_slots(st, m))
    }
}
