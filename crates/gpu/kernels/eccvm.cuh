// The lane VM of docs/trace-format.md (field 1, GF(2^255 - 19)) as one function that
// runs one input set: on the GPU one thread per set, so a warp's threads execute the
// same instruction stream in lockstep and never diverge; on the host, the same function
// is run set by set and checked against crates/eccvm.
//
// The program must have passed crates/eccvm's loader (every register, input, constant
// and slot index in range, every register written before it is read, kinds respected):
// this code does no checks of its own.
//
// Field elements are held in Montgomery form (R = 2^256) with mont.cuh, fully reduced,
// so equality and zero tests compare limbs. Booleans are held as 0 or 1 in limb 0.
// The register file lives in a caller-provided buffer, interleaved so that the threads
// of a warp touch consecutive words: limb l of register r of set i is at
// regs[(r * 8 + l) * stride + i]; the host passes stride 1 and one set's base.
#pragma once
#include "mont.cuh"

// q = 2^255 - 19, little-endian 32-bit limbs.
WS_CONST u32 ECCVM_Q[8] = {0xffffffedu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                           0xffffffffu, 0xffffffffu, 0xffffffffu, 0x7fffffffu};
// R^2 mod q = 38^2, since R = 2^256 = 2 * 2^255 = 38 (mod q).
WS_CONST u32 ECCVM_R2[8] = {1444u, 0, 0, 0, 0, 0, 0, 0};
WS_CONST u32 ECCVM_ONE[8] = {1u, 0, 0, 0, 0, 0, 0, 0};

enum EccvmOp : u32 {
  ECCVM_LOAD = 0x01, ECCVM_BIT = 0x02, ECCVM_RAWLT = 0x03, ECCVM_CONST = 0x04,
  ECCVM_BCONST = 0x05, ECCVM_ADD = 0x10, ECCVM_SUB = 0x11, ECCVM_MUL = 0x12,
  ECCVM_SQR = 0x13, ECCVM_NEG = 0x14, ECCVM_EQ = 0x20, ECCVM_ISZERO = 0x21,
  ECCVM_PARITY = 0x22, ECCVM_AND = 0x30, ECCVM_OR = 0x31, ECCVM_XOR = 0x32,
  ECCVM_NOT = 0x33, ECCVM_SELECT = 0x40, ECCVM_OUTF = 0x50, ECCVM_OUTB = 0x51,
};

WS_FN void eccvm_get(u32 *x, const u32 *regs, u32 r, u32 stride) {
#pragma unroll
  for (int l = 0; l < 8; l++) x[l] = regs[(r * 8 + l) * stride];
}

WS_FN void eccvm_put(u32 *regs, u32 r, u32 stride, const u32 *x) {
#pragma unroll
  for (int l = 0; l < 8; l++) regs[(r * 8 + l) * stride] = x[l];
}

WS_FN void eccvm_put_bool(u32 *regs, u32 r, u32 stride, u32 v) {
  regs[(r * 8) * stride] = v;
}

WS_FN u32 eccvm_get_bool(const u32 *regs, u32 r, u32 stride) { return regs[(r * 8) * stride]; }

// x = low(x, nbits), 1 <= nbits <= 256.
WS_FN void eccvm_mask(u32 *x, u32 nbits) {
#pragma unroll
  for (int l = 0; l < 8; l++) {
    u32 lo = 32u * l;
    if (nbits <= lo) {
      x[l] = 0;
    } else if (nbits < lo + 32) {
      x[l] &= (1u << (nbits - lo)) - 1u;
    }
  }
}

// The canonical value of a Montgomery-form element.
WS_FN void eccvm_canonical(u32 *out, const u32 *x, u32 m0inv) {
  mont_mul<8>(out, x, ECCVM_ONE, ECCVM_Q, m0inv);
}

