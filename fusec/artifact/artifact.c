/* Artifacts: everything for one fusion generated in memory, then written
 * atomically next to each other (atomic_write.c), the manifest last. */
#include "artifact/artifact_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/fuserun.h" /* the manifest's limits and targets: one contract with the runtime */

#include "core/namer.h"
#include "cuda/cuda.h"
#include "host/host.h"
#include "artifact/ptx.h"
#include "runtime/sha256.h" /* one SHA-256 for fusec and the runtime */
#include "version.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
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

/* What the runtime would refuse (runtime/fuserun.h's limits): said now,
   as the user's error, rather than written. */
static int representable(const Module *m, const Fusion *f, const FusionPlan *fp, const char *spec, const char *spec_path)
{
	const char *why = NULL;
	int limit = 0, have = 0;
	if (!printable_word(spec)) why = "the spec's file name has a space or a control character, which a manifest line cannot hold";
	else if (strlen(f->name) > FZ_MAX_NAME) why = "the fusion's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(f->name);
	else if (f->nsym > FZ_MAX_SIZES) why = "too many sizes", limit = FZ_MAX_SIZES, have = f->nsym;
	else if (f->ntensor > FZ_MAX_TENSORS) why = "too many tensors", limit = FZ_MAX_TENSORS, have = f->ntensor;
	else if (f->nfit > FZ_MAX_FITS) why = "too many dimensions that inputs' domains subscript", limit = FZ_MAX_FITS, have = f->nfit;
	else if (fp->fused.nk + fp->unfused.nk > FZ_MAX_KERNELS)
		why = "too many kernels", limit = FZ_MAX_KERNELS, have = fp->fused.nk + fp->unfused.nk;
	const Schedule *var[2] = {&fp->fused, &fp->unfused};
	for (int v = 0; !why && v < 2; v++)
		for (int i = 0; !why && i < var[v]->nk; i++)
			if (var[v]->k[i].at.nent > FZ_MAX_ENTRY_POINTS)
				why = "an attention kernel has too many entry points", limit = FZ_MAX_ENTRY_POINTS, have = var[v]->k[i].at.nent;
	for (int i = 0; !why && i < f->nsym; i++)
		if (strlen(f->sym[i]) > FZ_MAX_NAME) why = "a size's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(f->sym[i]);
	for (int i = f->first_tensor; !why && i < f->first_tensor + f->ntensor; i++)
		if (strlen(m->tensor[i].name) > FZ_MAX_NAME)
			why = "a tensor's name is too long", limit = FZ_MAX_NAME, have = (int)strlen(m->tensor[i].name);
	for (int i = f->first_tensor; !why && i < f->first_tensor + f->ntensor; i++)
		for (int r = 0; r < m->tensor[i].rank; r++)
			if (m->tensor[i].dim[r].sym < 0 && m->tensor[i].dim[r].value > FZ_MAX_DIM)
				why = "a tensor's dimension is above 2^40, the largest number the runtime takes as one";
	for (int i = 0; !why && i < fp->npipe; i++)
		if (fp->pipe[i].why) {
			fprintf(stderr, "fusec: error: %s: pipeline %.80s: %s\n", spec_path, fp->pipe[i].pl->name, fp->pipe[i].why);
			return -1;
		}
	if (!why) return 0;
	fprintf(stderr, "fusec: error: %s: fusion %.80s: %s", spec_path, f->name, why);
	if (limit) fprintf(stderr, " (%d; the runtime takes at most %d)", have, limit);
	fputc('\n', stderr);
	return -1;
}

/* Every kernel's static shared memory within what a block may declare: a
   file:line:col error at the reduction that passes it (ptxas refused the
   PTX, and the artifact loaded on no GPU). 0, or -1 after saying it. */
