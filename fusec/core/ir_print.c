/* --emit=ir: the checked program, one line per fact, stable for golden tests. */
#include <stdio.h>
#include <string.h>

#include "core/ir.h"

static const char *const red_spelling[] = {"=", "+=!", "max=!", "min=!", "kmin=!", "+=", "<-"};

static void pexpr_const(const Expr *x, FILE *f)
{
	if (elem_info[x->type].is_float) {
		/* a float reads back as one: 2.0, not 2 (nan and inf as they are) */
		char buf[40];
		snprintf(buf, sizeof buf, "%.9g", x->value);
		fprintf(f, "%s%s", buf, strpbrk(buf, ".en") ? "" : ".0");
	} else {
		fprintf(f, "%lld", (long long)x->value);
	}
}

static void pexpr(const Module *m, int e, FILE *f)
{
	const Expr *x = &m->expr[e];
	switch (x->op) {
	case IR_CONST:
		/* const NEG = -2 read as -NEG: (-(-2)), not (--2) */
		if (x->value < 0) fputc('(', f);
		pexpr_const(x, f);
		if (x->value < 0) fputc(')', f);
		return;
	case IR_INDEX: fputs(m->index[x->index].name, f); return;
	case IR_SCALAR: fputs(m->tensor[x->tensor].name, f); return;
	case IR_SIZE: fputs(m->fusion[x->fusion].sym[x->sym], f); return;
	case IR_LOAD:
		fprintf(f, "%s(", m->tensor[x->tensor].name);
		for (int i = 0; i < x->nargs; i++) {
			if (i) fputs(", ", f);
			pexpr(m, x->args[i], f);
		}
		fputc(')', f);
		return;
	case IR_CAST:
		fprintf(f, "%s(", elem_info[x->type].name);
		pexpr(m, x->a, f);
		fputc(')', f);
		return;
	default: break;
	}
	if (x->op == IR_NEG || x->op == IR_NOT) {
		fprintf(f, "(%s", ir_op_name[x->op]);
		pexpr(m, x->a, f);
		fputc(')', f);
	} else if (x->op <= IR_OR) {
		fputc('(', f);
		pexpr(m, x->a, f);
		fprintf(f, " %s ", ir_op_name[x->op]);
		pexpr(m, x->b, f);
		fputc(')', f);
	} else {
		fprintf(f, "%s(", ir_op_name[x->op]);
		pexpr(m, x->a, f);
		if (ir_op_arity[x->op] > 1) fputs(", ", f), pexpr(m, x->b, f);
		if (ir_op_arity[x->op] > 2) fputs(", ", f), pexpr(m, x->c, f);
		fputc(')', f);
	}
}

static void ptensor(const Module *m, const Fusion *fu, const Tensor *t, FILE *f)
{
	static const char *const kinds[] = {"input", "output", "temp"};
	fprintf(f, "  %-6s %s: %s", t->inplace ? "inout" : kinds[t->kind], t->name, elem_info[t->type].name);
	if (t->rank) dim_write_list(m, fu, t->dim, t->rank, ",", f);
	if (t->has_domain) fprintf(f, "  in [%.9g, %.9g]", t->dom_lo, t->dom_hi); /* as recorded: open ends moved in */
	if (t->def_stage >= 0) fprintf(f, "  written by %s", m->stage[t->def_stage].name);
	if (t->zero_init) fputs("  zero-initialised", f);
	if (t->list_count >= 0) fprintf(f, "  list, length in %s", m->tensor[t->list_count].name);
	fputc('\n', f);
}

static void pstmt(const Module *m, const Fusion *fu, const Stmt *s, FILE *f)
{
	const Tensor *t = &m->tensor[s->out];
	fputs("    ", f);
	if (s->red == RED_APPEND) {
		fprintf(f, "%s[%s] <- ", t->name, m->tensor[t->list_count].name);
	} else {
		fputs(t->name, f);
		if (s->nlhs) {
			fputc('(', f);
			for (int i = 0; i < s->nlhs; i++) {
				if (i) fputs(", ", f);
				pexpr(m, s->lhs[i], f);
			}
			fputc(')', f);
		}
		if (s->red == RED_KMIN) fprintf(f, " kmin[%d]=! ", s->kmin_k);
		else fprintf(f, " %s ", red_spelling[s->red]);
	}
	pexpr(m, s->rhs, f);
	if (s->mask) fputs(" where ", f), pexpr(m, s->mask, f);
	fprintf(f, "\n      pattern %s, %s accumulator", pattern_name[s->pattern], elem_info[s->acc].name);
	for (int i = s->first_index; i < s->first_index + s->nindex; i++) {
		const Index *x = &m->index[i];
		fprintf(f, "; %s %s", i - s->first_index < s->nfree ? "free" : x->reduced ? "reduced" : "loop", x->name);
		if (x->kind == IX_RAGGED) {
			fputs(" in [", f);
			pexpr(m, x->lo, f);
			fputs(", ", f);
			pexpr(m, x->hi, f);
			fputc(')', f);
		} else {
			fputs(" < ", f);
			dim_write(m, fu, x->range, f);
		}
	}
	fputc('\n', f);
}

void ir_print(const Module *m, void *out)
{
	FILE *f = out;
	for (int i = 0; i < m->nfusion; i++) {
		const Fusion *fu = &m->fusion[i];
		fprintf(f, "fusion %s\n  sizes:", fu->name);
		for (int j = 0; j < fu->nsym; j++) fprintf(f, " %s", fu->sym[j]);
		fputc('\n', f);
		for (int j = fu->first_tensor; j < fu->first_tensor + fu->ntensor; j++) ptensor(m, fu, &m->tensor[j], f);
		for (int j = 0; j < fu->nfit; j++) { /* what the domains need of the sizes */
			fprintf(f, "  fits   %s: ", m->tensor[fu->fit[j].tensor].name);
			dim_write(m, fu, fu->fit[j].dim, f);
			fprintf(f, " >= %lld\n", (long long)fu->fit[j].least);
		}
		for (int j = fu->first_stage; j < fu->first_stage + fu->nstage; j++) {
			const Stage *s = &m->stage[j];
			fprintf(f, "  stage %s precision %s", s->name, s->tf32 ? "tf32" : elem_info[s->precision].name);
			static const char *const an[] = {
#define X(a, n) n,
				ATTRS(X)
#undef X
			};
			for (unsigned b = 0; b < sizeof an / sizeof an[0]; b++)
				if (b != ATTR_PRECISION_BIT && (s->attrs & (1u << b))) fprintf(f, " %s", an[b]);
			fputc('\n', f);
			for (int k = s->first_stmt; k < s->first_stmt + s->nstmt; k++) pstmt(m, fu, &m->stmt[k], f);
		}
	}
}
