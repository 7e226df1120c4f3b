// Arithmetic in GF(2^255 - 19) on eight 32-bit limbs (radix 2^32, little-endian).
//
// A field element is any 256-bit value; it stands for its residue mod p. Every
// operation takes and returns values below 2^256 ("weakly reduced": 2^256 = 38 mod p
// folds every carry out of the top limb back into the bottom), and only
// ws_fe_canon / ws_fe_to_bytes produce the unique representative below p. This mirrors
// wirespeed_field::Fe51 (crates/field/src/fe51.rs) operation for operation: the same
// addition chains for inversion and square roots, the same sqrt_ratio, the same
// from_bytes (bit 255 ignored, y >= p kept unreduced).
//
// Products use 32 x 32 -> 64-bit multiplications (ws_mul_wide), which NVRTC and the
// host compiler both have; there is no 128-bit arithmetic.
#pragma once
#include "common.cuh"

// Loop hints for NVRTC (no-ops on the host): unroll the short limb loops fully, keep
// long chains of squarings as loops so that the code stays small.
#if WS_CUDA
#define WS_ED_UNROLL _Pragma("unroll")
#define WS_ED_NO_UNROLL _Pragma("unroll 1")
// Multiplication and squaring are called, not inlined, on the device: inlined at every
// use they make the kernel several times larger (instruction-cache misses, long NVRTC
// compiles). Arguments and results travel by value, in registers.
#define WS_FE_MULFN __device__ __noinline__
#else
#define WS_FE_MULFN static inline
#define WS_ED_UNROLL
#define WS_ED_NO_UNROLL
#endif

struct ws_fe {
  u32 v[8];
};

WS_FN ws_fe ws_fe_zero() {
  ws_fe r = {{0, 0, 0, 0, 0, 0, 0, 0}};
  return r;
}

WS_FN ws_fe ws_fe_one() {
  ws_fe r = {{1, 0, 0, 0, 0, 0, 0, 0}};
  return r;
}

// Edwards d = -121665/121666.
WS_FN ws_fe ws_fe_d() {
  ws_fe r = {{0x135978a3, 0x75eb4dca, 0x4141d8ab, 0x00700a4d, 0x7779e898, 0x8cc74079,
              0x2b6ffe73, 0x52036cee}};
  return r;
}

// 2d.
WS_FN ws_fe ws_fe_d2() {
  ws_fe r = {{0x26b2f159, 0xebd69b94, 0x8283b156, 0x00e0149a, 0xeef3d130, 0x198e80f2,
              0x56dffce7, 0x2406d9dc}};
  return r;
}

// sqrt(-1) = 2^((p-1)/4).
WS_FN ws_fe ws_fe_sqrt_m1() {
  ws_fe r = {{0x4a0ea0b0, 0xc4ee1b27, 0xad2fe478, 0x2f431806, 0x3dfbd7a7, 0x2b4d0099,
              0x4fc1df0b, 0x2b832480}};
  return r;
}

// Adds 38 * c (c small) to r, folding a carry out of the top limb once more. The
// second fold cannot carry: after a wrap the value is below 38 * c.
WS_FN void ws_fe_fold(ws_fe &r, u32 c) {
  u32 k = 0;
  r.v[0] = ws_addc(r.v[0], 38 * c, &k);
  WS_ED_UNROLL
  for (int i = 1; i < 8; i++) r.v[i] = ws_addc(r.v[i], 0, &k);
  r.v[0] += 38 * k;
}

WS_FN ws_fe ws_fe_add(const ws_fe &a, const ws_fe &b) {
  ws_fe r;
  u32 c = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) r.v[i] = ws_addc(a.v[i], b.v[i], &c);
  ws_fe_fold(r, c);
  return r;
}

WS_FN ws_fe ws_fe_sub(const ws_fe &a, const ws_fe &b) {
  ws_fe r;
  u32 w = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) r.v[i] = ws_subb(a.v[i], b.v[i], &w);
  // A borrow wrapped the value by 2^256 = 38 (mod p): take 38 away.
  u32 w2 = 0;
  r.v[0] = ws_subb(r.v[0], 38 * w, &w2);
  WS_ED_UNROLL
  for (int i = 1; i < 8; i++) r.v[i] = ws_subb(r.v[i], 0, &w2);
  // A second wrap leaves a value of at least 2^256 - 38: the low limb cannot borrow.
  r.v[0] -= 38 * w2;
  return r;
}

