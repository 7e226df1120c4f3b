// BLS12-377 G1 MSM kernels: thin wrappers over the per-thread functions of msm.cuh
// (which the host tests run on the CPU). src/msm.rs launches them in order: count,
// scan (sum, top, write), scatter, accumulate, reduce, windows; ws_msm_precompute
// builds the shifted copies of the points once per point set.
//
// Every kernel taking a shape gets it as (n, k, c, w, g, nb, segs); see msm.cuh.
#include "msm.cuh"

#define MSM_SHAPE_ARGS u32 n, u32 k, u32 c, u32 w, u32 g, u32 nb, u32 segs
#define MSM_SHAPE msm_make_shape(n, k, c, w, g, nb, segs)

WS_FN u32 msm_tid() { return blockIdx.x * blockDim.x + threadIdx.x; }

extern "C" __global__ void ws_msm_count(const u32 *scalars, u32 *counts, MSM_SHAPE_ARGS) {
  u32 i = msm_tid();
  if (i >= n) return;
  msm_shape sh = MSM_SHAPE;
  msm_count_thread(i, sh, scalars, counts);
}

extern "C" __global__ void ws_msm_scan_sum(const u32 *counts, u32 len, u32 nchunks,
                                           u32 *chunk_sums) {
  u32 t = msm_tid();
  if (t >= nchunks) return;
  msm_scan_sum_thread(t, counts, len, chunk_sums);
}

extern "C" __global__ void ws_msm_scan_top(u32 *chunk_sums, u32 nchunks) {
  if (msm_tid() != 0) return;
  msm_scan_top(chunk_sums, nchunks);
}

extern "C" __global__ void ws_msm_scan_write(const u32 *counts, u32 len, u32 nchunks,
                                             const u32 *chunk_sums, u32 *offsets,
                                             u32 *cursor) {
  u32 t = msm_tid();
  if (t >= nchunks) return;
  msm_scan_write_thread(t, counts, len, nchunks, chunk_sums, offsets, cursor);
}

extern "C" __global__ void ws_msm_scatter(const u32 *scalars, u32 *cursor, u32 *entries,
                                          MSM_SHAPE_ARGS) {
  u32 i = msm_tid();
  if (i >= n) return;
  msm_shape sh = MSM_SHAPE;
  msm_scatter_thread(i, sh, scalars, cursor, entries);
}

extern "C" __global__ void ws_msm_accumulate(const u32 *points, const u32 *offsets,
                                             const u32 *entries, u32 *buckets, u32 keys) {
  u32 b = msm_tid();
  if (b >= keys) return;
  msm_accumulate_thread(b, points, offsets, entries, buckets);
}

extern "C" __global__ void ws_msm_reduce(const u32 *buckets, u32 *partials, MSM_SHAPE_ARGS) {
  u32 t = msm_tid();
  if (t >= g * segs) return;
  msm_shape sh = MSM_SHAPE;
  msm_reduce_thread(t, sh, buckets, partials);
}

extern "C" __global__ void ws_msm_windows(const u32 *partials, u32 *out, MSM_SHAPE_ARGS) {
  u32 j = msm_tid();
  if (j >= g) return;
  msm_shape sh = MSM_SHAPE;
  msm_window_thread(j, sh, partials, out);
}

extern "C" __global__ void ws_msm_precompute(const u32 *src, u32 *dst, u32 n, u32 doublings) {
  u32 i = msm_tid();
  if (i >= n) return;
  msm_precompute_thread(i, src, dst, doublings);
}
