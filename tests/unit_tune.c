/* Unit tests of the tuning table reader (fusec/plan/tune.c): the committed
 * table parses and answers look-ups; every malformed line is an error at
 * its line and column. Prints "tune: N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tune/table.txt";
	TuneTable t;
	int n = tune_load(&t, path, stdout);
	expect(n == 0 && t.n > 0, "committed table parses", path);
	expect(t.tools && strstr(t.tools, "device="), "committed table names its tools", t.tools);
	const TuneEntry *e = tune_find(&t, "sm_90", "row", 5);
	expect(e && e->bucket == 5 && tune_get(e, "lanes", 0) == 32, "row bucket 5: a warp a row", NULL);
	e = tune_find(&t, "sm_90", "row", 0);
	expect(e && e->bucket == 3, "a row narrower than the first bucket takes the first", NULL);
	e = tune_find(&t, "sm_90", "row", 40);
	expect(e && e->bucket == 30 && tune_get(e, "online", 0) == 1, "a row wider than every bucket takes the last", NULL);
	expect(tune_find(&t, "sm_90", "nosuchkind", 5) == NULL, "an unknown kind has no entry", NULL);
	expect(tune_find(&t, "sm_12", "row", 5) == NULL, "an unknown architecture has no entry", NULL);
	expect(tune_get(NULL, "lanes", 7) == 7 && tune_get(tune_find(&t, "sm_90", "map", 20), "nosuch", -1) == -1,
	       "defaults for a missing entry or parameter", NULL);
	char nm[64];
	tune_entry_name(tune_find(&t, "sm_90", "row", 5), nm, sizeof nm);
	expect(!strcmp(nm, "sm_90 row 05"), "entry name as the manifest records it", nm);
	tune_free(&t);

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
