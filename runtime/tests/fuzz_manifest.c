/* libFuzzer target: manifests through fz_artifact_verify and, when one is
 * accepted, `fuserun validate` (cmd_validate) under the fake libcuda.
 *
 * Input: one mode byte, then the manifest text. Mode bits repair what a
 * random mutation almost always breaks, so that the fuzzer gets past the
 * checks that would otherwise stop every input at the door:
 *   1  append the manifest-sha256 line for the text (as a re-hashing editor would)
 *   2  rewrite the layout line to the fingerprint of the text's lines
 *   4  rewrite target/file hashes to those of the files in the fuzz folder
 *   8  run fuserun validate on an accepted manifest (sizes from the next byte)
 * The manifest is written as NAME.manifest when its fusion line names one of
 * FUSIONS (the runtime refuses a manifest named otherwise), else fz.manifest.
 * The fuzz folder holds, per fusion of FUSIONS, PTX files of just the
 * generated kernels' .entry lines (what the fake driver reads), tiny .cu and
 * _ref.c files and a NAME.h of just its layout line (small files hash fast);
 * validate uses the generated headers compiled into this program
 * (fr_spec_load below) with refso.c's checks (speccheck.c).
 * Environment: FUZZ_FAKECUDA (default build/rt/libfakecuda.so),
 * FUZZ_GENERATED (default generated: the PTX read at start). Seeds and
 * the bounded run: runtime/tests/fuzz.sh. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h" /* fuserun.h first: the generated headers' typed launchers need it */
#include "sha256.h"
#include "tensors.h"
#include "tool.h"
#include "kl_divergence.h"
#include "softmax.h"
#include "spike_burst.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[512];

#define FUSIONS(X) X(kl_divergence) X(spike_burst) X(softmax)
#define FUNCS(n)                                                                                                      \
	static int ref_##n(const void *a) { return fz_##n##_reference(a); }                                             \
	static unsigned long long fs_##n(void *a, unsigned long long b, int sm) { return fz_##n##_fused_scratch(a, b, sm); } \
	static unsigned long long us_##n(void *a, unsigned long long b, int sm) { return fz_##n##_unfused_scratch(a, b, sm); } \
	static int fo_##n(const void *a, int sm, fz_op *o, int max) { return fz_##n##_fused_ops(a, sm, o, max); }        \
	static int uo_##n(const void *a, int sm, fz_op *o, int max) { return fz_##n##_unfused_ops(a, sm, o, max); }
FUSIONS(FUNCS)

