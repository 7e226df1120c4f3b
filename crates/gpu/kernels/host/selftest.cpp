// Host build of the helpers in common.cuh.
#include "common.cuh"

extern "C" void ws_host_mul_add(u32 a, u32 b, u32 c, u32 out[2]) {
  u32 carry = 0;
  u64 p = ws_mul_wide(a, b);
  out[0] = ws_addc((u32)p, c, &carry);
  out[1] = ws_addc((u32)(p >> 32), 0, &carry);
}
