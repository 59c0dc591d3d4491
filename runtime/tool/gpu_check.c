/* fuserun validate and bench: an artifact's fused and unfused op lists on
 * the GPU, through libfuserun, against the float64 reference and the
 * device's copy bandwidth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensors.h"
#include "tool.h"

/* the most ops a generated op list writes: kernels, memsets, one more */
enum { MAX_OPS = FZ_MAX_KERNELS + FZ_MAX_TENSORS + 1, WARMUPS = 10 };

typedef struct session {
	const fr_opts *o;
	fz_device *dev;
	fz_artifact *art;
	fz_stream *st;
	fz_event *e0, *e1;
	fz_device_props props;
	const fz_artifact_info *info;
	fz_artifact_info verified;   /* what the reference was compiled from */
	fr_spec spec;
	long long sizes[FZ_MAX_SIZES];
	char sizes_text[512];
	rt_case c;
	int have_case;
} session;

typedef struct variant {
	const char *name;
	uint64_t *args;
	fz_ptr scratch;
	fz_op ops[MAX_OPS];
	int nops, launches;
} variant;

static const char *const variant_name[2] = {"fused", "unfused"};

/* prints a library failure; EXIT_ERROR */
static int fail(const char *what, int rc, const char *msg)
{
	if (rc == FZ_ERR_NO_DRIVER || rc == FZ_ERR_NO_DEVICE) fprintf(stderr, "fuserun: no usable GPU: %s\n", msg);
	else fprintf(stderr, "fuserun: %s: %s (%s)\n", what, msg, fz_strerror(rc));
	return EXIT_ERROR;
}
#define DEV_CALL(s, call, what) do { int rc_ = (call); if (rc_) return fail(what, rc_, fz_device_error((s)->dev)); } while (0)

static void session_end(session *s)
{
	for (int i = 0; s->have_case && s->c.t && i < s->info->ntensors; i++) fz_free(s->dev, s->c.t[i].dev);
	if (s->have_case) rt_case_free(&s->c);
	fz_event_destroy(s->dev, s->e0), fz_event_destroy(s->dev, s->e1);
	fz_stream_destroy(s->dev, s->st);
	fz_artifact_unload(s->art);
	fz_device_close(s->dev);
	fr_spec_unload(&s->spec);
	fz_artifact_info_free(&s->verified);
}

static int session_start(session *s, const fr_opts *o)
{
	char err[FZ_ERRMSG_SIZE];
	memset(s, 0, sizeof *s);
	s->o = o;
	/* the artifact first: a refused one is reported even without a GPU */
	int rc = fz_artifact_verify(o->artifact, &s->verified, err);
	if (rc) return fail("artifact refused", rc, err);
	if (rt_check_domains(&s->verified, err)) return fprintf(stderr, "fuserun: %s\n", err), EXIT_ERROR;
	if (sizes_resolve(o, &s->verified, s->sizes)) return EXIT_ERROR;
	sizes_format(&s->verified, s->sizes, s->sizes_text, sizeof s->sizes_text);
	/* its header and reference, compiled from the verified files */
	if (fr_spec_load(&s->verified, &s->spec, err)) {
		fprintf(stderr, "fuserun: %s\n", err);
		return EXIT_ERROR;
	}
	const fr_spec *spec = &s->spec;

	if ((rc = fz_device_open(o->device, &s->dev, err))) return fail("cannot open the device", rc, err);
	DEV_CALL(s, fz_device_query(s->dev, &s->props), "fz_device_query");
	DEV_CALL(s, fz_artifact_load(s->dev, o->artifact, &s->art), "cannot load the artifact");
	s->info = fz_artifact_get_info(s->art);
	if (strcmp(s->info->manifest_sha256, s->verified.manifest_sha256)) {
		fprintf(stderr, "fuserun: %s changed while fuserun was starting\n", o->artifact);
		return EXIT_ERROR;
	}
	DEV_CALL(s, fz_stream_create(s->dev, &s->st), "fz_stream_create");
	DEV_CALL(s, fz_event_create(s->dev, &s->e0), "fz_event_create");
	DEV_CALL(s, fz_event_create(s->dev, &s->e1), "fz_event_create");

	/* the inputs, checked by the reference: validate and bench alike upload
	   and launch nothing on inputs it refuses */
	rc = rt_case_init(&s->c, s->info, spec, s->sizes, o->seed, err);
	s->have_case = 1;
	if (rc) {
		fprintf(stderr, "fuserun: %s\n", err);
		return EXIT_ERROR;
	}
	for (int i = 0; i < s->info->ntensors; i++) {
		rt_tensor *t = &s->c.t[i];
		if (t->ti->role == FZ_TEMP || (t->ti->role == FZ_INPUT && t->ti->rank == 0)) continue;
		DEV_CALL(s, fz_alloc(s->dev, t->bytes, &t->dev), "cannot allocate a tensor");
		s->c.args[i] = t->dev;
		if (t->ti->role == FZ_INPUT || t->ti->role == FZ_INOUT)
			DEV_CALL(s, fz_copy_to_device(s->dev, t->dev, t->host, t->bytes, NULL), "upload");
	}
	return EXIT_PASS;
}