static int shared_fits(const FrontEnd *fe, const FusionPlan *fp)
{
	const Module *m = &fe->mod;
	Diag d = {.src = &fe->src, .out = stderr};
	const Schedule *v[2] = {&fp->fused, &fp->unfused};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < v[i]->nk; j++) {
			const Kernel *k = &v[i]->k[j];
			int sid;
			long bytes = plan_static_smem(m, v[i], k, PLAN_STATIC_SMEM_MAX, &sid);
			if (sid < 0) continue;
			diag_error(&d, m->stmt[sid].off, "kernel %s's reductions need %ld bytes of shared memory, more than the %d a "
			           "block may declare: split its reductions over stages that cannot share a kernel, or lower kmin's k",
			           k->name, bytes, PLAN_STATIC_SMEM_MAX);
			return -1;
		}
	return 0;
}

/* the fusions written in this run, and their specs: a second spec defining
   the same name would overwrite the first's artifacts */
static struct Written { char *name; const char *spec; } *written;
static int nwritten, cwritten;
/* the same names in a hash: each fusion of a file of many looks its name up
   there, not by a walk over every earlier one (quadratic); the walk finds
   the other spec for the error only */
static Namer written_names;

static int name_taken(const char *dir, const Fusion *f, const char *spec_path)
{
	for (int i = 0; namer_taken(&written_names, f->name) && i < nwritten; i++)
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
	if (nwritten == cwritten) { /* doubling: a file may have many thousand fusions */
		struct Written *w = realloc(written, (size_t)(cwritten = cwritten ? 2 * cwritten : 16) * sizeof *w);
		if (!w) die("out of memory");
		written = w;
	}
	if (!(written[nwritten].name = strdup(f->name))) die("out of memory");
	written[nwritten++].spec = spec_path;
	namer_reserve(&written_names, f->name);
}

/* a path as make reads it in a depfile: '$' doubled, space, '#' and ':' after
   a backslash; -1 for what make cannot read at all (control characters) */
static int artifact_dep_path(FILE *out, const char *path)
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

/* One fusion's artifacts, built in memory before any is written. */
typedef struct Job {
	const FrontEnd *fe;
	const ArtifactOpts *o;
	const Fusion *f;
	const char *spec, *spec_hash; /* the spec's file name and hash */
	int major, minor;             /* NVRTC's version */
	Buf cu, hdr, ref, man, px[FZ_MAX_TARGETS];
	int npx;
	OutFile out[FZ_MAX_TARGETS + 4];
	int nout;
} Job;

/* One .cu serves every target while their schedules agree (today the
   planner reads the target nowhere, and the tile kernel's mainloop picks
   wgmma or mma.sync with the preprocessor): it is planned for the first
   target, and the others' schedules are checked to be the same. */
static void plan_targets(const Module *m, int fusion, const ArtifactOpts *o, FusionPlan *fp)
{
	int tgt = target_lookup(o->archs[0]);
	plan_fusion(m, fusion, tgt < 0 ? TGT_SM_80 : (Target)tgt, fp);
	for (int a = 1; a < o->narch; a++) {
		int t = target_lookup(o->archs[a]);
		if (t < 0) continue;
		Schedule fu, un;
		plan_build(m, fusion, 1, (Target)t, &fu);
		plan_build(m, fusion, 0, (Target)t, &un);
		if (!sched_same(m, &fp->fused, &fu) || !sched_same(m, &fp->unfused, &un))
			die("fusion %s: the schedules for %s and %s differ, and an artifact with a .cu per target is not "
			    "implemented", m->fusion[fusion].name, o->archs[0], o->archs[a]);
		sched_free(&fu), sched_free(&un);
	}
}

/* the .cu, the header and the reference, each after the banner */
static void render(Job *j, const FusionPlan *fp)
{
	const Module *m = &j->fe->mod;
	char banner[1024];
	snprintf(banner, sizeof banner,
	         "/* Generated by fusec %s from %s (spec sha256 %s).\n"
	         "   NVRTC %d.%d. Do not edit: regenerate with make. */\n",
	         FUSEC_VERSION, j->spec, j->spec_hash, j->major, j->minor);
	buf_open(&j->cu);
	cuda_file(m, fp, banner, j->cu.f);
	buf_close(&j->cu);
	buf_open(&j->hdr);
	host_header(m, fp, banner, j->hdr.f);
	buf_close(&j->hdr);
	buf_open(&j->ref);
	fputs(banner, j->ref.f);
	host_reference(m, fp->fusion, j->ref.f);
	buf_close(&j->ref);
}

