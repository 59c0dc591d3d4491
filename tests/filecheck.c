/* filecheck: a tiny FileCheck. Checks text read from standard input against
 * the directives written in a check file.
 *
 *   filecheck [--prefix=P] [--input=FILE] CHECKFILE
 *
 * Directives are found anywhere on a line of CHECKFILE (so any comment
 * syntax works: "# CHECK: ..."); P defaults to CHECK:
 *
 *   P: text        text appears on a line after the previous match
 *   P-NEXT: text   text appears on the line right after the previous match
 *   P-SAME: text   text appears on the line of the previous match too
 *   P-NOT: text    text appears on no line between the previous match and
 *                  the next one (the end of the input if none follows)
 *   P-EMPTY:       the line right after the previous match is empty
 *
 * Matching is by substring, case-sensitive, line by line; a match consumes
 * its line. The pattern is the rest of the line after the colon, without
 * leading and trailing blanks. A pattern may start with {{^}}: the match must
 * then start the line, and every blank after {{^}} counts (this is how a
 * caret line is checked exactly: "CHECK-NEXT: {{^}}      ^"). A pattern may
 * end with {{$}}: the match must end the line.
 *
 * Exit status: 0 all directives hold, 1 a directive failed (it is printed
 * with its line number and the region of input searched), 2 usage or I/O
 * error, or a check file with no directive (a check that checks nothing is
 * a mistake). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D_CHECK, D_NEXT, D_NOT, D_EMPTY, D_SAME, D_NKINDS };
static const char *const dname[] = {"", "-NEXT", "-NOT", "-EMPTY", "-SAME"};

typedef struct {
	int kind, line;   /* line in the check file */
	char *pat;        /* without anchors */
	int bol, eol;     /* {{^}}, {{$}} */
} Directive;

typedef struct {
	char **line;
	size_t *len;
	int n;
} Lines;

static const char *prefix = "CHECK";
static const char *checkpath;

static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	if (!b) return NULL;
	for (;;) {
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) { free(b); return NULL; }
			b = nb;
		}
		size_t got = fread(b + n, 1, cap - n, f);
		if (!got) break;
		n += got;
	}
	if (ferror(f)) { free(b); return NULL; }
	*len = n;
	return b;
}

/* Splits in place; a final line without '\n' counts, a trailing '\n' does
 * not start an extra empty line. Lines may contain NUL bytes. */
static void split(char *text, size_t len, Lines *L)
{
	int cap = 64;
	L->line = malloc((size_t)cap * sizeof *L->line);
	L->len = malloc((size_t)cap * sizeof *L->len);
	L->n = 0;
	size_t i = 0;
	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n') e++;
		if (L->n == cap) {
			cap *= 2;
			L->line = realloc(L->line, (size_t)cap * sizeof *L->line);
			L->len = realloc(L->len, (size_t)cap * sizeof *L->len);
		}
		if (!L->line || !L->len) { fputs("filecheck: out of memory\n", stderr); exit(2); }
		L->line[L->n] = text + i;
		L->len[L->n] = e - i;
		L->n++;
		i = e + 1;
	}
}

