// Ed25519 verification (RFC 8032) with the rule modes of crates/ed25519: one signature
// per call, the same verdict and the same rejection reason as wirespeed_ed25519::verify
// for every input in every mode (docs/ed25519-rules.md).
//
// Pieces: scalars mod L on eight 32-bit limbs (the S < L check and the reduction of the
// 512-bit challenge hash), point decoding that reports non-canonical encodings, the
// extended-coordinate formulas of crates/ed25519/src/point.rs, and the variable-time
// double-scalar multiplication [S]B + [k](-A): width-5 NAF for -A (8 cached odd
// multiples, built per signature) and width-8 NAF for B with the 64 affine odd multiples
// B, 3B, ..., 127B read from a table the host supplies (WS_ED_BASE_TABLE_WORDS words;
// see ws_ed25519_verify_one). Variable time: verification handles public data only.
#pragma once
#include "common.cuh"
#include "f25519.cuh"
#include "sha512.cuh"

// Status codes: 0 is a valid signature, 1..=9 the wirespeed_ed25519::VerifyError
// variants in declaration order. The Rust side (crates/gpu/src/ed25519.rs, `Status`)
// holds the same table.
#define WS_ED_OK 0
#define WS_ED_BAD_LENGTH 1
#define WS_ED_SCALAR_OUT_OF_RANGE 2
#define WS_ED_INVALID_POINT_A 3
#define WS_ED_INVALID_POINT_R 4
#define WS_ED_NON_CANONICAL_A 5
#define WS_ED_NON_CANONICAL_R 6
#define WS_ED_SMALL_ORDER_A 7
#define WS_ED_SMALL_ORDER_R 8
#define WS_ED_EQUATION_FAILED 9

// Rule modes, in the order of wirespeed_ed25519::Mode::ALL.
#define WS_ED_MODE_STRICT 0
#define WS_ED_MODE_ZIP215 1
#define WS_ED_MODE_COFACTORED_STRICT 2
#define WS_ED_MODE_LIBSODIUM 3

// The base table: 64 entries (y+x, y-x, 2dxy) of [2i+1]B in affine coordinates, each
// coordinate 8 canonical little-endian 32-bit words.
#define WS_ED_BASE_TABLE_ENTRIES 64
#define WS_ED_BASE_TABLE_WORDS (WS_ED_BASE_TABLE_ENTRIES * 24)

// ---------------------------------------------------------------------------------------
// Scalars mod L = 2^252 + c, c = 27742317777372353535851937790883648493.
// ---------------------------------------------------------------------------------------

WS_FN u32 ws_sc_l(int i) {
  // L, little-endian words.
  return i == 0   ? 0x5cf5d3ed
         : i == 1 ? 0x5812631a
         : i == 2 ? 0xa2f79cd6
         : i == 3 ? 0x14def9de
         : i == 7 ? 0x10000000
                  : 0;
}

// a >= L.
WS_FN bool ws_sc_geq_l(const u32 a[8]) {
  WS_ED_UNROLL
  for (int i = 7; i >= 0; i--) {
    if (a[i] != ws_sc_l(i)) return a[i] > ws_sc_l(i);
  }
  return true;
}

// 32 little-endian bytes as words.
WS_FN void ws_sc_load(const u8 *b, u32 out[8]) {
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++)
    out[i] = (u32)b[4 * i] | (u32)b[4 * i + 1] << 8 | (u32)b[4 * i + 2] << 16 |
             (u32)b[4 * i + 3] << 24;
}

// out[0..na+4] = a[0..na] * c.
WS_FN void ws_sc_mul_c(const u32 *a, int na, u32 *out) {
  WS_ED_UNROLL
  for (int i = 0; i < na + 4; i++) out[i] = 0;
  WS_ED_UNROLL
  for (int i = 0; i < na; i++) {
    u64 carry = 0;
    WS_ED_UNROLL
    for (int j = 0; j < 4; j++) {
      u64 x = ws_mul_wide(a[i], ws_sc_l(j)) + out[i + j] + carry;
      out[i + j] = (u32)x;
      carry = x >> 32;
    }
    out[i + 4] = (u32)carry;
  }
}

