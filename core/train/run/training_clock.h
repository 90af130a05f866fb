#pragma once
// The run's clock on the wall clock: time since training started, not since
// the process set up. A real or emulated node spends seconds before its
// first iteration (the model, the data, a timing run's recorded gradient
// distributions, rendezvous); the sim backend spends none of its simulated
// time there. restart() at the start of training puts a wall-clock run's
// iterations, evaluations and controller ticks on the sim's footing, and on
// the emulator's network time (its trace starts then too: the trainer
// marks the moment, ResultsWriter::mark_training_started).
#include <atomic>
#include <functional>

#include "core/runtime/executor.h"

namespace st::train {

class TrainingClock final : public runtime::Executor {
 public:
  // `inner` must outlive this object.
  explicit TrainingClock(runtime::Executor& inner) : inner_(inner), origin_(inner.now().count()) {}

  // From now on now() counts from here.
  void restart() { origin_ = inner_.now().count(); }

  runtime::Nanos now() const override { return inner_.now() - runtime::Nanos(origin_.load()); }
  void post(runtime::Task task) override { inner_.post(std::move(task)); }
  void post_after(runtime::Nanos delay, runtime::Task task) override { inner_.post_after(delay, std::move(task)); }
  void compute(runtime::Task work, runtime::ComputeCost cost, runtime::Task done) override {
    inner_.compute(std::move(work), cost, std::move(done));
  }
  void post_progress(int mark, runtime::Task task) override { inner_.post_progress(mark, std::move(task)); }
  void run_until(const std::function<bool()>& finished) override { inner_.run_until(finished); }
  int workers() const override { return inner_.workers(); }

 private:
  runtime::Executor& inner_;
  std::atomic<int64_t> origin_;
};

}  // namespace st::train
