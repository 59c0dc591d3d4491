/* A read in CUDA (ExprWriter's leaf): an index's variable, a scalar, or
 * a tensor's element from wherever the kernel has it: a row's register
 * cache, a local, a recomputed producer, a vector of the POINT vector
 * path, a read hoisted out of a reduction loop's conditions, or memory. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static const char *hoisted(Cx *cx, int t, const int *roles, int n, const char *lin);

void cuda_leaf(ExprWriter *w, int e, void *outp)
{
	Cx *cx = w->user;
	FILE *out = outp;
	const Module *m = cx->m;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) {
		if (!cx->bind[x->index - cx->first_index]) die("index %s of %s is not bound in kernel %s", m->index[x->index].name,
		                             m->fusion[cx->fusion].name, cx->k->name);
		fputs(cx->bind[x->index - cx->first_index], out);
		return;
	}
	int t = x->tensor;
	const Tensor *tt = &m->tensor[t];
	if (x->op == IR_SCALAR && tt->kind == TK_INPUT) {
		fprintf(out, "((%s)a.t_%s)", elem_info[tt->type].is_float ? cuda_ctype(w->compute) : cuda_ctype(tt->type), tt->name);
		return;
	}
	char *subs[MAX_RANK] = {0};
	int roles[MAX_RANK];
	for (int i = 0; i < x->nargs; i++) subs[i] = emit_render(w, x->args[i]), roles[i] = cuda_role(cx, x->args[i]);
	int hit = cx->local[t - cx->first_tensor] != NULL;
	for (int i = 0; i < x->nargs && hit; i++) hit = cx->local_at[t - cx->first_tensor][i] && !strcmp(cx->local_at[t - cx->first_tensor][i], subs[i]);
	int wr = cx->p->writer[t - cx->p->first_tensor];
	/* an input's row at the point, read at the row walk's column */
	int cached = cx->rc_var && tt->kind == TK_INPUT && cuda_row_at(cx, tt, roles, x->nargs);
	int vi = -1, el = 0;
	if (cached) {
		if (cx->rc_edge) fprintf(out, "fz_re_%s", tt->name);
		else fprintf(out, "fz_rc_%s[fz_k][fz_j]", tt->name);
		cx->rc_used[t - cx->first_tensor] |= 1;
	} else if (hit) {
		fputs(cx->local[t - cx->first_tensor], out);
	} else if (wr >= 0 && wr < cx->cur && cx->p->remat[wr - cx->p->first_stmt] &&
	           (cx->p->op[wr - cx->p->first_stmt] == STEP_INLINE || cx->p->stmt_kernel[wr - cx->p->first_stmt] == cx->kernel_id)) {
		/* Recompute the producer, its free indices bound to our subscripts:
		   once per value and tuple of subscripts (the memo), except where
		   only a condition lets it be evaluated. */
		const Stmt *P = &m->stmt[wr];
		/* the value as the reader's arithmetic takes it: a float in its compute
		   type, an integer as one (cast to float, abs(t(i)) called fz_iabs(float),
		   which NVRTC refused, and t(i) / 2 would have divided in floats) */
		const ElemType as = elem_info[tt->type].is_float ? w->compute : tt->type;
		if (cx->memo_on && cuda_memo_use(cx, wr, subs, roles, x->nargs, as, out)) {
			for (int i = 0; i < x->nargs; i++) free(subs[i]);
			return;
		}
		char *saved[MAX_RANK];
		signed char saved_role[MAX_RANK];
		for (int i = 0; i < P->nfree; i++) {
			saved[i] = cx->bind[P->first_index + i - cx->first_index];
			saved_role[i] = cx->role[P->first_index + i - cx->first_index];
			cx->bind[P->first_index + i - cx->first_index] = subs[i];
			cx->role[P->first_index + i - cx->first_index] = (signed char)roles[i];
		}
		ElemType c = w->compute;
		int h = w->half;
		cuda_stmt_math(w, m, P);
		fprintf(out, "((%s)", cuda_ctype(as));
		ir_write_expr(w, P->rhs, out);
		fputc(')', out);
		w->compute = c, w->half = h;
		for (int i = 0; i < P->nfree; i++)
			cx->bind[P->first_index + i - cx->first_index] = saved[i], cx->role[P->first_index + i - cx->first_index] = saved_role[i];
	} else if (cx->vec_u >= 0 && tt->kind != TK_OUTPUT && (vi = cuda_vec_access(cx, t, roles, x->args, x->nargs, 0, &el)) >= 0) {
		fprintf(out, "fz_vl%d[%d]", vi, el);
	} else {
		char *lin = cuda_linear_at(cx, t, subs, roles, x->nargs);
		const char *h = hoisted(cx, t, roles, x->nargs, lin);
		if (h) fputs(h, out);
		else cuda_load(cx, t, lin, out);
		free(lin);
	}
	for (int i = 0; i < x->nargs; i++) free(subs[i]);
}

