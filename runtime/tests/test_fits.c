/* fits lines (issue 27): an integer input with a domain that a subscript
 * reads directly reaches its whole domain, so the dimension it subscripts
 * must hold the domain's top plus one (fusec/front/sema_fits.c).
 * tests/ref/lang/domain_gather.fuse, the spec fuzzer's seed 63417 reduced
 * (malloc: i32[P, N] in [1, 5] subscripting cos: f32[N]), which run.sh
 * compiles into TMP/fits_src, has `fits malloc N>=6`: every route to a
 * launch refuses N = 5 before launching anything and takes N = 6, and the
 * line is parsed strictly and evaluated as a param line's dimension is. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"


static int size_of(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->nsizes; i++)
		if (!strcmp(info->sizes[i], name)) return i;
	return 0;
}

/* each check of a launch's sizes at P = 3 and N = n: refused naming the line, or taken */
static void routes(const fz_artifact_info *info, long long n)
{
	char err[FZ_ERRMSG_SIZE] = "", name[200];
	long long sizes[2];
	sizes[size_of(info, "P")] = 3, sizes[size_of(info, "N")] = n;
	unsigned char a[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)] = {0};
	for (int i = 0; i < info->nsizes; i++) memcpy(a + 8 * (size_t)(info->ntensors + i), &sizes[i], 8);
	const int code = n < 6 ? FZ_ERR_BAD_SIZE : FZ_OK;
	char want[200];
	snprintf(want, sizeof want, "input malloc's domain 1..5 subscripts a dimension N, which must be at least 6: "
	         "N is %lld at these sizes", n);
	snprintf(name, sizeof name, "fits: N = %lld %s by fz_check_fits", n, n < 6 ? "refused" : "taken");
	expect(name, fz_check_fits(info, sizes, err), code, err, n < 6 ? want : NULL, NULL);
	snprintf(name, sizeof name, "fits: N = %lld %s by fz_check_sizes (fz_run: typed launchers, fz_call, pipelines)", n,
	         n < 6 ? "refused" : "taken");
	expect(name, fz_check_sizes(info, a, info->args_size, err), code, err, n < 6 ? want : NULL, NULL);
	unsigned long long bytes;
	snprintf(name, sizeof name, "fits: N = %lld %s by fz_recipe_scratch (fz_call_scratch, fz_call_prepare)", n,
	         n < 6 ? "refused" : "taken");
	expect(name, fz_recipe_scratch(info, "fused", sizes, 2, 132, &bytes, err), code, err, n < 6 ? want : NULL, NULL);
	const fz_arg args[3] = {{.type = "i32", .ptr = 0x1000}, {.type = "f32", .ptr = 0x2000}, {.type = "f32", .ptr = 0x3000}};
	fz_op ops[16];
	int nops = -1;
	snprintf(name, sizeof name, "fits: N = %lld %s by fz_recipe_ops (fz_call)", n, n < 6 ? "refused" : "taken");
	expect(name, fz_recipe_ops(info, "unfused", sizes, 2, 132, args, 3, 0x10000, a, info->args_size, ops, 16, &nops, err), code,
	       err, n < 6 ? want : NULL, NULL);
}

/* the line edited to `to` (re-hashed): refused with why, or at N = n taken
   (ok 1) or refused naming the dimension's value */
static void edited(const char *dir, const char *orig, size_t len, const char *to, const char *why, long long n, int ok)
{
	char p[4096], err[FZ_ERRMSG_SIZE] = "", name[300];
	path2(p, dir, "domain_gather.manifest");
	spit(p, orig, len);
	edit(p, "fits malloc N>=6", to, 1);
	fz_artifact_info info;
	int rc = fz_artifact_verify(p, &info, err);
	if (why) {
		snprintf(name, sizeof name, "fits: '%s' refused", to);
		expect(name, rc, FZ_ERR_FORMAT, err, why, NULL);
		return;
	}
	snprintf(name, sizeof name, "fits: '%s' verifies", to);
	if (!expect(name, rc, FZ_OK, err, NULL)) return;
	long long sizes[2];
	sizes[size_of(&info, "P")] = 3, sizes[size_of(&info, "N")] = n;
	snprintf(name, sizeof name, "fits: '%s' at N = %lld %s", to, n, ok ? "taken" : "refused");
	expect(name, fz_check_fits(&info, sizes, err), ok ? FZ_OK : FZ_ERR_BAD_SIZE, err, ok ? NULL : "input malloc's domain", NULL);
	fz_artifact_info_free(&info);
}

