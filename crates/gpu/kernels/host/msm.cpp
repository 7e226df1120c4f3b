// Host build of bls377.cuh and msm.cuh for the tests in src/host/msm.rs: the field and
// point operations one at a time, and the whole MSM kernel pipeline run thread by thread
// in the order src/msm.rs launches it.
#include <vector>

#include "msm.cuh"

extern "C" void ws_host_fq_consts(u32 *p, u32 *r2, u32 *one, u32 *pm2, u32 *m0inv) {
  for (int j = 0; j < FQ_LIMBS; j++) {
    p[j] = FQ_P[j];
    r2[j] = FQ_R2[j];
    one[j] = FQ_ONE[j];
    pm2[j] = FQ_PM2[j];
  }
  *m0inv = FQ_M0INV;
}

// op: 0 mul, 1 add, 2 sub, 3 neg (of a), 4 inverse (of a).
extern "C" void ws_host_fq_op(u32 op, u32 *r, const u32 *a, const u32 *b) {
  fq_t x, y, z;
  fq_load(x, a);
  fq_load(y, b);
  switch (op) {
    case 0: fq_mul(z, x, y); break;
    case 1: fq_add(z, x, y); break;
    case 2: fq_sub(z, x, y); break;
    case 3: fq_neg(z, x); break;
    default: fq_inv(z, x); break;
  }
  fq_store(r, z);
}

// XYZZ (48 words) in and out, affine (24 words, (0, 0) for infinity) out.
// op: 0 p += affine q, 1 p += xyzz q, 2 p = 2p, 3 p = k p (k in q[0]).
extern "C" void ws_host_g1_op(u32 op, const u32 *p, const u32 *q, u32 *out_aff) {
  g1_xyzz a, b;
  g1_xyzz_load(a, p);
  switch (op) {
    case 0: {
      g1_aff qa;
      g1_aff_load(qa, q);
      g1_xyzz_add_aff(a, qa);
      break;
    }
    case 1:
      g1_xyzz_load(b, q);
      g1_xyzz_add(a, b);
      break;
    case 2: g1_xyzz_dbl(a); break;
    default:
      b = a;
      g1_xyzz_mul_small(a, b, q[0]);
      break;
  }
  g1_aff r;
  g1_xyzz_to_aff(r, a);
  g1_aff_store(out_aff, r);
}

// The precomputation kernel over n points.
extern "C" void ws_host_msm_precompute(const u32 *src, u32 *dst, u32 n, u32 doublings) {
  for (u32 i = 0; i < n; i++) msm_precompute_thread(i, src, dst, doublings);
}

// The MSM pipeline: points (k n affine points), scalars (n x 8 words) -> out (g XYZZ
// window sums). Also reports the number of entries the scatter wrote.
extern "C" void ws_host_msm_run(const u32 *points, const u32 *scalars, u32 n, u32 k, u32 c,
                                u32 w, u32 g, u32 nb, u32 segs, u32 *out, u32 *entries_out) {
  msm_shape sh = msm_make_shape(n, k, c, w, g, nb, segs);
  u32 keys = g * nb;
  u32 nchunks = (keys + MSM_SCAN_CHUNK - 1) / MSM_SCAN_CHUNK;
  std::vector<u32> counts(keys, 0), chunk_sums(nchunks + 1), offsets(keys + 1), cursor(keys);
  for (u32 i = 0; i < n; i++) msm_count_thread(i, sh, scalars, counts.data());
  for (u32 t = 0; t < nchunks; t++) msm_scan_sum_thread(t, counts.data(), keys, chunk_sums.data());
  msm_scan_top(chunk_sums.data(), nchunks);
  for (u32 t = 0; t < nchunks; t++)
    msm_scan_write_thread(t, counts.data(), keys, nchunks, chunk_sums.data(), offsets.data(),
                          cursor.data());
  u32 total = offsets[keys];
  std::vector<u32> entries(total > 0 ? total : 1);
  for (u32 i = 0; i < n; i++) msm_scatter_thread(i, sh, scalars, cursor.data(), entries.data());
  std::vector<u32> buckets((size_t)keys * G1_XYZZ_WORDS);
  for (u32 b = 0; b < keys; b++)
    msm_accumulate_thread(b, points, offsets.data(), entries.data(), buckets.data());
  std::vector<u32> partials((size_t)g * segs * G1_XYZZ_WORDS);
  for (u32 t = 0; t < g * segs; t++) msm_reduce_thread(t, sh, buckets.data(), partials.data());
  for (u32 j = 0; j < g; j++) msm_window_thread(j, sh, partials.data(), out);
  *entries_out = total;
}
