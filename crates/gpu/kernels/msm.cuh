// Pippenger MSM over BLS12-377 G1: the body of every kernel thread, as functions of the
// thread index, so that kernels/msm.cu runs them on the GPU and kernels/host/msm.cpp
// runs the same code on the CPU, thread after thread, for the tests.
//
// One run computes, for G groups of n points (group t holds [2^(t g c)] P_i; G = 1 is
// the plain MSM) and n scalars s_i < 2^253 (eight little-endian 32-bit words each):
//  1. count: every scalar is cut into w = 253 / c + 1 signed digits d in
//     [-2^(c-1), 2^(c-1)] (a window value above 2^(c-1) becomes value - 2^c and carries
//     one into the next window; crates/msm recodes the same way). Window j = t g + j'
//     goes to virtual window j' < g of group t. Nonzero digits are counted per key
//     (j', |d| - 1): g 2^(c-1) keys.
//  2. scan: exclusive prefix sums of the counts, in chunks: offsets[key] is where the
//     key's entries start, offsets[keys] the number of entries.
//  3. scatter: each nonzero digit writes (point index t n + i, sign in bit 31) at its
//     key's next free place (the order within a key is whatever the atomics give).
//  4. accumulate: one thread per key (bucket) adds its points, negated for negative
//     digits, with mixed additions into an XYZZ bucket.
//  5. reduce: each virtual window's buckets are cut into `segs` segments; a thread
//     takes one and returns sum_b (b + 1) B_b over it by running sums from the top
//     (two additions per bucket) plus lo times the segment total.
//  6. windows: one thread per virtual window adds its segments' results.
// The host then combines the g window sums by Horner's rule (c doublings per window).
#pragma once
#include "common.cuh"
#include "bls377.cuh"

// 32-bit words per scalar.
#define MSM_SCALAR_WORDS 8
// Bits in the scalar field's modulus r: every scalar is below 2^253.
#define MSM_SCALAR_BITS 253
// Counts per thread of the scan's first and last passes.
#define MSM_SCAN_CHUNK 256
// Bit 31 of an entry: the digit was negative.
#define MSM_NEG 0x80000000u

// The shape of one run (see the file comment).
struct msm_shape {
  u32 n;     // scalars, and points per group
  u32 k;     // groups
  u32 c;     // window bits (2 to 24)
  u32 w;     // windows: 253 / c + 1
  u32 g;     // windows per group, ceil(w / k): the virtual windows run
  u32 nb;    // buckets per window: 2^(c-1)
  u32 segs;  // reduction segments per window: a power of two dividing nb
};

WS_FN msm_shape msm_make_shape(u32 n, u32 k, u32 c, u32 w, u32 g, u32 nb, u32 segs) {
  msm_shape s;
  s.n = n;
  s.k = k;
  s.c = c;
  s.w = w;
  s.g = g;
  s.nb = nb;
  s.segs = segs;
  return s;
}

// *p += 1, returning the old value: atomic on the GPU; the host runs threads one at a time.
WS_FN u32 msm_atomic_inc(u32 *p) {
#if WS_CUDA
  return atomicAdd(p, 1u);
#else
  return (*p)++;
#endif
}

// The signed digit of window j of scalar s (read from memory word by word), given the
// carry out of window j - 1; sets the carry out of window j.
WS_FN i32 msm_digit(const u32 *s, u32 j, u32 c, u32 *carry) {
  u32 at = j * c;
  u32 raw = 0;
  if (at < 32 * MSM_SCALAR_WORDS) {
    u32 wi = at >> 5, sh = at & 31;
    raw = s[wi] >> sh;
    if (sh + c > 32 && wi + 1 < MSM_SCALAR_WORDS) raw |= s[wi + 1] << (32 - sh);
    raw &= (1u << c) - 1;
  }
  i32 d = (i32)raw + (i32)*carry;
  *carry = 0;
  if (d > (i32)(1u << (c - 1))) {
    d -= (i32)(1u << c);
    *carry = 1;
  }
  return d;
}

// Calls f(j, key, negative) for every nonzero signed digit j of scalar i, where key is
// the (group window, bucket) slot the digit's point goes to.
template <typename F>
WS_FN void msm_for_each_digit(u32 i, const msm_shape &sh, const u32 *scalars, F f) {
  const u32 *s = scalars + (u64)i * MSM_SCALAR_WORDS;
  u32 carry = 0;
#pragma unroll 1
  for (u32 j = 0; j < sh.w; j++) {
    i32 d = msm_digit(s, j, sh.c, &carry);
    if (d == 0) continue;
    u32 b = (u32)(d < 0 ? -d : d) - 1;
    f(j, (j % sh.g) * sh.nb + b, d < 0);
  }
}

// 1. Thread i < n: counts[key] += 1 for every nonzero digit of scalar i.
WS_FN void msm_count_thread(u32 i, const msm_shape &sh, const u32 *scalars, u32 *counts) {
  msm_for_each_digit(i, sh, scalars,
                     [&](u32, u32 key, bool) { msm_atomic_inc(&counts[key]); });
}

// 2a. Thread t < ceil(len / MSM_SCAN_CHUNK): the sum of chunk t of the counts.
WS_FN void msm_scan_sum_thread(u32 t, const u32 *counts, u32 len, u32 *chunk_sums) {
  u32 lo = t * MSM_SCAN_CHUNK, hi = lo + MSM_SCAN_CHUNK < len ? lo + MSM_SCAN_CHUNK : len;
  u32 s = 0;
#pragma unroll 1
  for (u32 x = lo; x < hi; x++) s += counts[x];
  chunk_sums[t] = s;
}

