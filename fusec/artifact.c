/* Artifacts: everything for one fusion generated in memory, then written
 * atomically next to each other (see write_all), the manifest last. */
#include "artifact.h"
#include "pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/fuserun.h" /* the manifest's limits and targets: one contract with the runtime */
#include "die.h"

#include "emit.h"
#include "ptx.h"
#include "plan.h"
#include "../runtime/sha256.h" /* one SHA-256 for fusec and the runtime */
#include "version.h"

typedef struct Buf {
	char *p;
	size_t n;
	FILE *f;
} Buf;

static void buf_open(Buf *b)
{
	b->p = NULL, b->n = 0;
	b->f = open_memstream(&b->p, &b->n);
	if (!b->f) die("out of memory");
}

static void buf_close(Buf *b) { fclose(b->f), b->f = NULL; }

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* ---- writing files atomically ----
 * Each output is written to a temporary file in its own folder (created
 * with O_EXCL, so never through a link), flushed to disk, then renamed over
 * the old one: a reader sees the old file or the new one, never a part, and
 * a failure (NVRTC on a later target, a full disk, a file-size limit)
 * leaves the old artifact whole. The manifest is renamed last. */

typedef struct OutFile {
	char path[FUSEC_PATH_MAX];
	char tmp[FUSEC_PATH_MAX + 16];
	const char *data;
	size_t n;
	int written;
} OutFile;

static void set_path(OutFile *o, const char *dir, const char *name)
{
	int n = snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof o->path) die("output path %.64s.../%s longer than %d bytes", dir, name, FUSEC_PATH_MAX);
}

static const char *const *spec_paths; /* every spec of this run, never to be overwritten */
static int nspec_paths;

void artifact_set_specs(const char *const *paths, int n) { spec_paths = paths, nspec_paths = n; }

/* 0, or -1 after saying why path may not be replaced: a link, not a
   regular file, or one of the specs */
static int replaceable(const char *path)
{
	struct stat st, sp;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT) return 0;
		fprintf(stderr, "fusec: error: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		fprintf(stderr, "fusec: error: %s: a symbolic link: refusing to write through or replace it\n", path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "fusec: error: %s: exists and is not a regular file\n", path);
		return -1;
	}
	for (int i = 0; i < nspec_paths; i++)
		if (stat(spec_paths[i], &sp) == 0 && sp.st_dev == st.st_dev && sp.st_ino == st.st_ino) {
			fprintf(stderr, "fusec: error: %s: is the spec %s: refusing to overwrite it with an output\n", path, spec_paths[i]);
			return -1;
		}
	return 0;
}

static int write_temp(OutFile *o, mode_t mode)
{
	const char *slash = strrchr(o->path, '/');
	int dl = slash ? (int)(slash - o->path) + 1 : 0;
	snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dl, o->path, o->path + dl);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "fusec: error: %s: cannot create a temporary file: %s\n", o->tmp, strerror(errno));
		return -1;
	}
	o->written = 1;
	size_t done = 0;
	int err = fchmod(fd, mode) ? errno : 0;
	while (!err && done < o->n) {
		ssize_t w = write(fd, o->data + done, o->n - done);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) err = w < 0 ? errno : EIO;
		else done += (size_t)w;
	}
	if (!err && fsync(fd) != 0) err = errno;
	if (close(fd) != 0 && !err) err = errno;
	if (err) fprintf(stderr, "fusec: error: %s: %s\n", o->path, strerror(err));
	return err ? -1 : 0;
}

static void sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) fsync(fd), close(fd);
}

/* writes every file of out[0..n) (the last one last), or none of them */
static int write_all(OutFile *out, int n, const char *dir)
{
	mode_t mask = umask(0);
	umask(mask);
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) rc = replaceable(out[i].path);
	for (int i = 0; i < n && !rc; i++) rc = write_temp(&out[i], 0666 & ~mask);
	for (int i = 0; i < n && !rc; i++) {
		if (rename(out[i].tmp, out[i].path) != 0) {
			fprintf(stderr, "fusec: error: %s: %s\n", out[i].path, strerror(errno));
			rc = -1;
		} else {
			out[i].written = 0;
		}
	}
	for (int i = 0; i < n; i++)
		if (out[i].written) unlink(out[i].tmp);
	if (dir) sync_dir(dir);
	return rc;
}

int artifact_write_file(const char *path, const char *data, size_t n)
{
	OutFile o = {0};
	if (strlen(path) >= sizeof o.path) {
		fprintf(stderr, "fusec: error: %.64s...: path too long\n", path);
		return -1;
	}
	snprintf(o.path, sizeof o.path, "%s", path);
	o.data = data, o.n = n;
	return write_all(&o, 1, NULL);
}

