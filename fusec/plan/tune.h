/* The tuning table: measured kernel parameters, keyed by architecture,
 * kernel signature and size bucket, read by the planner (plan_tune.c).
 * fusec only reads it (a build without a GPU regenerates the same bytes);
 * `make tune` writes it on a GPU (bench/tune.sh). Format (tune/table.txt):
 *   # comment
 *   @ KEY=VALUE ...                          the tool versions of the run
 *   ARCH KIND BUCKET PARAM=INT ...           one entry, lines sorted (C locale)
 * KIND is a kernel signature, MODE.HASH as `fusec --emit=schedule` prints
 * it (sig=): what the kernel computes, not what a spec names it. BUCKET is
 * two decimal digits b: the entry was measured at 2^(b-1) < size <= 2^b
 * (elements of the kernel's space times its row); a kernel takes the entry
 * of its signature with the largest bucket, since the sizes are known only
 * at launch. PARAMs are the kernel's mode's tunable ones (tune_check). */
#ifndef FUSEC_TUNE_H
#define FUSEC_TUNE_H
#include <stdio.h>

enum { TUNE_MAX_PARAMS = 8, TUNE_NAME = 24 };

typedef struct TuneEntry {
	char arch[TUNE_NAME], kind[TUNE_NAME];
	int bucket;
	int line;
	char name[3 * TUNE_NAME + 8]; /* ARCH:KIND:BUCKET, as schedules and manifests record it */
	int np;
	char key[TUNE_MAX_PARAMS][TUNE_NAME];
	long long val[TUNE_MAX_PARAMS];
} TuneEntry;

typedef struct TuneTable {
	TuneEntry *e;
	int n;
	char *tools;  /* the "@" line's text, or NULL */
} TuneTable;

/* Parses text (named name in diagnostics); errors go to err as
 * name:line:col: error: ...; returns the number of errors (0: usable). */
int tune_parse(TuneTable *t, const char *name, const char *text, FILE *err);
/* Reads and parses a file; a missing file is an error. */
int tune_load(TuneTable *t, const char *path, FILE *err);
void tune_free(TuneTable *t);
/* The entry of arch and kind with the smallest bucket >= log2size, or the
 * largest bucket when none is that large; NULL when arch/kind has none. */
const TuneEntry *tune_find(const TuneTable *t, const char *arch, const char *kind, int log2size);
/* A parameter of an entry, dflt when the entry is NULL or lacks it. */
long long tune_get(const TuneEntry *e, const char *key, long long dflt);
/* "ARCH:KIND:BUCKET", as the manifest records the entry a kernel used. */
void tune_entry_name(const TuneEntry *e, char *buf, size_t cap);

/* The parameters a table may set, by kernel mode (schedule.h's KernelMode):
   is e's KIND a signature of a mode with tunable parameters, and is each
   parameter one of them, within its range? 0, or 1 after saying why at
   the entry's line (tune_load checks every entry so). */
int tune_check(const TuneEntry *e, const char *path, FILE *err);
struct KernelParams;
/* e's parameters into p (e checked; mode is its KIND's) */
void tune_apply(const TuneEntry *e, struct KernelParams *p);

#endif
