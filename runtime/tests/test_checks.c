/* The launch checks (args size, kernel names, sizes) and fuserun's
 * comparisons against the reference, all without a GPU. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensors.h"
#include "testutil.h" /* fuserun.h first: the generated headers' typed launchers need it */
#include "kl_divergence.h"
#include "spike_burst.h"

/* ---- argument checks (no GPU) ---- */

static void kl_args(fz_kl_divergence_args *a, long long n)
{
	memset(a, 0, sizeof *a);
	a->t_q = 0x10000, a->t_p = 0x20000, a->t_kl = 0x30000, a->n_N = n;
	fz_kl_divergence_fused_scratch(a, 0x40000, 132);
}

void test_checks(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	fz_artifact_info kl, sb;
	if (fz_artifact_verify(path2(p, gen_dir, "kl_divergence.manifest"), &kl, err) ||
	    fz_artifact_verify(path2(p, gen_dir, "spike_burst.manifest"), &sb, err)) {
		check(0, "checks: load manifests", err);
		return;
	}
	fz_kl_divergence_args a;
	fz_op ops[16];
	kl_args(&a, 1000);
	int n = fz_kl_divergence_fused_ops(&a, 132, ops, 16);
	expect("fused ops pass the checks", fz_check_ops(&kl, ops, n, &a, sizeof a, err), FZ_OK, "", NULL);
	expect("sizes pass the checks", fz_check_sizes(&kl, &a, sizeof a, err), FZ_OK, "", NULL);
	int nu = fz_kl_divergence_unfused_ops(&a, 132, ops + n, 16 - n);
	expect("unfused ops pass the checks", fz_check_ops(&kl, ops + n, nu, &a, sizeof a, err), FZ_OK, "", NULL);
	char want1[64], want2[64];
	snprintf(want1, sizeof want1, "%zu bytes", sizeof a - 8), snprintf(want2, sizeof want2, "takes %zu", sizeof a);
	expect("wrong args size refused", fz_check_ops(&kl, ops, n, &a, sizeof a - 8, err), FZ_ERR_ARGS_SIZE, err, want1, want2, NULL);
	snprintf(want1, sizeof want1, "%zu bytes", sizeof a + 8);
	expect("wrong args size refused by fz_check_sizes", fz_check_sizes(&kl, &a, sizeof a + 8, err), FZ_ERR_ARGS_SIZE, err, want1, NULL);
	fz_op bad = ops[0];
	bad.kernel = "kl_divergence_f7";
	expect("unknown kernel refused", fz_check_ops(&kl, &bad, 1, &a, sizeof a, err), FZ_ERR_UNKNOWN_KERNEL, err,
	       "kl_divergence_f7", "kl_divergence_f0, kl_divergence_u0", NULL);
	bad.kernel = "spike_burst_f0";
	expect("another fusion's kernel refused", fz_check_ops(&kl, &bad, 1, &a, sizeof a, err), FZ_ERR_UNKNOWN_KERNEL, err, "spike_burst_f0", NULL);
	bad.kernel = NULL;
	expect("a launch without a kernel name refused", fz_check_ops(&kl, &bad, 1, &a, sizeof a, err), FZ_ERR_UNKNOWN_KERNEL, err, NULL);
	bad = ops[0], bad.kind = 7;
	expect("unknown op kind refused", fz_check_ops(&kl, &bad, 1, &a, sizeof a, err), FZ_ERR_INVALID, err, "kind 7", NULL);
	bad = ops[0], bad.grid[0] = 0;
	expect("empty grid refused", fz_check_ops(&kl, &bad, 1, &a, sizeof a, err), FZ_ERR_INVALID, err, "empty grid", NULL);
	expect("NULL args refused", fz_check_ops(&kl, ops, n, NULL, sizeof a, err), FZ_ERR_INVALID, err, NULL);
	a.n_N = 0;
	expect("zero size refused", fz_check_sizes(&kl, &a, sizeof a, err), FZ_ERR_BAD_SIZE, err, "size N", "> 0", NULL);

	fz_spike_burst_args s;
	memset(&s, 0, sizeof s);
	s.t_fired = 0x1000, s.t_row_ptr = 0x2000, s.t_col = 0x3000, s.t_w = 0x4000, s.t_v = 0x5000;
	s.t_v_next = 0x6000, s.t_spikes = 0x7000, s.n_F = 10, s.n_NP1 = 101, s.n_S = 1000, s.n_N = 100;
	fz_spike_burst_fused_scratch(&s, 0x8000, 132);
	fz_op clear = {FZ_OP_MEMSET, "nspikes", {0, 0, 0}, 0, 0, 4};
	expect("a memset of a null pointer refused", fz_check_ops(&sb, &clear, 1, &s, sizeof s, err), FZ_ERR_INVALID, err, "nspikes", NULL);
	clear.bytes = 0;
	expect("an empty memset passes", fz_check_ops(&sb, &clear, 1, &s, sizeof s, err), FZ_OK, "", NULL);
	s.t_nspikes = 0x9000;
	n = fz_spike_burst_fused_ops(&s, 132, ops, 16);
	expect("spike_burst ops pass the checks", fz_check_ops(&sb, ops, n, &s, sizeof s, err), FZ_OK, "", NULL);
	s.n_F = -1;
	expect("negative size refused", fz_check_sizes(&sb, &s, sizeof s, err), FZ_ERR_BAD_SIZE, err, "size F", NULL);
	fz_artifact_info_free(&kl), fz_artifact_info_free(&sb);
}

