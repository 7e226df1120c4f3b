//! Bucket accumulation in affine coordinates with batched inversions.
//!
//! An affine addition costs one inversion, 2M + 1S; Montgomery's trick shares one
//! inversion among a batch for 3M per element, so each bucket addition costs about 6M
//! plus 1/B of an inversion, against 8M + 2S for the XYZZ mixed addition. Additions to
//! one bucket cannot share a batch (each needs the bucket's value after the previous
//! one), so a second addition to a bucket already in the batch goes to that bucket's
//! XYZZ overflow accumulator instead (8M + 2S, never a wait: skewed digits that pile
//! into a few buckets cost no more than the XYZZ method).
//!
//! Exceptional cases are decided before the batch: an empty bucket just takes the point;
//! x equal and y equal is a doubling (denominator 2y, numerator 3x^2); x equal and y
//! opposite empties the bucket. Points with y = 0 (2-torsion, not in G1, but callers may
//! pass unchecked points) double to infinity.

use crate::fq::{batch_inverse, Fq};
use crate::g1::Xyzz;

/// Affine buckets with a pending batch of additions.
pub(crate) struct AffineBuckets {
    x: Vec<Fq>,
    y: Vec<Fq>,
    filled: Vec<bool>,
    /// Batch number in which a bucket has a pending addition.
    busy: Vec<u32>,
    epoch: u32,
    /// Pending additions: bucket, point, doubling?
    pending: Vec<(u32, Fq, Fq, bool)>,
    den: Vec<Fq>,
    scratch: Vec<Fq>,
    /// Additions that met a busy bucket.
    overflow: Vec<Xyzz>,
    batch: usize,
}

impl AffineBuckets {
    /// `count` empty buckets, flushing every `batch` additions.
    pub(crate) fn new(count: usize, batch: usize) -> AffineBuckets {
        AffineBuckets {
            x: vec![Fq::ZERO; count],
            y: vec![Fq::ZERO; count],
            filled: vec![false; count],
            busy: vec![0; count],
            epoch: 1,
            pending: Vec::with_capacity(batch + 8),
            den: Vec::with_capacity(batch + 8),
            scratch: Vec::with_capacity(batch + 8),
            overflow: vec![Xyzz::INFINITY; count],
            batch,
        }
    }

    /// Bucket b += (x, y).
    #[inline(always)]
    pub(crate) fn add(&mut self, b: usize, x: Fq, y: Fq) {
        if self.busy[b] == self.epoch {
            self.overflow[b].add_affine_assign(&x, &y);
            return;
        }
        if !self.filled[b] {
            self.x[b] = x;
            self.y[b] = y;
            self.filled[b] = true;
            return;
        }
        let d = x.sub(&self.x[b]);
        if d.is_zero() {
            if y == self.y[b] && !y.is_zero() {
                self.busy[b] = self.epoch;
                self.pending.push((b as u32, x, y, true));
                self.den.push(y.double());
            } else {
                // P + (-P), or a 2-torsion point doubled: infinity.
                self.filled[b] = false;
            }
        } else {
            self.busy[b] = self.epoch;
            self.pending.push((b as u32, x, y, false));
            self.den.push(d);
        }
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    /// Completes the pending batch.
    #[inline(always)]
    fn flush(&mut self) {
        batch_inverse(&mut self.den, &mut self.scratch);
        for (&(b, px, py, double), inv) in self.pending.iter().zip(&self.den) {
            let b = b as usize;
            let (bx, by) = (self.x[b], self.y[b]);
            let lambda = if double {
                let xx = bx.square();
                xx.double().add(&xx).mul(inv)
            } else {
                py.sub(&by).mul(inv)
            };
            let x3 = lambda.square().sub(&bx).sub(&px);
            self.y[b] = lambda.mul(&bx.sub(&x3)).sub(&by);
            self.x[b] = x3;
        }
        self.pending.clear();
        self.den.clear();
        self.epoch += 1;
    }

    /// Completes every pending addition.
    pub(crate) fn finish(&mut self) {
        if !self.pending.is_empty() {
            self.flush();
        }
    }

    /// Adds bucket b (after [`AffineBuckets::finish`]) to `acc`.
    #[inline(always)]
    pub(crate) fn add_bucket_to(&self, b: usize, acc: &mut Xyzz) {
        if self.filled[b] {
            acc.add_affine_assign(&self.x[b], &self.y[b]);
        }
        acc.add_assign(&self.overflow[b]);
    }
}
