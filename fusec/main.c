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
#include "cuda/cuda.h"
#include "front/frontend.h"
#include "plan/plan.h"
#include "plan/tune.h"
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
	      "  --explain          print the fusion plan and why stages did or did not fuse, the\n"
	      "                     bytes each kernel moves fused and unfused, and with -o each\n"
	      "                     kernel's registers (ptxas -v)\n"
	      "  --size=N=4096,...  --explain's bytes also as numbers at these sizes\n"
	      "  -o DIR, --out-dir=DIR\n"
	      "                     write artifacts DIR/<fusion>.*: CUDA, PTX per target,\n"
	      "                     header, float64 reference C and manifest (DIR is created;\n"
	      "                     each file is replaced atomically, the manifest last)\n"
	      "  --arch=sm_80,sm_90 PTX targets, each once: sm_80, sm_90, sm_90a (default all three),\n"
	      "                     sm_100, sm_120 (Blackwell: assembled, not yet run on one)\n"
	      "  -MD -MF FILE       also write a make depfile (its folder is created)\n"
	      "  --max-errors=N     stop printing after N errors (default 50, 0 = all)\n"
	      "  --tune=FILE        take measured kernel parameters from a tuning table\n"
	      "                     (tune/table.txt; written by make tune on a GPU)\n"
	      "  -h, --help         this text\n"
	      "  --version          fusec's version\n"
	      "\n"
	      "exit status: 0 ok, 1 errors in a spec or a file that cannot be read or written,\n"
	      "2 bad usage, 3 internal failure\n",
	      f);
}

typedef struct Opts {
	int emit, max_errors, nfiles;
	const char *out_dir, *depfile;
	const char *tune; /* --tune=FILE */
	int want_dep;
	const char *archs[8];
	int narch;
	char *arch_buf;
	const char **files;
	char *size_buf;           /* --size=NAME=V,...: split in place */
	const char *size_name[16];
	long long size_value[16];
	int nsize;
} Opts;

/* --size=NAME=V,...: 0, or 2 after saying why */
static int parse_sizes(Opts *o, const char *list)
{
	free(o->size_buf);
	if (!(o->size_buf = strdup(list))) return fputs("fusec: error: out of memory\n", stderr), 2;
	o->nsize = 0;
	for (char *t = strtok(o->size_buf, ","); t; t = strtok(NULL, ",")) {
		char *eq = strchr(t, '='), *end;
		long long v = eq && isdigit((unsigned char)eq[1]) ? strtoll(eq + 1, &end, 10) : 0;
		if (!eq || eq == t || v < 1 || *end || o->nsize == 16)
			return fprintf(stderr, "fusec: error: bad size '%s' in --size (NAME=N, N >= 1, at most 16)\n", t), 2;
		*eq = 0;
		o->size_name[o->nsize] = t, o->size_value[o->nsize++] = v;
	}
	if (!o->nsize) return fputs("fusec: error: --size needs NAME=N\n", stderr), 2;
	return 0;
}

/* --arch=LIST: 0, or 2 after saying why */
static int parse_archs(Opts *o, const char *list)
{
	free(o->arch_buf);
	o->arch_buf = strdup(list);
	o->narch = 0;
	for (char *t = strtok(o->arch_buf, ","); t; t = strtok(NULL, ",")) {
		if (o->narch == 8) {
			fputs("fusec: error: --arch takes at most 8 targets\n", stderr);
			return 2;
		}
		o->archs[o->narch++] = t;
	}
	for (int k = 0; k < o->narch; k++) {
		if (!known_target(o->archs[k])) {
			fprintf(stderr, "fusec: error: bad target '%s' (expected one of: %s)\n", o->archs[k], FZ_TARGETS);
			return 2;
		}
		for (int j = 0; j < k; j++)
			if (!strcmp(o->archs[j], o->archs[k])) {
				fprintf(stderr, "fusec: error: --arch names %s twice\n", o->archs[k]);
				return 2;
			}
	}
	if (!o->narch) {
		fputs("fusec: error: --arch needs at least one target\n", stderr);
		return 2;
	}
	return 0;
}

