#include "apps/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "core/device/compute_device.h"
#include "core/model/model.h"
#include "core/util/yaml_fields.h"
#include "net/links_yaml.h"
#include "net/network_plan.h"
#ifdef ST_HAVE_SIM
#include "sim/compute_model.h"
#include "sim/sim_backend.h"
#include "sim/sim_config.h"
#include "sim/topology.h"
#endif
#ifdef ST_HAVE_EMU
#include "emu/emu_plan.h"
#endif

namespace st::apps {
namespace {

namespace fs = std::filesystem;
using util::YamlField;

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// yaml-cpp keeps both of two equal keys and reads the first, so a repeated
// key would be silently ignored.
void reject_duplicate_keys(const YamlField& f) {
  if (f.is_sequence()) {
    for (std::size_t i = 0; i < f.size(); ++i) reject_duplicate_keys(f.at(i));
    return;
  }
  if (!f.is_map()) return;
  std::set<std::string> seen;
  (void)f.keys();  // every key plain text
  for (const auto& entry : f.node()) {
    const auto key = entry.first.Scalar();
    const YamlField child(entry.second, f.file(), f.path().empty() ? key : f.path() + "." + key);
    if (!seen.insert(key).second) YamlField(entry.first, f.file(), child.path()).fail("this key is given twice");
    reject_duplicate_keys(child);
  }
}

// A map that is not in the file, for optional sections (errors then name
// the section by its path).
YamlField empty_section(const YamlField& parent, const std::string& key) {
  return YamlField(YAML::Node(YAML::NodeType::Map), parent.file(), key);
}

// The engine runs one gpus_per_node on every node, so per-cluster values
// must agree (devices and compute profiles may differ: the sim backend
// prices each node by its own cluster's).
template <typename T>
void require_same_as_first(const YamlField& clusters, const std::vector<ScenarioCluster>& parsed, const char* key,
                           T ScenarioCluster::*member) {
  for (std::size_t i = 1; i < parsed.size(); ++i) {
    if (parsed[i].*member == parsed[0].*member) continue;
    const auto cluster = clusters.at(i);
    const auto where = cluster.has(key) ? cluster.at(key) : cluster;
    where.fail(fmt::format("differs from clusters[0].{}: clusters with different {} are not supported yet "
                           "(the engine runs the same value on every node)",
                           key, key));
  }
}

std::vector<ScenarioCluster> parse_clusters(const YamlField& field, const std::string& base_dir) {
  field.require_sequence();
  if (field.size() == 0) field.fail("needs at least one cluster");
  std::vector<ScenarioCluster> clusters;
  std::set<std::string> names;
  for (std::size_t i = 0; i < field.size(); ++i) {
    const auto c = field.at(i);
    c.allow_only({"name", "nodes", "gpus_per_node", "device", "profile", "tflops", "cost_per_hour", "gpu_hour",
                  "egress_per_gb"});
    ScenarioCluster cluster;
    cluster.name = c.at("name").text();
    if (cluster.name.empty()) c.at("name").fail("must not be empty");
    if (!names.insert(cluster.name).second) c.at("name").fail(fmt::format("cluster name '{}' is used twice", cluster.name));
    cluster.nodes = static_cast<int>(c.integer_or("nodes", 1, 1, 1024));
    cluster.gpus_per_node = static_cast<int>(c.integer_or("gpus_per_node", 1, 1, 64));
    cluster.device = c.text_or("device", "");
    if (c.has("profile")) cluster.profile = resolve(c.at("profile").text(), base_dir);
    cluster.tflops = c.number_or("tflops", 0, 1e-6, 1e6);
    if (c.has("profile") && c.has("tflops")) c.at("tflops").fail("give either profile (profile model) or tflops (analytic model)");
    cluster.cost_per_hour = c.number_or("cost_per_hour", 0, 0, 1e6);
    cluster.gpu_hour = c.number_or("gpu_hour", 0, 0, 1e6);
    cluster.egress_per_gb = c.number_or("egress_per_gb", 0, 0, 1e6);
    clusters.push_back(cluster);
  }
  require_same_as_first(field, clusters, "gpus_per_node", &ScenarioCluster::gpus_per_node);
  return clusters;
}

std::string parse_model(const YamlField& field) {
  const auto names = model::model_names();
  const auto name = field.text();
  if (std::find(names.begin(), names.end(), name) == names.end())
    field.fail(fmt::format("'{}' is not one of: {}", name, fmt::join(names, ", ")));
  return name;
}

// `dataset: NAME` or `dataset: {name: NAME, dir: FOLDER}`.
void parse_dataset(const YamlField& field, train::TrainConfig& c, const std::string& base_dir) {
  if (field.is_scalar()) {
    c.dataset = field.text_in({"fashion-mnist", "cifar10", "synthetic"});
    return;
  }
  field.allow_only({"name", "dir", "shape", "classes"});
  c.dataset = field.at("name").text_in({"fashion-mnist", "cifar10", "synthetic"});
  if (field.has("dir")) {
    if (c.dataset == "synthetic") field.at("dir").fail("the synthetic dataset has no files");
    c.data_dir = resolve(field.at("dir").text(), base_dir);
  }
  // The synthetic dataset's images: shape [channels, height, width].
  for (const char* key : {"shape", "classes"})
    if (field.has(key) && c.dataset != "synthetic") field.at(key).fail("only the synthetic dataset takes it");
  if (field.has("shape")) {
    const auto shape = field.at("shape");
    shape.require_sequence();
    if (shape.size() != 3) shape.fail("expected [channels, height, width]");
    c.synthetic_channels = shape.at(0).integer_in(1, 64);
    c.synthetic_height = shape.at(1).integer_in(1, 4096);
    c.synthetic_width = shape.at(2).integer_in(1, 4096);
  }
  if (field.has("classes")) c.synthetic_classes = field.at("classes").integer_in(2, 100000);
}

// `compute: {math: timing}`: the training side of the compute section.
void parse_math(const YamlField& top, train::TrainConfig& c) {
  if (!top.has("compute") || !top.at("compute").has("math")) return;
  c.math = top.at("compute").at("math").text_in({"full", "timing"});
}

// Where forward and backward run (cpu, cuda, cuda:N). Whether this build
// and machine have that device is checked when the run starts, so that a
// GPU scenario can still be read, listed and checked anywhere.
void parse_compute_device(const YamlField& f, train::TrainConfig& c) {
  c.compute_device = f.text();
  try {
    device::parse_compute_device(c.compute_device);
  } catch (const std::invalid_argument& e) {
    f.fail(e.what());
  }
}

// The scenario's `optimizer:`, and a system's own `optimizer:` on top of it
// (each system may have its own learning rate, momentum and warmup).
void parse_optimizer(const YamlField& f, train::TrainConfig& c) {
  f.allow_only({"name", "lr", "momentum", "weight_decay", "warmup"});
  if (f.has("name")) (void)f.at("name").text_in({"sgd"});  // the training loop's only optimizer so far
  c.lr = f.number_or("lr", c.lr, 1e-9, 100);
  c.momentum = f.number_or("momentum", c.momentum, 0, 0.999999);
  c.weight_decay = f.number_or("weight_decay", c.weight_decay, 0, 1);
  c.warmup_iterations = static_cast<int>(f.integer_or("warmup", c.warmup_iterations, 0, 10'000'000));
}

// Exactly one of per_gpu and global (the global batch is split evenly over
// every worker of every node).
void parse_batch(const YamlField& f, train::TrainConfig& c, int workers) {
  f.allow_only({"per_gpu", "global"});
  if (f.has("per_gpu") == f.has("global")) f.fail("give exactly one of: per_gpu, global");
  if (f.has("per_gpu")) {
    c.batch_per_worker = static_cast<std::size_t>(f.at("per_gpu").integer_in(1, 1 << 20));
    return;
  }
  const auto global = f.at("global");
  const auto total = global.integer_in(1, 1LL << 30);
  if (total % workers != 0)
    global.fail(fmt::format("{} does not split evenly over {} GPUs (nodes x gpus_per_node)", total, workers));
  c.batch_per_worker = static_cast<std::size_t>(total / workers);
}

void parse_budget(const YamlField& f, train::TrainConfig& c) {
  f.allow_only({"iterations", "time_s"});
  // Required: the engine sizes its per-iteration records up front, so a
  // time budget alone cannot bound a run.
  c.iterations = static_cast<int>(f.at("iterations").integer_in(1, 10'000'000));
  c.time_budget_s = f.number_or("time_s", 0, 0, 1e9);
}

void parse_eval(const YamlField& f, train::TrainConfig& c) {
  f.allow_only({"interval", "samples"});
  c.eval_interval = static_cast<int>(f.integer_or("interval", c.eval_interval, 0, 10'000'000));
  c.eval_samples = static_cast<std::size_t>(f.integer_or("samples", static_cast<long long>(c.eval_samples), 0, 1 << 30));
}

std::vector<uint64_t> parse_seeds(const YamlField& f) {
  if (!f.is_sequence()) f.fail("expected a list of seeds, e.g. [1, 2, 3]");
  if (f.size() == 0) f.fail("needs at least one seed");
  std::vector<uint64_t> seeds;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto seed = static_cast<uint64_t>(f.at(i).integer_in(0, 1LL << 53));
    if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end()) f.at(i).fail(fmt::format("seed {} is listed twice", seed));
    seeds.push_back(seed);
  }
  return seeds;
}

