/* The whole-grid fold: each thread accumulates its points' terms of the
 * kernel's rank-0 reductions (tacc_*); at the end of the kernel every block
 * writes its partials, and the last block to finish folds them in block
 * order, so a run gives the same bits every time. The last block then runs
 * the scalar epilogue phase. Grid-wide barriers of persistent kernels will
 * live here too. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* Tail: per-thread partials of whole-grid reductions, folded by the last
 * block to finish, in block order: the same bits on every run. */
void cuda_tail(Cx *cx, int depth)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	const int nt = k->ntail;
	const int end = k->first_stmt + k->nstmt;
	for (int sid = k->first_stmt, q = 0; sid < end; sid++) {
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_GRID_REDUCE) continue;
		const Stmt *s = &m->stmt[sid];
		const char *nm = m->tensor[s->out].name;
		cuda_ind(out, depth), fprintf(out, "{\n");
		cuda_ind(out, depth + 1), fprintf(out, "const double blk = fz_block_reduce<double, %s>((double)tacc_%s, fz_sh);\n", cuda_red_op(s->red), nm);
		cuda_ind(out, depth + 1), fprintf(out, "if (threadIdx.x == 0) a.ws_part[(long long)blockIdx.x * %d + %d] = blk;\n", nt, q++);
		cuda_ind(out, depth), fprintf(out, "}\n");
	}
	cuda_ind(out, depth), fputs("__shared__ bool fz_is_last;\n", out);
	cuda_ind(out, depth), fputs("__threadfence();\n", out);
	cuda_ind(out, depth), fputs("__syncthreads();\n", out);
	cuda_ind(out, depth), fputs("if (threadIdx.x == 0) fz_is_last = atomicAdd(a.ws_count, 1u) == gridDim.x - 1;\n", out);
	cuda_ind(out, depth), fputs("__syncthreads();\n", out);
	cuda_ind(out, depth), fputs("if (!fz_is_last) return;\n", out);
	cuda_ind(out, depth), fputs("__threadfence();\n", out);
	for (int sid = k->first_stmt, q = 0; sid < end; sid++) {
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_GRID_REDUCE) continue;
		const Stmt *s = &m->stmt[sid];
		const char *nm = m->tensor[s->out].name;
		cuda_ind(out, depth), fprintf(out, "double fold_%s = %s;\n", nm, cuda_identity(s->red, ET_F64));
		cuda_ind(out, depth), fprintf(out, "for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x)\n");
		cuda_ind(out, depth + 1), fprintf(out, "fold_%s = fz_op<%s>(fold_%s, __ldcg(&a.ws_part[(long long)b * %d + %d]));\n", nm, cuda_red_op(s->red), nm, nt, q++);
		cuda_ind(out, depth), fprintf(out, "fold_%s = fz_block_reduce<double, %s>(fold_%s, fz_sh);\n", nm, cuda_red_op(s->red), nm);
	}
	cuda_ind(out, depth), fputs("if (threadIdx.x != 0) return;\n", out);
	cuda_ind(out, depth), fputs("*a.ws_count = 0u; /* ready for the next launch */\n", out);
	for (int sid = k->first_stmt; sid < end; sid++) {
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_GRID_REDUCE) continue;
		const Stmt *s = &m->stmt[sid];
		const Tensor *x = &m->tensor[s->out];
		char *name = xasprintf("v_%s", x->name);
		cuda_ind(out, depth), fprintf(out, "const %s %s = (%s)fold_%s;\n", cuda_ctype(s->acc), name, cuda_ctype(s->acc), x->name);
		if (sched_stored(cx->p, s->out)) cuda_store_target(cx, s, name, depth);
		cuda_set_local(cx, s->out, name, NULL, 0);
		free(name);
	}
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++)
		if (cx->p->op[sid - cx->p->first_stmt] == STEP_EPILOGUE) cuda_map(cx, sid, depth, 0);
}

void cuda_tail_decls(Cx *cx, int depth)
{
	const Module *m = cx->m;
	for (int sid = cx->k->first_stmt; sid < cx->k->first_stmt + cx->k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_GRID_REDUCE) continue;
		cuda_ind(cx->out, depth);
		fprintf(cx->out, "%s tacc_%s = %s;\n", cuda_ctype(s->acc), m->tensor[s->out].name, cuda_identity(s->red, s->acc));
	}
}

void cuda_tail_accumulate(Cx *cx, int sid, int depth, int thread0)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	char *vd = NULL, *md = NULL;
	char *v = cuda_value_of(cx, s, s->rhs, &vd);
	char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
	const char *nm = m->tensor[s->out].name;
	cuda_put_decls(cx->out, md, depth);
	cuda_ind(cx->out, depth);
	if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", cx->out);
	if (thread0 || mk) fprintf(cx->out, "if (%s%s%s) ", thread0 ? row_leader(cx) : "", thread0 && mk ? " && " : "", mk ? mk : "");
	if (vd) fputs("{\n", cx->out), cuda_put_decls(cx->out, vd, depth + 1), cuda_ind(cx->out, depth + 1);
	fprintf(cx->out, "tacc_%s = fz_op<%s>(tacc_%s, (%s)(%s));\n", nm, cuda_red_op(s->red), nm, cuda_ctype(s->acc), v);
	if (vd) cuda_ind(cx->out, depth), fputs("}\n", cx->out);
	free(v), free(mk), free(vd), free(md);
}
