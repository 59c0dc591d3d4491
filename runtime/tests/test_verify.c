/* Artifact verification: every generated artifact passes; damaged,
 * edited, incomplete and incompatible copies are refused, saying why. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- verification ---- */

void test_generated(void)
{
	DIR *d = opendir(gen_dir);
	int n = 0;
	char err[FZ_ERRMSG_SIZE], name[600], p[4096];
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 10 || strcmp(e->d_name + l - 9, ".manifest")) continue;
		n++;
		fz_artifact_info info;
		int rc = fz_artifact_verify(path2(p, gen_dir, e->d_name), &info, err);
		snprintf(name, sizeof name, "verify %s", e->d_name);
		if (!expect(name, rc, FZ_OK, err, NULL)) continue;
		int has80 = 0, has90 = 0, fused = 0, unfused = 0;
		for (int i = 0; i < info.ntargets; i++) has80 |= info.targets[i].sm == 80, has90 |= info.targets[i].sm == 90;
		for (int i = 0; i < info.nkernels; i++) fused += info.kernels[i].fused, unfused += !info.kernels[i].fused;
		snprintf(err, sizeof err, "%.*s", (int)(l - 9), e->d_name);
		snprintf(name, sizeof name, "contents of %s", e->d_name);
		check(!strcmp(info.fusion, err) && has80 && has90 && fused && unfused && info.nsizes > 0 &&
		          info.args_size == 8 * (size_t)(info.ntensors + info.nsizes + 2) && info.nfiles == 3,
		      name, "fusion name, sm_80 and sm_90 targets, both variants, sizes, args size, three files");
		fz_artifact_info_free(&info);
	}
	if (d) closedir(d);
	check(n >= 10, "generated artifacts found", gen_dir);
}

/* the fz_op block of fuserun.h is the generated headers' */
void test_op_block(void)
{
	char p[4096];
	size_t n1, n2;
	char *a = slurp("runtime/fuserun.h", &n1), *b = slurp(path2(p, gen_dir, "kl_divergence.h"), &n2);
	const char *key = "#ifndef FZ_OP_DEFINED";
	char *sa = a ? strstr(a, key) : NULL, *sb = b ? strstr(b, key) : NULL;
	char *ea = sa ? strstr(sa, "\n#endif\n") : NULL, *eb = sb ? strstr(sb, "\n#endif\n") : NULL;
	check(ea && eb && ea - sa == eb - sb && !memcmp(sa, sb, (size_t)(ea - sa)), "fuserun.h's fz_op block matches the generated one",
	      "copy the FZ_OP_DEFINED block of emit_host.c into runtime/fuserun.h");
	free(a), free(b);
}