// 2b. One thread: the chunk sums become their exclusive prefix sums, and
// chunk_sums[nchunks] the total.
WS_FN void msm_scan_top(u32 *chunk_sums, u32 nchunks) {
  u32 run = 0;
#pragma unroll 1
  for (u32 t = 0; t < nchunks; t++) {
    u32 v = chunk_sums[t];
    chunk_sums[t] = run;
    run += v;
  }
  chunk_sums[nchunks] = run;
}

// 2c. Thread t: offsets (len + 1 entries) and the scatter cursors (len) of chunk t.
WS_FN void msm_scan_write_thread(u32 t, const u32 *counts, u32 len, u32 nchunks,
                                 const u32 *chunk_sums, u32 *offsets, u32 *cursor) {
  u32 lo = t * MSM_SCAN_CHUNK, hi = lo + MSM_SCAN_CHUNK < len ? lo + MSM_SCAN_CHUNK : len;
  u32 run = chunk_sums[t];
#pragma unroll 1
  for (u32 x = lo; x < hi; x++) {
    offsets[x] = run;
    cursor[x] = run;
    run += counts[x];
  }
  if (t + 1 == nchunks) offsets[len] = chunk_sums[nchunks];
}

// 3. Thread i < n: every nonzero digit of scalar i takes the next place of its key.
WS_FN void msm_scatter_thread(u32 i, const msm_shape &sh, const u32 *scalars, u32 *cursor,
                              u32 *entries) {
  msm_for_each_digit(i, sh, scalars, [&](u32 j, u32 key, bool neg) {
    u32 pos = msm_atomic_inc(&cursor[key]);
    entries[pos] = ((j / sh.g) * sh.n + i) | (neg ? MSM_NEG : 0u);
  });
}

// 4. Thread b < g nb: bucket b, the sum of its entries' points (negated where marked).
WS_FN void msm_accumulate_thread(u32 b, const u32 *points, const u32 *offsets,
                                 const u32 *entries, u32 *buckets) {
  g1_xyzz acc;
  g1_xyzz_set_inf(acc);
  u32 lo = offsets[b], hi = offsets[b + 1];
#pragma unroll 1
  for (u32 e = lo; e < hi; e++) {
    u32 v = entries[e];
    g1_aff q;
    g1_aff_load(q, points + (u64)(v & ~MSM_NEG) * G1_AFF_WORDS);
    if (v & MSM_NEG) fq_neg(q.y, q.y);  // infinity (0, 0) stays (0, 0)
    g1_xyzz_add_aff(acc, q);
  }
  g1_xyzz_store(buckets + (u64)b * G1_XYZZ_WORDS, acc);
}

// 5. Thread t < g segs: segment t % segs of virtual window t / segs: sum (b + 1) B_b over
// its buckets b.
WS_FN void msm_reduce_thread(u32 t, const msm_shape &sh, const u32 *buckets, u32 *partials) {
  u32 j = t / sh.segs, s = t % sh.segs;
  u32 len = sh.nb / sh.segs;
  u32 lo = s * len;
  const u32 *base = buckets + (u64)j * sh.nb * G1_XYZZ_WORDS;
  g1_xyzz run, acc, b;
  g1_xyzz_set_inf(run);
  g1_xyzz_set_inf(acc);
#pragma unroll 1
  for (u32 x = lo + len; x-- > lo;) {
    g1_xyzz_load(b, base + (u64)x * G1_XYZZ_WORDS);
    g1_xyzz_add(run, b);
    g1_xyzz_add(acc, run);
  }
  // acc = sum (b - lo + 1) B_b; lo times the segment total makes the weights b + 1.
  if (lo != 0) {
    g1_xyzz_mul_small(b, run, lo);
    g1_xyzz_add(acc, b);
  }
  g1_xyzz_store(partials + (u64)t * G1_XYZZ_WORDS, acc);
}

// 6. Thread j < g: virtual window j's sum, from its segments.
WS_FN void msm_window_thread(u32 j, const msm_shape &sh, const u32 *partials, u32 *out) {
  g1_xyzz acc, p;
  g1_xyzz_set_inf(acc);
#pragma unroll 1
  for (u32 s = 0; s < sh.segs; s++) {
    g1_xyzz_load(p, partials + ((u64)j * sh.segs + s) * G1_XYZZ_WORDS);
    g1_xyzz_add(acc, p);
  }
  g1_xyzz_store(out + (u64)j * G1_XYZZ_WORDS, acc);
}

// Precomputation, thread i < n: dst[i] = [2^doublings] src[i], affine (one inversion).
WS_FN void msm_precompute_thread(u32 i, const u32 *src, u32 *dst, u32 doublings) {
  g1_aff a;
  g1_aff_load(a, src + (u64)i * G1_AFF_WORDS);
  g1_xyzz p;
  g1_xyzz_from_aff(p, a);
#pragma unroll 1
  for (u32 d = 0; d < doublings; d++) g1_xyzz_dbl(p);
  g1_xyzz_to_aff(a, p);
  g1_aff_store(dst + (u64)i * G1_AFF_WORDS, a);
}