/* --recipe: the same from the manifest's launch recipe (fz_recipe_ops, what
   fz_call runs), the arguments taken from the case's args */
static int recipe_start(session *s, variant *x)
{
	const fz_artifact_info *info = s->info;
	fz_arg a[FZ_MAX_TENSORS];
	int n = 0;
	for (int t = 0; t < info->ntensors; t++) {
		const fz_tensor_info *ti = &info->tensors[t];
		if (ti->role == FZ_TEMP) continue;
		memset(&a[n], 0, sizeof a[n]);
		a[n].type = ti->type, a[n].scalar = ti->rank == 0 && ti->role == FZ_INPUT, a[n].ptr = s->c.args[t];
		memcpy(ti->type[0] == 'i' ? (void *)&a[n].i : (void *)&a[n].f, &s->c.args[t], 8);
		n++;
	}
	unsigned long long need = 0;
	char err[FZ_ERRMSG_SIZE];
	int rc = fz_recipe_scratch(info, x->name, s->sizes, info->nsizes, s->props.sm_count, &need, err);
	if (rc) return fail("the launch recipe", rc, err);
	DEV_CALL(s, fz_alloc(s->dev, need, &x->scratch), "cannot allocate the scratch");
	DEV_CALL(s, fz_memset(s->dev, x->scratch, 0, need, NULL), "clearing the scratch");
	rc = fz_recipe_ops(info, x->name, s->sizes, info->nsizes, s->props.sm_count, a, n, x->scratch, x->args, info->args_size,
	                   x->ops, MAX_OPS, &x->nops, err);
	if (rc) return fail("the launch recipe", rc, err);
	for (int k = 0; k < x->nops; k++) x->launches += x->ops[k].kind == FZ_OP_LAUNCH;
	return EXIT_PASS;
}

/* the variant's args with its scratch placed, and its op list */
static int variant_start(session *s, int v, variant *x)
{
	const fr_spec *spec = s->c.spec;
	int sm = s->props.sm_count;
	memset(x, 0, sizeof *x);
	x->name = variant_name[v];
	x->args = malloc(s->info->args_size);
	if (!x->args) return fprintf(stderr, "fuserun: out of memory\n"), EXIT_ERROR;
	memcpy(x->args, s->c.args, s->info->args_size);
	if (s->o->recipe) return recipe_start(s, x);
	unsigned long long need = spec->scratch[v](x->args, 0, sm);
	DEV_CALL(s, fz_alloc(s->dev, need, &x->scratch), "cannot allocate the scratch");
	DEV_CALL(s, fz_memset(s->dev, x->scratch, 0, need, NULL), "clearing the scratch");
	spec->scratch[v](x->args, x->scratch, sm);
	x->nops = spec->ops[v](x->args, sm, x->ops, MAX_OPS);
	if (x->nops < 0) return fprintf(stderr, "fuserun: %s: more than %d ops\n", x->name, MAX_OPS), EXIT_ERROR;
	for (int k = 0; k < x->nops; k++) x->launches += x->ops[k].kind == FZ_OP_LAUNCH;
	return EXIT_PASS;
}

