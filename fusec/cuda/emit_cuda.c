/* The CUDA back end's driver: each kernel of a schedule printed by the
 * template of its kind (kern_*.c), and the pieces every template starts
 * and ends with. Values that stay in a kernel live in locals ("v_t");
 * everything that leaves a kernel goes through memory. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"
#include "plan/pipeline.h"

const KernTemplate *const kern_template[KM_N] = {
	[KM_POINT] = &kern_point,
	[KM_ROW] = &kern_row,
	[KM_MATMUL] = &kern_matmul,
	[KM_TILE] = &kern_tile,
	[KM_SCATTER] = &kern_scatter,
	[KM_SCALAR] = &kern_scalar,
};

void kernel_head(Cx *cx)
{
	const Kernel *k = cx->k;
	int minb = k->par.min_blocks;
	if (cx->persist)
		fprintf(cx->out, "static __device__ void %s(const fz_%s_args a, const uint3 fz_vb, const dim3 fz_vg, const uint3 fz_vt, const dim3 fz_vd)\n{\n",
		        k->name, cx->m->fusion[cx->fusion].name);
	else
		fprintf(cx->out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const fz_%s_args a)\n{\n", k->par.block,
		        minb, k->name, cx->m->fusion[cx->fusion].name);
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		if (cx->p->reset_by[t - cx->p->first_tensor] == cx->kernel_id && cx->m->tensor[t].rank == 0)
			fprintf(cx->out, "\tif (blockIdx.x == 0 && threadIdx.x == 0) a.t_%s[0] = 0; /* for a later kernel */\n",
			        cx->m->tensor[t].name);
}

void decompose(Cx *cx, const char *lin, int depth)
{
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	if (k->nspace == 1) {
		ind(out, depth), fprintf(out, "const long long s0%s = %s;\n", cx->sfx, lin);
		return;
	}
	ind(out, depth), fprintf(out, "long long fz_rem%s = %s;\n", cx->sfx, lin);
	for (int i = k->nspace - 1; i >= 0; i--) {
		ind(out, depth);
		if (i == 0) {
			fprintf(out, "const long long s0%s = fz_rem%s;\n", cx->sfx, cx->sfx);
		} else {
			/* 64-bit division is dozens of instructions: divide in 32
			   bits whenever the dimension allows (the common case) */
			fprintf(out, "const long long fz_q%d%s = ", i, cx->sfx);
			dim_c(cx, k->space[i], out);
			fprintf(out, " <= 0xffffffffLL && fz_rem%s <= 0xffffffffLL ? (long long)((unsigned)fz_rem%s / (unsigned)", cx->sfx, cx->sfx);
			dim_c(cx, k->space[i], out);
			fprintf(out, ") : fz_rem%s / ", cx->sfx);
			dim_c(cx, k->space[i], out);
			fputs(";\n", out);
			ind(out, depth);
			fprintf(out, "const long long s%d%s = fz_rem%s - fz_q%d%s * ", i, cx->sfx, cx->sfx, i, cx->sfx);
			dim_c(cx, k->space[i], out);
			fprintf(out, "; fz_rem%s = fz_q%d%s;\n", cx->sfx, i, cx->sfx);
		}
	}
}

void space_total(Cx *cx, FILE *out)
{
	if (!cx->k->nspace) fputs("1LL", out);
	for (int i = 0; i < cx->k->nspace; i++) {
		if (i) fputs(" * ", out);
		dim_c(cx, cx->k->space[i], out);
	}
}

/* Temps this kernel reads for the last time are left zeroed for the next run. */
void emit_resets(Cx *cx, int depth)
{
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &cx->m->tensor[t];
		if (cx->p->reset_by[t - cx->p->first_tensor] != cx->kernel_id || x->rank == 0) continue;
		char names[MAX_RANK][24], *subs[MAX_RANK];
		for (int i = 0; i < x->rank; i++) snprintf(names[i], sizeof names[i], "s%d%s", i, cx->sfx), subs[i] = names[i];
		char *lin = linear_of(cx, t, subs);
		FILE *o = cx->sink ? cx->sink : cx->out;
		ind(o, depth);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		fprintf(o, "a.t_%s[%s] = 0; /* zero again for the next run */\n", x->name, lin);
		free(lin);
	}
}

