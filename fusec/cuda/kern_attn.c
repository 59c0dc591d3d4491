/* Template: ATTN kernels, two tensor-core products around a row softmax
 * carried online (plan/plan_attn.c). The mainloop is fixed CUDA text
 * (attn.cuh, one instantiation a head-size bucket); what is generated per
 * kernel are three functors rendered by the shared statement code: z, the
 * pointwise work between S and the row max, at (b, m, n) with S there;
 * epi, the work on O at (b, m, d) (O itself stored if it leaves the
 * kernel); row, the work on a row's max and sum at (b, m). Then one entry
 * point a bucket; the launch picks by the head size (host/grid.c). */
#include <stdlib.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* attention's library, printed once into each attention artifact: the
   products and the online softmax (attn.cuh), the copying warpgroup and
   the warpgroups' barriers and turns (attn_warps.cuh), the computing
   warpgroups, the epilogue and the kernel (attn_kernel.cuh): one text in
   three files of one idea each */
static const char attn_lib[] =
#include "attn.inc"
#include "attn_warps.inc"
#include "attn_kernel.inc"
	;

void cuda_attn_library(FILE *out)
{
	fputs(attn_lib, out), fputc('\n', out);
}

/* the functor's parameters: the coordinates s0.., then the values */
static void functor_head(Cx *cx, const char *what, const char *ret, int ncoord, const char *values)
{
	const char *fname = cx->m->fusion[cx->fusion].name;
	fprintf(cx->out, "struct %s_%s {\n\tconst fz_%s_args &a;\n\t__device__ __forceinline__ %s operator()(", cx->k->name, what,
	        fname, ret);
	for (int i = 0; i < ncoord; i++) fprintf(cx->out, "const long long s%d, ", i);
	fprintf(cx->out, "%s) const\n\t{\n", values);
}

static void functor_end(Cx *cx)
{
	fputs("\t}\n};\n\n", cx->out);
	cuda_clear_locals(cx);
}

/* binds a row statement's point to s0.. and, if it reduces, its n to the last */
static void bind_row(Cx *cx, const Stmt *s)
{
	cuda_bind_point(cx, s, cx->k->nspace);
	if (s->nindex == s->nfree) return;
	const int ix = s->first_index + s->nfree - cx->first_index;
	free(cx->bind[ix]);
	cx->bind[ix] = xasprintf("s%d", cx->k->nspace - 1);
	cx->role[ix] = (signed char)(cx->k->nspace - 1);
}

/* the row's max and sum as locals at the row (s0..), stored if they leave */
static void publish_stats(Cx *cx)
{
	const AttnPlan *at = &cx->k->at;
	const Stmt *mx = &cx->m->stmt[at->mx], *sum = &cx->m->stmt[at->sum];
	bind_row(cx, mx);
	cuda_publish(cx, mx, "v_mx_");
	if (sched_stored(cx->p, mx->out)) cuda_store_target(cx, mx, "v_mx_", 2);
	bind_row(cx, sum);
	cuda_publish(cx, sum, "v_l_");
	if (sched_stored(cx->p, sum->out)) cuda_store_target(cx, sum, "v_l_", 2);
}

/* z: the max's argument at (b, m, n), S there in v_acc_; "zin" (causal
   only): the same where every n <= m, the mask's select written as its
   first value (taken on the steps wholly inside the triangle) */
static void z_functor(Cx *cx, const char *what)
{
	const Module *m = cx->m;
	const AttnPlan *at = &cx->k->at;
	functor_head(cx, what, "float", cx->k->nspace, "const float v_acc_");
	cuda_bind_point(cx, &m->stmt[at->c1], cx->k->nspace);
	cuda_publish(cx, &m->stmt[at->c1], cuda_contract_value(cx, &m->stmt[at->c1], "v_acc_", 2));
	for (int sid = at->c1 + 1; sid < at->mx; sid++) {
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_MAP) continue;
		cuda_bind_point(cx, &m->stmt[sid], cx->k->nspace);
		cuda_map(cx, sid, 2, 0);
	}
	const Stmt *mx = &m->stmt[at->mx];
	bind_row(cx, mx);
	char *decls = NULL, *v = cuda_value_of(cx, mx, mx->rhs, &decls);
	cuda_put_decls(cx->out, decls, 2);
	fprintf(cx->out, "\t\treturn (float)(%s);\n", v);
	free(v), free(decls);
	functor_end(cx);
}

/* zc (AttnPlan.zmul): z's factor, the same at every point; the z functors
   then give S where z is S times it (ExprWriter.fold_mul), and the causal
   mask's -inf where z is its constant (its exponential 0 at any factor) */
static void zc_functor(Cx *cx)
{
	const Module *m = cx->m;
	const AttnPlan *at = &cx->k->at;
	const Stmt *s = &m->stmt[at->zstmt];
	functor_head(cx, "zc", "float", 0, "");
	cuda_bind_point(cx, s, cx->k->nspace);
	char *decls = NULL, *v = cuda_value_of(cx, s, at->zc, &decls);
	cuda_put_decls(cx->out, decls, 2);
	fprintf(cx->out, "\t\treturn (float)(%s);\n", v);
	free(v), free(decls);
	functor_end(cx);
}

/* epi: O at (b, m, d) in v_acc_, and the row's statistics; O's statements.
   With AttnPlan.out, the bits of that tensor's element there are its value
   (fz_ov): the kernel stores them, a row at a time */
