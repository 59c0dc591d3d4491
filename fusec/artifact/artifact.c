/* Artifacts: everything for one fusion generated in memory, then written
 * atomically next to each other (atomic_write.c), the manifest last. */
#include "artifact/artifact_impl.h"
#include "plan/pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/fuserun.h" /* the manifest's limits and targets: one contract with the runtime */

#include "emit/emit.h"
#include "core/namer.h"
#include "artifact/ptx.h"
#include "plan/plan.h"
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
	manifest_body(m, fusion, &fused, &unfused, man.f);
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