int artifact_make_dirs(const char *path)
{
	char buf[FUSEC_PATH_MAX];
	if (strlen(path) >= sizeof buf) {
		fprintf(stderr, "fusec: error: %.64s...: path too long\n", path);
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", path);
	for (char *s = buf + 1;; s++) {
		if (*s && *s != '/') continue;
		char c = *s;
		*s = 0;
		struct stat st;
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "fusec: error: cannot create the folder %s: %s\n", buf, strerror(errno));
			return -1;
		}
		if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "fusec: error: %s: not a folder\n", buf);
			return -1;
		}
		if (!c) return 0;
		*s = c;
	}
}

/* a name that a manifest line, a banner comment and a depfile can hold:
   printable ASCII without spaces */
static int printable_word(const char *s)
{
	if (!*s) return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 127) return 0;
	return 1;
}

/* "NAME ROLE TYPE DIMS" of a tensor, as the manifest's param/temp lines
   and the layout fingerprint both write it */
static void tensor_words(const Module *m, const Fusion *f, const Tensor *t, FILE *out)
{
	static const char *const kind[] = {"input", "output", "temp"};
	fprintf(out, "%s %s %s %s", t->kind == TK_TEMP ? "temp" : "param", t->name, t->inplace ? "inout" : kind[t->kind],
	        elem_info[t->type].name);
	if (!t->rank) fputs(" -", out);
	for (int d = 0; d < t->rank; d++) fputc(d ? ',' : ' ', out), dim_write(m, f, t->dim[d], out);
}

void artifact_layout(const Module *m, int fusion, char hex[65])
{
	const Fusion *f = &m->fusion[fusion];
	Buf b;
	buf_open(&b);
	fprintf(b.f, "fusion %s\n", f->name);
	for (int i = 0; i < f->nsym; i++) fprintf(b.f, "size %s\n", f->sym[i]);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		tensor_words(m, f, &m->tensor[i], b.f), fputc('\n', b.f);
	buf_close(&b);
	fr_sha256_hex(b.p, b.n, hex);
	free(b.p);
}

static void manifest_tensors(const Module *m, const Fusion *f, FILE *out)
{
	for (int i = 0; i < f->nsym; i++) fprintf(out, "size %s\n", f->sym[i]);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		tensor_words(m, f, t, out);
		/* how it is computed: what a validator's tolerance depends on */
		const char *by = t->kind == TK_INPUT ? "input" : "none";
		for (int s = 0; s < m->nstmt; s++)
			if (m->stmt[s].out == t - m->tensor || (m->stmt[s].pattern == PAT_COMPACT && m->tensor[m->stmt[s].out].list_count == t - m->tensor))
				by = pattern_name[m->stmt[s].pattern];
		fprintf(out, " by=%s", by);
		domain_write(t, out); /* the values an input takes, for input generators */
		fputc('\n', out);
	}
}

/* Marks in across[] the tensors whose first dimension is the plain size sym
 * that expression e of statement s reads at a first subscript other than the
 * statement's first index (x(j), x(i + 1), x(g(i)) at point i). */
static void scan_across(const Module *m, const Stmt *s, int e, int sym, unsigned char *across)
{
	if (!e) return;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->nargs >= 1) {
		const Tensor *t = &m->tensor[x->tensor];
		const Expr *a0 = &m->expr[x->args[0]];
		if (t->rank >= 1 && t->dim[0].sym == sym && !dim_derived(t->dim[0]) &&
		    !(a0->op == IR_INDEX && a0->index == s->first_index))
			across[x->tensor] = 1;
		for (int i = 0; i < x->nargs; i++) scan_across(m, s, x->args[i], sym, across);
	}
	scan_across(m, s, x->a, sym, across), scan_across(m, s, x->b, sym, across), scan_across(m, s, x->c, sym, across);
}

/* A kernel's statements, and the statements inlined into the variant (they
 * are evaluated in whichever kernel reads them), read at the kernel's point
 * only what depends on its first space index? The tensors that are read at
 * other rows are listed on its manifest line (across=): a runtime sharding
 * the kernel over that size holds only each rank's rows of them, so it must
 * refuse (a reduction over the size's own index, a shifted or gathered read:
 * runtime/shard.c). */
