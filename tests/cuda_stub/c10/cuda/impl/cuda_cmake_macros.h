#pragma once
// Empty stand-in for the header a CUDA LibTorch build generates (see ../../../cuda_runtime_api.h).
