/* generated/<fusion>.*: CUDA source, PTX per target, header, reference C
 * and a manifest, each stamped with fusec's version and the spec's hash. */
#ifndef FUSEC_ARTIFACT_H
#define FUSEC_ARTIFACT_H
#include <stdio.h>

#include "front/frontend.h"

typedef struct ArtifactOpts {
	const char *out_dir;
	const char *const *archs;
	int narch;
	FILE *depfile;     /* -MD -MF: rules for what each artifact depends on */
	const char *tune;  /* --tune=FILE, or NULL: the artifacts depend on it too */
} ArtifactOpts;

/* paths fusec builds: an output folder and a file name must fit */
#define FUSEC_PATH_MAX 4096
/* the longest -o folder: room for "/" and the longest file name */
#define FUSEC_OUT_DIR_MAX (FUSEC_PATH_MAX - 160)

enum { ARTIFACT_OK = 0, ARTIFACT_USER_ERROR = 1, ARTIFACT_INTERNAL_ERROR = 3 };

/* Writes every fusion of fe into o->out_dir (created if missing). Returns
   ARTIFACT_OK, or USER_ERROR (a file that cannot be written, a name the
   manifest cannot hold, a fusion name defined twice) or INTERNAL_ERROR
   (NVRTC rejected the generated CUDA), after printing "fusec: error: ...";
   on an error the fusion's old artifacts are left as they were. */
int artifact_write(const FrontEnd *fe, const ArtifactOpts *o);
/* The registers a thread of kernel `kernel` uses on arch, as ptxas -v
   counted them when this run wrote its artifact (the spill check), and
   *spill its bytes spilled; -1 when it was not counted (no -o, no ptxas). */
int artifact_registers(const char *kernel, const char *arch, int *spill);
/* the specs of this run: no output may replace one of them */
void artifact_set_specs(const char *const *paths, int n);
/* creates path and its parents; 0, or -1 after printing why */
int artifact_make_dirs(const char *path);
/* writes path atomically (a temporary file beside it, fsync, rename),
   refusing a symbolic link or a spec; 0, or -1 after printing why */
int artifact_write_file(const char *path, const char *data, size_t n);
#endif