WS_FN ws_fe ws_fe_neg(const ws_fe &a) { return ws_fe_sub(ws_fe_zero(), a); }

// t (512 bits, 16 limbs) mod p, weakly reduced: low + 38 * high, then the carry folded.
WS_FN ws_fe ws_fe_reduce_wide(const u32 t[16]) {
  ws_fe r;
  u64 c = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) {
    u64 x = ws_mul_wide(t[i + 8], 38) + t[i] + c;
    r.v[i] = (u32)x;
    c = x >> 32;
  }
  ws_fe_fold(r, (u32)c);
  return r;
}

WS_FE_MULFN ws_fe ws_fe_mul(const ws_fe a, const ws_fe b) {
  u32 t[16];
  WS_ED_UNROLL
  for (int i = 0; i < 16; i++) t[i] = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) {
    u64 c = 0;
    WS_ED_UNROLL
    for (int j = 0; j < 8; j++) {
      u64 x = ws_mul_wide(a.v[i], b.v[j]) + t[i + j] + c;
      t[i + j] = (u32)x;
      c = x >> 32;
    }
    t[i + 8] = (u32)c;
  }
  return ws_fe_reduce_wide(t);
}

// a^2: the 28 cross products once, doubled, plus the 8 squares.
WS_FE_MULFN ws_fe ws_fe_sq(const ws_fe a) {
  u32 t[16];
  WS_ED_UNROLL
  for (int i = 0; i < 16; i++) t[i] = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 7; i++) {
    u64 c = 0;
    WS_ED_UNROLL
    for (int j = i + 1; j < 8; j++) {
      u64 x = ws_mul_wide(a.v[i], a.v[j]) + t[i + j] + c;
      t[i + j] = (u32)x;
      c = x >> 32;
    }
    t[i + 8] = (u32)c;
  }
  // Double (the cross sum is below 2^511, so nothing leaves the top).
  WS_ED_UNROLL
  for (int i = 15; i > 0; i--) t[i] = (t[i] << 1) | (t[i - 1] >> 31);
  t[0] <<= 1;
  u32 c = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) {
    u64 s = ws_mul_wide(a.v[i], a.v[i]);
    t[2 * i] = ws_addc(t[2 * i], (u32)s, &c);
    t[2 * i + 1] = ws_addc(t[2 * i + 1], (u32)(s >> 32), &c);
  }
  return ws_fe_reduce_wide(t);
}

// a^(2^k), k >= 1.
WS_FN ws_fe ws_fe_sq_n(const ws_fe &a, int k) {
  ws_fe r = ws_fe_sq(a);
  WS_ED_NO_UNROLL
  for (int i = 1; i < k; i++) r = ws_fe_sq(r);
  return r;
}

// The unique representative below p.
WS_FN ws_fe ws_fe_canon(const ws_fe &a) {
  ws_fe r = a;
  // Two folds of bit 255 (2^255 = 19 mod p) bring any value below 2^255.
  WS_ED_UNROLL
  for (int pass = 0; pass < 2; pass++) {
    u32 top = r.v[7] >> 31;
    r.v[7] &= 0x7fffffff;
    u32 c = 0;
    r.v[0] = ws_addc(r.v[0], 19 * top, &c);
    WS_ED_UNROLL
    for (int i = 1; i < 8; i++) r.v[i] = ws_addc(r.v[i], 0, &c);
  }
  // r in [0, 2^255): r >= p iff r + 19 >= 2^255, and then r - p = r + 19 - 2^255.
  ws_fe t;
  u32 c = 0;
  t.v[0] = ws_addc(r.v[0], 19, &c);
  WS_ED_UNROLL
  for (int i = 1; i < 8; i++) t.v[i] = ws_addc(r.v[i], 0, &c);
  if (t.v[7] >> 31) {
    t.v[7] &= 0x7fffffff;
    r = t;
  }
  return r;
}

// 32 little-endian bytes, bit 255 ignored; a value in [p, 2^255) is kept as it is.
WS_FN ws_fe ws_fe_from_bytes(const u8 *b) {
  ws_fe r;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++)
    r.v[i] = (u32)b[4 * i] | (u32)b[4 * i + 1] << 8 | (u32)b[4 * i + 2] << 16 |
             (u32)b[4 * i + 3] << 24;
  r.v[7] &= 0x7fffffff;
  return r;
}

