#include "core/device/host_description.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace st::device {

std::string cpu_model_from(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

namespace {

std::string this_cpu_model() {
  std::ifstream file("/proc/cpuinfo");
  std::stringstream text;
  text << file.rdbuf();
  const std::string model = cpu_model_from(text.str());
  return model.empty() ? "unknown" : model;
}

}  // namespace

nlohmann::json host_description(const ComputeDevice& device, int local_workers) {
  nlohmann::json host = {{"cpu", this_cpu_model()}, {"hardware_threads", std::thread::hardware_concurrency()}};
  if (!device.is_cuda()) return host;
  require_available(device);  // a CPU-only build or no GPU: the reason, as the run itself gives it
  std::map<int, std::string> names;  // by index: each GPU once, in order
  const int count = cuda_device_count();
  for (int worker = 0; worker < local_workers; ++worker) {
    const int index = cuda_index_for_worker(device, worker, count);
    if (!names.count(index)) names[index] = cuda_device_name(index);
  }
  nlohmann::json gpus = nlohmann::json::object();
  for (const auto& [index, name] : names) gpus[fmt::format("cuda:{}", index)] = name;
  host["gpus"] = gpus;
  return host;
}

}  // namespace st::device