/* -o DIR or --out-dir=DIR (a: the option, next: the argument after it) */
static int parse_out_dir(Opts *o, const char *a, const char *next)
{
	if (a[1] == 'o' && !next) {
		fputs("fusec: error: -o needs a directory\n", stderr);
		return 2;
	}
	o->out_dir = a[1] == 'o' ? next : a + 10;
	if (!*o->out_dir) {
		fputs("fusec: error: the output directory is empty\n", stderr);
		return 2;
	}
	if (strlen(o->out_dir) > FUSEC_OUT_DIR_MAX) {
		fprintf(stderr, "fusec: error: the output directory's path is longer than %d bytes\n", FUSEC_OUT_DIR_MAX);
		return 2;
	}
	return 0;
}

static const struct { const char *flag; int emit; } emit_flags[] = {
	{"--check", EMIT_NONE}, {"--emit=ast", EMIT_AST}, {"--emit=ir", EMIT_IR},
	{"--emit=schedule", EMIT_SCHEDULE}, {"--emit=cuda", EMIT_CUDA}, {"--explain", EMIT_EXPLAIN},
};

/* One argument, at argv[*i]: 0 (go on), 2 (bad usage, said), or -1 (done:
   --help or --version printed). */
static int parse_arg(Opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *next = *i + 1 < argc ? argv[*i + 1] : NULL;
	for (unsigned k = 0; k < sizeof emit_flags / sizeof emit_flags[0]; k++)
		if (!strcmp(a, emit_flags[k].flag)) return o->emit = emit_flags[k].emit, 0;
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), -1;
	if (!strcmp(a, "--version")) return printf("fusec %s\n", FUSEC_VERSION), -1;
	if (!strncmp(a, "--out-dir=", 10) || !strcmp(a, "-o")) {
		*i += a[1] == 'o' && next;
		return parse_out_dir(o, a, next);
	}
	if (!strcmp(a, "-MD")) return o->want_dep = 1, 0;
	if (!strcmp(a, "-MF")) {
		if (!next) return fputs("fusec: error: -MF needs a file\n", stderr), 2;
		o->depfile = argv[++*i];
		if (!*o->depfile || strlen(o->depfile) >= FUSEC_PATH_MAX)
			return fputs("fusec: error: -MF needs a file name of at most 4095 bytes\n", stderr), 2;
		return 0;
	}
	if (!strncmp(a, "--arch=", 7)) return parse_archs(o, a + 7);
	if (!strncmp(a, "--tune=", 7)) {
		if (!a[7]) return fputs("fusec: error: --tune= needs a file\n", stderr), 2;
		o->tune = a + 7;
		return 0;
	}
	if (!strncmp(a, "--size=", 7)) return parse_sizes(o, a + 7);
	if (!strncmp(a, "--max-errors=", 13)) {
		char *end;
		long v = strtol(a + 13, &end, 10);
		if (!isdigit((unsigned char)a[13]) || *end || v > 1000000) /* strtol would take ' 5' and '+5' */
			return fprintf(stderr, "fusec: error: bad value in '%s'\n", a), 2;
		o->max_errors = (int)v;
		return 0;
	}
	if (a[0] == '-' && a[1]) {
		fprintf(stderr, "fusec: error: unknown option '%s'\n", a);
		fputs("fusec: try 'fusec --help'\n", stderr);
		return 2;
	}
	o->files[o->nfiles++] = a;
	return 0;
}

/* path names a file fusec writes in out_dir: NAME.cu, NAME.h, NAME_ref.c,
   NAME.manifest or NAME.TARGET.ptx right in it (the fusions' names are not
   known before the specs are read, so any such name there) */
static int own_output(const char *path, const char *out_dir)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	static const char *const suffix[] = {".cu", ".h", "_ref.c", ".manifest", ".ptx"};
	int ours = 0;
	for (size_t k = 0; k < sizeof suffix / sizeof *suffix; k++) {
		const size_t n = strlen(base), sn = strlen(suffix[k]);
		ours |= n > sn && !strcmp(base + n - sn, suffix[k]);
	}
	if (!ours) return 0;
	char *dir = strdup(slash ? path : ".");
	char *od = strdup(out_dir);
	if (!dir || !od) die("out of memory");
	if (slash) dir[slash == path ? 1 : slash - path] = 0;
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = 0;
	for (size_t n = strlen(od); n > 1 && od[n - 1] == '/'; n--) od[n - 1] = 0;
	const int same = same_file(dir, od);
	free(dir), free(od);
	return same;
}

