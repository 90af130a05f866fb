#pragma once
// Sparse gradient chunks: k (index, value) pairs out of a dense tensor of
// numel floats. Indices are strictly increasing in every chunk a compressor
// writes, which the optimizers and the wire encodings rely on.
#include <cstddef>
#include <cstdint>
#include <vector>


namespace st::compress {

// Caller-owned output buffers; a compressor writes at most `capacity` pairs.
struct SparseBuffers {
  uint32_t* indices = nullptr;
  float* values = nullptr;
  std::size_t capacity = 0;
};

// A read-only view of `count` pairs.
struct SparseView {
  const uint32_t* indices = nullptr;
  const float* values = nullptr;
  std::size_t count = 0;
};

// An owning chunk, for callers that want one object (tests, collectives).
// reserve() allocates once; compressors never grow it.
struct SparseChunk {
  std::vector<uint32_t> indices;
  std::vector<float> values;
  std::size_t count = 0;

  void reserve(std::size_t capacity) {
    indices.resize(capacity);
    values.resize(capacity);
  }
  SparseBuffers buffers() { return {indices.data(), values.data(), indices.size()}; }
  SparseView view() const { return {indices.data(), values.data(), count}; }
};

}  // namespace st::compress
