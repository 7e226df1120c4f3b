//! How the parse tile deals packets to the verify tiles when it shares a thread with
//! one of them (the *local* tile; the others are *remote*).
//!
//! The local tile gets a share of the packets, in sixteenths, interleaved evenly (a
//! running sum, as Bresenham draws a line); the remote tiles take the rest in turn. The
//! share starts even and is revised once per run of packets (one verify batch) from
//! the backlogs (what a tile has been dealt and not yet taken into a batch):
//!
//! - a remote backlog above 8 runs: the remote tiles are behind (the input ring fills
//!   and the parse tile, and with it the local tile, would wait for them), so the local
//!   share goes up a sixteenth;
//! - a remote backlog below one run while the local tile holds a quarter run or more:
//!   the remote tiles are about to run dry while the local thread is loaded, so the
//!   local share goes down a sixteenth.
//!
//! Under load the share settles where both threads keep up: on two cores the local
//! tile's thread also runs source and parse, the remote one's reorder, dedup and the
//! sinks, and the verify tiles themselves need not run at the same speed. A fixed
//! deal by sequence number leaves the faster thread waiting for the other; letting
//! each tile claim what it reaches first gives the local tile every packet (it reaches
//! them first) and leaves the others idle while it verifies; dealing each packet to the
//! shortest backlog starves the remote tiles the same way (the local tile empties its
//! backlog every time parse runs). At low load the backlogs stay small, the share stays
//! even, and packets alternate as they did with the fixed deal.
//!
//! The parse tile writes the chosen tile into the fragment's control bits
//! ([`LANE_SHIFT`], [`LANE_MASK`]) and each verify tile reads only its own
//! (`wirespeed_disco::Input::routed`), so every packet goes to exactly one verify tile
//! whatever the backlogs say; only the shares depend on timing. A verify tile reports
//! what it takes through [`Deal::taken`] (one relaxed store per batch, on a cache line
//! of its own).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where the verify tile's number sits in the parse -> verify fragments' control bits.
pub const LANE_SHIFT: u16 = 3;
/// Mask of those bits (5 bits: up to [`MAX_LANES`] verify tiles).
pub const LANE_MASK: u16 = 0b1_1111 << LANE_SHIFT;
/// Most verify tiles a deal serves (more are dealt by sequence number).
pub const MAX_LANES: usize = 32;

/// A counter on a cache line of its own (one writer; the dealer reads it).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded(AtomicU64);

/// The verify tiles' progress, shared between them and the parse tile's [`Dealer`].
#[derive(Debug)]
pub struct Deal {
    taken: Box<[Padded]>,
}

impl Deal {
    /// Progress counters for `lanes` verify tiles (1 to [`MAX_LANES`]).
    pub fn new(lanes: usize) -> Arc<Deal> {
        Arc::new(Deal {
            taken: (0..lanes.clamp(1, MAX_LANES))
                .map(|_| Padded::default())
                .collect(),
        })
    }

    /// Verify tiles served.
    pub fn lanes(&self) -> usize {
        self.taken.len()
    }

    /// Verify tile `lane` starts verifying a batch of `n` more of its packets (called
    /// by that tile only).
    pub fn taken(&self, lane: usize, n: u64) {
        if let Some(c) = self.taken.get(lane) {
            c.0.store(
                c.0.load(Ordering::Relaxed).wrapping_add(n),
                Ordering::Release,
            );
        }
    }

    fn done(&self, lane: usize) -> u64 {
        self.taken
            .get(lane)
            .map_or(0, |c| c.0.load(Ordering::Acquire))
    }
}

/// The parse tile's side of a [`Deal`]: what it dealt to each verify tile.
#[derive(Debug)]
pub struct Dealer {
    deal: Arc<Deal>,
    local: usize,
    run: u64,
    dealt: Vec<u64>,
    /// The local tile's share, in sixteenths.
    weight: u64,
    acc: u64,
    turn: usize,
    left: u64,
}

impl Dealer {
    /// Deals over `deal`'s verify tiles, revising the shares every `run` packets;
    /// `local` shares the parse tile's thread.
    pub fn new(deal: Arc<Deal>, local: usize, run: usize) -> Dealer {
        let lanes = deal.lanes();
        Dealer {
            deal,
            local: local.min(lanes - 1),
            run: run.max(1) as u64,
            dealt: vec![0; lanes],
            weight: 16 / lanes as u64,
            acc: 0,
            turn: 0,
            left: 0,
        }
    }

    fn backlog(&self, lane: usize) -> u64 {
        self.dealt[lane].saturating_sub(self.deal.done(lane))
    }

    /// The local tile's share now, in sixteenths.
    pub fn weight(&self) -> u64 {
        self.weight
    }

