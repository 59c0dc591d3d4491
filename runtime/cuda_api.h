/* The Driver API as one table of function pointers, filled by dlopen() of
 * libcuda on first use. cuda.h is included for its types and enums only:
 * nothing here links against libcuda. */
#ifndef FUSERUN_CUDA_API_H
#define FUSERUN_CUDA_API_H
#include <cuda.h>

/* X(symbol, fallback symbol or NULL, parameters): the _v2 names where the
   Driver API has them */
#define FR_CUDA_API(X) \
	X(cuInit, NULL, (unsigned int flags)) \
	X(cuDriverGetVersion, NULL, (int *version)) \
	X(cuGetErrorName, NULL, (CUresult error, const char **str)) \
	X(cuGetErrorString, NULL, (CUresult error, const char **str)) \
	X(cuDeviceGetCount, NULL, (int *count)) \
	X(cuDeviceGet, NULL, (CUdevice *device, int ordinal)) \
	X(cuDeviceGetName, NULL, (char *name, int len, CUdevice dev)) \
	X(cuDeviceGetAttribute, NULL, (int *pi, CUdevice_attribute attrib, CUdevice dev)) \
	X(cuDeviceTotalMem_v2, NULL, (size_t *bytes, CUdevice dev)) \
	X(cuDevicePrimaryCtxRetain, NULL, (CUcontext *pctx, CUdevice dev)) \
	X(cuDevicePrimaryCtxRelease_v2, NULL, (CUdevice dev)) \
	X(cuCtxGetCurrent, NULL, (CUcontext *pctx)) \
	X(cuCtxGetDevice, NULL, (CUdevice *device)) \
	X(cuCtxPushCurrent_v2, NULL, (CUcontext ctx)) \
	X(cuCtxPopCurrent_v2, NULL, (CUcontext *pctx)) \
	X(cuCtxSynchronize, NULL, (void)) \
	X(cuModuleLoadDataEx, NULL, (CUmodule *module, const void *image, unsigned int n, CUjit_option *options, void **values)) \
	X(cuModuleUnload, NULL, (CUmodule hmod)) \
	X(cuModuleGetFunction, NULL, (CUfunction *hfunc, CUmodule hmod, const char *name)) \
	X(cuLaunchKernel, NULL, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, \
	                         unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params, void **extra)) \
	X(cuMemAlloc_v2, NULL, (CUdeviceptr *dptr, size_t bytes)) \
	X(cuMemFree_v2, NULL, (CUdeviceptr dptr)) \
	X(cuMemcpyHtoD_v2, NULL, (CUdeviceptr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH_v2, NULL, (void *dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyDtoD_v2, NULL, (CUdeviceptr dst, CUdeviceptr src, size_t bytes)) \
	X(cuMemcpyHtoDAsync_v2, NULL, (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)) \
	X(cuMemcpyDtoHAsync_v2, NULL, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream)) \
	X(cuMemcpyDtoDAsync_v2, NULL, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)) \
	X(cuMemsetD8_v2, NULL, (CUdeviceptr dst, unsigned char value, size_t n)) \
	X(cuMemsetD8Async, NULL, (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream)) \
	X(cuMemsetD32Async, NULL, (CUdeviceptr dst, unsigned int value, size_t n, CUstream stream)) \
	X(cuStreamCreate, NULL, (CUstream *stream, unsigned int flags)) \
	X(cuStreamDestroy_v2, NULL, (CUstream stream)) \
	X(cuStreamCreateWithPriority, NULL, (CUstream *stream, unsigned int flags, int priority)) \
	X(cuCtxGetStreamPriorityRange, NULL, (int *least, int *greatest)) \
	X(cuStreamSynchronize, NULL, (CUstream stream)) \
	X(cuStreamQuery, NULL, (CUstream stream)) \
	X(cuStreamWaitEvent, NULL, (CUstream stream, CUevent event, unsigned int flags)) \
	X(cuEventCreate, NULL, (CUevent *event, unsigned int flags)) \
	X(cuEventDestroy_v2, NULL, (CUevent event)) \
	X(cuEventRecord, NULL, (CUevent event, CUstream stream)) \
	X(cuEventSynchronize, NULL, (CUevent event)) \
	X(cuEventQuery, NULL, (CUevent event)) \
	X(cuMemHostAlloc, NULL, (void **pp, size_t bytes, unsigned int flags)) \
	X(cuMemFreeHost, NULL, (void *p)) \
	X(cuEventElapsedTime_v2, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end)) \
	X(cuFuncSetAttribute, NULL, (CUfunction f, CUfunction_attribute attrib, int value)) \
	X(cuLaunchCooperativeKernel, NULL, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, \
	                                    unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params)) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, NULL, (int *blocks, CUfunction f, int block, size_t smem)) \
	X(cuStreamBeginCapture_v2, NULL, (CUstream stream, CUstreamCaptureMode mode)) \
	X(cuStreamEndCapture, NULL, (CUstream stream, CUgraph *graph)) \
	X(cuGraphInstantiateWithFlags, NULL, (CUgraphExec *exec, CUgraph graph, unsigned long long flags)) \
	X(cuGraphLaunch, NULL, (CUgraphExec exec, CUstream stream)) \
	X(cuGraphExecDestroy, NULL, (CUgraphExec exec)) \
	X(cuGraphDestroy, NULL, (CUgraph graph)) \
	X(cuTensorMapEncodeTiled, NULL, (CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr, \
	                                 const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box, \
	                                 const cuuint32_t *elem_strides, CUtensorMapInterleave il, CUtensorMapSwizzle sw, \
	                                 CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill))

typedef struct fr_cuda {
#define FR_FIELD(sym, alt, params) CUresult (*sym) params;
	FR_CUDA_API(FR_FIELD)
#undef FR_FIELD
} fr_cuda;

/* The table, loaded and cuInit'ed; 0 or an FZ_ERR_* code with the message in
   err (FZ_ERRMSG_SIZE bytes, may be NULL). A failed load is not cached: a
   later call tries again (and may name another $FUSERUN_LIBCUDA). */
int fr_cuda_get(const fr_cuda **api, char *err);
/* The loaded table, for calls on handles (which exist only after a load). */
extern const fr_cuda *fr_cu;

/* Formats "call: CUDA_ERROR_NAME: text" into err; returns the FZ_ERR_* code
   the CUDA error maps to (FZ_ERR_CUDA for most). */
int fr_cuda_error(char *err, const char *call, CUresult r);

#endif
