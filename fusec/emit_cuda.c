/* CUDA C for one plan: a kernel per plan Kernel, by mode. Values that stay
 * in a kernel live in locals ("v_t"); pointwise producers are substituted
 * into their readers; everything that leaves a kernel goes through memory. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

typedef struct Cx {
	const Module *m;
	const Plan *p;
	int fusion;
	const Kernel *k;
	char **bind;      /* per index: C expression */
	char **local;     /* per tensor: local holding its value at the point */
	char ***local_at; /* per tensor: the subscripts that local stands for */
	int *writer;      /* per tensor: its only writing statement, -1 none, -2 several */
	ExprWriter w;
	FILE *out;
	FILE *sink;       /* where stores go: out, or a copy's deferred stores */
	FILE *sink_main;  /* the .cu itself */
	const char *sfx;  /* suffix of this copy's locals when unrolled */
	int sliced;       /* reductions split over warps (Kernel.slices) */
	const char *rc_var;      /* inside a row loop over cached registers: its index */
	unsigned char *rc_used;  /* per tensor: its row is cached */
	int kernel_id;
} Cx;

static ElemType stmt_compute(const Module *m, const Stmt *s)
{
	return m->stage[s->stage].precision == ET_F64 ? ET_F64 : ET_F32;
}

static const char *ctype(ElemType t)
{
	switch (t) {
	case ET_F64: return "double";
	case ET_I64: return "long long";
	case ET_I32: case ET_BOOL: return "int";
	default: return "float"; /* f32, and f16/bf16 computed in f32 */
	}
}

/* Read element `lin` of tensor t, converted to its compute type. */
static void load_elem(Cx *cx, int t, const char *lin, FILE *out)
{
	const Tensor *x = &cx->m->tensor[t];
	const char *pre = x->kind == TK_INPUT ? "__ldg(&" : "(";
	switch (x->type) {
	case ET_F16: fprintf(out, "fz_h2f(a.t_%s[%s])", x->name, lin); break;
	case ET_BF16: fprintf(out, "fz_b2f(a.t_%s[%s])", x->name, lin); break;
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

static char *linear_of(Cx *cx, int t, char **subs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) abort();
	emit_linear(cx->m, cx->fusion, t, subs, "a.n_", f);
	fclose(f);
	return buf;
}

static int stmt_in_kernel(const Cx *cx, int sid)
{
	return sid >= cx->k->first_stmt && sid < cx->k->first_stmt + cx->k->nstmt;
}

static void leaf(ExprWriter *w, int e, void *outp)
{
	Cx *cx = w->user;
	FILE *out = outp;
	const Module *m = cx->m;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) {
		assert(cx->bind[x->index]);
		fputs(cx->bind[x->index], out);
		return;
	}
	int t = x->tensor;
	const Tensor *tt = &m->tensor[t];
	if (x->op == IR_SCALAR && tt->kind == TK_INPUT) {
		fprintf(out, "((%s)a.t_%s)", elem_info[tt->type].is_float ? ctype(w->compute) : ctype(tt->type), tt->name);
		return;
	}
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < x->nargs; i++) subs[i] = render_expr(w, x->args[i]);
	int hit = cx->local[t] != NULL;
	for (int i = 0; i < x->nargs && hit; i++) hit = cx->local_at[t][i] && !strcmp(cx->local_at[t][i], subs[i]);
	int wr = cx->writer[t];
	int cached = cx->rc_var && tt->kind == TK_INPUT && x->nargs == cx->k->nspace + 1 &&
	             !strcmp(subs[x->nargs - 1], cx->rc_var);
	for (int i = 0; cached && i < cx->k->nspace; i++) {
		char sv[16];
		snprintf(sv, sizeof sv, "s%d", i);
		cached = !strcmp(subs[i], sv);
	}
	if (cached) {
		fprintf(out, "fz_rc_%s[fz_k]", tt->name);
		cx->rc_used[t] = 1;
	} else if (hit) {
		fputs(cx->local[t], out);
	} else if (wr >= 0 && (cx->p->inlined[wr] || (stmt_in_kernel(cx, wr) && m->stmt[wr].red == RED_NONE &&
	                                               m->stmt[wr].pattern == PAT_MAP && !m->stmt[wr].mask))) {
		/* Substitute the producer, its free indices bound to our subscripts. */
		const Stmt *P = &m->stmt[wr];
		char *saved[MAX_RANK];
		for (int i = 0; i < P->nfree; i++) {
			saved[i] = cx->bind[P->first_index + i];
			cx->bind[P->first_index + i] = subs[i];
		}
		ElemType c = w->compute;
		w->compute = stmt_compute(m, P);
		fprintf(out, "((%s)", ctype(c));
		ir_write_expr(w, P->rhs, out);
		fputc(')', out);
		w->compute = c;
		for (int i = 0; i < P->nfree; i++) cx->bind[P->first_index + i] = saved[i];
	} else {
		char *lin = linear_of(cx, t, subs);
		load_elem(cx, t, lin, out);
		free(lin);
	}
	for (int i = 0; i < x->nargs; i++) free(subs[i]);
}

static void ind(FILE *out, int n)
{
	for (int i = 0; i < n; i++) fputc('\t', out);
}

static const char *identity(RedOp r, ElemType t)
{
	int f = elem_info[t].is_float;
	switch (r) {
	case RED_MAX: return f ? (t == ET_F64 ? "-FZ_INF_D" : "-FZ_INF_F") : (t == ET_I64 ? "FZ_I64_MIN" : "FZ_I32_MIN");
	case RED_MIN: return f ? (t == ET_F64 ? "FZ_INF_D" : "FZ_INF_F") : (t == ET_I64 ? "FZ_I64_MAX" : "FZ_I32_MAX");
	default: return "0";
	}
}

static const char *red_op(RedOp r)
{
	return r == RED_MAX ? "FZ_MAX" : r == RED_MIN ? "FZ_MIN" : "FZ_SUM";
}

/* A row is walked by a block, or by a warp (Kernel.warp_rows). */
static const char *row_tid(const Cx *cx) { return cx->k->warp_rows ? "fz_lane" : "threadIdx.x"; }
static const char *row_width(const Cx *cx) { return cx->k->warp_rows ? "32" : "blockDim.x"; }
static const char *row_leader(const Cx *cx) { return cx->k->warp_rows ? "fz_lane == 0" : "threadIdx.x == 0"; }

