// Host build of mont.cuh at the limb counts the kernels use, for the tests in
// src/host/mont.rs.
#include "mont.cuh"

#define WS_MONT_SHIMS(N)                                                                  \
  extern "C" void ws_host_mont_mul_##N(u32 *r, const u32 *a, const u32 *b, const u32 *m) { \
    mont_mul<N>(r, a, b, m, mont_m0inv(m[0]));                                             \
  }                                                                                         \
  extern "C" void ws_host_mont_add_##N(u32 *r, const u32 *a, const u32 *b, const u32 *m) { \
    mont_add<N>(r, a, b, m);                                                                \
  }                                                                                         \
  extern "C" void ws_host_mont_sub_##N(u32 *r, const u32 *a, const u32 *b, const u32 *m) { \
    mont_sub<N>(r, a, b, m);                                                                \
  }

WS_MONT_SHIMS(1)
WS_MONT_SHIMS(12)
WS_MONT_SHIMS(32)
WS_MONT_SHIMS(64)