// Runs one input set. code: 2 words per instruction (op | dst << 8 | a << 16, b | c << 16);
// consts: 8 words each (raw 256-bit values); in: this set's inputs, 8 words each;
// out: this set's output slots, 8 words each (a bool slot: 0 or 1 in word 0, rest 0).
WS_FN void eccvm_run_set(const u32 *code, u32 ninstr, const u32 *consts, const u32 *in,
                         u32 *regs, u32 stride, u32 *out) {
  const u32 m0inv = mont_m0inv(ECCVM_Q[0]);
  u32 x[8], y[8], z[8];
  for (u32 pc = 0; pc < ninstr; pc++) {
    u32 w0 = code[2 * pc], w1 = code[2 * pc + 1];
    u32 op = w0 & 0xff, dst = (w0 >> 8) & 0xff, a = w0 >> 16, b = w1 & 0xffff, c = w1 >> 16;
    switch (op) {
      case ECCVM_LOAD:
        for (int l = 0; l < 8; l++) x[l] = in[a * 8 + l];
        eccvm_mask(x, b);
        // x < 2^256 and R^2 < q, so the product is below R q and reduces fully.
        mont_mul<8>(y, x, ECCVM_R2, ECCVM_Q, m0inv);
        eccvm_put(regs, dst, stride, y);
        break;
      case ECCVM_BIT:
        eccvm_put_bool(regs, dst, stride, (in[a * 8 + (b >> 5)] >> (b & 31)) & 1u);
        break;
      case ECCVM_RAWLT: {
        for (int l = 0; l < 8; l++) x[l] = in[a * 8 + l];
        eccvm_mask(x, c);
        const u32 *k = consts + b * 8;
        u32 lt = 0, decided = 0;
        for (int l = 7; l >= 0; l--) {
          if (!decided && x[l] != k[l]) {
            lt = x[l] < k[l];
            decided = 1;
          }
        }
        eccvm_put_bool(regs, dst, stride, lt);
        break;
      }
      case ECCVM_CONST:
        mont_mul<8>(y, consts + a * 8, ECCVM_R2, ECCVM_Q, m0inv);
        eccvm_put(regs, dst, stride, y);
        break;
      case ECCVM_BCONST:
        eccvm_put_bool(regs, dst, stride, a & 1u);
        break;
      case ECCVM_ADD:
      case ECCVM_SUB:
      case ECCVM_MUL:
        eccvm_get(x, regs, a, stride);
        eccvm_get(y, regs, b, stride);
        if (op == ECCVM_ADD) mont_add<8>(z, x, y, ECCVM_Q);
        else if (op == ECCVM_SUB) mont_sub<8>(z, x, y, ECCVM_Q);
        else mont_mul<8>(z, x, y, ECCVM_Q, m0inv);
        eccvm_put(regs, dst, stride, z);
        break;
      case ECCVM_SQR:
        eccvm_get(x, regs, a, stride);
        mont_sqr<8>(z, x, ECCVM_Q, m0inv);
        eccvm_put(regs, dst, stride, z);
        break;
      case ECCVM_NEG:
        eccvm_get(x, regs, a, stride);
        for (int l = 0; l < 8; l++) y[l] = 0;
        mont_sub<8>(z, y, x, ECCVM_Q);
        eccvm_put(regs, dst, stride, z);
        break;
      case ECCVM_EQ:
        eccvm_get(x, regs, a, stride);
        eccvm_get(y, regs, b, stride);
        eccvm_put_bool(regs, dst, stride, mont_eq<8>(x, y));
        break;
      case ECCVM_ISZERO:
        eccvm_get(x, regs, a, stride);
        for (int l = 0; l < 8; l++) y[l] = 0;
        eccvm_put_bool(regs, dst, stride, mont_eq<8>(x, y));
        break;
      case ECCVM_PARITY:
        eccvm_get(x, regs, a, stride);
        eccvm_canonical(y, x, m0inv);
        eccvm_put_bool(regs, dst, stride, y[0] & 1u);
        break;
      case ECCVM_AND:
        eccvm_put_bool(regs, dst, stride,
                       eccvm_get_bool(regs, a, stride) & eccvm_get_bool(regs, b, stride));
        break;
      case ECCVM_OR:
        eccvm_put_bool(regs, dst, stride,
                       eccvm_get_bool(regs, a, stride) | eccvm_get_bool(regs, b, stride));
        break;
      case ECCVM_XOR:
        eccvm_put_bool(regs, dst, stride,
                       eccvm_get_bool(regs, a, stride) ^ eccvm_get_bool(regs, b, stride));
        break;
      case ECCVM_NOT:
        eccvm_put_bool(regs, dst, stride, eccvm_get_bool(regs, a, stride) ^ 1u);
        break;
      case ECCVM_SELECT:
        eccvm_get(x, regs, eccvm_get_bool(regs, a, stride) ? b : c, stride);
        eccvm_put(regs, dst, stride, x);
        break;
      case ECCVM_OUTF:
        eccvm_get(x, regs, a, stride);
        eccvm_canonical(out + b * 8, x, m0inv);
        break;
      case ECCVM_OUTB:
        out[b * 8] = eccvm_get_bool(regs, a, stride);
        for (int l = 1; l < 8; l++) out[b * 8 + l] = 0;
        break;
      default:
        break;
    }
  }
}
