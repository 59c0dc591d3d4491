/* Statement bodies in CUDA: values at the kernel's point, loads through
 * the argument struct, stores with conversion, and the locals a value
 * lives in while its kernel can still see it. Pointwise producers the
 * schedule marks recomputable are substituted into their readers. */
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "die.h"

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
	FILE *f = open_memstream(&buf, &len);
	if (!f) die("out of memory");
	emit_linear(cx->m, cx->fusion, t, subs, "a.n_", f);
	fclose(f);
	return buf;
}

/* Does e read memory at a computed subscript (a gather, or i + 1)? */
static int gathers(const Module *m, int e)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++)
			if (m->expr[x->args[i]].op != IR_INDEX || gathers(m, x->args[i])) return 1;
	return gathers(m, x->a) || gathers(m, x->b) || gathers(m, x->c);
}

/* Are the subscripts all bare variables (loop or space variables, or a
 * local function's parameters), so in range wherever the reader is? */
static int plain_subs(char **subs, int n)
{
	for (int i = 0; i < n; i++)
		if (!*subs[i] || strspn(subs[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(subs[i]))
			return 0;
	return 1;
}

static int memo_new(Cx *cx, Memo e)
{
	if (cx->nmemo == cx->cmemo)
		cx->cmemo = cx->cmemo ? 2 * cx->cmemo : 16, cx->memo = xrealloc(cx->memo, (size_t)cx->cmemo, sizeof *cx->memo);
	cx->memo[cx->nmemo] = e;
	return cx->nmemo++;
}

/* Renders producer P's value with its free indices bound to vars. */
static char *render_producer(Cx *cx, const Stmt *P, char **vars)
{
	char *saved[MAX_RANK];
	for (int i = 0; i < P->nfree; i++) saved[i] = cx->bind[P->first_index + i], cx->bind[P->first_index + i] = vars[i];
	ElemType keep = cx->w.compute;
	int keep_half = cx->w.half;
	stmt_math(&cx->w, cx->m, P);
	char *text = render_expr(&cx->w, P->rhs);
	cx->w.compute = keep, cx->w.half = keep_half;
	for (int i = 0; i < P->nfree; i++) cx->bind[P->first_index + i] = saved[i];
	return text;
}

/* Producer wr's local function (made on first use): a lambda of its free
 * indices, for a value read where only a condition makes the read valid
 * (evaluated only where called, rendered once however often read). Only
 * for producers recomputable anywhere: they read no local of the kernel.
 * Returns its memo id, or -1. */
static int fn_of(Cx *cx, int wr)
{
	const Stmt *P = &cx->m->stmt[wr];
	if (cx->p->remat[wr] < 2) return -1;
	for (int i = 0; i < cx->nmemo; i++)
		if (cx->memo[i].stmt == wr && cx->memo[i].fn) return i;
	int id = memo_new(cx, (Memo){.stmt = wr, .key = xstrdup(""), .order = -1, .fn = 1, .scope = -1});
	char *vars[MAX_RANK];
	for (int i = 0; i < P->nfree; i++) vars[i] = xasprintf("fz_p%d", i);
	int scope = cx->scope, cond = cx->w.cond;
	cx->scope = id, cx->w.cond = 0;
	char *text = render_producer(cx, P, vars);
	cx->scope = scope, cx->w.cond = cond;
	for (int i = 0; i < P->nfree; i++) free(vars[i]);
	cx->memo[id].text = text;
	cx->memo[id].order = cx->memo_done++;
	return id;
}

static void write_call(int fn, char **subs, int n, FILE *out)
{
	fprintf(out, "\x01%d\x02(", fn);
	for (int i = 0; i < n; i++) fprintf(out, "%s%s", i ? ", " : "", subs[i]);
	fputc(')', out);
}

/* Producer wr read at subs, written as a placeholder for the memo entry
 * of that value (made on first use): in place if used once, else a local
 * declared at the top of the value (or of the local function being
 * rendered). A value may be hoisted out of a condition that guards it only
 * if it cannot read out of bounds (plain subscripts, no gathers inside);
 * otherwise it is a call of the producer's local function. Returns 0,
 * writing nothing, where neither applies (the caller writes it in place). */
static int memo_use(Cx *cx, int wr, char **subs, int n, ElemType c, FILE *out)
{
	const Module *m = cx->m;
	const Stmt *P = &m->stmt[wr];
	int safe = plain_subs(subs, n) && !gathers(m, P->rhs);
	if ((cx->w.cond || cx->scope >= 0) && !safe) {
		int fn = fn_of(cx, wr);
		if (fn < 0) return 0;
		cx->memo[fn].uses++;
		fprintf(out, "((%s)", ctype(c)), write_call(fn, subs, n, out), fputc(')', out);
		return 1;
	}
	size_t klen = 1;
	for (int i = 0; i < n; i++) klen += strlen(subs[i]) + 1;
	char *key = xcalloc(klen, 1);
	for (int i = 0; i < n; i++) strcat(key, subs[i]), strcat(key, "\x1f");
	int id = -1;
	for (int i = 0; i < cx->nmemo && id < 0; i++)
		if (cx->memo[i].stmt == wr && !cx->memo[i].fn && cx->memo[i].scope == cx->scope && !strcmp(cx->memo[i].key, key)) id = i;
	if (id >= 0) {
		free(key);
	} else if (cx->scope >= 0) {
		/* in a local function: a local holding a call of the producer's own */
		int fn = fn_of(cx, wr);
		if (fn < 0) return free(key), 0;
		id = memo_new(cx, (Memo){.stmt = wr, .key = key, .order = -1, .scope = cx->scope});
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (!f) die("out of memory");
		write_call(fn, subs, n, f);
		fclose(f);
		cx->memo[fn].uses++;
		cx->memo[id].text = buf;
		cx->memo[id].order = cx->memo_done++;
	} else {
		/* rendered under the same condition state: what it reads in turn
		   passes the same test before it is hoisted */
		id = memo_new(cx, (Memo){.stmt = wr, .key = key, .order = -1, .scope = cx->scope});
		char *text = render_producer(cx, P, subs);
		cx->memo[id].text = text;
		cx->memo[id].order = cx->memo_done++;
	}
	cx->memo[id].uses++;
	fprintf(out, "((%s)\x01%d\x02)", ctype(c), id);
	return 1;
}

static void expand(Cx *cx, const char *s, FILE *out);

/* The declaration of entry id: a value, or a local function whose body
 * declares its own locals first. */
static void write_decl(Cx *cx, const int *by_order, int id, FILE *d, int nested)
{
	const Memo *me = &cx->memo[id];
	const Stmt *P = &cx->m->stmt[me->stmt];
	fprintf(d, "const auto %s = ", me->name);
	if (me->fn) {
		fputs("[&](", d);
		for (int q = 0; q < P->nfree; q++) fprintf(d, "%slong long fz_p%d", q ? ", " : "", q);
		fputs(") { ", d);
		for (int i = 0; i < cx->nmemo; i++) {
			const Memo *in = &cx->memo[by_order[i]];
			if (in->name && in->scope == id) write_decl(cx, by_order, by_order[i], d, 1), fputc(' ', d);
		}
		fputs("return ", d);
	}
	expand(cx, me->text, d);
	fputs(me->fn ? "; };" : ";", d);
	if (!nested) fputc('\n', d); /* a body's locals stay on its line */
}

/* Writes s with the memo's placeholders replaced: a value used once in
 * place, one used more by its local. */
static void expand(Cx *cx, const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s != '\x01') {
			fputc(*s, out);
			continue;
		}
		char *end;
		long id = strtol(s + 1, &end, 10);
		if (*end != '\x02' || id < 0 || id >= cx->nmemo) die("bad placeholder in kernel %s", cx->k->name);
		s = end;
		const Memo *e = &cx->memo[id];
		if (e->uses > 1 || e->fn) fputs(e->name, out);
		else expand(cx, e->text, out);
	}
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

static const char *hoisted(Cx *cx, int t, char **subs, int n, const char *lin);

void cuda_leaf(ExprWriter *w, int e, void *outp)
{
	Cx *cx = w->user;
	FILE *out = outp;
	const Module *m = cx->m;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) {
		if (!cx->bind[x->index]) die("index %s of %s is not bound in kernel %s", m->index[x->index].name,
		                             m->fusion[cx->fusion].name, cx->k->name);
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
	int wr = cx->p->writer[t];
	int cached = cx->rc_var && tt->kind == TK_INPUT && x->nargs == cx->k->nspace + 1 &&
	             !strcmp(subs[x->nargs - 1], cx->rc_var);
	for (int i = 0; cached && i < cx->k->nspace; i++) {
		char sv[16];
		snprintf(sv, sizeof sv, "s%d", i);
		cached = !strcmp(subs[i], sv);
	}
	int vi = -1;
	if (cached) {
		fprintf(out, "fz_rc_%s[fz_k][fz_j]", tt->name);
		cx->rc_used[t] |= 1;
	} else if (hit) {
		fputs(cx->local[t], out);
	} else if (wr >= 0 && wr < cx->cur && cx->p->remat[wr] &&
	           (cx->p->op[wr] == STEP_INLINE || cx->p->stmt_kernel[wr] == cx->kernel_id)) {
		/* Recompute the producer, its free indices bound to our subscripts:
		   once per value and tuple of subscripts (the memo), except where
		   only a condition lets it be evaluated. */
		const Stmt *P = &m->stmt[wr];
		if (cx->memo_on && memo_use(cx, wr, subs, x->nargs, w->compute, out)) {
			for (int i = 0; i < x->nargs; i++) free(subs[i]);
			return;
		}
		char *saved[MAX_RANK];
		for (int i = 0; i < P->nfree; i++) {
			saved[i] = cx->bind[P->first_index + i];
			cx->bind[P->first_index + i] = subs[i];
		}
		ElemType c = w->compute;
		int h = w->half;
		stmt_math(w, m, P);
		fprintf(out, "((%s)", ctype(c));
		ir_write_expr(w, P->rhs, out);
		fputc(')', out);
		w->compute = c, w->half = h;
		for (int i = 0; i < P->nfree; i++) cx->bind[P->first_index + i] = saved[i];
	} else if (cx->vec_u >= 0 && tt->kind != TK_OUTPUT && (vi = vec_access(cx, t, subs, x->nargs, 0)) >= 0) {
		fprintf(out, "fz_vl%d[%d]", vi, cx->vec_u);
	} else {
		char *lin = linear_of(cx, t, subs);
		const char *h = hoisted(cx, t, subs, x->nargs, lin);
		if (h) fputs(h, out);
		else load_elem(cx, t, lin, out);
		free(lin);
	}
	for (int i = 0; i < x->nargs; i++) free(subs[i]);
}

/* While a reduction loop's body is rendered: 1 if sub is a variable of
 * the kernel's point, 2 if one of the open loops', else 0. */
static int hoist_var(const Cx *cx, const char *sub)
{
	for (int i = 0; i < cx->k->nspace; i++) {
		char v[24];
		snprintf(v, sizeof v, "s%d%s", i, cx->sfx);
		if (!strcmp(sub, v)) return 1;
	}
	for (int i = 0; i < cx->nhvars; i++)
		if (!strcmp(sub, cx->hvars[i])) return 2;
	return 0;
}

/* The local holding input t at subs (linear index lin), made on first use;
 * NULL where the read is not hoisted (outside a reduction body, a written
 * input, a subscript that is not a variable of the point or the loops, or
 * the table full). */
static const char *hoisted(Cx *cx, int t, char **subs, int n, const char *lin)
{
	if (!cx->hoisting || !cx_readonly(cx, t)) return NULL;
	int inv = 1;
	for (int i = 0; i < n; i++) {
		int v = hoist_var(cx, subs[i]);
		if (!v) return NULL;
		if (v == 2) inv = 0;
	}
	for (int i = 0; i < cx->nhoist; i++)
		if (cx->hoist[i].t == t && !strcmp(cx->hoist[i].lin, lin)) return cx->hoist[i].name;
	if (cx->nhoist == (int)(sizeof cx->hoist / sizeof cx->hoist[0])) return NULL;
	struct Hoist *h = &cx->hoist[cx->nhoist++];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) die("out of memory");
	load_elem(cx, t, lin, f);
	fclose(f);
	*h = (struct Hoist){.t = t, .lin = xstrdup(lin), .load = buf, .inv = inv,
	                    .name = xasprintf("fz_h%d_%s", cx->nhname++, cx->m->tensor[t].name)};
	return h->name;
}