static void variant_end(session *s, variant *x)
{
	fz_free(s->dev, x->scratch);
	free(x->args);
}

static int run_once(session *s, variant *x)
{
	int rc = fz_run(s->art, x->ops, x->nops, x->args, s->info->args_size, s->st);
	return rc ? fail(x->name, rc, fz_artifact_error(s->art)) : EXIT_PASS;
}

/* ---- validate ---- */

typedef struct outcome {
	rt_result r[2][FZ_MAX_TENSORS];
	int nout;
} outcome;

static int validate_variant(session *s, variant *x, rt_result *res, int *nres)
{
	const fz_artifact_info *info = s->info;
	void *got[256] = {0};
	int rc = EXIT_PASS;
	for (int i = 0; i < info->ntensors && i < 256 && !rc; i++)
		if ((info->tensors[i].role == FZ_OUTPUT || info->tensors[i].role == FZ_INOUT) && !(got[i] = malloc(s->c.t[i].bytes)))
			rc = (fprintf(stderr, "fuserun: out of memory\n"), EXIT_ERROR);
	*nres = 0;
	for (int trial = 0; trial < 2 && !rc; trial++) { /* twice: the second run must find its counters reset */
		/* outputs poisoned; in-place ones get their input values again */
		for (int i = 0; i < info->ntensors && !rc; i++)
			if (got[i] && (info->tensors[i].role == FZ_INOUT
			                   ? fz_copy_to_device(s->dev, s->c.t[i].dev, s->c.t[i].host, s->c.t[i].bytes, s->st)
			                   : fz_memset(s->dev, s->c.t[i].dev, 0xff, s->c.t[i].bytes, s->st)))
				rc = fail("poisoning the outputs", FZ_ERR_CUDA, fz_device_error(s->dev));
		if (!rc) rc = run_once(s, x);
		if (!rc && fz_stream_sync(s->dev, s->st)) rc = fail(x->name, FZ_ERR_CUDA, fz_device_error(s->dev));
		for (int i = 0; i < info->ntensors && !rc; i++)
			if (got[i] && fz_copy_to_host(s->dev, got[i], s->c.t[i].dev, s->c.t[i].bytes, NULL))
				rc = fail("downloading the outputs", FZ_ERR_CUDA, fz_device_error(s->dev));
		int n = 0;
		for (int i = 0; i < info->ntensors && !rc && n < FZ_MAX_TENSORS; i++) {
			if (!got[i]) continue;
			rt_result r;
			rt_compare(&s->c, i, got, &r);
			if (trial == 0 || r.score > res[n].score || isnan(r.score)) res[n] = r;
			n++;
		}
		*nres = n;
	}
	for (int i = 0; i < 256; i++) free(got[i]);
	return rc;
}

static int passes(const rt_result *r) { return r->score <= 1; }

