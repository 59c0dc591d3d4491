/* fuserun: lists, validates and times fusec artifacts.
 *   fuserun list ARTIFACT [--json]
 *   fuserun validate ARTIFACT --size N=... [--seed S] [--device D] [--recipe] [--json] [-v]
 *   fuserun bench ARTIFACT --size N=... [--reps R] [--seed S] [--device D] [--devices N [--procs]] [--recipe] [--json]
 * ARTIFACT is a .manifest path, or a fusion name found as generated/NAME.manifest.
 * ARTIFACT may be any fusec artifact: validate and bench compile its header
 * and float64 reference with the system C compiler (refso.c).
 * Numbers on the command line are strict (digits only, in range, each size
 * and option once): anything else is a usage error, never a changed value.
 * Exit status: 0 ok, 1 a mismatch (validate) or a refused artifact (list),
 * 2 a usage error, a refused artifact (validate, bench: nothing was run),
 * no GPU or driver, no C compiler, or any other failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static void usage(FILE *f)
{
	fputs("usage: fuserun list ARTIFACT [--json]\n"
	      "       fuserun validate ARTIFACT --size NAME=VALUE[,NAME=VALUE...]... [--seed S] [--device D] [--recipe] [--json] [-v]\n"
	      "       fuserun bench ARTIFACT --size NAME=VALUE... [--reps R] [--seed S] [--device D] [--devices N [--procs]] [--recipe] [--json]\n"
	      "       fuserun --help | --version\n"
	      "ARTIFACT: a fusec .manifest, or a fusion name (generated/NAME.manifest).\n"
	      "list verifies the artifact (no GPU needed) and prints its kernels, parameters, targets and plan.\n"
	      "validate runs the fused and unfused op lists on random inputs, outputs poisoned first, and\n"
	      "compares each output with the float64 reference; bench times them (median of R >= 1 runs,\n"
	      "default 100, after 10 warm-ups) against the device's copy bandwidth; with --devices N the fused\n"
	      "variant sharded across devices D .. D+N-1 over its kernels' outermost size, beside 1 device\n"
	      "(runtime/README.md: which fusions can be sharded; FUSERUN_NCCL names libnccl); with --procs\n"
	      "one process per device, started by fuserun-launch (beside fuserun, or FUSERUN_LAUNCH) and\n"
	      "joined through NCCL, rank 0 reporting.\n"
	      "Exit: 0 ok; 1 a mismatch (validate) or a refused artifact (list); 2 a usage error, a refused\n"
	      "artifact (validate, bench), no GPU/driver, no C compiler or another failure.\n"
	      "validate and bench compile the artifact's header and reference with a C compiler\n"
	      "(FUSERUN_CC, else CC, else cc); inputs come from each parameter's domain=LO..HI\n"
	      "when the manifest gives one; integer inputs without one get values the reference\n"
	      "accepts (index ranges tried on it). FUSERUN_LIBCUDA names the driver library to load\n"
	      "instead of libcuda.so.1.\n",
	      f);
}

/* Strict numbers: decimal digits only (no sign, no spaces, no suffix), no
   more than max; anything else is a usage error, never a silent change. */
