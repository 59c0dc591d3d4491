/* What the artifact writer's files share (artifact.c, manifest.c,
 * atomic_write.c): a file built in memory, and the outputs written
 * together or not at all. */
#ifndef FUSEC_ARTIFACT_IMPL_H
#define FUSEC_ARTIFACT_IMPL_H
#include <stdio.h>

#include "artifact/artifact.h"
#include "core/die.h"
#include "plan/plan.h"

typedef struct Buf {
	char *p;
	size_t n;
	FILE *f;
} Buf;

static inline void buf_open(Buf *b)
{
	b->p = NULL, b->n = 0;
	b->f = xmemstream(&b->p, &b->n);
}

static inline void buf_close(Buf *b) { fclose(b->f), b->f = NULL; }

/* atomic_write.c */
typedef struct OutFile {
	char path[FUSEC_PATH_MAX];
	char tmp[FUSEC_PATH_MAX + 16];
	const char *data;
	size_t n;
	int written;
} OutFile;
void artifact_set_path(OutFile *o, const char *dir, const char *name);
/* the output folder's advisory lock (flock on the folder itself: no file
   of ours in it); -1 where it cannot be taken, then nothing is locked */
int artifact_lock_dir(const char *dir);
void artifact_unlock_dir(int fd);
/* writes every file of out[0..n) (the last one last), or none of them */
int artifact_write_all(OutFile *out, int n, const char *dir);

/* spills.c: a warning per kernel of the PTX that ptxas says spills; -1
   after saying so when ptxas refuses the PTX (0 without a ptxas) */
int artifact_warn_spills(const char *spec_path, const char *arch, const char *ptx, size_t n, const char *fusion);

/* manifest.c: the manifest's lines after its files */
void manifest_body(const Module *m, const FusionPlan *fp, FILE *out);

#endif
