#include "core/collective/sparse_allgather.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "core/collective/ring_run.h"

namespace st::collective {
namespace {

// The chunks of one exchange, one slot per origin rank. Each slot is written
// by exactly one task, so the slots need no lock.
struct Gather {
  std::size_t numel = 0;
  int world = 1;
  Rank rank = 0;
  SparseAllgatherOptions options;
  std::exception_ptr argument_error;  // fails the run at once, on every rank
  std::vector<compress::SparseChunk> by_rank;

  int origin_received_at(int step) const { return ((rank - step - 1) % world + world) % world; }
};

// A sampled chunk's messages stand for the full tensor's: headers once,
// pairs scaled.
WireScale wire_scale_of(const Gather& gather) {
  const std::size_t full = gather.options.wire_numel;
  if (full == 0 || full == gather.numel || gather.numel == 0) return {};
  return WireScale{static_cast<double>(full) / static_cast<double>(gather.numel),
                   detail::kHeaderBytes + compress::kWireHeaderBytes};
}

using GatherFinisher = std::function<void(std::exception_ptr, std::shared_ptr<Gather>, const CollectiveStats&)>;

void check_contribution(compress::SparseView chunk, std::size_t numel) {
  for (std::size_t j = 0; j < chunk.count; ++j) {
    if (chunk.indices[j] >= numel)
      throw CollectiveError(fmt::format("sparse allgather: index {} at position {} is not below numel {}",
                                        chunk.indices[j], j, numel));
    if (j > 0 && chunk.indices[j] <= chunk.indices[j - 1])
      throw CollectiveError(fmt::format("sparse allgather: indices not strictly increasing at position {}", j));
    if (!std::isfinite(chunk.values[j]))
      throw CollectiveError(fmt::format("sparse allgather: value at position {} is not finite", j));
  }
}

// `wire_numel`: the full tensor a sampled chunk stands for (0: none), whose
// size rules out u16 indices the sample alone would allow.
compress::WireFormat choose_format(compress::SparseView chunk, std::size_t numel, std::size_t wire_numel,
                                   compress::ValueEncoding wanted) {
  compress::WireFormat format{compress::best_index_encoding(chunk, numel), wanted};
  if (format.index == compress::IndexEncoding::kU16 && wire_numel > compress::kU16MaxNumel)
    format.index = compress::IndexEncoding::kU32;
  if (wanted == compress::ValueEncoding::kF16)
    for (std::size_t j = 0; j < chunk.count; ++j)
      if (std::fabs(chunk.values[j]) > compress::kMaxHalf) return {format.index, compress::ValueEncoding::kF32};
  return format;
}

std::vector<uint8_t> encode_contribution(compress::SparseView chunk, std::size_t numel, const Gather& gather) {
  check_contribution(chunk, numel);
  const auto format = choose_format(chunk, numel, gather.options.wire_numel, gather.options.values);
  const std::size_t size = compress::encoded_size(chunk, numel, format);
  auto payload = detail::data_payload(size);
  compress::encode(chunk, numel, format, payload.data() + detail::kHeaderBytes, size, gather.options.simd);
  return payload;
}

void decode_into(const std::vector<uint8_t>& payload, const Gather& gather, compress::SparseChunk& out) {
  const uint8_t* body = payload.data() + detail::kHeaderBytes;
  const std::size_t size = payload.size() - detail::kHeaderBytes;
  const auto header = compress::peek_header(body, size);
  if (header.numel != gather.numel)
    throw CollectiveError(fmt::format("sparse allgather: a chunk for numel {} arrived, this rank has numel {}",
                                      header.numel, gather.numel));
  out.reserve(std::max<std::size_t>(header.count, 1));  // never null buffers, even for no pairs
  compress::decode(body, size, out.buffers(), gather.options.simd);
  out.count = header.count;
}

void start_gather(Communicator& comm, compress::SparseView chunk, std::shared_ptr<Gather> gather,
                  GatherFinisher finisher) {
  const int world = gather->world;
  if (static_cast<uint32_t>(world - 1) > kMaxSteps) {
    auto error = std::make_exception_ptr(CollectiveError(
        fmt::format("sparse allgather: {} ranks need more than {} steps", world, kMaxSteps)));
    comm.executor().post([error, gather, finisher] { finisher(error, gather, CollectiveStats{}); });
    return;
  }
  std::vector<int> steps;
  for (int step = 0; step + 1 < world; ++step) steps.push_back(step);
  auto run = detail::RingRun::create(
      comm, comm.next_collective_id(), steps,
      [gather, finisher = std::move(finisher)](std::exception_ptr error, const CollectiveStats& stats) {
        finisher(error, gather, stats);
      },
      wire_scale_of(*gather));
  std::vector<uint8_t> own;
  try {
    if (gather->argument_error) std::rethrow_exception(gather->argument_error);
    own = encode_contribution(chunk, gather->numel, *gather);
    decode_into(own, *gather, gather->by_rank[gather->rank]);  // rounded like the others' copies
  } catch (...) {
    run->fail(std::current_exception());
    run->started();
    return;
  }
  for (int step : steps) {
    run->expect(step, [run, gather, step, world](std::vector<uint8_t>&& payload) {
      if (step + 2 < world) run->send(step + 1, payload);  // forward first: it is on the critical path
      decode_into(payload, *gather, gather->by_rank[gather->origin_received_at(step)]);
    });
  }
  if (world > 1) run->send(0, std::move(own));
  run->started();
}

std::shared_ptr<Gather> make_gather(const Communicator& comm, std::size_t numel, SparseAllgatherOptions options,
                                    std::exception_ptr argument_error) {
  auto gather = std::make_shared<Gather>();
  if (!argument_error && options.wire_numel != 0 && options.wire_numel < numel)
    argument_error = std::make_exception_ptr(CollectiveError(fmt::format(
        "sparse allgather: wire_numel {} is below numel {} (a sample cannot stand for less)", options.wire_numel,
        numel)));
  gather->argument_error = argument_error;
  gather->numel = numel;
  gather->world = comm.world_size();
  gather->rank = comm.rank();
  gather->options = options;
  gather->by_rank.resize(gather->world);
  return gather;
}

}  // namespace

compress::SparseChunk sum_in_order(const std::vector<compress::SparseChunk>& chunks) {
  std::size_t total = 0;
  for (const auto& chunk : chunks) total += chunk.count;
  compress::SparseChunk sum;
  sum.reserve(total);
  // Heads ordered by (index, chunk position): equal indices pop in the
  // order the chunks were given, which fixes the order of the additions.
  using Head = std::pair<uint32_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  std::vector<std::size_t> next(chunks.size(), 0);
  for (std::size_t c = 0; c < chunks.size(); ++c)
    if (chunks[c].count > 0) heads.emplace(chunks[c].indices[0], c);
  std::size_t k = 0;
  while (!heads.empty()) {
    const auto [index, c] = heads.top();
    heads.pop();
    const float value = chunks[c].values[next[c]];
    if (k > 0 && sum.indices[k - 1] == index) {
      sum.values[k - 1] += value;
    } else {
      sum.indices[k] = index;
      sum.values[k] = value;
      ++k;
    }
    if (++next[c] < chunks[c].count) heads.emplace(chunks[c].indices[next[c]], c);
  }
  sum.count = k;
  return sum;
}

void sparse_ring_allgather(Communicator& comm, compress::SparseView chunk, std::size_t numel,
                           SparseAllgatherOptions options, SparseDoneCallback done) {
  start_gather(comm, chunk, make_gather(comm, numel, options, nullptr),
               [done = std::move(done)](std::exception_ptr error, std::shared_ptr<Gather> gather,
                                        const CollectiveStats& stats) {
                 if (error) return done(error, compress::SparseChunk{}, stats);
                 done(nullptr, sum_in_order(gather->by_rank), stats);
               });
}

void sparse_ring_allgather_dense(Communicator& comm, compress::SparseView chunk, std::size_t numel,
                                 float* accumulate, SparseAllgatherOptions options, DoneCallback done) {
  // A bad argument still joins the ring, to abort it: the others are
  // waiting for this rank.
  std::exception_ptr argument_error;
  if (accumulate == nullptr && numel > 0)
    argument_error = std::make_exception_ptr(CollectiveError("sparse allgather: null accumulate buffer with numel > 0"));
  start_gather(comm, chunk, make_gather(comm, numel, options, argument_error),
               [accumulate, done = std::move(done)](std::exception_ptr error, std::shared_ptr<Gather> gather,
                                                    const CollectiveStats& stats) {
                 if (error) return done(error, stats);
                 for (const auto& part : gather->by_rank)
                   for (std::size_t j = 0; j < part.count; ++j) accumulate[part.indices[j]] += part.values[j];
                 done(nullptr, stats);
               });
}

}  // namespace st::collective
