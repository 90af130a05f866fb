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
#include <cstddef>

#include "core/collective/communicator.h"

namespace st::collective {

struct AllreduceOptions {
  bool average = false;  // divide the sum by the world size
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