// hi[0..nh] = x[0..n] >> 252.
WS_FN void ws_sc_high252(const u32 *x, int n, u32 *hi, int nh) {
  WS_ED_UNROLL
  for (int i = 0; i < nh; i++) {
    u32 lo = 7 + i < n ? x[7 + i] : 0;
    u32 up = 8 + i < n ? x[8 + i] : 0;
    hi[i] = (lo >> 28) | (up << 4);
  }
}

// acc += b (8 words, n of them given) with carry / acc -= b with borrow; the caller
// keeps the results in range.
WS_FN void ws_sc_add_into(u32 acc[8], const u32 *b, int n) {
  u32 c = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) acc[i] = ws_addc(acc[i], i < n ? b[i] : 0, &c);
}

WS_FN void ws_sc_sub_into(u32 acc[8], const u32 *b, int n) {
  u32 w = 0;
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) acc[i] = ws_subb(acc[i], i < n ? b[i] : 0, &w);
}

// A 512-bit little-endian integer (a SHA-512 digest) mod L. With x = x0 + 2^252 x1 and
// 2^252 = -c: x = x0 - c x1 = x0 - y0 + c y1 = x0 - y0 + z0 - c z1 (mod L), where
// y = c x1 = y0 + 2^252 y1 and z = c y1 = z0 + 2^252 z1; then 4L keeps the sum positive
// and a few subtractions of L finish (as wirespeed_field::Scalar::reduce_limbs).
WS_FN void ws_sc_reduce_wide(const u8 h[64], u32 out[8]) {
  u32 x[16];
  ws_sc_load(h, x);
  ws_sc_load(h + 32, x + 8);
  u32 x1[9];
  ws_sc_high252(x, 16, x1, 9); // < 2^260
  u32 y[13];
  ws_sc_mul_c(x1, 9, y); // < 2^385
  u32 y1[5];
  ws_sc_high252(y, 13, y1, 5); // < 2^133
  u32 z[9];
  ws_sc_mul_c(y1, 5, z); // < 2^258
  u32 z1[1];
  ws_sc_high252(z, 9, z1, 1); // < 2^6
  u32 cz1[5];
  ws_sc_mul_c(z1, 1, cz1); // < 2^131
  x[7] &= 0x0fffffff;
  y[7] &= 0x0fffffff;
  z[7] &= 0x0fffffff;
  u32 acc[8];
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) acc[i] = x[i];
  ws_sc_add_into(acc, z, 8);
  u32 four_l[8];
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) four_l[i] = (ws_sc_l(i) << 2) | (i > 0 ? ws_sc_l(i - 1) >> 30 : 0);
  ws_sc_add_into(acc, four_l, 8);
  ws_sc_sub_into(acc, y, 8);
  ws_sc_sub_into(acc, cz1, 5);
  u32 l[8];
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) l[i] = ws_sc_l(i);
  while (ws_sc_geq_l(acc)) ws_sc_sub_into(acc, l, 8);
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) out[i] = acc[i];
}

// Width-w NAF of a scalar below 2^253 (as wirespeed_field::Scalar::vartime_naf): 256
// digits, each 0 or odd in (-2^(w-1), 2^(w-1)).
WS_FN void ws_sc_naf(const u32 s[8], int w, signed char naf[256]) {
  u32 x[9];
  WS_ED_UNROLL
  for (int i = 0; i < 8; i++) x[i] = s[i];
  x[8] = 0;
  for (int i = 0; i < 256; i++) naf[i] = 0;
  u32 width = 1u << w;
  u32 mask = width - 1;
  u32 carry = 0;
  int pos = 0;
  while (pos < 256) {
    int idx = pos >> 5;
    int bit = pos & 31;
    u32 buf = bit < 32 - w ? x[idx] >> bit : (x[idx] >> bit) | (x[idx + 1] << (32 - bit));
    u32 window = carry + (buf & mask);
    if ((window & 1) == 0) {
      pos += 1;
      continue;
    }
    if (window < width / 2) {
      carry = 0;
      naf[pos] = (signed char)window;
    } else {
      carry = 1;
      naf[pos] = (signed char)((int)window - (int)width);
    }
    pos += w;
  }
}

// ---------------------------------------------------------------------------------------
// Points: twisted Edwards a = -1 (crates/ed25519/src/point.rs, same formulas).
// ---------------------------------------------------------------------------------------