/* The hoisted reads that are loop-invariant (inv) or not, as locals; their
 * entries are dropped. */
void hoist_decls(Cx *cx, int inv, FILE *out, int depth)
{
	int k = 0;
	for (int i = 0; i < cx->nhoist; i++) {
		struct Hoist *h = &cx->hoist[i];
		if (h->inv != inv) {
			cx->hoist[k++] = *h;
			continue;
		}
		ind(out, depth), fprintf(out, "const auto %s = %s;\n", h->name, h->load);
		free(h->lin), free(h->load), free(h->name);
	}
	cx->nhoist = k;
}

/* ExprWriter.eager_ok in a reduction body: e has no branch worth keeping
 * and nothing it reads can be out of range (inputs at variables of the
 * point or the loops, sizes, scalars, integer and comparison arithmetic,
 * abs, min, max), so it may be evaluated whatever the condition before it. */
int eager_ok(ExprWriter *w, int e)
{
	Cx *cx = w->user;
	if (!cx->hoisting || !e) return cx->hoisting;
	const Expr *x = &cx->m->expr[e];
	switch (x->op) {
	case IR_CONST: case IR_SIZE: case IR_INDEX: return 1;
	/* a bool read from memory is 0 or 1 only if the caller's bytes are: & on
	   a byte of 2 is not && (comparisons and constants are 0 or 1) */
	case IR_SCALAR: return cx->m->tensor[x->tensor].kind == TK_INPUT && cx->m->tensor[x->tensor].type != ET_BOOL;
	case IR_LOAD: { /* an input, or a value the kernel holds in a local (eps(i) in a count's condition) */
		const int t = x->tensor, local = cx->local[t] != NULL;
		if (cx->m->tensor[t].type == ET_BOOL || (!local && !cx_readonly(cx, t))) return 0;
		for (int i = 0; i < x->nargs; i++) {
			const Expr *a = &cx->m->expr[x->args[i]];
			const char *b = a->op == IR_INDEX ? cx->bind[a->index] : NULL;
			if (!b || !hoist_var(cx, b) || (local && (!cx->local_at[t][i] || strcmp(cx->local_at[t][i], b)))) return 0;
		}
		return 1;
	}
	case IR_NEG: case IR_NOT: case IR_ADD: case IR_SUB: case IR_MUL: case IR_LT: case IR_LE: case IR_GT:
	case IR_GE: case IR_EQ: case IR_NE: case IR_AND: case IR_OR: case IR_ABS: case IR_MINF: case IR_MAXF:
	case IR_CAST:
		return eager_ok(w, x->a) && eager_ok(w, x->b);
	default: return 0;
	}
}

