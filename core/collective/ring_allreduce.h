#pragma once
// Dense ring allreduce of a float buffer, in place: reduce-scatter, then
// allgather (2 (W-1) steps), as in Gloo and NCCL's ring.
//
// The buffer is cut into W chunks, chunk c = [c n / W, (c+1) n / W). Chunk c
// is summed along the ring in the fixed order rank c, c+1, ..., c+W-1
// (left-to-right float additions), finished by rank c-1 (the chunk's owner),
// optionally divided by W there, and then copied unchanged to every rank.
// Each result element is therefore computed once, by one rank, and every
// rank ends with bitwise identical buffers. Empty chunks (n < W) send no
// message; n = 0 or W = 1 completes without traffic.
//
// fp16_wire: chunks travel as IEEE binary16 (half the bytes). As in a ring
// over fp16 tensors (Gloo, NCCL), every value is a half: the buffer is
// rounded to half first, and each partial sum is added in fp32 and rounded
// back to half before it goes on, so the owner's final value is a half and
// every rank still ends bitwise identical. Values beyond +-65504 become
// +-inf, as a cast to float16 does.
#include <cstddef>

#include "core/collective/communicator.h"

namespace st::collective {

struct AllreduceOptions {
  bool average = false;    // divide the sum by the world size (at the owner, after summing)
  bool fp16_wire = false;  // send and sum halves (see above)
  // Each rank divides its own buffer by this before anything is sent
  // (after the rounding to half with fp16_wire, the quotient rounded to half
  // again): PyTorch's fp16_compress_hook divides each bucket by the world
  // size before the allreduce, so that fp16 sums stay in range. 1: none.
  float predivide = 1.0f;
  // Elements of the full tensor each element of `data` stands for, when
  // `data` is a sample (sampled CPU stages in timing mode, docs/sim.md):
  // every message is sent as that many times its body (WireScale). 1: none.
  double wire_scale = 1.0;
};

// Starts the allreduce and returns at once; `done` runs on an executor
// worker when this rank's buffer holds the result (or the error). `data`
// must stay valid and untouched until then. Every rank must pass the same n.
void ring_allreduce(Communicator& comm, float* data, std::size_t n, AllreduceOptions options, DoneCallback done);

// The same with an explicit collective id (BucketedAllreduce reserves its
// ids in advance).
void ring_allreduce_with_id(Communicator& comm, uint32_t collective_id, float* data, std::size_t n,
                            AllreduceOptions options, DoneCallback done);

// Chunk boundaries, shared with the tests and the docs' formulas.
inline std::size_t ring_chunk_begin(std::size_t n, int world_size, int chunk) {
  return n * static_cast<std::size_t>(chunk) / static_cast<std::size_t>(world_size);
}

}  // namespace st::collective
