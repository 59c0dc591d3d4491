/* One namer per scope of generated identifiers (a .cu's kernels, a
 * kernel's locals): every name it makes is new in that scope, whatever the
 * lengths of the user's names, and never one of the names reserved in it
 * (C/CUDA keywords, the prelude's helpers, the names a template spells
 * itself). A name that is taken gets a suffix _2, _3, ... */
#ifndef FUSEC_NAMER_H
#define FUSEC_NAMER_H
#include <stddef.h>

typedef struct Namer {
	char **slot;     /* open addressing; NULL = empty */
	size_t cap, n;
} Namer;

void namer_init(Namer *nm);
void namer_free(Namer *nm);
/* Marks a name as taken, without making it. */
void namer_reserve(Namer *nm, const char *name);
int namer_taken(const Namer *nm, const char *name);
/* A fresh name: printf(fmt, ...) if free, else with a suffix. The string
 * belongs to the namer (valid until namer_free); strdup it to keep it. */
const char *namer_make(Namer *nm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
