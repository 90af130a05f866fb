#pragma once
// The c10d objects behind a GlooGroup. Includes ProcessGroupGloo.hpp (ATen,
// Gloo), so only core/c10d's .cc files and code that calls c10d directly
// include it.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <string>

#include "core/c10d/gloo_group.h"

namespace st::c10d_ddp {

struct GlooGroupState {
  GlooGroupOptions options;
  std::string device_address;
  c10::intrusive_ptr<::c10d::Store> store;  // a TCPStore client (and server on rank 0)
  c10::intrusive_ptr<::c10d::ProcessGroupGloo> process_group;
};

}  // namespace st::c10d_ddp
