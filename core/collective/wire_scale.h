#pragma once
// What a collective's message stands for on the wire when its data is a
// sample of the full tensor (sampled CPU stages in timing mode, docs/sim.md):
// a message of `size` bytes whose first `fixed_bytes` are headers stands for
// fixed_bytes + (size - fixed_bytes) x factor bytes, which a simulated
// network carries (comm::Transport::send_standing_for). Identity by default.
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace st::collective {

struct WireScale {
  double factor = 1;            // full tensor's elements per sampled element
  std::size_t fixed_bytes = 0;  // headers, sent once whatever the sample

  bool identity() const { return factor == 1; }
  uint64_t wire_bytes(std::size_t size) const {
    if (identity() || size <= fixed_bytes) return size;
    return fixed_bytes + static_cast<uint64_t>(std::llround(static_cast<double>(size - fixed_bytes) * factor));
  }
};

}  // namespace st::collective
