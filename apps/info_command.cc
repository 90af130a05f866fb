#include "apps/info_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

#include "core/device/compute_device.h"
#include "core/simd/simd_level.h"
#ifdef ST_HAVE_SIM
#include "sim/backend_info.h"
#endif
#ifdef ST_HAVE_EMU
#include "emu/backend_info.h"
#endif

namespace st::apps {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show the build: SIMD level, LibTorch, backends");
  cmd->callback([] {
    fmt::print("stellatrain {}\n", ST_VERSION);
    fmt::print("simd: {} (cpu avx2: {})\n", simd::level_name(simd::default_level()), simd::cpu_has_avx2() ? "yes" : "no");
    fmt::print("libtorch: {} (cuda: {}, {} device(s) visible)\n", TORCH_VERSION, device::cuda_built() ? "yes" : "no",
               device::cuda_device_count());
#ifdef ST_HAVE_SIM
    fmt::print("sim backend: {}\n", sim::backend_info());
#else
    fmt::print("sim backend: not built ({})\n", ST_SIM_REASON);
#endif
#ifdef ST_HAVE_EMU
    fmt::print("emu backend: {}\n", emu::backend_info());
#else
    fmt::print("emu backend: not built ({})\n", ST_EMU_REASON);
#endif
  });
}

}  // namespace st::apps
