/* The tuning table reader (format in tune.h). Strict on purpose: the table
 * is written by a tool, so anything unexpected is a broken table, reported
 * with its line and column rather than guessed around. */
#include "plan/tune.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "plan/schedule.h"

static int bad(FILE *err, const char *name, int line, int col, const char *msg, const char *arg)
{
	if (err) fprintf(err, "%s:%d:%d: error: %s%s%s%s\n", name, line, col, msg, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
	return 1;
}

/* the next word of s at *i (spaces and tabs separate words) */
static int word(const char *s, size_t len, size_t *i, size_t *start)
{
	while (*i < len && (s[*i] == ' ' || s[*i] == '\t')) ++*i;
	*start = *i;
	while (*i < len && s[*i] != ' ' && s[*i] != '\t') ++*i;
	return (int)(*i - *start);
}

static int name_ok(const char *s, int n)
{
	if (n <= 0 || n >= TUNE_NAME) return 0;
	for (int k = 0; k < n; k++)
		if (!isalnum((unsigned char)s[k]) && s[k] != '_' && s[k] != '.') return 0;
	return 1;
}

static int cmp_entry(const TuneEntry *a, const TuneEntry *b)
{
	int c = strcmp(a->arch, b->arch);
	if (!c) c = strcmp(a->kind, b->kind);
	if (!c) c = (a->bucket > b->bucket) - (a->bucket < b->bucket);
	return c;
}

static int parse_line(TuneTable *t, const char *name, int ln, const char *s, size_t len, FILE *err)
{
	TuneEntry e;
	memset(&e, 0, sizeof e);
	e.line = ln;
	size_t i = 0, st;
	int n = word(s, len, &i, &st);
	if (!name_ok(s + st, n)) return bad(err, name, ln, (int)st + 1, "expected an architecture name", NULL);
	memcpy(e.arch, s + st, (size_t)n);
	n = word(s, len, &i, &st);
	if (!name_ok(s + st, n)) return bad(err, name, ln, (int)st + 1, "expected a kernel kind", NULL);
	memcpy(e.kind, s + st, (size_t)n);
	n = word(s, len, &i, &st);
	if (n != 2 || !isdigit((unsigned char)s[st]) || !isdigit((unsigned char)s[st + 1]))
		return bad(err, name, ln, (int)st + 1, "expected a size bucket of two digits", NULL);
	e.bucket = (s[st] - '0') * 10 + (s[st + 1] - '0');
	while ((n = word(s, len, &i, &st)) > 0) {
		const char *p = s + st, *eq = memchr(p, '=', (size_t)n);
		if (!eq || !name_ok(p, (int)(eq - p)))
			return bad(err, name, ln, (int)st + 1, "expected PARAM=INTEGER", NULL);
		if (e.np == TUNE_MAX_PARAMS) return bad(err, name, ln, (int)st + 1, "too many parameters in one entry", NULL);
		char num[32];
		size_t nl = (size_t)(p + n - eq - 1);
		if (nl == 0 || nl >= sizeof num) return bad(err, name, ln, (int)(eq - s) + 2, "expected an integer", NULL);
		memcpy(num, eq + 1, nl);
		num[nl] = 0;
		char *end;
		errno = 0;
		long long v = strtoll(num, &end, 10);
		if (*end || errno) return bad(err, name, ln, (int)(eq - s) + 2, "expected an integer", NULL);
		memcpy(e.key[e.np], p, (size_t)(eq - p));
		for (int k = 0; k < e.np; k++)
			if (!strcmp(e.key[k], e.key[e.np])) return bad(err, name, ln, (int)st + 1, "parameter given twice:", e.key[k]);
		e.val[e.np++] = v;
	}
	if (t->n) {
		int c = cmp_entry(&t->e[t->n - 1], &e);
		if (c == 0) return bad(err, name, ln, 1, "a second entry for the same architecture, kind and bucket", NULL);
		if (c > 0) return bad(err, name, ln, 1, "entries out of order (the table is sorted)", NULL);
	}
	snprintf(e.name, sizeof e.name, "%s:%s:%02d", e.arch, e.kind, e.bucket);
	TuneEntry *ne = realloc(t->e, (size_t)(t->n + 1) * sizeof *ne);
	if (!ne) return bad(err, name, ln, 1, "out of memory", NULL);
	t->e = ne;
	t->e[t->n++] = e;
	return 0;
}

int tune_parse(TuneTable *t, const char *name, const char *text, FILE *err)
{
	memset(t, 0, sizeof *t);
	int errors = 0, ln = 0;
	for (const char *s = text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		ln++;
		if (memchr(s, '\r', len) || memchr(s, '\f', len) || memchr(s, '\v', len))
			errors += bad(err, name, ln, 1, "unexpected control character", NULL);
		else if (len == 0 || s[0] == '#')
			;
		else if (s[0] == '@') {
			if (t->tools) errors += bad(err, name, ln, 1, "a second '@' line", NULL);
			else if (!(t->tools = strndup(s + 1 + (len > 1 && s[1] == ' '), len - 1 - (len > 1 && s[1] == ' '))))
				errors++;
		} else
			errors += parse_line(t, name, ln, s, len, err);
		s += len + (nl != NULL);
	}
	return errors;
}

int tune_load(TuneTable *t, const char *path, FILE *err)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (err) fprintf(err, "%s: error: cannot read the tuning table: %s\n", path, strerror(errno));
		return 1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0, r;
	char chunk[4096];
	while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (len + r + 1 > cap) {
			cap = (len + r + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) { free(buf); fclose(f); return 1; }
			buf = nb;
		}
		memcpy(buf + len, chunk, r);
		len += r;
	}
	fclose(f);
	if (!buf) buf = calloc(1, 1);
	if (!buf) return 1;
	buf[len] = 0;
	int e = strlen(buf) != len ? bad(err, path, 1, 1, "a NUL byte in the tuning table", NULL) : tune_parse(t, path, buf, err);
	free(buf);
	for (int i = 0; !e && i < t->n; i++) e += tune_check(&t->e[i], path, err);
	return e;
}