struct ws_ge_ext {
  ws_fe x, y, z, t;
};
struct ws_ge_proj {
  ws_fe x, y, z;
};
struct ws_ge_cmp {
  ws_fe x, y, z, t;
};
struct ws_ge_pniels {
  ws_fe ypx, ymx, z, t2d;
};
struct ws_ge_aniels {
  ws_fe ypx, ymx, xy2d;
};

WS_FN ws_ge_ext ws_ge_cmp_to_ext(const ws_ge_cmp &c) {
  ws_ge_ext r;
  r.x = ws_fe_mul(c.x, c.t);
  r.y = ws_fe_mul(c.y, c.z);
  r.z = ws_fe_mul(c.z, c.t);
  r.t = ws_fe_mul(c.x, c.y);
  return r;
}

WS_FN ws_ge_proj ws_ge_cmp_to_proj(const ws_ge_cmp &c) {
  ws_ge_proj r;
  r.x = ws_fe_mul(c.x, c.t);
  r.y = ws_fe_mul(c.y, c.z);
  r.z = ws_fe_mul(c.z, c.t);
  return r;
}

WS_FN ws_ge_proj ws_ge_ext_to_proj(const ws_ge_ext &p) {
  ws_ge_proj r;
  r.x = p.x;
  r.y = p.y;
  r.z = p.z;
  return r;
}

WS_FN ws_ge_pniels ws_ge_to_pniels(const ws_ge_ext &p) {
  ws_ge_pniels r;
  r.ypx = ws_fe_add(p.y, p.x);
  r.ymx = ws_fe_sub(p.y, p.x);
  r.z = p.z;
  r.t2d = ws_fe_mul(p.t, ws_fe_d2());
  return r;
}

WS_FN ws_ge_ext ws_ge_neg(const ws_ge_ext &p) {
  ws_ge_ext r;
  r.x = ws_fe_neg(p.x);
  r.y = p.y;
  r.z = p.z;
  r.t = ws_fe_neg(p.t);
  return r;
}

// 2P (dbl-2008-hwcd).
WS_FN ws_ge_cmp ws_ge_double(const ws_ge_proj &p) {
  ws_fe xx = ws_fe_sq(p.x);
  ws_fe yy = ws_fe_sq(p.y);
  ws_fe zz = ws_fe_sq(p.z);
  ws_fe zz2 = ws_fe_add(zz, zz);
  ws_fe xy_sq = ws_fe_sq(ws_fe_add(p.x, p.y));
  ws_fe yy_plus_xx = ws_fe_add(yy, xx);
  ws_fe yy_minus_xx = ws_fe_sub(yy, xx);
  ws_ge_cmp r;
  r.x = ws_fe_sub(xy_sq, yy_plus_xx);
  r.y = yy_plus_xx;
  r.z = yy_minus_xx;
  r.t = ws_fe_sub(zz2, yy_minus_xx);
  return r;
}

// P + Q (sign = false) or P - Q (sign = true) for a cached Q (add-2008-hwcd-3).
WS_FN ws_ge_cmp ws_ge_add_pniels(const ws_ge_ext &p, const ws_ge_pniels &q, bool sub) {
  ws_fe a = ws_fe_mul(ws_fe_add(p.y, p.x), sub ? q.ymx : q.ypx);
  ws_fe b = ws_fe_mul(ws_fe_sub(p.y, p.x), sub ? q.ypx : q.ymx);
  ws_fe tt2d = ws_fe_mul(p.t, q.t2d);
  ws_fe zz = ws_fe_mul(p.z, q.z);
  ws_fe zz2 = ws_fe_add(zz, zz);
  ws_ge_cmp r;
  r.x = ws_fe_sub(a, b);
  r.y = ws_fe_add(a, b);
  r.z = sub ? ws_fe_sub(zz2, tt2d) : ws_fe_add(zz2, tt2d);
  r.t = sub ? ws_fe_add(zz2, tt2d) : ws_fe_sub(zz2, tt2d);
  return r;
}

