#pragma once
// Times named bodies with Google Benchmark (repetitions, median aggregate)
// and hands the medians back, so ratios between them are measured side by
// side in one run on this shared, noisy machine.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace st::bench {

struct TimerOptions {
  double min_time_s = 0.2;  // per repetition
  int repetitions = 5;
};

class MedianTimer {
 public:
  explicit MedianTimer(TimerOptions options) : options_(options) {}
  // Registers a body; run() times it. Names must be unique per run().
  void add(const std::string& name, std::function<void()> body);
  // Runs every registered body; returns median wall milliseconds per call by
  // name, then forgets the bodies.
  std::map<std::string, double> run();

 private:
  TimerOptions options_;
  std::vector<std::pair<std::string, std::function<void()>>> bodies_;
};

}  // namespace st::bench
