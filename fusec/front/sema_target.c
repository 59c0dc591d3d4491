/* The checker: a statement's target and types (a list appended to, an
 * existing tensor, or a new intermediate of the value's type; the type it
 * accumulates in), then its pattern (classify), which the planner reads. */
#include "front/sema_impl.h"

/* Does e hold no index and read no tensor of rank > 0? (a factor the
   whole sum can be multiplied by: scalars, constants, sizes) */
static int index_free(const Module *m, int e)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX || (x->op == IR_LOAD && x->nargs > 0)) return 0;
	return index_free(m, x->a) && index_free(m, x->b) && index_free(m, x->c);
}

/* The factors of a product tree e, up to 8 (more: -1) */
static int factors(const Module *m, int e, int *f, int n)
{
	if (n < 0) return n;
	if (m->expr[e].op == IR_MUL) return factors(m, m->expr[e].b, f, factors(m, m->expr[e].a, f, n));
	if (n == 8) return -1;
	f[n] = e;
	return n + 1;
}

/* A contraction: the rhs is a product of exactly two loads that read the
   reduced index r and of index-free factors (their product the statement's
   contract_scale). */
static int contraction(Sema *s, Stmt *st, int r)
{
	Module *m = s->m;
	int f[8], ld[2], nld = 0, scale = 0;
	const int n = factors(m, st->rhs, f, 0);
	if (n < 2) return 0;
	for (int i = 0; i < n; i++) {
		if (sema_loads_index(m, f[i], r)) {
			if (nld == 2) return 0;
			ld[nld++] = f[i];
		} else if (!index_free(m, f[i])) {
			return 0;
		}
	}
	if (nld != 2) return 0;
	for (int i = 0; i < n; i++) {
		if (f[i] == ld[0] || f[i] == ld[1]) continue;
		if (!scale) { scale = f[i]; continue; }
		const int p = ir_add_expr(m, IR_MUL, m->expr[st->rhs].type, m->expr[f[i]].off);
		m->expr[p].a = scale, m->expr[p].b = f[i], scale = p;
	}
	st->pattern = PAT_CONTRACT, st->contract_a = ld[0], st->contract_b = ld[1], st->contract_scale = scale;
	return 1;
}

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
	if (st->red == RED_SUM && nred == 1 && !st->mask && contraction(s, st, st->first_index + st->nfree)) return;
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
