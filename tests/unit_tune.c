/* Unit tests of the tuning table reader (fusec/plan/tune.c): the committed
 * table parses and checks; a table answers look-ups by architecture,
 * signature and bucket, and its entries set their kernels' parameters;
 * every malformed line and every parameter a kernel may not take is an
 * error at its line and column. Prints "tune: N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/schedule.h"
#include "plan/tune.h"

static int npass, nfail;

static void expect(int ok, const char *name, const char *detail)
{
	if (ok) npass++;
	else nfail++, printf("FAIL tune/%s\n    %s\n", name, detail ? detail : "");
}

/* parse text; the diagnostics must equal want ("" for none) */
static void bad(const char *name, const char *text, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	TuneTable t;
	int n = tune_parse(&t, "t.txt", text, err);
	fclose(err);
	expect((n > 0) == (want[0] != 0) && !strcmp(buf, want), name, buf);
	tune_free(&t);
	free(buf);
}

/* parse and check text as tune_load does; the diagnostics must equal want */
static void checked(const char *name, const char *text, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	TuneTable t;
	int n = tune_parse(&t, "t.txt", text, err);
	for (int i = 0; !n && i < t.n; i++) n += tune_check(&t.e[i], "t.txt", err);
	fclose(err);
	expect(n > 0 && !strcmp(buf, want), name, buf);
	tune_free(&t);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tune/table.txt";
	TuneTable t;
	int n = tune_load(&t, path, stdout);
	expect(n == 0, "committed table parses, every entry checked", path);
	expect(t.n == 0 || (t.tools && strstr(t.tools, "device=")), "a committed table with entries names its tools", t.tools);
	tune_free(&t);

	/* look-ups: by architecture and signature, the smallest bucket that
	   serves, else the largest */
	const char *text = "@ device=x\nsm_90 point.0123456789ab 20 block=512\nsm_90 row.0123456789ab 05 rcache=2\n"
	                   "sm_90 row.0123456789ab 13 rcache=4 min_blocks=1\nsm_90 row.0123456789ab 30 rcache=8\n";
	char *ebuf = NULL;
	size_t elen = 0;
	FILE *eout = open_memstream(&ebuf, &elen);
	n = tune_parse(&t, "t.txt", text, eout);
	for (int i = 0; !n && i < t.n; i++) n += tune_check(&t.e[i], "t.txt", eout);
	fclose(eout);
	expect(n == 0 && t.n == 4, "a table of signatures parses and checks", ebuf);
	free(ebuf);
	const TuneEntry *e = tune_find(&t, "sm_90", "row.0123456789ab", 5);
	expect(e && e->bucket == 5 && tune_get(e, "rcache", 0) == 2, "row bucket 5", NULL);
	e = tune_find(&t, "sm_90", "row.0123456789ab", 0);
	expect(e && e->bucket == 5, "a size under the first bucket takes the first", NULL);
	e = tune_find(&t, "sm_90", "row.0123456789ab", 99);
	expect(e && e->bucket == 30 && tune_get(e, "rcache", 0) == 8, "the largest bucket, as fusec asks", NULL);
	expect(tune_find(&t, "sm_90", "row.000000000000", 5) == NULL, "an unknown signature has no entry", NULL);
	expect(tune_find(&t, "sm_80", "row.0123456789ab", 5) == NULL, "an unknown architecture has no entry", NULL);
	expect(tune_get(NULL, "rcache", 7) == 7 && tune_get(tune_find(&t, "sm_90", "point.0123456789ab", 20), "nosuch", -1) == -1,
	       "defaults for a missing entry or parameter", NULL);
	char nm[96];
	tune_entry_name(tune_find(&t, "sm_90", "row.0123456789ab", 13), nm, sizeof nm);
	expect(!strcmp(nm, "sm_90:row.0123456789ab:13"), "entry name as the manifest records it", nm);
	KernelParams par = {.block = 256, .min_blocks = 6, .rcache = 0};
	tune_apply(tune_find(&t, "sm_90", "point.0123456789ab", 20), &par);
	expect(par.block == 512 && par.min_blocks == 6 && par.rcache == 0, "an entry sets its parameters and no others", NULL);
	tune_apply(tune_find(&t, "sm_90", "row.0123456789ab", 13), &par);
	expect(par.rcache == 4 && par.min_blocks == 1 && par.block == 512, "a row entry sets rcache and min_blocks", NULL);
	tune_free(&t);

	/* what a table may not say, each at its line */
	checked("a kind that is no signature", "sm_90 row 05 rcache=2\n", "t.txt:1:1: error: not the signature of a tunable kernel (row.HASH or point.HASH, as --emit=schedule prints sig=): 'row'\n");
	checked("a mode nobody tunes", "sm_90 matmul.0123456789ab 05 block=2\n", "t.txt:1:1: error: not the signature of a tunable kernel (row.HASH or point.HASH, as --emit=schedule prints sig=): 'matmul.0123456789ab'\n");
	checked("a parameter of another mode", "sm_90 row.0123456789ab 05 block=256\n", "t.txt:1:1: error: a row kernel has no tunable parameter 'block'\n");
	checked("out of range", "sm_90 row.0123456789ab 05 rcache=9\n", "t.txt:1:1: error: outside 1..8: 'rcache'\n");
	checked("zero", "sm_90 row.0123456789ab 05 rcache=0\n", "t.txt:1:1: error: outside 1..8: 'rcache'\n");
	checked("not a power of two", "sm_90 point.0123456789ab 05 block=384\n", "t.txt:1:1: error: outside 64..1024, a power of two: 'block'\n");
	checked("too many threads an SM", "sm_90 point.0123456789ab 05 block=1024 min_blocks=4\n", "t.txt:1:1: error: block times min_blocks is over 2048 threads an SM\n");

	bad("empty and comments", "# x\n\n@ a=1\nsm_90 row 01 a=1\n", "");
	bad("no bucket", "sm_90 row\n", "t.txt:1:10: error: expected a size bucket of two digits\n");
	bad("one-digit bucket", "sm_90 row 5 a=1\n", "t.txt:1:11: error: expected a size bucket of two digits\n");
	bad("not an integer", "sm_90 row 05 a=x\n", "t.txt:1:16: error: expected an integer\n");
	bad("overflow", "sm_90 row 05 a=99999999999999999999\n", "t.txt:1:16: error: expected an integer\n");
	bad("no value", "sm_90 row 05 a=\n", "t.txt:1:16: error: expected an integer\n");
	bad("no equals", "sm_90 row 05 lanes\n", "t.txt:1:14: error: expected PARAM=INTEGER\n");
	bad("bad arch", "sm-90 row 05\n", "t.txt:1:1: error: expected an architecture name\n");
	bad("twice", "sm_90 row 05 a=1 a=2\n", "t.txt:1:18: error: parameter given twice: 'a'\n");
	bad("unsorted", "sm_90 row 06\nsm_90 row 05\n", "t.txt:2:1: error: entries out of order (the table is sorted)\n");
	bad("duplicate", "sm_90 row 05\nsm_90 row 05\n", "t.txt:2:1: error: a second entry for the same architecture, kind and bucket\n");
	bad("two tool lines", "@ a\n@ b\n", "t.txt:2:1: error: a second '@' line\n");
	bad("carriage return", "sm_90 row 05\r\n", "t.txt:1:1: error: unexpected control character\n");
	bad("too many", "sm_90 row 05 a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1\n", "t.txt:1:46: error: too many parameters in one entry\n");
	bad("several errors", "x\nsm_90 row 5\n", "t.txt:1:2: error: expected a kernel kind\nt.txt:2:11: error: expected a size bucket of two digits\n");
	TuneTable m;
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	expect(tune_load(&m, "tests/no/such/table.txt", err) == 1, "a missing file is an error", NULL);
	fclose(err);
	expect(strstr(buf, "tests/no/such/table.txt: error: cannot read the tuning table") != NULL, "missing file message", buf);
	free(buf);
	tune_free(&m);
	printf("tune: %d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
