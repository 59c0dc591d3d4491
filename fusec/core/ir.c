#include "core/ir.h"
#include "core/die.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

const ElemInfo elem_info[ET_N] = {
#define X(e, n, c, cu, b, f, r) {n, c, cu, b, f, r},
	ELEM_TYPES(X)
#undef X
};
const char *const ir_op_name[IR_NOPS] = {
#define X(o, n, s) s,
	IR_OPS(X)
#undef X
};
const int ir_op_arity[IR_NOPS] = {
#define X(o, n, s) n,
	IR_OPS(X)
#undef X
};
const char *const pattern_name[PAT_N] = {
#define X(p, s) s,
	PATTERNS(X)
#undef X
};

int elem_lookup(const char *s, size_t len)
{
	for (int i = 0; i < ET_N; i++)
		if (i != ET_BOOL && strlen(elem_info[i].name) == len && !memcmp(elem_info[i].name, s, len))
			return i;
	return -1;
}

int elem_is_fp8(int t) { return t == ET_F8E4M3 || t == ET_F8E5M2; }

void ir_init(Module *m)
{
	memset(m, 0, sizeof *m);
	ir_add_expr(m, IR_CONST, ET_I32, 0); /* expr 0: "none" */
}

void ir_free(Module *m)
{
	for (int i = 0; i < m->nfusion; i++) {
		free(m->fusion[i].name);
		for (int j = 0; j < m->fusion[i].nsym; j++) free(m->fusion[i].sym[j]);
		free(m->fusion[i].sym);
		free(m->fusion[i].fit);
	}
	for (int i = 0; i < m->npipeline; i++) free(m->pipeline[i].name), free(m->pipeline[i].steps);
	free(m->pipeline);
	for (int i = 0; i < m->ntensor; i++) free(m->tensor[i].name);
	for (int i = 0; i < m->nstage; i++) free(m->stage[i].name);
	for (int i = 0; i < m->nindex; i++) free(m->index[i].name);
	free(m->fusion), free(m->tensor), free(m->stage), free(m->stmt), free(m->index), free(m->expr);
	memset(m, 0, sizeof *m);
}

/* Grows an array by one zeroed element; allocation failure is fatal in the
 * compiler (die(), exit 3), never in the runtime library. */
static void *grow(void *p, int *n, int *cap, size_t sz)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		p = xrealloc(p, (unsigned long)*cap, sz);
	}
	memset((char *)p + (size_t)*n * sz, 0, sz);
	(*n)++;
	return p;
}

#define ADD(arr, n, capi) \
	do { m->arr = grow(m->arr, &m->n, &m->caps[capi], sizeof *m->arr); } while (0)

int ir_add_fusion(Module *m) { ADD(fusion, nfusion, 0); return m->nfusion - 1; }
int ir_add_tensor(Module *m)
{
	ADD(tensor, ntensor, 1);
	Tensor *t = &m->tensor[m->ntensor - 1];
	t->param = -1, t->def_stage = -1, t->list_count = -1;
	return m->ntensor - 1;
}
int ir_add_stage(Module *m) { ADD(stage, nstage, 2); return m->nstage - 1; }
int ir_add_stmt(Module *m) { ADD(stmt, nstmt, 3); return m->nstmt - 1; }
int ir_add_index(Module *m) { ADD(index, nindex, 4); return m->nindex - 1; }
int ir_add_expr(Module *m, IrOp op, ElemType t, unsigned off)
{
	ADD(expr, nexpr, 5);
	Expr *e = &m->expr[m->nexpr - 1];
	e->op = op, e->type = t, e->off = off, e->tensor = -1, e->index = -1;
	return m->nexpr - 1;
}

/* Does expression e read index ix anywhere (subscripts, operands)? The
   checker (ragged bounds) and the planner (contraction operands) ask. */
int ir_expr_uses_index(const Module *m, int e, int ix)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) return x->index == ix;
	for (int i = 0; i < x->nargs; i++)
		if (ir_expr_uses_index(m, x->args[i], ix)) return 1;
	return ir_expr_uses_index(m, x->a, ix) || ir_expr_uses_index(m, x->b, ix) || ir_expr_uses_index(m, x->c, ix);
}

int ir_expr_reads(const Module *m, int e, int t)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if ((x->op == IR_LOAD || x->op == IR_SCALAR) && x->tensor == t) return 1;
	for (int i = 0; i < x->nargs; i++)
		if (ir_expr_reads(m, x->args[i], t)) return 1;
	return ir_expr_reads(m, x->a, t) || ir_expr_reads(m, x->b, t) || ir_expr_reads(m, x->c, t);
}

