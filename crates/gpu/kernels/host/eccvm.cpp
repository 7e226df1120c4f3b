// Host build of the lane VM (eccvm.cuh), run set by set.
#include "eccvm.cuh"

extern "C" void ws_host_eccvm_run(const u32 *code, u32 ninstr, const u32 *consts,
                                  const u32 *inputs, u32 ninputs, u32 *regs, u32 *out,
                                  u32 noutputs, u32 sets) {
  for (u32 i = 0; i < sets; i++)
    eccvm_run_set(code, ninstr, consts, inputs + (u64)i * ninputs * 8, regs, 1,
                  out + (u64)i * noutputs * 8);
}
