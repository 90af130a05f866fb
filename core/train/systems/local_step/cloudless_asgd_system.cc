// cloudless-asgd-ga: Cloudless-Training's asynchronous SGD with gradient
// accumulation between regions (docs/systems.md). Each node is a cluster
// whose parameter server holds the master: inside it the workers'
// gradients are summed every step (synchronous within the cluster). Between
// clusters there is no barrier: each PS accumulates its own gradients over
// `accumulation_steps` iterations and sends the accumulation to every other
// PS, point to point, as soon as it is complete; a PS adds every remote
// accumulation that has arrived to the gradient of its next step.
//
// Staleness is bounded: the step of iteration t waits until every peer's
// accumulations that ended at iteration t - max_staleness or earlier have
// arrived (with accumulation_steps 1 and max_staleness 0 that is ddp: each
// step sums every node's gradient of that iteration). The staleness of an
// applied accumulation (t minus the iteration its sender's accumulation
// ended at) is recorded per iteration and summarised. After its last
// iteration a PS waits for every peer's last accumulation and applies what
// is left in one more step, so every cluster's model has seen every
// gradient.
//
// Messages use one transport tag outside the collective range (tags with
// bit 31 clear are left to point-to-point users, core/collective/communicator.h);
// per (source, tag) they arrive in the order sent, so rounds need no id in
// the tag. Each message: round (u32), end iteration (u32), element count
// (u32), then the accumulation as f32.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "core/collective/communicator.h"
#include "core/comm/control_tags.h"
#include "core/comm/mailbox.h"
#include "core/train/systems/local_step/local_step_options.h"
#include "core/train/systems/local_step/local_step_system.h"
#include "core/train/systems/local_step/local_step_systems.h"

namespace st::train {
namespace {

using runtime::Nanos;

constexpr uint32_t kAccumulationTag = comm::control_tags::kAccumulation;  // core/comm/control_tags.h
constexpr std::size_t kHeaderBytes = 12;

struct Accumulation {
  int round = 0;
  int end_iteration = 0;
  std::vector<float> sum;
};

class CloudlessAsgdSystem final : public LocalStepSystem {
 public:
  explicit CloudlessAsgdSystem(NodeContext& ctx)
      : LocalStepSystem(ctx),
        accumulate_(ctx.config.options_as<CloudlessAsgdOptions>().accumulation_steps),
        bound_(ctx.config.options_as<CloudlessAsgdOptions>().max_staleness),
        rounds_per_node_((ctx.config.iterations + accumulate_ - 1) / accumulate_),
        peers_(static_cast<std::size_t>(ctx.config.nodes)) {
    accumulation_.resize(numels_.size());
    for (std::size_t l = 0; l < numels_.size(); ++l) accumulation_[l].assign(numels_[l], 0.0f);
  }
  std::string name() const override { return "cloudless-asgd-ga"; }

  void start(runtime::Task finished) override {
    for (int p = 0; p < ctx_.config.nodes; ++p)
      if (p != ctx_.rank) receive_next(p);
    LocalStepSystem::start(std::move(finished));
  }

 protected:
  float step_scale(int) const override { return world_mean_scale(); }

  // Accumulates this node's gradient (and sends a complete accumulation at
  // once, before waiting, so that bound 0 cannot deadlock), waits for the
  // staleness bound, then adds every remote accumulation that has arrived.
  void before_step(int t, IterationRecord& record, runtime::Task next) override {
    const bool round_complete = (t + 1) % accumulate_ == 0 || t + 1 == ctx_.config.iterations;
    auto payload = std::make_shared<std::vector<uint8_t>>();
    ctx_.executor.compute(
        [this, t, round_complete, payload] {
          for (std::size_t l = 0; l < numels_.size(); ++l) {
            const auto& g = grads()[l];
            auto& a = accumulation_[l];
            for (std::size_t i = 0; i < g.size(); ++i) a[i] += g[i];
          }
          if (round_complete) *payload = pack_accumulation(t);
        },
        cpu_cost(), [this, t, &record, round_complete, payload, next] {
          if (round_complete) send_to_peers(std::move(*payload), record);
          const Nanos wait_start = ctx_.executor.now();
          when_peers_reach(t - bound_, [this, t, &record, wait_start, next] {
            record.wait_ms = detail::ms_since(ctx_.executor, wait_start);
            ctx_.executor.compute([this, t, &record] { add_arrived(t, record); }, cpu_cost(), next);
          });
        });
  }

