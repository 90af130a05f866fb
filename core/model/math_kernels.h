#pragma once
// Which CPU kernels the real math (LibTorch's ATen, its oneDNN, OpenBLAS)
// runs with. Each library picks kernels per machine (SSE, AVX2, AVX-512) and
// their results differ in the last bits, which training amplifies: the same
// simulated run gave another accuracy curve on another CPU. The program
// therefore pins one kernel level for all three before any of them starts,
// and one thread for OpenBLAS (LibTorch's own are set per run), so that a
// run's results are the same on every machine that has the level:
//   ST_MATH=avx2    (default) x86-64-v3: every x86-64 CPU since 2013-2015
//   ST_MATH=sse41   every x86-64 CPU with SSE4.1, slower
//   ST_MATH=native  each library's own choice: fastest, machine-dependent
// docs/engine.md "The same results on every machine" has what it costs.
#include <nlohmann/json.hpp>

#include <string>

namespace st::model {

// Call first thing in main(). Sets the libraries' variables for the level
// ST_MATH names and, when they were not already so, re-executes the
// program (OpenBLAS reads its core type when it is loaded, before main)
// with the same arguments; child processes inherit the pin. On a CPU
// without the level's instructions it falls back to sse41 and says so.
// Throws std::invalid_argument for an unknown ST_MATH.
void pin_math_kernels(char** argv);

// What this process runs with, for manifests: the level and each
// library's setting.
nlohmann::json math_kernels();

}  // namespace st::model
