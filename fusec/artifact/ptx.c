#include "artifact/ptx.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

void nvrtc_version(int *major, int *minor)
{
	if (nvrtcVersion(major, minor) != NVRTC_SUCCESS) *major = *minor = 0;
}

int nvrtc_compile(const char *src, const char *name, const char *arch, char **ptx, char **log)
{
	*ptx = NULL, *log = NULL;
	nvrtcProgram prog;
	if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
	char archopt[64];
	/* compute_XX: PTX for that virtual architecture (sm_90 -> compute_90) */
	snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%s", arch + 3);
	const char *opts[] = {archopt, "--std=c++17"};
	nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
	size_t n = 0;
	if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
		*log = malloc(n);
		if (*log && nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS) (*log)[0] = 0;
	}
	if (r == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS) {
		*ptx = malloc(n);
		if (*ptx && nvrtcGetPTX(prog, *ptx) != NVRTC_SUCCESS) free(*ptx), *ptx = NULL;
	}
	nvrtcDestroyProgram(&prog);
	return *ptx ? 0 : -1;
}
