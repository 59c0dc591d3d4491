/* The application's side: argument structs, scratch layout and the launch
 * list of each variant, as static inline C in the generated header. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "host/host.h"

static void ref_struct(const Module *m, int fusion, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	fprintf(out, "/* float64 reference: float tensors as double, integers as their own type */\n");
	fprintf(out, "typedef struct fz_%s_ref_args {\n", f->name);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		if (t->kind == TK_TEMP) continue;
		const char *ty = elem_info[t->type].is_float ? "double" : t->type == ET_I64 ? "int64_t" : "int32_t";
		if (t->kind == TK_INPUT && t->rank == 0)
			fprintf(out, "\t%s t_%s;\n", elem_info[t->type].is_float ? "double" : "int64_t", t->name);
		else
			fprintf(out, "\t%s%s *t_%s;\n", t->kind == TK_INPUT ? "const " : "", ty, t->name);
	}
	for (int i = 0; i < f->nsym; i++) fprintf(out, "\tlong long n_%s;\n", f->sym[i]);
	fprintf(out, "} fz_%s_ref_args;\n", f->name);
	/* 3 only where it can happen, so that other headers stay as they were */
	fprintf(out, "/* 0 ok, 1 a subscript out of range (a bad gather), 2 out of memory%s */\n",
	        f->nfit ? ",\n   3 sizes below what the inputs' domains reach (the manifest's fits lines)" : "");
	fprintf(out, "int fz_%s_reference(const fz_%s_ref_args *a);\n", f->name, f->name);
	fprintf(out, "/* {name, shape} of every param and temp, as the reference reads and writes\n"
	             "   them (NAME_ref.c; the manifest writes the same shapes); {0, 0} ends it */\n"
	             "extern const char *const fz_%s_ref_shapes[][2];\n\n", f->name);
}

static void variant_plan(const Module *m, const Schedule *p, FILE *out)
{
	const Fusion *f = &m->fusion[p->fusion];
	const char *vname = p->fused ? "fused" : "unfused";
	/* scratch: stored temps, then the whole-grid partials and counter */
	fprintf(out, "/* The %s variant's scratch: its stored temps, then per-block partials.\n"
	             "   Returns the bytes needed; with base != 0 also points a's temps and\n"
	             "   workspace into [base, base + bytes). Zero the scratch once when you\n"
	             "   allocate it: the reduction counter must start at 0 (it resets itself). */\n", vname);
	fprintf(out, "static inline unsigned long long fz_%s_%s_scratch(fz_%s_args *a, unsigned long long base, int sm)\n{\n",
	        f->name, vname, f->name);
	fputs("\tunsigned long long off = 0, parts = 0;\n\tif (sm <= 0) sm = 132;\n", out);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		if (t->kind != TK_TEMP) continue;
		if (!sched_stored(p, i)) {
			fprintf(out, "\tif (base) a->t_%s = 0; /* kept on chip */\n", t->name);
			continue;
		}
		fprintf(out, "\tif (base) a->t_%s = base + off;\n", t->name);
		fputs("\toff += fz_align(", out), host_tensor_bytes(f, t, out), fputs(");\n", out);
	}
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		int nt = k->ntail;
		if (!nt) continue;
		fprintf(out, "\tparts = fz_max_u64(parts, (unsigned long long)(");
		host_grid_x(m, f, k, HS_C, out);
		fprintf(out, ") * %d * 8);\n", nt);
	}
	int split = 0; /* split kernels: their partials, and counters after the grid fold's word */
	for (int i = 0; i < p->nk; i++)
		if (p->k[i].par.split) {
			if (!split++) fputs("\tunsigned long long cnt = 256;\n", out);
			host_split_scratch(f, &p->k[i], out);
		}
	fputs("\tif (base) a->ws_part = base + off;\n\toff += fz_align(parts ? parts : 8);\n", out);
	fprintf(out, "\tif (base) a->ws_count = base + off;\n\toff += %s;\n\treturn off;\n}\n\n", split ? "cnt" : "256");

	/* the launch list */
	fprintf(out, "/* The %s variant as a list of operations, in stream order: %d kernel%s.\n"
	             "   Returns how many were written to ops (at most max_ops), or -1. */\n", vname, p->nk, p->nk == 1 ? "" : "s");
	char *fn = xasprintf("fz_%s_%s_ops", f->name, vname);
	host_ops(m, p, fn, out);
	free(fn);
}

int host_memsets(const Module *m, const Schedule *p, int *list)
{
	const Fusion *f = &m->fusion[p->fusion];
	int n = 0;
	/* what must start at zero on every run: a compaction's count (before
	   its list), a tensor accumulated into, unless a kernel resets it */
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		if (t->list_count >= 0 && p->reset_by[t->list_count - p->first_tensor] < 0) list[n++] = t->list_count;
		if (t->zero_init && p->reset_by[i - p->first_tensor] < 0) list[n++] = i;
	}
	return n;
}

