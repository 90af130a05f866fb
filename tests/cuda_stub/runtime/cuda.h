#pragma once
// Empty stand-in (see cuda_runtime_api.h beside it).
