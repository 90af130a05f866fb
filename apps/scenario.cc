#include "apps/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/data/npz_dataset.h"
#include "core/data/random.h"
#include "core/device/compute_device.h"
#include "core/model/model.h"
#include "core/train/run/training_data.h"
#include "core/util/yaml_fields.h"
#include "apps/backends.h"
#include "core/train/system_registry.h"
#include "net/links_yaml.h"
#include "net/network_plan.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;
using util::YamlField;

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// A user's file (a model, a dataset), as an absolute path: manifests and
// summaries say exactly which file a run read, wherever it was started.
std::string resolve_absolute(const std::string& path, const std::string& base_dir) {
  return fs::absolute(resolve(path, base_dir)).lexically_normal().string();
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
  return clusters;
}

// `model: NAME` (the zoo) or, for a TorchScript file of one's own,
// `model: {torchscript: FILE, name: N, flops: F, input: [C, H, W],
// classes: K}` (all but the file optional: the name defaults to the file's
// stem, FLOPs are measured, input and classes are checked against the
// dataset when given; core/model/torchscript_model.h). A relative file is
// read from the scenario's folder.
void parse_model(const YamlField& field, train::TrainConfig& c, const std::string& base_dir) {
  const auto names = model::model_names();
  if (field.is_scalar()) {
    const auto name = field.text();
    if (std::find(names.begin(), names.end(), name) == names.end())
      field.fail(fmt::format("'{}' is not one of: {} (or {{torchscript: FILE}} for a model of one's own)", name,
                             fmt::join(names, ", ")));
    c.model = name;
    return;
  }
  if (!field.is_map()) field.fail("expected a zoo model's name or {torchscript: FILE, ...}");
  field.allow_only({"torchscript", "name", "flops", "input", "classes"});
  if (!field.has("torchscript")) field.fail("a model given as a map needs `torchscript: FILE`");
  c.model_file = resolve_absolute(field.at("torchscript").text(), base_dir);
  if (!std::filesystem::is_regular_file(c.model_file))
    field.at("torchscript").fail(fmt::format("no such file: {}", c.model_file));
  c.model = field.has("name") ? field.at("name").text() : std::filesystem::path(c.model_file).stem().string();
  if (std::find(names.begin(), names.end(), c.model) != names.end())
    field.at(field.has("name") ? "name" : "torchscript")
        .fail(fmt::format("'{}' is a zoo model's name; give the file another (name: ...)", c.model));
  if (field.has("flops")) c.model_flops = field.at("flops").number_in(1, 1e18);
  if (field.has("input")) {
    const auto input = field.at("input");
    input.require_sequence();
    if (input.size() != 3) input.fail("expected [channels, height, width]");
    for (std::size_t i = 0; i < 3; ++i) c.model_input.push_back(input.at(i).integer_in(1, 4096));
  }
  if (field.has("classes")) c.model_classes = field.at("classes").integer_in(2, 1000000);
}

// A TorchScript model is loaded once here against the dataset's shape, so
// that a file that cannot train on it stops the scenario before any run.
void check_model_fits_data(const YamlField& field, const train::TrainConfig& c) {
  const train::DataShape d = train::dataset_shape(c);
  try {
    (void)model::make_model(c.model_spec(), {d.channels, d.height, d.width, d.classes}, c.seed);
  } catch (const std::invalid_argument& e) {
    field.fail(e.what());
  }
}

