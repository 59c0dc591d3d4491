/* fusec: command line. Exit status: 0 success, 1 errors in a spec, an
 * input file or an output that cannot be written, 2 bad usage, 3 internal
 * failure (a bug: NVRTC rejecting generated CUDA, memory exhausted). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "runtime/fuserun.h" /* FZ_TARGETS: the targets the runtime accepts */
#include "artifact/artifact.h"
#include "core/die.h"
#include "emit/emit.h"
#include "front/frontend.h"
#include "plan/plan.h"
#include "version.h"

enum { EMIT_NONE, EMIT_AST, EMIT_IR, EMIT_EXPLAIN, EMIT_SCHEDULE, EMIT_CUDA };

/* one of the targets the runtime accepts (FZ_TARGETS) */
static int known_target(const char *a)
{
	size_t len = strlen(a);
	for (const char *s = FZ_TARGETS; *s; s += strcspn(s, " "), s += *s == ' ')
		if (len && strcspn(s, " ") == len && !strncmp(s, a, len)) return 1;
	return 0;
}

/* the same path, or two names of one existing file */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b)) return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void usage(FILE *f)
{
	fputs("usage: fusec [options] FILE.fuse...\n"
	      "\n"
	      "Checks .fuse specs and compiles them to fused CUDA kernels.\n"
	      "\n"
	      "options:\n"
	      "  --check            parse and check only (the default)\n"
	      "  --emit=ast         print the syntax tree\n"
	      "  --emit=ir          print the checked program\n"
	      "  --emit=schedule    print the schedule of each variant, for the first --arch\n"
	      "  --emit=cuda        print the CUDA, for the first --arch (no NVRTC)\n"
	      "  --explain          print the fusion plan and why stages did or did not fuse\n"
	      "  -o DIR, --out-dir=DIR\n"
	      "                     write artifacts DIR/<fusion>.*: CUDA, PTX per target,\n"
	      "                     header, float64 reference C and manifest (DIR is created;\n"
	      "                     each file is replaced atomically, the manifest last)\n"
	      "  --arch=sm_80,sm_90 PTX targets, each once: sm_80, sm_90, sm_90a (default all three)\n"
	      "  -MD -MF FILE       also write a make depfile (its folder is created)\n"
	      "  --max-errors=N     stop printing after N errors (default 50, 0 = all)\n"
	      "  -h, --help         this text\n"
	      "  --version          fusec's version\n"
	      "\n"
	      "exit status: 0 ok, 1 errors in a spec or a file that cannot be read or written,\n"
	      "2 bad usage, 3 internal failure\n",
	      f);
}