static void epi_functor(Cx *cx)
{
	const Module *m = cx->m;
	const AttnPlan *at = &cx->k->at;
	const Stmt *c2 = &m->stmt[at->c2];
	functor_head(cx, "epi", at->out ? "unsigned short" : "void", cx->k->nspace, "const float v_acc_, const float v_mx_, const float v_l_");
	if (at->out) fputs("\t\tunsigned short fz_ov = 0;\n", cx->out);
	cx->ret_out = at->out;
	publish_stats(cx);
	cuda_bind_point(cx, c2, cx->k->nspace);
	const char *v = cuda_contract_value(cx, c2, "v_acc_", 2);
	cuda_publish(cx, c2, v);
	if (sched_stored(cx->p, c2->out)) cuda_store_target(cx, c2, v, 2);
	for (int sid = at->c2 + 1; sid < cx->k->first_stmt + cx->k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_MAP || s->nfree != cx->k->nspace) continue;
		cuda_bind_point(cx, s, cx->k->nspace);
		cuda_map(cx, sid, 2, 0);
	}
	cx->ret_out = 0;
	fputs("\t\t(void)v_mx_, (void)v_l_;\n", cx->out);
	if (at->out) fputs("\t\treturn fz_ov;\n", cx->out);
	functor_end(cx);
}

/* row: the row's max and sum at (b, m); the rows' statements */
static void row_functor(Cx *cx)
{
	const Module *m = cx->m;
	functor_head(cx, "row", "void", cx->k->nspace - 1, "const float v_mx_, const float v_l_");
	publish_stats(cx);
	for (int sid = cx->k->at.c2 + 1; sid < cx->k->first_stmt + cx->k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_MAP || s->nfree != cx->k->nspace - 1) continue;
		cuda_bind_point(cx, s, cx->k->nspace);
		cuda_map(cx, sid, 2, 0);
	}
	fputs("\t\t(void)v_mx_, (void)v_l_;\n", cx->out);
	functor_end(cx);
}

void cuda_kern_attn(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const AttnPlan *at = &k->at;
	const char *fname = m->fusion[cx->fusion].name;
	FILE *out = cx->out;
	const ElemType et = m->tensor[at->q].type;
	const int bat = k->nspace == 3;
	/* the mainloop's shapes are fixed text: the schedule must ask for them */
	if (at->block_m % 64 || at->block_m < 64 || at->block_m > 192 || k->par.block != 2 * at->block_m + 128 || (et != ET_F16 && et != ET_BF16) ||
	    m->tensor[at->k].type != et || m->tensor[at->v].type != et || (k->nspace != 2 && k->nspace != 3) || at->nent < 1)
		die("attention kernel %s: block %d, %d rows, %d dimensions, %d entries", k->name, k->par.block, at->block_m,
		    k->nspace, at->nent);
	cx->w.compute = ET_F32, cx->w.half = 0;
	if (at->zmul) zc_functor(cx);
	cx->w.fold_mul = at->zmul, cx->w.fold_keep = at->zkeep, cx->w.select_ninf = at->zmul && at->causal ? at->csel : 0;
	z_functor(cx, "z");
	cx->w.select_ninf = 0;
	if (at->causal) {
		cx->w.select_true = at->csel;
		z_functor(cx, "zin");
		cx->w.select_true = 0;
	}
	cx->w.fold_mul = cx->w.fold_keep = 0;
	epi_functor(cx);
	row_functor(cx);
	for (int e = 0; e < at->nent; e++) {
		const int tma = attn_tma(at, e);
		if (at->st[e] < 2 || at->st[e] > 3 || at->nq[e] < 1 || at->nq[e] > 2)
			die("attention kernel %s: %d stages, %d buffers of Q", k->name, at->st[e], at->nq[e]);
		fprintf(out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const __grid_constant__ fz_%s_args a%s)\n{\n",
		        k->par.block, at->minb[e], at->entry[e], fname, tma ? ", const __grid_constant__ fz_tile_maps tm" : "");
		for (int t = m->fusion[cx->fusion].first_tensor; t < m->fusion[cx->fusion].first_tensor + m->fusion[cx->fusion].ntensor; t++)
			if (cx->p->reset_by[t - cx->p->first_tensor] == cx->kernel_id && m->tensor[t].rank == 0)
				fprintf(out, "\tif (blockIdx.x == 0 && threadIdx.x == 0) a.t_%s[0] = 0; /* for a later kernel */\n", m->tensor[t].name);
		fprintf(out, "\tfz_attn<%d, %d, %d, %d, %d, %d, %d, %d, %d>(%s_z{a}, %s_%s{a}, %s_epi{a}, %s_row{a}, %s, ", et == ET_BF16,
		        at->db[e], at->bn[e], at->st[e], at->nq[e], at->block_m / 64, at->causal, bat, at->out != 0, k->name, k->name, at->causal ? "zin" : "z",
		        k->name, k->name, tma ? "&tm" : "(const fz_tile_maps *)0");
		if (at->zmul) fprintf(out, "%s_zc{a}(), ", k->name);
		else fputs("1.f, ", out);
		if (at->out) fprintf(out, "(unsigned short *)a.t_%s, ", m->tensor[at->out - 1].name);
		else fputs("(unsigned short *)0, ", out);
		fprintf(out, "a.t_%s, a.t_%s, a.t_%s, ", m->tensor[at->q].name, m->tensor[at->k].name, m->tensor[at->v].name);
		cuda_dim(cx, k->space[bat], out), fputs(", ", out), cuda_dim(cx, k->space[bat + 1], out), fputs(", ", out);
		cuda_dim(cx, at->dh, out), fputs(", ", out);
		if (bat) cuda_dim(cx, k->space[0], out);
		else fputs("1LL", out);
		fputs(");\n}\n\n", out);
	}
}