/* Writes the value (or mask) of statement s, with its compute type. */
static char *value_of(Cx *cx, const Stmt *s, int e)
{
	cx->w.compute = stmt_compute(cx->m, s);
	return render_expr(&cx->w, e);
}

static void set_local(Cx *cx, int t, const char *name, char **subs, int n)
{
	free(cx->local[t]);
	cx->local[t] = strdup(name);
	for (int i = 0; i < MAX_RANK; i++) {
		free(cx->local_at[t][i]);
		cx->local_at[t][i] = i < n ? strdup(subs[i]) : NULL;
	}
}

/* Stores value v into s's target at s's left-hand subscripts. */
static void store_target(Cx *cx, const Stmt *s, const char *v, int depth)
{
	const Tensor *x = &cx->m->tensor[s->out];
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	char *lin = linear_of(cx, s->out, subs);
	FILE *o = cx->sink ? cx->sink : cx->out;
	ind(o, depth);
	if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
	fprintf(o, "a.t_%s[%s] = ", x->name, lin);
	store_conv(x, v, o);
	fputs(";\n", o);
	free(lin);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* Record s's result as a local at its left-hand subscripts. */
static void publish(Cx *cx, const Stmt *s, const char *name)
{
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	set_local(cx, s->out, name, subs, s->nlhs);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
}

/* A pointwise statement at the current point. */
static void emit_map(Cx *cx, int sid, int depth, int store_only_thread0)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *x = &m->tensor[s->out];
	char name[80];
	snprintf(name, sizeof name, "v_%s%s", x->name, cx->sfx);
	char *v = value_of(cx, s, s->rhs);
	ElemType vt = s->acc;
	if (s->red == RED_ACCUM) { /* t(i) += value: read-modify-write at the point */
		char *subs[MAX_RANK] = {0};
		for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
		char *lin = linear_of(cx, s->out, subs);
		char *mask = s->mask ? value_of(cx, s, s->mask) : NULL;
		FILE *o = cx->sink ? cx->sink : cx->out;
		ind(o, depth);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		if (mask) fprintf(o, "if (%s) ", mask);
		fprintf(o, "a.t_%s[%s] += (%s)(%s);\n", x->name, lin, tensor_device_type(x), v);
		free(lin), free(mask);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		free(v);
		return;
	}
	ind(cx->out, depth);
	if (s->mask) {
		char *mk = value_of(cx, s, s->mask);
		fprintf(cx->out, "%s %s = 0;\n", ctype(vt), name);
		ind(cx->out, depth);
		fprintf(cx->out, "if (%s) {\n", mk);
		ind(cx->out, depth + 1);
		fprintf(cx->out, "%s = (%s)(%s);\n", name, ctype(vt), v);
		if (cx->p->stored[s->out]) store_target(cx, s, name, depth + 1);
		ind(cx->out, depth);
		fputs("}\n", cx->out);
		free(mk);
	} else {
		fprintf(cx->out, "const %s %s = (%s)(%s);\n", ctype(vt), name, ctype(vt), v);
		if (cx->p->stored[s->out]) {
			if (store_only_thread0) ind(cx->out, depth), fprintf(cx->out, "if (%s)\n", row_leader(cx));
			store_target(cx, s, name, depth + store_only_thread0);
		}
	}
	publish(cx, s, name);
	free(v);
}

/* Consecutive reductions of the kernel with the same reduced space, none
 * reading another: one pass over the reduced indices computes them all. */
static int merge_run(Cx *cx, int sid)
{
	const Module *m = cx->m;
	const Stmt *s0 = &m->stmt[sid];
	int end = cx->k->first_stmt + cx->k->nstmt, n = 1;
	for (int u = sid + 1; u < end; u++) {
		const Stmt *s = &m->stmt[u];
		if (s->red < RED_SUM || s->red > RED_KMIN || s->nfree != s0->nfree || s->nindex != s0->nindex) break;
		int same = 1;
		for (int i = s->nfree; i < s->nindex; i++) {
			const Index *a = &m->index[s->first_index + i], *b = &m->index[s0->first_index + i];
			if (a->kind != IX_DENSE || b->kind != IX_DENSE || a->range.sym != b->range.sym || a->range.value != b->range.value)
				same = 0;
		}
		for (int v = sid; v < u && same; v++)
			if (plan_stmt_reads(m, s, m->stmt[v].out)) same = 0;
		if (!same) break;
		n++;
	}
	return n;
}

static void dim_c(Cx *cx, Dim d, FILE *out)
{
	if (d.sym >= 0) fprintf(out, "a.n_%s", cx->m->fusion[cx->fusion].sym[d.sym]);
	else fprintf(out, "%lldLL", (long long)d.value);
}

static void bind_point(Cx *cx, const Stmt *s, int nspace);
static void dim_c(Cx *cx, Dim d, FILE *out);

typedef void RowBody(Cx *cx, int sid, int n, int depth);



/* The block walks the row: var = threadIdx.x, += blockDim.x. With a
 * register cache the first rcache strides read the cached elements (the
 * body is written twice: cached, then for the rest of a longer row). */
static void row_loop(Cx *cx, const char *var, RowBody *body, int sid, int n, int depth)
{
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	if (k->rcache) {
		ind(out, depth), fputs("#pragma unroll\n", out);
		ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", k->rcache);
		ind(out, depth + 1), fprintf(out, "const long long %s = threadIdx.x + (long long)fz_k * blockDim.x;\n", var);
		ind(out, depth + 1), fprintf(out, "if (%s < ", var), dim_c(cx, k->inner, out), fputs(") {\n", out);
		cx->rc_var = var;
		body(cx, sid, n, depth + 2);
		cx->rc_var = NULL;
		ind(out, depth + 1), fputs("}\n", out);
		ind(out, depth), fputs("}\n", out);
		ind(out, depth), fprintf(out, "for (long long %s = threadIdx.x + %dLL * blockDim.x; %s < ", var, k->rcache, var);
	} else {
		ind(out, depth), fputs("#pragma unroll 4\n", out);
		ind(out, depth), fprintf(out, "for (long long %s = %s; %s < ", var, row_tid(cx), var);
	}
	dim_c(cx, k->inner, out);
	fprintf(out, "; %s += %s) {\n", var, row_width(cx));
	body(cx, sid, n, depth + 1);
	ind(out, depth), fputs("}\n", out);
}