static void kernel_across(const Module *m, const Schedule *p, const Kernel *k, FILE *out)
{
	if (!k->nspace || k->space[0].sym < 0 || dim_derived(k->space[0])) return;
	unsigned char *across = xcalloc((size_t)m->ntensor + 1, 1);
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
		if (!(sid >= k->first_stmt && sid < k->first_stmt + k->nstmt) && p->op[sid] != STEP_INLINE) continue;
		const Stmt *s = &m->stmt[sid];
		scan_across(m, s, s->rhs, k->space[0].sym, across);
		scan_across(m, s, s->mask, k->space[0].sym, across);
		for (int i = 0; i < s->nlhs; i++) scan_across(m, s, s->lhs[i], k->space[0].sym, across);
		for (int i = 0; i < s->nindex; i++) {
			const Index *ix = &m->index[s->first_index + i];
			if (ix->kind == IX_RAGGED) scan_across(m, s, ix->lo, k->space[0].sym, across), scan_across(m, s, ix->hi, k->space[0].sym, across);
		}
	}
	int n = 0;
	for (int t = 0; t < m->ntensor; t++)
		if (across[t]) fprintf(out, "%s%s", n++ ? "," : " across=", m->tensor[t].name);
	free(across);
}

static void manifest_kernels(const Module *m, const Fusion *f, const Schedule *p, FILE *out)
{
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		fprintf(out, "kernel %s %s %s block=%d", p->fused ? "fused" : "unfused", k->name,
		        kernel_mode_name[k->mode], k->par.block);
		if (k->nspace) fputs(" space=", out), dims_write(m, f, k->space, k->nspace, ",", out);
		if (k->has_tail) fputs(" grid-reduction=deterministic", out);
		kernel_across(m, p, k, out);
		if (k->mode == KM_TILE) {
			const char *a, *b;
			tile_operands(m, k, &a, &b);
			fprintf(out, " smem=%d tma=%s,%s", k->par.smem, a, b);
		}
		fputc('\n', out);
	}
}

/* What the runtime would refuse (runtime/fuserun.h's limits): said now,
   as the user's error, rather than written. */
static int representable(const Module *m, const Fusion *f, const Schedule *fused, const Schedule *unfused, const char *spec,
                         const char *spec_path)
{
	const char *why = NULL;
	int limit = 0, have = 0;
	if (!printable_word(spec)) why = "the spec's file name has a space or a control character, which a manifest line cannot hold";
	else if (strlen(f->name) > FZ_MAX_NAME) why = "the fusion's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(f->name);
	else if (f->nsym > FZ_MAX_SIZES) why = "too many sizes", limit = FZ_MAX_SIZES, have = f->nsym;
	else if (f->ntensor > FZ_MAX_TENSORS) why = "too many tensors", limit = FZ_MAX_TENSORS, have = f->ntensor;
	else if (fused->nk + unfused->nk > FZ_MAX_KERNELS) why = "too many kernels", limit = FZ_MAX_KERNELS, have = fused->nk + unfused->nk;
	for (int i = 0; !why && i < f->nsym; i++)
		if (strlen(f->sym[i]) > FZ_MAX_NAME) why = "a size's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(f->sym[i]);
	for (int i = f->first_tensor; !why && i < f->first_tensor + f->ntensor; i++)
		if (strlen(m->tensor[i].name) > FZ_MAX_NAME)
			why = "a tensor's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(m->tensor[i].name);
	for (int i = 0; !why && i < m->npipeline; i++)
		if (m->pipeline[i].fusion == fused->fusion && (why = pipe_refusal(m, &m->pipeline[i], fused->target))) {
			fprintf(stderr, "fusec: error: %s: pipeline %.80s: %s\n", spec_path, m->pipeline[i].name, why);
			return -1;
		}
	if (!why) return 0;
	fprintf(stderr, "fusec: error: %s: fusion %.80s: %s", spec_path, f->name, why);
	if (limit) fprintf(stderr, " (%d; the runtime takes at most %d)", have, limit);
	fputc('\n', stderr);
	return -1;
}

/* the fusions written in this run, and their specs: a second spec defining
   the same name would overwrite the first's artifacts */
static struct Written { char *name; const char *spec; } *written;
static int nwritten;