static int is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Finds a directive on one line of the check file. */
static int parse_directive(const char *s, size_t len, int lineno, Directive *d)
{
	size_t pl = strlen(prefix);
	for (size_t i = 0; i + pl <= len; i++) {
		if (memcmp(s + i, prefix, pl) || (i > 0 && is_word((unsigned char)s[i - 1]))) continue;
		size_t j = i + pl;
		int kind = -1;
		for (int k = 0; k < D_NKINDS; k++) {
			size_t dl = strlen(dname[k]);
			if (j + dl < len && !memcmp(s + j, dname[k], dl) && s[j + dl] == ':') {
				kind = k;
				j += dl + 1;
				break;
			}
		}
		if (kind < 0) continue;
		while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
		size_t e = len;
		while (e > j && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
		d->kind = kind, d->line = lineno, d->bol = d->eol = 0;
		if (e - j >= 5 && !memcmp(s + j, "{{^}}", 5)) d->bol = 1, j += 5;
		if (e - j >= 5 && !memcmp(s + e - 5, "{{$}}", 5)) d->eol = 1, e -= 5;
		d->pat = malloc(e - j + 1);
		if (!d->pat) exit(2);
		memcpy(d->pat, s + j, e - j);
		d->pat[e - j] = 0;
		return 1;
	}
	return 0;
}

static int line_matches(const Lines *in, int i, const Directive *d)
{
	const char *s = in->line[i];
	size_t n = in->len[i], pl = strlen(d->pat);
	if (pl > n) return 0;
	for (size_t at = 0; at + pl <= n; at++) {
		if (d->bol && at > 0) break;
		if (d->eol && at + pl != n) continue;
		if (!memcmp(s + at, d->pat, pl)) return 1;
	}
	return 0;
}

static void show_directive(const Directive *d, const char *what)
{
	fprintf(stderr, "%s:%d: error: %s%s: %s%s%s%s\n", checkpath, d->line, prefix, dname[d->kind],
	        d->bol ? "{{^}}" : "", d->pat, d->eol ? "{{$}}" : "", what);
}

/* Prints input lines [from, to) (0-based), numbered from 1, at most 40. */
static void show_region(const Lines *in, int from, int to, int mark)
{
	if (from >= to) {
		fprintf(stderr, "  (searched region is empty: %s)\n",
		        from >= in->n ? "end of input" : "no line left before the next match");
		return;
	}
	fprintf(stderr, "  input lines %d-%d searched:\n", from + 1, to);
	int shown = 0;
	for (int i = from; i < to; i++) {
		if (shown == 40) {
			fprintf(stderr, "  ... (%d more lines)\n", to - i);
			break;
		}
		fprintf(stderr, "%c %4d| ", i == mark ? '>' : ' ', i + 1);
		for (size_t k = 0; k < in->len[i]; k++) {
			unsigned char c = (unsigned char)in->line[i][k];
			fputc(c == '\t' || (c >= 32 && c < 127) ? c : '?', stderr);
		}
		fputc('\n', stderr);
		shown++;
	}
}

/* Checks the NOT directives nots[0..nn) over input lines [from, to). */
static int check_nots(const Lines *in, Directive **nots, int nn, int from, int to)
{
	for (int k = 0; k < nn; k++)
		for (int i = from; i < to; i++)
			if (line_matches(in, i, nots[k])) {
				show_directive(nots[k], "");
				fprintf(stderr, "  found on input line %d, which it must not be\n", i + 1);
				show_region(in, from, to, i);
				return 1;
			}
	return 0;
}

static int run(int argc, char **argv);

static char *ctext, *itext;
static Lines cl, in;
static Directive *d;
static Directive **nots;
static int nd;

int main(int argc, char **argv)
{
	int rc = run(argc, argv);
	for (int k = 0; k < nd; k++) free(d[k].pat);
	free(d), free(nots), free(ctext), free(itext);
	free(cl.line), free(cl.len), free(in.line), free(in.len);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *inpath = NULL;
	checkpath = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--prefix=", 9) && argv[i][9]) prefix = argv[i] + 9;
		else if (!strncmp(argv[i], "--input=", 8)) inpath = argv[i] + 8;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "filecheck: unknown option '%s'\n", argv[i]);
			return 2;
		} else if (!checkpath) checkpath = argv[i];
		else {
			fputs("usage: filecheck [--prefix=P] [--input=FILE] CHECKFILE < input\n", stderr);
			return 2;
		}
	}
	if (!checkpath) {
		fputs("usage: filecheck [--prefix=P] [--input=FILE] CHECKFILE < input\n", stderr);
		return 2;
	}
	FILE *cf = fopen(checkpath, "rb");
	FILE *inf = inpath ? fopen(inpath, "rb") : stdin;
	if (!cf || !inf) {
		fprintf(stderr, "filecheck: cannot open %s\n", !cf ? checkpath : inpath);
		return 2;
	}
	size_t clen = 0, ilen = 0;
	ctext = slurp(cf, &clen), itext = slurp(inf, &ilen);
	fclose(cf);
	if (inpath) fclose(inf);
	if (!ctext || !itext) {
		fputs("filecheck: cannot read input\n", stderr);
		return 2;
	}
	split(ctext, clen, &cl);
	split(itext, ilen, &in);

	d = calloc((size_t)cl.n + 1, sizeof *d);
	if (!d) return 2;
	for (int i = 0; i < cl.n; i++)
		if (parse_directive(cl.line[i], cl.len[i], i + 1, &d[nd])) nd++;
	if (!nd) {
		fprintf(stderr, "%s: error: no %s: directive found\n", checkpath, prefix);
		return 2;
	}
	for (int k = 0; k < nd; k++)
		if (d[k].kind != D_EMPTY && !d[k].pat[0] && !d[k].bol && !d[k].eol) {
			show_directive(&d[k], "");
			fprintf(stderr, "  empty pattern (use %s-EMPTY: for an empty line)\n", prefix);
			return 2;
		}

	nots = calloc((size_t)cl.n + 1, sizeof *nots);
	if (!nots) return 2;
	int nn = 0;
	int pos = 0; /* first line not yet consumed */
	for (int k = 0; k < nd; k++) {
		Directive *x = &d[k];
		if (x->kind == D_NOT) {
			nots[nn++] = x;
			continue;
		}
		int found = -1;
		if (x->kind == D_CHECK) {
			for (int i = pos; i < in.n && found < 0; i++)
				if (line_matches(&in, i, x)) found = i;
			if (found < 0) {
				show_directive(x, "");
				fputs("  not found\n", stderr);
				show_region(&in, pos, in.n, -1);
				return 1;
			}
		} else if (x->kind == D_SAME) {
			if (pos == 0 || !line_matches(&in, pos - 1, x)) {
				show_directive(x, "");
				if (pos == 0) fputs("  no previous match to be on the same line as\n", stderr);
				else fprintf(stderr, "  not on input line %d, the line of the previous match\n", pos);
				show_region(&in, pos > 0 ? pos - 1 : 0, pos, pos - 1);
				return 1;
			}
			if (nn) {
				show_directive(nots[0], "");
				fprintf(stderr, "  a %s-NOT: directly before a %s-SAME: has nothing to check\n", prefix, prefix);
				return 2;
			}
			continue;
		} else {
			int ok = pos < in.n && (x->kind == D_EMPTY ? in.len[pos] == 0 : line_matches(&in, pos, x));
			if (!ok) {
				show_directive(x, "");
				if (pos >= in.n) fprintf(stderr, "  expected on input line %d, but the input ended\n", pos + 1);
				else fprintf(stderr, "  expected on input line %d, which is the line after the previous match\n", pos + 1);
				show_region(&in, pos > 0 ? pos - 1 : 0, pos < in.n ? pos + 1 : in.n, pos);
				return 1;
			}
			found = pos;
		}
		if (check_nots(&in, nots, nn, pos, found)) return 1;
		nn = 0;
		pos = found + 1;
	}
	if (check_nots(&in, nots, nn, pos, in.n)) return 1;
	return 0;
}