static void accumulate_body(Cx *cx, int sid, int n, int d);

/* Reductions with free indices at the point: serial loops over the reduced
 * indices (thread-per-point), or the row's inner index shared by the block. */
static int emit_reductions(Cx *cx, int sid, int depth, int row)
{
	const Module *m = cx->m;
	int n = merge_run(cx, sid);
	const Stmt *s0 = &m->stmt[sid];
	FILE *out = cx->out;
	for (int q = 0; q < n; q++) {
		const Stmt *s = &m->stmt[sid + q];
		const Tensor *x = &m->tensor[s->out];
		bind_point(cx, s, cx->k->nspace);
		ind(out, depth);
		if (s->red == RED_KMIN)
			fprintf(out, "%s acc_%s[%d];\n", ctype(s->acc), x->name, s->kmin_k),
			ind(out, depth), fprintf(out, "fz_kinit<%s, %d>(acc_%s);\n", ctype(s->acc), s->kmin_k, x->name);
		else
			fprintf(out, "%s acc_%s = %s;\n", ctype(s->acc), x->name, identity(s->red, s->acc));
	}
	if (row) { /* one reduced index, the row's: the block walks it */
		char var[48];
		snprintf(var, sizeof var, "r%d_%s", s0->nfree, m->index[s0->first_index + s0->nfree].name);
		for (int q = 0; q < n; q++) cx->bind[m->stmt[sid + q].first_index + s0->nfree] = strdup(var);
		row_loop(cx, var, accumulate_body, sid, n, depth);
		for (int q = 0; q < n; q++) {
			free(cx->bind[m->stmt[sid + q].first_index + s0->nfree]);
			cx->bind[m->stmt[sid + q].first_index + s0->nfree] = NULL;
		}
		goto results;
	}
	/* loops over s0's reduced indices; every merged statement binds to them */
	int d = depth;
	char var[MAX_IDX][48];
	int rag_step[MAX_IDX] = {0};
	for (int i = s0->nfree; i < s0->nindex; i++) {
		const Index *ix = &m->index[s0->first_index + i];
		snprintf(var[i], sizeof var[i], "r%d_%s", i, ix->name);
		if (ix->kind == IX_RAGGED) continue;
		fputs("#pragma unroll 4\n", out);
		ind(out, d);
		int split = cx->sliced && d == depth; /* the outermost loop is shared by the warps */
		if (row && i == s0->nindex - 1)
			fprintf(out, "for (long long %s = threadIdx.x; %s < ", var[i], var[i]);
		else
			fprintf(out, "for (long long %s = %s; %s < ", var[i], split ? "fz_slice" : "0", var[i]);
		dim_c(cx, ix->range, out);
		fprintf(out, "; %s += %s) {\n", var[i], row && i == s0->nindex - 1 ? "blockDim.x" : split ? "FZ_SLICES" : "1");
		d++;
		for (int q = 0; q < n; q++) cx->bind[m->stmt[sid + q].first_index + i] = strdup(var[i]);
	}
	for (int i = s0->nfree; i < s0->nindex; i++) { /* ragged innermost: bounds see the dense ones */
		const Index *ix = &m->index[s0->first_index + i];
		if (ix->kind != IX_RAGGED) continue;
		cx->w.compute = stmt_compute(m, s0);
		char *lo = render_expr(&cx->w, ix->lo), *hi = render_expr(&cx->w, ix->hi);
		ind(out, d);
		int split = cx->sliced && d == depth;
		fprintf(out, "for (long long %s = (%s)%s, %s_end = %s; %s < %s_end; %s) {\n", var[i], lo, split ? " + fz_slice" : "",
		        var[i], hi, var[i], var[i], split ? "" : "");
		free(lo), free(hi);
		d++;
		for (int q = 0; q < n; q++) cx->bind[m->stmt[sid + q].first_index + i] = strdup(var[i]);
		rag_step[i] = split;
	}
	accumulate_body(cx, sid, n, d);
	for (int i = s0->nindex - 1; i >= s0->nfree; i--) {
		d--;
		if (m->index[s0->first_index + i].kind == IX_RAGGED)
			ind(out, d + 1), fprintf(out, "%s += %s;\n", var[i], rag_step[i] ? "FZ_SLICES" : "1");
		ind(out, d);
		fputs("}\n", out);
		for (int q = 0; q < n; q++) {
			free(cx->bind[m->stmt[sid + q].first_index + i]);
			cx->bind[m->stmt[sid + q].first_index + i] = NULL;
		}
	}
results:
	for (int q = 0; q < n; q++) {
		const Stmt *s = &m->stmt[sid + q];
		const Tensor *x = &m->tensor[s->out];
		char name[80];
		snprintf(name, sizeof name, "v_%s%s", x->name, cx->sfx);
		ind(out, depth);
		if (cx->sliced && s->red == RED_KMIN) {
			/* every warp's k smallest, merged in warp order */
			const char *ty = ctype(s->acc);
			int K = s->kmin_k;
			fprintf(out, "__shared__ %s fz_m_%s[FZ_SLICES][32][%d];\n", ty, x->name, K);
			fputs("#pragma unroll\n", out);
			ind(out, depth), fprintf(out, "for (int q = 0; q < %d; ++q) fz_m_%s[fz_slice][fz_lane][q] = acc_%s[q];\n", K, x->name, x->name);
			ind(out, depth), fputs("__syncthreads();\n", out);
			ind(out, depth), fprintf(out, "fz_kinit<%s, %d>(acc_%s);\n", ty, K, x->name);
			ind(out, depth), fprintf(out, "for (int w = 0; w < FZ_SLICES; ++w)\n");
			fputs("#pragma unroll\n", out);
			ind(out, depth + 1), fprintf(out, "for (int q = 0; q < %d; ++q) fz_kpush<%s, %d>(acc_%s, fz_m_%s[w][fz_lane][q]);\n", K, ty, K, x->name, x->name);
			ind(out, depth), fputs("__syncthreads();\n", out);
			ind(out, depth);
		} else if (cx->sliced) {
			fprintf(out, "__shared__ %s fz_m_%s[FZ_SLICES][32];\n", ctype(s->acc), x->name);
			ind(out, depth), fprintf(out, "fz_m_%s[fz_slice][fz_lane] = acc_%s;\n", x->name, x->name);
			ind(out, depth), fputs("__syncthreads();\n", out);
			ind(out, depth), fprintf(out, "acc_%s = fz_m_%s[0][fz_lane];\n", x->name, x->name);
			ind(out, depth), fprintf(out, "for (int w = 1; w < FZ_SLICES; ++w) acc_%s = fz_op<%s>(acc_%s, fz_m_%s[w][fz_lane]);\n",
			                         x->name, red_op(s->red), x->name, x->name);
			ind(out, depth), fputs("__syncthreads();\n", out);
			ind(out, depth);
		}
		if (s->red == RED_KMIN)
			fprintf(out, "const %s %s = acc_%s[%d];\n", ctype(s->acc), name, x->name, s->kmin_k - 1);
		else if (row && cx->k->warp_rows)
			fprintf(out, "const %s %s = fz_warp_reduce<%s, %s>(acc_%s);\n", ctype(s->acc), name, ctype(s->acc),
			        red_op(s->red), x->name);
		else if (row)
			fprintf(out, "const %s %s = fz_block_reduce<%s, %s>(acc_%s, (%s *)fz_sh);\n", ctype(s->acc), name,
			        ctype(s->acc), red_op(s->red), x->name, ctype(s->acc));
		else
			fprintf(out, "const %s %s = acc_%s;\n", ctype(s->acc), name, x->name);
		if (cx->p->stored[s->out]) {
			if (row) ind(out, depth), fprintf(out, "if (%s)\n", row_leader(cx));
			store_target(cx, s, name, depth + row);
		}
		publish(cx, s, name);
	}
	return n;
}

