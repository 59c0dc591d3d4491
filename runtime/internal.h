/* libfuserun's private structures and helpers (names fr_*). */
#ifndef FUSERUN_INTERNAL_H
#define FUSERUN_INTERNAL_H
#include <stdarg.h>

#include "cuda_api.h"
#include "fuserun.h"

struct fz_device {
	CUdevice dev;
	CUcontext ctx;
	int adopted;      /* the application's context: not released at close */
	int ordinal;
	int cc_major, cc_minor, sm_count;
	char err[FZ_ERRMSG_SIZE];
};

struct fz_artifact {
	fz_device *dev;
	fz_artifact_info info;
	const fz_target_info *target;
	CUmodule mod;
	CUfunction *fn;   /* one per info.kernels[] */
	char err[FZ_ERRMSG_SIZE];
};

/* Writes a message into err (FZ_ERRMSG_SIZE bytes; NULL: none); returns code. */
int fr_err(char *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Makes dev's context current for the calling thread (a push), and pops it. */
int fr_enter(fz_device *dev, char *err);
void fr_leave(fz_device *dev);

/* Reads a whole file (NUL-terminated too); 0, or FZ_ERR_IO/NO_MEMORY with
   what = the role of the file in the message. */
int fr_read_file(const char *path, const char *what, char **data, size_t *len, char *err);

/* The path of a file of a verified artifact, next to its manifest (malloc'd). */
char *fr_artifact_path(const fz_artifact_info *info, const char *name);

#endif
