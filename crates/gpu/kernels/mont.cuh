// Multi-precision Montgomery arithmetic on N little-endian 32-bit limbs, for any odd
// modulus m < 2^(32N): the RSA moduli (N = 32, 48, 64 for the CRT halves of RSA-2048,
// 3072 and 4096) and the BLS12-377 base field (N = 12).
//
// Every routine here runs in time independent of its operands' values (no branch or
// index depends on them; the final subtractions select with masks), so private-key
// operations may use them.
#pragma once
#include "common.cuh"

// r = a + b - (m if a + b >= m), for a, b < m. r may alias a or b.
template <int N>
WS_FN void mont_add(u32 *r, const u32 *a, const u32 *b, const u32 *m) {
  u32 s[N], d[N];
  u32 c = 0, br = 0;
#pragma unroll
  for (int j = 0; j < N; j++) s[j] = ws_addc(a[j], b[j], &c);
#pragma unroll
  for (int j = 0; j < N; j++) d[j] = ws_subb(s[j], m[j], &br);
  // Keep the difference when the sum carried out or did not borrow.
  u32 mask = 0u - (c | (br ^ 1u));
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = (d[j] & mask) | (s[j] & ~mask);
}

// r = a - b (+ m if a < b), for a, b < m. r may alias a or b.
template <int N>
WS_FN void mont_sub(u32 *r, const u32 *a, const u32 *b, const u32 *m) {
  u32 d[N];
  u32 br = 0, c = 0;
#pragma unroll
  for (int j = 0; j < N; j++) d[j] = ws_subb(a[j], b[j], &br);
  u32 mask = 0u - br;
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = ws_addc(d[j], m[j] & mask, &c);
}

// One CIOS row: t = (t + ai b + q m) / 2^32 with q chosen to make the division exact.
// t has N + 2 limbs and stays below 2m between rows.
template <int N>
WS_FN void mont_row(u32 *t, u32 ai, const u32 *b, const u32 *m, u32 m0inv) {
  u64 c = 0;
#pragma unroll
  for (int j = 0; j < N; j++) {
    u64 p = ws_mul_wide(ai, b[j]) + t[j] + c;
    t[j] = (u32)p;
    c = p >> 32;
  }
  u64 s = (u64)t[N] + c;
  t[N] = (u32)s;
  t[N + 1] = (u32)(s >> 32);
  u32 q = t[0] * m0inv;
  u64 p = ws_mul_wide(q, m[0]) + t[0];
  c = p >> 32;
#pragma unroll
  for (int j = 1; j < N; j++) {
    p = ws_mul_wide(q, m[j]) + t[j] + c;
    t[j - 1] = (u32)p;
    c = p >> 32;
  }
  s = (u64)t[N] + c;
  t[N - 1] = (u32)s;
  t[N] = t[N + 1] + (u32)(s >> 32);
}

// r = t - m if t >= m else t, for t < 2m held in N + 1 limbs (masked select).
template <int N>
WS_FN void mont_final(u32 *r, const u32 *t, const u32 *m) {
  u32 d[N];
  u32 br = 0;
#pragma unroll
  for (int j = 0; j < N; j++) d[j] = ws_subb(t[j], m[j], &br);
  u32 mask = 0u - (t[N] | (br ^ 1u));
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = (d[j] & mask) | (t[j] & ~mask);
}

// r = a b 2^(-32N) mod m (CIOS: Koc, Acar and Kaliski, "Analyzing and comparing
// Montgomery multiplication algorithms", 1996), for a, b < m, m odd, and
// m0inv = -m^(-1) mod 2^32. The result is fully reduced (< m). r may alias a or b.
template <int N>
WS_FN void mont_mul(u32 *r, const u32 *a, const u32 *b, const u32 *m, u32 m0inv) {
  u32 t[N + 2];
#pragma unroll
  for (int j = 0; j < N + 2; j++) t[j] = 0;
#pragma unroll
  for (int i = 0; i < N; i++) mont_row<N>(t, a[i], b, m, m0inv);
  mont_final<N>(r, t, m);
}

// mont_mul with its outer loop kept as a loop (each row unrolled): the same steps,
// bounds and result in about 1/N of the code, for the wide RSA moduli (N = 32 to 64),
// whose fully unrolled product is too large for NVRTC to compile in reasonable time.
template <int N>
WS_FN void mont_mul_loop(u32 *r, const u32 *a, const u32 *b, const u32 *m, u32 m0inv) {
  u32 t[N + 2];
#pragma unroll
  for (int j = 0; j < N + 2; j++) t[j] = 0;
#pragma unroll 1
  for (int i = 0; i < N; i++) mont_row<N>(t, a[i], b, m, m0inv);
  mont_final<N>(r, t, m);
}

// r = a^2 2^(-32N) mod m.
template <int N>
WS_FN void mont_sqr(u32 *r, const u32 *a, const u32 *m, u32 m0inv) {
  mont_mul<N>(r, a, a, m, m0inv);
}

// -m^(-1) mod 2^32 for odd m0 (Newton's iteration: each step doubles the correct bits).
WS_FN u32 mont_m0inv(u32 m0) {
  u32 x = m0;  // correct to 3 bits for odd m0
#pragma unroll
  for (int i = 0; i < 4; i++) x *= 2u - m0 * x;
  return 0u - x;
}

// Limb helpers.
template <int N>
WS_FN void mont_copy(u32 *r, const u32 *a) {
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = a[j];
}

// 1 if a == b, else 0, in time independent of the values.
template <int N>
WS_FN u32 mont_eq(const u32 *a, const u32 *b) {
  u32 d = 0;
#pragma unroll
  for (int j = 0; j < N; j++) d |= a[j] ^ b[j];
  return (u32)(((u64)d - 1) >> 63);
}

// r = a if bit else r (bit is 0 or 1), in time independent of bit.
template <int N>
WS_FN void mont_select(u32 *r, const u32 *a, u32 bit) {
  u32 mask = 0u - bit;
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = (a[j] & mask) | (r[j] & ~mask);
}