/* One step of n merged reductions: fold the current term into each. */
static void accumulate_body(Cx *cx, int sid, int n, int d)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	for (int q = 0; q < n; q++) {
		const Stmt *s = &m->stmt[sid + q];
		const Tensor *x = &m->tensor[s->out];
		char *v = value_of(cx, s, s->rhs);
		char *mk = s->mask ? value_of(cx, s, s->mask) : NULL;
		ind(out, d);
		if (mk) fprintf(out, "if (%s) ", mk);
		if (s->red == RED_KMIN) fprintf(out, "fz_kpush<%s, %d>(acc_%s, (%s)(%s));\n", ctype(s->acc), s->kmin_k, x->name, ctype(s->acc), v);
		else fprintf(out, "acc_%s = fz_op<%s>(acc_%s, (%s)(%s));\n", x->name, red_op(s->red), x->name, ctype(s->acc), v);
		free(v), free(mk);
	}
}

static void row_map_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	emit_map(cx, sid, d, 0);
}

/* Unrolled compaction, first half: each copy's test and value. */
static void compact_operands(Cx *cx, int sid, int u)
{
	const Stmt *s = &cx->m->stmt[sid];
	const char *nm = cx->m->tensor[s->out].name;
	char *v = value_of(cx, s, s->rhs);
	char *mk = s->mask ? value_of(cx, s, s->mask) : strdup("true");
	fprintf(cx->out, "\t\tconst bool cp_%s_%d = ok_%d && (%s);\n", nm, u, u, mk);
	fprintf(cx->out, "\t\tconst long long cv_%s_%d = (long long)(%s);\n", nm, u, v);
	free(v), free(mk);
}

/* Second half: one atomic a warp for all its copies' items; each item's
 * slot is the warp's base plus the items before it (by copy, then lane). */
static void compact_warp(Cx *cx, int sid, int U)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *list = &m->tensor[s->out], *cnt = &m->tensor[list->list_count];
	FILE *out = cx->out;
	fputs("\t\t{\n\t\t\tconst unsigned fz_act = __activemask();\n", out);
	for (int u = 0; u < U; u++) fprintf(out, "\t\t\tconst unsigned fz_b%d = __ballot_sync(fz_act, cp_%s_%d);\n", u, list->name, u);
	fputs("\t\t\tconst int fz_tot = ", out);
	for (int u = 0; u < U; u++) fprintf(out, "%s__popc(fz_b%d)", u ? " + " : "", u);
	fputs(";\n\t\t\tif (fz_tot) {\n", out);
	fputs("\t\t\t\tconst unsigned fz_lt = (1u << (threadIdx.x & 31)) - 1u;\n", out);
	fputs("\t\t\t\tconst int fz_leader = __ffs(fz_act) - 1;\n", out);
	fprintf(out, "\t\t\t\tunsigned int fz_base = 0;\n\t\t\t\tif ((int)(threadIdx.x & 31) == fz_leader) fz_base = atomicAdd((unsigned int *)a.t_%s, (unsigned int)fz_tot);\n", cnt->name);
	fputs("\t\t\t\tfz_base = __shfl_sync(fz_act, fz_base, fz_leader);\n", out);
	for (int u = 0; u < U; u++) {
		fprintf(out, "\t\t\t\tif (cp_%s_%d) {\n\t\t\t\t\tconst long long slot = (long long)fz_base", list->name, u);
		for (int v = 0; v < u; v++) fprintf(out, " + __popc(fz_b%d)", v);
		fprintf(out, " + __popc(fz_b%d & fz_lt);\n\t\t\t\t\tif (slot < ", u);
		dim_c(cx, list->dim[0], out);
		fprintf(out, ") a.t_%s[slot] = (%s)cv_%s_%d;\n\t\t\t\t}\n", list->name, tensor_device_type(list), list->name, u);
	}
	fputs("\t\t\t}\n\t\t}\n", out);
}

static void emit_compact(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *list = &m->tensor[s->out], *cnt = &m->tensor[list->list_count];
	char *v = value_of(cx, s, s->rhs);
	char *mk = s->mask ? value_of(cx, s, s->mask) : strdup("true");
	FILE *out = cx->out;
	ind(out, depth), fprintf(out, "if (%s(%s)) {\n", cx->sliced ? "fz_slice == 0 && fz_live && " : "", mk);
	ind(out, depth + 1), fprintf(out, "const long long slot = (long long)atomicAdd((unsigned int *)a.t_%s, 1u);\n", cnt->name);
	ind(out, depth + 1), fprintf(out, "if (slot < ");
	dim_c(cx, list->dim[0], out);
	fprintf(out, ") a.t_%s[slot] = (%s)(%s);\n", list->name, tensor_device_type(list), v);
	ind(out, depth), fputs("}\n", out);
	free(v), free(mk);
}


