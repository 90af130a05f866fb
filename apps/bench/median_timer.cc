#include "apps/bench/median_timer.h"

#include <benchmark/benchmark.h>

#include <stdexcept>

namespace st::bench {
namespace {

// Collects the "median" aggregate of every benchmark, in milliseconds.
class MedianCollector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) throw std::runtime_error("benchmark " + run.benchmark_name() + " failed: " + run.error_message);
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        medians[run.run_name.function_name] = run.GetAdjustedRealTime();
      // One repetition has no aggregates: its one run is the median.
      if (run.run_type == Run::RT_Iteration) medians.emplace(run.run_name.function_name, run.GetAdjustedRealTime());
    }
  }
  std::map<std::string, double> medians;
};

void initialize_once() {
  static const bool done = [] {
    int argc = 1;
    char name[] = "stellatrain-bench";
    char* argv[] = {name, nullptr};
    benchmark::Initialize(&argc, argv);
    return true;
  }();
  (void)done;
}

}  // namespace

void MedianTimer::add(const std::string& name, std::function<void()> body) {
  bodies_.emplace_back(name, std::move(body));
}

std::map<std::string, double> MedianTimer::run() {
  initialize_once();
  for (auto& [name, body] : bodies_) {
    auto* fn = &body;
    benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& state) {
      for (auto _ : state) (*fn)();
    })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(options_.min_time_s)
        ->Repetitions(options_.repetitions)
        ->ReportAggregatesOnly(true);
  }
  MedianCollector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  bodies_.clear();
  return collector.medians;
}

}  // namespace st::bench