/* Does any expression of the module apply op? (helpers emitted on use) */
int ir_uses_op(const Module *m, IrOp op)
{
	for (int e = 1; e < m->nexpr; e++)
		if (m->expr[e].op == op) return 1;
	return 0;
}

int dim_same(Dim a, Dim b)
{
	return a.sym == b.sym && (a.sym >= 0 || a.value == b.value) && a.add == b.add &&
	       (a.div > 1 ? a.div : 1) == (b.div > 1 ? b.div : 1) && a.dsym == b.dsym;
}

/* The manifest's and the printers' spelling: C, (C+1)/2, C-1, N/S. */
void dim_write(const Module *m, const Fusion *f, Dim d, void *out)
{
	(void)m;
	int paren = (d.add != 0) && (d.div > 1 || d.dsym);
	if (paren) fputc('(', out);
	if (d.sym >= 0) fputs(f->sym[d.sym], out);
	else fprintf(out, "%lld", (long long)d.value);
	if (d.add) fprintf(out, "%+lld", (long long)d.add);
	if (paren) fputc(')', out);
	if (d.div > 1) fprintf(out, "/%lld", (long long)d.div);
	if (d.dsym) fprintf(out, "/%s", f->sym[d.dsym - 1]);
}

/* A shape or a space: [N,C/2], SEP between the dimensions. */
void dim_write_list(const Module *m, const Fusion *f, const Dim *d, int n, const char *sep, void *out)
{
	fputc('[', out);
	for (int i = 0; i < n; i++) {
		if (i) fputs(sep, out);
		dim_write(m, f, d[i], out);
	}
	fputc(']', out);
}

void dim_write_c(const Fusion *f, Dim d, const char *prefix, void *out)
{
	char base[96];
	if (d.sym >= 0) snprintf(base, sizeof base, "%s%s", prefix, f->sym[d.sym]);
	else snprintf(base, sizeof base, "%lldLL", (long long)d.value);
	if (!dim_derived(d)) {
		fputs(base, out);
		return;
	}
	/* (base + add) clamped at 0, then divided: never negative */
	fprintf(out, "((%s + %lldLL) > 0 ? (%s + %lldLL) / ", base, (long long)d.add, base, (long long)d.add);
	if (d.dsym) fprintf(out, "(%s%s > 0 ? %s%s : 1LL)", prefix, f->sym[d.dsym - 1], prefix, f->sym[d.dsym - 1]);
	else fprintf(out, "%lldLL", (long long)(d.div > 1 ? d.div : 1));
	fputs(" : 0LL)", out);
}

