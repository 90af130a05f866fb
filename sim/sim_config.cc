#include "sim/sim_config.h"

#include <fmt/format.h>

#include <filesystem>

#include "net/links_yaml.h"

namespace st::sim {
namespace {

namespace fs = std::filesystem;
using util::YamlField;

std::string dir_of(const std::string& file) { return fs::path(file).parent_path().string(); }

}  // namespace

void parse_compute(const YamlField& f, ComputeModelConfig& c, SimExecutorOptions& executor, const std::string& base_dir,
                   const std::string& default_profile) {
  // `math` (full or timing) belongs to the training side (TrainConfig::math);
  // the scenario reads it.
  f.allow_only({"model", "scale", "profile", "device_tflops", "device_gbps", "cpu_gbps", "cpu_cores", "stall_timeout_s",
                "math"});
  c.kind = f.at("model").text_in({"measured", "profile", "analytic"});
  c.scale = f.number_or("scale", c.scale, 1e-6, 1e6);
  if (f.has("profile")) c.profile_path = net::resolve_path(f.at("profile").text(), base_dir);
  else if (!default_profile.empty()) c.profile_path = default_profile;
  if (c.kind == "profile" && c.profile_path.empty()) f.fail("the profile model needs 'profile: FILE'");
  c.device_tflops = f.number_or("device_tflops", c.device_tflops, 1e-6, 1e6);
  c.device_gbps = f.number_or("device_gbps", c.device_gbps, 1e-6, 1e6);
  c.cpu_gbps = f.number_or("cpu_gbps", c.cpu_gbps, 1e-6, 1e6);
  executor.cpu_cores = static_cast<int>(f.integer_or("cpu_cores", executor.cpu_cores, 1, 4096));
  executor.stall_timeout_s = f.number_or("stall_timeout_s", executor.stall_timeout_s, 1e-3, 1e9);
}

SimRunConfig load_sim_config(const std::string& path) {
  return parse_sim_config(YamlField::load_file(path), dir_of(path));
}

SimRunConfig parse_sim_config(const YamlField& top, const std::string& base_dir) {
  const std::string path = top.file();
  top.allow_only({"clusters", "lan", "wan", "mtu", "seed", "compute"});
  SimRunConfig config;
  config.source = path;
  config.topology = net::parse_topology(top, base_dir);
  if (top.has("compute")) parse_compute(top.at("compute"), config.compute, config.executor, base_dir);
  try {
    (void)plan_sim_network(config.topology);
  } catch (const std::exception& e) {
    throw util::YamlError(fmt::format("{}: {}", path, e.what()));
  }
  return config;
}

}  // namespace st::sim