bool is_folder_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.'; });
}

// `- NAME` or `- {name: NAME, label: ..., density: ..., ...}`; options a
// system does not use are errors rather than silently ignored.
// `controller: on | off | {interval_s, min_density, max_density, safety,
// batch, growth, initial_mbps}` (docs/control.md); a map means on.
void parse_controller(const YamlField& f, train::TrainConfig& c) {
  if (f.is_scalar()) {
    c.controller = f.text_in({"on", "off"}) == "on";
    return;
  }
  f.allow_only({"interval_s", "min_density", "max_density", "safety", "batch", "growth", "initial_mbps"});
  c.controller = true;
  auto& o = c.control;
  o.interval_s = f.number_or("interval_s", o.interval_s, 1e-3, 1e6);
  o.min_density = f.number_or("min_density", o.min_density, 1e-6, 1);
  o.max_density = f.number_or("max_density", o.max_density, 1e-6, 1);
  if (o.max_density < o.min_density) f.at("max_density").fail(fmt::format("is below min_density {}", o.min_density));
  o.safety = f.number_or("safety", o.safety, 0.01, 1);
  o.adapt_batch = f.boolean_or("batch", o.adapt_batch);
  o.estimator.growth = f.number_or("growth", o.estimator.growth, 1, 10);
  o.estimator.initial_mbps = f.number_or("initial_mbps", o.estimator.initial_mbps, 0.01, 1e6);
}

