/* Statement bodies in CUDA: types and sizes, loads and stores with
 * conversion, the locals a value lives in while its kernel can still see
 * it, and a pointwise statement at the point. A value's reads are
 * rendered by cuda_read.c, its recomputed producers by cuda_remat.c. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

ElemType stmt_compute(const Module *m, const Stmt *s)
{
	return m->stage[s->stage].precision == ET_F64 ? ET_F64 : ET_F32;
}

void stmt_math(ExprWriter *w, const Module *m, const Stmt *s)
{
	ElemType p = m->stage[s->stage].precision;
	w->compute = stmt_compute(m, s);
	w->half = p == ET_F16 || p == ET_BF16;
}

const char *ctype(ElemType t)
{
	switch (t) {
	case ET_F64: return "double";
	case ET_I64: return "long long";
	case ET_I32: case ET_BOOL: return "int";
	default: return "float"; /* f32, and f16/bf16 computed in f32 */
	}
}

void ind(FILE *out, int n)
{
	for (int i = 0; i < n; i++) fputc('\t', out);
}

void dim_c(Cx *cx, Dim d, FILE *out)
{
	if (dim_derived(d)) dim_write_c(&cx->m->fusion[cx->fusion], d, "a.n_", out);
	else if (d.sym >= 0) fprintf(out, "a.n_%s", cx->m->fusion[cx->fusion].sym[d.sym]);
	else fprintf(out, "%lldLL", (long long)d.value);
}

/* Read element `lin` of tensor t, converted to its compute type. */
void load_elem(Cx *cx, int t, const char *lin, FILE *out)
{
	const Tensor *x = &cx->m->tensor[t];
	const char *pre = cx_readonly(cx, t) ? "__ldg(&" : "(";
	switch (x->type) {
	/* inputs through the read-only path: the compiler may then issue their
	   loads ahead of the kernel's stores (a tile epilogue's 16 rows at once) */
	case ET_F16: fprintf(out, "fz_h2f(%sa.t_%s[%s]))", pre, x->name, lin); break;
	case ET_BF16: fprintf(out, "fz_b2f(%sa.t_%s[%s]))", pre, x->name, lin); break;
	default: fprintf(out, "%sa.t_%s[%s])", pre, x->name, lin); break;
	}
}

static void store_conv(const Tensor *x, const char *v, FILE *out)
{
	switch (x->type) {
	case ET_F16: fprintf(out, "fz_f2h(%s)", v); break;
	case ET_BF16: fprintf(out, "fz_f2b(%s)", v); break;
	default: fprintf(out, "(%s)(%s)", tensor_device_type(x), v); break;
	}
}

char *linear_of(Cx *cx, int t, char **subs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	emit_linear(cx->m, cx->fusion, t, subs, "a.n_", f);
	fclose(f);
	return buf;
}

void put_decls(FILE *out, const char *decls, int depth)
{
	for (const char *l = decls; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		ind(out, depth);
		fwrite(l, 1, n, out);
		fputc('\n', out);
		l += n + (nl != NULL);
	}
}

void set_local(Cx *cx, int t, const char *name, char **subs, int n)
{
	free(cx->local[t - cx->first_tensor]);
	cx->local[t - cx->first_tensor] = strdup(name);
	for (int i = 0; i < MAX_RANK; i++) {
		free(cx->local_at[t - cx->first_tensor][i]);
		cx->local_at[t - cx->first_tensor][i] = i < n ? strdup(subs[i]) : NULL;
	}
}

void clear_locals(Cx *cx)
{
	for (int t = 0; t < cx->p->last_tensor - cx->p->first_tensor; t++) { /* the arrays' positions */
		free(cx->local[t]);
		cx->local[t] = NULL;
		for (int i = 0; i < MAX_RANK; i++) free(cx->local_at[t][i]), cx->local_at[t][i] = NULL;
	}
}

