/* The checker: a statement's target and types (a list appended to, an
 * existing tensor, or a new intermediate of the value's type; the type it
 * accumulates in), then its pattern (classify), which the planner reads. */
#include "front/sema_impl.h"

static void classify(Sema *s, Stmt *st)
{
	Module *m = s->m;
	if (st->red == RED_APPEND) { st->pattern = PAT_COMPACT; return; }
	if (st->red == RED_ACCUM) {
		int gathered = st->nindex > st->nfree;
		for (int i = 0; i < st->nlhs; i++)
			if (m->expr[st->lhs[i]].op != IR_INDEX) gathered = 1;
		st->pattern = gathered ? PAT_SCATTER : PAT_MAP;
		ElemType tt = m->tensor[st->out].type;
		if (gathered && (tt == ET_F16 || tt == ET_BF16))
			diag_error(s->d, st->off, "a scatter-add ('+=' through a gather) into %s is not supported: its atomics take f32, f64, i32 "
			           "or i64; scatter into an f32 temp and convert it in a later stage", elem_info[tt].name);
		return;
	}
	if (st->red == RED_NONE) { st->pattern = PAT_MAP; return; }
	st->pattern = PAT_REDUCE;
	int nred = st->nindex - st->nfree;
	if (st->red == RED_SUM && nred == 1 && !st->mask) {
		int r = st->first_index + st->nfree;
		const Expr *x = &m->expr[st->rhs];
		if (x->op == IR_MUL && sema_loads_index(m, x->a, r) && sema_loads_index(m, x->b, r)) {
			st->pattern = PAT_CONTRACT, st->contract_a = x->a, st->contract_b = x->b;
			return;
		}
	}
	if (st->nfree == 1 && nred == 1) {
		const Index *i = &m->index[st->first_index], *j = &m->index[st->first_index + 1];
		if (i->kind == IX_DENSE && j->kind == IX_DENSE && dim_equal(i->range, j->range))
			st->pattern = PAT_PAIRWISE;
	}
}

static void new_intermediate(Sema *s, int lhs, ElemType t, Stmt *st)
{
	int id = sema_tensor_new(s, lhs, TK_TEMP, t);
	Tensor *x = &s->m->tensor[id];
	x->rank = st->nlhs;
	for (int i = 0; i < st->nlhs; i++) x->dim[i] = s->m->index[s->m->expr[st->lhs[i]].index].range;
	st->out = id;
}

/* The end of a statement's checks (check_stmt_body): after its value is
   built, since the value's type decides a new intermediate's type and the
   accumulator's. */
void sema_stmt_target(Sema *s, int node, int sid, int target)
{
	const Node *x = N(s, node);
	Module *m = s->m;
	int is_append = x->kind == AST_APPEND;
	int lhs = is_append ? node : x->a;
	Stmt *st = &m->stmt[sid];
	RedOp red = st->red;
	int rhs = st->rhs;
	ElemType vt = ET(s, rhs);
	if (is_append) {
		int count = sema_tensor_find(s, x->a);
		Tensor *lt = &m->tensor[target];
		if (lt->rank != 1 || is_float(lt->type)) {
			diag_error(s->d, x->off, "type mismatch: '%.*s' must be a one-dimensional integer list to append to", NAMEF(s, lhs));
			return;
		}
		if (count < 0 || m->tensor[count].rank != 0 || is_float(m->tensor[count].type) || m->tensor[count].kind == TK_INPUT) {
			diag_error(s->d, N(s, x->a)->off, "'%.*s' must be a scalar integer output that receives the list's length", NAMEF(s, x->a));
			return;
		}
		if (is_float(vt)) {
			diag_error(s->d, s->m->expr[rhs].off, "type mismatch: a list holds integers, not floats");
			return;
		}
		for (int u = 0; u < m->ntensor; u++)
			if (u != target && m->tensor[u].list_count == count) {
				/* one counter, two lists: each would append at the other's slots */
				diag_error(s->d, N(s, x->a)->off, "'%.*s' already counts the list '%s'; each list needs its own count",
				           NAMEF(s, x->a), m->tensor[u].name);
				return;
			}
		lt->list_count = count;
		if (m->tensor[count].def_stage < 0) m->tensor[count].def_stage = s->stage;
		st->acc = lt->type;
	} else if (target >= 0) {
		Tensor *tt = &m->tensor[target];
		if (is_float(vt) && !is_float(tt->type)) {
			diag_error(s->d, s->m->expr[rhs].off, "type mismatch: cannot store a value of type %s in tensor '%s' of type %s",
			           elem_info[vt].name, tt->name, elem_info[tt->type].name);
			return;
		}
		st->acc = is_float(tt->type) ? (tt->type == ET_F64 ? ET_F64 : s->compute) : (red == RED_KMIN ? vt : tt->type);
		if (is_float(tt->type) && s->compute == ET_F64) st->acc = ET_F64;
	} else {
		ElemType store = is_float(vt) ? m->stage[s->stage].precision : (vt == ET_I64 ? ET_I64 : ET_I32);
		if (red == RED_SUM && !is_float(vt)) store = ET_I32;
		new_intermediate(s, lhs, store, st);
		st = &m->stmt[sid];
		st->acc = is_float(vt) ? s->compute : store;
		target = st->out;
	}
	if (m->tensor[target].def_stage < 0) m->tensor[target].def_stage = s->stage;
	classify(s, st);
}
