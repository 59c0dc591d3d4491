/* Manifests made by someone who re-hashes what they edit: every limit,
 * every agreement check, links, FIFOs, huge files, malformed tokens. Each
 * must be refused with a message naming the check (or, for the harmless
 * ones, accepted), quickly, and without touching memory it should not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "sha256.h"
#include "testutil.h"

static const char *M = "kl_divergence.manifest";

/* a copy of kl_divergence with `from` replaced by `to` in its manifest, re-hashed */
static int edited(const char *casename, const char *from, const char *to, char *err)
{
	char p[4096];
	const char *dir = copy_artifact("kl_divergence", casename);
	edit(path2(p, dir, M), from, to, 1);
	return verify(dir, M, err);
}

/* a manifest with `extra` inserted before its first `before` line, re-hashed */

static char *repeat(const char *line, int times)
{
	size_t l = strlen(line);
	char *s = malloc(l * (size_t)times + 1);
	for (int i = 0; i < times; i++) memcpy(s + l * (size_t)i, line, l);
	s[l * (size_t)times] = 0;
	return s;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_limits(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096], line[64];
	/* 65 size lines, hashes recomputed: refused at the 33rd (fuserun's arrays are sized by the limit) */
	const char *dir = copy_artifact("kl_divergence", "many_sizes");
	char *sizes = malloc(70 * 16);
	sizes[0] = 0;
	for (int i = 0; i < 65; i++) snprintf(line, sizeof line, "size S%d\n", i), strcat(sizes, line);
	insert_before(path2(p, dir, M), "size N\n", sizes);
	free(sizes);
	expect("refuses more than FZ_MAX_SIZES sizes, re-hashed", verify(dir, M, err), FZ_ERR_FORMAT, err, "more than 32 sizes", NULL);

	/* 100000 kernel lines: refused at the limit, quickly */
	dir = copy_artifact("kl_divergence", "many_kernels");
	char *k = malloc(100000 * 48 + 1), *q = k;
	for (int i = 0; i < 100000; i++) q += sprintf(q, "kernel fused kx%d point block=256\n", i);
	insert_before(path2(p, dir, M), "plan ", k);
	free(k);
	double t0 = seconds();
	expect("refuses more than FZ_MAX_KERNELS kernels", verify(dir, M, err), FZ_ERR_FORMAT, err, "more than 256 kernels", NULL);
	/* 60000 plan lines are allowed: verification is linear in them */
	dir = copy_artifact("kl_divergence", "many_plan_lines");
	char *plan = repeat("plan a line of the plan, as --explain writes it\n", 60000);
	insert_before(path2(p, dir, M), "plan ", plan);
	free(plan);
	expect("accepts 60000 plan lines", verify(dir, M, err), FZ_OK, err, NULL);
	double dt = seconds() - t0;
	snprintf(line, sizeof line, "%.2f s", dt);
	check(dt < 5, "100000 kernel lines and 60000 plan lines verify in linear time", line);

	/* a manifest over FZ_MAX_MANIFEST_BYTES is refused before it is read */
	dir = copy_artifact("kl_divergence", "huge_manifest");
	char *big = repeat("plan ................................................................\n", (4 << 20) / 70 + 10);
	insert_before(path2(p, dir, M), "plan ", big);
	free(big);
	expect("refuses a manifest larger than FZ_MAX_MANIFEST_BYTES", verify(dir, M, err), FZ_ERR_FORMAT, err, "larger than", NULL);

	/* one line longer than FZ_MAX_LINE */
	dir = copy_artifact("kl_divergence", "long_line");
	char *ll = repeat("x", 5000);
	char *ln = malloc(5100);
	snprintf(ln, 5100, "plan %s\n", ll);
	insert_before(path2(p, dir, M), "plan ", ln);
	free(ll), free(ln);
	expect("refuses a line longer than FZ_MAX_LINE", verify(dir, M, err), FZ_ERR_FORMAT, err, "longer than 4096", NULL);
}