// local-sgd, cloudless-ma and cloudless-asgd-ga (docs/systems.md).
template <typename OnlyFor>
void parse_averaging_options(const YamlField& f, train::TrainConfig& c, const OnlyFor& only_for) {
  const bool averaging = c.system == "local-sgd" || c.system == "cloudless-ma";
  only_for("averaging_period", averaging, "local-sgd and cloudless-ma");
  only_for("averaging_period_s", c.system == "cloudless-ma", "cloudless-ma");
  only_for("overlap", c.system == "cloudless-ma", "cloudless-ma");
  only_for("start_iteration", c.system == "local-sgd", "local-sgd");
  only_for("accumulation_steps", c.system == "cloudless-asgd-ga", "cloudless-asgd-ga");
  only_for("max_staleness", c.system == "cloudless-asgd-ga", "cloudless-asgd-ga");
  c.averaging_period = static_cast<int>(f.integer_or("averaging_period", c.averaging_period, 1, 10'000'000));
  c.averaging_period_s = f.number_or("averaging_period_s", c.averaging_period_s, 0, 1e9);
  c.averaging_overlap = f.boolean_or("overlap", c.averaging_overlap);
  c.local_sgd_start_iteration = static_cast<int>(f.integer_or("start_iteration", c.local_sgd_start_iteration, 0, 10'000'000));
  c.accumulation_steps = static_cast<int>(f.integer_or("accumulation_steps", c.accumulation_steps, 1, 10'000'000));
  c.max_staleness = static_cast<int>(f.integer_or("max_staleness", c.max_staleness, 0, 10'000'000));
}

