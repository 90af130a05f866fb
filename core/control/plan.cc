#include "core/control/plan.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace st::control {

std::vector<uint8_t> encode(const Plan& plan) {
  nlohmann::json j = {{"effective_iteration", plan.effective_iteration},
                      {"density", plan.density},
                      {"batch", plan.batch},
                      {"reason", plan.reason}};
  // Only with a drain: a plan without one keeps its size on the wire, so
  // that simulated runs without drains stay byte-identical to earlier ones.
  if (plan.drain_iterations > 0) {
    j["drain_iterations"] = plan.drain_iterations;
    j["drain_density"] = plan.drain_density;
  }
  if (plan.density_from > 0) j["density_from"] = plan.density_from;  // likewise
  return nlohmann::json::to_msgpack(j);
}

Plan decode_plan(const std::vector<uint8_t>& bytes) {
  nlohmann::json j;
  try {
    j = nlohmann::json::from_msgpack(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw PlanError(fmt::format("plan: not a MessagePack message ({} bytes): {}", bytes.size(), e.what()));
  }
  Plan p;
  try {
    p.effective_iteration = j.at("effective_iteration").get<int>();
    p.density = j.at("density").get<double>();
    p.batch = j.at("batch").get<std::vector<std::vector<int>>>();
    p.reason = j.at("reason").get<std::string>();
    if (j.contains("drain_iterations")) {
      p.drain_iterations = j.at("drain_iterations").get<int>();
      p.drain_density = j.at("drain_density").get<double>();
    }
    if (j.contains("density_from")) p.density_from = j.at("density_from").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw PlanError(fmt::format("plan: missing or mistyped field: {}", e.what()));
  }
  if (p.effective_iteration < 0) throw PlanError(fmt::format("plan: effective_iteration {}", p.effective_iteration));
  if (!(p.density > 0 && p.density <= 1)) throw PlanError(fmt::format("plan: density {} is outside (0, 1]", p.density));
  if (p.drain_iterations < 0) throw PlanError(fmt::format("plan: drain_iterations {}", p.drain_iterations));
  if (p.drain_iterations > 0 && !(p.drain_density > 0 && p.drain_density <= 1))
    throw PlanError(fmt::format("plan: drain_density {} is outside (0, 1]", p.drain_density));
  if (p.density_from < 0 || p.density_from > p.effective_iteration)
    throw PlanError(fmt::format("plan: density_from {} is outside [0, effective_iteration {}]", p.density_from,
                                p.effective_iteration));
  for (const auto& node : p.batch)
    for (int b : node)
      if (b < 1) throw PlanError(fmt::format("plan: batch {} is below 1", b));
  return p;
}

}  // namespace st::control