static void print_validate(session *s, const outcome *out, int ok)
{
	const fr_opts *o = s->o;
	if (o->json) {
		printf("{\"command\": \"validate\", \"fusion\": "), json_str(stdout, s->info->fusion);
		printf(", \"sizes\": {");
		for (int i = 0; i < s->info->nsizes; i++) printf("%s\"%s\": %lld", i ? ", " : "", s->info->sizes[i], s->sizes[i]);
		printf("}, \"device\": "), json_str(stdout, s->props.name);
		printf(", \"target\": \"%s\", \"seed\": %llu, \"variants\": [", fz_artifact_target(s->art), o->seed);
		for (int v = 0; v < 2; v++) {
			printf("%s{\"variant\": \"%s\", \"outputs\": [", v ? ", " : "", variant_name[v]);
			for (int k = 0; k < out->nout; k++) {
				const rt_result *r = &out->r[v][k];
				printf("%s{\"name\": ", k ? ", " : ""), json_str(stdout, r->name);
				printf(", \"type\": \"%s\", \"error\": ", r->type), json_num(stdout, r->error);
				printf(", \"tolerance\": "), json_num(stdout, r->tolerance);
				printf(", \"compared_as_set\": %s, \"reference_nan\": %s, \"ok\": %s}", r->as_set ? "true" : "false",
				       r->ref_nan ? "true" : "false", passes(r) ? "true" : "false");
			}
			printf("]}");
		}
		printf("], \"ok\": %s}\n", ok ? "true" : "false");
		return;
	}
	printf("validate %s (%s) on %s, %s PTX, seed %llu\n", s->info->fusion, s->sizes_text, s->props.name,
	       fz_artifact_target(s->art), o->seed);
	printf("  %-8s %-12s %-5s %-11s %-10s %s\n", "variant", "output", "type", "error", "tolerance", "result");
	for (int v = 0; v < 2; v++)
		for (int k = 0; k < out->nout; k++) {
			const rt_result *r = &out->r[v][k];
			printf("  %-8s %-12s %-5s %-11.3g %-10.3g %s%s", variant_name[v], r->name, r->type, r->error, r->tolerance,
			       passes(r) ? "ok" : "MISMATCH", r->as_set ? " (as a set)" : "");
			if ((!passes(r) || o->verbose) && r->at >= 0) printf("  worst at %lld: got %.9g, want %.9g", r->at, r->got, r->want);
			if (r->ref_nan) printf("  (the reference is NaN: inputs outside a function's domain? give the parameter domain=LO..HI)");
			printf("\n");
		}
	printf("%s %s\n", ok ? "PASS" : "FAIL", s->info->fusion);
}

int cmd_validate(const fr_opts *o)
{
	session s;
	int rc = session_start(&s, o);
	static outcome out; /* the reference ran on the inputs in session_start (rt_case_init) */
	for (int v = 0; v < 2 && !rc; v++) {
		variant x;
		rc = variant_start(&s, v, &x);
		if (!rc) rc = validate_variant(&s, &x, out.r[v], &out.nout);
		variant_end(&s, &x);
	}
	if (!rc) {
		int ok = 1;
		for (int v = 0; v < 2; v++)
			for (int k = 0; k < out.nout; k++) ok &= passes(&out.r[v][k]);
		print_validate(&s, &out, ok);
		rc = ok ? EXIT_PASS : EXIT_MISMATCH;
	}
	session_end(&s);
	return rc;
}

/* ---- bench ---- */

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

static int time_variant(session *s, variant *x, float *times, double *median)
{
	int rc = EXIT_PASS;
	for (int r = 0; r < WARMUPS && !rc; r++) rc = run_once(s, x);
	for (int r = 0; r < s->o->reps && !rc; r++) {
		if (fz_event_record(s->dev, s->e0, s->st)) return fail("fz_event_record", FZ_ERR_CUDA, fz_device_error(s->dev));
		rc = run_once(s, x);
		if (!rc && (fz_event_record(s->dev, s->e1, s->st) || fz_event_elapsed(s->dev, s->e0, s->e1, &times[r])))
			return fail("timing", FZ_ERR_CUDA, fz_device_error(s->dev));
	}
	if (rc) return rc;
	qsort(times, (size_t)s->o->reps, sizeof *times, cmp_float);
	int n = s->o->reps;
	*median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
	return EXIT_PASS;
}

/* device-to-device copy bandwidth (bytes read + written a second), or 0 */
static double copy_bandwidth(session *s)
{
	fz_ptr a = 0, b = 0;
	size_t n = (size_t)1 << 30;
	while (n >= ((size_t)64 << 20) && (fz_alloc(s->dev, n, &a) || fz_alloc(s->dev, n, &b))) {
		fz_free(s->dev, a), a = 0;
		n /= 2;
	}
	double bw = 0;
	if (a && b) {
		float best = INFINITY, ms;
		int ok = 1;
		for (int r = 0; r < 3 && ok; r++) ok = !fz_copy_on_device(s->dev, b, a, n, s->st);
		for (int r = 0; r < 10 && ok; r++) {
			ok = !fz_event_record(s->dev, s->e0, s->st) && !fz_copy_on_device(s->dev, b, a, n, s->st) &&
			     !fz_event_record(s->dev, s->e1, s->st) && !fz_event_elapsed(s->dev, s->e0, s->e1, &ms);
			if (ok && ms < best) best = ms;
		}
		if (ok && best > 0 && isfinite(best)) bw = 2.0 * (double)n / (best * 1e-3);
	}
	fz_free(s->dev, a), fz_free(s->dev, b);
	return bw;
}

