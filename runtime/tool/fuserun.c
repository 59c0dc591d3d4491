/* fuserun: lists, validates and times fusec artifacts.
 *   fuserun list ARTIFACT [--json]
 *   fuserun validate ARTIFACT --size N=... [--seed S] [--device D] [--json] [-v]
 *   fuserun bench ARTIFACT --size N=... [--reps R] [--seed S] [--device D] [--json]
 * ARTIFACT is a .manifest path, or a fusion name found as generated/NAME.manifest.
 * Exit status: 0 ok, 1 a mismatch (validate) or a refused artifact (list),
 * 2 a usage error, no GPU or driver, or any other failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static void usage(FILE *f)
{
	fputs("usage: fuserun list ARTIFACT [--json]\n"
	      "       fuserun validate ARTIFACT --size NAME=VALUE[,NAME=VALUE...]... [--seed S] [--device D] [--json] [-v]\n"
	      "       fuserun bench ARTIFACT --size NAME=VALUE... [--reps R] [--seed S] [--device D] [--json]\n"
	      "ARTIFACT: a fusec .manifest, or a fusion name (generated/NAME.manifest).\n"
	      "list verifies the artifact (no GPU needed) and prints its kernels, parameters, targets and plan.\n"
	      "validate runs the fused and unfused op lists on random inputs, outputs poisoned first, and\n"
	      "compares each output with the float64 reference; bench times them (median of R >= 1 runs,\n"
	      "default 100, after 10 warm-ups) against the device's copy bandwidth.\n"
	      "Exit: 0 ok, 1 mismatch or refused artifact, 2 usage error, no GPU/driver or other failure.\n"
	      "FUSERUN_LIBCUDA names the driver library to load instead of libcuda.so.1.\n",
	      f);
}

/* "N=10,M=20" into o */
static int add_sizes(fr_opts *o, const char *arg)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", arg);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '='), *end;
		if (!eq || eq == tok || eq - tok >= 64 || o->nsize == MAX_SIZE_ARGS) return -1;
		long long v = strtoll(eq + 1, &end, 10);
		if (*end || end == eq + 1) return -1;
		memcpy(o->size_name[o->nsize], tok, (size_t)(eq - tok));
		o->size_name[o->nsize][eq - tok] = 0;
		o->size_value[o->nsize++] = v;
	}
	return 0;
}

static char artifact_path[4096];

/* a manifest path, or generated/NAME.manifest for a bare fusion name */
static const char *find_artifact(const char *arg)
{
	if (access(arg, F_OK) == 0 || strchr(arg, '/') || strstr(arg, ".manifest")) return arg;
	snprintf(artifact_path, sizeof artifact_path, "generated/%s.manifest", arg);
	return access(artifact_path, F_OK) == 0 ? artifact_path : arg;
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
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!strcmp(a, "--json")) o.json = 1;
		else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o.verbose = 1;
		else if ((!strcmp(a, "--size") || !strcmp(a, "-s")) && val) {
			if (add_sizes(&o, val)) goto bad;
			i++;
		} else if (!strncmp(a, "--size=", 7)) {
			if (add_sizes(&o, a + 7)) goto bad;
		} else if (!strcmp(a, "--seed") && val) {
			o.seed = strtoull(val, &end, 0), i++;
			if (*end) goto bad;
		} else if (!strcmp(a, "--reps") && val) {
			o.reps = (int)strtol(val, &end, 10), i++;
			if (*end || o.reps < 1) goto bad;
		} else if (!strcmp(a, "--device") && val) {
			o.device = (int)strtol(val, &end, 10), i++;
			if (*end || o.device < 0) goto bad;
		} else if (a[0] != '-' && strchr(a, '=')) {
			if (add_sizes(&o, a)) goto bad;
		} else if (a[0] != '-' && !o.artifact) {
			o.artifact = find_artifact(a);
		} else {
			goto bad;
		}
		continue;
	bad:
		fprintf(stderr, "fuserun: bad argument '%s'%s\n", a, val && a[0] == '-' ? " (or its value)" : "");
		usage(stderr);
		return EXIT_ERROR;
	}
	if (!o.artifact) {
		fprintf(stderr, "fuserun %s: no artifact given\n", cmd);
		usage(stderr);
		return EXIT_ERROR;
	}
	return run(&o);
}