int host_kernel_resets(const Module *m, const Schedule *p, int i)
{
	const Fusion *f = &m->fusion[p->fusion];
	int resets = 0;
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) resets |= p->reset_by[t - p->first_tensor] == i;
	return resets;
}

void host_ops(const Module *m, const Schedule *p, const char *fn, FILE *outf)
{
	const Fusion *f = &m->fusion[p->fusion];
	fprintf(outf, "static inline int %s(const fz_%s_args *a, int sm, fz_op *ops, int max_ops)\n{\n", fn, f->name);
	/* the body first: a fusion whose sizes are all numbers reads nothing of
	   a, and -Wextra (-Werror) would refuse the header over it */
	char *body = NULL;
	size_t nbody = 0;
	FILE *out = xmemstream(&body, &nbody);
	fputs("\tint n = 0;\n\tif (sm <= 0) sm = 132;\n", out);
	int *zero = xcalloc((size_t)f->ntensor * 2 + 1, sizeof *zero);
	const int nzero = host_memsets(m, p, zero);
	for (int i = 0; i < nzero; i++) {
		const Tensor *c = &m->tensor[zero[i]];
		fprintf(out, "\tif (n >= max_ops) return -1;\n");
		fprintf(out, "\tops[n].kind = FZ_OP_MEMSET, ops[n].kernel = \"%s\", ops[n].ptr = a->t_%s, ops[n].bytes = ", c->name, c->name);
		host_tensor_bytes(f, c, out);
		fputs(", n++;\n", out);
	}
	free(zero);
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		fprintf(out, "\t{ /* %s: %s */\n", k->name, kernel_mode_name[k->mode]);
		fputs("\t\tunsigned long long gx = ", out);
		host_grid_x(m, f, k, HS_C, out);
		fputs(";\n", out);
		/* grid.y when the kind has one: a constant 1 tested in `gx && gy` is a
		   warning of clang++'s by default (-Wconstant-logical-operand) */
		char *gy = NULL;
		size_t ngy = 0;
		FILE *gyf = xmemstream(&gy, &ngy);
		const int has_y = host_grid_y(f, k, HS_C, gyf);
		if (fclose(gyf)) die("out of memory");
		if (has_y) fprintf(out, "\t\tconst unsigned long long gy = %s;\n", gy);
		free(gy);
		/* a kernel that zeroes something for later ones always runs */
		if (host_kernel_resets(m, p, i)) fputs("\t\tif (gx == 0) gx = 1;\n", out);
		fprintf(out, "\t\tif (gx%s) {\n\t\t\tif (n >= max_ops) return -1;\n", has_y ? " && gy" : "");
		if (k->mode == KM_ATTN) { /* the entry point of the head size's bucket; none past the largest */
			fputs("\t\t\tops[n].kernel = ", out), host_attn_entry(f, k, out);
			fputs(";\n\t\t\tif (!ops[n].kernel) return -1;\n\t\t\tops[n].kind = FZ_OP_LAUNCH;\n", out);
		} else {
			fprintf(out, "\t\t\tops[n].kind = FZ_OP_LAUNCH, ops[n].kernel = \"%s\";\n", k->name);
		}
		fprintf(out, "\t\t\tops[n].grid[0] = (unsigned int)gx, ops[n].grid[1] = %s, ops[n].grid[2] = 1;\n", has_y ? "(unsigned int)gy" : "1");
		if (k->mode == KM_ROW && k->par.rcache) {
			/* a row kept in registers: the threads a row are chosen by
			   its width, the same function as the kernel's */
			fputs(k->par.row_stream ? "\t\t\tops[n].block = fz_row_threads_s(" : "\t\t\tops[n].block = fz_row_threads(", out);
			host_row_width(f, k, HS_C, out);
			fprintf(out, ", %d), ops[n].ptr = 0, ops[n].bytes = 0, n++;\n\t\t}\n\t}\n", k->par.rcache);
		} else {
			fprintf(out, "\t\t\tops[n].block = %d, ops[n].ptr = 0, ops[n].bytes = 0, n++;\n\t\t}\n\t}\n", k->par.block);
		}
	}
	fputs("\treturn n;\n}\n\n", out);
	if (fclose(out)) die("out of memory");
	if (!strstr(body, "a->")) fputs("\t(void)a;\n", outf);
	fputs(body, outf);
	free(body);
}