static int name_taken(const char *dir, const Fusion *f, const char *spec_path)
{
	for (int i = 0; i < nwritten; i++)
		if (!strcmp(written[i].name, f->name)) {
			fprintf(stderr, "fusec: error: %s: fusion %s is also defined by %s: their artifacts would overwrite each other\n",
			        spec_path, f->name, written[i].spec);
			return -1;
		}
	/* from an earlier run: the manifest already there names its spec */
	char path[FUSEC_PATH_MAX + 80];
	snprintf(path, sizeof path, "%s/%s.manifest", dir, f->name);
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (4 << 20)) return 0;
	FILE *in = fopen(path, "rb");
	if (!in) return 0;
	char line[FUSEC_PATH_MAX];
	int rc = 0;
	for (int k = 0; k < 8 && fgets(line, sizeof line, in); k++) {
		if (strncmp(line, "spec ", 5)) continue;
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line + 5, base_name(spec_path))) {
			fprintf(stderr, "fusec: error: %s: fusion %s: %s was generated from %s, another spec with this fusion name "
			        "(remove the old artifacts if the spec was renamed)\n", spec_path, f->name, path, line + 5);
			rc = -1;
		}
		break;
	}
	fclose(in);
	return rc;
}

static void remember(const Fusion *f, const char *spec_path)
{
	struct Written *w = realloc(written, (size_t)(nwritten + 1) * sizeof *w);
	if (!w) die("out of memory");
	written = w;
	if (!(written[nwritten].name = strdup(f->name))) die("out of memory");
	written[nwritten++].spec = spec_path;
}

/* a path as make reads it in a depfile: '$' doubled, space, '#' and ':' after
   a backslash; -1 for what make cannot read at all (control characters) */
int artifact_dep_path(FILE *out, const char *path)
{
	for (const char *s = path; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f) return -1;
	for (const char *s = path; *s; s++) {
		if (*s == '$') fputc('$', out);
		else if (*s == ' ' || *s == '#' || *s == ':' || *s == '\\') fputc('\\', out);
		fputc(*s, out);
	}
	return 0;
}