// P + Q or P - Q for an affine cached Q (madd-2008-hwcd-3).
WS_FN ws_ge_cmp ws_ge_add_aniels(const ws_ge_ext &p, const ws_ge_aniels &q, bool sub) {
  ws_fe a = ws_fe_mul(ws_fe_add(p.y, p.x), sub ? q.ymx : q.ypx);
  ws_fe b = ws_fe_mul(ws_fe_sub(p.y, p.x), sub ? q.ypx : q.ymx);
  ws_fe txy2d = ws_fe_mul(p.t, q.xy2d);
  ws_fe z2 = ws_fe_add(p.z, p.z);
  ws_ge_cmp r;
  r.x = ws_fe_sub(a, b);
  r.y = ws_fe_add(a, b);
  r.z = sub ? ws_fe_sub(z2, txy2d) : ws_fe_add(z2, txy2d);
  r.t = sub ? ws_fe_add(z2, txy2d) : ws_fe_sub(z2, txy2d);
  return r;
}

// X = 0 and Y = Z.
WS_FN bool ws_ge_is_identity(const ws_ge_ext &p) {
  return ws_fe_is_zero(p.x) && ws_fe_eq(p.y, p.z);
}

// [8]P.
WS_FN ws_ge_ext ws_ge_mul8(const ws_ge_ext &p) {
  ws_ge_proj q = ws_ge_cmp_to_proj(ws_ge_double(ws_ge_ext_to_proj(p)));
  q = ws_ge_cmp_to_proj(ws_ge_double(q));
  return ws_ge_cmp_to_ext(ws_ge_double(q));
}

WS_FN bool ws_ge_is_small_order(const ws_ge_ext &p) { return ws_ge_is_identity(ws_ge_mul8(p)); }

// Bits 0..254 of b, as an integer, are >= p.
WS_FN bool ws_ge_y_non_canonical(const u8 *b) {
  if ((b[31] & 0x7f) != 0x7f) return false;
  for (int i = 30; i >= 1; i--)
    if (b[i] != 0xff) return false;
  return b[0] >= 0xed;
}

// Decodes as wirespeed_ed25519::serial::vartime_decompress: y >= p is reduced, x = 0
// with the sign bit set gives x = 0; false when no point has this y. `canonical` is
// false for either of those two encodings.
WS_FN bool ws_ge_decode(const u8 *b, ws_ge_ext &p, bool &canonical) {
  ws_fe y = ws_fe_from_bytes(b);
  ws_fe yy = ws_fe_sq(y);
  ws_fe u = ws_fe_sub(yy, ws_fe_one());
  ws_fe v = ws_fe_add(ws_fe_mul(yy, ws_fe_d()), ws_fe_one());
  ws_fe x;
  if (!ws_fe_sqrt_ratio(u, v, x)) return false;
  bool sign = (b[31] >> 7) != 0;
  bool negative_zero = sign && ws_fe_is_zero(x);
  if (sign) x = ws_fe_neg(x);
  p.x = x;
  p.y = y;
  p.z = ws_fe_one();
  p.t = ws_fe_mul(x, y);
  canonical = !ws_ge_y_non_canonical(b) && !negative_zero;
  return true;
}

// Entry i of the base table.
WS_FN ws_ge_aniels ws_ge_base_entry(const u32 *table, int i) {
  ws_ge_aniels r;
  const u32 *e = table + 24 * i;
  WS_ED_UNROLL
  for (int j = 0; j < 8; j++) {
    r.ypx.v[j] = e[j];
    r.ymx.v[j] = e[8 + j];
    r.xy2d.v[j] = e[16 + j];
  }
  return r;
}

