#pragma once
// Empty stand-in for the header a CUDA LibTorch build generates (see tests/cuda_stub/runtime/cuda_runtime_api.h).