/* Binds the statement's free indices (or, for a tail, its reduced ones)
 * to the kernel's space variables s0, s1, ... */
static void bind_point(Cx *cx, const Stmt *s, int nspace)
{
	int n = s->pattern == PAT_COMPACT || plan_is_grid_reduction(s) ? s->nindex : s->nfree;
	for (int i = 0; i < n && i < nspace; i++) {
		char v[16];
		snprintf(v, sizeof v, "s%d%s", i, cx->sfx);
		free(cx->bind[s->first_index + i]);
		cx->bind[s->first_index + i] = strdup(v);
	}
}

static void decompose(Cx *cx, const char *lin, int depth)
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

static void space_total(Cx *cx, FILE *out)
{
	if (!cx->k->nspace) fputs("1LL", out);
	for (int i = 0; i < cx->k->nspace; i++) {
		if (i) fputs(" * ", out);
		dim_c(cx, cx->k->space[i], out);
	}
}

/* Tail: per-thread partials of whole-grid reductions, folded by the last
 * block to finish, in block order: the same bits on every run. */
static void emit_tail(Cx *cx, int depth)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	int nt = 0, idx[64];
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++)
		if (plan_is_grid_reduction(&m->stmt[sid]) && nt < 64) idx[nt++] = sid;
	for (int q = 0; q < nt; q++) {
		const Stmt *s = &m->stmt[idx[q]];
		const char *nm = m->tensor[s->out].name;
		ind(out, depth), fprintf(out, "{\n");
		ind(out, depth + 1), fprintf(out, "const double blk = fz_block_reduce<double, %s>((double)tacc_%s, fz_sh);\n", red_op(s->red), nm);
		ind(out, depth + 1), fprintf(out, "if (threadIdx.x == 0) a.ws_part[(long long)blockIdx.x * %d + %d] = blk;\n", nt, q);
		ind(out, depth), fprintf(out, "}\n");
	}
	ind(out, depth), fputs("__shared__ bool fz_is_last;\n", out);
	ind(out, depth), fputs("__threadfence();\n", out);
	ind(out, depth), fputs("__syncthreads();\n", out);
	ind(out, depth), fputs("if (threadIdx.x == 0) fz_is_last = atomicAdd(a.ws_count, 1u) == gridDim.x - 1;\n", out);
	ind(out, depth), fputs("__syncthreads();\n", out);
	ind(out, depth), fputs("if (!fz_is_last) return;\n", out);
	ind(out, depth), fputs("__threadfence();\n", out);
	for (int q = 0; q < nt; q++) {
		const Stmt *s = &m->stmt[idx[q]];
		const char *nm = m->tensor[s->out].name;
		ind(out, depth), fprintf(out, "double fold_%s = %s;\n", nm, identity(s->red, ET_F64));
		ind(out, depth), fprintf(out, "for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x)\n");
		ind(out, depth + 1), fprintf(out, "fold_%s = fz_op<%s>(fold_%s, __ldcg(&a.ws_part[(long long)b * %d + %d]));\n", nm, red_op(s->red), nm, nt, q);
		ind(out, depth), fprintf(out, "fold_%s = fz_block_reduce<double, %s>(fold_%s, fz_sh);\n", nm, red_op(s->red), nm);
	}
	ind(out, depth), fputs("if (threadIdx.x != 0) return;\n", out);
	ind(out, depth), fputs("*a.ws_count = 0u; /* ready for the next launch */\n", out);
	for (int q = 0; q < nt; q++) {
		const Stmt *s = &m->stmt[idx[q]];
		const Tensor *x = &m->tensor[s->out];
		char name[80], fold[80];
		snprintf(name, sizeof name, "v_%s", x->name);
		snprintf(fold, sizeof fold, "fold_%s", x->name);
		ind(out, depth), fprintf(out, "const %s %s = (%s)%s;\n", ctype(s->acc), name, ctype(s->acc), fold);
		if (cx->p->stored[s->out]) store_target(cx, s, name, depth);
		set_local(cx, s->out, name, NULL, 0);
	}
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++)
		if (plan_is_scalar_map(&m->stmt[sid])) emit_map(cx, sid, depth, 0);
}

static void emit_tail_decls(Cx *cx, int depth)
{
	const Module *m = cx->m;
	for (int sid = cx->k->first_stmt; sid < cx->k->first_stmt + cx->k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (!plan_is_grid_reduction(s)) continue;
		ind(cx->out, depth);
		fprintf(cx->out, "%s tacc_%s = %s;\n", ctype(s->acc), m->tensor[s->out].name, identity(s->red, s->acc));
	}
}

static void emit_tail_accumulate(Cx *cx, int sid, int depth, int thread0)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	char *v = value_of(cx, s, s->rhs);
	char *mk = s->mask ? value_of(cx, s, s->mask) : NULL;
	const char *nm = m->tensor[s->out].name;
	ind(cx->out, depth);
	if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", cx->out);
	if (thread0 || mk) fprintf(cx->out, "if (%s%s%s) ", thread0 ? row_leader(cx) : "", thread0 && mk ? " && " : "", mk ? mk : "");
	fprintf(cx->out, "tacc_%s = fz_op<%s>(tacc_%s, (%s)(%s));\n", nm, red_op(s->red), nm, ctype(s->acc), v);
	free(v), free(mk);
}

static void clear_locals(Cx *cx)
{
	for (int t = 0; t < cx->m->ntensor; t++) {
		free(cx->local[t]);
		cx->local[t] = NULL;
		for (int i = 0; i < MAX_RANK; i++) free(cx->local_at[t][i]), cx->local_at[t][i] = NULL;
	}
}

static void kernel_head(Cx *cx)
{
	const Kernel *k = cx->k;
	int minb = k->min_blocks;
	fprintf(cx->out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const fz_%s_args a)\n{\n", k->block,
	        minb, k->name, cx->m->fusion[cx->fusion].name);
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		if (cx->p->reset_by[t] == cx->kernel_id && cx->m->tensor[t].rank == 0)
			fprintf(cx->out, "\tif (blockIdx.x == 0 && threadIdx.x == 0) a.t_%s[0] = 0; /* for a later kernel */\n",
			        cx->m->tensor[t].name);
}