ScenarioSystem parse_system(const YamlField& f, const train::TrainConfig& base) {
  ScenarioSystem s{"", base};
  auto& c = s.config;
  const auto name_field = f.is_scalar() ? f : f.at("name");
  c.system = name_field.text_in(train::system_names());
  s.label = c.system;
  // StellaTrain is the paper's system with its controller; `controller: off`
  // is the fixed-density ablation.
  c.controller = c.system == "stellatrain";
  if (f.is_scalar()) return s;
  f.allow_only({"name", "label", "density", "compressor", "staleness", "fp16", "optimizer", "lazy_momentum",
                "compensation", "dc_lambda", "controller", "momentum_at", "momentum_masking", "averaging_period",
                "averaging_period_s", "overlap", "start_iteration", "accumulation_steps", "max_staleness",
                "powersgd_rank", "powersgd_start_iteration", "powersgd_error_feedback", "powersgd_warm_start",
                "comm_hook"});
  if (f.has("label")) {
    s.label = f.at("label").text();
    if (!is_folder_name(s.label)) f.at("label").fail("use letters, digits, '-', '_' and '.' (it names a folder)");
  }
  const bool sparse = c.system == "stellatrain" || c.system == "topk-sync";
  auto only_for = [&](const char* key, bool applies, const char* which) {
    if (f.has(key) && !applies) f.at(key).fail(fmt::format("only applies to {} (not {})", which, c.system));
  };
  only_for("density", sparse, "stellatrain and topk-sync");
  only_for("compressor", c.system == "stellatrain", "stellatrain");
  only_for("staleness", c.system == "stellatrain", "stellatrain");
  only_for("fp16", c.system == "stellatrain", "stellatrain");
  only_for("lazy_momentum", c.system == "stellatrain", "stellatrain");
  only_for("compensation", c.system == "stellatrain", "stellatrain");
  only_for("dc_lambda", c.system == "stellatrain", "stellatrain");
  only_for("controller", c.system == "stellatrain", "stellatrain");
  only_for("momentum_at", c.system == "stellatrain", "stellatrain");
  only_for("momentum_masking", c.system == "stellatrain", "stellatrain");
  parse_averaging_options(f, c, only_for);
  if (f.has("momentum_at")) c.momentum_at = f.at("momentum_at").text_in({"master", "node"});
  c.momentum_masking = f.boolean_or("momentum_masking", c.momentum_masking);
  if (f.has("controller")) parse_controller(f.at("controller"), c);
  if (f.has("optimizer")) parse_optimizer(f.at("optimizer"), c);
  if (f.has("lazy_momentum")) c.lazy_momentum = f.at("lazy_momentum").text_in({"decay", "exact"});
  if (f.has("compensation")) c.staleness_compensation = f.at("compensation").text_in({"none", "predict", "lookahead", "dc"});
  c.dc_lambda = f.number_or("dc_lambda", c.dc_lambda, 0, 1e6);
  if (f.has("dc_lambda") && c.staleness_compensation != "dc") f.at("dc_lambda").fail("only applies with compensation: dc");
  c.density = f.number_or("density", c.density, 1e-6, 1);
  if (f.has("compressor")) c.compressor = f.at("compressor").text_in({"thresholdv16", "thresholdv", "topk", "randomk"});
  c.staleness = static_cast<int>(f.integer_or("staleness", c.staleness, 0, 1));
  c.fp16_values = f.boolean_or("fp16", c.fp16_values);
  // ddp-powersgd
  const bool powersgd = c.system == "ddp-powersgd";
  for (const char* key : {"powersgd_rank", "powersgd_start_iteration", "powersgd_error_feedback", "powersgd_warm_start"})
    only_for(key, powersgd, "ddp-powersgd");
  c.powersgd_rank = static_cast<int>(f.integer_or("powersgd_rank", c.powersgd_rank, 1, 1024));
  c.powersgd_start_iteration =
      static_cast<int>(f.integer_or("powersgd_start_iteration", c.powersgd_start_iteration, 0, 1000000000));
  c.powersgd_error_feedback = f.boolean_or("powersgd_error_feedback", c.powersgd_error_feedback);
  c.powersgd_warm_start = f.boolean_or("powersgd_warm_start", c.powersgd_warm_start);
  only_for("comm_hook", c.system == "ddp-gloo", "ddp-gloo");
  if (f.has("comm_hook")) c.comm_hook = f.at("comm_hook").text_in({"none", "fp16"});
  return s;
}

