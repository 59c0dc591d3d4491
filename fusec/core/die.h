/* The one path for fusec's internal failures (a bug, or out of memory):
 * a message naming the spec being compiled, and exit status 3. The
 * library code (runtime/) never uses it. */
#ifndef FUSEC_DIE_H
#define FUSEC_DIE_H
#include <stdarg.h>
#include <stdio.h>

/* The spec the next die() names (main.c sets it per file). */
void die_set_spec(const char *path);
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* vasprintf without _GNU_SOURCE: *out is malloc'd; -1 on failure. */
int xvasprintf(char **out, const char *fmt, va_list ap);
/* malloc/calloc/realloc that die() instead of returning NULL. */
void *xcalloc(unsigned long n, unsigned long size);
void *xrealloc(void *p, unsigned long n, unsigned long size);
char *xstrdup(const char *s);
/* open_memstream that die()s: a failure there is out of memory, and every
   caller would otherwise have to test for it (some did not). */
FILE *xmemstream(char **buf, size_t *len);
/* printf into a fresh malloc'd string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