/* Temps this kernel reads for the last time are left zeroed for the next run. */
static void emit_resets(Cx *cx, int depth)
{
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &cx->m->tensor[t];
		if (cx->p->reset_by[t] != cx->kernel_id || x->rank == 0) continue;
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
static void finish_kernel(Cx *cx)
{
	clear_locals(cx);
	if (cx->k->has_tail) emit_tail(cx, 1);
	clear_locals(cx);
	fputs("}\n\n", cx->out);
}

/* A thread per point, grid-stride. Unrolled: U points a thread, every
 * copy's values (and so its loads) before any copy's stores. Sliced: 32
 * points a block, each point's reduction loop shared by FZ_SLICES warps. */
static void emit_point_kernel(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	int U = k->unroll > 1 ? k->unroll : 1;
	kernel_head(cx);
	if (k->has_tail) fputs("\t__shared__ double fz_sh[32];\n", out);
	emit_tail_decls(cx, 1);
	fputs("\tconst long long total = ", out);
	space_total(cx, out);
	fputs(";\n", out);
	if (k->slices > 1) {
		fprintf(out, "#define FZ_SLICES %d\n", k->slices);
		fputs("\tconst int fz_lane = threadIdx.x & 31, fz_slice = threadIdx.x >> 5;\n", out);
		fputs("\tfor (long long pb = (long long)blockIdx.x * 32; pb < total; pb += (long long)gridDim.x * 32) {\n", out);
		fputs("\t\tconst bool fz_live = pb + fz_lane < total;\n", out);
		fputs("\t\tconst long long p = fz_live ? pb + fz_lane : pb;\n", out);
		cx->sliced = 1;
	} else if (U > 1) {
		fprintf(out, "\tconst long long stride = (long long)gridDim.x * blockDim.x;\n");
		fprintf(out, "\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += %d * stride) {\n", U);
	} else {
		fputs("\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += (long long)gridDim.x * blockDim.x) {\n", out);
	}
	char *deferred[8] = {0};
	size_t dlen[8] = {0};
	for (int u = 0; u < U; u++) {
		char sfx[16] = "", lin[64];
		FILE *dfr = NULL;
		if (U > 1) {
			snprintf(sfx, sizeof sfx, "_%d", u);
			/* a copy past the end reads point p (valid) and stores nothing */
			fprintf(out, "\t\tconst bool ok%s = p + %d * stride < total;\n", sfx, u);
			snprintf(lin, sizeof lin, "(ok%s ? p + %d * stride : p)", sfx, u);
			dfr = open_memstream(&deferred[u], &dlen[u]);
			cx->sink = dfr;
		} else {
			snprintf(lin, sizeof lin, "p");
		}
		cx->sfx = sfx;
		decompose(cx, lin, 2);
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (plan_is_scalar_map(s)) continue;
			bind_point(cx, s, k->nspace);
			FILE *keep = cx->out;
			if (dfr && plan_is_grid_reduction(s)) cx->out = dfr;
			if (plan_is_grid_reduction(s)) emit_tail_accumulate(cx, sid, 2, 0);
			else if (s->pattern == PAT_COMPACT && U > 1) compact_operands(cx, sid, u);
			else if (s->pattern == PAT_COMPACT) emit_compact(cx, sid, 2);
			else if (s->red >= RED_SUM && s->red <= RED_KMIN) sid += emit_reductions(cx, sid, 2, 0) - 1;
			else emit_map(cx, sid, 2, 0);
			cx->out = keep;
		}
		emit_resets(cx, 2);
		if (dfr) fclose(dfr);
		cx->sink = NULL;
	}
	for (int u = 0; u < U && U > 1; u++) {
		fprintf(out, "\t\tif (ok_%d) {\n%s\t\t}\n", u, deferred[u] ? deferred[u] : "");
		free(deferred[u]);
	}
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt && U > 1; sid++)
		if (m->stmt[sid].pattern == PAT_COMPACT) compact_warp(cx, sid, U);
	cx->sfx = "";
	cx->sliced = 0;
	fputs("\t}\n", out);
	if (k->slices > 1) fputs("#undef FZ_SLICES\n", out);
	finish_kernel(cx);
}

static void emit_row_kernel(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	kernel_head(cx);
	fputs("\t__shared__ double fz_sh[32];\n", out);
	emit_tail_decls(cx, 1);
	fputs("\tconst long long rows = ", out);
	space_total(cx, out);
	fputs(";\n", out);
	if (k->warp_rows) {
		fputs("\tconst int fz_lane = threadIdx.x & 31;\n", out);
		fputs("\tfor (long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows; row += ((long long)gridDim.x * blockDim.x) >> 5) {\n", out);
	} else {
		fputs("\tfor (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n", out);
	}
	decompose(cx, "row", 2);
	/* the row's statements first into a buffer: which rows they cache is
	   known only then, and the cache is filled before them */
	char *body = NULL;
	size_t blen = 0;
	FILE *bf = open_memstream(&body, &blen);
	if (!bf) abort();
	memset(cx->rc_used, 0, (size_t)m->ntensor + 1);
	cx->out = out = bf;
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (plan_is_scalar_map(s)) continue;
		bind_point(cx, s, k->nspace);
		if (plan_is_grid_reduction(s)) {
			emit_tail_accumulate(cx, sid, 2, 1);
		} else if (s->red >= RED_SUM && s->red <= RED_MIN) {
			sid += emit_reductions(cx, sid, 2, 1) - 1;
		} else if (s->pattern == PAT_COMPACT) {
			fprintf(out, "\t\tif (%s) {\n", row_leader(cx));
			emit_compact(cx, sid, 3);
			fputs("\t\t}\n", out);
		} else if (s->nfree == k->nspace) {
			emit_map(cx, sid, 2, 1);
		} else if (!cx->p->stored[s->out]) {
			/* an element of the row that stays on chip: its readers recompute it */
		} else { /* an element of the row: the block walks the row */
			char var[48];
			const Index *ix = &m->index[s->first_index + s->nfree - 1];
			snprintf(var, sizeof var, "c_%s", ix->name);
			free(cx->bind[s->first_index + s->nfree - 1]);
			cx->bind[s->first_index + s->nfree - 1] = strdup(var);
			row_loop(cx, var, row_map_body, sid, 1, 2);
			free(cx->local[s->out]);
			cx->local[s->out] = NULL; /* valid inside that loop only */
		}
	}
	fclose(bf);
	cx->out = out = cx->sink_main;
	const Fusion *fu = &m->fusion[cx->fusion];
	for (int t = fu->first_tensor; t < fu->first_tensor + fu->ntensor; t++) {
		if (!cx->rc_used[t]) continue;
		const Tensor *x = &m->tensor[t];
		char *subs[MAX_RANK], names[MAX_RANK][16];
		for (int i = 0; i < x->rank; i++) {
			snprintf(names[i], sizeof names[i], i < k->nspace ? "s%d" : "fz_c", i);
			subs[i] = names[i];
		}
		char *lin = linear_of(cx, t, subs);
		fprintf(out, "\t\t%s fz_rc_%s[%d];\n#pragma unroll\n", elem_info[x->type].is_float ? (x->type == ET_F64 ? "double" : "float") : ctype(x->type), x->name, k->rcache);
		fprintf(out, "\t\tfor (int fz_k = 0; fz_k < %d; ++fz_k) {\n", k->rcache);
		fputs("\t\t\tconst long long fz_c = threadIdx.x + (long long)fz_k * blockDim.x;\n", out);
		fprintf(out, "\t\t\tfz_rc_%s[fz_k] = fz_c < ", x->name);
		dim_c(cx, k->inner, out);
		fputs(" ? ", out);
		load_elem(cx, t, lin, out);
		fputs(" : 0;\n\t\t}\n", out);
		free(lin);
	}
	fputs(body, out);
	free(body);
	fputs("\t}\n", out);
	finish_kernel(cx);
}