/* In the POINT vector path: an f32 access at the copy's point whose
 * innermost subscript is the space's innermost index over the same extent,
 * the others outer indices of the space. The four copies then touch four
 * consecutive elements starting at copy 0's, 16-byte aligned when the
 * tensor is and the extent is a multiple of 4 (the kernel checks both).
 * Returns the access's slot in cx->vl (loads) or cx->vs (stores), or -1. */
int vec_access(Cx *cx, int t, char **subs, int n, int store)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[t];
	const int ns = k->nspace;
	if (x->type != ET_F32 || n != x->rank || n < 1 || ns < 1) return -1;
	const Dim d = x->dim[n - 1], e = k->space[ns - 1];
	if (!dim_same(d, e)) return -1; /* derived sizes too (C/2 is not C) */
	char want[24], names[MAX_RANK][24], *subs0[MAX_RANK];
	for (int i = 0; i < n; i++) {
		int j;
		char tail[24];
		if (sscanf(subs[i], "s%d%23s", &j, tail) != 2 || j < 0 || j >= ns) return -1;
		snprintf(want, sizeof want, "s%d%s", j, cx->sfx);
		if (strcmp(subs[i], want) || (i == n - 1) != (j == ns - 1)) return -1;
		snprintf(names[i], sizeof names[i], "s%d_0", j), subs0[i] = names[i];
	}
	char *lin0 = linear_of(cx, t, subs0);
	struct VecAccess *v = store ? cx->vs : cx->vl;
	int *nv = store ? &cx->nvs : &cx->nvl;
	for (int i = 0; i < *nv; i++)
		if (v[i].t == t && !strcmp(v[i].lin0, lin0)) return free(lin0), i;
	if (*nv == 16) return free(lin0), -1;
	v[*nv].t = t, v[*nv].lin0 = lin0;
	return (*nv)++;
}