/* every target compiled before anything is written: 0, or INTERNAL_ERROR */
static int compile_targets(Job *j)
{
	const ArtifactOpts *o = j->o;
	char cuname[300];
	snprintf(cuname, sizeof cuname, "%s.cu", j->f->name);
	for (int a = 0; a < o->narch; a++) {
		char *ptx, *log;
		int bad = nvrtc_compile(j->cu.p, cuname, o->archs[a], &ptx, &log);
		if (bad) {
			fprintf(stderr, "fusec: internal error: NVRTC rejected the CUDA generated for %s (%s):\n%s\n", j->f->name,
			        o->archs[a], log ? log : "(no log)");
		} else {
			Buf *px = &j->px[j->npx++];
			buf_open(px);
			fprintf(px->f, "// Generated by fusec %s from %s (spec sha256 %s).\n// NVRTC %d.%d, target %s, options %s\n",
			        FUSEC_VERSION, j->spec, j->spec_hash, j->major, j->minor, o->archs[a], FUSEC_NVRTC_OPTIONS);
			fputs(ptx, px->f);
			buf_close(px);
			if (artifact_warn_spills(j->fe->src.path, o->archs[a], ptx, strlen(ptx), j->f->name)) bad = 1;
		}
		free(ptx), free(log);
		if (bad) return ARTIFACT_INTERNAL_ERROR;
	}
	return 0;
}

/* an output file, and its line in the manifest */
static void add_file(Job *j, const char *name, const Buf *b, const char *arch)
{
	char hex[65];
	artifact_set_path(&j->out[j->nout], j->o->out_dir, name);
	j->out[j->nout].data = b->p, j->out[j->nout++].n = b->n;
	fr_sha256_hex(b->p, b->n, hex);
	if (arch) fprintf(j->man.f, "target %s %s %s\n", arch, name, hex);
	else fprintf(j->man.f, "file %s %s\n", name, hex);
}

/* the manifest, last of the outputs: the files' hashes, the plan, its own hash */
static void manifest(Job *j, const FusionPlan *fp)
{
	const Fusion *f = j->f;
	char name[FUSEC_PATH_MAX], hex[65];
	buf_open(&j->man);
	fprintf(j->man.f, "fusec-artifact %d\nfusec-version %s\nfusion %s\nspec %s\nspec-sha256 %s\nnvrtc %d.%d\n",
	        FZ_ARTIFACT_FORMAT, FUSEC_VERSION, f->name, j->spec, j->spec_hash, j->major, j->minor);
	fprintf(j->man.f, "options %s\n", FUSEC_NVRTC_OPTIONS);
	for (int a = 0; a < j->npx; a++) {
		snprintf(name, sizeof name, "%s.%s.ptx", f->name, j->o->archs[a]);
		add_file(j, name, &j->px[a], j->o->archs[a]);
	}
	struct { const char *suffix; Buf *b; } files[] = {{".cu", &j->cu}, {".h", &j->hdr}, {"_ref.c", &j->ref}};
	for (unsigned i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "%s%s", f->name, files[i].suffix);
		add_file(j, name, files[i].b, NULL);
	}
	manifest_body(&j->fe->mod, fp, j->man.f);
	fflush(j->man.f);
	fr_sha256_hex(j->man.p, j->man.n, hex);
	fprintf(j->man.f, "manifest-sha256 %s\n", hex);
	buf_close(&j->man);
	snprintf(name, sizeof name, "%s.manifest", f->name);
	artifact_set_path(&j->out[j->nout], j->o->out_dir, name);
	j->out[j->nout].data = j->man.p, j->out[j->nout++].n = j->man.n;
}