/* Stores value v into s's target at s's left-hand subscripts. */
void store_target(Cx *cx, const Stmt *s, const char *v, int depth)
{
	const Tensor *x = &cx->m->tensor[s->out];
	char *subs[MAX_RANK] = {0}, *lin = NULL;
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	FILE *o = cx->sink ? cx->sink : cx->out;
	int vi = cx->vec_u >= 0 && !s->mask ? vec_access(cx, s->out, subs, s->nlhs, 1) : -1;
	ind(o, depth);
	if (vi >= 0) { /* collected, stored as one vector after the copies */
		fprintf(o, "fz_vs%d[%d] = ", vi, cx->vec_u);
	} else if (row_store_deferred(cx, s, subs)) { /* stored as one vector after the row walk's step */
		fprintf(o, "fz_ws_%s[fz_j] = ", x->name);
	} else {
		lin = linear_of(cx, s->out, subs);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		fprintf(o, "a.t_%s[%s] = ", x->name, lin);
	}
	store_conv(x, v, o);
	fputs(";\n", o);
	free(lin);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* Record s's result as a local at its left-hand subscripts. */
void publish(Cx *cx, const Stmt *s, const char *name)
{
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	set_local(cx, s->out, name, subs, s->nlhs);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* A pointwise statement at the current point. */
void emit_map(Cx *cx, int sid, int depth, int store_only_thread0)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *x = &m->tensor[s->out];
	char *name = xasprintf("v_%s%s", x->name, cx->sfx);
	char *vd = NULL, *md = NULL;
	char *v = value_of(cx, s, s->rhs, &vd);
	ElemType vt = s->acc;
	if (s->red == RED_ACCUM) { /* t(i) += value: read-modify-write at the point */
		char *subs[MAX_RANK] = {0};
		for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
		char *lin = linear_of(cx, s->out, subs);
		char *mask = s->mask ? value_of(cx, s, s->mask, &md) : NULL;
		FILE *o = cx->sink ? cx->sink : cx->out;
		put_decls(o, md, depth);
		ind(o, depth);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		if (mask) fprintf(o, "if (%s) ", mask);
		if (vd) fputs("{\n", o), put_decls(o, vd, depth + 1), ind(o, depth + 1);
		fprintf(o, "a.t_%s[%s] += (%s)(%s);\n", x->name, lin, tensor_device_type(x), v);
		if (vd) ind(o, depth), fputs("}\n", o);
		free(lin), free(mask), free(vd), free(md), free(name);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		free(v);
		return;
	}
	if (s->mask) {
		char *mk = value_of(cx, s, s->mask, &md);
		put_decls(cx->out, md, depth);
		ind(cx->out, depth);
		fprintf(cx->out, "%s %s = 0;\n", ctype(vt), name);
		ind(cx->out, depth);
		fprintf(cx->out, "if (%s) {\n", mk);
		put_decls(cx->out, vd, depth + 1);
		ind(cx->out, depth + 1);
		fprintf(cx->out, "%s = (%s)(%s);\n", name, ctype(vt), v);
		if (sched_stored(cx->p, s->out)) {
			if (store_only_thread0) ind(cx->out, depth + 1), fprintf(cx->out, "if (%s)\n", row_leader(cx));
			store_target(cx, s, name, depth + 1 + store_only_thread0);
		}
		ind(cx->out, depth);
		fputs("}\n", cx->out);
		free(mk), free(md);
	} else {
		put_decls(cx->out, vd, depth);
		ind(cx->out, depth);
		fprintf(cx->out, "const %s %s = (%s)(%s);\n", ctype(vt), name, ctype(vt), v);
		if (sched_stored(cx->p, s->out)) {
			if (store_only_thread0) ind(cx->out, depth), fprintf(cx->out, "if (%s)\n", row_leader(cx));
			store_target(cx, s, name, depth + store_only_thread0);
		}
	}
	publish(cx, s, name);
	free(v), free(vd), free(name);
}

/* Binds the statement's free indices (or, for a tail, its reduced ones)
 * to the kernel's space variables s0, s1, ... */
void bind_point(Cx *cx, const Stmt *s, int nspace)
{
	cx->cur = (int)(s - cx->m->stmt);
	int n = s->pattern == PAT_COMPACT || cx->p->op[cx->cur - cx->p->first_stmt] == STEP_GRID_REDUCE ? s->nindex : s->nfree;
	for (int i = 0; i < n && i < nspace; i++) {
		char v[16];
		snprintf(v, sizeof v, "s%d%s", i, cx->sfx);
		free(cx->bind[s->first_index + i - cx->first_index]);
		cx->bind[s->first_index + i - cx->first_index] = strdup(v);
	}
}