/* the fuzzer's stand-in for refso.c: the same checks, headers compiled in */
int fr_spec_load(const fz_artifact_info *info, fr_spec *s, char *err)
{
	memset(s, 0, sizeof *s);
	s->name = info->fusion;
#define TRY(n)                                                                                                         \
	if (!strcmp(info->fusion, #n)) {                                                                                   \
		s->reference = ref_##n, s->scratch[0] = fs_##n, s->scratch[1] = us_##n, s->ops[0] = fo_##n, s->ops[1] = uo_##n; \
		if (fr_spec_check(info, s, FZ_##n##_LAYOUT, sizeof(fz_##n##_args), sizeof(fz_##n##_ref_args), err))          \
			return -1;                                                                                             \
		return fr_spec_check_shapes(info, fz_##n##_ref_shapes, err);                                                   \
	}
	FUSIONS(TRY)
	snprintf(err, FZ_ERRMSG_SIZE, "fuzz: no header for %s", info->fusion);
	return -1;
}
void fr_spec_unload(fr_spec *s) { memset(s, 0, sizeof *s); }

static void put(const char *name, const char *data, size_t n)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
		perror(p);
		exit(2);
	}
}

/* the fuzz folder goes when the fuzzer exits */
static void remove_dir(void)
{
	DIR *d = opendir(dir);
	char p[1000];
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) snprintf(p, sizeof p, "%s/%s", dir, e->d_name), unlink(p);
	if (d) closedir(d);
	rmdir(dir);
}

/* a small PTX for arch with the kernels (.entry lines and their parameter
   sizes) of the generated one, which is all the fake driver reads */
static void small_ptx(const char *gen, const char *name, const char *arch, const char *out)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s.%s.ptx", gen, name, strcmp(arch, "sm_90a") ? arch : "sm_90");
	FILE *f = fopen(p, "rb");
	if (!f) {
		perror(p);
		exit(2);
	}
	static char buf[4 << 20], ptx[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f), k = 0;
	buf[n] = 0;
	fclose(f);
	k += (size_t)snprintf(ptx + k, sizeof ptx - k, "// fuzz\n.version 8.0\n.target %s\n", arch);
	for (const char *e = strstr(buf, ".entry "); e && k < sizeof ptx - 400; e = strstr(e + 1, ".entry ")) {
		char kname[130];
		long bytes = 0;
		if (sscanf(e + 7, "%128[A-Za-z0-9_]", kname) != 1) continue;
		const char *q = strstr(e, "_param_0[");
		if (q) bytes = atol(q + 9);
		k += (size_t)snprintf(ptx + k, sizeof ptx - k, ".visible .entry %s(\n\t.param .align 8 .b8 %s_param_0[%ld]\n)\n{\n\tret;\n}\n",
		                      kname, kname, bytes);
	}
	put(out, ptx, k);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	rt_reference_in_process = 1; /* a sanitizer's report in the reference is a finding, not a refusal */
	const char *fake = getenv("FUZZ_FAKECUDA"), *gen = getenv("FUZZ_GENERATED");
	char cwd[400];
	if (!getcwd(cwd, sizeof cwd)) exit(2);
	char fakepath[900];
	snprintf(fakepath, sizeof fakepath, "%s/%s", cwd, fake ? fake : "build/rt/libfakecuda.so");
	setenv("FUSERUN_LIBCUDA", fake && fake[0] == '/' ? fake : fakepath, 1);
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/fuzz-manifest-XXXXXX", tmp && *tmp && strlen(tmp) < 300 ? tmp : "/tmp");
	if (!mkdtemp(dir)) exit(2);
	atexit(remove_dir);
	static const char *const names[] = {
#define NAME(n) #n,
		FUSIONS(NAME)};
	static const char *const layouts[] = {
#define LAYOUT(n) FZ_##n##_LAYOUT,
		FUSIONS(LAYOUT)};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char f[300];
		static const char *const archs[] = {"sm_80", "sm_90", "sm_90a"};
		for (int a = 0; a < 3; a++) {
			snprintf(f, sizeof f, "%s.%s.ptx", names[i], archs[a]);
			small_ptx(gen ? gen : "generated", names[i], archs[a], f);
		}
		snprintf(f, sizeof f, "%s.cu", names[i]);
		put(f, "// fuzz\n", 8);
		/* small files hash fast: the header needs only its layout line
		   (verify reads it); validate uses the headers compiled in */
		char h[300];
		snprintf(f, sizeof f, "%s.h", names[i]);
		int n = snprintf(h, sizeof h, "/* fuzz */\n#define FZ_%s_LAYOUT \"%s\"\n", names[i], layouts[i]);
		put(f, h, (size_t)n);
		snprintf(f, sizeof f, "%s_ref.c", names[i]);
		put(f, "// fuzz\n", 8);
	}
	/* fuserun validate prints its report: run the fuzzer with -close_fd_mask=3 (fuzz.sh) */
	return 0;
}