  // Every peer's rounds, then one step with what is left of them.
  // Its sends are counted where they leave (send_to_peers), in the
  // iterations' records; the drain only applies what arrived.
  void drain(IterationRecord&, runtime::Task next) override {
    const int last = ctx_.config.iterations - 1;
    when_peers_reach(last, [this, last, next] {
      ctx_.executor.compute(
          [this, last] {
            for (auto& g : grads()) std::fill(g.begin(), g.end(), 0.0f);
            add_arrived(last + 1, drain_record_);
          },
          cpu_cost(), [this, last, next] {
            // Over TCP the run ends by closing this process's transport:
            // first let every accumulation this node sent leave.
            auto finish = [this, next] { when_sends_done(next); };
            if (!drain_record_.applied) return finish();
            step_master(last, step_scale(last), finish);
          });
    });
  }

  nlohmann::json stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return {{"accumulations_applied", applied_},
            {"max_staleness", max_staleness_},
            {"mean_staleness", applied_ ? static_cast<double>(staleness_sum_) / applied_ : 0.0},
            {"staleness_bound", bound_},
            {"accumulation_steps", accumulate_}};
  }

 private:
  struct DrainRecord : IterationRecord {
    bool applied = false;
  };

  int end_of_round(int round) const { return std::min((round + 1) * accumulate_, ctx_.config.iterations) - 1; }
  // Rounds a peer has completed by iteration `iteration` (inclusive).
  int rounds_ending_by(int iteration) const {
    if (iteration < 0) return 0;
    if (iteration >= ctx_.config.iterations - 1) return rounds_per_node_;
    return (iteration + 1) / accumulate_;
  }

  // The PS's element-wise work on the whole model (accumulating, packing,
  // adding arrivals), priced like summing gradients on the node's CPU.
  runtime::ComputeCost cpu_cost() const {
    return runtime::ComputeCost{runtime::TaskKind::kGather, -1, static_cast<double>(total_numel()), ctx_.rank, -1};
  }

  // The accumulation as a message, and a fresh accumulation.
  std::vector<uint8_t> pack_accumulation(int t) {
    const std::size_t n = total_numel();
    std::vector<uint8_t> payload(kHeaderBytes + n * sizeof(float));
    const uint32_t header[3] = {static_cast<uint32_t>(sent_rounds_), static_cast<uint32_t>(t), static_cast<uint32_t>(n)};
    std::memcpy(payload.data(), header, kHeaderBytes);
    uint8_t* out = payload.data() + kHeaderBytes;
    for (auto& a : accumulation_) {
      std::memcpy(out, a.data(), a.size() * sizeof(float));
      out += a.size() * sizeof(float);
      std::fill(a.begin(), a.end(), 0.0f);
    }
    ++sent_rounds_;
    return payload;
  }