/* ---- fuserun's comparisons (tensors.c) ---- */

static int kl_ref(const void *a) { return fz_kl_divergence_reference(a); }
/* references that trap as generated code can: an integer division by zero
   (SIGFPE), a division by the constant 0 compiled to a trap (SIGILL) */
static int fpe_ref(const void *a) { (void)a; raise(SIGFPE); return 0; }
static int ill_ref(const void *a) { (void)a; __builtin_trap(); }
static int sb_ref(const void *a) { return fz_spike_burst_reference(a); }
/* spike_burst's reference with a division by each fired neuron's number,
   as an integer division by zero traps */
static int sb_div_ref(const void *a)
{
	const fz_spike_burst_ref_args *r = a;
	for (long long k = 0; k < r->n_F; k++)
		if (!r->t_fired[k]) raise(SIGFPE);
	return fz_spike_burst_reference(a);
}

/* indices of spike_burst's tensors by name: the test knows the spec, fuserun does not */
static int tensor_named(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, name)) return i;
	return 0;
}

/* fired indexes row_ptr (NP1 = N + 1 by the caller's contract), row_ptr
   is a CSR over col and w (S), col indexes N where a fired row reads it:
   what the reference must accept, found without the fusion's name or the
   tensors' */
static void csr_shape(const rt_case *c, const fz_artifact_info *info, const char *what)
{
	const int fired = tensor_named(info, "fired"), rp = tensor_named(info, "row_ptr"), col = tensor_named(info, "col");
	const long long F = c->size[0], NP1 = c->size[1], S = c->size[2], N = c->size[3];
	int ok = 1, sorted = 1;
	long long top_col = 0, top_rp = 0;
	for (long long k = 0; k < F; k++) ok &= c->t[fired].iref[k] >= 0 && c->t[fired].iref[k] + 1 < NP1;
	for (long long k = 0; k < NP1; k++) {
		ok &= c->t[rp].iref[k] >= 0 && c->t[rp].iref[k] <= S;
		sorted &= !k || c->t[rp].iref[k] >= c->t[rp].iref[k - 1];
		if (c->t[rp].iref[k] > top_rp) top_rp = c->t[rp].iref[k];
	}
	for (long long k = 0; k < S; k++)
		if (c->t[col].iref[k] > top_col) top_col = c->t[col].iref[k];
	/* a synapse no fired row reaches is never read, by the reference or the kernel: any value will do */
	for (long long k = 0; ok && k < F; k++)
		for (long long s = c->t[rp].iref[c->t[fired].iref[k]]; s < c->t[rp].iref[c->t[fired].iref[k] + 1]; s++)
			ok &= s < S && c->t[col].iref[s] >= 0 && c->t[col].iref[s] < N;
	char name[200], detail[200];
	snprintf(name, sizeof name, "%s: fired, row_ptr and the col read in range, row_ptr nondecreasing, col and row_ptr over most of N and S", what);
	snprintf(detail, sizeof detail, "in range %d, sorted %d, largest col %lld of N = %lld, row_ptr %lld of S = %lld", ok, sorted,
	         top_col, N, top_rp, S);
	check(ok && sorted && top_col >= N / 2 && top_rp >= S / 2, name, detail);
}

