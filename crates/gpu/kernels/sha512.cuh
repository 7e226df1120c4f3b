// SHA-512 (FIPS 180-4) of R || A || M, the Ed25519 challenge input: two 32-byte
// strings followed by a message read in place (global memory on the device, any
// pointer on the host), without copying the message into a buffer.
#pragma once
#include "common.cuh"

#if WS_CUDA
#define WS_SHA_UNROLL _Pragma("unroll")
#else
#define WS_SHA_UNROLL
#endif

WS_CONST u64 WS_SHA512_K[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL};

WS_FN u64 ws_sha_rotr(u64 x, int n) { return (x >> n) | (x << (64 - n)); }

// One compression of the 16 big-endian words w into h.
WS_FN void ws_sha512_block(u64 h[8], u64 w[16]) {
  u64 a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int j = 0; j < 80; j += 16) {
    WS_SHA_UNROLL
    for (int i = 0; i < 16; i++) {
      if (j > 0) {
        u64 w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
        u64 s0 = ws_sha_rotr(w15, 1) ^ ws_sha_rotr(w15, 8) ^ (w15 >> 7);
        u64 s1 = ws_sha_rotr(w2, 19) ^ ws_sha_rotr(w2, 61) ^ (w2 >> 6);
        w[i] += s0 + w[(i + 9) & 15] + s1;
      }
      u64 S1 = ws_sha_rotr(e, 14) ^ ws_sha_rotr(e, 18) ^ ws_sha_rotr(e, 41);
      u64 ch = (e & f) ^ (~e & g);
      u64 t1 = hh + S1 + ch + WS_SHA512_K[j + i] + w[i];
      u64 S0 = ws_sha_rotr(a, 28) ^ ws_sha_rotr(a, 34) ^ ws_sha_rotr(a, 39);
      u64 maj = (a & b) ^ (a & c) ^ (b & c);
      u64 t2 = S0 + maj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

// Byte i of R || A || M || 0x80 || 0...; the length field is written separately.
WS_FN u8 ws_sha_ram_byte(const u8 *r, const u8 *a, const u8 *msg, u64 len, u64 i) {
  if (i < 32) return r[i];
  if (i < 64) return a[i - 32];
  if (i - 64 < len) return msg[i - 64];
  return i - 64 == len ? 0x80 : 0;
}

// out = SHA-512(r[0..32] || a[0..32] || msg[0..len]).
WS_FN void ws_sha512_ram(const u8 *r, const u8 *a, const u8 *msg, u64 len, u8 out[64]) {
  u64 h[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
              0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
              0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  u64 total = 64 + len;
  // Data, the 0x80 byte and the 16-byte length, rounded up to whole blocks.
  u64 blocks = (total + 16 + 1 + 127) / 128;
  for (u64 blk = 0; blk < blocks; blk++) {
    u64 base = blk * 128;
    u64 w[16];
    if (base >= 64 && base + 128 <= total) {
      // The block lies inside the message.
      const u8 *p = msg + (base - 64);
      WS_SHA_UNROLL
      for (int i = 0; i < 16; i++) {
        u64 x = 0;
        WS_SHA_UNROLL
        for (int k = 0; k < 8; k++) x = (x << 8) | p[8 * i + k];
        w[i] = x;
      }
    } else {
      WS_SHA_UNROLL
      for (int i = 0; i < 16; i++) {
        u64 x = 0;
        for (int k = 0; k < 8; k++)
          x = (x << 8) | ws_sha_ram_byte(r, a, msg, len, base + 8 * i + k);
        w[i] = x;
      }
      if (blk == blocks - 1) {
        w[14] = total >> 61;
        w[15] = total << 3;
      }
    }
    ws_sha512_block(h, w);
  }
  WS_SHA_UNROLL
  for (int i = 0; i < 8; i++)
    WS_SHA_UNROLL
    for (int k = 0; k < 8; k++) out[8 * i + k] = (u8)(h[i] >> (56 - 8 * k));
}
