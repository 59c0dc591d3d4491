/* Statement bodies in CUDA: types and sizes, loads and stores with
 * conversion, the locals a value lives in while its kernel can still see
 * it, and a pointwise statement at the point. A value's reads are
 * rendered by cuda_read.c, its recomputed producers by cuda_remat.c. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static void store_conv(const Tensor *x, const char *v, FILE *out)
{
	switch (x->type) {
	case ET_F16: fprintf(out, "fz_f2h(%s)", v); break;
	case ET_BF16: fprintf(out, "fz_f2b(%s)", v); break;
	case ET_F8E4M3: fprintf(out, "fz_f2e4m3(%s)", v); break; /* saturated (emit_prelude.c) */
	case ET_F8E5M2: fprintf(out, "fz_f2e5m2(%s)", v); break;
	default: fprintf(out, "(%s)(%s)", emit_device_type(x), v); break;
	}
}

void cuda_set_local(Cx *cx, int t, const char *name, char **subs, int n)
{
	free(cx->local[t - cx->first_tensor]);
	cx->local[t - cx->first_tensor] = strdup(name);
	for (int i = 0; i < MAX_RANK; i++) {
		free(cx->local_at[t - cx->first_tensor][i]);
		cx->local_at[t - cx->first_tensor][i] = i < n ? strdup(subs[i]) : NULL;
	}
}

void cuda_clear_locals(Cx *cx)
{
	for (int t = 0; t < cx->p->last_tensor - cx->p->first_tensor; t++) { /* the arrays' positions */
		free(cx->local[t]);
		cx->local[t] = NULL;
		for (int i = 0; i < MAX_RANK; i++) free(cx->local_at[t][i]), cx->local_at[t][i] = NULL;
	}
}

