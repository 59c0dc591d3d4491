/* The CUDA writer's smallest pieces, which every other file of it uses:
 * C types and the math policy of a statement's stage, indentation, sizes,
 * linear offsets, an element loaded and converted, locals' declarations,
 * a reduction's operator and identity. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "cuda/cuda.h"

static ElemType cuda_stmt_compute(const Module *m, const Stmt *s)
{
	return m->stage[s->stage].precision == ET_F64 ? ET_F64 : ET_F32;
}

void cuda_stmt_math(ExprWriter *w, const Module *m, const Stmt *s)
{
	ElemType p = m->stage[s->stage].precision;
	w->compute = cuda_stmt_compute(m, s);
	w->half = p == ET_F16 || p == ET_BF16;
}

const char *cuda_ctype(ElemType t)
{
	switch (t) {
	case ET_F64: return "double";
	case ET_I64: return "long long";
	case ET_I32: case ET_BOOL: return "int";
	default: return "float"; /* f32, and f16/bf16 computed in f32 */
	}
}

void cuda_ind(FILE *out, int n)
{
	for (int i = 0; i < n; i++) fputc('\t', out);
}

void cuda_dim(Cx *cx, Dim d, FILE *out) { dim_write_c(&cx->m->fusion[cx->fusion], d, "a.n_", out); }

/* Read element `lin` of tensor t, converted to its compute type. */
void cuda_load(Cx *cx, int t, const char *lin, FILE *out)
{
	const Tensor *x = &cx->m->tensor[t];
	const char *pre = cx_readonly(cx, t) ? "__ldg(&" : "(";
	switch (x->type) {
	/* inputs through the read-only path: the compiler may then issue their
	   loads ahead of the kernel's stores (a tile epilogue's 16 rows at once) */
	case ET_F16: fprintf(out, "fz_h2f(%sa.t_%s[%s]))", pre, x->name, lin); break;
	case ET_BF16: fprintf(out, "fz_b2f(%sa.t_%s[%s]))", pre, x->name, lin); break;
	/* fp8 bytes: read by tensor-core tiles alone (sema checks every read) */
	case ET_F8E4M3: case ET_F8E5M2: die("kernel reads %s tensor %s outside a tensor-core tile", elem_info[x->type].name, x->name);
	default: fprintf(out, "%sa.t_%s[%s])", pre, x->name, lin); break;
	}
}

char *cuda_linear(Cx *cx, int t, char **subs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	emit_linear(cx->m, cx->fusion, t, subs, "a.n_", f);
	fclose(f);
	return buf;
}

char *cuda_linear_at(Cx *cx, int t, char **subs, const int *roles, int n)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[t];
	int id = cx->flat && k->mode == KM_POINT && k->nspace >= 2 && x->rank == n && n == k->nspace;
	for (int i = 0; i < n && id; i++)
		id = (i == n - 1 || roles[i] == i) && dim_same(x->dim[i], k->space[i]);
	if (!id) return cuda_linear(cx, t, subs);
	/* the decomposition's divisions and the products of the linear index
	   were most of rotary's instructions (ncu, H200) */
	if (roles[n - 1] == n - 1) return xasprintf("fz_p%s", cx->sfx);
	return xasprintf("(fz_p%s - s%d%s + (long long)(%s))", cx->sfx, n - 1, cx->sfx, subs[n - 1]);
}

int cuda_role(const Cx *cx, int e)
{
	const Expr *x = &cx->m->expr[e];
	return x->op == IR_INDEX ? cx->role[x->index - cx->first_index] : CUDA_ROLE_NONE;
}

void cuda_put_decls(FILE *out, const char *decls, int depth)
{
	for (const char *l = decls; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		cuda_ind(out, depth);
		fwrite(l, 1, n, out);
		fputc('\n', out);
		l += n + (nl != NULL);
	}
}

const char *cuda_identity(RedOp r, ElemType t)
{
	int f = elem_info[t].is_float;
	switch (r) {
	case RED_MAX: return f ? (t == ET_F64 ? "-FZ_INF_D" : "-FZ_INF_F") : (t == ET_I64 ? "FZ_I64_MIN" : "FZ_I32_MIN");
	case RED_MIN: return f ? (t == ET_F64 ? "FZ_INF_D" : "FZ_INF_F") : (t == ET_I64 ? "FZ_I64_MAX" : "FZ_I32_MAX");
	default: return "0";
	}
}

const char *cuda_red_op(RedOp r)
{
	return r == RED_MAX ? "FZ_MAX" : r == RED_MIN ? "FZ_MIN" : "FZ_SUM";
}
