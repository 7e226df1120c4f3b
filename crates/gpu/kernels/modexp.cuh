// Modular exponentiation x^e mod m on N 32-bit limbs, on top of mont.cuh, for the RSA
// private operation (rsa.cuh) and batched public powers and products (the VDF provers).
//
// Constant time: mont_pow_ct runs a fixed window of MODEXP_WINDOW bits over `ebits`
// exponent bits, where `ebits` is public (the modulus size for a secret exponent); every
// window costs the same squarings and one multiplication by a table entry chosen by a
// masked scan of the whole table, so neither branches nor memory addresses depend on
// the exponent or the base.
//
// Montgomery form is relative to R = 2^(32N); the caller supplies R^2 mod m (computed
// on the host), from which every other constant follows.
#pragma once
#include "mont.cuh"

// Bits per window: a table of 2^MODEXP_WINDOW powers.
#define MODEXP_WINDOW 4

// The Montgomery product behind a call boundary, so that every use calls one copy
// (mont_mul_loop: the fully unrolled mont_mul is too large at these widths).
template <int N>
WS_NOINLINE void modexp_mul(u32 *r, const u32 *a, const u32 *b, const u32 *m, u32 m0inv) {
  mont_mul_loop<N>(r, a, b, m, m0inv);
}

// 1 if a == b, else 0, without a branch.
WS_FN u32 modexp_eq32(u32 a, u32 b) { return (u32)(((u64)(a ^ b) - 1) >> 63); }

// r = a R^(-1) mod m: leaves Montgomery form. Any a < R gives a result < m.
template <int N>
WS_FN void mont_from(u32 *r, const u32 *a, const u32 *m, u32 m0inv) {
  u32 one[N];
#pragma unroll
  for (int j = 0; j < N; j++) one[j] = j == 0 ? 1u : 0u;
  modexp_mul<N>(r, a, one, m, m0inv);
}

// r = a R mod m for any a < R (not only a < m), given r2 = R^2 mod m.
template <int N>
WS_FN void mont_to(u32 *r, const u32 *a, const u32 *r2, const u32 *m, u32 m0inv) {
  modexp_mul<N>(r, a, r2, m, m0inv);
}

// `w` (< 32) bits of the exponent starting at bit `at`, 0 past its `elimbs` limbs.
// Limb k of the exponent is e[k * estride]. Only the public position picks the limbs.
WS_FN u32 modexp_window(const u32 *e, u32 estride, int elimbs, int at, int w) {
  int k = at >> 5, s = at & 31;
  u32 lo = k < elimbs ? e[(u64)k * estride] >> s : 0u;
  u32 hi = (s + w > 32 && k + 1 < elimbs) ? e[(u64)(k + 1) * estride] << (32 - s) : 0u;
  return (lo | hi) & ((1u << w) - 1u);
}

// r = table[idx] by reading every entry and keeping one under a mask.
template <int N>
WS_FN void modexp_lookup(u32 *r, const u32 (*table)[N], u32 idx) {
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = 0;
#pragma unroll 1
  for (u32 i = 0; i < (1u << MODEXP_WINDOW); i++) {
    u32 mask = 0u - modexp_eq32(i, idx);
#pragma unroll
    for (int j = 0; j < N; j++) r[j] |= table[i][j] & mask;
  }
}

// r = base^e in Montgomery form, for base in Montgomery form (< m) and the exponent's
// low `ebits` bits (public; the exponent has `elimbs` limbs, limb k at e[k * estride];
// bits past them count as 0). r2 = R^2 mod m. Constant time in base and e.
template <int N>
WS_FN void mont_pow_ct(u32 *r, const u32 *base, const u32 *e, u32 estride, int elimbs,
                       int ebits, const u32 *m, u32 m0inv, const u32 *r2) {
  u32 table[1 << MODEXP_WINDOW][N];
  mont_from<N>(table[0], r2, m, m0inv);  // R mod m: 1 in Montgomery form
  mont_copy<N>(table[1], base);
#pragma unroll 1
  for (int i = 2; i < (1 << MODEXP_WINDOW); i++) modexp_mul<N>(table[i], table[i - 1], base, m, m0inv);
  int windows = (ebits + MODEXP_WINDOW - 1) / MODEXP_WINDOW;
  if (windows <= 0) {
    mont_copy<N>(r, table[0]);
    return;
  }
  u32 acc[N], sel[N];
  modexp_lookup<N>(acc, table, modexp_window(e, estride, elimbs, (windows - 1) * MODEXP_WINDOW, MODEXP_WINDOW));
#pragma unroll 1
  for (int w = windows - 2; w >= 0; w--) {
#pragma unroll 1
    for (int k = 0; k < MODEXP_WINDOW; k++) modexp_mul<N>(acc, acc, acc, m, m0inv);
    modexp_lookup<N>(sel, table, modexp_window(e, estride, elimbs, w * MODEXP_WINDOW, MODEXP_WINDOW));
    modexp_mul<N>(acc, acc, sel, m, m0inv);
  }
  mont_copy<N>(r, acc);
}

// x^e mod m for plain x < R (reduced here), m odd; result < m, plain. Constant time in
// x and e for a public `ebits`.
template <int N>
WS_FN void modexp(u32 *r, const u32 *x, const u32 *e, u32 estride, int elimbs, int ebits,
                  const u32 *m, const u32 *r2) {
  u32 m0inv = mont_m0inv(m[0]);
  u32 xm[N];
  mont_to<N>(xm, x, r2, m, m0inv);
  mont_pow_ct<N>(r, xm, e, estride, elimbs, ebits, m, m0inv, r2);
  mont_from<N>(r, r, m, m0inv);
}

// a b mod m for plain a < R and b < m: (a b R^-1) R^2 R^-1.
template <int N>
WS_FN void modmul(u32 *r, const u32 *a, const u32 *b, const u32 *m, const u32 *r2) {
  u32 m0inv = mont_m0inv(m[0]);
  modexp_mul<N>(r, a, b, m, m0inv);
  modexp_mul<N>(r, r, r2, m, m0inv);
}

// Batched layouts: operand i of a batch keeps limb j at [j * stride + i] ("limb-major",
// so that neighbouring threads read neighbouring words). The modulus block holds m (N
// limbs) then R^2 mod m (N limbs).

// Item i of a batch of powers: `in` holds the bases (N limbs each) and then, from
// in + N * stride, the exponents (elimbs limbs each); `out` the results (N limbs each).
template <int N>
WS_FN void modexp_item(const u32 *mod, const u32 *in, u32 *out, u32 i, u32 stride, int elimbs,
                       int ebits) {
  u32 x[N], r[N];
#pragma unroll
  for (int j = 0; j < N; j++) x[j] = in[(u64)j * stride + i];
  modexp<N>(r, x, in + (u64)N * stride + i, stride, elimbs, ebits, mod, mod + N);
#pragma unroll
  for (int j = 0; j < N; j++) out[(u64)j * stride + i] = r[j];
}

// Item i of a batch of products: `in` holds the left factors (N limbs each, < R) and
// then, from in + N * stride, the right factors (< m).
template <int N>
WS_FN void modmul_item(const u32 *mod, const u32 *in, u32 *out, u32 i, u32 stride) {
  u32 a[N], b[N], r[N];
#pragma unroll
  for (int j = 0; j < N; j++) {
    a[j] = in[(u64)j * stride + i];
    b[j] = in[(u64)(N + j) * stride + i];
  }
  modmul<N>(r, a, b, mod, mod + N);
#pragma unroll
  for (int j = 0; j < N; j++) out[(u64)j * stride + i] = r[j];
}
