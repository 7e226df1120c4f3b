//! The order of search results, as Redis's sorts leave it, ties and all.
//!
//! Redis sorts the points it found by distance with the C library's `qsort` when it
//! replies all of them, and with its own `pqsort` when COUNT asks for fewer. glibc's
//! `qsort` is a top-down merge sort (the left half's element first on a tie), so it is
//! stable; `pqsort` is Bentley and McIlroy's three-way quicksort ("Engineering a Sort
//! Function", 1993) that recurses only into the parts that overlap the wanted prefix,
//! and is not stable. Points at the same distance (members at one position, say) come
//! out in an order that depends on the exact sequence of comparisons and swaps, so both
//! are followed here step by step. Both work on indexes into the found points, and
//! take any comparison, consistent or not (a NaN distance), without panicking.

/// Redis's comparison of two distances: 1, 0 or -1 (NaN compares below everything, on
/// either side).
pub fn compare(a: f64, b: f64) -> i32 {
    if a > b {
        1
    } else if a == b {
        0
    } else {
        -1
    }
}

/// Sorts `idx` as glibc's merge sort does with the comparison `cmp`.
pub fn merge_sort(idx: &mut [usize], cmp: &dyn Fn(usize, usize) -> i32) {
    let mut tmp = vec![0usize; idx.len()];
    merge(idx, &mut tmp, cmp);
}

fn merge(a: &mut [usize], tmp: &mut [usize], cmp: &dyn Fn(usize, usize) -> i32) {
    let n = a.len();
    if n <= 1 {
        return;
    }
    let half = n / 2;
    {
        let (l, r) = a.split_at_mut(half);
        merge(l, tmp, cmp);
        merge(r, tmp, cmp);
    }
    let (mut i, mut j, mut k) = (0, half, 0);
    while i < half && j < n {
        if cmp(a[i], a[j]) <= 0 {
            tmp[k] = a[i];
            i += 1;
        } else {
            tmp[k] = a[j];
            j += 1;
        }
        k += 1;
    }
    // What is left of the right half is already in place.
    while i < half {
        tmp[k] = a[i];
        i += 1;
        k += 1;
    }
    a[..k].copy_from_slice(&tmp[..k]);
}

/// Sorts `idx` so that positions `keep.0..=keep.1` hold what a full sort would put
/// there, as Redis's `pqsort` does with the comparison `cmp`.
pub fn partial_sort(idx: &mut [usize], cmp: &dyn Fn(usize, usize) -> i32, keep: (usize, usize)) {
    let n = idx.len();
    quick(idx, 0, n, cmp, keep);
}

/// The median of three positions of `a`, by `cmp` on what they hold.
fn med3(a: &[usize], x: usize, y: usize, z: usize, cmp: &dyn Fn(usize, usize) -> i32) -> usize {
    let c = |i: usize, j: usize| cmp(a[i], a[j]);
    if c(x, y) < 0 {
        if c(y, z) < 0 {
            y
        } else if c(x, z) < 0 {
            z
        } else {
            x
        }
    } else if c(y, z) > 0 {
        y
    } else if c(x, z) < 0 {
        x
    } else {
        z
    }
}

/// Swaps the `n` elements from `x` with the `n` from `y`, pairwise.
fn swap_runs(a: &mut [usize], x: usize, y: usize, n: usize) {
    for k in 0..n {
        a.swap(x + k, y + k);
    }
}

/// True when the part `start..start + n` overlaps the wanted positions.
fn wanted(start: usize, n: usize, keep: (usize, usize)) -> bool {
    let (l, r) = keep;
    let end = start + n;
    !((l < start && r < start) || (l >= end && r >= end))
}

fn quick(
    a: &mut [usize],
    mut base: usize,
    mut n: usize,
    cmp: &dyn Fn(usize, usize) -> i32,
    keep: (usize, usize),
) {
    loop {
        let c = |a: &[usize], i: usize, j: usize| cmp(a[i], a[j]);
        if n < 7 {
            for m in base + 1..base + n {
                let mut p = m;
                while p > base && c(a, p - 1, p) > 0 {
                    a.swap(p, p - 1);
                    p -= 1;
                }
            }
            return;
        }
        let mut pm = base + n / 2;
        if n > 7 {
            let mut pl = base;
            let mut pn = base + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(a, pm - d, pm, pm + d, cmp);
                pn = med3(a, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(a, pl, pm, pn, cmp);
        }
        a.swap(base, pm);
        // [base] is the pivot; equal elements gather at both ends (pa, pd), then move
        // to the middle.
        let (mut pa, mut pb) = (base + 1, base + 1);
        let (mut pc, mut pd) = (base + n - 1, base + n - 1);
        loop {
            while pb <= pc {
                let r = c(a, pb, base);
                if r > 0 {
                    break;
                }
                if r == 0 {
                    a.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let r = c(a, pc, base);
                if r < 0 {
                    break;
                }
                if r == 0 {
                    a.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            a.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = base + n;
        let r = (pa - base).min(pb - pa);
        swap_runs(a, base, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        swap_runs(a, pb, pn - r, r);
        let left = pb - pa;
        if left > 1 && wanted(base, left, keep) {
            quick(a, base, left, cmp, keep);
        }
        let right = pd - pc;
        if right > 1 {
            base = pn - right;
            n = right;
            if wanted(base, n, keep) {
                continue;
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn both_sorts_order_what_they_must() {
        let mut seed = 7;
        for n in [0usize, 1, 2, 6, 7, 8, 40, 41, 100, 1000] {
            // Few distinct values: many ties.
            let vals: Vec<f64> = (0..n).map(|_| (lcg(&mut seed) % 13) as f64).collect();
            let cmp = |i: usize, j: usize| compare(vals[i], vals[j]);
            let mut full: Vec<usize> = (0..n).collect();
            merge_sort(&mut full, &cmp);
            let mut stable: Vec<usize> = (0..n).collect();
            stable.sort_by(|&i, &j| vals[i].total_cmp(&vals[j]));
            assert_eq!(full, stable, "the merge sort is stable");
            for count in [1usize, 3, n / 2, n] {
                if count == 0 || count > n {
                    continue;
                }
                let mut part: Vec<usize> = (0..n).collect();
                partial_sort(&mut part, &cmp, (0, count - 1));
                let got: Vec<f64> = part[..count].iter().map(|&i| vals[i]).collect();
                let want: Vec<f64> = stable[..count].iter().map(|&i| vals[i]).collect();
                assert_eq!(got, want, "n {n} count {count}");
                let mut all = part.clone();
                all.sort_unstable();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "a permutation");
            }
        }
    }

    #[test]
    fn an_inconsistent_comparison_does_not_panic() {
        let vals = [
            f64::NAN,
            1.0,
            f64::NAN,
            0.5,
            2.0,
            f64::NAN,
            0.0,
            3.0,
            1.0,
            f64::NAN,
        ];
        let cmp = |i: usize, j: usize| compare(vals[i], vals[j]);
        for n in 0..=vals.len() {
            let mut a: Vec<usize> = (0..n).collect();
            merge_sort(&mut a, &cmp);
            let mut b: Vec<usize> = (0..n).collect();
            if n > 0 {
                partial_sort(&mut b, &cmp, (0, n / 2));
            }
        }
    }
}
