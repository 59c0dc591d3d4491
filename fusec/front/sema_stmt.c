/* The checker's statements: the target, the indices and their ranges
 * (pass 1), then the subscripts, value and mask as typed IR (pass 2). The
 * target's type and the statement's pattern are sema_target.c's. */
#include "front/sema_impl.h"

/* What a '+=' that has nothing to add into probably meant: with bare
 * indices on the left, a sum reduction; through a gather, a zeroed temp. */
static void accum_hint(Sema *s, int lhs, int output)
{
	int bare = 1;
	for (int a = N(s, lhs)->a; a; a = N(s, a)->next) bare &= sema_is_index_name(s, a);
	if (bare)
		diag_note(s->d, N(s, lhs)->off, "did you mean '+=!'? It sums into '%.*s' from zero; '+=' adds into %s",
		          NAMEF(s, lhs), output ? "whatever the buffer held" : "a tensor that already exists");
	else
		diag_note(s->d, N(s, lhs)->off, "scatter into a 'temp' (it starts at zero)%s",
		          output ? ", or define the output first (with '=')" : "");
}

/* stmt := ref aop expr [for IDENT in expr .. expr] [where expr]
 *       | IDENT '[' IDENT ']' '<-' expr where expr */
static void check_stmt_body(Sema *s, int node);

/* An output whose statement fails is not also reported "never written";
 * marked after the statement, so it still cannot read itself. */
void sema_check_stmt(Sema *s, int node)
{
	const Node *x = N(s, node);
	s->nundef = 0;
	int errors = s->d->errors;
	check_stmt_body(s, node);
	for (int i = 0; i < s->nundef; i++) /* not met by pass 2: reported all the same */
		if (!s->undef[i].done) sema_undefined_name(s, s->undef[i].off, s->undef[i].len);
	s->cur_lhs = 0; /* names read outside a statement (constants) define nothing */
	int t = sema_tensor_find(s, x->kind == AST_APPEND ? node : x->a);
	if (t < 0) sema_mark_failed(s, x->kind == AST_APPEND ? node : x->a);
	if (t >= 0 && s->m->tensor[t].kind != TK_INPUT && s->m->tensor[t].def_stage < 0) {
		s->m->tensor[t].def_stage = s->stage;
		if (s->d->errors != errors) sema_tflag_set(&s->def_failed, t);
	}
	if (x->kind == AST_APPEND && (t = sema_tensor_find(s, x->a)) >= 0 && s->m->tensor[t].kind != TK_INPUT &&
	    s->m->tensor[t].def_stage < 0)
		s->m->tensor[t].def_stage = s->stage;
}

static RedOp stmt_red(const Node *x)
{
	if (x->kind == AST_APPEND) return RED_APPEND;
	switch (x->op) {
	case AOP_ACCUM: return RED_ACCUM;
	case AOP_SUM: return RED_SUM;
	case AOP_MAX: return RED_MAX;
	case AOP_MIN: return RED_MIN;
	case AOP_KMIN: return RED_KMIN;
	default: return RED_NONE;
	}
}

/* May the statement write its target? 1 (an error said) if not: the rest
   of the statement is still checked, as its value and mask may hold
   independent errors. */
static int target_refused(Sema *s, const Node *x, int lhs, int target, RedOp red)
{
	const Module *m = s->m;
	const int is_append = red == RED_APPEND;
	int bad = 1;
	if (target >= 0 && m->tensor[target].kind == TK_INPUT) {
		diag_error(s->d, x->off, "cannot assign to input '%.*s'", NAMEF(s, lhs));
	} else if (target >= 0 && red != RED_ACCUM && m->tensor[target].def_stage >= 0) {
		if (!sema_tflag_get(&s->def_failed, target)) /* else its first definition's error says it all */
			diag_error(s->d, x->off, "'%.*s' is already written by stage '%s' (use += to accumulate)",
			           NAMEF(s, lhs), m->stage[m->tensor[target].def_stage].name);
	} else if (target >= 0 && red == RED_ACCUM && m->tensor[target].kind == TK_OUTPUT && m->tensor[target].def_stage < 0 &&
	           !m->tensor[target].inplace) {
		diag_error(s->d, x->off, "'+=' adds into output '%.*s', but no earlier statement defines it", NAMEF(s, lhs));
		accum_hint(s, lhs, 1);
	} else if (target < 0 && (red == RED_ACCUM || is_append)) {
		diag_error(s->d, x->off, "'%.*s' must be declared (as an output or with 'temp') before %s",
		           NAMEF(s, lhs), is_append ? "a compaction appends to it" : "'+=' accumulates into it");
		if (!is_append) accum_hint(s, lhs, 0);
	} else if (target < 0 && (sema_builtin_find(s, lhs) || sema_const_find(s, lhs) || sema_sym_find(s, lhs) >= 0)) {
		if (!sema_is_failed(s, lhs)) /* else a parameter so named was refused: that error says it */
			diag_error(s->d, x->off, "cannot assign to %s '%.*s'",
			           sema_builtin_find(s, lhs) ? "built-in function" : sema_const_find(s, lhs) ? "constant" : "size", NAMEF(s, lhs));
	} else {
		bad = 0;
	}
	return bad | sema_shape_failed(s, target); /* its declaration's error is reported */
}