/* While a reduction loop's body is rendered: 1 if a subscript of this
 * role is a coordinate of the kernel's point, 2 if one of the open loops'
 * variables, else 0. */
static int hoist_var(const Cx *cx, int role)
{
	if (role >= 0 && role < cx->k->nspace) return 1;
	return role == CUDA_ROLE_LOOP && cx->nhvars ? 2 : 0;
}

/* The local holding input t at subscripts of these roles (linear index
 * lin), made on first use;
 * NULL where the read is not hoisted (outside a reduction body, a written
 * input, a subscript that is not a variable of the point or the loops, or
 * the table full). */
static const char *hoisted(Cx *cx, int t, const int *roles, int n, const char *lin)
{
	if (!cx->hoisting || !cx_readonly(cx, t)) return NULL;
	int inv = 1;
	for (int i = 0; i < n; i++) {
		int v = hoist_var(cx, roles[i]);
		if (!v) return NULL;
		if (v == 2) inv = 0;
	}
	for (int i = 0; i < cx->nhoist; i++)
		if (cx->hoist[i].t == t && !strcmp(cx->hoist[i].lin, lin)) {
			if (cx->w.compute != ET_F64) cx->hoist[i].dbl = 0; /* a use in f32: held as read */
			return cx->hoist[i].name;
		}
	if (cx->nhoist == (int)(sizeof cx->hoist / sizeof cx->hoist[0])) return NULL;
	struct Hoist *h = &cx->hoist[cx->nhoist++];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	cuda_load(cx, t, lin, f);
	fclose(f);
	/* at the one open loop's variable alone: a candidate for the warp's tile */
	char *at = cx->nhvars == 1 ? xasprintf("(long long)(%s)", cx->hvars[0]) : NULL;
	const int at_loop = cx->stage_try && n == 1 && roles[0] == CUDA_ROLE_LOOP && at && !strcmp(lin, at);
	free(at);
	*h = (struct Hoist){.t = t, .lin = xstrdup(lin), .load = buf, .inv = inv, .at_loop = at_loop,
	                    .dbl = cx->m->tensor[t].type == ET_F32 && cx->w.compute == ET_F64,
	                    .name = xasprintf("fz_h%d_%s", cx->nhname++, cx->m->tensor[t].name)};
	return h->name;
}

/* The hoisted reads that are loop-invariant (inv) or not, as locals; their
 * entries are dropped. */
void cuda_hoist_decls(Cx *cx, int inv, FILE *out, int depth)
{
	int k = 0;
	for (int i = 0; i < cx->nhoist; i++) {
		struct Hoist *h = &cx->hoist[i];
		if (h->inv != inv) {
			cx->hoist[k++] = *h;
			continue;
		}
		if (cx->k->par.stage && h->dbl) /* converted once, not at each use in the loop (KernelParams.stage) */
			cuda_ind(out, depth), fprintf(out, "const double %s = (double)%s;\n", h->name, h->load);
		else
			cuda_ind(out, depth), fprintf(out, "const auto %s = %s;\n", h->name, h->load);
		free(h->lin), free(h->load), free(h->name);
	}
	cx->nhoist = k;
}

/* ExprWriter.eager_ok in a reduction body: e has no branch worth keeping
 * and nothing it reads can be out of range (inputs at variables of the
 * point or the loops, sizes, scalars, integer and comparison arithmetic,
 * abs, min, max), so it may be evaluated whatever the condition before it. */
