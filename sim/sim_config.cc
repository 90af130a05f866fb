#include "sim/sim_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "net/links_yaml.h"
#include "sim/sim_backend.h"

namespace st::sim {
namespace {

namespace fs = std::filesystem;
using util::YamlField;

std::string dir_of(const std::string& file) { return fs::path(file).parent_path().string(); }

}  // namespace

void parse_compute(const YamlField& f, ComputeModelConfig& c, SimExecutorOptions& executor, const std::string& base_dir,
                   const std::string& default_profile) {
  // `math` (full or timing) and `stage_sample` belong to the training side
  // (TrainConfig::math, TrainConfig::stage_sample); the scenario reads them.
  f.allow_only({"model", "scale", "profile", "device_tflops", "device_gbps", "cpu_gbps", "h2d_gbps", "cpu_cores",
                "stall_timeout_s", "math", "stage_sample"});
  c.kind = f.at("model").text_in({"measured", "profile", "analytic"});
  c.scale = f.number_or("scale", c.scale, 1e-6, 1e6);
  if (f.has("profile")) c.profile_path = net::resolve_path(f.at("profile").text(), base_dir);
  else if (!default_profile.empty()) c.profile_path = default_profile;
  if (c.kind == "profile" && c.profile_path.empty()) f.fail("the profile model needs 'profile: FILE'");
  c.device_tflops = f.number_or("device_tflops", c.device_tflops, 1e-6, 1e6);
  c.device_gbps = f.number_or("device_gbps", c.device_gbps, 1e-6, 1e6);
  c.cpu_gbps = f.number_or("cpu_gbps", c.cpu_gbps, 1e-6, 1e6);
  c.h2d_gbps = f.number_or("h2d_gbps", c.h2d_gbps, 1e-6, 1e6);
  executor.cpu_cores = static_cast<int>(f.integer_or("cpu_cores", executor.cpu_cores, 1, 4096));
  executor.stall_timeout_s = f.number_or("stall_timeout_s", executor.stall_timeout_s, 1e-3, 1e9);
}

SimRunConfig load_sim_config(const std::string& path) {
  return parse_sim_config(YamlField::load_file(path), dir_of(path));
}

SimRunConfig parse_sim_config(const YamlField& top, const std::string& base_dir) {
  const std::string path = top.file();
  top.allow_only({"clusters", "lan", "wan", "mtu", "model", "seed", "trace_offset", "rto_min_ms", "compute"});
  SimRunConfig config;
  config.source = path;
  config.topology = net::parse_topology(top, base_dir);
  if (top.has("compute")) parse_compute(top.at("compute"), config.compute.compute, config.compute.executor, base_dir);
  try {
    (void)plan_sim_network(config.topology);
  } catch (const std::exception& e) {
    throw util::YamlError(fmt::format("{}: {}", path, e.what()));
  }
  return config;
}

namespace {

// A map that is not in the file: an absent `compute:` section, whose
// errors then name it by its path.
YamlField empty_section(const YamlField& parent, const std::string& key) {
  return YamlField(YAML::Node(YAML::NodeType::Map), parent.file(), key);
}

// The profile file's own `device:` must match the cluster's device name.
void check_profile_device(const YamlField& cluster_field, const ClusterPricing& cluster, const std::string& profile) {
  if (cluster.device.empty() || profile.empty()) return;
  const auto root = YamlField::load_file(profile);
  if (root.has("device") && root.at("device").text() != cluster.device)
    cluster_field.at("device").fail(fmt::format("the compute profile {} describes device '{}'", profile,
                                                root.at("device").text()));
}

}  // namespace

std::shared_ptr<const SimComputeSettings> parse_scenario_compute(const YamlField& top,
                                                              const std::vector<ClusterPricing>& clusters,
                                                              const train::TrainConfig& training,
                                                              const std::string& base_dir) {
  auto config = std::make_shared<SimComputeSettings>();
  const auto cluster_field = top.at("clusters");
  const auto& cluster_profile = clusters.front().profile;
  // Clusters with profiles or rates of their own: every node is priced by
  // its cluster's (nodes are numbered cluster by cluster, as in the network).
  const bool own_profiles = std::any_of(clusters.begin(), clusters.end(), [&](const ClusterPricing& c) {
    return c.profile != cluster_profile;
  });
  const bool own_rates = std::any_of(clusters.begin(), clusters.end(), [](const ClusterPricing& c) { return c.tflops > 0; });
  const auto compute = top.has("compute") ? top.at("compute") : empty_section(top, "compute");
  if (top.has("compute")) {
    parse_compute(compute, config->compute, config->executor, base_dir, cluster_profile);
  } else if (!cluster_profile.empty()) {
    config->compute.kind = "profile";
    config->compute.profile_path = cluster_profile;
  }
  if (own_profiles || own_rates) {
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      const auto& c = clusters[i];
      if (own_profiles && c.profile.empty())
        cluster_field.at(i).fail("another cluster names its own profile: give every cluster one");
      if (own_profiles && config->compute.kind != "profile")
        cluster_field.at(i).at("profile").fail(
            fmt::format("only the profile compute model uses a profile (compute.model is {})", config->compute.kind));
      if (own_rates && config->compute.kind != "analytic")
        cluster_field.at(i).fail(fmt::format("tflops needs compute.model: analytic (it is {})", config->compute.kind));
      check_profile_device(cluster_field.at(i), c, c.profile);
      for (int n = 0; n < c.nodes; ++n) {
        if (own_profiles) config->compute.node_profiles.push_back(c.profile);
        if (own_rates) config->compute.node_tflops.push_back(c.tflops);
      }
    }
    if (own_profiles) config->compute.profile_path = cluster_profile;
  }
  if (!own_profiles && !cluster_profile.empty() && config->compute.kind != "profile")
    cluster_field.at(0).at("profile").fail(fmt::format("only the profile compute model uses a profile (compute.model is {})",
                                                       config->compute.kind));
  if (!own_profiles && !cluster_profile.empty() && config->compute.profile_path != cluster_profile)
    compute.at("profile").fail(fmt::format("differs from the clusters' profile {}", cluster_profile));
  if (!own_profiles) check_profile_device(cluster_field.at(0), clusters.front(), config->compute.profile_path);
  // Load the model now, so a profile without this model's entry fails here
  // rather than after other systems have run.
  const auto priced = priced_for(config->compute, training);
  try {
    (void)make_compute_model(priced);
  } catch (const std::exception& e) {
    compute.fail(e.what());
  }
  return config;
}

}  // namespace st::sim