void test_refusals(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096], q[4096], line[512], line2[512];
	const char *M = "kl_divergence.manifest";
	const char *dir = copy_artifact("kl_divergence", "clean");
	expect("a copied artifact verifies", verify(dir, M, err), FZ_OK, "", NULL);

	dir = copy_artifact("kl_divergence", "truncated_ptx");
	size_t n;
	char *ptx = slurp(path2(p, dir, "kl_divergence.sm_90.ptx"), &n);
	spit(p, ptx, n / 2);
	expect("refuses a truncated PTX", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "kl_divergence.sm_90.ptx", "truncated or edited", NULL);
	ptx[n / 2] ^= 1;
	spit(p, ptx, n);
	expect("refuses a PTX with one byte edited", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "kl_divergence.sm_90.ptx", "target sm_90", NULL);
	free(ptx);

	dir = copy_artifact("kl_divergence", "edited_manifest");
	edit(path2(p, dir, M), "by=reduce", "by=rEduce", 0);
	expect("refuses an edited manifest", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "manifest-sha256", "edited", NULL);

	dir = copy_artifact("kl_divergence", "truncated_manifest");
	char *man = slurp(path2(p, dir, M), &n);
	spit(p, man, n / 2);
	expect("refuses a truncated manifest", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "no manifest-sha256", NULL);
	spit(p, man, n - 5);
	expect("refuses a manifest cut inside its hash line", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "manifest-sha256", NULL);
	char *longer = malloc(n + 16);
	memcpy(longer, man, n), memcpy(longer + n, "extra 1\n", 8);
	spit(p, longer, n + 8);
	expect("refuses data after the manifest-sha256 line", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "last line", NULL);
	free(longer);
	spit(p, "", 0);
	expect("refuses an empty manifest", verify(dir, M, err), FZ_ERR_FORMAT, err, "empty", NULL);
	free(man);

	dir = copy_artifact("kl_divergence", "bad_hash_line");
	manifest_line(path2(p, dir, M), "manifest-sha256 ", line, sizeof line);
	snprintf(line2, sizeof line2, "%s", line);
	line2[20] = line2[20] == '0' ? '1' : '0';
	edit(p, line, line2, 0);
	expect("refuses a wrong manifest-sha256", verify(dir, M, err), FZ_ERR_INTEGRITY, err, "manifest-sha256", NULL);

	dir = copy_artifact("kl_divergence", "missing_file");
	remove(path2(p, dir, "kl_divergence_ref.c"));
	expect("refuses a missing file", verify(dir, M, err), FZ_ERR_IO, err, "kl_divergence_ref.c", "No such file", NULL);
	remove(path2(p, dir, "kl_divergence.sm_80.ptx"));
	expect("refuses a missing PTX", verify(dir, M, err), FZ_ERR_IO, err, "kl_divergence.sm_80.ptx", "target sm_80", NULL);
	expect("refuses a missing manifest", verify(dir, "nothing.manifest", err), FZ_ERR_IO, err, "nothing.manifest", NULL);

	dir = copy_artifact("kl_divergence", "version");
	manifest_line(path2(p, dir, M), "fusec-version ", line, sizeof line);
	edit(p, line, "fusec-version 1.0.0", 1);
	expect("refuses an incompatible fusec version", verify(dir, M, err), FZ_ERR_VERSION, err, "fusec 1.0.0", "0.x", NULL);
	edit(p, "fusec-version 1.0.0", "fusec-version zero", 1);
	expect("refuses a malformed fusec version", verify(dir, M, err), FZ_ERR_FORMAT, err, "fusec-version", NULL);

	dir = copy_artifact("kl_divergence", "format");
	edit(path2(p, dir, M), "fusec-artifact 2\n", "fusec-artifact 3\n", 1);
	expect("refuses a newer artifact format", verify(dir, M, err), FZ_ERR_VERSION, err, "format 3", NULL);
	expect("refuses a file that is not a manifest", verify(dir, "kl_divergence.cu", err), FZ_ERR_FORMAT, err, "not a fusec artifact", NULL);

	dir = copy_artifact("kl_divergence", "wrong_target");
	manifest_line(path2(p, dir, M), "target sm_80 ", line, sizeof line);
	manifest_line(p, "target sm_90 ", line2, sizeof line2);
	char swapped[512];
	/* the sm_80 PTX in the sm_90 file, with its hash: only the .target check can tell */
	snprintf(swapped, sizeof swapped, "target sm_90 kl_divergence.sm_90.ptx %s", line + strlen(line) - 64);
	edit(p, line2, swapped, 1);
	ptx = slurp(path2(q, dir, "kl_divergence.sm_80.ptx"), &n);
	spit(path2(q, dir, "kl_divergence.sm_90.ptx"), ptx, n);
	free(ptx);
	expect("refuses a target whose PTX is for another architecture", verify(dir, M, err), FZ_ERR_FORMAT, err, "for sm_80, not sm_90", NULL);

	dir = copy_artifact("kl_divergence", "escape");
	edit(path2(p, dir, M), "target sm_80 kl_divergence.sm_80.ptx", "target sm_80 ../clean/kl_divergence.sm_80.ptx", 1);
	expect("refuses a file outside the artifact's directory", verify(dir, M, err), FZ_ERR_FORMAT, err, "not a plain file name", NULL);

	dir = copy_artifact("kl_divergence", "malformed");
	edit(path2(p, dir, M), " by=reduce\n", "\n", 1);
	expect("refuses a malformed param line", verify(dir, M, err), FZ_ERR_FORMAT, err, "kl_divergence.manifest:", "param", NULL);
	dir = copy_artifact("kl_divergence", "bad_dim");
	edit(path2(p, dir, M), "input f32 N by=input", "input f32 Q by=input", 1);
	expect("refuses a dimension that is no size", verify(dir, M, err), FZ_ERR_FORMAT, err, "'Q'", NULL);
}