  void send_to_peers(std::vector<uint8_t> payload, IterationRecord& record) {
    for (int p = 0; p < ctx_.config.nodes; ++p) {
      if (p == ctx_.rank) continue;
      record.bytes_sent += payload.size();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++sends_in_flight_;
      }
      ctx_.comm.transport().send(p, kAccumulationTag, payload, [this](std::exception_ptr error) {
        if (error) return fail(error);
        runtime::Task waiter;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (--sends_in_flight_ == 0) {
            waiter = std::move(sends_done_);
            sends_done_ = nullptr;
          }
        }
        if (waiter) ctx_.executor.post(std::move(waiter));
      });
    }
  }

  void receive_next(int peer) {
    ctx_.comm.mailbox().recv(peer, kAccumulationTag, [this, peer](std::exception_ptr error, comm::Message&& message) {
      if (error) return fail(error);
      try {
        arrived(peer, decode(peer, message.payload));
      } catch (...) {
        fail(std::current_exception());
      }
    });
  }

  Accumulation decode(int peer, const std::vector<uint8_t>& payload) {
    const std::size_t n = total_numel();
    if (payload.size() != kHeaderBytes + n * sizeof(float))
      throw collective::CollectiveError(fmt::format("cloudless-asgd-ga: accumulation from rank {} has {} bytes, expected {}",
                                                    peer, payload.size(), kHeaderBytes + n * sizeof(float)));
    uint32_t header[3];
    std::memcpy(header, payload.data(), kHeaderBytes);
    Accumulation a;
    a.round = static_cast<int>(header[0]);
    a.end_iteration = static_cast<int>(header[1]);
    const int expected = received_[static_cast<std::size_t>(peer)];
    if (a.round != expected || a.end_iteration != end_of_round(a.round) || header[2] != n)
      throw collective::CollectiveError(fmt::format(
          "cloudless-asgd-ga: rank {} sent round {} ending at iteration {} with {} values; expected round {} ending "
          "at "
          "{} with {} (do all ranks run the same configuration?)",
          peer, a.round, a.end_iteration, header[2], expected, end_of_round(expected), n));
    a.sum.resize(n);
    std::memcpy(a.sum.data(), payload.data() + kHeaderBytes, n * sizeof(float));
    return a;
  }

  void arrived(int peer, Accumulation a) {
    std::vector<runtime::Task> ready;
    bool more = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& count = received_[static_cast<std::size_t>(peer)];
      ++count;
      bytes_received_ += kHeaderBytes + a.sum.size() * sizeof(float);
      more = count < rounds_per_node_;
      pending_[{a.round, peer}] = std::move(a);
      ready = take_ready_waiters();
    }
    // Outside the lock: a message already buffered is handed over inline.
    if (more) receive_next(peer);
    for (auto& task : ready) ctx_.executor.post(std::move(task));
  }

  // Runs `next` once every peer has delivered every round that ends at
  // `iteration` or earlier.
  void when_peers_reach(int iteration, runtime::Task next) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!peers_reached(iteration)) {
        waiters_.push_back({iteration, std::move(next)});
        return;
      }
    }
    next();
  }

  void when_sends_done(runtime::Task next) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (sends_in_flight_ > 0) {
        sends_done_ = std::move(next);
        return;
      }
    }
    next();
  }

  bool peers_reached(int iteration) const {
    const int needed = rounds_ending_by(iteration);
    for (int p = 0; p < ctx_.config.nodes; ++p)
      if (p != ctx_.rank && received_[static_cast<std::size_t>(p)] < needed) return false;
    return true;
  }

  std::vector<runtime::Task> take_ready_waiters() {
    std::vector<runtime::Task> ready;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (peers_reached(it->first)) {
        ready.push_back(std::move(it->second));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    return ready;
  }

  // grads += every arrived accumulation that ended at iteration t or
  // earlier, in (round, peer) order so the sum does not depend on arrival
  // order. A peer can be one round ahead (it sends before it waits), and its
  // later round may already be here: that one waits for a later step, or
  // bound 0 would add the peer's gradients of two iterations in one step.
  void add_arrived(int t, IterationRecord& record) {
    std::map<std::pair<int, int>, Accumulation> taken;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.end_iteration <= t) {
          taken.insert(pending_.extract(it++));
        } else {
          ++it;
        }
      }
      record.bytes_received += bytes_received_;
      bytes_received_ = 0;
    }
    double staleness_sum = 0;
    for (auto& [key, a] : taken) {
      const float* in = a.sum.data();
      for (auto& g : grads()) {
        for (std::size_t i = 0; i < g.size(); ++i) g[i] += in[i];
        in += g.size();
      }
      const int staleness = t - a.end_iteration;
      staleness_sum += staleness;
      std::lock_guard<std::mutex> lock(mutex_);
      ++applied_;
      staleness_sum_ += staleness;
      max_staleness_ = std::max(max_staleness_, staleness);
    }
    if (!taken.empty()) {
      record.staleness = staleness_sum / static_cast<double>(taken.size());
      if (&record == &drain_record_) drain_record_.applied = true;
    }
  }

  void fail(std::exception_ptr error) {
    ctx_.executor.post([error] { std::rethrow_exception(error); });
  }

  const int accumulate_, bound_, rounds_per_node_;
  const std::size_t peers_;
  std::vector<std::vector<float>> accumulation_;  // this node's, since its last send
  int sent_rounds_ = 0;
  DrainRecord drain_record_;
  mutable std::mutex mutex_;
  std::vector<int> received_ = std::vector<int>(peers_, 0);
  std::map<std::pair<int, int>, Accumulation> pending_;  // (round, peer) -> arrived, not yet applied
  std::vector<std::pair<int, runtime::Task>> waiters_;
  int sends_in_flight_ = 0;
  runtime::Task sends_done_;
  uint64_t bytes_received_ = 0;
  int applied_ = 0, max_staleness_ = 0;
  long long staleness_sum_ = 0;
};

}  // namespace

SystemDescriptor cloudless_asgd_ga_system() {
  return describe_system<CloudlessAsgdOptions, CloudlessAsgdSystem>(
      "cloudless-asgd-ga",
      "Cloudless-Training's asynchronous exchange of gradient accumulations with a staleness bound");
}

}  // namespace st::train