char *value_of(Cx *cx, const Stmt *s, int e, char **decls)
{
	stmt_math(&cx->w, cx->m, s);
	cx->cur = (int)(s - cx->m->stmt);
	cx->memo_on = 1, cx->nmemo = 0, cx->memo_done = 0;
	char *raw = render_expr(&cx->w, e);
	cx->memo_on = 0;
	/* locals for the values used more than once, dependencies first */
	char *dbuf = NULL, *vbuf = NULL;
	size_t dlen = 0, vlen = 0;
	FILE *d = open_memstream(&dbuf, &dlen), *v = open_memstream(&vbuf, &vlen);
	if (!d || !v) die("out of memory");
	int *by_order = xcalloc((size_t)cx->nmemo + 1, sizeof *by_order);
	for (int i = 0; i < cx->nmemo; i++) by_order[cx->memo[i].order] = i;
	for (int i = 0; i < cx->nmemo; i++) {
		Memo *me = &cx->memo[by_order[i]];
		if (me->uses < 2 && !me->fn) continue;
		me->name = xasprintf("fz_%c%d_%s", me->fn ? 'f' : 's', cx->nssa++, cx->m->tensor[cx->m->stmt[me->stmt].out].name);
	}
	for (int i = 0; i < cx->nmemo; i++) {
		const Memo *me = &cx->memo[by_order[i]];
		if (me->name && me->scope < 0) write_decl(cx, by_order, by_order[i], d, 0);
	}
	expand(cx, raw, v);
	fclose(d), fclose(v);
	for (int i = 0; i < cx->nmemo; i++) free(cx->memo[i].key), free(cx->memo[i].text), free(cx->memo[i].name);
	cx->nmemo = 0;
	free(by_order), free(raw);
	if (!dlen) free(dbuf), dbuf = NULL;
	if (dbuf && !decls) die("kernel %s: a value needs locals where none can be declared", cx->k->name);
	if (decls) *decls = dbuf;
	return vbuf;
}

