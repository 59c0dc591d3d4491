/* fuserun's commands and their shared helpers. */
#ifndef FUSERUN_TOOL_H
#define FUSERUN_TOOL_H
#include <stdio.h>

#include "fuserun.h"

enum { MAX_SIZE_ARGS = FZ_MAX_SIZES };

typedef struct fr_opts {
	const char *artifact;           /* a manifest path */
	int nsize;
	char size_name[MAX_SIZE_ARGS][FZ_MAX_NAME + 1];
	long long size_value[MAX_SIZE_ARGS];
	unsigned long long seed;
	int reps, device, json, verbose;
	int devices;                    /* bench --devices N: sharded across N devices (0: not asked) */
	int procs;                      /* bench --procs: one process per device, joined (fuserun-launch starts them) */
	int recipe;                     /* --recipe: the op lists from the manifest's launch recipe (fz_recipe_ops), not NAME.h */
} fr_opts;

/* exit codes */
enum { EXIT_PASS = 0, EXIT_MISMATCH = 1, EXIT_ERROR = 2 };

int cmd_list(const fr_opts *o);
int cmd_validate(const fr_opts *o);
int cmd_bench(const fr_opts *o);
int cmd_bench_devices(const fr_opts *o);   /* bench_group.c */
/* bench --procs outside a job: runs fuserun-launch with this command line
   (bench_group.c); returns only on failure, with the exit status */
int bench_relaunch(const fr_opts *o, int argc, char **argv);

/* the value of every size of the artifact from the --size options; prints
   what is missing or unknown and returns nonzero */
int sizes_resolve(const fr_opts *o, const fz_artifact_info *info, long long *sizes);
/* "N=1000,M=20" */
void sizes_format(const fz_artifact_info *info, const long long *sizes, char *buf, size_t n);

void json_str(FILE *f, const char *s);   /* ASCII: \u escapes beyond it, U+FFFD for a byte not UTF-8 */
/* s for a terminal, into buf (n >= 24 bytes): controls (C0, DEL, C1) and
   bytes that are not UTF-8 as \xNN; cut with "..." if buf is too small */
enum { TEXT_SAFE_BYTES = 4 * FZ_MAX_LINE + 32 };
const char *text_safe(const char *s, char *buf, size_t n);
void json_num(FILE *f, double v);   /* null when not finite */

#endif