// `dataset: NAME`, `dataset: {name: NAME, dir: FOLDER}` or, for a dataset
// file of one's own, `dataset: {name: npz, file: FILE.npz}`
// (core/data/npz_dataset.h); a relative file is read from the scenario's
// folder. `label_skew: S` places the training samples by label across the
// nodes (core/data/placement.h).
void parse_dataset(const YamlField& field, train::TrainConfig& c, const std::string& base_dir) {
  const std::vector<std::string> names = {"fashion-mnist", "cifar10", "synthetic", "npz"};
  if (field.is_scalar()) {
    c.dataset = field.text_in(names);
    if (c.dataset == "npz") field.fail("the npz dataset needs its file: dataset: {name: npz, file: FILE.npz}");
    return;
  }
  field.allow_only({"name", "dir", "file", "shape", "classes", "label_skew"});
  c.dataset = field.at("name").text_in(names);
  c.label_skew = field.number_or("label_skew", 0, 0, 1);
  if (field.has("dir")) {
    if (c.dataset == "synthetic" || c.dataset == "npz")
      field.at("dir").fail(c.dataset == "npz" ? "the npz dataset takes `file`, not `dir`" : "the synthetic dataset has no files");
    c.data_dir = resolve(field.at("dir").text(), base_dir);
  }
  if (c.dataset == "npz") {
    if (!field.has("file")) field.fail("the npz dataset needs `file: FILE.npz`");
    c.data_file = resolve_absolute(field.at("file").text(), base_dir);
    // Checked here, so that a bad file stops the scenario before any run.
    try {
      (void)data::describe_npz_dataset(c.data_file);
    } catch (const data::DatasetFileError& e) {
      field.at("file").fail(e.what());
    }
  } else if (field.has("file")) {
    field.at("file").fail("only the npz dataset reads a file");
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

// `compute: {math: timing, stage_sample: {fraction: F, min_elements: N}}`:
// the training side of the compute section.
void parse_math(const YamlField& top, train::TrainConfig& c) {
  if (!top.has("compute")) return;
  const YamlField compute = top.at("compute");
  if (compute.has("math")) c.math = compute.at("math").text_in({"full", "timing"});
  if (!compute.has("stage_sample")) return;
  const YamlField sample = compute.at("stage_sample");
  if (c.math != "timing")
    sample.fail("samples only timing runs (compute.math: timing); a run that measures accuracy keeps every stage whole");
  sample.allow_only({"fraction", "min_elements"});
  c.stage_sample.fraction = sample.at("fraction").number_in(1e-6, 1);
  c.stage_sample.min_elements =
      static_cast<std::size_t>(sample.integer_or("min_elements", static_cast<long long>(c.stage_sample.min_elements),
                                                 16, 1LL << 40));
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
    global.fail(fmt::format("{} does not split evenly over {} GPUs (every cluster's nodes x gpus_per_node)", total, workers));
  c.batch_per_worker = static_cast<std::size_t>(total / workers);
}

// At least one of the two; with time_s alone the run goes on until its
// clock reaches it.
void parse_budget(const YamlField& f, train::TrainConfig& c) {
  f.allow_only({"iterations", "time_s"});
  if (!f.has("iterations") && !f.has("time_s")) f.fail("give iterations, time_s or both");
  c.time_budget_s = f.number_or("time_s", 0, 0, 1e9);
  if (!f.has("iterations") && c.time_budget_s == 0) f.at("time_s").fail("is 0: with no iterations the run needs a time");
  c.iterations = f.has("iterations") ? static_cast<int>(f.at("iterations").integer_in(1, 10'000'000))
                                     : train::kUnboundedIterations;
}

// `eval: {on, interval, samples, interval_after_targets}`: on the test or
// the validation set; interval_after_targets evaluates every that many
// iterations once the highest report target is reached.
void parse_eval(const YamlField& f, train::TrainConfig& c) {
  f.allow_only({"on", "interval", "samples", "interval_after_targets"});
  if (f.has("on")) c.evaluate_on = f.at("on").text_in({"test", "validation"});
  c.eval_interval = static_cast<int>(f.integer_or("interval", c.eval_interval, 0, 10'000'000));
  c.eval_samples = static_cast<std::size_t>(f.integer_or("samples", static_cast<long long>(c.eval_samples), 0, 1 << 30));
  c.eval_interval_after = static_cast<int>(f.integer_or("interval_after_targets", 0, 1, 10'000'000));
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

// The keys every system entry may have; the rest are the system's own
// options (its table, core/train/system_options.h).
const std::vector<std::string>& common_system_keys() {
  static const std::vector<std::string> keys = {"name", "label", "optimizer", "budget"};
  return keys;
}

// A key that is none of this system's: another system's option ("only
// applies to ...") or no system's (the keys it may have).
void reject_foreign_keys(const YamlField& f, const train::TrainConfig& c) {
  const auto& common = common_system_keys();
  for (const auto& key : f.keys()) {
    if (std::find(common.begin(), common.end(), key) != common.end() || c.options->field(key)) continue;
    const auto owners = train::systems_with_key(key);
    if (!owners.empty())
      f.at(key).fail(fmt::format("only applies to {} (not {})", train::join_names(owners), c.system));
    std::vector<std::string> allowed = common;
    for (const auto& field : c.options->fields())
      if (!field.key.empty()) allowed.push_back(field.key);
    f.at(key).fail(fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", ")));
  }
}

// `- NAME` or `- {name: NAME, label: ..., optimizer: {...}, budget: {...},
// OPTION: ...}`: the options are the system's own, read through its table;
// options a system does not use are errors rather than silently ignored.
// `budget` replaces the scenario's for this system alone (a reference run
// that need only outlast the others, such as a backlogged ddp).
ScenarioSystem parse_system(const YamlField& f, const train::TrainConfig& base) {
  ScenarioSystem s{"", base};
  auto& c = s.config;
  const auto name_field = f.is_scalar() ? f : f.at("name");
  c.use_system(name_field.text_in(train::system_names()));
  c.options->use_command_defaults();
  s.label = c.system;
  if (f.is_scalar()) return s;
  f.require_map();
  reject_foreign_keys(f, c);
  if (f.has("label")) {
    s.label = f.at("label").text();
    if (!is_folder_name(s.label)) f.at("label").fail("use letters, digits, '-', '_' and '.' (it names a folder)");
  }
  if (f.has("optimizer")) parse_optimizer(f.at("optimizer"), c);
  if (f.has("budget")) parse_budget(f.at("budget"), c);
  for (const auto& field : c.options->fields())
    if (!field.key.empty() && f.has(field.key)) field.read(*c.options, f.at(field.key));
  c.options->check_entry(f);
  return s;
}

std::vector<ScenarioSystem> parse_systems(const YamlField& f, const train::TrainConfig& base) {
  f.require_sequence();
  if (f.size() == 0) f.fail("needs at least one system");
  std::vector<ScenarioSystem> systems;
  for (std::size_t i = 0; i < f.size(); ++i) {
    auto system = parse_system(f.at(i), base);
    system.config.label = system.label;
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

// `report_targets: [0.80, 0.83, 0.85, 0.87]`: fractions in (0, 1], each
// once; the target is one of them whether listed or not.
std::vector<double> parse_report_targets(const YamlField& top, double target) {
  std::vector<double> targets{target};
  if (!top.has("report_targets")) return targets;
  const auto list = top.at("report_targets");
  if (!list.is_sequence()) list.fail("expected a list of fractions, e.g. [0.80, 0.85]");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const double t = parse_target(list.at(i));
    if (std::find(targets.begin() + 1, targets.end(), t) != targets.end()) list.at(i).fail("is listed twice");
    if (t != target) targets.push_back(t);
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

// The network: clusters (from the scenario's own list) and `links`, read
// once for every backend (net/links_yaml.h).
net::TopologyConfig parse_network(const YamlField& top, const std::vector<ScenarioCluster>& clusters,
                                  const std::string& base_dir) {
  net::TopologyConfig network;
  for (const auto& c : clusters) network.clusters.push_back({c.name, c.nodes});
  // One cluster has no WAN, so links may be left out; with more, links.wan is required.
  const auto links = clusters.size() > 1 || top.has("links") ? top.at("links") : empty_section(top, "links");
  links.allow_only({"lan", "wan", "mtu", "model", "seed", "trace_offset", "rto_min_ms"});
  if (clusters.size() == 1 && links.has("wan")) links.at("wan").fail("a WAN needs at least two clusters");
  net::parse_links(links, network, base_dir, /*offset_auto_allowed=*/true);
  try {
    (void)net::plan_network(network);
  } catch (const std::exception& e) {
    links.fail(e.what());
  }
  return network;
}

}  // namespace

int Scenario::total_nodes() const {
  int nodes = 0;
  for (const auto& c : clusters) nodes += c.nodes;
  return nodes;
}

double Scenario::trace_offset_for(uint64_t seed) const {
  if (trace_offset_s) return *trace_offset_s;
  double longest = 0;
  for (const auto& [key, direction] : network.wan)
    if (!direction.trace.empty()) longest = std::max(longest, direction.trace.duration_s());
  if (longest <= 0) return 0;
  // Its own stream, apart from the data order and initialisation of the seed.
  data::SplitMix64 draw(data::mix64(seed, 0x7472616365ull /* "trace" */));
  return std::floor(draw.uniform() * longest * 1000) / 1000;
}

double Scenario::cost_per_hour() const {
  double cost = 0;
  for (const auto& c : clusters) cost += c.hourly();
  return cost;
}

std::vector<ScenarioSystem> systems_labelled(const Scenario& scenario, const std::vector<std::string>& labels) {
  for (const auto& label : labels)
    if (std::none_of(scenario.systems.begin(), scenario.systems.end(),
                     [&](const ScenarioSystem& s) { return s.label == label; }))
      throw std::invalid_argument(fmt::format("--systems: {} has no system labelled '{}'", scenario.source, label));
  if (labels.empty()) return scenario.systems;
  std::vector<ScenarioSystem> chosen;
  for (const auto& system : scenario.systems)
    if (std::find(labels.begin(), labels.end(), system.label) != labels.end()) chosen.push_back(system);
  return chosen;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(YamlField::load_file(path), fs::path(path).parent_path().string());
}

Scenario parse_scenario(const util::YamlField& top, const std::string& base_dir) {
  const std::string path = top.file();
  reject_duplicate_keys(top);
  top.allow_only({"name", "description", "backend", "clusters", "links", "compute", "compute_device", "model", "dataset",
                  "optimizer", "batch", "systems", "target_accuracy", "report_targets", "budget", "eval", "seeds"});
  Scenario s;
  s.source = path;
  s.name = top.text_or("name", fs::path(path).stem().string());
  s.description = top.text_or("description", "");
  if (top.has("backend")) s.backend = top.at("backend").text_in({"sim", "real", "emu"});
  s.clusters = parse_clusters(top.at("clusters"), base_dir);

  train::TrainConfig base;
  base.nodes = s.total_nodes();
  base.gpus_per_node = s.clusters.front().gpus_per_node;
  // Clusters of different sizes: each node runs its own cluster's GPUs
  // (engine nodes are numbered cluster by cluster, as net/ numbers them).
  const bool unequal = std::any_of(s.clusters.begin(), s.clusters.end(),
                                   [&](const ScenarioCluster& c) { return c.gpus_per_node != base.gpus_per_node; });
  if (unequal)
    for (const auto& c : s.clusters) base.node_gpus.insert(base.node_gpus.end(), static_cast<std::size_t>(c.nodes), c.gpus_per_node);
  parse_model(top.at("model"), base, base_dir);
  parse_dataset(top.at("dataset"), base, base_dir);
  if (!base.model_file.empty()) check_model_fits_data(top.at("model"), base);
  parse_math(top, base);
  if (top.has("compute_device")) parse_compute_device(top.at("compute_device"), base);
  if (top.has("optimizer")) parse_optimizer(top.at("optimizer"), base);
  if (top.has("batch")) parse_batch(top.at("batch"), base, base.total_workers());
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
  if (base.math == "timing" && top.has("report_targets"))
    top.at("report_targets").fail("compute.math is timing: such runs measure no accuracy, so they have no targets");
  if (base.math == "full") s.report_targets = parse_report_targets(top, s.target_accuracy);
  if (!s.report_targets.empty()) base.eval_dense_until = s.report_targets.back();
  if (top.has("seeds")) s.seeds = parse_seeds(top.at("seeds"));
  s.systems = parse_systems(top.at("systems"), base);
  s.network = parse_network(top, s.clusters, base_dir);
  // `trace_offset` is auto unless it gives seconds (parse_links read them).
  const bool fixed_offset = top.has("links") && top.at("links").has("trace_offset") &&
                            top.at("links").at("trace_offset").node().Scalar() != "auto";
  if (fixed_offset) s.trace_offset_s = s.network.trace_offset_s;
  s.sim_compute = read_sim_compute(top, s, base, base_dir);
  return s;
}

}  // namespace st::apps