std::vector<ScenarioSystem> parse_systems(const YamlField& f, const train::TrainConfig& base) {
  f.require_sequence();
  if (f.size() == 0) f.fail("needs at least one system");
  std::vector<ScenarioSystem> systems;
  for (std::size_t i = 0; i < f.size(); ++i) {
    auto system = parse_system(f.at(i), base);
    for (const auto& other : systems)
      if (other.label == system.label)
        f.at(i).fail(fmt::format("label '{}' is used twice (give one of them `label: OTHER`)", system.label));
    try {
      train::validate(system.config);
    } catch (const std::exception& e) {
      f.at(i).fail(e.what());
    }
    systems.push_back(std::move(system));
  }
  return systems;
}

double parse_target(const YamlField& f) {
  const double target = f.number();
  if (target > 1) f.fail(fmt::format("{} is above 1: give a fraction, e.g. 0.85 for 85%", target));
  return f.number_in(1e-6, 1);
}

// The network: clusters (from the scenario's own list) and `links`, read
// once for every backend (net/links_yaml.h).
net::TopologyConfig parse_network(const YamlField& top, const std::vector<ScenarioCluster>& clusters,
                                  const std::string& base_dir) {
  net::TopologyConfig network;
  for (const auto& c : clusters) network.clusters.push_back({c.name, c.nodes});
  // One cluster has no WAN, so links may be left out; with more, links.wan is required.
  const auto links = clusters.size() > 1 || top.has("links") ? top.at("links") : empty_section(top, "links");
  links.allow_only({"lan", "wan", "mtu", "seed"});
  if (clusters.size() == 1 && links.has("wan")) links.at("wan").fail("a WAN needs at least two clusters");
  net::parse_links(links, network, base_dir);
  try {
    (void)net::plan_network(network);
  } catch (const std::exception& e) {
    links.fail(e.what());
  }
  return network;
}

#ifdef ST_HAVE_SIM
// The profile file's own `device:` must match the cluster's device name.
void check_profile_device(const YamlField& cluster_field, const ScenarioCluster& cluster, const std::string& profile) {
  if (cluster.device.empty() || profile.empty()) return;
  const auto root = YamlField::load_file(profile);
  if (root.has("device") && root.at("device").text() != cluster.device)
    cluster_field.at("device").fail(fmt::format("the compute profile {} describes device '{}'", profile,
                                                root.at("device").text()));
}

std::shared_ptr<const sim::SimComputeSettings> parse_sim_compute(const YamlField& top,
                                                                 const std::vector<ScenarioCluster>& clusters,
                                                                 const train::TrainConfig& training,
                                                                 const std::string& base_dir) {
  auto config = std::make_shared<sim::SimComputeSettings>();
  const auto cluster_field = top.at("clusters");
  const auto& cluster_profile = clusters.front().profile;
  // Clusters with profiles or rates of their own: every node is priced by
  // its cluster's (nodes are numbered cluster by cluster, as in the network).
  const bool own_profiles = std::any_of(clusters.begin(), clusters.end(), [&](const ScenarioCluster& c) {
    return c.profile != cluster_profile;
  });
  const bool own_rates = std::any_of(clusters.begin(), clusters.end(), [](const ScenarioCluster& c) { return c.tflops > 0; });
  const auto compute = top.has("compute") ? top.at("compute") : empty_section(top, "compute");
  if (top.has("compute")) {
    sim::parse_compute(compute, config->compute, config->executor, base_dir, cluster_profile);
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
  const auto priced = sim::priced_for(config->compute, training);
  try {
    (void)sim::make_compute_model(priced);
  } catch (const std::exception& e) {
    compute.fail(e.what());
  }
  return config;
}
#endif

}  // namespace

int Scenario::total_nodes() const {
  int nodes = 0;
  for (const auto& c : clusters) nodes += c.nodes;
  return nodes;
}

double Scenario::cost_per_hour() const {
  double cost = 0;
  for (const auto& c : clusters) cost += c.hourly();
  return cost;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(YamlField::load_file(path), fs::path(path).parent_path().string());
}

