// Batch Ed25519 verification: one thread per signature, each running
// ws_ed25519_verify_one (ed25519.cuh) and writing one status byte (WS_ED_*).
//
// records: n packed records of 96 bytes, R || S || A (the signature, then the key).
// msgs: the messages back to back; message i is msgs[msg_off[i] .. msg_off[i] + msg_len[i]].
// base_table: WS_ED_BASE_TABLE_WORDS words (the host builds it once).
#include "ed25519.cuh"

extern "C" __global__ void ws_ed25519_verify(const u8 *records, const u8 *msgs,
                                             const u32 *msg_off, const u32 *msg_len,
                                             const u32 *base_table, u32 n, u32 mode,
                                             u8 *status) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u8 *rec = records + (u64)i * 96;
  status[i] = ws_ed25519_verify_one(msgs + msg_off[i], msg_len[i], rec, rec + 64, mode,
                                    base_table);
}