static void test_agreement(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	/* the edits, each re-hashed: the layout line no longer matches */
	expect("refuses a shape changed from N to 1, re-hashed", edited("shape", "param p input f32 N", "param p input f32 1", err),
	       FZ_ERR_LAYOUT, err, "layout", "edited", NULL);
	expect("refuses an input turned into an output, re-hashed", edited("role", "param p input", "param p output", err),
	       FZ_ERR_LAYOUT, err, "layout", NULL);
	expect("refuses a manifest without outputs", edited("no_output", "output f32 - by=", "input f32 - by=", err), FZ_ERR_FORMAT,
	       err, "no output parameter", NULL);
	/* and with the layout line recomputed too, the header disagrees */
	const char *dir = copy_artifact("kl_divergence", "relayout");
	edit(path2(p, dir, M), "param p input f32 N", "param p input f32 1", 1);
	relayout(p);
	expect("refuses a re-hashed, re-fingerprinted edit: the header disagrees", verify(dir, M, err), FZ_ERR_LAYOUT, err,
	       "kl_divergence.h", "disagree", NULL);
	dir = copy_artifact("kl_divergence", "reorder");
	manifest_line(path2(p, dir, M), "param q ", err, sizeof err);
	char q[FZ_ERRMSG_SIZE + 2];
	snprintf(q, sizeof q, "%s\n", err);
	edit(p, q, "", 0);
	insert_before(p, "temp ", q);
	relayout(p);
	expect("refuses parameters reordered (re-hashed, re-fingerprinted)", verify(dir, M, err), FZ_ERR_LAYOUT, err, "disagree", NULL);
	/* the fingerprint the test computes is the runtime's: a mere re-layout of an unedited copy passes */
	dir = copy_artifact("kl_divergence", "relayout_clean");
	relayout(path2(p, dir, M));
	expect("the layout fingerprint is the documented one", verify(dir, M, err), FZ_OK, err, NULL);

	expect("refuses a manifest without a layout line", edited("no_layout", "layout ", "layouts ", err), FZ_ERR_FORMAT, err,
	       "no layout line", NULL);
	expect("refuses a fusion name that is no identifier", edited("bad_fusion", "fusion kl_divergence", "fusion kl-divergence", err),
	       FZ_ERR_FORMAT, err, "not a C identifier", NULL);
	expect("refuses a target file not named for its target",
	       edited("target_name", "target sm_80 kl_divergence.sm_80.ptx", "target sm_80 other.sm_80.ptx", err), FZ_ERR_FORMAT,
	       err, "not kl_divergence.sm_80.ptx", NULL);
	expect("refuses a target the runtime does not know", edited("sm_75", "target sm_80 ", "target sm_75 ", err), FZ_ERR_FORMAT,
	       err, "sm_75", "sm_80 sm_90 sm_90a", NULL);
	expect("refuses a manifest without its header", edited("no_header", "file kl_divergence.h ", "file kl_divergence.hh ", err),
	       FZ_ERR_FORMAT, err, "no file line for kl_divergence.h", NULL);
	expect("refuses a CR in a line", edited("cr", "spec kl_divergence.fuse", "spec kl_divergence.fuse\r", err), FZ_ERR_FORMAT, err,
	       "control character", NULL);
	expect("refuses a dimension of 0", edited("dim0", "param p input f32 N", "param p input f32 0", err), FZ_ERR_FORMAT, err,
	       "dimension '0'", NULL);
	expect("refuses a signed dimension", edited("dim_plus", "param p input f32 N", "param p input f32 +5", err), FZ_ERR_FORMAT,
	       err, "dimension '+5'", NULL);
	expect("refuses a 20-digit dimension", edited("dim_big", "param p input f32 N", "param p input f32 99999999999999999999", err),
	       FZ_ERR_FORMAT, err, "dimension", NULL);
	expect("refuses a hexadecimal block", edited("block_hex", "block=256", "block=0x100", err), FZ_ERR_FORMAT, err, "block=0x100",
	       NULL);
	expect("refuses a block of 1025", edited("block_big", "block=256", "block=1025", err), FZ_ERR_FORMAT, err, "block=1025", NULL);
	expect("refuses an inexact line naming no output", edited("inexact_in", "layout ", "inexact q tf32\nlayout ", err), FZ_ERR_FORMAT, err,
	       "inexact q: no output", NULL);
	expect("refuses an inexact line of an unknown kind", edited("inexact_kind", "layout ", "inexact q fp16\nlayout ", err), FZ_ERR_FORMAT,
	       err, "malformed inexact line (inexact NAME tf32, or fp8)", NULL);
	expect("refuses an element type of another fp8", edited("fp8_e8m0", "param p input f32 N", "param p input f8e8m0 N", err),
	       FZ_ERR_FORMAT, err, "unknown element type 'f8e8m0'", NULL);
	{ /* f8e5m2 is one (issue 25): the fp8 spec's B made e5m2, its fingerprints agreeing, is a tile kernel's 1-byte operand */
		char mp[4096];
		const char *d5 = copy_artifact("matmul_bias_relu_fp8", "fp8_e5m2_ok");
		edit(path2(mp, d5, "matmul_bias_relu_fp8.manifest"), "param B input f8e4m3 N,K", "param B input f8e5m2 N,K", 1);
		refingerprint(d5, "matmul_bias_relu_fp8");
		expect("accepts an f8e5m2 tile operand", verify(d5, "matmul_bias_relu_fp8.manifest", err), FZ_OK, err, "", NULL);
	}
	/* a tile kernel's maps' box rows (tma-rows=A,B, issue 25): only on a tile kernel */
	expect("refuses tma-rows on a kernel that is not a tile kernel", edited("tma_rows", "block=256", "block=256 tma-rows=64,64", err),
	       FZ_ERR_FORMAT, err, "tile kernels: tma-rows=A,B", NULL);
	expect("refuses an unknown attribute", edited("attr", " by=reduce\n", " by=reduce color=red\n", err), FZ_ERR_FORMAT, err,
	       "color=red", NULL);
}