Scenario parse_scenario(const util::YamlField& top, const std::string& base_dir) {
  const std::string path = top.file();
  reject_duplicate_keys(top);
  top.allow_only({"name", "description", "backend", "clusters", "links", "compute", "compute_device", "model", "dataset",
                  "optimizer", "batch", "systems", "target_accuracy", "budget", "eval", "seeds"});
  Scenario s;
  s.source = path;
  s.name = top.text_or("name", fs::path(path).stem().string());
  s.description = top.text_or("description", "");
  if (top.has("backend")) s.backend = top.at("backend").text_in({"sim", "real", "emu"});
  s.clusters = parse_clusters(top.at("clusters"), base_dir);

  train::TrainConfig base;
  base.nodes = s.total_nodes();
  base.gpus_per_node = s.clusters.front().gpus_per_node;
  base.model = parse_model(top.at("model"));
  parse_dataset(top.at("dataset"), base, base_dir);
  parse_math(top, base);
  if (top.has("compute_device")) parse_compute_device(top.at("compute_device"), base);
  if (top.has("optimizer")) parse_optimizer(top.at("optimizer"), base);
  if (top.has("batch")) parse_batch(top.at("batch"), base, base.nodes * base.gpus_per_node);
  parse_budget(top.at("budget"), base);
  if (top.has("eval")) parse_eval(top.at("eval"), base);
  // A timing run measures no accuracy: a target would promise a TTA it
  // cannot give.
  if (base.math == "timing" && top.has("target_accuracy"))
    top.at("target_accuracy").fail("compute.math is timing: such runs measure no accuracy, so they have no target");
  if (base.math == "timing" && top.has("eval"))
    top.at("eval").fail("compute.math is timing: such runs are never evaluated");
  s.target_accuracy = base.math == "timing" ? 0.0 : parse_target(top.at("target_accuracy"));
  base.target_accuracy = s.target_accuracy;
  if (top.has("seeds")) s.seeds = parse_seeds(top.at("seeds"));
  s.systems = parse_systems(top.at("systems"), base);
  s.network = parse_network(top, s.clusters, base_dir);
#ifdef ST_HAVE_SIM
  s.sim_compute = parse_sim_compute(top, s.clusters, base, base_dir);
#endif
  return s;
}

void check_backend(const Scenario& scenario, const std::string& backend) {
  if (backend != "sim" && backend != "real" && backend != "emu")
    throw std::invalid_argument(fmt::format("backend: '{}' is not one of: sim, real, emu", backend));
  if (backend == "sim") {
#ifdef ST_HAVE_SIM
    try {
      (void)sim::plan_sim_network(scenario.network);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: links: the sim backend cannot build this network: {}",
                                              scenario.source, e.what()));
    }
#else
    throw std::invalid_argument("backend sim: this build has no ns-3 (install libns3-dev ns3 libgsl-dev and rebuild)");
#endif
  }
  if (backend == "emu") {
#ifdef ST_HAVE_EMU
    try {
      (void)emu::plan_emulation(scenario.network);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: links: the emu backend cannot build this network: {}",
                                              scenario.source, e.what()));
    }
#else
    throw std::invalid_argument(
        "backend emu: this build has no emulation backend (install libnl-route-3-dev libnetfilter-queue-dev and "
        "rebuild)");
#endif
    // Each node process would stop on its own clock, and a rank still
    // exchanging with one that stopped fails: budget by iterations instead.
    if (!scenario.systems.empty() && scenario.systems.front().config.time_budget_s > 0)
      throw std::invalid_argument(fmt::format(
          "{}: budget.time_s: not supported on the emu backend (its node processes would stop on their own clocks, "
          "one rank leaving while another still exchanges); give budget.iterations only, or use --iterations",
          scenario.source));
  }
  for (std::size_t i = 0; i < scenario.systems.size(); ++i)
    if (backend == "sim" && scenario.systems[i].config.system == "ddp-gloo")
      throw std::invalid_argument(fmt::format(
          "{}: systems[{}]: ddp-gloo runs only on real networks (the real and emu backends), not on the sim backend "
          "(use ddp: the same ring algorithm on the engine's transport)",
          scenario.source, i));
}

}  // namespace st::apps
