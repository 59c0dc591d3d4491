/* CUDA C to PTX through NVRTC (linked: fusec is a build-time tool). */
#ifndef FUSEC_PTX_H
#define FUSEC_PTX_H

#define FUSEC_NVRTC_OPTIONS "--gpu-architecture=compute_XX --std=c++17"

/* Returns 0 and a malloc'd PTX, or -1 and a malloc'd log (either may be NULL). */
int nvrtc_compile(const char *src, const char *name, const char *arch, char **ptx, char **log);
void nvrtc_version(int *major, int *minor);

#endif