int cmd_bench(const fr_opts *o)
{
	if (o->devices) return cmd_bench_devices(o);
	session s;
	int rc = session_start(&s, o);
	double ms[2] = {0, 0};
	int launches[2] = {0, 0};
	float *times = calloc((size_t)o->reps, sizeof *times);
	if (!times) rc = EXIT_ERROR;
	for (int v = 0; v < 2 && !rc; v++) {
		variant x;
		rc = variant_start(&s, v, &x);
		if (!rc) rc = time_variant(&s, &x, times, &ms[v]);
		launches[v] = x.launches;
		variant_end(&s, &x);
	}
	free(times);
	if (!rc) {
		double bw = copy_bandwidth(&s), bytes = s.c.bytes_moved;
		double floor_ms = bw > 0 ? bytes / bw * 1e3 : 0;
		double gbps[2], pct[2];
		for (int v = 0; v < 2; v++) {
			gbps[v] = ms[v] > 0 ? bytes / (ms[v] * 1e-3) / 1e9 : 0;
			pct[v] = ms[v] > 0 && floor_ms > 0 ? 100.0 * floor_ms / ms[v] : 0;
		}
		double speedup = ms[0] > 0 ? ms[1] / ms[0] : 0;
		if (o->json) {
			printf("{\"command\": \"bench\", \"fusion\": "), json_str(stdout, s.info->fusion);
			printf(", \"sizes\": {");
			for (int i = 0; i < s.info->nsizes; i++) printf("%s\"%s\": %lld", i ? ", " : "", s.info->sizes[i], s.sizes[i]);
			printf("}, \"device\": "), json_str(stdout, s.props.name);
			printf(", \"target\": \"%s\", \"reps\": %d, \"warmups\": %d, \"bytes\": %.0f, \"copy_gbps\": ",
			       fz_artifact_target(s.art), o->reps, WARMUPS, bytes);
			json_num(stdout, bw / 1e9), printf(", \"floor_ms\": "), json_num(stdout, floor_ms);
			for (int v = 0; v < 2; v++) {
				printf(", \"%s\": {\"median_ms\": ", variant_name[v]), json_num(stdout, ms[v]);
				printf(", \"gbps\": "), json_num(stdout, gbps[v]);
				printf(", \"pct_of_floor\": "), json_num(stdout, pct[v]);
				printf(", \"launches\": %d}", launches[v]);
			}
			printf(", \"speedup\": "), json_num(stdout, speedup), printf("}\n");
		} else {
			printf("bench %s (%s) on %s, %s PTX: median of %d runs after %d warm-ups\n", s.info->fusion, s.sizes_text,
			       s.props.name, fz_artifact_target(s.art), o->reps, WARMUPS);
			printf("  %-8s %8s %12s %10s %16s\n", "variant", "launches", "median ms", "GB/s", "% of copy floor");
			for (int v = 0; v < 2; v++)
				printf("  %-8s %8d %12.4f %10.1f %15.0f%%\n", variant_name[v], launches[v], ms[v], gbps[v], pct[v]);
			printf("  speed-up over unfused %.2fx; %.2f MB moved once; ", speedup, bytes / 1e6);
			if (bw > 0) printf("copy floor %.4f ms (device-to-device copy %.1f GB/s)\n", floor_ms, bw / 1e9);
			else printf("copy floor not measured (no memory for the copy buffers)\n");
		}
	}
	session_end(&s);
	return rc;
}
