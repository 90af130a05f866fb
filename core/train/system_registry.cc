#include "core/train/system_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <stdexcept>

#include "core/train/systems/ddp_gloo/ddp_gloo.h"
#include "core/train/systems/local_step/local_step_systems.h"
#include "core/train/systems/stellatrain/stellatrain.h"
#include "core/train/systems/sync/sync_systems.h"

namespace st::train {
namespace {

// The built-in systems, one line each, in the order docs/systems.md lists
// them. A new system adds its line here.
std::vector<SystemDescriptor> builtin_systems() {
  return {
      stellatrain_system(),
      ddp_system(),
      topk_sync_system(),
      ddp_gloo_system(),
      local_sgd_system(),
      cloudless_ma_system(),
      cloudless_asgd_ga_system(),
      ddp_fp16_system(),
      ddp_powersgd_system(),
  };
}

void check(const SystemDescriptor& d, const std::deque<SystemDescriptor>& existing) {
  if (d.name.empty()) throw std::invalid_argument("register_system: a system needs a name");
  if (!d.make_options) throw std::invalid_argument(fmt::format("register_system: {} has no make_options", d.name));
  if (!d.make == !d.run_own)
    throw std::invalid_argument(fmt::format("register_system: {} needs exactly one of make and run_own", d.name));
  for (const auto& other : existing)
    if (other.name == d.name) throw std::invalid_argument(fmt::format("register_system: '{}' is taken", d.name));
}

// Registration happens before runs start (built-ins on first use, a test's
// toy system in the test); a deque keeps every registered descriptor where
// it is when another is added, so find_system's pointers stay valid.
struct Registry {
  Registry() {
    for (auto& d : builtin_systems()) {
      check(d, systems);
      systems.push_back(std::move(d));
    }
  }
  std::mutex mutex;
  std::deque<SystemDescriptor> systems;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::vector<std::string> systems_where(const std::function<bool(const SystemOptions&)>& has) {
  std::vector<std::string> out;
  for (const auto& d : registered_systems())
    if (has(*d.make_options())) out.push_back(d.name);
  return out;
}

}  // namespace

const std::deque<SystemDescriptor>& registered_systems() { return registry().systems; }

void register_system(SystemDescriptor descriptor) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  check(descriptor, r.systems);
  r.systems.push_back(std::move(descriptor));
}

const SystemDescriptor* find_system(const std::string& name) {
  for (const auto& d : registered_systems())
    if (d.name == name) return &d;
  return nullptr;
}

const SystemDescriptor& system_named(const std::string& name) {
  if (const auto* d = find_system(name)) return *d;
  throw std::invalid_argument(fmt::format("unknown system '{}' (expected one of {})", name, system_names_text()));
}

std::vector<std::string> system_names() {
  std::vector<std::string> names;
  for (const auto& d : registered_systems()) names.push_back(d.name);
  return names;
}

std::string system_names_text() { return fmt::format("{}", fmt::join(system_names(), ", ")); }

bool is_system_name(const std::string& name) { return find_system(name) != nullptr; }

const SystemDescriptor& speedup_reference() {
  for (const auto& d : registered_systems())
    if (d.speedup_reference) return d;
  throw std::logic_error("no registered system is the speedup reference");
}

std::vector<std::string> systems_sampling_stages() {
  std::vector<std::string> names;
  for (const auto& d : registered_systems())
    if (d.samples_stages) names.push_back(d.name);
  return names;
}

std::vector<std::string> systems_with_key(const std::string& key) {
  return systems_where([&](const SystemOptions& o) { return o.field(key) != nullptr; });
}

std::vector<std::string> systems_with_flag(const std::string& flag) {
  return systems_where([&](const SystemOptions& o) { return o.field_with_flag(flag) != nullptr; });
}

std::string join_names(const std::vector<std::string>& names) {
  if (names.empty()) return "no system";
  if (names.size() == 1) return names.front();
  std::vector<std::string> head(names.begin(), names.end() - 1);
  return fmt::format("{} and {}", fmt::join(head, ", "), names.back());
}

void require_real_network(const SystemDescriptor& system, const std::string& backend, bool simulated) {
  if (!simulated || !system.real_network_only) return;
  throw std::invalid_argument(fmt::format("{} runs only on real networks (the real and emu backends), not on the {} "
                                          "backend{}",
                                          system.name, backend,
                                          system.simulated_stand_in.empty()
                                              ? ""
                                              : fmt::format(" (use {})", system.simulated_stand_in)));
}

}  // namespace st::train