/* Pass 1, the left: its index names get the target's ranges; 0, or -1
   when the statement ends here (an error said) */
static int lhs_indices(Sema *s, int lhs, int target, RedOp red)
{
	const Module *m = s->m;
	int pos = 0;
	for (int a = N(s, lhs)->a; a; a = N(s, a)->next, pos++) {
		if (sema_is_index_name(s, a)) {
			int k = sema_slot_get(s, a);
			if (k < 0) continue;
			if (s->slot[k].on_lhs) {
				diag_error(s->d, N(s, a)->off, "index '%.*s' appears twice on the left-hand side", NAMEF(s, a));
				return -1;
			}
			s->slot[k].on_lhs = 1;
			if (target >= 0 && !sema_shape_failed(s, target) && pos < m->tensor[target].rank)
				sema_give_range(s, a, k, m->tensor[target].dim[pos]);
		} else if (red != RED_ACCUM) {
			diag_error(s->d, N(s, a)->off, "a left-hand subscript must be an index name (only '+=' may scatter through an expression)");
			return -1;
		} else {
			sema_collect_indices(s, a);
		}
	}
	return 0;
}

/* Pass 1: the statement's indices and their ranges. -1 when the statement
   ends here; else 1 if a range error was said (p1_bad: pass 2 still
   reports the independent errors of its value), 0 if none. Names that
   pass 2 reports, or that are already reported, are dropped rather than
   entered. */
static int stmt_indices(Sema *s, const Node *x, int lhs, int target, RedOp red, int lhs_bad)
{
	const int is_append = red == RED_APPEND;
	s->nslot = 0;
	s->nundef = 0;
	s->naff = 0;
	s->rank_error = 0, s->too_many_idx = 0;
	if (!is_append && x->c) {
		int k = sema_slot_get(s, x->c);
		if (k >= 0) s->slot[k].ragged = 1, s->slot[k].ragged_node = x->c;
	}
	if (!is_append && lhs_indices(s, lhs, target, red)) return -1;
	sema_collect_indices(s, x->b);
	sema_collect_indices(s, x->d);
	if (!is_append && x->c) {
		s->no_ranges = 1;
		sema_collect_indices(s, N(s, x->c)->a), sema_collect_indices(s, N(s, x->c)->b);
		s->no_ranges = 0;
	}
	if (!is_append && x->e) sema_collect_indices(s, x->e);
	if (s->rank_error || s->too_many_idx) return -1; /* more indices than order[] below holds */
	int p1_bad = sema_affine_ranges(s, x->d, target >= 0);
	for (int k = 0; k < s->nslot; k++) {
		Slot *sl = &s->slot[k];
		if (sl->has_range || sl->ragged) continue;
		sl->has_range = 1, sl->range = (Dim){.sym = -1, .value = 1};
		if ((lhs_bad && sl->on_lhs && !sl->in_access) || (sl->in_unknown && !sl->in_bound)) {
			/* knock-on of the target's error, or of an unknown callee's */
			sl->dropped = !sl->on_lhs, sl->reported = 1, p1_bad = 1;
		} else if (sl->on_lhs || sl->in_access || sl->in_bound) {
			diag_error(s->d, sl->off, "cannot infer the range of index '%.*s': no tensor on the right is subscripted by it",
			           (int)sl->len, s->ast->text + sl->off);
			sl->reported = 1, p1_bad = 1;
		} else { /* reported where pass 2 meets it, in source order */
			s->undef[s->nundef].off = sl->off, s->undef[s->nundef].len = sl->len, s->undef[s->nundef++].done = 0;
			sl->dropped = 1, p1_bad = 1;
		}
	}
	for (int k = 0; k < s->nslot; k++) {
		if (!s->slot[k].ragged) continue;
		if (s->slot[k].on_lhs) {
			diag_error(s->d, N(s, x->c)->off, "the 'for' index '%.*s' cannot be a subscript of the target", NAMEF(s, x->c));
			return -1;
		}
		if (s->slot[k].in_bound) {
			diag_error(s->d, N(s, x->c)->off, "the bounds of 'for %.*s' cannot use '%.*s' itself", NAMEF(s, x->c), NAMEF(s, x->c));
			return -1;
		}
	}
	return p1_bad;
}

