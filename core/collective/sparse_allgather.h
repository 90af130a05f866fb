#pragma once
// Sparse ring allgather, StellaTrain's inter-node gradient exchange.
//
// Each rank contributes one sparse chunk of a tensor of `numel` elements
// (indices strictly increasing). In step s (0 .. W-2) rank r sends to r+1
// the chunk it received in step s-1 (its own in step 0), so after W-1 steps
// every rank holds all W chunks. Chunks travel in the wire format of
// core/compress/wire.h, encoded once by their origin (index encoding from
// best_index_encoding(), value encoding as chosen) and forwarded byte for
// byte.
//
// Every rank then sums the W chunks in rank order 0, 1, ..., W-1 (never in
// arrival order), each from the same decoded bytes, so all ranks get
// bitwise identical results. With f16 values the origin's own copy is also
// the decoded one, so it is rounded like everyone else's.
//
// A chunk whose values do not fit f16 (|v| > 65504) is sent as f32 instead;
// the wire header says so and no information is lost. A chunk with a
// non-finite value or a bad index fails the collective on every rank.
#include <cstddef>
#include <exception>
#include <functional>

#include "core/collective/communicator.h"
#include "core/compress/sparse.h"
#include "core/compress/wire.h"
#include "core/simd/simd_level.h"

namespace st::collective {

struct SparseAllgatherOptions {
  compress::ValueEncoding values = compress::ValueEncoding::kF32;
  simd::Level simd = simd::default_level();
  // The full tensor's elements when the chunk selects from a sample of it
  // (sampled CPU stages in timing mode, docs/sim.md); 0: numel, no sample.
  // Every message then goes out as what a chunk of the full tensor would
  // be: its (index, value) pairs times wire_numel / numel, in the index
  // encoding the full tensor allows (no u16 above 65536 elements).
  std::size_t wire_numel = 0;
};

// `sum`: the sorted union of all indices with the summed values.
using SparseDoneCallback =
    std::function<void(std::exception_ptr error, compress::SparseChunk&& sum, const CollectiveStats& stats)>;

// Starts the exchange and returns at once. The chunk is encoded before the
// call returns, so the caller may reuse its buffers. `done` runs once on an
// executor worker. Every rank must pass the same numel.
void sparse_ring_allgather(Communicator& comm, compress::SparseView chunk, std::size_t numel,
                           SparseAllgatherOptions options, SparseDoneCallback done);

// The same exchange, accumulated into a dense buffer of numel floats:
// accumulate[i] += v for every chunk in rank order. `accumulate` must stay
// valid until `done`; ranks whose buffers start equal end equal.
void sparse_ring_allgather_dense(Communicator& comm, compress::SparseView chunk, std::size_t numel,
                                 float* accumulate, SparseAllgatherOptions options, DoneCallback done);

// The rank-order sum of several chunks (exposed for tests and callers that
// gather by other means): for equal indices, ((v_0 + v_1) + v_2) + ... over
// the chunks that hold the index, in the order given.
compress::SparseChunk sum_in_order(const std::vector<compress::SparseChunk>& chunks);

}  // namespace st::collective