// The canonical 32-byte little-endian encoding.
WS_FN void ws_fe_to_bytes(const ws_fe &a, u8 *out) {
  ws_fe r = ws_fe_canon(a);
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (u8)r.v[i];
    out[4 * i + 1] = (u8)(r.v[i] >> 8);
    out[4 * i + 2] = (u8)(r.v[i] >> 16);
    out[4 * i + 3] = (u8)(r.v[i] >> 24);
  }
}

WS_FN bool ws_fe_is_zero(const ws_fe &a) {
  ws_fe r = ws_fe_canon(a);
  u32 acc = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) acc |= r.v[i];
  return acc == 0;
}

WS_FN bool ws_fe_eq(const ws_fe &a, const ws_fe &b) { return ws_fe_is_zero(ws_fe_sub(a, b)); }

// The canonical value is odd ("negative" in RFC 8032 terms).
WS_FN bool ws_fe_is_negative(const ws_fe &a) { return (ws_fe_canon(a).v[0] & 1) != 0; }

// (x^(2^250 - 1), x^11): the shared prefix of inversion and square roots (the addition
// chain of wirespeed_field::pow22501).
WS_FN void ws_fe_pow22501(const ws_fe &x, ws_fe &t19, ws_fe &t3) {
  ws_fe t0 = ws_fe_sq(x);                          // 2
  ws_fe t1 = ws_fe_sq_n(t0, 2);                    // 8
  ws_fe t2 = ws_fe_mul(x, t1);                     // 9
  t3 = ws_fe_mul(t0, t2);                          // 11
  ws_fe t4 = ws_fe_sq(t3);                         // 22
  ws_fe t5 = ws_fe_mul(t2, t4);                    // 2^5 - 1
  ws_fe t7 = ws_fe_mul(ws_fe_sq_n(t5, 5), t5);     // 2^10 - 1
  ws_fe t9 = ws_fe_mul(ws_fe_sq_n(t7, 10), t7);    // 2^20 - 1
  ws_fe t11 = ws_fe_mul(ws_fe_sq_n(t9, 20), t9);   // 2^40 - 1
  ws_fe t13 = ws_fe_mul(ws_fe_sq_n(t11, 10), t7);  // 2^50 - 1
  ws_fe t15 = ws_fe_mul(ws_fe_sq_n(t13, 50), t13); // 2^100 - 1
  ws_fe t17 = ws_fe_mul(ws_fe_sq_n(t15, 100), t15); // 2^200 - 1
  t19 = ws_fe_mul(ws_fe_sq_n(t17, 50), t13);       // 2^250 - 1
}

// x^((p-5)/8) = x^(2^252 - 3).
WS_FN ws_fe ws_fe_pow_p58(const ws_fe &x) {
  ws_fe t19, t3;
  ws_fe_pow22501(x, t19, t3);
  return ws_fe_mul(ws_fe_sq_n(t19, 2), x);
}

// x^(p-2) = 1/x (0 maps to 0).
WS_FN ws_fe ws_fe_invert(const ws_fe &x) {
  ws_fe t19, t3;
  ws_fe_pow22501(x, t19, t3);
  return ws_fe_mul(ws_fe_sq_n(t19, 5), t3);
}

// For v != 0: true and the non-negative sqrt(u/v) if u/v is a square (0 if u = 0),
// false otherwise (r is then meaningless). RFC 8032 5.1.3: r = u v^3 (u v^7)^((p-5)/8),
// times sqrt(-1) where v r^2 = -u. As wirespeed_field::Fe51::sqrt_ratio.
WS_FN bool ws_fe_sqrt_ratio(const ws_fe &u, const ws_fe &v, ws_fe &r) {
  ws_fe v3 = ws_fe_mul(ws_fe_sq(v), v);
  ws_fe v7 = ws_fe_mul(ws_fe_sq(v3), v);
  ws_fe uv3 = ws_fe_mul(u, v3);
  ws_fe uv7 = ws_fe_mul(u, v7);
  r = ws_fe_mul(uv3, ws_fe_pow_p58(uv7));
  ws_fe check = ws_fe_mul(v, ws_fe_sq(r));
  bool correct = ws_fe_eq(check, u);
  bool flipped = ws_fe_eq(check, ws_fe_neg(u));
  if (flipped) r = ws_fe_mul(r, ws_fe_sqrt_m1());
  if (ws_fe_is_negative(r)) r = ws_fe_neg(r);
  return correct || flipped;
}
