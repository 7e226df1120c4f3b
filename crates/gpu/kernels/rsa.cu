// RSA private operations by the CRT (one per thread, one key per launch) and batched
// powers and products modulo a public modulus (the VDF provers' group operations).
// Buffers are limb-major: limb j of item i at [j * stride + i] (see rsa.cuh, modexp.cuh).
//
//   ws_rsa_crt_N(key, in, out, count, stride): N = 32, 48, 64 for RSA-2048, 3072, 4096;
//     key: the 7N-limb key block of rsa.cuh; in, out: 2N limbs per item.
//   ws_modexp_N(mod, in, out, count, stride, elimbs, ebits): mod = m then R^2 mod m;
//     in: bases (N limbs) then exponents (elimbs limbs); out: N limbs per item.
//   ws_modmul_N(mod, in, out, count, stride): in: left then right factors.
#include "rsa.cuh"

#define WS_RSA_KERNELS(N)                                                                   \
  extern "C" __global__ void ws_rsa_crt_##N(const u32 *key, const u32 *in, u32 *out,       \
                                            u32 count, u32 stride) {                       \
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                          \
    if (i >= count) return;                                                                 \
    rsa_crt_item<N>(key, in, out, i, stride);                                               \
  }                                                                                         \
  extern "C" __global__ void ws_modexp_##N(const u32 *mod, const u32 *in, u32 *out,        \
                                           u32 count, u32 stride, u32 elimbs, u32 ebits) {  \
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                          \
    if (i >= count) return;                                                                 \
    modexp_item<N>(mod, in, out, i, stride, (int)elimbs, (int)ebits);                       \
  }                                                                                         \
  extern "C" __global__ void ws_modmul_##N(const u32 *mod, const u32 *in, u32 *out,        \
                                           u32 count, u32 stride) {                         \
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;                                          \
    if (i >= count) return;                                                                 \
    modmul_item<N>(mod, in, out, i, stride);                                                \
  }

WS_RSA_KERNELS(32)
WS_RSA_KERNELS(48)
WS_RSA_KERNELS(64)
