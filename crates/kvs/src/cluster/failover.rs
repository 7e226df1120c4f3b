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
//! - CLUSTER FAILOVER on a replica takes over at once (a new epoch, its primary's slots)
//!   in every mode.

use super::bus::{About, Kind};
use super::{Cluster, State, SLOTS};
use crate::keyspace::Shared;

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
}

/// Carries out `a`.
pub fn act(shared: &Shared, a: Action) {
    match a {
        Action::Follow { host, port } => {
            eprintln!("kvs: cluster: now a replica of {host}:{port}");
            crate::repl::replica::start(shared, host, port);
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
                st.current_epoch += 1;
                let epoch = st.current_epoch;
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

    /// CLUSTER FAILOVER on a replica: it takes its primary's slots now, with a new
    /// epoch. An error text when this node is not a replica.
    pub fn take_over(&self) -> Result<Action, &'static str> {
        let mut st = self.state();
        let me = &st.nodes[0];
        let Some(m) = me
            .master
            .as_deref()
            .filter(|_| me.replica)
            .and_then(|m| st.find(m))
        else {
            return Err("ERR You should send CLUSTER FAILOVER to a replica");
        };
        let top = st.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
        st.current_epoch = st.current_epoch.max(top) + 1;
        let epoch = st.current_epoch;
        self.promote_self(&mut st, m, epoch);
        self.changed(&st);
        Ok(Action::Promote)
    }
}