int cuda_eager_ok(ExprWriter *w, int e)
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
		const int t = x->tensor, local = cx->local[t - cx->first_tensor] != NULL;
		if (cx->m->tensor[t].type == ET_BOOL || (!local && !cx_readonly(cx, t))) return 0;
		for (int i = 0; i < x->nargs; i++) {
			const Expr *a = &cx->m->expr[x->args[i]];
			const char *b = a->op == IR_INDEX ? cx->bind[a->index - cx->first_index] : NULL;
			if (!b || !hoist_var(cx, cuda_role(cx, x->args[i])) ||
			    (local && (!cx->local_at[t - cx->first_tensor][i] || strcmp(cx->local_at[t - cx->first_tensor][i], b))))
				return 0;
		}
		return 1;
	}
	case IR_NEG: case IR_NOT: case IR_ADD: case IR_SUB: case IR_MUL: case IR_LT: case IR_LE: case IR_GT:
	case IR_GE: case IR_EQ: case IR_NE: case IR_AND: case IR_OR: case IR_ABS: case IR_MINF: case IR_MAXF:
	case IR_CAST:
		return cuda_eager_ok(w, x->a) && cuda_eager_ok(w, x->b);
	default: return 0;
	}
}

/* Does e use an index or read a tensor? (a rotation's offset must not) */
static int point_free(const Module *m, int e)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX || x->op == IR_LOAD) return 0;
	return point_free(m, x->a) && point_free(m, x->b) && point_free(m, x->c);
}

/* The innermost subscript (i + c) % E, i the space's innermost index and
   E its extent, c free of the point (rotary's partner at (d + D/2) % D):
   for the points of a vector (i and E multiples of the width) consecutive
   when c is a multiple of the width too. Returns 1 with copy 0's
   subscript and the condition on c, else 0. */
static int rotated(Cx *cx, int t, const Expr *a, char **sub0, char **cond)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const int ns = k->nspace;
	if (a->op != IR_MOD || m->expr[a->a].op != IR_ADD) return 0;
	const Expr *sum = &m->expr[a->a], *i = &m->expr[sum->a];
	const Dim d = k->space[ns - 1];
	if (i->op != IR_INDEX || cx->role[i->index - cx->first_index] != ns - 1 || !point_free(m, sum->b) ||
	    m->expr[a->b].op != IR_SIZE || dim_derived(d) || d.sym != m->expr[a->b].sym ||
	    !dim_same(m->tensor[t].dim[m->tensor[t].rank - 1], d))
		return 0;
	char *c = emit_render(&cx->w, sum->b), *e = emit_render(&cx->w, a->b);
	*sub0 = xasprintf("fz_imod(s%d_0 + (%s), %s)", ns - 1, c, e);
	*cond = xasprintf("((%s) & %d) == 0 && (%s) >= 0", c, cx->vec_n - 1, c);
	free(c), free(e);
	return 1;
}

/* The innermost subscript a*i + b of a gather (Kernel.vec_stride a), i the
   space's innermost index, 0 <= b < a, at V = 4: its copies' elements
   a*u + b of the a vectors of 4 from a * i. Returns 1 with copy 0's base
   subscript, the condition (t's rows aligned, a times the extent within
   them) and b, else 0. */
static int gathered(Cx *cx, int t, const Expr *x, char **sub0, char **cond, int *b)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const int ns = k->nspace, a = kernel_vec_stride(k, t);
	const Tensor *tt = &m->tensor[t];
	*b = 0;
	if (a < 2 || cx->vec_n != 4) return 0;
	if (x->op == IR_ADD) {
		const Expr *l = &m->expr[x->a], *r = &m->expr[x->b], *c = l->op == IR_CONST ? l : r;
		if (c->op != IR_CONST || c->value != (double)(long long)c->value || c->value < 0 || c->value >= a) return 0;
		*b = (int)c->value;
		x = c == l ? r : l;
	}
	if (x->op != IR_MUL) return 0;
	const Expr *l = &m->expr[x->a], *r = &m->expr[x->b], *c = l->op == IR_CONST ? l : r, *i = c == l ? r : l;
	if (c->op != IR_CONST || c->value != (double)a || i->op != IR_INDEX || cx->role[i->index - cx->first_index] != ns - 1) return 0;
	char *e = NULL, *d = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&e, &len);
	cuda_dim(cx, k->space[ns - 1], f);
	fclose(f);
	f = xmemstream(&d, &len);
	cuda_dim(cx, tt->dim[tt->rank - 1], f);
	fclose(f);
	*sub0 = xasprintf("%d * s%d_0", a, ns - 1);
	*cond = xasprintf("(%s & 3) == 0 && %d * %s <= %s", d, a, e, d);
	free(e), free(d);
	return 1;
}

