// The RSA private operation by the CRT (Garner), constant time, for moduli of 2N
// 32-bit limbs with primes of N limbs (N = 32, 48, 64: RSA-2048, 3072, 4096), matching
// crates/rsa's PrivateKey::raw:
//   m1 = c^dp mod p, m2 = c^dq mod q, h = qinv (m1 - m2) mod p, s = m2 + h q.
// The fault check (s^e == c) and the range check (c < n) are done by the host.
//
// Key block (7N limbs, little-endian, each value zero-padded to N limbs):
//   p, q, dp = d mod (p - 1), dq = d mod (q - 1), qinv = q^(-1) mod p,
//   R^2 mod p, R^2 mod q, with R = 2^(32N).
#pragma once
#include "modexp.cuh"

// r = x R mod m for a 2N-limb x = hi 2^(32N) + lo: lo R + (hi R) R^2 R^(-1), each
// product fully reduced (a Montgomery product of any value below R with one below m is).
template <int N>
WS_FN void rsa_reduce_wide(u32 *r, const u32 *x, const u32 *m, const u32 *r2, u32 m0inv) {
  u32 lo[N], hi[N];
  mont_to<N>(lo, x, r2, m, m0inv);
  mont_to<N>(hi, x + N, r2, m, m0inv);
  modexp_mul<N>(hi, hi, r2, m, m0inv);
  mont_add<N>(r, lo, hi, m);
}

// r (2N limbs) = a b + c for N-limb a, b, c (never overflows: (2^k - 1)^2 + 2^k - 1 < 2^2k).
template <int N>
WS_FN void rsa_mul_add(u32 *r, const u32 *a, const u32 *b, const u32 *c) {
#pragma unroll
  for (int j = 0; j < N; j++) {
    r[j] = c[j];
    r[N + j] = 0;
  }
#pragma unroll 1
  for (int i = 0; i < N; i++) {
    u32 ai = a[i];
    u64 carry = 0;
#pragma unroll
    for (int j = 0; j < N; j++) {
      u64 p = ws_mul_wide(ai, b[j]) + r[i + j] + carry;
      r[i + j] = (u32)p;
      carry = p >> 32;
    }
    r[i + N] = (u32)carry;
  }
}

// s = c^d mod n by the CRT, for c of 2N limbs (c < n, checked by the caller).
template <int N>
WS_FN void rsa_crt(u32 *s, const u32 *c, const u32 *key) {
  const u32 *p = key, *q = key + N, *dp = key + 2 * N, *dq = key + 3 * N;
  const u32 *qinv = key + 4 * N, *r2p = key + 5 * N, *r2q = key + 6 * N;
  u32 p0 = mont_m0inv(p[0]), q0 = mont_m0inv(q[0]);
  u32 a[N], b[N];
  // m1 = c^dp mod p, in p's Montgomery form.
  rsa_reduce_wide<N>(a, c, p, r2p, p0);
  mont_pow_ct<N>(a, a, dp, 1, N, 32 * N, p, p0, r2p);
  // m2 = c^dq mod q, plain.
  rsa_reduce_wide<N>(b, c, q, r2q, q0);
  mont_pow_ct<N>(b, b, dq, 1, N, 32 * N, q, q0, r2q);
  mont_from<N>(b, b, q, q0);
  // h = qinv (m1 - m2) mod p: m2 (< q < R) into p's Montgomery form, subtract, and the
  // product with the plain qinv leaves Montgomery form.
  u32 t[N];
  mont_to<N>(t, b, r2p, p, p0);
  mont_sub<N>(t, a, t, p);
  modexp_mul<N>(t, t, qinv, p, p0);
  // s = m2 + h q < q + q (p - 1) = n.
  rsa_mul_add<N>(s, t, q, b);
}

// Item i of a batch for one key: `in` holds the inputs c (2N limbs each), `out` the
// results, both limb-major with this stride (limb j of item i at [j * stride + i]).
template <int N>
WS_FN void rsa_crt_item(const u32 *key, const u32 *in, u32 *out, u32 i, u32 stride) {
  u32 c[2 * N], s[2 * N];
#pragma unroll
  for (int j = 0; j < 2 * N; j++) c[j] = in[(u64)j * stride + i];
  rsa_crt<N>(s, c, key);
#pragma unroll
  for (int j = 0; j < 2 * N; j++) out[(u64)j * stride + i] = s[j];
}