    /// The verify tile of the next packet (the module's rule).
    pub fn next_lane(&mut self) -> usize {
        let n = self.dealt.len();
        if n == 1 {
            self.dealt[0] += 1;
            return 0;
        }
        if self.left == 0 {
            self.left = self.run;
            let remote = (0..n)
                .filter(|&l| l != self.local)
                .map(|l| self.backlog(l))
                .min()
                .unwrap_or(0);
            if remote > 8 * self.run {
                self.weight = (self.weight + 1).min(15);
            } else if remote < self.run && 4 * self.backlog(self.local) >= self.run {
                self.weight = self.weight.saturating_sub(1).max(1);
            }
        }
        self.left -= 1;
        self.acc += self.weight;
        let lane = if self.acc >= 16 {
            self.acc -= 16;
            self.local
        } else {
            self.turn = (self.turn + 1) % n;
            if self.turn == self.local {
                self.turn = (self.turn + 1) % n;
            }
            self.turn
        };
        self.dealt[lane] += 1;
        lane
    }

    /// The control bits naming verify tile `lane`.
    pub fn lane_bits(lane: usize) -> u16 {
        ((lane % MAX_LANES) as u16) << LANE_SHIFT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_starts_even_and_interleaves() {
        let mut d = Dealer::new(Deal::new(2), 0, 64);
        let lanes: Vec<usize> = (0..6).map(|_| d.next_lane()).collect();
        assert_eq!(lanes, [1, 0, 1, 0, 1, 0]);
        // Three tiles: the local one a third (5/16), the remote ones in turn.
        let mut d = Dealer::new(Deal::new(3), 0, 64);
        let lanes: Vec<usize> = (0..16).map(|_| d.next_lane()).collect();
        assert_eq!(lanes.iter().filter(|&&l| l == 0).count(), 5);
        assert_eq!(lanes.iter().filter(|&&l| l == 1).count(), 6);
        let mut d = Dealer::new(Deal::new(1), 0, 4);
        assert!((0..9).all(|_| d.next_lane() == 0));
    }

    /// Two verify tiles, each as the pipeline runs it: a free tile takes what is
    /// dealt to it into its batch, and verifies the batch when it holds 64 or finds
    /// nothing more (its input is dry). The local tile 0 shares the dealer's thread
    /// (nothing is dealt while it verifies) and costs 30 steps per packet, the remote
    /// tile 1 `remote_cost`. The dealer deals up to 16 packets per step while the ring
    /// (4096) has room. Returns the shares, the dealer's final weight, and the steps
    /// tile 1 spent with nothing to do.
    fn simulate(remote_cost: u64) -> ([u64; 2], u64, u64) {
        let deal = Deal::new(2);
        let mut dealer = Dealer::new(deal.clone(), 0, 64);
        let cost = [30u64, remote_cost];
        let mut queue = [0usize; 2];
        let mut held = [0usize; 2];
        let mut busy_until = [0u64; 2];
        let mut shares = [0u64; 2];
        let mut idle = 0;
        for t in 0..4_000_000u64 {
            if t >= busy_until[0] {
                for _ in 0..16 {
                    if queue[0] + queue[1] + held[0] + held[1] >= 4096 {
                        break;
                    }
                    let lane = dealer.next_lane();
                    queue[lane] += 1;
                    shares[lane] += 1;
                }
            }
            for lane in 0..2 {
                if t < busy_until[lane] {
                    continue;
                }
                let took = queue[lane].min(64 - held[lane]);
                queue[lane] -= took;
                held[lane] += took;
                if held[lane] == 64 || (took == 0 && held[lane] > 0) {
                    deal.taken(lane, held[lane] as u64);
                    busy_until[lane] = t + cost[lane] * held[lane] as u64;
                    held[lane] = 0;
                } else if took == 0 {
                    idle += u64::from(lane == 1 && t > 100_000);
                }
            }
        }
        (shares, dealer.weight(), idle)
    }

    #[test]
    fn shares_follow_the_rates_and_the_remote_tile_keeps_work() {
        for remote_cost in [24u64, 30, 36, 45] {
            let (shares, weight, idle) = simulate(remote_cost);
            // The local share settles near the rates (within a sixteenth; the weight
            // moves a sixteenth either side of it) ...
            let want = 16.0 * remote_cost as f64 / (30 + remote_cost) as f64;
            assert!((1..=15).contains(&weight));
            let local = shares[0] as f64 / (shares[0] + shares[1]) as f64;
            assert!(
                (16.0 * local - want).abs() <= 1.0,
                "{remote_cost}: {shares:?}"
            );
            // ... and the remote tile seldom waits (under 2% of the steps).
            assert!(
                idle < 80_000,
                "{remote_cost}: idle {idle} steps, {shares:?}"
            );
        }
    }
}
