/* The tuning table: measured kernel parameters, keyed by architecture,
 * kernel kind and size bucket, read by the planner. fusec only reads it
 * (a build without a GPU regenerates the same bytes); `make tune` writes it
 * on a GPU. Format (tune/table.txt):
 *   # comment
 *   @ KEY=VALUE ...                          the tool versions of the run
 *   ARCH KIND BUCKET PARAM=INT ...           one entry, lines sorted (C locale)
 * BUCKET is two decimal digits b: the entry serves sizes up to 2^b (row
 * kinds: a row's width in 16-byte vectors; the others: elements). */
#ifndef FUSEC_TUNE_H
#define FUSEC_TUNE_H
#include <stdio.h>

enum { TUNE_MAX_PARAMS = 8, TUNE_NAME = 24 };

typedef struct TuneEntry {
	char arch[TUNE_NAME], kind[TUNE_NAME];
	int bucket;
	int line;
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
/* "ARCH KIND BUCKET", as the manifest records the entry a kernel used. */
void tune_entry_name(const TuneEntry *e, char *buf, size_t cap);

#endif
