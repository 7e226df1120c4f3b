// The lane VM on the GPU: one thread per input set (see eccvm.cuh).
#include "eccvm.cuh"

// sets input sets; inputs: sets * ninputs * 8 words; out: sets * noutputs * 8 words;
// regs: nregs * 8 * sets words of scratch (interleaved by set).
extern "C" __global__ void ws_eccvm_run(const u32 *code, u32 ninstr, const u32 *consts,
                                        const u32 *inputs, u32 ninputs, u32 *regs, u32 *out,
                                        u32 noutputs, u32 sets) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= sets) return;
  eccvm_run_set(code, ninstr, consts, inputs + (u64)i * ninputs * 8, regs + i, sets,
                out + (u64)i * noutputs * 8);
}
