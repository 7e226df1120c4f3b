// Host build of rsa.cuh and modexp.cuh at the kernels' limb counts, for the tests in
// src/host/rsa.rs: the same item functions the kernels in rsa.cu call, over a batch.
#include "rsa.cuh"

#define WS_RSA_SHIMS(N)                                                                     \
  extern "C" void ws_host_rsa_crt_##N(const u32 *key, const u32 *in, u32 *out, u32 count) { \
    for (u32 i = 0; i < count; i++) rsa_crt_item<N>(key, in, out, i, count);                \
  }                                                                                         \
  extern "C" void ws_host_modexp_##N(const u32 *mod, const u32 *in, u32 *out, u32 count,    \
                                     u32 elimbs, u32 ebits) {                               \
    for (u32 i = 0; i < count; i++)                                                         \
      modexp_item<N>(mod, in, out, i, count, (int)elimbs, (int)ebits);                      \
  }                                                                                         \
  extern "C" void ws_host_modmul_##N(const u32 *mod, const u32 *in, u32 *out, u32 count) {  \
    for (u32 i = 0; i < count; i++) modmul_item<N>(mod, in, out, i, count);                 \
  }

WS_RSA_SHIMS(32)
WS_RSA_SHIMS(48)
WS_RSA_SHIMS(64)

// mont_mul_loop, the product the exponentiation uses, next to mont_mul.
#define WS_MONT_LOOP_SHIM(N)                                                                \
  extern "C" void ws_host_mont_mul_loop_##N(u32 *r, const u32 *a, const u32 *b,            \
                                            const u32 *m) {                                 \
    mont_mul_loop<N>(r, a, b, m, mont_m0inv(m[0]));                                         \
  }

WS_MONT_LOOP_SHIM(32)
WS_MONT_LOOP_SHIM(48)
WS_MONT_LOOP_SHIM(64)