/* the text's layout fingerprint, as the runtime defines it */
static void layout_of(const char *text, size_t n, char hex[65])
{
	fr_sha256 h;
	fr_sha256_init(&h);
	for (size_t i = 0; i < n;) {
		size_t l = 0;
		while (i + l < n && text[i + l] != '\n') l++;
		const char *s = text + i;
		if ((l > 7 && !memcmp(s, "fusion ", 7)) || (l > 5 && !memcmp(s, "size ", 5)) || (l > 6 && !memcmp(s, "param ", 6)) ||
		    (l > 5 && !memcmp(s, "temp ", 5))) {
			size_t k = 0;
			while (k + 4 <= l && memcmp(s + k, " by=", 4)) k++;
			fr_sha256_update(&h, s, k + 4 <= l ? k : l);
			fr_sha256_update(&h, "\n", 1);
		}
		i += l + 1;
	}
	unsigned char d[32];
	fr_sha256_final(&h, d);
	for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* the hash of dir/name, or 0 */
static int file_hash(const char *name, size_t n, char hex[65])
{
	char p[700];
	if (n == 0 || n > 100 || memchr(name, '/', n)) return 0;
	snprintf(p, sizeof p, "%s/%.*s", dir, (int)n, name);
	FILE *f = fopen(p, "rb");
	if (!f) return 0;
	static char buf[1 << 20];
	size_t got = fread(buf, 1, sizeof buf, f);
	fclose(f);
	fr_sha256_hex(buf, got, hex);
	return 1;
}

/* NAME.manifest for a text whose fusion line is one of FUSIONS, as fusec
   names it; else fz.manifest, which the name check refuses */
static const char *manifest_name(const char *text, size_t n)
{
	static const char *const names[] = {
#define NAME_OF(x) #x,
		FUSIONS(NAME_OF)};
	static char buf[100];
	for (size_t i = 0; i < n;) {
		size_t l = 0;
		while (i + l < n && text[i + l] != '\n') l++;
		for (size_t k = 0; l > 7 && !memcmp(text + i, "fusion ", 7) && k < sizeof names / sizeof names[0]; k++)
			if (l - 7 == strlen(names[k]) && !memcmp(text + i + 7, names[k], l - 7)) {
				snprintf(buf, sizeof buf, "%s.manifest", names[k]);
				return buf;
			}
		i += l + 1;
	}
	return "fz.manifest";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > (1 << 20)) return 0;
	int mode = data[0], sizes_byte = data[1];
	const char *in = (const char *)data + 2;
	size_t n = size - 2;
	char *text = malloc(n * 10 + 200), *o = text;
	/* copy line by line, repairing as the mode says */
	for (size_t i = 0; i < n;) {
		size_t l = 0;
		while (i + l < n && in[i + l] != '\n') l++;
		const char *s = in + i;
		char hex[65];
		if ((mode & 2) && l >= 7 && !memcmp(s, "layout ", 7)) {
			layout_of(in, n, hex);
			o += sprintf(o, "layout %s", hex);
		} else if ((mode & 4) && l > 64 && (!memcmp(s, "file ", 5) || !memcmp(s, "target ", 7)) && s[l - 65] == ' ') {
			size_t b = l - 65;
			while (b > 0 && s[b - 1] != ' ') b--;
			memcpy(o, s, l - 64), o += l - 64;
			if (file_hash(s + b, l - 65 - b, hex)) memcpy(o, hex, 64);
			else memcpy(o, s + l - 64, 64);
			o += 64;
		} else {
			memcpy(o, s, l), o += l;
		}
		if (i + l < n) *o++ = '\n';
		i += l + 1;
	}
	if (mode & 1) {
		if (o > text && o[-1] != '\n') *o++ = '\n';
		char hex[65];
		fr_sha256_hex(text, (size_t)(o - text), hex);
		o += sprintf(o, "manifest-sha256 %s\n", hex);
	}
	const char *name = manifest_name(text, (size_t)(o - text));
	put(name, text, (size_t)(o - text));
	free(text);

	char path[700], err[FZ_ERRMSG_SIZE];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fz_artifact_info info;
	int rc = fz_artifact_verify(path, &info, err);
	if (rc) {
		if (info.storage_ || info.ntensors || info.fusion) abort(); /* a refusal must leave info empty */
		return 0;
	}
	/* everything the verified info points to is readable and bounded */
	if (info.nsizes > FZ_MAX_SIZES || info.ntensors > FZ_MAX_TENSORS || info.nkernels > FZ_MAX_KERNELS ||
	    info.ntargets > FZ_MAX_TARGETS || info.nfiles > FZ_MAX_FILES || strlen(info.layout) != 64)
		abort();
	for (int i = 0; i < info.ntensors; i++)
		if (info.tensors[i].rank > FZ_MAX_RANK || strlen(info.tensors[i].name) > FZ_MAX_NAME) abort();
	/* the launch recipe (format 2) evaluated at small sizes: an error or an
	   op list, never a crash, an overflow or a wrap */
	long long sz[FZ_MAX_SIZES];
	fz_arg args[FZ_MAX_TENSORS];
	int nargs = 0;
	for (int i = 0; i < info.nsizes; i++) sz[i] = 1 + ((sizes_byte >> (i % 4)) & 7) * 13 + i;
	for (int t = 0; t < info.ntensors; t++) {
		if (info.tensors[t].role == FZ_TEMP) continue;
		fz_arg *a = &args[nargs++];
		memset(a, 0, sizeof *a);
		a->type = info.tensors[t].type, a->scalar = info.tensors[t].rank == 0 && info.tensors[t].role == FZ_INPUT;
		a->ptr = 4096ull * (unsigned long long)(t + 1);
	}
	for (int v = 0; v < 2; v++) {
		static fz_op ops[FZ_MAX_OPS];
		static unsigned char st[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
		unsigned long long bytes;
		int nops = 0;
		const char *variant = v ? "fused" : "unfused";
		if (!fz_recipe_scratch(&info, variant, sz, info.nsizes, 132, &bytes, err) &&
		    !fz_recipe_ops(&info, variant, sz, info.nsizes, 132, args, nargs, 1 << 20, st, info.args_size, ops, FZ_MAX_OPS, &nops, err) &&
		    (nops < 0 || nops > FZ_MAX_OPS))
			abort();
	}
	if (mode & 8) {
		static fr_opts opt;
		memset(&opt, 0, sizeof opt);
		opt.artifact = path, opt.seed = (unsigned long long)size, opt.reps = 1;
		for (int i = 0; i < info.nsizes; i++) {
			snprintf(opt.size_name[i], sizeof opt.size_name[i], "%s", info.sizes[i]);
			opt.size_value[i] = 1 + ((sizes_byte >> (i % 4)) & 7) * 13 + i; /* small and varied: 1 to 100 */
		}
		opt.nsize = info.nsizes;
		if (!strcmp(info.fusion, "spike_burst") && info.nsizes == 4) /* F NP1 S N: a valid CSR sometimes */
			opt.size_value[1] = opt.size_value[3] + (sizes_byte & 1), opt.size_value[2] = opt.size_value[3] * 3;
		cmd_validate(&opt);
	}
	fz_artifact_info_free(&info);
	return 0;
}
