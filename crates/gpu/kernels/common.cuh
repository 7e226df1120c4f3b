// Shared definitions for every kernel header. Each header compiles two ways:
//  - under NVRTC / nvcc (__CUDACC__ defined): device code for the GPU kernels;
//  - as plain C++17 on the host (g++ / clang++): the same functions, unit-tested from
//    Rust against the CPU implementations (crates/gpu/tests/host_*.rs).
// Headers are included once each by the source inliner in crates/gpu/src/source.rs
// (NVRTC gets one self-contained string), and by #pragma once on the host.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define WS_CUDA 1
#define WS_FN __device__ __forceinline__
#define WS_NOINLINE __device__ __noinline__
#define WS_CONST __constant__
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef int i32;
#else
#define WS_CUDA 0
#include <stdint.h>
#include <string.h>
#define WS_FN static inline
#define WS_NOINLINE static
#define WS_CONST static const
typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t i64;
typedef int32_t i32;
#endif

// 32 x 32 -> 64-bit product: one IMAD.WIDE.U32 on the GPU, one MUL on x86-64.
WS_FN u64 ws_mul_wide(u32 a, u32 b) { return (u64)a * (u64)b; }

// Add with carry in and carry out (carry is 0 or 1).
WS_FN u32 ws_addc(u32 a, u32 b, u32 *carry) {
  u64 t = (u64)a + b + *carry;
  *carry = (u32)(t >> 32);
  return (u32)t;
}

// Subtract with borrow in and borrow out (borrow is 0 or 1).
WS_FN u32 ws_subb(u32 a, u32 b, u32 *borrow) {
  u64 t = (u64)a - b - *borrow;
  *borrow = (u32)(t >> 63);
  return (u32)t;
}
