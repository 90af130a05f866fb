#include "net/links_yaml.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "net/network_plan.h"
#include "traces/generators.h"
#include "traces/trace_io.h"

namespace st::net {
namespace {

namespace fs = std::filesystem;
using util::YamlField;

traces::GeneratorSpec parse_generator(const YamlField& g) {
  g.require_map();
  traces::GeneratorSpec spec;
  spec.kind = g.at("kind").text();
  for (const auto& key : g.keys()) {
    const YamlField value = g.at(key);
    if (key == "kind") continue;
    if (key == "seed") spec.seed = static_cast<uint64_t>(value.integer_in(0, (1LL << 53)));
    else if (key == "duration_s") spec.duration_s = value.number_in(1e-3, 1e9);
    else if (key == "step_s") spec.step_s = value.number_in(1e-3, 1e9);
    else if (key == "mean_mbps") spec.target_mean_mbps = value.number_in(0, 1e6);
    else spec.parameters[key] = value.number();
  }
  try {
    (void)traces::generate(spec);  // validates kind and parameters now, with the key path
  } catch (const std::exception& e) {
    g.fail(e.what());
  }
  return spec;
}

// One direction's rate: exactly one of trace, generator, mbps.
void parse_rate(const YamlField& f, WanDirection& d, const std::string& base_dir) {
  const int given = f.has("trace") + f.has("generator") + f.has("mbps");
  if (given != 1) f.fail("give exactly one of: trace (a file), generator (a spec) or mbps (a constant rate)");
  if (f.has("if_missing") && !f.has("trace")) f.at("if_missing").fail("only applies to a trace file");
  if (f.has("mbps")) {
    if (f.has("mean_mbps")) f.at("mean_mbps").fail("only applies to a trace");
    d.constant_mbps = f.at("mbps").number_in(1e-3, 1e6);
    return;
  }
  if (f.has("generator")) {
    if (f.has("mean_mbps")) f.at("mean_mbps").fail("give the mean inside the generator (generator.mean_mbps)");
    d.trace = traces::generate(parse_generator(f.at("generator")));
    return;
  }
  const auto field = f.at("trace");
  const std::string path = resolve_path(field.text(), base_dir);
  // Third-party traces that may not be redistributed (or are simply not
  // shipped) say where to get them; the scenario's own words are the error.
  if (f.has("if_missing") && !fs::exists(path))
    field.fail(fmt::format("trace file {} does not exist. {}", path, f.at("if_missing").text()));
  if (f.has("if_missing")) (void)f.at("if_missing").text();
  try {
    d.trace = traces::read_trace(path);
  } catch (const std::exception& e) {
    field.fail(e.what());
  }
  if (f.has("mean_mbps")) d.trace = traces::scale_to_mean(d.trace, f.at("mean_mbps").number_in(1e-3, 1e6));
}

}  // namespace

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

WanDirection parse_wan_direction(const YamlField& f, const std::string& base_dir) {
  f.allow_only({"trace", "if_missing", "generator", "mbps", "mean_mbps", "delay_ms", "buffer_bytes", "buffer_bdp", "tcp"});
  WanDirection d;
  parse_rate(f, d, base_dir);
  d.delay_ms = f.number_or("delay_ms", d.delay_ms, 0, 10000);
  d.buffer_bytes = f.number_or("buffer_bytes", d.buffer_bytes, 0, 1e12);
  d.buffer_bdp = f.number_or("buffer_bdp", d.buffer_bdp, 1e-3, 1000);
  if (f.has("buffer_bytes") && f.has("buffer_bdp")) f.fail("give buffer_bytes or buffer_bdp, not both");
  d.tcp = f.text_or("tcp", d.tcp);
  try {
    check_tcp_name(d.tcp);
  } catch (const std::exception& e) {
    f.at("tcp").fail(e.what());
  }
  return d;
}

void parse_links(const YamlField& links, TopologyConfig& t, const std::string& base_dir, bool offset_auto_allowed) {
  if (links.has("lan")) {
    const auto lan = links.at("lan");
    lan.allow_only({"mbps", "delay_ms", "tcp"});
    t.lan_mbps = lan.number_or("mbps", t.lan_mbps, 1e-3, 1e7);
    t.lan_delay_ms = lan.number_or("delay_ms", t.lan_delay_ms, 0, 10000);
    t.lan_tcp = lan.text_or("tcp", t.lan_tcp);
  }
  auto index_of = [&](const YamlField& where, const std::string& name) {
    for (std::size_t i = 0; i < t.clusters.size(); ++i)
      if (t.clusters[i].name == name) return static_cast<int>(i);
    where.fail(fmt::format("no cluster named '{}'", name));
  };
  if (t.clusters.size() > 1) {
    const auto wan = links.at("wan");
    wan.require_map();
    // "default" applies to every direction not listed by name ("a->b").
    for (const auto& key : wan.keys()) {
      if (key == "default") continue;
      const auto arrow = key.find("->");
      const auto field = wan.at(key);
      if (arrow == std::string::npos) field.fail("expected 'default' or a direction like 'a->b'");
      const int from = index_of(field, key.substr(0, arrow)), to = index_of(field, key.substr(arrow + 2));
      if (from == to) field.fail("a WAN direction joins two different clusters");
      t.wan[{from, to}] = parse_wan_direction(field, base_dir);
    }
    for (int a = 0; a < static_cast<int>(t.clusters.size()); ++a)
      for (int b = 0; b < static_cast<int>(t.clusters.size()); ++b) {
        if (a == b || t.wan.count({a, b})) continue;
        if (!wan.has("default"))
          wan.fail(fmt::format("no entry for direction '{}->{}' (and no 'default')", t.clusters[a].name, t.clusters[b].name));
        t.wan[{a, b}] = parse_wan_direction(wan.at("default"), base_dir);
      }
  }
  if (links.has("mtu")) {
    const auto mtu = links.at("mtu");
    t.mtu = mtu.is_scalar() && mtu.node().Scalar() == "auto" ? 0 : static_cast<int>(mtu.integer_in(576, 65535));
  }
  if (links.has("model")) {
    const auto field = links.at("model");
    const auto model = network_model_from_name(field.text());
    if (!model)
      field.fail(fmt::format("'{}' is not a network model: give packet (ns-3's packets, the default) or flow "
                             "(the flow-level model, docs/sim-flow.md)", field.text()));
    t.model = *model;
  }
  // Whole milliseconds, as a Linux route's rto_min takes them; Linux caps a
  // retransmission timeout at 120 s.
  t.rto_min_ms = static_cast<int>(links.integer_or("rto_min_ms", t.rto_min_ms, 1, 60000));
  t.seed = static_cast<uint64_t>(links.integer_or("seed", static_cast<long long>(t.seed), 0, (1LL << 53)));
  if (links.has("trace_offset")) {
    const auto offset = links.at("trace_offset");
    if (offset.is_scalar() && offset.node().Scalar() == "auto") {
      if (!offset_auto_allowed) offset.fail("auto draws the offset from a run's seed: give seconds here");
    } else {
      t.trace_offset_s = offset.number_in(0, 1e9);
    }
  }
}

TopologyConfig parse_topology(const YamlField& top, const std::string& base_dir) {
  TopologyConfig t;
  const auto clusters = top.at("clusters");
  clusters.require_sequence();
  if (clusters.size() == 0) clusters.fail("needs at least one cluster");
  std::set<std::string> names;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const auto c = clusters.at(i);
    c.allow_only({"name", "nodes"});
    ClusterSpec spec{c.at("name").text(), static_cast<int>(c.integer_or("nodes", 1, 1, 1024))};
    if (!names.insert(spec.name).second) c.at("name").fail(fmt::format("cluster name '{}' is used twice", spec.name));
    t.clusters.push_back(spec);
  }
  parse_links(top, t, base_dir);
  return t;
}

}  // namespace st::net