static void c_double(double v, FILE *f)
{
	char buf[40];
	snprintf(buf, sizeof buf, "%.17g", v == 0 ? 0.0 : v); /* no "-0" */
	fprintf(f, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

void domain_write(const Tensor *t, void *out)
{
	if (!t->has_domain) return;
	fputs(" domain=", out), c_double(t->dom_lo, out), fputs("..", out), c_double(t->dom_hi, out);
}

/* --- printing as C --------------------------------------------------- */

static const char *float_fn(const ExprWriter *w, const char *f64, const char *f32)
{
	return w->compute == ET_F64 ? f64 : f32;
}

static void write_const(const ExprWriter *w, const Expr *x, FILE *f)
{
	/* a negative constant (const NEG = -2) in parentheses: -NEG would
	   be written "(--2)", a decrement, and x - -2 "x - -2" at best */
	if (x->value < 0) fputc('(', f);
	if (!elem_info[x->type].is_float) {
		fprintf(f, "%lld", (long long)x->value);
	} else {
		char buf[40];
		snprintf(buf, sizeof buf, w->compute == ET_F64 ? "%.17g" : "%.9g", x->value);
		/* keep float constants float: "1" would make 1/2 integer division */
		fprintf(f, "%s%s%s", buf, strpbrk(buf, ".en") ? "" : ".0", w->compute == ET_F64 ? "" : "f");
	}
	if (x->value < 0) fputc(')', f);
}

static void write_cast(ExprWriter *w, const Expr *x, FILE *f)
{
	if (!elem_info[x->type].is_float && elem_info[w->m->expr[x->a].type].is_float) {
		/* a float to an integer: toward zero, saturated, NaN to 0, as the
		   GPU's cvt.rzi does (the intrinsics say so; C's and C++'s cast is
		   undefined out of range, i32(log(x)) of x <= 0 included): the
		   reference's fz_f2i32 and fz_f2i64 do the same (emit_ref.c) */
		if (w->cuda) fputs(x->type == ET_I64 ? "__double2ll_rz((double)(" : "__double2int_rz((double)(", f);
		else fputs(x->type == ET_I64 ? "fz_f2i64((double)(" : "fz_f2i32((double)(", f);
		ir_write_expr(w, x->a, f);
		fputs("))", f);
		return;
	}
	fprintf(f, "((%s)(", w->cuda && x->type == ET_I64 ? "long long" : w->cuda && x->type == ET_I32 ? "int" : elem_info[x->type].is_float ? (w->compute == ET_F64 || x->type == ET_F64 ? "double" : "float") : elem_info[x->type].ctype);
	ir_write_expr(w, x->a, f);
	fputs("))", f);
}

/* whether e is written as a double in f64 arithmetic: an f64 value, or a
   float element or scalar, converted where it is read (ir_write_expr) */
static int reads_double(const ExprWriter *w, int e)
{
	const Expr *x = &w->m->expr[e];
	return x->type == ET_F64 || ((x->op == IR_LOAD || x->op == IR_SCALAR) && elem_info[x->type].is_float);
}

/* fn(a) or fn(a, b), its operands converted where CUDA's overloads would
   make the call ambiguous */
static void write_call(ExprWriter *w, const Expr *x, const char *fn, FILE *f)
{
	const int ar = ir_op_arity[x->op];
	/* min and max of an i32 and an i64 (min(7, N): N is an i64) are i64: the
	   CUDA's fz_imin(int, int) and fz_imin(long long, long long) would both
	   match (int, long long), and NVRTC refuses the ambiguous call */
	const int widen = w->cuda && (x->op == IR_MINF || x->op == IR_MAXF) && !elem_info[x->type].is_float &&
	                  w->m->expr[x->a].type != w->m->expr[x->b].type;
	/* an argument of a CUDA math function in f64 that is not a double (ceil(n),
	   pow(x, n), fmax(d, f) of an f32 scalar): its float and double overloads
	   (and pow's int exponent) match alike, and NVRTC refuses the ambiguous
	   call; the reference's C functions convert to double, and so do we */
	const int dbl = w->cuda && w->compute == ET_F64 && elem_info[x->type].is_float && strncmp(fn, "fz_", 3);
	const int ca = widen || (dbl && !reads_double(w, x->a));
	const int cb = ar >= 2 && (widen || (dbl && !reads_double(w, x->b)));
	const char *cast = widen ? "(long long)(" : "(double)(";
	fprintf(f, "%s(%s", fn, ca ? cast : "");
	ir_write_expr(w, x->a, f);
	if (ar >= 2) fprintf(f, "%s, %s", ca ? ")" : "", cb ? cast : ""), ir_write_expr(w, x->b, f);
	fputs(ar >= 2 ? (cb ? "))" : ")") : (ca ? "))" : ")"), f);
}

/* ExprWriter.fold_mul and select_ninf: 1 when e was written so */
static int write_folded(ExprWriter *w, int e, void *out)
{
	const Expr *x = &w->m->expr[e];
	if (e == w->fold_mul) {
		ir_write_expr(w, w->fold_keep == 1 ? x->a : x->b, out);
		return 1;
	}
	if (e != w->select_ninf) return 0;
	fputc('(', (FILE *)out);
	ir_write_expr(w, x->a, out);
	fputs(" ? ", (FILE *)out);
	w->cond++;
	ir_write_expr(w, x->b, out);
	fputs(w->cuda ? " : __int_as_float(0xff800000))" : " : -INFINITY)", (FILE *)out);
	w->cond--;
	return 1;
}

void ir_write_expr(ExprWriter *w, int e, void *out)
{
	const Expr *x = &w->m->expr[e];
	FILE *f = out;
	if ((w->fold_mul > 0 || w->select_ninf > 0) && write_folded(w, e, out)) return;
	switch (x->op) {
	case IR_CONST:
		write_const(w, x, f);
		return;
	case IR_SIZE: /* the args struct's field in a kernel, a parameter in the reference */
		fprintf(f, "((long long)%sn_%s)", w->cuda ? "a." : "", w->m->fusion[x->fusion].sym[x->sym]);
		return;
	case IR_LOAD:
	case IR_SCALAR:
		if (w->cuda && w->compute == ET_F64 && elem_info[x->type].is_float && x->type != ET_F64) {
			/* an f32 (or 16-bit) element or scalar in f64 arithmetic is converted
			   where it is read, as the reference reads it (dsl/README 9.2): xn(i) - xn(j) of two
			   f32 values is exact in f64 and rounded in f32, which moved
			   transfer_entropy's counts across near-ties (issue 27) */
			fputs("((double)", f);
			w->leaf(w, e, out);
			fputc(')', f);
			return;
		}
		w->leaf(w, e, out);
		return;
	case IR_INDEX:
		w->leaf(w, e, out);
		return;
	case IR_CAST:
		write_cast(w, x, f);
		return;
	default: break;
	}
	int ar = ir_op_arity[x->op];
	if (x->op == IR_NEG || x->op == IR_NOT) {
		fprintf(f, "(%s", ir_op_name[x->op]);
		ir_write_expr(w, x->a, out);
		fputc(')', f);
		return;
	}
	if (x->op == IR_DIV && w->cuda && w->compute == ET_F32 && elem_info[x->type].is_float) {
		/* f32 division as a product with the IEEE reciprocal (dsl/MATH.md):
		   a divisor shared by many quotients (a row's sum) is inverted once */
		fputc('(', f);
		ir_write_expr(w, x->a, out);
		fputs(" * (1.0f / ", f);
		ir_write_expr(w, x->b, out);
		fputs("))", f);
		return;
	}
	if ((x->op == IR_DIV || x->op == IR_MOD) && w->cuda && x->type == ET_I64 && w->m->expr[x->b].op != IR_CONST) {
		/* in 32 bits where the operands allow (fz_idiv in the CUDA prelude);
		   by a constant the compiler multiplies */
		fputs(x->op == IR_DIV ? "fz_idiv(" : "fz_imod(", f);
		ir_write_expr(w, x->a, out);
		fputs(", ", f);
		ir_write_expr(w, x->b, out);
		fputc(')', f);
		return;
	}
	if (ar == 2 && x->op <= IR_OR) {
		fputc('(', f);
		ir_write_expr(w, x->a, out);
		int lazy = x->op == IR_AND || x->op == IR_OR;
		if (lazy && w->eager_ok && w->m->expr[x->a].type == ET_BOOL && w->m->expr[x->b].type == ET_BOOL &&
		    w->eager_ok(w, x->b))
			lazy = 0; /* both operands are 0 or 1: & and | give && and ||'s value */
		fprintf(f, " %s ", lazy || (x->op != IR_AND && x->op != IR_OR) ? ir_op_name[x->op] : x->op == IR_AND ? "&" : "|");
		w->cond += lazy;
		ir_write_expr(w, x->b, out);
		w->cond -= lazy;
		fputc(')', f);
		return;
	}
	const char *fn = NULL;
	switch (x->op) {
#define X(o, n, f64, f32) case IR_##o: fn = float_fn(w, f64, f32); break;
	IR_BUILTINS(X)
#undef X
	default: break;
	}
	switch (x->op) {
	case IR_EXP: if (w->cuda && w->compute != ET_F64) fn = "fz_expf"; break; /* dsl/MATH.md */
	case IR_TANH: if (w->cuda && w->compute == ET_F32 && w->half) fn = "fz_tanhf_h"; break; /* the same, 16-bit storage */
	case IR_GELU: if (w->cuda && w->compute == ET_F32 && w->half) fn = "fz_geluf_h"; break;
	case IR_RSQRT: fn = w->cuda ? float_fn(w, "rsqrt", "rsqrtf") : float_fn(w, "fz_rsqrt", "fz_rsqrtf"); break;
	case IR_ABS: fn = elem_info[x->type].is_float ? float_fn(w, "fabs", "fabsf") : "fz_iabs"; break;
	case IR_MINF: fn = elem_info[x->type].is_float ? float_fn(w, "fmin", "fminf") : "fz_imin"; break;
	case IR_MAXF: fn = elem_info[x->type].is_float ? float_fn(w, "fmax", "fmaxf") : "fz_imax"; break;
	case IR_SELECT:
		if (e == w->select_true) {
			ir_write_expr(w, x->b, out);
			return;
		}
		fputc('(', f);
		ir_write_expr(w, x->a, out);
		fputs(" ? ", f);
		w->cond++;
		ir_write_expr(w, x->b, out);
		fputs(" : ", f);
		ir_write_expr(w, x->c, out);
		w->cond--;
		fputc(')', f);
		return;
	default: break;
	}
	if (!fn) die("ir_write_expr: opcode %s has no spelling", ir_op_name[x->op]);
	write_call(w, x, fn, f);
}