// [a]P + [b]B, variable time (Moller's interleaved wNAF, as
// wirespeed_ed25519::serial::vartime_double_scalar_mul_basepoint).
WS_FN ws_ge_ext ws_ge_double_scalar_mul(const u32 a[8], const ws_ge_ext &pa, const u32 b[8],
                                        const u32 *base_table) {
  signed char a_naf[256], b_naf[256];
  ws_sc_naf(a, 5, a_naf);
  ws_sc_naf(b, 8, b_naf);
  // P, 3P, ..., 15P.
  ws_ge_pniels a_table[8];
  ws_ge_ext p2 = ws_ge_cmp_to_ext(ws_ge_double(ws_ge_ext_to_proj(pa)));
  ws_ge_pniels p2n = ws_ge_to_pniels(p2);
  ws_ge_ext m = pa;
  a_table[0] = ws_ge_to_pniels(m);
  for (int i = 1; i < 8; i++) {
    m = ws_ge_cmp_to_ext(ws_ge_add_pniels(m, p2n, false));
    a_table[i] = ws_ge_to_pniels(m);
  }
  int i = 255;
  while (i > 0 && a_naf[i] == 0 && b_naf[i] == 0) i--;
  ws_ge_proj r;
  r.x = ws_fe_zero();
  r.y = ws_fe_one();
  r.z = ws_fe_one();
  for (;;) {
    ws_ge_cmp t = ws_ge_double(r);
    int da = a_naf[i];
    int db = b_naf[i];
    if (da != 0) {
      int ia = (da > 0 ? da : -da) / 2;
      t = ws_ge_add_pniels(ws_ge_cmp_to_ext(t), a_table[ia], da < 0);
    }
    if (db != 0) {
      int ib = (db > 0 ? db : -db) / 2;
      t = ws_ge_add_aniels(ws_ge_cmp_to_ext(t), ws_ge_base_entry(base_table, ib), db < 0);
    }
    if (i == 0) return ws_ge_cmp_to_ext(t);
    r = ws_ge_cmp_to_proj(t);
    i--;
  }
}

// ---------------------------------------------------------------------------------------
// Verification.
// ---------------------------------------------------------------------------------------

// Verifies the 64-byte signature sig = R || S of msg[0..len] under the 32-byte key pk
// with the rules of `mode` (WS_ED_MODE_*). base_table: WS_ED_BASE_TABLE_WORDS words.
// Returns WS_ED_OK or the first failing rule's code, in the order of
// wirespeed_ed25519::verify: S, A decoding, A canonical, A small order, R decoding,
// R small order, R canonical, equation. (Lengths are the caller's: this takes fixed
// sizes.)
WS_FN u8 ws_ed25519_verify_one(const u8 *msg, u64 len, const u8 *sig, const u8 *pk, u32 mode,
                               const u32 *base_table) {
  bool canonical_a = mode == WS_ED_MODE_COFACTORED_STRICT || mode == WS_ED_MODE_LIBSODIUM;
  bool canonical_r = mode != WS_ED_MODE_ZIP215;
  bool no_small_order = mode != WS_ED_MODE_ZIP215;
  bool cofactored = mode == WS_ED_MODE_ZIP215 || mode == WS_ED_MODE_COFACTORED_STRICT;

  u32 s[8];
  ws_sc_load(sig + 32, s);
  if (ws_sc_geq_l(s)) return WS_ED_SCALAR_OUT_OF_RANGE;

  ws_ge_ext a;
  bool a_canon;
  if (!ws_ge_decode(pk, a, a_canon)) return WS_ED_INVALID_POINT_A;
  if (canonical_a && !a_canon) return WS_ED_NON_CANONICAL_A;
  if (no_small_order && ws_ge_is_small_order(a)) return WS_ED_SMALL_ORDER_A;

  ws_ge_ext r;
  bool r_canon;
  if (!ws_ge_decode(sig, r, r_canon)) return WS_ED_INVALID_POINT_R;
  if (no_small_order && ws_ge_is_small_order(r)) return WS_ED_SMALL_ORDER_R;
  if (canonical_r && !r_canon) return WS_ED_NON_CANONICAL_R;

  u8 h[64];
  ws_sha512_ram(sig, pk, msg, len, h);
  u32 k[8];
  ws_sc_reduce_wide(h, k);

  // q = [S]B - [k]A.
  ws_ge_ext q = ws_ge_double_scalar_mul(k, ws_ge_neg(a), s, base_table);
  bool ok;
  if (cofactored) {
    // [8](q - R) = 0.
    ws_ge_ext d = ws_ge_cmp_to_ext(ws_ge_add_pniels(q, ws_ge_to_pniels(r), true));
    ok = ws_ge_is_identity(ws_ge_mul8(d));
  } else {
    // R is canonical here (every cofactorless mode requires it): projective equality
    // with the affine R (Z = 1).
    ok = ws_fe_eq(q.x, ws_fe_mul(r.x, q.z)) && ws_fe_eq(q.y, ws_fe_mul(r.y, q.z));
  }
  return ok ? WS_ED_OK : WS_ED_EQUATION_FAILED;
}