void test_strerror(void)
{
	int ok = 1;
	for (int i = 0; i < FZ_ERR_COUNT_; i++)
		for (int j = 0; j < i; j++) ok &= fz_strerror(i) && *fz_strerror(i) && strcmp(fz_strerror(i), fz_strerror(j));
	ok &= strstr(fz_strerror(-1), "unknown") && strstr(fz_strerror(FZ_ERR_COUNT_), "unknown");
	check(ok, "fz_strerror names every code, distinctly", NULL);
}

/* values NAME LO..HI [nondecreasing] [nonzero] lines: parsed strictly (a
   malformed one is a refusal naming the line, never a crash), evaluated at
   sizes by fz_tensor_values */
static int tensor_index(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, name)) return i;
	return -1;
}

void test_values_lines(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096], name[300];
	const char *M = "spike_burst.manifest";
	const char *dir = copy_artifact("spike_burst", "values_lines");
	size_t n;
	char *orig = slurp(path2(p, dir, M), &n);
	fz_artifact_info info;
	fz_values_info v;
	long long sizes[4] = {10, 101, 1000, 100}; /* F NP1 S N */
	if (check(!fz_artifact_verify(p, &info, err), "values: spike_burst's manifest verifies", err)) {
		int fired = tensor_index(&info, "fired"), rp = tensor_index(&info, "row_ptr"), col = tensor_index(&info, "col"),
		    w = tensor_index(&info, "w");
		int rc = fz_tensor_values(&info, fired, sizes, &v, err);
		check(!rc && v.known && v.lo == 0 && v.hi == 99 && !v.nondecreasing && !v.nonzero && !strcmp(v.range, "0..NP1-2"),
		      "values fired 0..NP1-2 at NP1 = 101: 0..99", err);
		rc = fz_tensor_values(&info, rp, sizes, &v, err);
		check(!rc && v.known && v.lo == 0 && v.hi == 1000 && v.nondecreasing && !v.nonzero, "values row_ptr 0..S nondecreasing", err);
		rc = fz_tensor_values(&info, col, NULL, &v, err);
		check(!rc && v.known && v.lo == 0 && v.hi == 0 && !strcmp(v.range, "0..N-1"), "values without sizes: the text, numbers only", err);
		rc = fz_tensor_values(&info, w, sizes, &v, err);
		check(!rc && !v.known, "no values line: nothing said", err);
		expect("fz_tensor_values: no such tensor", fz_tensor_values(&info, 99, sizes, &v, err), FZ_ERR_INVALID, err, NULL);
		long long zero[4] = {10, 101, 1000, 0};
		expect("fz_tensor_values: a size of 0", fz_tensor_values(&info, col, zero, &v, err), FZ_ERR_BAD_SIZE, err, "size N", NULL);
		fz_artifact_info_free(&info);
	}
	/* valid lines: each verifies and evaluates as written */
	static const struct { const char *line; long long lo, hi; int nd, nz; } good[] = {
		{"values col -5..N+3 nonzero", -5, 103, 0, 1},
		{"values col -2147483648..2147483647 nonzero", INT32_MIN, INT32_MAX, 0, 1},
		{"values col 2..S-1 nonzero nondecreasing", 2, 999, 1, 1},
		{"values col N-7..N", 93, 100, 0, 0},
		{"values col 0..0", 0, 0, 0, 0},
		{"values col -1..0 nonzero", -1, 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		spit(p, orig, n);
		edit(p, "values col 0..N-1", good[i].line, 1);
		snprintf(name, sizeof name, "values: '%s' verifies and evaluates", good[i].line);
		int ok = !fz_artifact_verify(p, &info, err);
		if (ok) {
			int rc = fz_tensor_values(&info, tensor_index(&info, "col"), sizes, &v, err);
			ok = !rc && v.known && v.lo == good[i].lo && v.hi == good[i].hi && v.nondecreasing == good[i].nd && v.nonzero == good[i].nz;
			fz_artifact_info_free(&info);
		}
		check(ok, name, err);
	}
	/* ranges that hold nothing at some sizes, or overflow there */
	static const struct { const char *line; long long N; const char *why; } empty[] = {
		{"values col 5..N-1", 3, "hold nothing at these sizes (5..2)"},
		{"values col N+1..S nonzero", 1000, "hold nothing"},
		{"values col 0..N+9223372036854775807", 1, "overflows"},
		{"values col N-9223372036854775807..N", 100, NULL}, /* no overflow: fine */
	};
	for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
		spit(p, orig, n);
		edit(p, "values col 0..N-1", empty[i].line, 1);
		long long sz[4] = {10, 101, 1000, empty[i].N};
		snprintf(name, sizeof name, "values: '%s' verifies", empty[i].line);
		if (!check(!fz_artifact_verify(p, &info, err), name, err)) continue;
		snprintf(name, sizeof name, "values: '%s' at N = %lld", empty[i].line, empty[i].N);
		int rc = fz_tensor_values(&info, tensor_index(&info, "col"), sz, &v, err);
		if (empty[i].why) expect(name, rc, FZ_ERR_BAD_SIZE, err, "col", empty[i].why, NULL);
		else check(!rc && v.lo == 100 - 9223372036854775807LL, name, err);
		fz_artifact_info_free(&info);
	}
	/* malformed lines: refused with the line's number and why */
	static const struct { const char *from, *to, *why; } badl[] = {
		{"values col 0..N-1", "values col", "malformed values line"},
		{"values col 0..N-1", "values col 0..N-1 nondecreasing nonzero nonzero", "malformed values line"},
		{"values col 0..N-1", "values col 0..N-1 nonzero nonzero", "repeated 'nonzero'"},
		{"values col 0..N-1", "values col 0..N-1 sorted", "unexpected or repeated 'sorted'"},
		{"values col 0..N-1", "values col 0-N", "malformed range '0-N'"},
		{"values col 0..N-1", "values col 0..", "malformed range"},
		{"values col 0..N-1", "values col ..N", "malformed range"},
		{"values col 0..N-1", "values col 0..Q", "malformed range '0..Q'"},
		{"values col 0..N-1", "values col 00..N", "malformed range"},
		{"values col 0..N-1", "values col -0..N", "malformed range"},
		{"values col 0..N-1", "values col +1..N", "malformed range"},
		{"values col 0..N-1", "values col 0..N+0", "malformed range"},
		{"values col 0..N-1", "values col 0..N+", "malformed range"},
		{"values col 0..N-1", "values col 0..N-01", "malformed range"},
		{"values col 0..N-1", "values col 0..N*2", "malformed range"},
		{"values col 0..N-1", "values col 0..N-1..3", "malformed range"},
		{"values col 0..N-1", "values col 0...N", "malformed range"},
		{"values col 0..N-1", "values col 0x1..N", "malformed range"},
		{"values col 0..N-1", "values col 0..9223372036854775808", "malformed range"},
		{"values col 0..N-1", "values col -9223372036854775809..0", "malformed range"},
		{"values col 0..N-1", "values col 0..N+9223372036854775808", "malformed range"},
		{"values col 0..N-1", "values col 0..99999999999999999999999", "malformed range"},
		{"values col 0..N-1", "values col -9223372036854775808..0", "outside i32"},
		{"values col 0..N-1", "values col 0..2147483648", "outside i32"},
		{"values col 0..N-1", "values col -2147483649..N", "outside i32"},
		{"values col 0..N-1", "values col 5..3", "empty range 5..3 (LO > HI)"},
		{"values col 0..N-1", "values col N..N-1", "empty range"},
		{"values col 0..N-1", "values col N+5..5", "empty range"},
		{"values col 0..N-1", "values col 0..0 nonzero", "holds no value"},
		{"values col 0..N-1", "values w 0..N-1", "a f32 tensor"},
		{"values col 0..N-1", "values v_next 0..N-1", "not an input"},
		{"values col 0..N-1", "values nope 0..N-1", "no param line of that name before it"},
		{"values col 0..N-1", "values col 0..N-1\nvalues col 0..N-1", "values col listed twice"},
		{"param col ", "values col 0..N-1\nparam col ", "no param line of that name before it"},
		{"param col input i32 S by=input", "param col input i32 S by=input domain=0..5", "gives a domain too"},
	};
	for (size_t i = 0; i < sizeof badl / sizeof badl[0]; i++) {
		spit(p, orig, n);
		edit(p, badl[i].from, badl[i].to, 1);
		snprintf(name, sizeof name, "values: refuses '%s'", badl[i].to);
		for (char *nl = strchr(name, '\n'); nl; nl = strchr(nl, '\n')) *nl = '|'; /* one line a check */
		expect(name, verify(dir, M, err), FZ_ERR_FORMAT, err, "spike_burst.manifest:", badl[i].why, NULL);
	}
	spit(p, orig, n);
	free(orig);
}