/* a reference that accepts anything: what a values line gives is then all
   that bounds the inputs */
static int any_ref(const void *a) { (void)a; return 0; }

/* min, max and whether tensor i's values are nondecreasing */
static void int_stats(const rt_case *c, int i, long long *lo, long long *hi, int *sorted, int *zero)
{
	const rt_tensor *t = &c->t[i];
	*lo = *hi = t->iref[0], *sorted = 1, *zero = 0;
	for (long long k = 0; k < t->n; k++) {
		const long long x = t->iref[k];
		if (x < *lo) *lo = x;
		if (x > *hi) *hi = x;
		if (k && x < t->iref[k - 1]) *sorted = 0;
		if (!x) *zero = 1;
	}
}

/* Integer inputs with a values line (fusec's values NAME LO..HI
   [nondecreasing] [nonzero]): drawn from it, no search */
static void test_values_inputs(const fr_spec *sbspec)
{
	char err[FZ_ERRMSG_SIZE], p[4096], detail[300];
	rt_case c;
	fz_artifact_info a;
	long long lo, hi;
	int sorted, zero, rc;
	long long sizes[4] = {10, 101, 1000, 100}; /* F NP1 S N */
	/* ranges narrower than the dimensions: the inputs stay inside them (the
	   search drew col over all of 0..N-1 and row_ptr from 0) */
	const char *dir = copy_artifact("spike_burst", "values_narrow");
	edit(path2(p, dir, "spike_burst.manifest"), "values col 0..N-1", "values col 3..N-5", 0);
	edit(p, "values row_ptr 0..S nondecreasing", "values row_ptr 7..S-3 nondecreasing", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: narrowed lines verify", err)) {
		const int col = tensor_named(&a, "col"), rp = tensor_named(&a, "row_ptr"), fired = tensor_named(&a, "fired");
		rc = rt_case_init(&c, &a, sbspec, sizes, 5, err);
		if (check(!rc, "values: a case from narrowed lines, its reference accepts it", err)) {
			int_stats(&c, col, &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "col in %lld..%lld", lo, hi);
			check(lo >= 3 && hi <= 95 && lo <= 5 && hi >= 93, "values col 3..N-5: every col inside 3..95, both ends reached", detail);
			int_stats(&c, rp, &lo, &hi, &sorted, &zero);
			const long long last = c.t[rp].iref[c.t[rp].n - 1];
			snprintf(detail, sizeof detail, "row_ptr[0] %d, in %lld..%lld, sorted %d, last %lld", c.t[rp].iref[0], lo, hi, sorted, last);
			check(c.t[rp].iref[0] == 7 && sorted && hi <= 997 && last >= 997 - 30,
			      "values row_ptr 7..S-3 nondecreasing: sorted, first 7, last near and at most 997", detail);
			int_stats(&c, fired, &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "fired in %lld..%lld", lo, hi);
			check(lo >= 0 && hi <= 99, "values fired 0..NP1-2: inside 0..99", detail);
		}
		rt_case_free(&c);
		/* one seed is no proof: a few more, each inside its ranges */
		int inside = 1;
		for (unsigned long long seed = 100; seed < 110 && inside; seed++) {
			inside = !rt_case_init(&c, &a, sbspec, sizes, seed, err);
			int_stats(&c, col, &lo, &hi, &sorted, &zero), inside &= lo >= 3 && hi <= 95;
			int_stats(&c, rp, &lo, &hi, &sorted, &zero), inside &= sorted && lo == 7 && hi <= 997;
			rt_case_free(&c);
		}
		check(inside, "values: ten more seeds, each inside its ranges", err);
		fz_artifact_info_free(&a);
	}
	/* nonzero: never 0, negatives too (the search tried 0..m-1, then 1..m-1:
	   with a reference that accepts anything it kept the 0) */
	fr_spec any = *sbspec;
	any.reference = any_ref;
	dir = copy_artifact("spike_burst", "values_nonzero");
	edit(path2(p, dir, "spike_burst.manifest"), "values fired 0..NP1-2", "values fired -3..3 nonzero", 1);
	long long many[4] = {1000, 101, 1000, 100};
	if (check(!fz_artifact_verify(p, &a, err), "values: a nonzero line verifies", err)) {
		rc = rt_case_init(&c, &a, &any, many, 3, err);
		if (check(!rc, "values: a case from a nonzero line", err)) {
			int_stats(&c, tensor_named(&a, "fired"), &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "fired in %lld..%lld, a zero %d", lo, hi, zero);
			check(!zero && lo == -3 && hi == 3, "values fired -3..3 nonzero: never 0, both ends drawn", detail);
		}
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	/* nonzero: never -1 either while the line holds another value (the
	   most negative integer divided by -1 overflows: a trap); -1 alone is drawn */
	edit(p, "values fired -3..3 nonzero", "values fired -1..1 nonzero", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: a nonzero line -1..1 verifies", err)) {
		rc = rt_case_init(&c, &a, &any, many, 3, err);
		if (check(!rc, "values: a case from a nonzero line -1..1", err)) {
			int_stats(&c, tensor_named(&a, "fired"), &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "fired in %lld..%lld", lo, hi);
			check(lo == 1 && hi == 1, "values fired -1..1 nonzero: every one 1 (no -1, no 0)", detail);
		}
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	edit(p, "values fired -1..1 nonzero", "values fired -1..-1 nonzero", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: a nonzero line -1..-1 verifies", err)) {
		rc = rt_case_init(&c, &a, &any, many, 3, err);
		if (!rc) int_stats(&c, tensor_named(&a, "fired"), &lo, &hi, &sorted, &zero);
		check(!rc && lo == -1 && hi == -1, "values fired -1..-1 nonzero: -1, all it holds", err);
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	/* nondecreasing and nonzero from 0: sorted, starting at 1 */
	dir = copy_artifact("spike_burst", "values_sorted_nonzero");
	edit(path2(p, dir, "spike_burst.manifest"), "values row_ptr 0..S nondecreasing", "values row_ptr -2..S nondecreasing nonzero", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: a nondecreasing nonzero line verifies", err)) {
		rc = rt_case_init(&c, &a, &any, many, 3, err);
		if (check(!rc, "values: a case from a nondecreasing nonzero line", err)) {
			const int rp = tensor_named(&a, "row_ptr");
			int_stats(&c, rp, &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "row_ptr[0] %d, in %lld..%lld, sorted %d, a zero %d", c.t[rp].iref[0], lo, hi, sorted, zero);
			check(c.t[rp].iref[0] == -2 && sorted && !zero && hi <= 1000, "values row_ptr -2..S nondecreasing nonzero: sorted from -2, no 0",
			      detail);
		}
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	/* a range that holds nothing at these sizes, or nothing an i32 can hold: refused, saying which */
	dir = copy_artifact("spike_burst", "values_empty");
	edit(path2(p, dir, "spike_burst.manifest"), "values col 0..N-1", "values col 5..N-1", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: 5..N-1 verifies", err)) {
		long long small[4] = {10, 101, 1000, 3};
		rc = rt_case_init(&c, &a, &any, small, 3, err);
		check(rc && strstr(err, "col: values 5..N-1 hold nothing at these sizes (5..2)"), "values 5..N-1 at N = 3: refused, saying so", err);
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	edit(p, "values col 5..N-1", "values col N+2147483647..N+2147483647", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: N+2147483647..N+2147483647 verifies", err)) {
		rc = rt_case_init(&c, &a, &any, sizes, 3, err);
		check(rc && strstr(err, "col: values N+2147483647..N+2147483647") && strstr(err, "nothing fuserun can draw into i32"),
		      "values past i32 at these sizes: refused, saying so", err);
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
	/* within the type: a range past it is cut to it (a subset of what is valid) */
	edit(p, "values col N+2147483647..N+2147483647", "values col N+2147483000..N+2147483647", 1);
	if (check(!fz_artifact_verify(p, &a, err), "values: N+2147483000..N+2147483647 verifies", err)) {
		rc = rt_case_init(&c, &a, &any, sizes, 3, err);
		if (check(!rc, "values partly past i32: a case", err)) {
			int_stats(&c, tensor_named(&a, "col"), &lo, &hi, &sorted, &zero);
			snprintf(detail, sizeof detail, "col in %lld..%lld", lo, hi);
			check(lo >= 2147483100 && hi <= 2147483647, "values partly past i32: cut to i32", detail);
		}
		rt_case_free(&c);
		fz_artifact_info_free(&a);
	}
}

/* Integer inputs without a domain or a values line (a manifest of a fusec
   that wrote none): values the reference accepts, found by trying ranges
   on it; nothing by the fusion's name */
static void test_free_integers(const fr_spec *sbspec)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	rt_case c;
	fz_artifact_info nv;
	const char *dir = copy_artifact("spike_burst", "no_values");
	edit(path2(p, dir, "spike_burst.manifest"), "values fired 0..NP1-2\n", "", 0);
	edit(p, "values row_ptr 0..S nondecreasing\n", "", 0);
	edit(p, "values col 0..N-1\n", "", 1);
	if (!check(!fz_artifact_verify(p, &nv, err), "spike_burst without values lines verifies", err)) return;
	const fz_artifact_info *sb = &nv;
	/* the same artifact under another name: fuserun special-cased spike_burst by name */
	fz_artifact_info lif = *sb;
	lif.fusion = "lif_step";
	long long sizes[4] = {5, 51, 500, 50}; /* F NP1 S N */
	int rc = rt_case_init(&c, &lif, sbspec, sizes, 5, err);
	if (check(!rc && !rt_case_reference(&c, err), "spike_burst renamed: inputs its reference accepts (0..99 was a bad gather)", err))
		csr_shape(&c, &lif, "spike_burst renamed");
	rt_case_free(&c);
	long long big[4] = {1000, 10001, 100000, 10000};
	rc = rt_case_init(&c, sb, sbspec, big, 5, err);
	if (check(!rc && !rt_case_reference(&c, err), "spike_burst at F=1000, N=10000, S=100000", err))
		csr_shape(&c, sb, "spike_burst at F=1000, N=10000, S=100000");
	rt_case_free(&c);
	/* sizes the caller's contract (NP1 = N + 1) does not hold: the runtime
	   cannot know it, and the reference accepts what it is given */
	long long nocsr[4] = {10, 100, 1000, 100};
	rc = rt_case_init(&c, sb, sbspec, nocsr, 3, err);
	check(!rc && !rt_case_reference(&c, err), "spike_burst with NP1 = N: inputs its reference accepts, no contract by name", err);
	rt_case_free(&c);
	/* an integer input that divides: 0 traps, so the values found exclude it */
	fr_spec div = *sbspec;
	div.reference = sb_div_ref;
	long long many[4] = {1000, 101, 1000, 100};
	rc = rt_case_init(&c, &lif, &div, many, 3, err);
	int zero = 0;
	for (long long k = 0; !rc && k < 1000; k++) zero |= c.t[tensor_named(&lif, "fired")].iref[k] == 0;
	check(!rc && !zero && !rt_case_reference(&c, err), "an integer divisor without a domain: values without 0 (0..99 trapped)", err);
	rt_case_free(&c);
	/* a reference that traps whatever it gets: refused, naming the inputs and the trap */
	div.reference = ill_ref;
	rc = rt_case_init(&c, &lif, &div, many, 3, err);
	check(rc && strstr(err, "lif_step: no values of its integer inputs without a domain (fired, row_ptr, col)") &&
	          strstr(err, "it crashed (SIGILL"), "no range accepted: refused, naming the inputs and why", err);
	rt_case_free(&c);
	fz_artifact_info_free(&nv);
}

void test_compare(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	fz_artifact_info kl, sb;
	if (fz_artifact_verify(path2(p, gen_dir, "kl_divergence.manifest"), &kl, err) ||
	    fz_artifact_verify(path2(p, gen_dir, "spike_burst.manifest"), &sb, err)) {
		check(0, "compare: load manifests", err);
		return;
	}
	fr_spec klspec = {"kl_divergence", "", sizeof(fz_kl_divergence_args), sizeof(fz_kl_divergence_ref_args), kl_ref, {0}, {0}, NULL, ""};
	fr_spec sbspec = {"spike_burst", "", sizeof(fz_spike_burst_args), sizeof(fz_spike_burst_ref_args), sb_ref, {0}, {0}, NULL, ""};
	rt_case c;
	long long n = 1000;
	int rc = rt_case_init(&c, &kl, &klspec, &n, 7, err);
	if (check(!rc && !rt_case_reference(&c, err), "a kl_divergence case and its reference", err)) {
		int pos = 1;
		for (int k = 0; k < 1000; k++) pos &= ((float *)c.t[0].host)[k] > 0 && ((float *)c.t[1].host)[k] > 0;
		check(pos && c.args[3] == 0 && c.bytes_moved == 8004, "inputs positive where logarithms need it, args laid out", NULL);
		float out = (float)c.t[2].ref[0];
		void *got[4] = {0, 0, &out, 0};
		rt_result r;
		rt_compare(&c, 2, got, &r);
		check(r.score <= 1 && r.tolerance == 1e-4, "the reference rounded to f32 passes", NULL);
		out = (float)(c.t[2].ref[0] * (1 + 1e-3));
		rt_compare(&c, 2, got, &r);
		check(r.score > 1, "an error of 1e-3 fails a reduction's 1e-4", NULL);
		memset(&out, 0xff, 4);
		rt_compare(&c, 2, got, &r);
		check(isinf(r.score) && r.at == 0, "a poisoned (never written) output fails", NULL);
		c.t[2].ref[0] = NAN;
		rt_compare(&c, 2, got, &r);
		check(isinf(r.score) && r.ref_nan, "a NaN reference fails, even against a NaN (poisoned) output", NULL);
	}
	rt_case_free(&c);

	/* a reference that traps ends its own process, not fuserun's: a refusal
	   naming the signal (rt_case_init runs it on the inputs it draws) */
	fr_spec trap = klspec;
	trap.reference = fpe_ref;
	rc = rt_case_init(&c, &kl, &trap, &n, 7, err);
	check(rc && strstr(err, "kl_divergence failed: it crashed (SIGFPE: an integer division by zero"),
	      "a reference that traps with SIGFPE is refused, saying so", err);
	rt_case_free(&c);
	trap.reference = ill_ref;
	rc = rt_case_init(&c, &kl, &trap, &n, 7, err);
	check(rc && strstr(err, "it crashed (SIGILL: a trap"), "a reference that traps with SIGILL is refused, saying so", err);
	rt_case_free(&c);

	/* element by element: a NaN on either side fails; an infinity in the
	   reference is matched exactly and is no scale for the others */
	{
		fz_tensor_info yi = {.name = "y", .type = "f32", .elem_bytes = 4, .rank = 1, .by = "map", .role = FZ_OUTPUT};
		double ref[3] = {INFINITY, 1.0, -2.0};
		float out[3] = {INFINITY, 1.5f, -2.0f};
		rt_tensor yt = {.ti = &yi, .n = 3, .bytes = 12, .ref = ref};
		rt_case yc = {.t = &yt};
		void *yg[1] = {out};
		rt_result r;
		rt_compare(&yc, 0, yg, &r);
		check(r.score > 1 && r.at == 1, "beside an infinite reference, an element off by 0.5 still fails", NULL);
		out[1] = 1.0f;
		rt_compare(&yc, 0, yg, &r);
		check(r.score == 0, "equal infinities and equal values pass", NULL);
		out[0] = -INFINITY;
		rt_compare(&yc, 0, yg, &r);
		check(isinf(r.score) && r.at == 0, "an infinity of the other sign fails", NULL);
		out[0] = INFINITY, out[2] = NAN;
		rt_compare(&yc, 0, yg, &r);
		check(isinf(r.score) && r.at == 2, "a NaN output fails", NULL);
		out[2] = -2.0f, ref[1] = NAN, out[1] = NAN;
		rt_compare(&yc, 0, yg, &r);
		check(isinf(r.score) && r.ref_nan && r.at == 1, "a NaN output against a NaN reference fails", NULL);
	}

	/* domain=LO..HI on a param line: the inputs come from it, not from the name */
	const char *dir = copy_artifact("kl_divergence", "domain_inputs");
	edit(path2(p, dir, "kl_divergence.manifest"), "param q input f32 N by=input domain=9.9999999999999995e-07..1.0", "param q input f32 N by=input domain=2..2.5", 0);
	edit(p, "param p input f32 N by=input domain=9.9999999999999995e-07..1.0", "param p input f32 N by=input domain=-1e-3..-1e-4", 1);
	fz_artifact_info kd;
	if (check(!fz_artifact_verify(p, &kd, err), "a manifest with domains verifies", err)) {
		rc = rt_case_init(&c, &kd, &klspec, &n, 11, err);
		int in = !rc;
		for (int k = 0; in && k < 1000; k++) {
			float q = ((float *)c.t[0].host)[k], pv = ((float *)c.t[1].host)[k];
			in &= q >= 2 && q <= 2.5f && pv >= -1e-3f && pv <= -1e-4f && c.t[0].ref[k] == q;
		}
		check(in, "inputs drawn from each parameter's domain", err);
		rt_case_free(&c);
		fz_artifact_info_free(&kd);
	}

	/* without domains, a name says nothing: fuserun gave q and p positive
	   values and eps, decay, vth, vreset, lr, nf fixed ones by name */
	dir = copy_artifact("kl_divergence", "kl_no_domain");
	edit(path2(p, dir, "kl_divergence.manifest"), "param q input f32 N by=input domain=9.9999999999999995e-07..1.0",
	     "param q input f32 N by=input", 0);
	edit(p, "param p input f32 N by=input domain=9.9999999999999995e-07..1.0", "param p input f32 N by=input", 1);
	if (check(!fz_artifact_verify(p, &kd, err), "kl_divergence without domains verifies", err)) {
		rc = rt_case_init(&c, &kd, &klspec, &n, 7, err);
		int neg = 0;
		for (int k = 0; !rc && k < 1000; k++) neg += c.t[0].ref[k] < 0 && c.t[1].ref[k] < 0;
		check(!rc && neg > 100, "inputs named q and p without a domain are not made positive by their names", err);
		rt_case_free(&c);
		fz_artifact_info_free(&kd);
	}
	dir = copy_artifact("spike_burst", "sb_no_domain");
	edit(path2(p, dir, "spike_burst.manifest"), "param decay input f32 - by=input domain=0.5..0.94999999999999996",
	     "param decay input f32 - by=input", 0);
	edit(p, "param vth input f32 - by=input domain=0.5..1.5", "param vth input f32 - by=input", 0);
	edit(p, "param vreset input f32 - by=input domain=-0.5..0.0", "param vreset input f32 - by=input", 1);
	long long sizes[4] = {10, 101, 1000, 100}; /* F NP1 S N */
	if (check(!fz_artifact_verify(p, &kd, err), "spike_burst without domains verifies", err)) {
		const int vth = tensor_named(&kd, "vth"), vreset = tensor_named(&kd, "vreset"), decay = tensor_named(&kd, "decay");
		rc = rt_case_init(&c, &kd, &sbspec, sizes, 3, err);
		char detail[200];
		snprintf(detail, sizeof detail, "decay %g, vth %g, vreset %g", rc ? 0 : c.t[decay].ref[0], rc ? 0 : c.t[vth].ref[0],
		         rc ? 0 : c.t[vreset].ref[0]);
		int in = 1;
		for (int i = 0; !rc && i < 3; i++) {
			const double x = c.t[i == 0 ? decay : i == 1 ? vth : vreset].ref[0];
			in &= x > 0.5 && x < 1.5;
		}
		check(!rc && in && c.t[vth].ref[0] != 1.0, "scalars without a domain drawn in (0.5, 1.5), not by name (vth 1, vreset 0, decay 0.9)",
		      rc ? err : detail);
		rt_case_free(&c);
		fz_artifact_info_free(&kd);
	}
	rc = rt_case_init(&c, &sb, &sbspec, sizes, 3, err);
	if (check(!rc && !rt_case_reference(&c, err), "a spike_burst case and its reference", err)) {
		int spikes = -1, vnext = -1, count = -1;
		for (int i = 0; i < sb.ntensors; i++) {
			if (!strcmp(sb.tensors[i].name, "spikes")) spikes = i;
			if (!strcmp(sb.tensors[i].name, "v_next")) vnext = i;
			if (!strcmp(sb.tensors[i].name, "nspikes")) count = i;
		}
		int32_t nref = c.t[count].iref[0], list[100], cnt = nref;
		float v[100];
		for (int k = 0; k < 100; k++) v[k] = (float)c.t[vnext].ref[k];
		for (int k = 0; k < nref; k++) list[k] = c.t[spikes].iref[nref - 1 - k]; /* another order */
		void *got[32] = {0};
		got[spikes] = list, got[count] = &cnt, got[vnext] = v;
		rt_result r;
		rt_compare(&c, spikes, got, &r);
		check(nref > 0 && r.as_set && r.score <= 1, "a compacted list in another order passes (as a set)", NULL);
		rt_compare(&c, count, got, &r);
		check(r.score <= 1 && r.tolerance == 0, "its count passes, exactly", NULL);
		cnt = nref - 1;
		rt_compare(&c, spikes, got, &r);
		check(r.score > 1, "a list with a wrong count fails", NULL);
		cnt = nref, list[0] = list[0] == 0 ? 1 : 0;
		rt_compare(&c, spikes, got, &r);
		check(r.score > 1, "a list with a wrong element fails", NULL);
		rt_compare(&c, vnext, got, &r);
		check(r.score <= 1 && r.tolerance == 1e-5, "a map output within 1e-5 passes", NULL);
	}
	rt_case_free(&c);
	/* with its values lines, as generated: spike_burst renamed, and at sizes its contract (NP1 = N + 1) does not hold */
	fz_artifact_info lif = sb;
	lif.fusion = "lif_step";
	rc = rt_case_init(&c, &lif, &sbspec, sizes, 5, err);
	if (check(!rc && !rt_case_reference(&c, err), "spike_burst renamed, from its values lines", err))
		csr_shape(&c, &lif, "spike_burst renamed, from its values lines");
	rt_case_free(&c);
	long long nocsr[4] = {10, 100, 1000, 100};
	rc = rt_case_init(&c, &sb, &sbspec, nocsr, 3, err);
	check(!rc, "spike_burst with NP1 = N, from its values lines", err);
	rt_case_free(&c);
	test_values_inputs(&sbspec);
	test_free_integers(&sbspec);
	fz_artifact_info_free(&kl), fz_artifact_info_free(&sb);
}
