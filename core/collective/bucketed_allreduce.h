#pragma once
// Bucketed allreduce: the PyTorch DDP gradient algorithm, on our ring.
//
// Gradients are listed in the order backward produces them (reverse layer
// order) and packed into buckets in that order: a tensor joins the current
// bucket, and the bucket closes once it holds at least its cap (so it may
// exceed the cap by its last tensor; a tensor larger than the cap gets a
// bucket of its own). As in DDP, the first bucket has a smaller cap (1 MiB)
// so communication starts early; the others have 25 MiB.
//
// mark_ready(i, data) copies tensor i into its bucket's flat buffer; when
// the last tensor of a bucket is in, that bucket's ring allreduce starts,
// whatever the other buckets are doing, so several buckets can be in flight
// at once. When a bucket's allreduce completes its result is copied back to
// the tensors' data pointers. `done` runs when every bucket is back, or at
// the first error. The AllreduceOptions apply to every bucket's ring
// (fp16_wire with predivide = world size is PyTorch's fp16_compress_hook).
//
// Tags: the constructor reserves one collective id per bucket, so buckets
// that start in different orders on different ranks still meet on the same
// tags. Construct the BucketedAllreduce at the same point on every rank,
// relative to the other collectives of the communicator.
#include <cstddef>
#include <memory>
#include <vector>

#include "core/collective/communicator.h"
#include "core/collective/ring_allreduce.h"

namespace st::collective {

struct BucketOptions {
  std::size_t bucket_cap_bytes = 25u << 20;       // DDP's bucket_cap_mb = 25
  std::size_t first_bucket_cap_bytes = 1u << 20;  // DDP's first bucket (1 MiB)
};

struct BucketPlan {
  struct Bucket {
    std::vector<std::size_t> tensors;  // indices into tensor_numels, in order
    std::vector<std::size_t> offsets;  // each tensor's first element in the bucket
    std::size_t numel = 0;
    // The elements it stands for on the wire: numel, or the full tensors'
    // sum when the tensors are samples (plan_buckets' wire_numels).
    std::size_t wire_numel = 0;
  };
  std::vector<std::size_t> tensor_numels;
  std::vector<Bucket> buckets;
  std::vector<std::size_t> bucket_of;  // per tensor
  std::vector<std::size_t> offset_of;  // per tensor, within its bucket
};

// Tensor sizes (float elements) in the order backward produces them.
BucketPlan plan_buckets(const std::vector<std::size_t>& tensor_numels, BucketOptions options = {});

// The same for tensors that are samples of larger ones (sampled CPU stages in
// timing mode, docs/sim.md): buckets close by the full tensors' sizes
// `wire_numels` (so there are as many, with the same tensors, as without
// sampling) and each bucket's ring sends its sample as its full size
// (AllreduceOptions::wire_scale). Throws std::invalid_argument when the two
// lists differ in length or a full size is below its sample's.
BucketPlan plan_sampled_buckets(const std::vector<std::size_t>& tensor_numels,
                                const std::vector<std::size_t>& wire_numels, BucketOptions options = {});

class BucketedAllreduce {
 public:
  // Reserves the buckets' collective ids. `done` runs once on an executor
  // worker; with an empty plan it runs right away. The plan is copied.
  BucketedAllreduce(Communicator& comm, const BucketPlan& plan, AllreduceOptions options, DoneCallback done);

  // Tensor `tensor_index` holds its gradient at `data` (tensor_numels[i]
  // floats); the sum (or mean) is written back there before `done`. Call
  // once per tensor, from any thread. Throws std::invalid_argument for an
  // index out of range or marked twice.
  void mark_ready(std::size_t tensor_index, float* data);

  std::size_t buckets_started() const;

  class State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace st::collective
