// Host build of the Ed25519 kernel headers, one extern "C" entry per piece so that each
// can be checked against the Rust crates (crates/gpu/src/host/ed25519.rs).
#include "ed25519.cuh"

extern "C" {

// out = a * b, a^2, 1/a, in canonical bytes; inputs are 32 little-endian bytes read as
// field elements (bit 255 ignored).
void ws_host_fe_mul(const u8 a[32], const u8 b[32], u8 out[32]) {
  ws_fe_to_bytes(ws_fe_mul(ws_fe_from_bytes(a), ws_fe_from_bytes(b)), out);
}

void ws_host_fe_sq(const u8 a[32], u8 out[32]) {
  ws_fe_to_bytes(ws_fe_sq(ws_fe_from_bytes(a)), out);
}

void ws_host_fe_add_sub(const u8 a[32], const u8 b[32], u8 sum[32], u8 diff[32]) {
  ws_fe x = ws_fe_from_bytes(a), y = ws_fe_from_bytes(b);
  ws_fe_to_bytes(ws_fe_add(x, y), sum);
  ws_fe_to_bytes(ws_fe_sub(x, y), diff);
}

void ws_host_fe_invert(const u8 a[32], u8 out[32]) {
  ws_fe_to_bytes(ws_fe_invert(ws_fe_from_bytes(a)), out);
}

// Returns 1 if u/v is a square (root in out), 0 otherwise.
int ws_host_fe_sqrt_ratio(const u8 u[32], const u8 v[32], u8 out[32]) {
  ws_fe r;
  bool ok = ws_fe_sqrt_ratio(ws_fe_from_bytes(u), ws_fe_from_bytes(v), r);
  ws_fe_to_bytes(r, out);
  return ok ? 1 : 0;
}

// Canonical encoding of the 32 bytes read as a field element; flags: bit 0 zero,
// bit 1 negative.
int ws_host_fe_canon(const u8 a[32], u8 out[32]) {
  ws_fe x = ws_fe_from_bytes(a);
  ws_fe_to_bytes(x, out);
  return (ws_fe_is_zero(x) ? 1 : 0) | (ws_fe_is_negative(x) ? 2 : 0);
}

void ws_host_sha512_ram(const u8 r[32], const u8 a[32], const u8 *msg, u64 len, u8 out[64]) {
  ws_sha512_ram(r, a, msg, len, out);
}

void ws_host_sc_reduce_wide(const u8 h[64], u8 out[32]) {
  u32 s[8];
  ws_sc_reduce_wide(h, s);
  for (int i = 0; i < 8; i++)
    for (int k = 0; k < 4; k++) out[4 * i + k] = (u8)(s[i] >> (8 * k));
}

u8 ws_host_ed25519_verify_one(const u8 *msg, u64 len, const u8 sig[64], const u8 pk[32],
                              u32 mode, const u32 *base_table) {
  return ws_ed25519_verify_one(msg, len, sig, pk, mode, base_table);
}

}  // extern "C"