void host_header(const Module *m, const FusionPlan *fp, const char *banner, FILE *out)
{
	const Schedule *fused = &fp->fused, *unfused = &fp->unfused;
	const int fusion = fp->fusion;
	const Fusion *f = &m->fusion[fusion];
	fprintf(out, "%s", banner);
	fprintf(out, "#ifndef FZ_%s_H\n#define FZ_%s_H\n\n#include <stdint.h>\n\n", f->name, f->name);
	/* the typed launchers need fuserun.h: brought in where it can be found,
	   so that the order of includes is free; a compile with the generated
	   folder alone (the reference) or fuserun's own (FZ_NO_FUSERUN_H, no
	   installed fuserun.h of another version) goes without */
	fputs("#if !defined(FUSERUN_H) && !defined(FZ_NO_FUSERUN_H) && defined(__has_include)\n"
	      "#if __has_include(\"fuserun.h\")\n#include \"fuserun.h\"\n#endif\n#endif\n\n", out);
	/* the layout this header's structs and op lists assume: the artifact's
	   manifest carries the same, and libfuserun compares them */
	char layout[65];
	emit_layout(m, fusion, layout);
	fprintf(out, "/* the layout of the args (manifest line `layout`), checked by libfuserun */\n"
	             "#define FZ_%s_LAYOUT \"%s\"\n\n", f->name, layout);
	fputs("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", out);
	fputs(emit_fz_op_block, out), fputc('\n', out); /* runtime/fuserun.h's, guarded */
	int split = 0;
	for (int i = 0; i < fp->fused.nk; i++) split |= fp->fused.k[i].par.split;
	for (int i = 0; i < fp->unfused.nk; i++) split |= fp->unfused.k[i].par.split;
	if (split) fputs(host_split_fn, out), fputc('\n', out);
	if (emit_row_streamed(fp)) fputs(emit_row_s_block, out), fputc('\n', out);
	emit_args_struct(m, fusion, 0, out);
	fputc('\n', out);
	ref_struct(m, fusion, out);
	variant_plan(m, fused, out);
	variant_plan(m, unfused, out);
	/* Typed one-call launchers for applications that link libfuserun
	   (include fuserun.h before this header). */
	fputs("#ifdef FUSERUN_H\n", out);
	/* the args struct field by field, as the compiler lays it out: the
	   launchers have libfuserun compare it with the manifest, so that a
	   header and a manifest edited alike (the layout string copied) still
	   disagree unless the struct the code fills does too (issue 27) */
	fprintf(out, "/* Where fz_%s_args holds each param and size, as this compiler lays it out,\n"
	             "   and each param's shape (fz_artifact_check_fields compares them with the\n"
	             "   manifest before each run). */\n"
	             "static inline const fz_field *fz_%s_fields(int *n)\n{\n\tstatic const fz_field fields[] = {\n",
	        f->name, f->name);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		fprintf(out, "\t\tFZ_FIELD(fz_%s_args, t_%s, \"", f->name, m->tensor[i].name);
		emit_tensor_shape(m, f, &m->tensor[i], out);
		fputs("\"),\n", out);
	}
	for (int i = 0; i < f->nsym; i++) fprintf(out, "\t\tFZ_FIELD(fz_%s_args, n_%s, 0),\n", f->name, f->sym[i]);
	fputs("\t};\n\t*n = (int)(sizeof fields / sizeof fields[0]);\n\treturn fields;\n}\n", out);
	for (int v = 0; v < 2; v++) {
		const Schedule *p = v ? unfused : fused;
		const char *vn = v ? "unfused" : "fused";
		int maxops = p->nk + f->ntensor + 1;
		fprintf(out, "/* Runs the %s variant on stream (NULL: the default), a's scratch\n"
		             "   already placed by fz_%s_%s_scratch with the same sm. */\n", vn, f->name, vn);
		fprintf(out, "static inline int fz_%s_%s_run(fz_artifact *art, const fz_%s_args *a, int sm, fz_stream *stream)\n{\n",
		        f->name, vn, f->name);
		fprintf(out, "\tfz_op ops[%d];\n\tconst int n = fz_%s_%s_ops(a, sm, ops, %d);\n", maxops, f->name, vn, maxops);
		fprintf(out, "\tif (n < 0) return FZ_ERR_INVALID;\n\tint rc = fz_artifact_check_layout(art, FZ_%s_LAYOUT), nf;\n"
		             "\tconst fz_field *fields = fz_%s_fields(&nf);\n"
		             "\tif (!rc) rc = fz_artifact_check_fields(art, fields, nf);\n"
		             "\treturn rc ? rc : fz_run(art, ops, n, a, sizeof *a, stream);\n}\n", f->name, f->name);
	}
	fputs("#endif\n\n", out);
	for (int i = 0; i < fp->npipe; i++)
		if (!fp->pipe[i].why) host_pipeline(m, &fp->pipe[i], out);
	fputs("#ifdef __cplusplus\n}\n#endif\n\n#endif\n", out);
}