void set_local(Cx *cx, int t, const char *name, char **subs, int n)
{
	free(cx->local[t]);
	cx->local[t] = strdup(name);
	for (int i = 0; i < MAX_RANK; i++) {
		free(cx->local_at[t][i]);
		cx->local_at[t][i] = i < n ? strdup(subs[i]) : NULL;
	}
}

void clear_locals(Cx *cx)
{
	for (int t = 0; t < cx->m->ntensor; t++) {
		free(cx->local[t]);
		cx->local[t] = NULL;
		for (int i = 0; i < MAX_RANK; i++) free(cx->local_at[t][i]), cx->local_at[t][i] = NULL;
	}
}

/* Stores value v into s's target at s's left-hand subscripts. */
void store_target(Cx *cx, const Stmt *s, const char *v, int depth)
{
	const Tensor *x = &cx->m->tensor[s->out];
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) subs[i] = render_expr(&cx->w, s->lhs[i]);
	FILE *o = cx->sink ? cx->sink : cx->out;
	int vi = cx->vec_u >= 0 && !s->mask ? vec_access(cx, s->out, subs, s->nlhs, 1) : -1;
	if (vi >= 0) { /* collected, stored as one vector after the copies */
		ind(o, depth), fprintf(o, "fz_vs%d[%d] = ", vi, cx->vec_u);
		store_conv(x, v, o);
		fputs(";\n", o);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		return;
	}
	if (row_store_deferred(cx, s, subs)) { /* stored as one vector after the row walk's step */
		ind(o, depth), fprintf(o, "fz_ws_%s[fz_j] = ", x->name);
		store_conv(x, v, o);
		fputs(";\n", o);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		return;
	}
	char *lin = linear_of(cx, s->out, subs);
	ind(o, depth);
	if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
	fprintf(o, "a.t_%s[%s] = ", x->name, lin);
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
	int n = s->pattern == PAT_COMPACT || cx->p->op[cx->cur] == STEP_GRID_REDUCE ? s->nindex : s->nfree;
	for (int i = 0; i < n && i < nspace; i++) {
		char v[16];
		snprintf(v, sizeof v, "s%d%s", i, cx->sfx);
		free(cx->bind[s->first_index + i]);
		cx->bind[s->first_index + i] = strdup(v);
	}
}
