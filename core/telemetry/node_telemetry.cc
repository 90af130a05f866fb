#include "core/telemetry/node_telemetry.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace st::telemetry {
namespace {

using nlohmann::json;

template <typename T>
T field(const json& j, const char* key) {
  if (!j.contains(key)) throw TelemetryError(fmt::format("telemetry: field '{}' is missing", key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw TelemetryError(fmt::format("telemetry: field '{}' has the wrong type", key));
  }
}

double finite_non_negative(const json& j, const char* key) {
  const auto value = field<double>(j, key);
  if (!std::isfinite(value) || value < 0)
    throw TelemetryError(fmt::format("telemetry: field '{}' is {} (expected a finite value >= 0)", key, value));
  return value;
}

// An optional field: `absent` where the report leaves it out.
double finite_non_negative_or(const json& j, const char* key, double absent) {
  return j.contains(key) ? finite_non_negative(j, key) : absent;
}

}  // namespace

std::vector<uint8_t> encode(const NodeTelemetry& t) {
  json j = {{"rank", t.rank},
            {"iteration", t.iteration},
            {"time_s", t.time_s},
            {"forward_ms", t.forward_ms},
            {"backward_ms", t.backward_ms},
            {"gather_ms", t.gather_ms},
            {"wait_ms", t.wait_ms},
            {"pipeline_ms", t.pipeline_ms},
            {"iteration_ms", t.iteration_ms},
            {"density", t.density},
            {"batch", t.batch},
            {"gpu_compute_ms", t.gpu_compute_ms},
            {"exchange_busy_ms", t.exchange_busy_ms},
            {"exchange_shortest_ms", t.exchange_shortest_ms},
            {"exchange_intervals_ms", t.exchange_intervals_ms},
            {"exchange_bytes", t.exchange_bytes},
            {"window_sent", t.window_sent},
            {"window_received", t.window_received},
            {"window_s", t.window_s}};
  if (t.load_ms > 0) j["load_ms"] = t.load_ms;
  if (t.exchange_origin_ms >= 0) j["exchange_origin_ms"] = t.exchange_origin_ms;
  return json::to_msgpack(j);
}

NodeTelemetry decode_telemetry(const std::vector<uint8_t>& bytes) {
  json j;
  try {
    j = json::from_msgpack(bytes);
  } catch (const json::exception& e) {
    throw TelemetryError(fmt::format("telemetry: not a MessagePack message ({} bytes): {}", bytes.size(), e.what()));
  }
  if (!j.is_object()) throw TelemetryError("telemetry: the message is not a map");
  NodeTelemetry t;
  t.rank = field<int>(j, "rank");
  t.iteration = field<int>(j, "iteration");
  if (t.rank < 0) throw TelemetryError(fmt::format("telemetry: field 'rank' is {}", t.rank));
  if (t.iteration < 0) throw TelemetryError(fmt::format("telemetry: field 'iteration' is {}", t.iteration));
  t.time_s = finite_non_negative(j, "time_s");
  t.forward_ms = finite_non_negative(j, "forward_ms");
  t.backward_ms = finite_non_negative(j, "backward_ms");
  t.gather_ms = finite_non_negative(j, "gather_ms");
  t.wait_ms = finite_non_negative(j, "wait_ms");
  t.pipeline_ms = finite_non_negative(j, "pipeline_ms");
  t.iteration_ms = finite_non_negative(j, "iteration_ms");
  t.load_ms = finite_non_negative_or(j, "load_ms", 0);
  t.density = finite_non_negative(j, "density");
  if (t.density > 1) throw TelemetryError(fmt::format("telemetry: field 'density' is {} (above 1)", t.density));
  t.batch = field<std::vector<int>>(j, "batch");
  t.gpu_compute_ms = field<std::vector<double>>(j, "gpu_compute_ms");
  if (t.batch.size() != t.gpu_compute_ms.size())
    throw TelemetryError(fmt::format("telemetry: {} batches but {} GPU times", t.batch.size(), t.gpu_compute_ms.size()));
  for (int b : t.batch)
    if (b < 0) throw TelemetryError(fmt::format("telemetry: field 'batch' holds {}", b));
  for (double ms : t.gpu_compute_ms)
    if (!std::isfinite(ms) || ms < 0) throw TelemetryError(fmt::format("telemetry: field 'gpu_compute_ms' holds {}", ms));
  t.exchange_busy_ms = finite_non_negative(j, "exchange_busy_ms");
  t.exchange_shortest_ms = finite_non_negative(j, "exchange_shortest_ms");
  t.exchange_intervals_ms = field<std::vector<double>>(j, "exchange_intervals_ms");
  if (t.exchange_intervals_ms.size() % 2 != 0)
    throw TelemetryError(fmt::format("telemetry: field 'exchange_intervals_ms' holds {} values (start, end pairs)",
                                     t.exchange_intervals_ms.size()));
  for (std::size_t i = 0; i < t.exchange_intervals_ms.size(); i += 2) {
    const double start = t.exchange_intervals_ms[i], end = t.exchange_intervals_ms[i + 1];
    if (!std::isfinite(start) || !std::isfinite(end) || start < 0 || end < start)
      throw TelemetryError(fmt::format("telemetry: field 'exchange_intervals_ms' holds [{}, {})", start, end));
  }
  t.exchange_origin_ms = finite_non_negative_or(j, "exchange_origin_ms", -1);
  t.exchange_bytes = field<uint64_t>(j, "exchange_bytes");
  t.window_sent = field<std::vector<uint64_t>>(j, "window_sent");
  t.window_received = field<std::vector<uint64_t>>(j, "window_received");
  if (t.window_sent.size() != t.window_received.size())
    throw TelemetryError("telemetry: window_sent and window_received differ in length");
  t.window_s = finite_non_negative(j, "window_s");
  return t;
}

}  // namespace st::telemetry
