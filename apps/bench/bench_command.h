#pragma once
// `stellatrain bench compress|optim`: CLI options and the run that prints
// one JSON array (or a table) of entries.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/compress/compressor_names.h"

namespace CLI {
class App;
}

namespace st::bench {

struct BenchCommandOptions {
  std::vector<std::size_t> numels;     // 0: each input's own size
  std::vector<double> densities{0.01};
  std::vector<std::string> inputs{"auto"};
  std::vector<std::string> compressors = compress::base_compressor_names();
  std::vector<std::string> optimizers{"sparse_sgd", "sparse_adam"};
  int threads = 1;
  std::string simd = "auto";
  double min_time_s = 0.2;
  int repetitions = 5;
  uint64_t seed = 1;
  bool json = false;
  std::string out;  // also write the JSON here
};

// Adds `bench compress` and `bench optim` to the app.
void add_bench_commands(CLI::App& app);

// Runs one suite ("compress" or "optim"); returns the process exit code.
int run_bench_command(const std::string& suite, const BenchCommandOptions& options);

}  // namespace st::bench
