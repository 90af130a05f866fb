#include "apps/bench/bench_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/bench/bench_suite.h"
#include "apps/bench/profile_command.h"

namespace st::bench {
namespace {

void add_options(CLI::App& cmd, BenchCommandOptions& o, bool compress) {
  cmd.add_option("--numel", o.numels, "Gradient sizes, comma separated (default: each input's own size; "
                                      "Gaussian 11173962). Real gradients are tiled to this size")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  cmd.add_option("--density", o.densities, "Fractions of elements kept, comma separated")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--input", o.inputs, "gaussian, real (resnet18 and cnn), resnet18, cnn, or auto "
                                      "(real when Fashion-MNIST is installed)")
      ->delimiter(',');
  if (compress)
    cmd.add_option("--compressors", o.compressors, "Compressors to time (ef: prefix for error feedback)")->delimiter(',');
  else
    cmd.add_option("--optimizers", o.optimizers, "sparse_sgd, sparse_adam; sparse_sgd_decay, sparse_sgd_exact (lazy-momentum rules, gradients alternating by a block)")->delimiter(',');
  cmd.add_option("--threads", o.threads, "Threads (LibTorch baselines and sparse optimizers)")->check(CLI::Range(1, 256));
  cmd.add_option("--simd", o.simd, "portable, avx2 or auto")->check(CLI::IsMember({"portable", "avx2", "auto"}));
  cmd.add_option("--min-time", o.min_time_s, "Minimum seconds per repetition")->check(CLI::PositiveNumber);
  cmd.add_option("--repetitions", o.repetitions, "Repetitions; the median is reported")->check(CLI::Range(1, 1000));
  cmd.add_option("--seed", o.seed, "Seed of inputs");
  cmd.add_flag("--json", o.json, "Print one JSON array instead of a table");
  cmd.add_option("--out", o.out, "Also write the JSON array to this file");
}

std::string fmt_opt(const nlohmann::json& e, const char* key) {
  return e.contains(key) ? fmt::format("{:.3f}", e[key].get<double>()) : "-";
}

void print_table(const nlohmann::json& entries) {
  fmt::print("{:<16} {:<9} {:>10} {:>7} {:>10} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9}\n", "name", "input", "numel",
             "density", "median_ms", "gbps", "vs_topk", "vs_memcpy", "l2_capt", "blk_eff", "cnt_rat", "thr_next", "vs_dsgd");
  for (const auto& e : entries)
    fmt::print("{:<16} {:<9} {:>10} {:>7} {:>10.3f} {:>8.2f} {:>9.2f} {:>9.2f} {:>8} {:>8} {:>8} {:>8} {:>9}\n",
               e["name"].get<std::string>(), e["input"].get<std::string>(), e["numel"].get<std::size_t>(),
               e["density"].get<double>(), e["median_ms"].get<double>(), e["gbps"].get<double>(),
               e["vs_torch_topk"].get<double>(), e["vs_memcpy"].get<double>(), fmt_opt(e, "l2_capture"),
               fmt_opt(e, "block_efficiency"), fmt_opt(e, "count_ratio"), fmt_opt(e, "threshold_ratio_next"),
               fmt_opt(e, "vs_torch_dense_sgd"));
}

}  // namespace

int run_bench_command(const std::string& suite, const BenchCommandOptions& o) {
  SuiteOptions options;
  options.compressors = o.compressors;
  options.optimizers = o.optimizers;
  options.threads = o.threads;
  options.simd = simd::parse_level(o.simd);
  options.timer = {o.min_time_s, o.repetitions};
  const Progress progress = [](const std::string& message) { spdlog::info("bench: {}", message); };

  const auto inputs = expand_input_names(o.inputs);
  const std::vector<std::size_t> numels = o.numels.empty() ? std::vector<std::size_t>{0} : o.numels;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& name : inputs) {
    for (std::size_t numel : numels) {
      const BenchInput input = make_input(name, numel, o.seed, progress);
      for (double density : o.densities) {
        const auto entries = suite == "compress" ? run_compress_suite(input, density, options, progress)
                                                 : run_optim_suite(input, density, options, progress);
        for (auto entry : entries) {
          entry["source"] = input.source;
          all.push_back(std::move(entry));
        }
      }
    }
  }
  if (o.json)
    std::cout << all.dump(2) << std::endl;
  else
    print_table(all);
  if (!o.out.empty()) {
    std::ofstream file(o.out);
    if (!file) throw std::runtime_error("cannot write " + o.out);
    file << all.dump(2) << '\n';
  }
  return 0;
}

void add_bench_commands(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Micro-benchmarks with ratios measured side by side in one run");
  bench->require_subcommand(1);
  for (const std::string suite : {"compress", "optim"}) {
    auto options = std::make_shared<BenchCommandOptions>();
    auto* cmd = bench->add_subcommand(suite, suite == "compress" ? "Gradient compressors against torch::topk and memcpy"
                                                                 : "Sparse optimizers against torch::optim::SGD");
    add_options(*cmd, *options, suite == "compress");
    cmd->callback([suite, options] { throw CLI::RuntimeError(run_bench_command(suite, *options)); });
  }
  add_profile_command(*bench);
}

}  // namespace st::bench