/* In the POINT vector path: an access of one of the kernel's vector
 * tensors (Kernel.vec_tensors) at the copy's point, its innermost subscript
 * the space's innermost coordinate, the others outer coordinates of the
 * space or whole constants (roles: the subscripts' cuda_role; args: their
 * expressions), or a load's innermost subscript rotated (rotated()). The
 * copies (4 or 8) then touch consecutive elements starting at copy 0's,
 * aligned when the tensor is and the extent a multiple of the width (the
 * kernel checks both); or a gather's (gathered()), a elements apart in a
 * vectors. Returns the access's slot in cx->vl (loads) or cx->vs (stores),
 * or -1; *elem (loads) the copy's element of it. */
int cuda_vec_access(Cx *cx, int t, const int *roles, const int *args, int n, int store, int *elem)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[t];
	const int ns = k->nspace;
	if (n != x->rank || n < 1 || ns < 1 || !kernel_vec_tensor(k, t)) return -1; /* the schedule's choice */
	char names[MAX_RANK][24], *subs0[MAX_RANK], *rot = NULL, *cond = NULL;
	int roles0[MAX_RANK], b = -1;
	for (int i = 0; i < n; i++) {
		const int j = roles[i];
		const Expr *a = &cx->m->expr[args[i]];
		roles0[i] = j;
		/* an outer subscript may be a whole constant, the same for the copies
		   (the halves of a gated product's X(r, 0, c) and X(r, 1, c)) */
		if (i < n - 1 && j == CUDA_ROLE_NONE && a->op == IR_CONST && a->value == (double)(long long)a->value && a->value >= 0) {
			snprintf(names[i], sizeof names[i], "%lld", (long long)a->value), subs0[i] = names[i];
			continue;
		}
		if (i == n - 1 && !store && cx->flat && n == ns && rotated(cx, t, a, &rot, &cond)) {
			subs0[i] = rot, roles0[i] = CUDA_ROLE_NONE;
			continue;
		}
		if (i == n - 1 && !store && gathered(cx, t, a, &rot, &cond, &b)) {
			subs0[i] = rot, roles0[i] = CUDA_ROLE_NONE;
			continue;
		}
		if (j < 0 || j >= ns || (i == n - 1) != (j == ns - 1)) return -1;
		snprintf(names[i], sizeof names[i], "s%d_0", j), subs0[i] = names[i];
	}
	for (int i = 0; i < n - 1 && rot && b < 0; i++) /* the rest at the point: at the flat index */
		if (roles0[i] != i || !dim_same(x->dim[i], k->space[i])) return free(rot), free(cond), -1;
	const int stride = b >= 0 ? kernel_vec_stride(k, t) : 1;
	if (elem) *elem = b >= 0 ? stride * cx->vec_u + b : cx->vec_u;
	const char *sfx = cx->sfx;
	cx->sfx = "_0"; /* copy 0's */
	char *lin0 = cuda_linear_at(cx, t, subs0, roles0, n);
	cx->sfx = sfx;
	free(rot);
	struct VecAccess *v = store ? cx->vs : cx->vl;
	int *nv = store ? &cx->nvs : &cx->nvl;
	for (int i = 0; i < *nv; i++)
		if (v[i].t == t && v[i].stride == stride && !strcmp(v[i].lin0, lin0)) return free(lin0), free(cond), i;
	if (*nv == 16) return free(lin0), free(cond), -1;
	v[*nv].t = t, v[*nv].stride = stride, v[*nv].lin0 = lin0, v[*nv].cond = cond;
	return (*nv)++;
}
