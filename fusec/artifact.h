/* generated/<fusion>.*: CUDA source, PTX per target, header, reference C
 * and a manifest, each stamped with fusec's version and the spec's hash. */
#ifndef FUSEC_ARTIFACT_H
#define FUSEC_ARTIFACT_H
#include <stdio.h>

#include "frontend.h"

typedef struct ArtifactOpts {
	const char *out_dir;
	const char **archs;
	int narch;
	FILE *depfile;     /* -MD -MF: rules for what each artifact depends on */
} ArtifactOpts;

/* Returns 0, or nonzero after printing "fusec: error: ..." to stderr. */
int artifact_write(const FrontEnd *fe, const ArtifactOpts *o);

#endif
