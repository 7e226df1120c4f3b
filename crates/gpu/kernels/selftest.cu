// Smoke test for a device: out[i] = low and high words of a[i] * b[i] + c[i], through
// the same helpers every kernel uses. `wirespeed bench gpu` checks it against the host.
#include "common.cuh"

extern "C" __global__ void ws_selftest(const u32 *a, const u32 *b, const u32 *c, u32 *out,
                                       u32 n) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u32 carry = 0;
  u64 p = ws_mul_wide(a[i], b[i]);
  u32 lo = ws_addc((u32)p, c[i], &carry);
  u32 hi = ws_addc((u32)(p >> 32), 0, &carry);
  out[2 * i] = lo;
  out[2 * i + 1] = hi;
}
