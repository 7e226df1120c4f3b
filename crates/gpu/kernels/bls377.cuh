// BLS12-377 G1 for the MSM kernels: the base field Fq (377 bits, twelve 32-bit limbs,
// Montgomery form with R = 2^384) on top of mont.cuh, and points in affine and XYZZ
// coordinates.
//
// Representation: bit-identical to crates/msm (six 64-bit Montgomery limbs, R = 2^384,
// fully reduced), so points upload with a plain copy. An affine point is (x, y) with
// (0, 0) standing for infinity: 0 = 0^3 + 1 has no solution, so no curve point has it.
// An XYZZ point (X, Y, ZZ, ZZZ) means x = X / ZZ, y = Y / ZZZ; ZZ = 0 is infinity.
//
// Formulas (Explicit-Formulas Database, a = 0), as in crates/msm/src/g1.rs: madd-2008-s
// (mixed addition), add-2008-s and dbl-2008-s-1. Every addition checks the exceptional
// cases (either side infinity, P == Q, P == -Q), so buckets that meet repeated points or
// a point and its negation are exact. These routines branch on their inputs: they are
// for public data (the points and scalars of an MSM).
#pragma once
#include "common.cuh"
#include "mont.cuh"

#define FQ_LIMBS 12

// p, little-endian 32-bit limbs.
WS_CONST u32 FQ_P[FQ_LIMBS] = {0x00000001u, 0x8508c000u, 0x30000000u, 0x170b5d44u,
                               0xba094800u, 0x1ef3622fu, 0x00f5138fu, 0x1a22d9f3u,
                               0x6ca1493bu, 0xc63b05c0u, 0x17c510eau, 0x01ae3a46u};
// R^2 mod p (R = 2^384): converts into Montgomery form.
WS_CONST u32 FQ_R2[FQ_LIMBS] = {0x9400cd22u, 0xb786686cu, 0xb00431b1u, 0x0329fcaau,
                                0x62d6b46du, 0x22a5f111u, 0x827dc3acu, 0xbfdf7d03u,
                                0x41790bf9u, 0x837e92f0u, 0x1e914b88u, 0x006dfccbu};
// R mod p: 1 in Montgomery form.
WS_CONST u32 FQ_ONE[FQ_LIMBS] = {0xffffff68u, 0x02cdffffu, 0x7fffffb1u, 0x51409f83u,
                                 0x8a7d3ff2u, 0x9f7db3a9u, 0x6e7c6305u, 0x7b4e97b7u,
                                 0x803c84e8u, 0x4cf495bfu, 0xe2fdf49au, 0x008d6661u};
// p - 2: the exponent of Fermat inversion.
WS_CONST u32 FQ_PM2[FQ_LIMBS] = {0xffffffffu, 0x8508bfffu, 0x30000000u, 0x170b5d44u,
                                 0xba094800u, 0x1ef3622fu, 0x00f5138fu, 0x1a22d9f3u,
                                 0x6ca1493bu, 0xc63b05c0u, 0x17c510eau, 0x01ae3a46u};
// -p^(-1) mod 2^32 (p = 1 mod 2^32).
#define FQ_M0INV 0xffffffffu
// Bits in p.
#define FQ_BITS 377

struct fq_t {
  u32 v[FQ_LIMBS];
};

// The product is one out-of-line function (operands and result by value, so they stay
// in registers): inlined, the dozen products of every point operation would multiply
// the code size (and NVRTC's time) many times over.
WS_NOINLINE fq_t fq_mul_v(fq_t a, fq_t b) {
  fq_t r;
  mont_mul<FQ_LIMBS>(r.v, a.v, b.v, FQ_P, FQ_M0INV);
  return r;
}
WS_FN void fq_mul(fq_t &r, const fq_t &a, const fq_t &b) { r = fq_mul_v(a, b); }
WS_FN void fq_sqr(fq_t &r, const fq_t &a) { r = fq_mul_v(a, a); }
WS_FN void fq_add(fq_t &r, const fq_t &a, const fq_t &b) { mont_add<FQ_LIMBS>(r.v, a.v, b.v, FQ_P); }
WS_FN void fq_sub(fq_t &r, const fq_t &a, const fq_t &b) { mont_sub<FQ_LIMBS>(r.v, a.v, b.v, FQ_P); }
WS_FN void fq_dbl(fq_t &r, const fq_t &a) { mont_add<FQ_LIMBS>(r.v, a.v, a.v, FQ_P); }

WS_FN void fq_zero(fq_t &r) {
#pragma unroll
  for (int j = 0; j < FQ_LIMBS; j++) r.v[j] = 0;
}
WS_FN void fq_one(fq_t &r) {
#pragma unroll
  for (int j = 0; j < FQ_LIMBS; j++) r.v[j] = FQ_ONE[j];
}
WS_FN bool fq_is_zero(const fq_t &a) {
  u32 d = 0;
#pragma unroll
  for (int j = 0; j < FQ_LIMBS; j++) d |= a.v[j];
  return d == 0;
}
// -a (0 stays 0).
WS_FN void fq_neg(fq_t &r, const fq_t &a) {
  fq_t z;
  fq_zero(z);
  fq_sub(r, z, a);
}