/* The slots in the order of the statement's indices: those on the left
   first, in subscript order; returns how many are on the left (nfree). */
static int order_slots(Sema *s, int lhs, int is_append)
{
	int order[MAX_IDX], n = 0;
	if (!is_append)
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next)
			if (sema_is_index_name(s, a)) order[n++] = sema_slot_find(s, N(s, a)->off, N(s, a)->len);
	int nfree = n;
	for (int k = 0; k < s->nslot; k++) {
		int dup = s->slot[k].dropped;
		for (int j = 0; j < n; j++) dup |= order[j] == k;
		if (!dup) order[n++] = k;
	}
	Slot sorted[MAX_IDX];
	for (int k = 0; k < n; k++) sorted[k] = s->slot[order[k]];
	memcpy(s->slot, sorted, sizeof sorted);
	s->nslot = n;
	return nfree;
}

/* The statement and its indices in the IR; returns its id. */
static int enter_stmt(Sema *s, const Node *x, int target, RedOp red, int nfree)
{
	Module *m = s->m;
	const int n = s->nslot;
	int sid = ir_add_stmt(m);
	m->stage[s->stage].nstmt++;
	Stmt *st = &m->stmt[sid];
	st->stage = s->stage, st->red = red, st->off = x->off, st->out = target;
	st->nfree = nfree, st->nindex = n;
	s->first_index = st->first_index = m->nindex;
	for (int k = 0; k < n; k++) {
		int id = ir_add_index(m);
		Index *ix = &m->index[id];
		ix->name = xcalloc(s->slot[k].len + 1, 1);
		memcpy(ix->name, s->ast->text + s->slot[k].off, s->slot[k].len);
		ix->name[s->slot[k].len] = 0;
		ix->off = s->slot[k].off;
		ix->kind = s->slot[k].ragged ? IX_RAGGED : IX_DENSE;
		ix->range = s->slot[k].range;
		ix->reduced = k >= nfree && red != RED_ACCUM && red != RED_APPEND && red != RED_NONE;
	}
	return sid;
}

/* Errors of the indices as entered: too many points, an index left off
   the left of a plain assignment. 0, or -1 after saying it. */
static int index_errors(Sema *s, const Node *x, RedOp red, int nfree)
{
	const int n = s->nslot;
	Dim r[MAX_IDX];
	int nr = 0;
	for (int k = 0; k < n; k++)
		if (!s->slot[k].ragged) r[nr++] = s->slot[k].range;
	double pts = sema_literal_product(r, nr);
	if (pts > LITERAL_LIMIT) {
		diag_error(s->d, x->off, "this statement ranges over %.3g points: sizes written as numbers must keep it "
		           "within 2^62 (64-bit index arithmetic wraps beyond)", pts);
		return -1;
	}
	for (int k = nfree; red == RED_NONE && k < n; k++) {
		const Slot *sl = &s->slot[k];
		if (sl->reported) continue;
		Guess g = {0}; /* a typo of an index on the left? */
		for (int j = 0; j < nfree; j++) sema_guess_name(&g, s->ast->text + sl->off, sl->len, s->ast->text + s->slot[j].off, s->slot[j].len);
		if (g.best && !g.ties)
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; did you mean '%.*s'?",
			           (int)sl->len, s->ast->text + sl->off, (int)g.len, g.best);
		else
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; reduce over it with +=!, max=!, min=! or kmin[k]=!",
			           (int)sl->len, s->ast->text + sl->off);
		return -1;
	}
	return 0;
}

/* The bounds of the statement's data-given ranges (for s in lo .. hi):
   0, or -1 after saying what is wrong */