/* the options together: 0, or 2 after saying why */
static int check_opts(const Opts *o)
{
	if (!o->nfiles) {
		fputs("fusec: error: no input files\n", stderr);
		fputs("fusec: try 'fusec --help'\n", stderr);
		return 2;
	}
	if (o->nsize && o->emit != EMIT_EXPLAIN) {
		fputs("fusec: error: --size goes with --explain\n", stderr);
		return 2;
	}
	if ((o->want_dep || o->depfile) && !(o->want_dep && o->depfile && o->out_dir)) {
		fputs("fusec: error: -MD and -MF FILE go together, with -o DIR\n", stderr);
		return 2;
	}
	for (int i = 0; o->depfile && i < o->nfiles; i++)
		if (same_file(o->depfile, o->files[i])) {
			fprintf(stderr, "fusec: error: -MF %s is an input spec: refusing to overwrite it\n", o->depfile);
			return 2;
		}
	if (o->depfile && own_output(o->depfile, o->out_dir)) {
		fprintf(stderr, "fusec: error: -MF %s names one of fusec's outputs in %s (NAME.cu, NAME.h, NAME_ref.c, NAME.manifest, "
		        "NAME.TARGET.ptx): refusing to overwrite it\n", o->depfile, o->out_dir);
		return 2;
	}
	return 0;
}

/* --explain's numbers: bytes, and registers where this run compiled the
   first target (-o: the spill check ran ptxas -v on it) */
static void explain_cost(const Opts *o, const Module *m, const FusionPlan *fp)
{
	const Schedule *v[2] = {&fp->fused, &fp->unfused};
	int *regs[2] = {NULL, NULL}, *spill[2] = {NULL, NULL}, counted = 0;
	for (int i = 0; i < 2; i++) {
		regs[i] = calloc((size_t)v[i]->nk + 1, sizeof(int)), spill[i] = calloc((size_t)v[i]->nk + 1, sizeof(int));
		if (!regs[i] || !spill[i]) die("out of memory");
		for (int k = 0; k < v[i]->nk; k++) {
			regs[i][k] = artifact_registers(v[i]->k[k].name, o->archs[0], &spill[i][k]);
			counted |= regs[i][k] >= 0;
		}
	}
	ExplainCost c = {o->size_name, o->size_value, o->nsize, {regs[0], regs[1]}, {spill[0], spill[1]}, o->archs[0], NULL};
	if (!counted)
		c.no_regs = o->out_dir ? "not counted: no ptxas found ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH)"
		                       : "counted when fusec compiles: add -o DIR (ptxas -v on the first --arch's PTX)";
	if (!counted) c.regs[0] = c.regs[1] = c.spill[0] = c.spill[1] = NULL;
	plan_explain_cost(m, fp, &c, stdout);
	for (int i = 0; i < 2; i++) free(regs[i]), free(spill[i]);
}

/* --explain, --emit=schedule, --emit=cuda: each fusion planned for the first target */
static void print_plans(const Opts *o, const Module *m)
{
	int tgt = target_lookup(o->archs[0]);
	for (int f = 0; f < m->nfusion; f++) {
		FusionPlan fp;
		plan_fusion(m, f, tgt < 0 ? TGT_SM_80 : (Target)tgt, &fp);
		if (o->emit == EMIT_EXPLAIN) {
			plan_explain(m, f, &fp.fused, stdout);
			plan_explain_hints(m, f, &fp.fused, stdout);
			explain_cost(o, m, &fp);
		} else if (o->emit == EMIT_SCHEDULE) {
			sched_print(m, &fp.fused, stdout);
			sched_print(m, &fp.unfused, stdout);
		} else {
			cuda_file(m, &fp, "/* fusec --emit=cuda */\n", stdout);
		}
		plan_fusion_free(&fp);
	}
}

