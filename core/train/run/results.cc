#include "core/train/run/results.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <stdexcept>

#include "core/control/controller.h"

namespace st::train {
namespace {

std::ofstream open_csv(const std::string& path, const char* header) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
  out << header << '\n';
  out.flush();
  return out;
}

// Written to a side file and renamed, so that a reader, a crash or an
// interrupt never leaves half a manifest.
void write_json(const std::string& path, const nlohmann::json& value) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", temporary));
    out << value.dump(2) << '\n';
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {}", temporary));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", temporary, path, error.message()));
}

}  // namespace

ResultsWriter::ResultsWriter(const std::string& dir, const nlohmann::json& manifest)
    : dir_(dir), manifest_(manifest) {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create results folder {}: {}", dir_, ec.message()));
  write_json(dir_ + "/manifest.json", manifest_);
  iterations_ = open_csv(dir_ + "/iterations.csv",
                         "rank,iteration,start_s,iteration_ms,wait_ms,forward_ms,backward_ms,gather_ms,"
                         "compress_ms,exchange_ms,optimize_ms,pipeline_ms,bytes_sent,bytes_received,loss,density,staleness,batch,"
                         "device_forward_ms,device_backward_ms,load_ms");
  eval_ = open_csv(dir_ + "/eval.csv", "time_s,iteration,accuracy,loss,samples");
}

void ResultsWriter::mark_training_started() {
  if (dir_.empty()) return;
  const std::string path = dir_ + "/" + kTrainingStartedFile;
  if (!std::ofstream(path)) throw std::runtime_error(fmt::format("cannot create {}", path));
}

void ResultsWriter::add_iteration(const IterationRecord& r) {
  if (dir_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  iterations_ << fmt::format("{},{},{:.6f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{:.6f},{:.6f},{:.3f},{},{:.3f},{:.3f},{:.3f}\n",
                             r.rank, r.iteration, r.start_s, r.iteration_ms, r.wait_ms, r.forward_ms,
                             r.backward_ms, r.gather_ms, r.compress_ms, r.exchange_ms, r.optimize_ms,
                             r.pipeline_ms, r.bytes_sent, r.bytes_received, r.loss, r.density, r.staleness,
                             fmt::join(r.batch, ";"), r.device_forward_ms, r.device_backward_ms, r.load_ms);
  iterations_.flush();
}

void ResultsWriter::add_eval(const EvalRecord& r) {
  if (dir_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  eval_ << fmt::format("{:.6f},{},{:.6f},{:.6f},{}\n", r.time_s, r.iteration, r.accuracy, r.loss, r.samples);
  eval_.flush();
}

void ResultsWriter::add_control(const control::ControlRecord& r) {
  if (dir_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!control_.is_open())
    control_ = open_csv(dir_ + "/control.csv",
                        "time_s,iteration,effective_iteration,estimated_mbps,measured_mbps,latency_ms,wait_fraction,"
                        "compute_ms,budget_ms,density,batch,delivered_mbps,reason");
  std::vector<std::string> nodes;
  for (const auto& node : r.batch) nodes.push_back(fmt::format("{}", fmt::join(node, ";")));
  control_ << fmt::format("{:.6f},{},{},{:.3f},{},{:.3f},{:.4f},{:.3f},{:.3f},{:.6f},{},{:.3f},\"{}\"\n", r.time_s,
                          r.iteration, r.effective_iteration, r.estimated_mbps,
                          r.measured_mbps ? fmt::format("{:.3f}", *r.measured_mbps) : std::string(), r.latency_ms,
                          r.wait_fraction, r.compute_ms, r.budget_ms, r.density, fmt::join(nodes, "|"),
                          r.delivered_mbps, r.reason);
  control_.flush();
}

void ResultsWriter::update_manifest(const nlohmann::json& extra) {
  if (dir_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  manifest_.update(extra);
  write_json(dir_ + "/manifest.json", manifest_);
}

}  // namespace st::train