static int ragged_bounds(Sema *s, int sid)
{
	Module *m = s->m;
	const int n = s->nslot, first = m->stmt[sid].first_index;
	for (int k = 0; k < n; k++) {
		if (!s->slot[k].ragged) continue;
		int fn = s->slot[k].ragged_node;
		int lo = sema_build_expr(s, N(s, fn)->a), hi = sema_build_expr(s, N(s, fn)->b);
		if (!lo || !hi) return -1;
		if (is_float(ET(s, lo)) || is_float(ET(s, hi)) || ET(s, lo) == ET_BOOL || ET(s, hi) == ET_BOOL) {
			diag_error(s->d, N(s, fn)->off, "type mismatch: the bounds of a 'for' range must be integers");
			return -1;
		}
		m->index[first + k].lo = lo, m->index[first + k].hi = hi;
		/* the loops over data-given ranges open after the dense ones: their
		   bounds can see only those (`for s in 0 .. s` has no value) */
		for (int q = 0; q < n; q++)
			if (s->slot[q].ragged && (ir_expr_uses_index(m, lo, first + q) || ir_expr_uses_index(m, hi, first + q))) {
				diag_error(s->d, N(s, fn)->off, "the range of '%.*s' is bounded by '%.*s', which is not known before the loop; "
				           "its bounds may use only the statement's other indices", (int)sl_len(s, k), sl_text(s, k),
				           (int)sl_len(s, q), sl_text(s, q));
				return -1;
			}
	}
	return 0;
}

/* Pass 2, the target's subscripts: 0, or -1 after saying what is wrong */
static int lhs_subscripts(Sema *s, const Node *x, int lhs, int sid, int target)
{
	Module *m = s->m;
	for (int a = N(s, lhs)->a; a; a = N(s, a)->next) {
		Stmt *st = &m->stmt[sid];
		if (st->nlhs == MAX_RANK) {
			diag_error(s->d, N(s, a)->off, "too many subscripts (at most %d)", MAX_RANK);
			return -1;
		}
		int e = sema_build_expr(s, a);
		if (!e) return -1;
		if (is_float(ET(s, e)) || ET(s, e) == ET_BOOL) {
			diag_error(s->d, N(s, a)->off, "type mismatch: a subscript must be an integer");
			return -1;
		}
		st = &m->stmt[sid];
		st->lhs[st->nlhs++] = e;
	}
	const Stmt *st = &m->stmt[sid];
	if (target >= 0 && !sema_shape_failed(s, target) && st->nlhs != m->tensor[target].rank) {
		diag_error(s->d, x->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, lhs),
		           m->tensor[target].rank, st->nlhs, st->nlhs == 1 ? "ex" : "ices");
		return -1;
	}
	return 0;
}

static void check_stmt_body(Sema *s, int node)
{
	const Node *x = N(s, node);
	Module *m = s->m;
	int is_append = x->kind == AST_APPEND;
	int lhs = is_append ? node : x->a;
	/* The target's own name is a write, not a read: only its subscripts. */
	int bad = sema_check_order(s, x->b) | sema_check_order(s, x->d) | (is_append ? 0 : sema_check_order(s, x->e));
	for (int a = is_append ? 0 : N(s, lhs)->a; a; a = N(s, a)->next) bad |= sema_check_order(s, a);
	if (!is_append && x->c) bad |= sema_check_order(s, N(s, x->c)->a) | sema_check_order(s, N(s, x->c)->b);
	if (bad) return;

	RedOp red = stmt_red(x);
	int target = sema_tensor_find(s, lhs);
	s->cur_target = target, s->cur_red = red, s->cur_lhs = is_append ? 0 : lhs;
	int lhs_bad = target_refused(s, x, lhs, target, red);
	int p1_bad = stmt_indices(s, x, lhs, target, red, lhs_bad);
	if (p1_bad < 0) return;
	int nfree = order_slots(s, lhs, is_append);
	int sid = enter_stmt(s, x, target, red, nfree);
	if (index_errors(s, x, red, nfree) || ragged_bounds(s, sid)) return;
	/* Pass 2: the target's subscripts, the value, the mask. */
	if (!is_append && lhs_subscripts(s, x, lhs, sid, target)) return;
	int rhs = sema_build_expr(s, x->b);
	int mask = x->d ? sema_build_expr(s, x->d) : 0;
	if (!rhs || (x->d && !mask)) return;
	if (mask && ET(s, mask) != ET_BOOL) {
		diag_error(s->d, s->m->expr[mask].off, "type mismatch: a 'where' condition must be a comparison");
		return;
	}
	if (ET(s, rhs) == ET_BOOL) {
		diag_error(s->d, s->m->expr[rhs].off, "type mismatch: a boolean cannot be stored (use select(c, 1, 0))");
		return;
	}
	if (lhs_bad || p1_bad) return;
	Stmt *st = &m->stmt[sid];
	st->rhs = rhs, st->mask = mask;
	if (red == RED_KMIN) {
		long k = sema_const_int(s, x->e);
		if (k < 1) {
			diag_error(s->d, N(s, x->e)->off, "kmin's k must be a positive integer constant");
			return;
		}
		st->kmin_k = (int)k;
	}
	sema_stmt_target(s, node, sid, target);
}
