#include "apps/info_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

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
    fmt::print("libtorch: {}\n", TORCH_VERSION);
#ifdef ST_HAVE_SIM
    fmt::print("sim backend: {}\n", sim::backend_info());
#else
    fmt::print("sim backend: not built (ns-3 3.37 not found at configure time)\n");
#endif
#ifdef ST_HAVE_EMU
    fmt::print("emu backend: {}\n", emu::backend_info());
#else
    fmt::print("emu backend: not built (libnl-route-3 / libnetfilter-queue not found at configure time)\n");
#endif
  });
}

}  // namespace st::apps
