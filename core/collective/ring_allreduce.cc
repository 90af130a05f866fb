#include "core/collective/ring_allreduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/collective/ring_run.h"
#include "core/compress/kernels.h"

namespace st::collective {
namespace {

// The schedule of one rank. Step g (0 .. 2W-3) sends chunk r-g and receives
// chunk r-g-1 (mod W); steps < W-1 reduce, the rest copy. What arrives at
// step g is exactly what leaves at step g+1.
struct DenseRing {
  float* data = nullptr;
  std::size_t n = 0;
  int world = 1;
  Rank rank = 0;
  bool average = false;
  bool fp16_wire = false;

  std::size_t value_bytes() const { return fp16_wire ? sizeof(uint16_t) : sizeof(float); }
  int wrap(int chunk) const { return ((chunk % world) + world) % world; }
  std::size_t begin(int chunk) const { return ring_chunk_begin(n, world, chunk); }
  std::size_t size(int chunk) const { return ring_chunk_begin(n, world, chunk + 1) - begin(chunk); }
  int chunk_out(int step) const { return wrap(rank - step); }
  int chunk_in(int step) const { return wrap(rank - step - 1); }
  int steps() const { return 2 * (world - 1); }
  bool reducing(int step) const { return step < world - 1; }
};

// Halves are converted in small aligned batches: the u16 body sits 4 bytes
// into the message, so it may not be 2-aligned for the kernels' stores.
constexpr std::size_t kHalfBatch = 256;

const compress::Kernels& half_kernels() { return compress::kernels(simd::default_level()); }

// Rounds values to the nearest half (ties to even), in place.
void round_to_half(float* values, std::size_t count) {
  const auto& k = half_kernels();
  uint16_t batch[kHalfBatch];
  for (std::size_t j = 0; j < count; j += kHalfBatch) {
    const std::size_t m = std::min(kHalfBatch, count - j);
    k.to_half(values + j, batch, m);
    k.from_half(batch, values + j, m);
  }
}

std::vector<uint8_t> pack(const DenseRing& ring, int chunk) {
  const std::size_t count = ring.size(chunk);
  auto payload = detail::data_payload(count * ring.value_bytes());
  const float* values = ring.data + ring.begin(chunk);
  uint8_t* body = payload.data() + detail::kHeaderBytes;
  if (!ring.fp16_wire) {
    std::memcpy(body, values, count * sizeof(float));
    return payload;
  }
  const auto& k = half_kernels();
  uint16_t batch[kHalfBatch];
  for (std::size_t j = 0; j < count; j += kHalfBatch) {
    const std::size_t m = std::min(kHalfBatch, count - j);
    k.to_half(values + j, batch, m);
    std::memcpy(body + j * sizeof(uint16_t), batch, m * sizeof(uint16_t));
  }
  return payload;
}

// The message body as floats (halves widened exactly).
void unpack(const DenseRing& ring, const uint8_t* body, std::size_t count, float* out) {
  if (!ring.fp16_wire) {
    std::memcpy(out, body, count * sizeof(float));
    return;
  }
  const auto& k = half_kernels();
  uint16_t batch[kHalfBatch];
  for (std::size_t j = 0; j < count; j += kHalfBatch) {
    const std::size_t m = std::min(kHalfBatch, count - j);
    std::memcpy(batch, body + j * sizeof(uint16_t), m * sizeof(uint16_t));
    k.from_half(batch, out + j, m);
  }
}

void absorb(const DenseRing& ring, uint32_t id, int step, const std::vector<uint8_t>& payload) {
  const int chunk = ring.chunk_in(step);
  const std::size_t count = ring.size(chunk);
  const std::size_t expected = detail::kHeaderBytes + count * ring.value_bytes();
  if (payload.size() != expected)
    throw CollectiveError(fmt::format(
        "collective {}: step {} message from rank {} has {} bytes, expected {} (do all ranks pass the same n?)", id,
        step, (ring.rank + ring.world - 1) % ring.world, payload.size(), expected));
  const uint8_t* in = payload.data() + detail::kHeaderBytes;
  float* out = ring.data + ring.begin(chunk);
  if (!ring.reducing(step)) {
    unpack(ring, in, count, out);
    return;
  }
  // The partial sum coming from upstream is the left operand: chunk c is
  // summed as ((d_c + d_c+1) + d_c+2) + ...
  float upstream[kHalfBatch];
  for (std::size_t j = 0; j < count; j += kHalfBatch) {
    const std::size_t m = std::min(kHalfBatch, count - j);
    unpack(ring, in + j * ring.value_bytes(), m, upstream);
    for (std::size_t i = 0; i < m; ++i) out[j + i] = upstream[i] + out[j + i];
  }
  // With halves, every partial sum is a half (what the next pack would send
  // anyway); at the owner this makes the final value one too.
  if (ring.fp16_wire) round_to_half(out, count);
  if (ring.average && step == ring.world - 2) {  // this rank owns the chunk
    const auto world = static_cast<float>(ring.world);
    for (std::size_t i = 0; i < count; ++i) out[i] /= world;
    if (ring.fp16_wire) round_to_half(out, count);
  }
}

// Before anything leaves: the whole local buffer as halves, then divided.
void prepare_input(const DenseRing& ring, float predivide) {
  if (ring.fp16_wire) round_to_half(ring.data, ring.n);
  if (predivide == 1.0f) return;
  for (std::size_t i = 0; i < ring.n; ++i) ring.data[i] /= predivide;
  if (ring.fp16_wire) round_to_half(ring.data, ring.n);
}

void complete_now(Communicator& comm, std::exception_ptr error, DoneCallback done) {
  comm.executor().post([error, done = std::move(done)] { done(error, CollectiveStats{}); });
}

}  // namespace

void ring_allreduce(Communicator& comm, float* data, std::size_t n, AllreduceOptions options, DoneCallback done) {
  ring_allreduce_with_id(comm, comm.next_collective_id(), data, n, options, std::move(done));
}

void ring_allreduce_with_id(Communicator& comm, uint32_t collective_id, float* data, std::size_t n,
                            AllreduceOptions options, DoneCallback done) {
  const DenseRing ring{data, n, comm.world_size(), comm.rank(), options.average, options.fp16_wire};
  if (static_cast<uint32_t>(ring.steps()) > kMaxSteps)
    return complete_now(comm, std::make_exception_ptr(CollectiveError(fmt::format(
                                  "ring allreduce: {} ranks need more than {} steps", ring.world, kMaxSteps))),
                        std::move(done));
  std::vector<int> send_steps;
  for (int step = 0; step < ring.steps(); ++step)
    if (ring.size(ring.chunk_out(step)) > 0) send_steps.push_back(step);

  auto run = detail::RingRun::create(comm, collective_id, std::move(send_steps), std::move(done),
                                     WireScale{options.wire_scale, detail::kHeaderBytes});
  if (n > 0 && data == nullptr) {
    // Still joins the ring, to abort it: the others are waiting for this rank.
    run->fail(std::make_exception_ptr(CollectiveError("ring allreduce: null buffer with n > 0")));
    run->started();
    return;
  }
  if (!(options.predivide > 0.0f)) {
    run->fail(std::make_exception_ptr(
        CollectiveError(fmt::format("ring allreduce: predivide must be positive, got {}", options.predivide))));
    run->started();
    return;
  }
  prepare_input(ring, options.predivide);
  for (int step = 0; step < ring.steps(); ++step) {
    if (ring.size(ring.chunk_in(step)) == 0) continue;  // the sender skips it too
    run->expect(step, [run, ring, step](std::vector<uint8_t>&& payload) {
      absorb(ring, run->id(), step, payload);
      if (step + 1 < ring.steps()) run->send(step + 1, pack(ring, ring.chunk_in(step)));
    });
  }
  if (ring.steps() > 0 && ring.size(ring.chunk_out(0)) > 0) run->send(0, pack(ring, ring.chunk_out(0)));
  run->started();
}

}  // namespace st::collective