/* After the space loop: the whole-grid fold, if any, and the closing brace.
 * Locals die with the loop, and the tail's with the kernel. */
void finish_kernel(Cx *cx)
{
	clear_locals(cx);
	if (cx->k->has_tail) emit_tail(cx, 1);
	clear_locals(cx);
	fputs("}\n\n", cx->out);
}

static void kernels(const Module *m, const Schedule *p, int persist, const unsigned char *written, FILE *out)
{
	Cx cx = {.m = m, .p = p, .fusion = p->fusion, .out = out, .sink_main = out, .sfx = "", .vec_u = -1, .scope = -1,
	         .persist = persist, .written = written};
	int ni = fusion_indices(m, &m->fusion[p->fusion], &cx.first_index), nt = p->last_tensor - p->first_tensor;
	cx.first_tensor = p->first_tensor;
	cx.bind = xcalloc((size_t)ni + 1, sizeof *cx.bind);
	cx.local = xcalloc((size_t)nt + 1, sizeof *cx.local);
	cx.local_at = xcalloc((size_t)nt + 1, sizeof *cx.local_at);
	cx.rc_used = xcalloc((size_t)nt + 1, 1);
	for (int t = 0; t < nt; t++) cx.local_at[t] = xcalloc(MAX_RANK, sizeof(char *));
	cx.w = (ExprWriter){.m = m, .leaf = cuda_leaf, .compute = ET_F32, .cuda = 1, .user = &cx};
	if (!persist) fprintf(out, "/* %c variant: %d kernel%s */\n\n", p->variant, p->nk, p->nk == 1 ? "" : "s");
	for (int i = 0; i < p->nk; i++) {
		cx.k = &p->k[i];
		cx.kernel_id = i, cx.nssa = 0;
		if ((unsigned)p->k[i].mode >= KM_N || !kern_template[p->k[i].mode]) die("kernel %s has no template", p->k[i].name);
		kern_template[p->k[i].mode]->emit(&cx);
	}
	clear_locals(&cx);
	for (int t = 0; t < nt; t++) free(cx.local_at[t]);
	for (int i = 0; i < ni; i++) free(cx.bind[i]);
	free(cx.bind), free(cx.local), free(cx.local_at), free(cx.rc_used), free(cx.memo);
}

void emit_cuda_kernels(const Module *m, const Schedule *p, FILE *out) { kernels(m, p, 0, NULL, out); }
void emit_cuda_bodies(const Module *m, const Schedule *p, const unsigned char *written, FILE *out)
{
	kernels(m, p, 1, written, out);
}

void emit_cuda_file(const Module *m, const Schedule *fused, const Schedule *unfused, const char *banner, FILE *out)
{
	fputs(banner, out);
	fputc('\n', out);
	emit_cuda_prelude(out);
	emit_args_struct(m, fused->fusion, 1, out);
	fputc('\n', out);
	int tile = 0;
	for (int i = 0; i < fused->nk; i++) tile |= fused->k[i].mode == KM_TILE;
	for (int i = 0; i < unfused->nk; i++) tile |= unfused->k[i].mode == KM_TILE;
	if (tile) emit_tile_library(out);
	emit_cuda_kernels(m, fused, out);
	emit_cuda_kernels(m, unfused, out);
	for (int i = 0; i < m->npipeline; i++) {
		const Pipeline *pl = &m->pipeline[i];
		if (pl->fusion != fused->fusion) continue;
		PipePlan pp;
		const char *why = pipe_plan(m, pl, fused->target, &pp);
		if (why) fprintf(out, "/* pipeline %s is not built: %s */\n", pl->name, why);
		else emit_pipeline_cuda(m, pl, &pp, out);
		sched_free(&pp.s);
	}
}