/* Stores value v into s's target at s's left-hand subscripts. */
void cuda_store_target(Cx *cx, const Stmt *s, const char *v, int depth)
{
	const Tensor *x = &cx->m->tensor[s->out];
	char *subs[MAX_RANK] = {0}, *lin = NULL;
	int roles[MAX_RANK];
	for (int i = 0; i < s->nlhs; i++) subs[i] = emit_render(&cx->w, s->lhs[i]), roles[i] = cuda_role(cx, s->lhs[i]);
	FILE *o = cx->sink ? cx->sink : cx->out;
	/* a masked store joins a vector when its mask is kept (the vector
	   stored where every copy's holds, else each where its own does) */
	int vi = cx->vec_u >= 0 && (!s->mask || cx->store_mask) ? cuda_vec_access(cx, s->out, roles, s->lhs, s->nlhs, 1, NULL) : -1;
	if (vi < 0 && cx->store_mask) cuda_ind(o, depth), fprintf(o, "if (%s)\n", cx->store_mask), depth++;
	cuda_ind(o, depth);
	if (cx->ret_out == s->out + 1) { /* the caller stores it (attention's rows of O) */
		fputs("fz_ov = ", o);
	} else if (vi >= 0) { /* collected, stored as one vector after the copies */
		if (cx->store_mask) free(cx->vs[vi].mask[cx->vec_u]), cx->vs[vi].mask[cx->vec_u] = xstrdup(cx->store_mask);
		fprintf(o, "fz_vs%d[%d] = ", vi, cx->vec_u);
	} else if (cuda_row_store_deferred(cx, s)) { /* stored as one vector after the row walk's step */
		fprintf(o, "fz_ws_%s[fz_j] = ", x->name);
	} else {
		lin = cuda_linear_at(cx, s->out, subs, roles, s->nlhs);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		fprintf(o, "a.t_%s[%s] = ", x->name, lin);
	}
	store_conv(x, v, o);
	fputs(";\n", o);
	free(lin);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* Record s's result as a local at its left-hand subscripts. */
void cuda_publish(Cx *cx, const Stmt *s, const char *name)
{
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = emit_render(&cx->w, s->lhs[i]);
	cuda_set_local(cx, s->out, name, subs, s->nlhs);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* A pointwise statement at the current point. */
void cuda_map(Cx *cx, int sid, int depth, int store_only_thread0)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *x = &m->tensor[s->out];
	char *name = xasprintf("v_%s%s", x->name, cx->sfx);
	char *vd = NULL, *md = NULL;
	char *v = cuda_value_of(cx, s, s->rhs, &vd);
	ElemType vt = s->acc;
	if (s->red == RED_ACCUM) { /* t(i) += value: read-modify-write at the point */
		char *subs[MAX_RANK] = {0};
		for (int i = 0; i < s->nlhs; i++) subs[i] = emit_render(&cx->w, s->lhs[i]);
		char *lin = cuda_linear(cx, s->out, subs);
		char *mask = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
		FILE *o = cx->sink ? cx->sink : cx->out;
		cuda_put_decls(o, md, depth);
		cuda_ind(o, depth);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		if (mask) fprintf(o, "if (%s) ", mask);
		if (vd) fputs("{\n", o), cuda_put_decls(o, vd, depth + 1), cuda_ind(o, depth + 1);
		fprintf(o, "a.t_%s[%s] += (%s)(%s);\n", x->name, lin, emit_device_type(x), v);
		if (vd) cuda_ind(o, depth), fputs("}\n", o);
		free(lin), free(mask), free(vd), free(md), free(name);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		free(v);
		return;
	}
	if (s->mask) {
		char *mk = cuda_value_of(cx, s, s->mask, &md);
		cuda_put_decls(cx->out, md, depth);
		cuda_ind(cx->out, depth);
		fprintf(cx->out, "%s %s = 0;\n", cuda_ctype(vt), name);
		if (cx->sink && sched_stored(cx->p, s->out)) {
			/* its store deferred past the copies' loads (an unrolled or
			   vector point kernel): the mask kept for it */
			char *keep = xasprintf("fz_m_%s%s", x->name, cx->sfx);
			cuda_ind(cx->out, depth), fprintf(cx->out, "const bool %s = %s;\n", keep, mk);
			free(mk), mk = keep;
		}
		cuda_ind(cx->out, depth);
		fprintf(cx->out, "if (%s) {\n", mk);
		cuda_put_decls(cx->out, vd, depth + 1);
		cuda_ind(cx->out, depth + 1);
		fprintf(cx->out, "%s = (%s)(%s);\n", name, cuda_ctype(vt), v);
		if (sched_stored(cx->p, s->out) && cx->sink) { /* deferred: under the kept mask */
			if (store_only_thread0) die("kernel %s: a deferred store by one thread", cx->k->name);
			cx->store_mask = mk;
			cuda_store_target(cx, s, name, depth);
			cx->store_mask = NULL;
		} else if (sched_stored(cx->p, s->out)) {
			if (store_only_thread0) cuda_ind(cx->out, depth + 1), fprintf(cx->out, "if (%s)\n", row_leader(cx));
			cuda_store_target(cx, s, name, depth + 1 + store_only_thread0);
		}
		cuda_ind(cx->out, depth);
		fputs("}\n", cx->out);
		free(mk), free(md);
	} else {
		cuda_put_decls(cx->out, vd, depth);
		cuda_ind(cx->out, depth);
		fprintf(cx->out, "const %s %s = (%s)(%s);\n", cuda_ctype(vt), name, cuda_ctype(vt), v);
		if (sched_stored(cx->p, s->out)) {
			if (store_only_thread0) cuda_ind(cx->out, depth), fprintf(cx->out, "if (%s)\n", row_leader(cx));
			cuda_store_target(cx, s, name, depth + store_only_thread0);
		}
	}
	cuda_publish(cx, s, name);
	free(v), free(vd), free(name);
}

/* A contraction's value from its accumulator acc: times the product of
   its index-free factors (Stmt.contract_scale) in a local of its own, or
   acc itself */
const char *cuda_contract_value(Cx *cx, const Stmt *c, const char *acc, int depth)
{
	if (!c->contract_scale) return acc;
	char *d = NULL, *v = cuda_value_of(cx, c, c->contract_scale, &d);
	cuda_put_decls(cx->out, d, depth);
	cuda_ind(cx->out, depth);
	fprintf(cx->out, "const float v_scaled_ = %s * (float)(%s);\n", acc, v);
	free(v), free(d);
	return "v_scaled_";
}

/* Binds the statement's free indices (or, for a tail, its reduced ones)
 * to the kernel's space variables s0, s1, ... */
void cuda_bind_point(Cx *cx, const Stmt *s, int nspace)
{
	cx->cur = (int)(s - cx->m->stmt);
	int n = s->pattern == PAT_COMPACT || cx->p->op[cx->cur - cx->p->first_stmt] == STEP_GRID_REDUCE ? s->nindex : s->nfree;
	for (int i = 0; i < n && i < nspace; i++) {
		char v[16];
		snprintf(v, sizeof v, "s%d%s", i, cx->sfx);
		free(cx->bind[s->first_index + i - cx->first_index]);
		cx->bind[s->first_index + i - cx->first_index] = strdup(v);
		cx->role[s->first_index + i - cx->first_index] = (signed char)i;
	}
}
