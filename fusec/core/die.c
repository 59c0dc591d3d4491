#include "core/die.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *spec_path;

void die_set_spec(const char *path) { spec_path = path; }

void die(const char *fmt, ...)
{
	fflush(stdout);
	fprintf(stderr, "fusec: internal error%s%s: ", spec_path ? " compiling " : "", spec_path ? spec_path : "");
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nfusec: this is a bug in fusec, not in the spec; please report it with the spec\n", stderr);
	exit(3);
}

int xvasprintf(char **out, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || !(*out = malloc((size_t)n + 1))) return -1;
	vsnprintf(*out, (size_t)n + 1, fmt, ap);
	return n;
}

void *xcalloc(unsigned long n, unsigned long size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) die("out of memory");
	return p;
}

void *xrealloc(void *p, unsigned long n, unsigned long size)
{
	if (size && n > (unsigned long)-1 / size) die("out of memory");
	void *q = realloc(p, n * size > 0 ? n * size : 1);
	if (!q) die("out of memory");
	return q;
}

char *xstrdup(const char *s)
{
	char *c = strdup(s);
	if (!c) die("out of memory");
	return c;
}

FILE *xmemstream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	if (!f) die("out of memory");
	return f;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (xvasprintf(&s, fmt, ap) < 0) die("out of memory");
	va_end(ap);
	return s;
}
