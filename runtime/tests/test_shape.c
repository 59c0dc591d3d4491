/* Derived dimensions (fusec's range inference writes C/2, (C+1)/2, N-1,
 * N/K into temp and param lines): every spelling fusec writes is parsed
 * and evaluated as the generated code evaluates it, every other spelling
 * is refused, and fz_tensor_shape refuses sizes that overflow. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static const char *T = "temp t temp f32 N by=map";

/* kl_divergence with its temp's dimension spelt `dim` and a size K added
   when asked; consistent (layout and header agree) unless the dim is refused */
static int with_dim(const char *casename, const char *dim, fz_artifact_info *info, char *err)
{
	char p[4096], to[256];
	const char *dir = copy_artifact("kl_divergence", casename);
	snprintf(to, sizeof to, "temp t temp f32 %s by=map", dim);
	edit(path2(p, dir, "kl_divergence.manifest"), T, to, 1);
	edit(p, "size N\n", "size N\nsize K\n", 1);
	refingerprint(dir, "kl_divergence");
	return fz_artifact_verify(p, info, err);
}

static int find(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, name)) return i;
	return -1;
}

void test_shapes(void)
{
	char err[FZ_ERRMSG_SIZE], name[256];
	/* dimension, N, K, the value the generated code computes */
	static const struct { const char *dim; long long n, k, want; } ok[] = {
		{"N", 7, 1, 7},          {"N-1", 7, 1, 6},          {"N-1", 1, 1, 0},        {"N+3", 7, 1, 10},
		{"N/2", 7, 1, 3},        {"N/2", 1, 1, 0},          {"(N+1)/2", 7, 1, 4},    {"(N+1)/2", 1, 1, 1},
		{"(N-4)/2", 3, 1, 0},    {"(N-4)/2", 9, 1, 2},      {"N/K", 10, 3, 3},       {"N/K", 2, 3, 0},
		{"(N+2)/K", 10, 3, 4},   {"12/K", 1, 5, 2},         {"(12-1)/3", 1, 1, 3},   {"K", 1, 9, 9},
		{"N-1099511627776", 5, 1, 0},
		/* offsets and divisors past 2^40, as fusec writes x(i + 2000000000000) and x(3000000000000*i) */
		{"N-2000000000000", 5, 1, 0}, {"(N+2999999999999)/3000000000000", 5, 1, 1}, {"N/9223372036854775807", 5, 1, 0},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		fz_artifact_info info;
		snprintf(name, sizeof name, "accepts the derived dimension %s", ok[i].dim);
		if (!expect(name, with_dim("dim_ok", ok[i].dim, &info, err), FZ_OK, err, NULL)) continue;
		int t = find(&info, "t");
		long long sizes[2] = {ok[i].n, ok[i].k}, dims[FZ_MAX_RANK], n = -1;
		int rc = fz_tensor_shape(&info, t, sizes, dims, &n, err);
		snprintf(name, sizeof name, "%s at N=%lld, K=%lld is %lld, as in the generated code", ok[i].dim, ok[i].n, ok[i].k,
		         ok[i].want);
		char got[64];
		snprintf(got, sizeof got, "rc %d, %lld", rc, n);
		check(rc == FZ_OK && n == ok[i].want && dims[0] == ok[i].want, name, got);
		fz_artifact_info_free(&info);
	}
	/* spellings fusec never writes, and sizes the manifest does not have */
	static const char *const refused[] = {
		"N+0", "N-0", "N/1", "N/0", "(N)/2", "(N+1)", "N+1/2", "N-1/K", "((N+1))/2", "(N+1)/2/2", "N/2/K", "N/K/2",
		"N/Q", "Q-1", "N*2", "2*N", "-N", "+N", "N+-1", "N--1", "N+01", "N/02", "N/", "N+", "(N+1/2", "N+K",
		"N/99999999999999999999", "N+9223372036854775808", "N-9223372036854775808", "1099511627777",
		"1099511627777/K", "0/K", "N/2)", "(N+1)/2x", "N.5",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		fz_artifact_info info;
		snprintf(name, sizeof name, "refuses the dimension '%s'", refused[i]);
		char want[64];
		snprintf(want, sizeof want, "dimension '%s'", refused[i]);
		expect(name, with_dim("dim_bad", refused[i], &info, err), FZ_ERR_FORMAT, err, want, NULL);
	}

	/* overflow and bad sizes: clean errors, never a wrapped count */
	fz_artifact_info info;
	if (expect("accepts (N+3)/K", with_dim("dim_ovf", "(N+3)/K", &info, err), FZ_OK, err, NULL)) {
		int t = find(&info, "t"), q = find(&info, "q");
		long long n, big[2] = {1ll << 62, 1}, zero[2] = {0, 1}, kzero[2] = {5, 0}, neg[2] = {-3, 1};
		expect("N + 3 past 2^62: an overflow, refused", fz_tensor_shape(&info, t, big, NULL, &n, err), FZ_ERR_BAD_SIZE, err,
		       "(N+3)/K overflows", NULL);
		expect("N = 2^62 f32 elements: more than 2^62 bytes, refused", fz_tensor_shape(&info, q, big, NULL, &n, err),
		       FZ_ERR_BAD_SIZE, err, "more than 2^62 bytes", NULL);
		expect("a size of 0 is refused", fz_tensor_shape(&info, q, zero, NULL, &n, err), FZ_ERR_BAD_SIZE, err, "size N is 0", NULL);
		expect("a divisor size of 0 is refused", fz_tensor_shape(&info, t, kzero, NULL, &n, err), FZ_ERR_BAD_SIZE, err,
		       "size K is 0", NULL);
		expect("a negative size is refused", fz_tensor_shape(&info, q, neg, NULL, &n, err), FZ_ERR_BAD_SIZE, err, "size N is -3",
		       NULL);
		long long one[2] = {1, 1};
		int kl = find(&info, "kl");
		check(!fz_tensor_shape(&info, kl, one, NULL, &n, err) && n == 1, "a scalar has one element", err);
		expect("no tensor 99", fz_tensor_shape(&info, 99, one, NULL, &n, err), FZ_ERR_INVALID, err, "no tensor 99", NULL);
		expect("NULL sizes", fz_tensor_shape(&info, 0, NULL, NULL, &n, err), FZ_ERR_INVALID, err, "NULL", NULL);
		fz_artifact_info_free(&info);
	}
	if (expect("accepts N+9223372036854775807", with_dim("dim_ovf2", "N+9223372036854775807", &info, err), FZ_OK, err, NULL)) {
		long long n, one[2] = {1, 1};
		expect("N + (2^63 - 1) at N = 1: an overflow, refused", fz_tensor_shape(&info, find(&info, "t"), one, NULL, &n, err),
		       FZ_ERR_BAD_SIZE, err, "overflows", NULL);
		fz_artifact_info_free(&info);
	}
	/* the same on a parameter: a derived dimension on a param line parses too */
	char p[4096];
	const char *dir = copy_artifact("kl_divergence", "dim_param");
	edit(path2(p, dir, "kl_divergence.manifest"), "param q input f32 N ", "param q input f32 N,(N+1)/2 ", 1);
	refingerprint(dir, "kl_divergence");
	if (expect("accepts a parameter of shape N,(N+1)/2", fz_artifact_verify(p, &info, err), FZ_OK, err, NULL)) {
		long long sizes[1] = {5}, dims[FZ_MAX_RANK], n;
		int rc = fz_tensor_shape(&info, find(&info, "q"), sizes, dims, &n, err);
		check(rc == FZ_OK && dims[0] == 5 && dims[1] == 3 && n == 15, "N,(N+1)/2 at N=5 is 5 x 3", err);
		fz_artifact_info_free(&info);
	}
}
