/* Error codes and messages. */
#include <stdio.h>

#include "internal.h"

const char *fz_strerror(int code)
{
	static const char *const text[FZ_ERR_COUNT_] = {
		[FZ_OK] = "success",
		[FZ_ERR_INVALID] = "invalid argument",
		[FZ_ERR_NO_MEMORY] = "out of host memory",
		[FZ_ERR_NO_DRIVER] = "the CUDA driver (libcuda) is missing or unusable",
		[FZ_ERR_NO_DEVICE] = "no such CUDA device",
		[FZ_ERR_DEVICE_TOO_OLD] = "the device is older than compute capability 8.0",
		[FZ_ERR_NO_CONTEXT] = "no current CUDA context to adopt",
		[FZ_ERR_IO] = "an artifact file is missing or unreadable",
		[FZ_ERR_FORMAT] = "not a valid fusec artifact",
		[FZ_ERR_VERSION] = "the artifact was made by an incompatible fusec",
		[FZ_ERR_INTEGRITY] = "an artifact file was truncated or edited (SHA-256 mismatch)",
		[FZ_ERR_NO_TARGET] = "the artifact has no target the device can run",
		[FZ_ERR_UNKNOWN_KERNEL] = "unknown kernel",
		[FZ_ERR_ARGS_SIZE] = "the args struct has the wrong size",
		[FZ_ERR_BAD_SIZE] = "a size is not positive",
		[FZ_ERR_CUDA] = "a CUDA driver call failed",
		[FZ_ERR_LAYOUT] = "the artifact does not have the layout the generated header was compiled against",
		[FZ_ERR_NO_NCCL] = "NCCL (libnccl) is missing or unusable",
		[FZ_ERR_NCCL] = "an NCCL collective failed",
		[FZ_ERR_SHARD] = "the fusion cannot be sharded that way",
		[FZ_ERR_STALL] = "a persistent pipeline stalled: a barrier's watchdog expired",
		[FZ_ERR_TIMEOUT] = "a bounded wait for another process expired (a peer missing or gone)",
		[FZ_ERR_OVERFLOW] = "more items than a fixed-capacity exchange holds (a list was cut)",
	};
	if (code < 0 || code >= FZ_ERR_COUNT_) return "unknown fuserun error code";
	return text[code];
}

int fr_err(char *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, FZ_ERRMSG_SIZE, fmt, ap);
		va_end(ap);
	}
	return code;
}

int fr_cuda_error(char *err, const char *call, CUresult r)
{
	const char *name = NULL, *text = NULL;
	if (fr_cu) {
		if (fr_cu->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
		if (fr_cu->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
	}
	char num[32];
	snprintf(num, sizeof num, "CUresult %d", (int)r);
	int code = FZ_ERR_CUDA;
	if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE) code = FZ_ERR_NO_DEVICE;
	else if (r == CUDA_ERROR_STUB_LIBRARY || r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || r == CUDA_ERROR_SYSTEM_NOT_READY)
		code = FZ_ERR_NO_DRIVER;
	return fr_err(err, code, "%s: %s: %s", call, name ? name : num, text ? text : "(no description)");
}