/* kl_divergence's p as fusec writes it (specs/kl_divergence.fuse: p in (0, 1]) */
#define P_LINE "param p input f32 N by=input domain=9.9999999999999995e-07..1.0"
#define P_BARE "param p input f32 N by=input"

static void test_domains(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	const char *dir = copy_artifact("kl_divergence", "domain");
	edit(path2(p, dir, M), P_LINE, P_BARE " domain=0.05..1e1", 1);
	fz_artifact_info info;
	int rc = fz_artifact_verify(p, &info, err);
	if (expect("accepts domain=0.05..1e1 (the layout is unchanged)", rc, FZ_OK, err, NULL)) {
		int ok = 0;
		for (int i = 0; i < info.ntensors; i++)
			if (!strcmp(info.tensors[i].name, "p"))
				ok = info.tensors[i].has_domain && info.tensors[i].domain_lo == 0.05 && info.tensors[i].domain_hi == 10;
		check(ok, "the domain is in the tensor's info", NULL);
		fz_artifact_info_free(&info);
	}
	static const char *const badd[] = {"domain=1..0",    "domain=inf..1", "domain=0x1p3..4", "domain=1e999..2", "domain=1..",
	                                   "domain=a..b",    "domain=1.0f..2", "domain=1...2",   "domain=..1",     "domain=-.5..",
	                                   "domain=nan..1",  "domain=1,2",    "domain=1..2 domain=1..2"};
	for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++) {
		char to[128], name[128];
		snprintf(to, sizeof to, P_BARE " %s", badd[i]);
		snprintf(name, sizeof name, "refuses a malformed %s", badd[i]);
		int r = edited("bad_domain", P_LINE, to, err);
		expect(name, r, FZ_ERR_FORMAT, err, "param", NULL);
	}
	expect("accepts a negative domain", edited("neg_domain", P_LINE, P_BARE " domain=-2.5..-.5", err),
	       FZ_OK, err, NULL);
	expect("refuses a domain on a temp", edited("temp_domain", " by=map\n", " by=map domain=0..1\n", err), FZ_ERR_FORMAT, err,
	       "domain", NULL);
}