/* A manifest line longer than the runtime reads (FZ_MAX_LINE, newline not
   counted, as runtime/manifest.c counts): said as the user's error. */
static int manifest_too_long(const Job *j, const char *spec_path)
{
	const char *end = j->man.p + j->man.n;
	for (const char *line = j->man.p, *nl; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl) nl = end;
		if (nl - line <= FZ_MAX_LINE) continue;
		const char *sp = memchr(line, ' ', (size_t)(nl - line));
		const char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(nl - sp - 1)) : NULL;
		const int key = (int)((sp2 ? sp2 : sp ? sp : nl) - line);
		fprintf(stderr, "fusec: error: %s: fusion %.80s: its manifest's '%.*s ...' line is too long (%d bytes; the runtime takes at most %d)\n",
		        spec_path, j->f->name, key > 80 ? 80 : key, line, (int)(nl - line), FZ_MAX_LINE);
		return 1;
	}
	return 0;
}

/* the depfile's rule: the manifest depends on the spec (and on the tuning
   table), each also a rule of its own, so that a deleted one is no error */
static int depfile_rule(const Job *j)
{
	FILE *d = j->o->depfile;
	const char *spec = j->fe->src.path;
	const char *tune = j->o->tune;
	if (artifact_dep_path(d, j->out[j->nout - 1].path) < 0 || fputs(":", d) < 0 || fputc(' ', d) < 0 ||
	    artifact_dep_path(d, spec) < 0 || (tune && (fputc(' ', d) < 0 || artifact_dep_path(d, tune) < 0)) || fputs("\n", d) < 0 ||
	    artifact_dep_path(d, spec) < 0 || fputs(":\n", d) < 0 || (tune && (artifact_dep_path(d, tune) < 0 || fputs(":\n", d) < 0))) {
		fprintf(stderr, "fusec: error: %s: a path with a control character cannot be written in a depfile\n", spec);
		return ARTIFACT_USER_ERROR;
	}
	return 0;
}

static int write_fusion(const FrontEnd *fe, int fusion, const ArtifactOpts *o, const char *spec_hash)
{
	const Module *m = &fe->mod;
	Job *j = calloc(1, sizeof *j);
	if (!j) die("out of memory");
	*j = (Job){.fe = fe, .o = o, .f = &m->fusion[fusion], .spec = base_name(fe->src.path), .spec_hash = spec_hash};
	nvrtc_version(&j->major, &j->minor);
	FusionPlan fp;
	plan_targets(m, fusion, o, &fp);
	int rc = ARTIFACT_USER_ERROR;
	if (!representable(m, j->f, &fp, j->spec, fe->src.path) && !shared_fits(fe, &fp) && !name_taken(o->out_dir, j->f, fe->src.path)) {
		render(j, &fp);
		rc = compile_targets(j);
		manifest(j, &fp);
		if (!rc && manifest_too_long(j, fe->src.path)) rc = ARTIFACT_USER_ERROR;
		/* another fusec may have written this fusion since the check above:
		   checked again, and written, under the folder's lock, so that two
		   writers leave one whole artifact (one of them refused) */
		int lock = rc ? -1 : artifact_lock_dir(o->out_dir);
		if (!rc && name_taken(o->out_dir, j->f, fe->src.path)) rc = ARTIFACT_USER_ERROR;
		if (!rc && artifact_write_all(j->out, j->nout, o->out_dir)) rc = ARTIFACT_USER_ERROR;
		artifact_unlock_dir(lock);
		if (!rc) remember(j->f, fe->src.path);
		if (!rc && o->depfile) rc = depfile_rule(j);
	}
	for (int a = 0; a < j->npx; a++) free(j->px[a].p);
	free(j->cu.p), free(j->hdr.p), free(j->ref.p), free(j->man.p);
	free(j);
	plan_fusion_free(&fp);
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