// a^(-1) by Fermat (a^(p-2)); 0 maps to 0.
WS_FN void fq_inv(fq_t &r, const fq_t &a) {
  fq_t acc;
  fq_one(acc);
#pragma unroll 1
  for (int i = FQ_BITS - 1; i >= 0; i--) {
    fq_sqr(acc, acc);
    if ((FQ_PM2[i >> 5] >> (i & 31)) & 1u) fq_mul(acc, acc, a);
  }
  r = acc;
}

WS_FN void fq_load(fq_t &r, const u32 *src) {
#pragma unroll
  for (int j = 0; j < FQ_LIMBS; j++) r.v[j] = src[j];
}
WS_FN void fq_store(u32 *dst, const fq_t &a) {
#pragma unroll
  for (int j = 0; j < FQ_LIMBS; j++) dst[j] = a.v[j];
}

// ---- points

// Affine (x, y); (0, 0) is infinity. Stored as 24 words: x then y.
struct g1_aff {
  fq_t x, y;
};
#define G1_AFF_WORDS 24

// XYZZ; ZZ = 0 is infinity. Stored as 48 words: X, Y, ZZ, ZZZ.
struct g1_xyzz {
  fq_t x, y, zz, zzz;
};
#define G1_XYZZ_WORDS 48

WS_FN bool g1_aff_is_inf(const g1_aff &p) { return fq_is_zero(p.x) && fq_is_zero(p.y); }

WS_FN void g1_aff_load(g1_aff &p, const u32 *src) {
  fq_load(p.x, src);
  fq_load(p.y, src + FQ_LIMBS);
}
WS_FN void g1_aff_store(u32 *dst, const g1_aff &p) {
  fq_store(dst, p.x);
  fq_store(dst + FQ_LIMBS, p.y);
}

WS_FN void g1_xyzz_set_inf(g1_xyzz &p) {
  fq_one(p.x);
  fq_one(p.y);
  fq_zero(p.zz);
  fq_zero(p.zzz);
}
WS_FN bool g1_xyzz_is_inf(const g1_xyzz &p) { return fq_is_zero(p.zz); }

WS_FN void g1_xyzz_load(g1_xyzz &p, const u32 *src) {
  fq_load(p.x, src);
  fq_load(p.y, src + FQ_LIMBS);
  fq_load(p.zz, src + 2 * FQ_LIMBS);
  fq_load(p.zzz, src + 3 * FQ_LIMBS);
}
WS_FN void g1_xyzz_store(u32 *dst, const g1_xyzz &p) {
  fq_store(dst, p.x);
  fq_store(dst + FQ_LIMBS, p.y);
  fq_store(dst + 2 * FQ_LIMBS, p.zz);
  fq_store(dst + 3 * FQ_LIMBS, p.zzz);
}

// (x, y) as XYZZ (ZZ = ZZZ = 1); infinity stays infinity.
WS_FN void g1_xyzz_from_aff(g1_xyzz &r, const g1_aff &a) {
  if (g1_aff_is_inf(a)) {
    g1_xyzz_set_inf(r);
    return;
  }
  r.x = a.x;
  r.y = a.y;
  fq_one(r.zz);
  fq_one(r.zzz);
}

// p = 2p (dbl-2008-s-1); infinity and points with y = 0 (order 2) give infinity.
WS_FN void g1_xyzz_dbl(g1_xyzz &p) {
  if (g1_xyzz_is_inf(p) || fq_is_zero(p.y)) {
    g1_xyzz_set_inf(p);
    return;
  }
  fq_t u, v, w, s, m, t;
  fq_dbl(u, p.y);      // U = 2Y
  fq_sqr(v, u);        // V = U^2
  fq_mul(w, u, v);     // W = U V
  fq_mul(s, p.x, v);   // S = X V
  fq_sqr(t, p.x);      // X^2
  fq_dbl(m, t);
  fq_add(m, m, t);     // M = 3 X^2
  fq_sqr(t, m);
  fq_sub(t, t, s);
  fq_sub(t, t, s);     // X3 = M^2 - 2S
  fq_sub(s, s, t);
  fq_mul(s, m, s);     // M (S - X3)
  fq_mul(p.zzz, p.zzz, w);  // ZZZ3 = W ZZZ
  fq_mul(w, w, p.y);   // W Y
  fq_sub(p.y, s, w);   // Y3
  fq_mul(p.zz, p.zz, v);  // ZZ3 = V ZZ
  p.x = t;
}

