/* Diagnostics: locations are byte offsets into one source buffer and become
 * line:col only when printed, so the lexer and parser never track lines. */
#ifndef FUSEC_DIAG_H
#define FUSEC_DIAG_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef struct Source {
	const char *path;  /* as the user spelled it */
	char *text;        /* NUL-terminated copy of the file */
	size_t len;
} Source;

typedef struct Diag {
	const Source *src;
	FILE *out;
	int errors;
	int warnings;
	int max_errors; /* stop reporting (not checking) past this many */
} Diag;

/* Returns 0 on success; on failure prints "fusec: error: PATH: reason". */
int source_load(Source *s, const char *path, FILE *err);
void source_free(Source *s);
void source_linecol(const Source *s, size_t off, int *line, int *col);

void diag_error(Diag *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_note(Diag *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