static int strict_u64(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	if (!*s) return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9') return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10) return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int usage_error(const char *fmt, const char *a, const char *b)
{
	fputs("fuserun: ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -1;
}

/* An option of another command is refused by name, not ignored: `list
   --size N=5` would otherwise look as if it had checked something at N=5. */
static int takes(int (*run)(const fr_opts *), const char *a)
{
	const int size = !strcmp(a, "--size") || !strcmp(a, "-s") || !strncmp(a, "--size=", 7) || (a[0] != '-' && strchr(a, '='));
	if (run == cmd_list)
		return !size && strcmp(a, "--seed") && strcmp(a, "--reps") && strcmp(a, "--device") && strcmp(a, "--devices") &&
		       strcmp(a, "--recipe") && strcmp(a, "--procs");
	if (run == cmd_validate) return strcmp(a, "--reps") && strcmp(a, "--devices") && strcmp(a, "--procs");
	return 1;
}

/* "N=10,M=20" into o: each name once in all --size options, values 1 to 2^62 */
static int add_sizes(fr_opts *o, const char *arg)
{
	if (!*arg) return usage_error("--size needs NAME=VALUE[,NAME=VALUE...]%s%s", "", "");
	for (const char *tok = arg; *tok; tok += *tok == ',') {
		size_t len = strcspn(tok, ","), nl = strcspn(tok, "=");
		char item[128];
		snprintf(item, sizeof item, "%.*s%s", (int)(len < 100 ? len : 100), tok, len < 100 ? "" : "...");
		if (nl >= len || nl == 0 || nl > FZ_MAX_NAME) return usage_error("bad size '%s' in --size %s (NAME=VALUE)", item, arg);
		char num[32];
		unsigned long long v;
		if (len - nl - 1 >= sizeof num) return usage_error("size '%s' out of range (1 to 2^62)%s", item, "");
		memcpy(num, tok + nl + 1, len - nl - 1), num[len - nl - 1] = 0;
		if (strict_u64(num, 1ull << 62, &v) || v == 0) return usage_error("size '%s' is not a number from 1 to 2^62%s", item, "");
		if (o->nsize == MAX_SIZE_ARGS) {
			fprintf(stderr, "fuserun: more than %d sizes\n", MAX_SIZE_ARGS);
			return -1;
		}
		for (int i = 0; i < o->nsize; i++)
			if (strlen(o->size_name[i]) == nl && !strncmp(o->size_name[i], tok, nl))
				return usage_error("size %s given twice%s", o->size_name[i], "");
		memcpy(o->size_name[o->nsize], tok, nl);
		o->size_name[o->nsize][nl] = 0;
		o->size_value[o->nsize++] = (long long)v;
		tok += len;
		if (*tok == ',' && !tok[1]) return usage_error("--size %s ends with a comma%s", arg, "");
	}
	return 0;
}

static char artifact_path[4096];

/* a manifest path, or generated/NAME.manifest for a bare fusion name (the
   path named when neither is there: where the help says a name is looked for) */
static const char *find_artifact(const char *arg)
{
	if (access(arg, F_OK) == 0 || strchr(arg, '/') || strstr(arg, ".manifest")) return arg;
	if (strlen(arg) > FZ_MAX_NAME || !*arg) return arg;
	snprintf(artifact_path, sizeof artifact_path, "generated/%s.manifest", arg);
	return artifact_path;
}

/* --NAME VALUE, once, strictly a number from lo to hi */
static int number_option(const char *name, const char *val, unsigned long long lo, unsigned long long hi, int *seen,
                         unsigned long long *out)
{
	if (!val) return usage_error("%s needs a value%s", name, "");
	if (*seen) return usage_error("%s given twice%s", name, "");
	*seen = 1;
	if (strict_u64(val, hi, out) || *out < lo) {
		char range[64];
		snprintf(range, sizeof range, "%llu to %llu", lo, hi);
		fprintf(stderr, "fuserun: %s '%s' is not a number from %s\n", name, val, range);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : EXIT_PASS;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("fuserun %s (artifact format %d, fusec %d.x)\n", FZ_RUNTIME_VERSION, FZ_ARTIFACT_FORMAT, FZ_ARTIFACT_MAJOR);
		return EXIT_PASS;
	}
	const char *cmd = argv[1];
	int (*run)(const fr_opts *) = !strcmp(cmd, "list") ? cmd_list : !strcmp(cmd, "validate") ? cmd_validate
	                            : !strcmp(cmd, "bench") ? cmd_bench : NULL;
	if (!run) {
		fprintf(stderr, "fuserun: unknown command '%s'\n", cmd);
		usage(stderr);
		return EXIT_ERROR;
	}
	static fr_opts o;
	o.reps = 100;
	o.seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
	int seen_seed = 0, seen_reps = 0, seen_device = 0, seen_devices = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long v = 0;
		int bad = 0;
		if (!takes(run, a)) bad = usage_error("%s takes no %s", cmd, strchr(a, '=') && a[0] != '-' ? "sizes" : a);
		else if (!strcmp(a, "--json")) o.json = 1;
		else if (!strcmp(a, "--recipe")) o.recipe = 1;
		else if (!strcmp(a, "--procs")) o.procs = 1;
		else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o.verbose = 1;
		else if (!strcmp(a, "--size") || !strcmp(a, "-s")) bad = !val ? usage_error("%s needs NAME=VALUE%s", a, "") : add_sizes(&o, val), i++;
		else if (!strncmp(a, "--size=", 7)) bad = add_sizes(&o, a + 7);
		else if (!strcmp(a, "--seed")) bad = number_option(a, val, 0, ~0ull, &seen_seed, &v), o.seed = v, i++;
		else if (!strcmp(a, "--reps")) bad = number_option(a, val, 1, 1000000, &seen_reps, &v), o.reps = (int)v, i++;
		else if (!strcmp(a, "--devices"))
			bad = number_option(a, val, 1, FZ_MAX_GROUP, &seen_devices, &v), o.devices = (int)v, i++;
		else if (!strcmp(a, "--device")) bad = number_option(a, val, 0, 1023, &seen_device, &v), o.device = (int)v, i++;
		else if (a[0] != '-' && strchr(a, '=')) bad = add_sizes(&o, a);
		else if (a[0] != '-' && !o.artifact) o.artifact = find_artifact(a);
		else bad = usage_error(a[0] == '-' ? "unknown option '%s'%s" : "a second artifact '%s'%s", a, "");
		if (bad) {
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (o.recipe && o.devices) {
		fprintf(stderr, "fuserun: --recipe and --devices: the sharded run uses the header's op lists\n");
		return EXIT_ERROR;
	}
	if (o.procs && !o.devices) {
		fprintf(stderr, "fuserun: --procs needs --devices N (the processes, one a device)\n");
		return EXIT_ERROR;
	}
	if (o.procs && !getenv("WORLD_SIZE") && o.artifact) return bench_relaunch(&o, argc, argv);
	if (!o.artifact) {
		fprintf(stderr, "fuserun %s: no artifact given\n", cmd);
		usage(stderr);
		return EXIT_ERROR;
	}
	return run(&o);
}