static void test_files(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	/* a listed file that is a link to a good copy: refused, not followed */
	copy_artifact("kl_divergence", "link_target");
	const char *dir = copy_artifact("kl_divergence", "link");
	remove(path2(p, dir, "kl_divergence.cu"));
	check(symlink("../link_target/kl_divergence.cu", p) == 0, "made a symbolic link", p);
	expect("refuses a listed file that is a symbolic link", verify(dir, M, err), FZ_ERR_IO, err, "symbolic link", NULL);
	/* a FIFO: refused at once, never waited on */
	dir = copy_artifact("kl_divergence", "fifo");
	remove(path2(p, dir, "kl_divergence_ref.c"));
	check(mkfifo(p, 0600) == 0, "made a FIFO", p);
	expect("refuses a listed file that is a FIFO, without blocking", verify(dir, M, err), FZ_ERR_IO, err, "not a regular file", NULL);
	remove(path2(p, dir, M));
	check(mkfifo(p, 0600) == 0, "made a FIFO manifest", p);
	expect("refuses a manifest that is a FIFO, without blocking", verify(dir, M, err), FZ_ERR_IO, err, "not a regular file", NULL);
	expect("refuses a directory as the manifest", verify(gen_dir, "", err), FZ_ERR_IO, err, "not a regular file", NULL);
}

/* A manifest edited, re-laid-out and re-hashed with the header's two
   layout lines to match (the copyable string), and hfrom made hto
   in the header when given: the header and
   reference fuserun compiles are refused where their structs do not hold
   each param where the manifest puts it (before, validate sized w by v's N
   and the reference read S elements of it: a heap overflow) */
static void spec_refused(const char *casename, const char *line, const char *to, const char *hfrom, const char *hto,
                         const char *want)
{
	char err[FZ_ERRMSG_SIZE], p[4096], l[FZ_ERRMSG_SIZE + 2], name[200];
	const char *dir = copy_artifact("spike_burst", casename);
	if (hfrom) edit(path2(p, dir, "spike_burst.h"), hfrom, hto, 0); /* the header made to agree too */
	manifest_line(path2(p, dir, "spike_burst.manifest"), line, err, sizeof err);
	snprintf(l, sizeof l, "%s\n", err);
	if (to) edit(p, err, to, 1); /* changed in place */
	else edit(p, l, "", 0), insert_before(p, "param w ", l); /* moved before w */
	refingerprint(dir, "spike_burst");
	fz_artifact_info info;
	snprintf(name, sizeof name, "%s: the edited artifact verifies (the layout lines agree)", casename);
	if (!check(!fz_artifact_verify(p, &info, err), name, err)) return;
	fr_spec s;
	const int rc = fr_spec_load(&info, &s, err);
	snprintf(name, sizeof name, "%s: fuserun refuses the header and reference for it", casename);
	check(rc && strstr(err, "header and manifest disagree") && strstr(err, want), name, err);
	if (!rc) fr_spec_unload(&s);
	fz_artifact_info_free(&info);
}

static void test_fields(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	/* the unedited artifact loads: the table agrees with every shipped manifest */
	const char *dir = copy_artifact("spike_burst", "fields_clean");
	fz_artifact_info info;
	fr_spec s;
	if (check(!fz_artifact_verify(path2(p, dir, "spike_burst.manifest"), &info, err), "fields: spike_burst verifies", err)) {
		int rc = fr_spec_load(&info, &s, err);
		check(!rc, "fields: spike_burst's header and reference load", err);
		if (!rc) fr_spec_unload(&s);
		fz_artifact_info_free(&info);
	}
	spec_refused("fields_order", "param v ", NULL, NULL, NULL, "param v");
	spec_refused("fields_type", "param col ", "param col input i64 S by=input", NULL, NULL, "param col");
	spec_refused("fields_role", "param w ", "param w output f32 S by=map", NULL, NULL, "param w");
	/* a changed shape (w: S to N; validate would size w by N and the
	   reference read S elements of it): the reference's own table says S,
	   whatever the header's says */
	spec_refused("shape", "param w ", "param w input f32 N by=input", NULL, NULL, "param w with shape S, the manifest's is N");
	spec_refused("shape_header_too", "param w ", "param w input f32 N by=input", "t_w, \"S\")", "t_w, \"N\")",
	             "param w with shape S, the manifest's is N");
	spec_refused("shape_temp", "temp u ", "temp u temp f32 S by=map", NULL, NULL, "temp u with shape N, the manifest's is S");
}

void test_hostile(void)
{
	test_fields();
	test_limits();
	test_agreement();
	test_domains();
	test_files();
}
