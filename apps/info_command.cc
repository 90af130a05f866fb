#include "apps/info_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

#include "apps/backends.h"
#include "core/device/compute_device.h"
#include "core/simd/simd_level.h"

namespace st::apps {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show the build: SIMD level, LibTorch, backends");
  cmd->callback([] {
    fmt::print("stellatrain {}\n", ST_VERSION);
    fmt::print("simd: {} (cpu avx2: {})\n", simd::level_name(simd::default_level()), simd::cpu_has_avx2() ? "yes" : "no");
    fmt::print("libtorch: {} (cuda: {}, {} device(s) visible)\n", TORCH_VERSION, device::cuda_built() ? "yes" : "no",
               device::cuda_device_count());
    for (const char* name : {"sim", "emu"}) fmt::print("{} backend: {}\n", name, backend_status(name));
  });
}

}  // namespace st::apps
