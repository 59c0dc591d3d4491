/* The checks of `pipeline` declarations: the fusion exists, the step count
 * has a name of its own, and every carried pair is an input fed by an
 * output of the same element type and shape (the buffers trade places
 * between steps, so they must be interchangeable). Runs after every fusion
 * of the file is checked; a pipeline over a fusion with errors is skipped
 * (its errors are already reported). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fuserun.h" /* FZ_MAX_NAME */
#include "core/die.h"
#include "front/sema.h"

#define MAX_PIPELINES 16

static const Node *NODE(const Ast *t, int i) { return &t->n[i]; }
#define PNAME(t, i) (int)NODE(t, i)->len, (t)->text + NODE(t, i)->off

static char *dup_node(const Ast *t, int i)
{
	char *s = xcalloc(NODE(t, i)->len + 1, 1);
	memcpy(s, t->text + NODE(t, i)->off, NODE(t, i)->len);
	return s;
}

/* "f32[N, M]" */
static char *shape_of(const Module *m, const Fusion *f, const Tensor *x)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = xmemstream(&buf, &len);
	fputs(elem_info[x->type].name, o);
	if (x->rank) dim_write_list(m, f, x->dim, x->rank, ", ", o);
	fclose(o);
	return buf;
}

static int param_find(const Ast *t, const Module *m, const Fusion *f, int node)
{
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (m->tensor[i].kind != TK_TEMP && ast_name_eq(t, node, m->tensor[i].name)) return i;
	return -1;
}

static void check_carry(const Ast *t, Diag *d, const Module *m, const Fusion *f, Pipeline *p, int c)
{
	const int in = param_find(t, m, f, c), out = param_find(t, m, f, NODE(t, c)->a);
	const int on = NODE(t, c)->a;
	int bad = 0;
	if (in >= 0 && m->tensor[in].inplace) {
		diag_error(d, NODE(t, c)->off, "'%s' is updated in place; it carries itself from step to step without '<-'", m->tensor[in].name);
		return;
	}
	if (in < 0 || m->tensor[in].kind != TK_INPUT) {
		diag_error(d, NODE(t, c)->off, "'%.*s' is not an input of fusion '%s'; a carried value feeds an input", PNAME(t, c), f->name);
		bad = 1;
	}
	if (out < 0 || m->tensor[out].kind != TK_OUTPUT) {
		diag_error(d, NODE(t, on)->off, "'%.*s' is not an output of fusion '%s'; an input is fed by an output", PNAME(t, on), f->name);
		bad = 1;
	}
	if (bad) return;
	const Tensor *ti = &m->tensor[in], *to = &m->tensor[out];
	if (to->inplace) {
		diag_error(d, NODE(t, on)->off, "'%s' is updated in place; it carries itself from step to step without '<-'", to->name);
		return;
	}
	if (!ti->rank || !to->rank) {
		diag_error(d, NODE(t, !ti->rank ? c : on)->off, "'%s' is a scalar; only tensors can be carried (a scalar input is passed by value at launch)",
		           !ti->rank ? ti->name : to->name);
		return;
	}
	if (to->list_count >= 0) {
		diag_error(d, NODE(t, on)->off, "'%s' is a compacted list; its length changes from step to step, so it cannot be carried", to->name);
		return;
	}
	int same = ti->type == to->type && ti->rank == to->rank;
	for (int k = 0; same && k < ti->rank; k++) same = dim_same(ti->dim[k], to->dim[k]);
	if (!same) {
		char *a = shape_of(m, f, ti), *b = shape_of(m, f, to);
		diag_error(d, NODE(t, c)->off, "'%s' (%s) cannot be fed by '%s' (%s): a carried output must have its input's type and shape",
		           ti->name, a, to->name, b);
		free(a), free(b);
		return;
	}
	for (int k = 0; k < p->ncarry; k++) {
		if (p->carry_in[k] == in) {
			diag_error(d, NODE(t, c)->off, "'%s' is fed twice", ti->name);
			return;
		}
		if (p->carry_out[k] == out) {
			diag_error(d, NODE(t, on)->off, "'%s' already feeds '%s'; an output feeds one input", to->name, m->tensor[p->carry_in[k]].name);
			return;
		}
	}
	if (p->ncarry == MAX_CARRY) {
		diag_error(d, NODE(t, c)->off, "more than %d carried values in one pipeline", MAX_CARRY);
		return;
	}
	p->carry_in[p->ncarry] = in, p->carry_out[p->ncarry] = out, p->ncarry++;
}

static void check_pipeline(const Ast *t, int node, Diag *d, Module *m, int fusion_errors)
{
	const Node *n = NODE(t, node);
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(t, node, m->fusion[i].name)) {
			diag_error(d, n->off, "'%.*s' is already the name of a fusion", PNAME(t, node));
			return;
		}
	for (int i = 0; i < m->npipeline; i++)
		if (ast_name_eq(t, node, m->pipeline[i].name)) {
			diag_error(d, n->off, "redefinition of pipeline '%.*s'", PNAME(t, node));
			return;
		}
	/* its kernels are NAME_k0 .. NAME_k15, within the runtime's 63 */
	if (n->len > FZ_MAX_NAME - 5) {
		diag_error(d, n->off, "the name of pipeline '%.24s...' is %u characters long: at most %d, so that its kernels' names "
		           "(NAME_k0 ...) are within the runtime's %d", t->text + n->off, n->len, FZ_MAX_NAME - 5, FZ_MAX_NAME);
		return;
	}
	int fi = -1;
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(t, n->a, m->fusion[i].name)) fi = i;
	if (fi < 0) {
		/* a fusion that failed its checks is not in the Module: say nothing more */
		if (!fusion_errors) diag_error(d, NODE(t, n->a)->off, "unknown fusion '%.*s'", PNAME(t, n->a));
		return;
	}
	const Fusion *f = &m->fusion[fi];
	if (f->failed) return; /* its sizes and parameters may be missing: its own errors say it */
	if (n->c) {
		for (int i = 0; i < f->nsym; i++)
			if (ast_name_eq(t, n->c, f->sym[i])) {
				diag_error(d, NODE(t, n->c)->off, "'%.*s' is a size of fusion '%s'; the step count needs a name of its own",
				           PNAME(t, n->c), f->name);
				return;
			}
		if (param_find(t, m, f, n->c) >= 0) {
			diag_error(d, NODE(t, n->c)->off, "'%.*s' is a parameter of fusion '%s'; the step count needs a name of its own",
			           PNAME(t, n->c), f->name);
			return;
		}
	}
	if (m->npipeline == MAX_PIPELINES) {
		diag_error(d, n->off, "more than %d pipelines in one file", MAX_PIPELINES);
		return;
	}
	Pipeline p = {.fusion = fi, .repeat = n->c != 0, .off = n->off};
	const int before = d->errors;
	for (int c = n->b; c; c = NODE(t, c)->next) check_carry(t, d, m, f, &p, c);
	if (d->errors != before) return;
	p.name = dup_node(t, node);
	p.steps = n->c ? dup_node(t, n->c) : NULL;
	m->pipeline = xrealloc(m->pipeline, (unsigned long)m->npipeline + 1, sizeof *m->pipeline);
	m->pipeline[m->npipeline++] = p;
}

void sema_pipelines(const Ast *ast, int root, Diag *d, Module *m)
{
	const int fusion_errors = d->errors;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_PIPELINE) check_pipeline(ast, it, d, m, fusion_errors);
}