static void emit_matmul_kernel(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const Stmt *c = &m->stmt[k->first_stmt];
	FILE *out = cx->out;
	int swapped = plan_matmul_swapped(m, c);
	int ea = swapped ? c->contract_b : c->contract_a, eb = swapped ? c->contract_a : c->contract_b;
	const Index *kx = &m->index[c->first_index + 2];
	int T = FZ_MATMUL_TILE, BK = FZ_MATMUL_BK;
	kernel_head(cx);
	fprintf(out, "\t__shared__ float As[%d][%d];\n\t__shared__ float Bs[%d][%d];\n", BK, T + 4, BK, T + 4);
	fputs("\tconst long long M = ", out), dim_c(cx, k->space[0], out), fputs(", N = ", out), dim_c(cx, k->space[1], out);
	fputs(", K = ", out), dim_c(cx, kx->range, out), fputs(";\n", out);
	fprintf(out, "\tconst long long m0 = (long long)blockIdx.y * %d, n0 = (long long)blockIdx.x * %d;\n", T, T);
	fputs("\tconst int tx = threadIdx.x % 16, ty = threadIdx.x / 16;\n", out);
	fputs("\tfloat acc[4][4];\n#pragma unroll\n\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\tfor (int j = 0; j < 4; ++j) acc[i][j] = 0.f;\n", out);
	fprintf(out, "\tfor (long long k0 = 0; k0 < K; k0 += %d) {\n", BK);
	cx->w.compute = ET_F32;
	cx->bind[c->first_index] = strdup("gm");
	cx->bind[c->first_index + 1] = strdup("gn");
	cx->bind[c->first_index + 2] = strdup("gk");
	char *va = render_expr(&cx->w, ea), *vb = render_expr(&cx->w, eb);
	fprintf(out, "\t\tfor (int q = threadIdx.x; q < %d; q += blockDim.x) {\n", T * BK);
	fprintf(out, "\t\t\tconst int mm = q / %d, kk = q %% %d;\n", BK, BK);
	fputs("\t\t\tconst long long gm = m0 + mm, gk = k0 + kk;\n", out);
	fprintf(out, "\t\t\tAs[kk][mm] = gm < M && gk < K ? (float)(%s) : 0.f;\n\t\t}\n", va);
	fprintf(out, "\t\tfor (int q = threadIdx.x; q < %d; q += blockDim.x) {\n", T * BK);
	fprintf(out, "\t\t\tconst int kk = q / %d, nn = q %% %d;\n", T, T);
	fputs("\t\t\tconst long long gn = n0 + nn, gk = k0 + kk;\n", out);
	fprintf(out, "\t\t\tBs[kk][nn] = gn < N && gk < K ? (float)(%s) : 0.f;\n\t\t}\n", vb);
	free(va), free(vb);
	fputs("\t\t__syncthreads();\n#pragma unroll\n", out);
	fprintf(out, "\t\tfor (int kk = 0; kk < %d; ++kk) {\n", BK);
	fputs("\t\t\tfloat av[4], bv[4];\n#pragma unroll\n\t\t\tfor (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i], bv[i] = Bs[kk][tx + 16 * i];\n", out);
	fputs("#pragma unroll\n\t\t\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\t\t\tfor (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);\n", out);
	fputs("\t\t}\n\t\t__syncthreads();\n\t}\n", out);
	/* epilogue, per element, in registers */
	fputs("#pragma unroll\n\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\tfor (int j = 0; j < 4; ++j) {\n", out);
	fputs("\t\t\tconst long long s0 = m0 + ty + 16 * i, s1 = n0 + tx + 16 * j;\n", out);
	fputs("\t\t\tif (s0 >= M || s1 >= N) continue;\n", out);
	fputs("\t\t\tconst float v_acc_ = acc[i][j];\n", out);
	for (int i = 0; i < 3; i++) free(cx->bind[c->first_index + i]), cx->bind[c->first_index + i] = NULL;
	bind_point(cx, c, 2);
	char name[80];
	snprintf(name, sizeof name, "v_acc_");
	if (cx->p->stored[c->out]) store_target(cx, c, name, 3);
	publish(cx, c, name);
	for (int sid = k->first_stmt + 1; sid < k->first_stmt + k->nstmt; sid++) {
		bind_point(cx, &m->stmt[sid], 2);
		emit_map(cx, sid, 3, 0);
	}
	fputs("\t\t}\n}\n\n", out);
	clear_locals(cx);
}