void test_fits_lines(void)
{
	char err[FZ_ERRMSG_SIZE] = "", p[4096], src[4096];
	fz_artifact_info info;
	path2(src, tmp_dir, "fits_src");
	if (!check(!fz_artifact_verify(path2(p, src, "domain_gather.manifest"), &info, err),
	           "fits: domain_gather verifies (run.sh compiles tests/ref/lang/domain_gather.fuse)", err))
		return;
	routes(&info, 5), routes(&info, 6), routes(&info, 1);
	long long big[2] = {1, 1};
	big[size_of(&info, "N")] = 1LL << 62;
	expect("fits: N = 2^62 taken", fz_check_fits(&info, big, err), FZ_OK, err, NULL);
	big[size_of(&info, "N")] = 0;
	expect("fits: N = 0 refused (not a size)", fz_check_fits(&info, big, err), FZ_ERR_BAD_SIZE, err, "size N is 0", NULL);
	expect("fits: NULL sizes", fz_check_fits(&info, NULL, err), FZ_ERR_INVALID, err, "NULL", NULL);
	fz_artifact_info_free(&info);

	const char *dir = copy_artifact_from(src, "domain_gather", "fits_lines");
	size_t len;
	char *orig = slurp(path2(p, dir, "domain_gather.manifest"), &len);
	/* other dimensions, as fusec writes them for temps: evaluated as shapes are */
	edited(dir, orig, len, "fits malloc (N+1)/2>=3", NULL, 4, 0);
	edited(dir, orig, len, "fits malloc (N+1)/2>=3", NULL, 5, 1);
	edited(dir, orig, len, "fits malloc N-1>=6", NULL, 6, 0);
	edited(dir, orig, len, "fits malloc N/P>=2", NULL, 6, 1); /* P = 3 */
	edited(dir, orig, len, "fits malloc N/P>=2", NULL, 5, 0);
	edited(dir, orig, len, "fits malloc N>=4611686018427387904", NULL, 6, 0);
	/* malformed, or about what it cannot be */
	static const struct { const char *to, *why; } bad[] = {
		{"fits malloc N>=0", "malformed 'N>=0'"},
		{"fits malloc N>=4611686018427387905", "LEAST from 1 to 2^62"},
		{"fits malloc N>=06", "malformed"},
		{"fits malloc N>=-6", "malformed"},
		{"fits malloc N=6", "malformed 'N=6'"},
		{"fits malloc >=6", "malformed"},
		{"fits malloc N>=", "malformed"},
		{"fits malloc N>=6 more", "malformed fits line"},
		{"fits malloc", "malformed fits line"},
		{"fits malloc Q>=6", "dimension 'Q'"},
		{"fits malloc N+0>=6", "dimension 'N+0'"},
		{"fits cos N>=6", "fits cos: not an integer input with a domain"},
		{"fits y N>=6", "fits y: not an integer input with a domain"},
		{"fits nobody N>=6", "fits nobody: no param line of that name before it"},
		{"fits malloc N>=6\nfits malloc N>=7", "fits malloc N listed twice"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) edited(dir, orig, len, bad[i].to, bad[i].why, 0, 0);
	/* a domain taken off the param line (an edited manifest): its fits line is refused with it */
	spit(p, orig, len);
	edit(p, " domain=1.0..5.0", "", 1);
	expect("fits: an input without a domain refused", fz_artifact_verify(p, &info, err), FZ_ERR_FORMAT, err,
	       "not an integer input with a domain", NULL);
	free(orig);
}

/* On the fake driver: fz_call, fz_call_prepare and fz_run (what the typed
   launchers call) refuse N = 5 before launching anything; N = 6 launches. */
void test_fits_fake(void)
{
	char err[FZ_ERRMSG_SIZE] = "", p[4096], src[4096];
	void *h = dlopen(fake_so, RTLD_NOW | RTLD_LOCAL);
	long (*launches)(void) = h ? (long (*)(void))dlsym(h, "fakecuda_launches") : NULL;
	fz_device *d = NULL;
	fz_artifact *a = NULL;
	path2(src, tmp_dir, "fits_src");
	if (!check(launches && !fz_device_open(0, &d, err), "fits: a fake device", err) ||
	    !expect("fits: domain_gather loads", fz_artifact_load(d, path2(p, src, "domain_gather.manifest"), &a), FZ_OK,
	            fz_device_error(d), NULL)) {
		fz_device_close(d);
		if (h) dlclose(h);
		return;
	}
	const fz_artifact_info *info = fz_artifact_get_info(a);
	const int N = size_of(info, "N"), P = size_of(info, "P");
	long long s5[2], s6[2];
	s5[P] = s6[P] = 3, s5[N] = 5, s6[N] = 6;
	unsigned long long bytes = 0;
	fz_ptr buf[4] = {0};
	int rc = fz_call_scratch(a, "fused", s6, 2, &bytes);
	const size_t want[4] = {3 * 6 * 4, 6 * 4, 6 * 3 * 4, bytes};
	for (int i = 0; !rc && i < 4; i++) rc = fz_alloc(d, want[i], &buf[i]);
	if (!rc) rc = fz_memset(d, buf[3], 0, bytes, NULL);
	if (!expect("fits: buffers for N = 6", rc, FZ_OK, fz_device_error(d), NULL)) goto out;
	const fz_arg args[3] = {{.type = "i32", .ptr = buf[0]}, {.type = "f32", .ptr = buf[1]}, {.type = "f32", .ptr = buf[2]}};
	const char *msg = "input malloc's domain 1..5 subscripts a dimension N, which must be at least 6: N is 5";
	long before = launches();
	expect("fits: fz_call at N = 5 refused", fz_call(a, "fused", s5, 2, args, 3, buf[3], NULL), FZ_ERR_BAD_SIZE,
	       fz_artifact_error(a), msg, NULL);
	fz_prepared_call *pc = NULL;
	expect("fits: fz_call_prepare at N = 5 refused", fz_call_prepare(a, "unfused", s5, 2, buf[3], &pc), FZ_ERR_BAD_SIZE,
	       fz_artifact_error(a), msg, NULL);
	/* the typed launchers' route: an op list and an args struct made at N = 6, the size then lowered */
	unsigned char s[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
	fz_op ops[16];
	int n = 0;
	rc = fz_recipe_ops(info, "fused", s6, 2, 132, args, 3, buf[3], s, info->args_size, ops, 16, &n, err);
	memcpy(s + 8 * (size_t)(info->ntensors + N), &s5[N], 8);
	expect("fits: fz_run with n_N = 5 refused", rc ? rc : fz_run(a, ops, n, s, info->args_size, NULL), FZ_ERR_BAD_SIZE,
	       rc ? err : fz_artifact_error(a), msg, NULL);
	check(launches() == before, "fits: nothing launched at N = 5", NULL);
	rc = fz_call(a, "fused", s6, 2, args, 3, buf[3], NULL);
	if (!rc) rc = fz_call(a, "unfused", s6, 2, args, 3, buf[3], NULL);
	if (!rc) rc = fz_stream_sync(d, NULL);
	check(!rc && launches() > before, "fits: N = 6 launches both variants", fz_artifact_error(a));
out:
	for (int i = 0; i < 4; i++) fz_free(d, buf[i]);
	fz_artifact_unload(a);
	fz_device_close(d);
	dlclose(h);
}