static int write_fusion(const FrontEnd *fe, int fusion, const ArtifactOpts *o, const char *spec_hash)
{
	const Module *m = &fe->mod;
	const Fusion *f = &m->fusion[fusion];
	const char *spec = base_name(fe->src.path);
	int major, minor;
	nvrtc_version(&major, &minor);
	const char *dir = o->out_dir;

	/* One .cu serves every target while their schedules agree (today the
	   planner reads the target nowhere, and the tile kernel's mainloop picks
	   wgmma or mma.sync with the preprocessor): it is built for the first
	   target, and the others' schedules are checked to be the same. */
	int tgt = target_lookup(o->archs[0]);
	Schedule fused, unfused;
	plan_build(m, fusion, 1, tgt < 0 ? TGT_SM_80 : (Target)tgt, &fused);
	plan_build(m, fusion, 0, tgt < 0 ? TGT_SM_80 : (Target)tgt, &unfused);
	for (int a = 1; a < o->narch; a++) {
		int t = target_lookup(o->archs[a]);
		if (t < 0) continue;
		Schedule fu, un;
		plan_build(m, fusion, 1, (Target)t, &fu);
		plan_build(m, fusion, 0, (Target)t, &un);
		if (!sched_same(m, &fused, &fu) || !sched_same(m, &unfused, &un))
			die("fusion %s: the schedules for %s and %s differ, and an artifact with a .cu per target is not "
			    "implemented", f->name, o->archs[0], o->archs[a]);
		sched_free(&fu), sched_free(&un);
	}
	if (representable(m, f, &fused, &unfused, spec, fe->src.path) || name_taken(dir, f, fe->src.path)) {
		sched_free(&fused), sched_free(&unfused);
		return ARTIFACT_USER_ERROR;
	}

	char banner[1024];
	snprintf(banner, sizeof banner,
	         "/* Generated by fusec %s from %s (spec sha256 %s).\n"
	         "   NVRTC %d.%d. Do not edit: regenerate with make. */\n",
	         FUSEC_VERSION, spec, spec_hash, major, minor);

	Buf cu, hdr, ref, man, px[FZ_MAX_TARGETS];
	buf_open(&cu);
	emit_cuda_file(m, &fused, &unfused, banner, cu.f);
	buf_close(&cu);

	buf_open(&hdr);
	emit_header(m, &fused, &unfused, banner, hdr.f);
	buf_close(&hdr);

	buf_open(&ref);
	fputs(banner, ref.f);
	emit_reference(m, fusion, ref.f);
	buf_close(&ref);

	/* every target compiled before anything is written */
	int rc = 0, npx = 0;
	char name[FUSEC_PATH_MAX], hex[65];
	for (int a = 0; a < o->narch && !rc; a++) {
		char *ptx, *log;
		char cuname[300];
		snprintf(cuname, sizeof cuname, "%s.cu", f->name);
		if (nvrtc_compile(cu.p, cuname, o->archs[a], &ptx, &log)) {
			fprintf(stderr, "fusec: internal error: NVRTC rejected the CUDA generated for %s (%s):\n%s\n", f->name,
			        o->archs[a], log ? log : "(no log)");
			rc = ARTIFACT_INTERNAL_ERROR;
		} else {
			buf_open(&px[npx]);
			fprintf(px[npx].f, "// Generated by fusec %s from %s (spec sha256 %s).\n// NVRTC %d.%d, target %s, options %s\n",
			        FUSEC_VERSION, spec, spec_hash, major, minor, o->archs[a], FUSEC_NVRTC_OPTIONS);
			fputs(ptx, px[npx].f);
			buf_close(&px[npx++]);
		}
		free(ptx), free(log);
	}

	OutFile *out = calloc((size_t)npx + 4, sizeof *out);
	if (!out) die("out of memory");
	int nout = 0;
	buf_open(&man);
	fprintf(man.f, "fusec-artifact 1\nfusec-version %s\nfusion %s\nspec %s\nspec-sha256 %s\nnvrtc %d.%d\n",
	        FUSEC_VERSION, f->name, spec, spec_hash, major, minor);
	fprintf(man.f, "options %s\n", FUSEC_NVRTC_OPTIONS);
	for (int a = 0; a < npx; a++) {
		snprintf(name, sizeof name, "%s.%s.ptx", f->name, o->archs[a]);
		set_path(&out[nout], dir, name);
		out[nout].data = px[a].p, out[nout++].n = px[a].n;
		fr_sha256_hex(px[a].p, px[a].n, hex);
		fprintf(man.f, "target %s %s %s\n", o->archs[a], name, hex);
	}
	struct { const char *suffix; Buf *b; } files[] = {{".cu", &cu}, {".h", &hdr}, {"_ref.c", &ref}};
	for (unsigned i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "%s%s", f->name, files[i].suffix);
		set_path(&out[nout], dir, name);
		out[nout].data = files[i].b->p, out[nout++].n = files[i].b->n;
		fr_sha256_hex(files[i].b->p, files[i].b->n, hex);
		fprintf(man.f, "file %s %s\n", name, hex);
	}
	artifact_layout(m, fusion, hex);
	fprintf(man.f, "layout %s\n", hex);
	manifest_tensors(m, f, man.f);
	manifest_kernels(m, f, &fused, man.f);
	manifest_kernels(m, f, &unfused, man.f);
	for (int i = 0; i < m->npipeline; i++)
		if (m->pipeline[i].fusion == fusion) manifest_pipeline(m, &m->pipeline[i], fused.target, man.f);
	{
		Buf ex;
		buf_open(&ex);
		plan_explain(m, fusion, &fused, ex.f);
		buf_close(&ex);
		for (char *line = ex.p, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			fprintf(man.f, "plan %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		}
		free(ex.p);
	}
	fflush(man.f);
	fr_sha256_hex(man.p, man.n, hex);
	fprintf(man.f, "manifest-sha256 %s\n", hex);
	buf_close(&man);
	snprintf(name, sizeof name, "%s.manifest", f->name);
	set_path(&out[nout], dir, name);
	out[nout].data = man.p, out[nout++].n = man.n;
	if (!rc && write_all(out, nout, dir)) rc = ARTIFACT_USER_ERROR;
	if (!rc) remember(f, fe->src.path);
	if (!rc && o->depfile) {
		FILE *d = o->depfile;
		if (artifact_dep_path(d, out[nout - 1].path) < 0 || fputs(":", d) < 0 || fputc(' ', d) < 0 ||
		    artifact_dep_path(d, fe->src.path) < 0 || fputs("\n", d) < 0 || artifact_dep_path(d, fe->src.path) < 0 ||
		    fputs(":\n", d) < 0) {
			fprintf(stderr, "fusec: error: %s: a path with a control character cannot be written in a depfile\n", fe->src.path);
			rc = ARTIFACT_USER_ERROR;
		}
	}
	free(out);
	for (int a = 0; a < npx; a++) free(px[a].p);
	free(cu.p), free(hdr.p), free(ref.p), free(man.p);
	sched_free(&fused), sched_free(&unfused);
	return rc;
}

int artifact_write(const FrontEnd *fe, const ArtifactOpts *o)
{
	char hash[65];
	fr_sha256_hex(fe->src.text, fe->src.len, hash);
	if (artifact_make_dirs(o->out_dir)) return ARTIFACT_USER_ERROR;
	int rc = 0;
	for (int i = 0; i < fe->mod.nfusion && !rc; i++) rc = write_fusion(fe, i, o, hash);
	return rc;
}
