/* The CUDA back end's driver: each kernel of a schedule printed by the
 * template of its kind (kern_*.c), and the .cu of a fusion. Values that
 * stay in a kernel live in locals ("v_t"); everything that leaves a kernel
 * goes through memory. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* the template of each kernel kind */
static void (*const kern_template[KM_N])(Cx *cx) = {
	[KM_POINT] = cuda_kern_point,
	[KM_ROW] = cuda_kern_row,
	[KM_MATMUL] = cuda_kern_matmul,
	[KM_TILE] = cuda_kern_tile,
	[KM_SCATTER] = cuda_kern_scatter,
	[KM_SCALAR] = cuda_kern_scalar,
	[KM_ATTN] = cuda_kern_attn,
};

static void kernels(const Module *m, const Schedule *p, int persist, const unsigned char *written, FILE *out)
{
	Cx cx = {.m = m, .p = p, .fusion = p->fusion, .out = out, .sink_main = out, .sfx = "", .vec_u = -1, .scope = -1,
	         .persist = persist, .written = written};
	int ni = fusion_indices(m, &m->fusion[p->fusion], &cx.first_index), nt = p->last_tensor - p->first_tensor;
	cx.first_tensor = p->first_tensor;
	cx.bind = xcalloc((size_t)ni + 1, sizeof *cx.bind);
	cx.role = xcalloc((size_t)ni + 1, 1);
	memset(cx.role, CUDA_ROLE_NONE, (size_t)ni + 1);
	cx.local = xcalloc((size_t)nt + 1, sizeof *cx.local);
	cx.local_at = xcalloc((size_t)nt + 1, sizeof *cx.local_at);
	cx.rc_used = xcalloc((size_t)nt + 1, 1);
	cx.row_ix = xcalloc((size_t)ni + 1, sizeof *cx.row_ix), cx.row_cap = ni + 1;
	for (int t = 0; t < nt; t++) cx.local_at[t] = xcalloc(MAX_RANK, sizeof(char *));
	cx.w = (ExprWriter){.m = m, .leaf = cuda_leaf, .compute = ET_F32, .cuda = 1, .user = &cx};
	if (!persist) fprintf(out, "/* %c variant: %d kernel%s */\n\n", p->variant, p->nk, p->nk == 1 ? "" : "s");
	for (int i = 0; i < p->nk; i++) {
		cx.k = &p->k[i];
		cx.kernel_id = i, cx.nssa = 0;
		if ((unsigned)p->k[i].mode >= KM_N || !kern_template[p->k[i].mode]) die("kernel %s has no template", p->k[i].name);
		kern_template[p->k[i].mode](&cx);
		/* a walk is bound for its loop only (cuda_row_bind): one left open
		   would bind its group for every later walk, and pile up */
		if (cx.nrow_ix) die("kernel %s leaves %d row walks open", p->k[i].name, cx.nrow_ix);
	}
	cuda_clear_locals(&cx);
	for (int t = 0; t < nt; t++) free(cx.local_at[t]);
	for (int i = 0; i < ni; i++) free(cx.bind[i]);
	free(cx.bind), free(cx.role), free(cx.local), free(cx.local_at), free(cx.rc_used), free(cx.row_ix), free(cx.memo);
}

void cuda_bodies(const Module *m, const Schedule *p, const unsigned char *written, FILE *out)
{
	kernels(m, p, 1, written, out);
}

void cuda_file(const Module *m, const FusionPlan *fp, const char *banner, FILE *out)
{
	fputs(banner, out);
	fputc('\n', out);
	cuda_prelude(m, fp, out);
	emit_args_struct(m, fp->fusion, 1, out);
	fputc('\n', out);
	int tile = 0, attn = 0;
	for (int v = 0; v < 2; v++) {
		const Schedule *s = v ? &fp->unfused : &fp->fused;
		for (int i = 0; i < s->nk; i++) tile |= s->k[i].mode == KM_TILE, attn |= s->k[i].mode == KM_ATTN;
	}
	if (tile || attn) cuda_mma_library(out);
	if (tile) cuda_tile_library(out);
	if (attn) cuda_attn_library(out);
	kernels(m, &fp->fused, 0, NULL, out);
	kernels(m, &fp->unfused, 0, NULL, out);
	for (int i = 0; i < fp->npipe; i++) {
		const PipePlan *pp = &fp->pipe[i];
		if (pp->why) fprintf(out, "/* pipeline %s is not built: %s */\n", pp->pl->name, pp->why);
		else cuda_pipeline(m, pp, out);
	}
}
