#pragma once
// The results folder of a run: manifest.json, iterations.csv (one row per
// rank and iteration), eval.csv (time, iteration, accuracy, loss) and, with
// the controller, control.csv (one row per tick, docs/control.md). Rows are flushed as they come so a long run can be watched and a
// crash loses nothing written so far. Thread-safe.
#include <cstdint>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace st::control {
struct ControlRecord;
}

namespace st::train {

struct IterationRecord {
  int rank = 0;
  int iteration = 0;
  double start_s = 0;       // executor clock at the iteration's start
  double iteration_ms = 0;  // start of this iteration to start of the next
  double wait_ms = 0;       // waiting for parameters (staleness barrier / sync step)
  double load_ms = 0;       // reading the master and loading it into the replicas
  double forward_ms = 0;    // mean over local workers
  double backward_ms = 0;   // mean over local workers
  double gather_ms = 0;     // summing the local workers' gradients
  double compress_ms = 0;   // summed over layers
  double exchange_ms = 0;   // summed over layers (collective start to done)
  double optimize_ms = 0;   // summed over layers
  double pipeline_ms = 0;   // end of backward to the last layer's new version
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  double loss = 0;          // mean over local workers
  double density = 0;       // stellatrain: the density this iteration was compressed with (0: dense)
  // Iterations of other nodes' progress the update applied in this
  // iteration had missed (stellatrain: its staleness; cloudless-ma: the
  // age of the applied average; cloudless-asgd-ga: the mean age of the
  // applied remote accumulations; 0 for synchronous steps).
  double staleness = 0;
  std::vector<int> batch;   // per local worker
  // Forward and backward as the GPU timed them (CUDA events), mean over
  // local workers; 0 on the CPU, where forward_ms and backward_ms are the
  // measurement. On the sim backend forward_ms/backward_ms are the priced
  // (simulated) times and these the real GPU's.
  double device_forward_ms = 0;
  double device_backward_ms = 0;
};

struct EvalRecord {
  double time_s = 0;  // executor clock when the evaluated parameters were taken
  int iteration = 0;  // parameters after this many iterations
  double accuracy = 0;
  double loss = 0;
  std::size_t samples = 0;
};

// The file a rank of a run across processes creates as training starts.
inline constexpr const char* kTrainingStartedFile = ".training_started";

class ResultsWriter {
 public:
  // Creates `dir` (and parents) and writes manifest.json at once. An empty
  // dir makes a writer that records nothing.
  ResultsWriter(const std::string& dir, const nlohmann::json& manifest);

  void add_iteration(const IterationRecord& record);
  void add_eval(const EvalRecord& record);
  // A controller tick: control.csv (created with the first one).
  void add_control(const control::ControlRecord& record);
  // Rewrites manifest.json with extra fields (e.g. the final summary).
  void update_manifest(const nlohmann::json& extra);
  // Creates kTrainingStartedFile in the folder: the emulator's launcher
  // starts the network's trace when rank 0's appears (emu/launcher.h).
  void mark_training_started();

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  nlohmann::json manifest_;
  std::mutex mutex_;
  std::ofstream iterations_;
  std::ofstream eval_;
  std::ofstream control_;
};

}  // namespace st::train