void tune_free(TuneTable *t)
{
	free(t->e);
	free(t->tools);
	memset(t, 0, sizeof *t);
}

const TuneEntry *tune_find(const TuneTable *t, const char *arch, const char *kind, int log2size)
{
	const TuneEntry *last = NULL;
	for (int i = 0; i < t->n; i++) {
		const TuneEntry *e = &t->e[i];
		if (strcmp(e->arch, arch) || strcmp(e->kind, kind)) continue;
		if (e->bucket >= log2size) return e; /* sorted: the smallest that serves */
		last = e;
	}
	return last;
}

long long tune_get(const TuneEntry *e, const char *key, long long dflt)
{
	if (!e) return dflt;
	for (int k = 0; k < e->np; k++)
		if (!strcmp(e->key[k], key)) return e->val[k];
	return dflt;
}

void tune_entry_name(const TuneEntry *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", e ? e->name : "none");
}

/* What a table may set, by kernel mode, and within which range. Rows:
   the vectors of 4 a thread keeps (lanes a row follow at launch,
   fz_row_lanes) and 1024-thread blocks an SM (64 or 32 registers), or
   the registers a thread themselves (regs, 32..64), and whether each path
   is a function of its own (paths, 0..1); points
   that are neither sliced nor split: threads a block and blocks an SM
   (points a thread not: the vector paths are built on 4). block and min_blocks together: at most 2048 threads an SM. */
typedef struct Tunable {
	const char *mode; /* schedule.h's kernel_mode_name (spelled here: the
	                     table reader links alone, tests/unit_tune.c) */
	const char *key;
	size_t off;
	int lo, hi, pow2;
} Tunable;
#define PAR(f) offsetof(KernelParams, f)
static const Tunable tunables[] = {
	{"row", "rcache", PAR(rcache), 1, 8, 0},
	{"row", "min_blocks", PAR(min_blocks), 1, 2, 0},
	{"row", "regs", PAR(regs), 32, 64, 0},
	{"row", "paths", PAR(row_paths), 0, 1, 0},
	{"point", "block", PAR(block), 64, 1024, 1},
	{"point", "min_blocks", PAR(min_blocks), 1, 16, 0},
};
#undef PAR
enum { NTUNABLE = sizeof tunables / sizeof *tunables };

/* the tunable mode of a signature MODE.HASH (its first table row), or NULL */
static const Tunable *sig_mode(const char *kind)
{
	const char *dot = strchr(kind, '.');
	for (int i = 0; dot && i < NTUNABLE; i++)
		if (strlen(tunables[i].mode) == (size_t)(dot - kind) && !strncmp(tunables[i].mode, kind, (size_t)(dot - kind)))
			return &tunables[i];
	return NULL;
}

static const Tunable *tunable(const char *mode, const char *key)
{
	for (int i = 0; i < NTUNABLE; i++)
		if (!strcmp(tunables[i].mode, mode) && !strcmp(tunables[i].key, key)) return &tunables[i];
	return NULL;
}

int tune_check(const TuneEntry *e, const char *path, FILE *err)
{
	const Tunable *m = sig_mode(e->kind);
	if (!m) return bad(err, path, e->line, 1, "not the signature of a tunable kernel (row.HASH or point.HASH, as --emit=schedule prints sig=):", e->kind);
	const char *mode = m->mode;
	long long block = 0, minb = 1;
	for (int j = 0; j < e->np; j++) {
		const Tunable *t = tunable(mode, e->key[j]);
		char msg[96];
		if (!t) {
			snprintf(msg, sizeof msg, "a %s kernel has no tunable parameter", mode);
			return bad(err, path, e->line, 1, msg, e->key[j]);
		}
		const long long v = e->val[j];
		if (v < t->lo || v > t->hi || (t->pow2 && (v & (v - 1)))) {
			snprintf(msg, sizeof msg, "outside %d..%d%s:", t->lo, t->hi, t->pow2 ? ", a power of two" : "");
			return bad(err, path, e->line, 1, msg, e->key[j]);
		}
		if (!strcmp(t->key, "block")) block = v;
		if (!strcmp(t->key, "min_blocks")) minb = v;
	}
	if (block && block * minb > 2048)
		return bad(err, path, e->line, 1, "block times min_blocks is over 2048 threads an SM", NULL);
	return 0;
}

void tune_apply(const TuneEntry *e, KernelParams *p)
{
	const Tunable *m = sig_mode(e->kind);
	for (int j = 0; m && j < e->np; j++) {
		const Tunable *t = tunable(m->mode, e->key[j]);
		if (t) *(int *)((char *)p + t->off) = (int)e->val[j];
	}
}