int main(int argc, char **argv)
{
	int emit = EMIT_NONE, max_errors = 50, nfiles = 0;
	const char *out_dir = NULL, *depfile = NULL;
	int want_dep = 0;
	const char *archs[8] = {"sm_80", "sm_90", "sm_90a"};
	int narch = 3;
	char *arch_buf = NULL;
	const char **files = calloc((size_t)argc, sizeof *files);
	if (!files) return 3;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			free(files);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("fusec %s\n", FUSEC_VERSION);
			free(files);
			return 0;
		} else if (!strcmp(a, "--check")) {
			emit = EMIT_NONE;
		} else if (!strcmp(a, "--emit=ast")) {
			emit = EMIT_AST;
		} else if (!strcmp(a, "--emit=ir")) {
			emit = EMIT_IR;
		} else if (!strcmp(a, "--emit=schedule")) {
			emit = EMIT_SCHEDULE;
		} else if (!strcmp(a, "--emit=cuda")) {
			emit = EMIT_CUDA;
		} else if (!strcmp(a, "--explain")) {
			emit = EMIT_EXPLAIN;
		} else if (!strncmp(a, "--out-dir=", 10) || !strcmp(a, "-o")) {
			if (a[1] == 'o' && i + 1 >= argc) {
				fputs("fusec: error: -o needs a directory\n", stderr);
				free(files);
				return 2;
			}
			out_dir = a[1] == 'o' ? argv[++i] : a + 10;
			if (!*out_dir) {
				fputs("fusec: error: the output directory is empty\n", stderr);
				free(files), free(arch_buf);
				return 2;
			}
			if (strlen(out_dir) > FUSEC_OUT_DIR_MAX) {
				fprintf(stderr, "fusec: error: the output directory's path is longer than %d bytes\n", FUSEC_OUT_DIR_MAX);
				free(files), free(arch_buf);
				return 2;
			}
		} else if (!strcmp(a, "-MD")) {
			want_dep = 1;
		} else if (!strcmp(a, "-MF")) {
			if (i + 1 >= argc) {
				fputs("fusec: error: -MF needs a file\n", stderr);
				free(files);
				return 2;
			}
			depfile = argv[++i];
			if (!*depfile || strlen(depfile) >= FUSEC_PATH_MAX) {
				fputs("fusec: error: -MF needs a file name of at most 4095 bytes\n", stderr);
				free(files), free(arch_buf);
				return 2;
			}
		} else if (!strncmp(a, "--arch=", 7)) {
			free(arch_buf);
			arch_buf = strdup(a + 7);
			narch = 0;
			for (char *t = strtok(arch_buf, ","); t; t = strtok(NULL, ",")) {
				if (narch == 8) {
					fputs("fusec: error: --arch takes at most 8 targets\n", stderr);
					free(files), free(arch_buf);
					return 2;
				}
				archs[narch++] = t;
			}
			for (int k = 0; k < narch; k++) {
				if (!known_target(archs[k])) {
					fprintf(stderr, "fusec: error: bad target '%s' (expected one of: %s)\n", archs[k], FZ_TARGETS);
					free(files), free(arch_buf);
					return 2;
				}
				for (int j = 0; j < k; j++)
					if (!strcmp(archs[j], archs[k])) {
						fprintf(stderr, "fusec: error: --arch names %s twice\n", archs[k]);
						free(files), free(arch_buf);
						return 2;
					}
			}
			if (!narch) {
				fputs("fusec: error: --arch needs at least one target\n", stderr);
				free(files), free(arch_buf);
				return 2;
			}
		} else if (!strncmp(a, "--max-errors=", 13)) {
			char *end;
			long v = strtol(a + 13, &end, 10);
			if (!isdigit((unsigned char)a[13]) || *end || v > 1000000) { /* strtol would take ' 5' and '+5' */
				fprintf(stderr, "fusec: error: bad value in '%s'\n", a);
				free(files);
				return 2;
			}
			max_errors = (int)v;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "fusec: error: unknown option '%s'\n", a);
			fputs("fusec: try 'fusec --help'\n", stderr);
			free(files);
			return 2;
		} else {
			files[nfiles++] = a;
		}
	}
	if (!nfiles) {
		fputs("fusec: error: no input files\n", stderr);
		fputs("fusec: try 'fusec --help'\n", stderr);
		free(files);
		return 2;
	}
	if ((want_dep || depfile) && !(want_dep && depfile && out_dir)) {
		fputs("fusec: error: -MD and -MF FILE go together, with -o DIR\n", stderr);
		free(files), free(arch_buf);
		return 2;
	}
	for (int i = 0; depfile && i < nfiles; i++)
		if (same_file(depfile, files[i])) {
			fprintf(stderr, "fusec: error: -MF %s is an input spec: refusing to overwrite it\n", depfile);
			free(files), free(arch_buf);
			return 2;
		}
	artifact_set_specs(files, nfiles);
	/* the depfile is made in memory and written atomically at the end */
	char *dep_text = NULL;
	size_t dep_len = 0;
	FILE *dep = NULL;
	if (depfile) dep = xmemstream(&dep_text, &dep_len);
	int failed = 0, internal = 0;
	for (int i = 0; i < nfiles; i++) {
		FrontEnd fe = {0};
		die_set_spec(files[i]);
		if (source_load(&fe.src, files[i], stderr)) {
			failed = 1;
			continue;
		}
		int errors = frontend_check(&fe, stderr, max_errors);
		if (errors) {
			if (max_errors && errors > max_errors)
				fprintf(stderr, "%s: %d errors in all (%d not shown)\n", files[i], errors, errors - max_errors);
			failed = 1;
		} else if (out_dir) {
			ArtifactOpts o = {out_dir, archs, narch, dep};
			int rc = artifact_write(&fe, &o);
			failed |= rc == ARTIFACT_USER_ERROR, internal |= rc == ARTIFACT_INTERNAL_ERROR;
		}
		if (errors) {
		} else if (emit == EMIT_AST) {
			ast_print(&fe.ast, fe.root, stdout);
		} else if (emit == EMIT_IR) {
			ir_print(&fe.mod, stdout);
		} else if (emit == EMIT_EXPLAIN || emit == EMIT_SCHEDULE || emit == EMIT_CUDA) {
			int tgt = target_lookup(archs[0]);
			Target target = tgt < 0 ? TGT_SM_80 : (Target)tgt;
			for (int f = 0; f < fe.mod.nfusion; f++) {
				Schedule fu, un;
				plan_build(&fe.mod, f, 1, target, &fu);
				plan_build(&fe.mod, f, 0, target, &un);
				if (emit == EMIT_EXPLAIN) {
					plan_explain(&fe.mod, f, &fu, stdout);
				} else if (emit == EMIT_SCHEDULE) {
					sched_print(&fe.mod, &fu, stdout);
					sched_print(&fe.mod, &un, stdout);
				} else {
					emit_cuda_file(&fe.mod, &fu, &un, "/* fusec --emit=cuda */\n", stdout);
				}
				sched_free(&fu), sched_free(&un);
			}
		}
		frontend_free(&fe);
	}
	if (dep) {
		if (fclose(dep)) die("out of memory");
		char *slash = strrchr(depfile, '/');
		if (slash && slash != depfile) {
			*slash = 0;
			if (artifact_make_dirs(depfile)) failed = 1;
			*slash = '/';
		}
		if (!failed && artifact_write_file(depfile, dep_text, dep_len)) failed = 1;
		free(dep_text);
	}
	free(files), free(arch_buf);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fputs("fusec: error: cannot write the output\n", stderr);
		failed = 1;
	}
	return failed ? 1 : internal ? 3 : 0;
}