// p += (qx, qy) for an affine point (madd-2008-s); an infinite q changes nothing.
WS_FN void g1_xyzz_add_aff(g1_xyzz &p, const g1_aff &q) {
  if (g1_aff_is_inf(q)) return;
  if (g1_xyzz_is_inf(p)) {
    g1_xyzz_from_aff(p, q);
    return;
  }
  fq_t pp, r, ppp, qq, t;
  fq_mul(pp, q.x, p.zz);
  fq_sub(pp, pp, p.x);   // P = qx ZZ - X
  fq_mul(r, q.y, p.zzz);
  fq_sub(r, r, p.y);     // R = qy ZZZ - Y
  if (fq_is_zero(pp)) {
    if (fq_is_zero(r)) {
      g1_xyzz_from_aff(p, q);
      g1_xyzz_dbl(p);
    } else {
      g1_xyzz_set_inf(p);
    }
    return;
  }
  fq_sqr(t, pp);          // PP
  fq_mul(ppp, pp, t);     // PPP = P PP
  fq_mul(qq, p.x, t);     // Q = X PP
  fq_mul(p.zz, p.zz, t);  // ZZ3 = ZZ PP
  fq_mul(p.zzz, p.zzz, ppp);  // ZZZ3 = ZZZ PPP
  fq_sqr(t, r);
  fq_sub(t, t, ppp);
  fq_sub(t, t, qq);
  fq_sub(t, t, qq);       // X3 = R^2 - PPP - 2Q
  fq_sub(qq, qq, t);
  fq_mul(qq, r, qq);      // R (Q - X3)
  fq_mul(ppp, p.y, ppp);  // Y PPP
  fq_sub(p.y, qq, ppp);   // Y3
  p.x = t;
}

// p += q (add-2008-s), exceptional cases included.
WS_FN void g1_xyzz_add(g1_xyzz &p, const g1_xyzz &q) {
  if (g1_xyzz_is_inf(q)) return;
  if (g1_xyzz_is_inf(p)) {
    p = q;
    return;
  }
  fq_t u1, s1, pp, r, t, ppp;
  fq_mul(u1, p.x, q.zz);   // U1 = X1 ZZ2
  fq_mul(pp, q.x, p.zz);   // U2 = X2 ZZ1
  fq_sub(pp, pp, u1);      // P = U2 - U1
  fq_mul(s1, p.y, q.zzz);  // S1 = Y1 ZZZ2
  fq_mul(r, q.y, p.zzz);   // S2 = Y2 ZZZ1
  fq_sub(r, r, s1);        // R = S2 - S1
  if (fq_is_zero(pp)) {
    if (fq_is_zero(r)) {
      g1_xyzz_dbl(p);
    } else {
      g1_xyzz_set_inf(p);
    }
    return;
  }
  fq_sqr(t, pp);           // PP
  fq_mul(ppp, pp, t);      // PPP
  fq_mul(p.zz, p.zz, q.zz);
  fq_mul(p.zz, p.zz, t);   // ZZ3 = ZZ1 ZZ2 PP
  fq_mul(p.zzz, p.zzz, q.zzz);
  fq_mul(p.zzz, p.zzz, ppp);  // ZZZ3 = ZZZ1 ZZZ2 PPP
  fq_mul(u1, u1, t);       // Q = U1 PP
  fq_sqr(t, r);
  fq_sub(t, t, ppp);
  fq_sub(t, t, u1);
  fq_sub(t, t, u1);        // X3 = R^2 - PPP - 2Q
  fq_sub(u1, u1, t);
  fq_mul(u1, r, u1);       // R (Q - X3)
  fq_mul(s1, s1, ppp);     // S1 PPP
  fq_sub(p.y, u1, s1);     // Y3
  p.x = t;
}

// k p for a small k (double-and-add from the top bit).
WS_FN void g1_xyzz_mul_small(g1_xyzz &r, const g1_xyzz &p, u32 k) {
  g1_xyzz acc;
  g1_xyzz_set_inf(acc);
#pragma unroll 1
  for (int i = 31; i >= 0; i--) {
    g1_xyzz_dbl(acc);
    if ((k >> i) & 1u) g1_xyzz_add(acc, p);
  }
  r = acc;
}

// The affine point of p with one inversion: for inv = 1 / (ZZ ZZZ), 1 / ZZ = inv ZZZ and
// 1 / ZZZ = inv ZZ.
WS_FN void g1_xyzz_to_aff(g1_aff &a, const g1_xyzz &p) {
  if (g1_xyzz_is_inf(p)) {
    fq_zero(a.x);
    fq_zero(a.y);
    return;
  }
  fq_t inv, t;
  fq_mul(t, p.zz, p.zzz);
  fq_inv(inv, t);
  fq_mul(t, inv, p.zzz);  // 1 / ZZ
  fq_mul(a.x, p.x, t);
  fq_mul(t, inv, p.zz);   // 1 / ZZZ
  fq_mul(a.y, p.y, t);
}