static void emit_scatter_kernel(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const Stmt *s = &m->stmt[k->first_stmt];
	const Tensor *x = &m->tensor[s->out];
	FILE *out = cx->out;
	int ragged = -1;
	for (int i = 0; i < s->nindex; i++)
		if (m->index[s->first_index + i].kind == IX_RAGGED) ragged = i;
	kernel_head(cx);
	/* outer points: the dense indices; a warp each when a ragged range follows */
	fputs("\tconst long long outer = 1LL", out);
	for (int i = 0; i < s->nindex; i++)
		if (i != ragged) fputs(" * ", out), dim_c(cx, m->index[s->first_index + i].range, out);
	fputs(";\n", out);
	const char *width = ragged >= 0 ? "32" : "1";
	fprintf(out, "\tconst long long lane = threadIdx.x %% %s, nw = (long long)gridDim.x * blockDim.x / %s;\n", width, width);
	fprintf(out, "\tfor (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / %s; p < outer; p += nw) {\n", width);
	fputs("\t\tlong long fz_rem = p;\n", out);
	for (int i = s->nindex - 1; i >= 0; i--) {
		if (i == ragged) continue;
		const Index *ix = &m->index[s->first_index + i];
		char v[48];
		snprintf(v, sizeof v, "o%d_%s", i, ix->name);
		fprintf(out, "\t\tconst long long %s = fz_rem %% ", v);
		dim_c(cx, ix->range, out);
		fputs("; fz_rem /= ", out);
		dim_c(cx, ix->range, out);
		fputs(";\n", out);
		cx->bind[s->first_index + i] = strdup(v);
	}
	cx->w.compute = stmt_compute(m, s);
	int depth = 2;
	if (ragged >= 0) {
		const Index *ix = &m->index[s->first_index + ragged];
		char *lo = render_expr(&cx->w, ix->lo), *hi = render_expr(&cx->w, ix->hi);
		fprintf(out, "\t\tconst long long lo = %s, hi = %s;\n", lo, hi);
		fputs("\t\tfor (long long r = lo + lane; r < hi; r += 32) {\n", out);
		free(lo), free(hi);
		cx->bind[s->first_index + ragged] = strdup("r");
		depth = 3;
	}
	char *v = value_of(cx, s, s->rhs);
	char *mk = s->mask ? value_of(cx, s, s->mask) : NULL;
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	ind(out, depth);
	fputs("if (", out);
	if (mk) fprintf(out, "(%s) && ", mk);
	/* a target outside the tensor is dropped, never written */
	for (int i = 0; i < s->nlhs; i++) {
		fprintf(out, "%s(unsigned long long)(%s) < (unsigned long long)", i ? " && " : "", subs[i]);
		dim_c(cx, x->dim[i], out);
	}
	if (!s->nlhs) fputs("true", out);
	char *lin = linear_of(cx, s->out, subs);
	fprintf(out, ")\n");
	ind(out, depth + 1);
	fprintf(out, "atomicAdd(&a.t_%s[%s], (%s)(%s));\n", x->name, lin, tensor_device_type(x), v);
	free(lin), free(v), free(mk);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
	if (ragged >= 0) fputs("\t\t}\n", out);
	fputs("\t}\n}\n\n", out);
	for (int i = 0; i < s->nindex; i++) free(cx->bind[s->first_index + i]), cx->bind[s->first_index + i] = NULL;
}

static void emit_scalar_kernel(Cx *cx)
{
	kernel_head(cx);
	fputs("\tif (blockIdx.x != 0 || threadIdx.x != 0) return;\n", cx->out);
	for (int sid = cx->k->first_stmt; sid < cx->k->first_stmt + cx->k->nstmt; sid++) emit_map(cx, sid, 1, 0);
	fputs("}\n\n", cx->out);
	clear_locals(cx);
}

void emit_cuda_kernels(const Module *m, int fusion, const Plan *p, const char *variant, FILE *out)
{
	Cx cx = {.m = m, .p = p, .fusion = fusion, .out = out, .sink_main = out, .sfx = ""};
	cx.bind = calloc((size_t)m->nindex + 1, sizeof *cx.bind);
	cx.local = calloc((size_t)m->ntensor + 1, sizeof *cx.local);
	cx.local_at = calloc((size_t)m->ntensor + 1, sizeof *cx.local_at);
	cx.writer = calloc((size_t)m->ntensor + 1, sizeof *cx.writer);
	cx.rc_used = calloc((size_t)m->ntensor + 1, 1);
	if (!cx.bind || !cx.local || !cx.local_at || !cx.writer || !cx.rc_used) abort();
	for (int t = 0; t < m->ntensor; t++) {
		cx.local_at[t] = calloc(MAX_RANK, sizeof(char *));
		if (!cx.local_at[t]) abort();
		cx.writer[t] = -1;
	}
	for (int s = 0; s < m->nstmt; s++) {
		int t = m->stmt[s].out;
		if (m->fusion[fusion].first_tensor <= t && t < m->fusion[fusion].first_tensor + m->fusion[fusion].ntensor)
			cx.writer[t] = cx.writer[t] == -1 ? s : -2;
	}
	cx.w = (ExprWriter){.m = m, .leaf = leaf, .compute = ET_F32, .cuda = 1, .user = &cx};
	fprintf(out, "/* %s variant: %d kernel%s */\n\n", variant, p->nk, p->nk == 1 ? "" : "s");
	for (int i = 0; i < p->nk; i++) {
		cx.k = &p->k[i];
		cx.kernel_id = i;
		switch (p->k[i].mode) {
		case KM_POINT: emit_point_kernel(&cx); break;
		case KM_ROW: emit_row_kernel(&cx); break;
		case KM_MATMUL: emit_matmul_kernel(&cx); break;
		case KM_SCATTER: emit_scatter_kernel(&cx); break;
		case KM_SCALAR: emit_scalar_kernel(&cx); break;
		default: assert(!"mode");
		}
	}
	clear_locals(&cx);
	for (int t = 0; t < m->ntensor; t++) free(cx.local_at[t]);
	for (int i = 0; i < m->nindex; i++) free(cx.bind[i]);
	free(cx.bind), free(cx.local), free(cx.local_at), free(cx.writer), free(cx.rc_used);
}
