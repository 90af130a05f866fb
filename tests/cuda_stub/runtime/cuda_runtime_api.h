#pragma once
// A stand-in for the CUDA runtime header, just enough for the CUDA sources
// of core/device/cuda/ and the c10/cuda headers they include to be parsed
// (-fsyntax-only) on a machine without the CUDA toolkit: the
// cuda_sources_parse test (tests/CMakeLists.txt) keeps them from rotting
// between the rare builds on a GPU machine; used where no CUDA toolkit is
// installed (CI). Declarations only, never linked.
#include <cstddef>
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaError { cudaSuccess = 0, cudaErrorNotReady = 600, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInitializationError=3, cudaErrorCudartUnloading=4, cudaErrorNoDevice=100, cudaErrorInsufficientDriver=35, cudaErrorPeerAccessAlreadyEnabled=704, cudaErrorHostMemoryAlreadyRegistered=712, cudaErrorHostMemoryNotRegistered=713 };
typedef enum cudaError cudaError_t;
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02
#define cudaEventBlockingSync 0x01
#define cudaStreamNonBlocking 0x01
#define cudaStreamDefault 0x00
#define cudaDeviceScheduleBlockingSync 0x04
struct cudaDeviceProp { char name[256]; int major, minor; size_t totalGlobalMem; int multiProcessorCount; };
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1, cudaStreamCaptureStatusInvalidated = 2 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToHost=0, cudaMemcpyHostToDevice=1, cudaMemcpyDeviceToHost=2, cudaMemcpyDeviceToDevice=3, cudaMemcpyDefault=4 };
typedef struct CUgraph_st* cudaGraph_t; typedef struct CUgraphExec_st* cudaGraphExec_t;
extern "C" {
const char* cudaGetErrorString(cudaError_t);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaEventCreate(cudaEvent_t*);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t*, unsigned int);
cudaError_t cudaEventDestroy(cudaEvent_t);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventQuery(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float*, cudaEvent_t, cudaEvent_t);
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int flags = 0);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaStreamQuery(cudaStream_t);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetDevice(int*);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDeviceCount(int*);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int);
cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus*);
cudaError_t cudaStreamGetPriority(cudaStream_t, int*);
cudaError_t cudaDeviceGetStreamPriorityRange(int*, int*);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t*, unsigned int, int);
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode*);
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaDriverGetVersion(int*);
cudaError_t cudaRuntimeGetVersion(int*);
}