/* One spec through the pipeline: load, check, write the artifacts, print
   what was asked. Sets *failed (a user's error) or *internal. */
static void compile_spec(const Opts *o, const char *path, FILE *dep, int *failed, int *internal)
{
	FrontEnd fe = {0};
	die_set_spec(path);
	if (source_load(&fe.src, path, stderr)) {
		*failed = 1;
		return;
	}
	int errors = frontend_check(&fe, stderr, o->max_errors);
	if (errors) {
		if (o->max_errors && errors > o->max_errors)
			fprintf(stderr, "%s: %d errors in all (%d not shown)\n", path, errors, errors - o->max_errors);
		*failed = 1;
	} else {
		if (o->out_dir) {
			ArtifactOpts ao = {o->out_dir, o->archs, o->narch, dep, o->tune};
			int rc = artifact_write(&fe, &ao);
			*failed |= rc == ARTIFACT_USER_ERROR, *internal |= rc == ARTIFACT_INTERNAL_ERROR;
		}
		if (o->emit == EMIT_AST) ast_print(&fe.ast, fe.root, stdout);
		else if (o->emit == EMIT_IR) ir_print(&fe.mod, stdout);
		else if (o->emit != EMIT_NONE) print_plans(o, &fe.mod);
	}
	frontend_free(&fe);
}

/* the depfile, made in memory, written atomically at the end: 0, or 1 */
static int write_depfile(const char *depfile, char *text, size_t len, int failed)
{
	char *slash = strrchr(depfile, '/');
	if (slash && slash != depfile) {
		*slash = 0;
		if (artifact_make_dirs(depfile)) failed = 1;
		*slash = '/';
	}
	if (!failed && artifact_write_file(depfile, text, len)) failed = 1;
	return failed;
}

/* the architecture whose tuning entries an artifact takes: its newest
   target's GPU family (sm_90a's PTX runs on sm_90 GPUs), since all its
   targets share one .cu and one header (plan_tune.c) */
static const char *tune_arch(const Opts *o)
{
	static char best[16];
	int cc = -1;
	for (int i = 0; i < o->narch; i++) {
		const int c = atoi(o->archs[i] + 3); /* "sm_90a": 90; --arch checked them */
		if (c > cc) cc = c, snprintf(best, sizeof best, "sm_%d", c);
	}
	return best;
}

int main(int argc, char **argv)
{
	Opts o = {.emit = EMIT_NONE, .max_errors = 50, .archs = {"sm_80", "sm_90", "sm_90a"}, .narch = 3};
	int rc = 0;
	if (!(o.files = calloc((size_t)argc, sizeof *o.files))) return 3;
	for (int i = 1; i < argc && !rc; i++) rc = parse_arg(&o, argc, argv, &i);
	if (!rc) rc = check_opts(&o);
	if (rc) {
		free(o.files), free(o.arch_buf), free(o.size_buf);
		return rc < 0 ? 0 : rc;
	}
	/* the tuning table, read once: every plan looks its kernels up in it */
	TuneTable table = {0};
	if (o.tune) {
		if (tune_load(&table, o.tune, stderr)) {
			tune_free(&table), free(o.files), free(o.arch_buf), free(o.size_buf);
			return 1;
		}
		plan_tune_use(&table, tune_arch(&o));
	}
	/* the pipeline, spec by spec: front end, planner, writers (artifact/) */
	artifact_set_specs(o.files, o.nfiles);
	char *dep_text = NULL;
	size_t dep_len = 0;
	FILE *dep = o.depfile ? xmemstream(&dep_text, &dep_len) : NULL;
	int failed = 0, internal = 0;
	for (int i = 0; i < o.nfiles; i++) compile_spec(&o, o.files[i], dep, &failed, &internal);
	if (dep) {
		if (fclose(dep)) die("out of memory");
		failed = write_depfile(o.depfile, dep_text, dep_len, failed);
		free(dep_text);
	}
	free(o.files), free(o.arch_buf), free(o.size_buf);
	plan_tune_use(NULL, NULL), tune_free(&table);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fputs("fusec: error: cannot write the output\n", stderr);
		failed = 1;
	}
	return failed ? 1 : internal ? 3 : 0;
}
