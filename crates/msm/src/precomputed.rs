//! Fixed bases prepared once for many MSMs ([`Precomputed`]): the table of shifted
//! multiples in twisted Edwards form, and the MSM against it with the bucket method of
//! [`crate::msm`] (same recoding, same Edwards buckets, same exact Weierstrass fallback
//! for exceptional additions). The bucket arithmetic is chosen once, when the table is
//! built, from the CPU features passed to [`Precomputed::new_with`].

use rayon::prelude::*;
use wirespeed_util::cpu::CpuFeatures;
use wirespeed_util::lanes::Lanes;

use crate::fr::Scalar;
use crate::g1::{Affine, Jacobian};
use crate::msm::{edwards, recode, weierstrass, windows, Arith, EdPoints, MsmError, MAP_CHUNK};
use crate::te::TePre;

/// Fixed bases prepared once for many MSMs (the `multi_scalar_mult_init` /
/// `multi_scalar_mult` shape).
///
/// With K groups, the table holds [2^(t g c)] P_i for t in 0..K, where the W windows of
/// width c are cut into K groups of g = ceil(W / K): the digit of window t g + j' of
/// scalar i then multiplies table point (t, i) in window j' < g, so an MSM runs g windows
/// over n K points: the same n W bucket additions, but g instead of W bucket reductions
/// and Horner steps, which also lets the window widen. The table is stored in twisted
/// Edwards form (see [`crate::te`]), so no call maps points. Memory: n K stored Edwards
/// points of 144 bytes plus the n input points of 104 bytes (kept for the exact
/// fallback; 2^20 points, K = 4: 713 MB), plus the digits of each call (4 n W bytes).
#[derive(Clone, Debug)]
pub struct Precomputed {
    table: EdPoints,
    points: Vec<Affine>,
    /// Points with a multiple that does not map to Edwards form (none for G1): their
    /// table entries are the identity and each call adds them on the Weierstrass side.
    unmapped: Vec<usize>,
    k: usize,
    c: u32,
    arith: Arith,
}

impl Precomputed {
    /// Prepares `points` with K = `groups` (1 to 64; 1 keeps only the points).
    ///
    /// Convenience wrapper: [`Precomputed::new_with`] this process's detected features.
    pub fn new(points: &[Affine], groups: usize) -> Precomputed {
        Precomputed::new_with(points, groups, Lanes::Auto, CpuFeatures::get())
    }

    /// [`Precomputed::new`] with the bucket arithmetic the CPU features `cpu` allow
    /// within `lanes` (kept for every later [`Precomputed::msm`]).
    pub fn new_with(
        points: &[Affine],
        groups: usize,
        lanes: Lanes,
        cpu: &CpuFeatures,
    ) -> Precomputed {
        let arith = Arith::on(&cpu.limited_to(lanes));
        let n = points.len();
        let k = groups.clamp(1, 64);
        // Window from the cost model for uniform scalars, with g reductions.
        let mut best = (u64::MAX, 2);
        let costs = EdPoints::costs(arith);
        for c in 2..=costs.max {
            let w = windows(c) as u64;
            let g = w.div_ceil(k as u64);
            let k = costs;
            let cost = w * n as u64 * k.add + g * ((1u64 << (c - 1)) * 2 * k.reduce + 8 * c as u64);
            if cost < best.0 {
                best = (cost, c);
            }
        }
        let c = best.1;
        let g = (windows(c) as usize).div_ceil(k);
        let mut table = Vec::with_capacity(n * k);
        let mut unmapped = Vec::new();
        let mut current: Vec<Jacobian> = points.iter().map(|p| Jacobian::from(*p)).collect();
        for t in 0..k {
            if t > 0 {
                current.par_iter_mut().for_each(|p| {
                    for _ in 0..g as u32 * c {
                        *p = p.double();
                    }
                });
            }
            let affine = if t == 0 {
                points.to_vec()
            } else {
                Jacobian::batch_to_affine(&current)
            };
            let mapped: Vec<(Vec<TePre>, Vec<usize>)> =
                affine.par_chunks(MAP_CHUNK).map(TePre::batch).collect();
            for (j, (chunk, bad)) in mapped.into_iter().enumerate() {
                unmapped.extend(bad.into_iter().map(|i| j * MAP_CHUNK + i));
                table.extend(chunk);
            }
        }
        unmapped.sort_unstable();
        unmapped.dedup();
        for &i in &unmapped {
            for t in 0..k {
                table[t * n + i] = TePre::IDENTITY;
            }
        }
        Precomputed {
            table: EdPoints::new(table, arith),
            points: points.to_vec(),
            unmapped,
            k,
            c,
            arith,
        }
    }

    /// Number of base points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// True when there are no base points.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Bytes held by the table and the kept input points.
    pub fn table_bytes(&self) -> usize {
        self.table.bytes() + self.points.len() * std::mem::size_of::<Affine>()
    }

    /// sum_i scalars[i] P_i over the prepared points.
    pub fn msm(&self, scalars: &[Scalar]) -> Result<Jacobian, MsmError> {
        let n = self.points.len();
        if scalars.len() != n {
            return Err(MsmError::LengthMismatch {
                points: n,
                scalars: scalars.len(),
            });
        }
        let (k, c) = (self.k, self.c);
        if n == 0 {
            return Ok(Jacobian::INFINITY);
        }
        let digits = recode(scalars, c);
        let w = windows(c) as usize;
        let g = w.div_ceil(k);
        // Window j' of table point (t, i) carries digit (t g + j', i).
        let mut vd = vec![0i32; g * n * k];
        for j in 0..g {
            for t in 0..k {
                let src = t * g + j;
                if src < w {
                    let dst = j * n * k + t * n;
                    vd[dst..dst + n].copy_from_slice(&digits[src * n..(src + 1) * n]);
                }
            }
        }
        let Some(mut sum) = edwards(&self.table, &vd, g, c, self.arith) else {
            return Ok(weierstrass(&self.points, scalars, c, self.arith));
        };
        for &i in &self.unmapped {
            sum = sum.add(&Jacobian::from(self.points[i]).mul_limbs(&scalars[i].0));
        }
        Ok(sum)
    }
}
