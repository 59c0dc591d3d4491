#include "core/namer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void namer_init(Namer *nm) { memset(nm, 0, sizeof *nm); }

void namer_free(Namer *nm)
{
	for (size_t i = 0; i < nm->cap; i++) free(nm->slot[i]);
	free(nm->slot);
	memset(nm, 0, sizeof *nm);
}

static size_t find(const Namer *nm, const char *name)
{
	size_t i = hash(name) & (nm->cap - 1);
	while (nm->slot[i] && strcmp(nm->slot[i], name)) i = (i + 1) & (nm->cap - 1);
	return i;
}

int namer_taken(const Namer *nm, const char *name)
{
	return nm->cap && nm->slot[find(nm, name)] != NULL;
}

static const char *insert(Namer *nm, char *name)
{
	if (2 * (nm->n + 1) > nm->cap) {
		Namer big = {calloc(nm->cap ? 2 * nm->cap : 64, sizeof(char *)), nm->cap ? 2 * nm->cap : 64, nm->n};
		if (!big.slot) die("out of memory");
		for (size_t i = 0; i < nm->cap; i++)
			if (nm->slot[i]) big.slot[find(&big, nm->slot[i])] = nm->slot[i];
		free(nm->slot);
		*nm = big;
	}
	size_t i = find(nm, name);
	if (nm->slot[i]) {
		free(name);
		return nm->slot[i];
	}
	nm->n++;
	return nm->slot[i] = name;
}

void namer_reserve(Namer *nm, const char *name)
{
	char *c = strdup(name);
	if (!c) die("out of memory");
	insert(nm, c);
}

const char *namer_make(Namer *nm, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *base = NULL;
	if (xvasprintf(&base, fmt, ap) < 0) die("out of memory");
	va_end(ap);
	if (!namer_taken(nm, base)) return insert(nm, base);
	for (unsigned k = 2;; k++) {
		size_t len = strlen(base) + 16;
		char *c = malloc(len);
		if (!c) die("out of memory");
		snprintf(c, len, "%s_%u", base, k);
		if (!namer_taken(nm, c)) {
			free(base);
			return insert(nm, c);
		}
		free(c);
	}
}
