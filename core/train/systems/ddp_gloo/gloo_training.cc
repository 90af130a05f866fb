#include "core/train/systems/ddp_gloo/gloo_training.h"


#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "core/c10d/gloo_ddp.h"
#include "core/train/systems/ddp_gloo/ddp_gloo.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/train/node/worker_samplers.h"

namespace st::train {
namespace {

uint64_t checksum_of(const std::vector<std::vector<float>>& params) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, as VersionedParameters::checksum
  for (const auto& layer : params) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(layer.data());
    for (std::size_t i = 0; i < layer.size() * sizeof(float); ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::vector<std::vector<float>> parameters_of(const model::Model& m) {
  std::vector<std::vector<float>> out;
  for (const auto& p : m.parameters()) {
    const auto c = p.detach().contiguous();
    out.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

struct NodeOutcome {
  std::vector<std::vector<float>> parameters;
  std::vector<IterationRecord> records;
  std::exception_ptr error;
};

NodeOutcome run_node(const TrainConfig& c, int rank, const data::Dataset& train) {
  NodeOutcome out;
  const auto shape = train.image_shape();
  const model::ModelShape model_shape{shape.channels, shape.height, shape.width, train.classes()};
  std::vector<model::Model> replicas;
  std::vector<data::BatchStream> streams;
  const std::vector<data::ShardSampler> samplers = worker_samplers(c, train, rank);
  {
    // make_model seeds LibTorch's global generator: nodes on other threads
    // must not build their replicas at the same time.
    static std::mutex init_mutex;
    std::lock_guard<std::mutex> init_lock(init_mutex);
    for (int w = 0; w < c.gpus_of(rank); ++w) {
      replicas.push_back(model::make_model(c.model_spec(), model_shape, c.seed));
      streams.emplace_back(samplers[static_cast<std::size_t>(w)]);
    }
  }
  c10d_ddp::GlooGroupOptions group_options;
  group_options.rank = rank;
  group_options.world_size = c.nodes;
  group_options.master_addr = c.master_addr;
  group_options.master_port = static_cast<uint16_t>(c.master_port);
  group_options.device_hostname = c.advertise_host;  // "": the address on the route to master_addr
  group_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(c.peer_timeout_s * 1000));
  c10d_ddp::GlooDdpOptions options;
  options.sgd = {c.lr, c.momentum, c.weight_decay};
  if (c.unequal_gpus()) options.workers_in_job = c.total_workers();
  if (c.options_as<DdpGlooOptions>().comm_hook == "fp16") options.comm_hook = c10d_ddp::CommHook::kFp16Compress;
  c10d_ddp::GlooDdp ddp(c10d_ddp::GlooGroup::connect(group_options), replicas, options);
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < c.iterations; ++t) {
    std::vector<data::Batch> batches;
    for (auto& stream : streams) {
      const auto indices = stream.next(c.batch_per_worker);
      batches.push_back(train.get_batch(Span<const std::size_t>(indices)));
    }
    const auto begin = std::chrono::steady_clock::now();
    ddp.set_lr(c.lr * lr_scale_at(c, t));
    ddp.train_step(batches);
    const auto& s = ddp.last_step();
    IterationRecord r;
    r.rank = rank;
    r.iteration = t;
    r.start_s = std::chrono::duration<double>(begin - start).count();
    r.iteration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    r.forward_ms = s.forward_ms;
    r.backward_ms = s.backward_ms;
    r.exchange_ms = s.allreduce_wait_ms;
    r.optimize_ms = s.optimizer_ms;
    r.bytes_sent = static_cast<uint64_t>(s.bytes_allreduced);
    r.loss = s.loss;
    out.records.push_back(r);
  }
  out.parameters = parameters_of(replicas.front());
  return out;
}

}  // namespace

TrainResult run_gloo_training(const TrainConfig& c, const data::Dataset& train, const data::Dataset& test,
                              ResultsWriter& results) {
  std::vector<int> ranks;
  if (c.transport == "inproc")
    for (int r = 0; r < c.nodes; ++r) ranks.push_back(r);
  else
    ranks.push_back(c.rank);
  std::vector<NodeOutcome> outcomes(ranks.size());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        outcomes[i] = run_node(c, ranks[i], train);
      } catch (...) {
        outcomes[i].error = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& o : outcomes)
    if (o.error) std::rethrow_exception(o.error);

  TrainResult result;
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    result.checksums.push_back(checksum_of(outcomes[i].parameters));
    for (const auto& r : outcomes[i].records) {
      if (ranks[i] == 0 || c.transport == "tcp") results.add_iteration(r);  // a TCP process records its own rank
      if (i == 0) result.mean_iteration_ms += r.iteration_ms / c.iterations;
    }
  }
  result.final_parameters = outcomes.front().parameters;
  if (ranks.front() == 0) {
    const auto shape = train.image_shape();
    auto evaluator = model::make_model(c.model_spec(), {shape.channels, shape.height, shape.width, train.classes()}, c.seed);
    const auto params = evaluator.parameters();
    for (std::size_t l = 0; l < params.size(); ++l)
      std::memcpy(params[l].data_ptr<float>(), result.final_parameters[l].data(), result.final_parameters[l].size() * 4);
    const auto e = model::evaluate(evaluator, test, c.eval_samples);
    EvalRecord record{result.wall_s, c.iterations, e.accuracy, e.mean_loss, e.samples};
    results.add_eval(record);
    result.evaluations.push_back(record);
  }
  return result;
}

}  // namespace st::train
