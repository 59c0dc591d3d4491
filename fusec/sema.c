/* The checker's driver: statements (their indices, reduction, pattern and
 * target), stages and their attributes, fusions. Its other pieces are
 * listed in sema_impl.h. */
#include "sema_impl.h"

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
		if (x->op == IR_MUL && loads_index(m, x->a, r) && loads_index(m, x->b, r)) {
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
	int id = ir_add_tensor(s->m);
	count_tensor(s, lhs);
	Tensor *x = &s->m->tensor[id];
	x->name = dup_name(s, lhs);
	x->kind = TK_TEMP;
	x->type = t;
	x->off = N(s, lhs)->off;
	x->rank = st->nlhs;
	for (int i = 0; i < st->nlhs; i++) x->dim[i] = s->m->index[s->m->expr[st->lhs[i]].index].range;
	st->out = id;
}

/* Outputs whose defining statement failed: a second definition is not
 * also "already written". Tensor ids are small; the array grows. */
static void def_failed_mark(Sema *s, int t)
{
	if (t >= s->ndef_failed) {
		int *p = xrealloc(s->def_failed, (unsigned long)(t + 1), sizeof *p);
		for (int i = s->ndef_failed; i <= t; i++) p[i] = 0;
		s->def_failed = p, s->ndef_failed = t + 1;
	}
	s->def_failed[t] = 1;
}
static int def_failed_get(Sema *s, int t) { return t < s->ndef_failed && s->def_failed[t]; }

/* What a '+=' that has nothing to add into probably meant: with bare
 * indices on the left, a sum reduction; through a gather, a zeroed temp. */
static void accum_hint(Sema *s, int lhs, int output)
{
	int bare = 1;
	for (int a = N(s, lhs)->a; a; a = N(s, a)->next) bare &= is_index_name(s, a);
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
static void check_stmt(Sema *s, int node)
{
	const Node *x = N(s, node);
	s->nundef = 0;
	int errors = s->d->errors;
	check_stmt_body(s, node);
	for (int i = 0; i < s->nundef; i++) /* not met by pass 2: reported all the same */
		if (!s->undef[i].done) undefined_name(s, s->undef[i].off, s->undef[i].len);
	s->cur_lhs = 0; /* names read outside a statement (constants) define nothing */
	int t = tensor_find(s, x->kind == AST_APPEND ? node : x->a);
	if (t < 0) mark_failed(s, x->kind == AST_APPEND ? node : x->a);
	if (t >= 0 && s->m->tensor[t].kind != TK_INPUT && s->m->tensor[t].def_stage < 0) {
		s->m->tensor[t].def_stage = s->stage;
		if (s->d->errors != errors) def_failed_mark(s, t);
	}
	if (x->kind == AST_APPEND && (t = tensor_find(s, x->a)) >= 0 && s->m->tensor[t].kind != TK_INPUT &&
	    s->m->tensor[t].def_stage < 0)
		s->m->tensor[t].def_stage = s->stage;
}

static void check_stmt_body(Sema *s, int node)
{
	const Node *x = N(s, node);
	Module *m = s->m;
	int is_append = x->kind == AST_APPEND;
	int lhs = is_append ? node : x->a;
	/* The target's own name is a write, not a read: only its subscripts. */
	int bad = check_order(s, x->b) | check_order(s, x->d) | (is_append ? 0 : check_order(s, x->e));
	for (int a = is_append ? 0 : N(s, lhs)->a; a; a = N(s, a)->next) bad |= check_order(s, a);
	if (!is_append && x->c) bad |= check_order(s, N(s, x->c)->a) | check_order(s, N(s, x->c)->b);
	if (bad) return;

	RedOp red = RED_NONE;
	if (is_append) red = RED_APPEND;
	else switch (x->op) {
	case AOP_SET: red = RED_NONE; break;
	case AOP_ACCUM: red = RED_ACCUM; break;
	case AOP_SUM: red = RED_SUM; break;
	case AOP_MAX: red = RED_MAX; break;
	case AOP_MIN: red = RED_MIN; break;
	case AOP_KMIN: red = RED_KMIN; break;
	}
	/* An error about the target leaves the rest of the statement to check
	   (lhs_bad): its value and mask may hold independent errors. */
	int target = tensor_find(s, lhs), lhs_bad = 0;
	s->cur_target = target, s->cur_red = red, s->cur_lhs = is_append ? 0 : lhs;
	if (target >= 0 && m->tensor[target].kind == TK_INPUT) {
		diag_error(s->d, x->off, "cannot assign to input '%.*s'", NAMEF(s, lhs));
		lhs_bad = 1;
	} else if (target >= 0 && red != RED_ACCUM && m->tensor[target].def_stage >= 0) {
		if (!def_failed_get(s, target)) /* else its first definition's error says it all */
			diag_error(s->d, x->off, "'%.*s' is already written by stage '%s' (use += to accumulate)",
		           NAMEF(s, lhs), m->stage[m->tensor[target].def_stage].name);
		lhs_bad = 1;
	} else if (target >= 0 && red == RED_ACCUM && m->tensor[target].kind == TK_OUTPUT && m->tensor[target].def_stage < 0 &&
	           !m->tensor[target].inplace) {
		diag_error(s->d, x->off, "'+=' adds into output '%.*s', but no earlier statement defines it", NAMEF(s, lhs));
		accum_hint(s, lhs, 1);
		lhs_bad = 1;
	} else if (target < 0 && (red == RED_ACCUM || is_append)) {
		diag_error(s->d, x->off, "'%.*s' must be declared (as an output or with 'temp') before %s",
		           NAMEF(s, lhs), is_append ? "a compaction appends to it" : "'+=' accumulates into it");
		if (!is_append) accum_hint(s, lhs, 0);
		lhs_bad = 1;
	} else if (target < 0 && (builtin_find(s, lhs) || const_find(s, lhs) || sym_find(s, lhs) >= 0)) {
		diag_error(s->d, x->off, "cannot assign to %s '%.*s'",
		           builtin_find(s, lhs) ? "built-in function" : const_find(s, lhs) ? "constant" : "size", NAMEF(s, lhs));
		lhs_bad = 1;
	}

	/* Pass 1: indices and ranges. */
	s->nslot = 0;
	s->nundef = 0;
	s->naff = 0;
	s->rank_error = 0;
	if (!is_append && x->c) {
		int k = slot_get(s, x->c);
		if (k >= 0) s->slot[k].ragged = 1, s->slot[k].ragged_node = x->c;
	}
	if (!is_append) {
		int pos = 0;
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next, pos++) {
			if (is_index_name(s, a)) {
				int k = slot_get(s, a);
				if (k < 0) continue;
				if (s->slot[k].on_lhs) {
					diag_error(s->d, N(s, a)->off, "index '%.*s' appears twice on the left-hand side", NAMEF(s, a));
					return;
				}
				s->slot[k].on_lhs = 1;
				if (target >= 0 && pos < m->tensor[target].rank)
					give_range(s, a, k, m->tensor[target].dim[pos]);
			} else if (red != RED_ACCUM) {
				diag_error(s->d, N(s, a)->off, "a left-hand subscript must be an index name (only '+=' may scatter through an expression)");
				return;
			} else {
				collect_indices(s, a);
			}
		}
	}
	collect_indices(s, x->b);
	collect_indices(s, x->d);
	if (!is_append && x->c) {
		s->no_ranges = 1;
		collect_indices(s, N(s, x->c)->a), collect_indices(s, N(s, x->c)->b);
		s->no_ranges = 0;
	}
	if (!is_append && x->e) collect_indices(s, x->e);
	if (s->rank_error) return;
	/* Range errors do not end the statement (p1_bad): pass 2 still reports
	   the independent errors of its value. Names that pass 2 reports, or
	   that are already reported, are dropped rather than entered. */
	int p1_bad = affine_ranges(s, x->d != 0, target >= 0);
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
			return;
		}
		if (s->slot[k].in_bound) {
			diag_error(s->d, N(s, x->c)->off, "the bounds of 'for %.*s' cannot use '%.*s' itself", NAMEF(s, x->c), NAMEF(s, x->c));
			return;
		}
	}

	/* Enter the indices: those on the left first, in subscript order. */
	int order[MAX_IDX], n = 0;
	if (!is_append)
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next)
			if (is_index_name(s, a)) order[n++] = slot_find(s, N(s, a)->off, N(s, a)->len);
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
	{
		Dim r[MAX_IDX];
		int nr = 0;
		for (int k = 0; k < n; k++)
			if (!s->slot[k].ragged) r[nr++] = s->slot[k].range;
		double pts = literal_product(r, nr);
		if (pts > LITERAL_LIMIT) {
			diag_error(s->d, x->off, "this statement ranges over %.3g points: sizes written as numbers must keep it "
			           "within 2^62 (64-bit index arithmetic wraps beyond)", pts);
			return;
		}
	}
	for (int k = nfree; red == RED_NONE && k < n; k++) {
		const Slot *sl = &s->slot[k];
		if (sl->reported) continue;
		Guess g = {0}; /* a typo of an index on the left? */
		for (int j = 0; j < nfree; j++) guess_name(&g, s->ast->text + sl->off, sl->len, s->ast->text + s->slot[j].off, s->slot[j].len);
		if (g.best && !g.ties)
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; did you mean '%.*s'?",
			           (int)sl->len, s->ast->text + sl->off, (int)g.len, g.best);
		else
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; reduce over it with +=!, max=!, min=! or kmin[k]=!",
			           (int)sl->len, s->ast->text + sl->off);
		return;
	}
	for (int k = 0; k < n; k++) {
		if (!s->slot[k].ragged) continue;
		int fn = s->slot[k].ragged_node;
		Index *ix = &m->index[st->first_index + k];
		int lo = build_expr(s, N(s, fn)->a), hi = build_expr(s, N(s, fn)->b);
		if (!lo || !hi) return;
		if (is_float(ET(s, lo)) || is_float(ET(s, hi)) || ET(s, lo) == ET_BOOL || ET(s, hi) == ET_BOOL) {
			diag_error(s->d, N(s, fn)->off, "type mismatch: the bounds of a 'for' range must be integers");
			return;
		}
		ix->lo = lo, ix->hi = hi;
		/* the loops over data-given ranges open after the dense ones: their
		   bounds can see only those (`for s in 0 .. s` has no value) */
		for (int q = 0; q < n; q++)
			if (s->slot[q].ragged && (expr_uses_index(m, lo, st->first_index + q) || expr_uses_index(m, hi, st->first_index + q))) {
				diag_error(s->d, N(s, fn)->off, "the range of '%.*s' is bounded by '%.*s', which is not known before the loop; "
				           "its bounds may use only the statement's other indices", (int)sl_len(s, k), sl_text(s, k),
				           (int)sl_len(s, q), sl_text(s, q));
				return;
			}
	}
	/* Pass 2: the target's subscripts, the value, the mask. */
	if (!is_append) {
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next) {
			if (st->nlhs == MAX_RANK) {
				diag_error(s->d, N(s, a)->off, "too many subscripts (at most %d)", MAX_RANK);
				return;
			}
			int e = build_expr(s, a);
			if (!e) return;
			if (is_float(ET(s, e)) || ET(s, e) == ET_BOOL) {
				diag_error(s->d, N(s, a)->off, "type mismatch: a subscript must be an integer");
				return;
			}
			st->lhs[st->nlhs++] = e;
		}
		if (target >= 0 && st->nlhs != m->tensor[target].rank) {
			diag_error(s->d, x->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, lhs),
			           m->tensor[target].rank, st->nlhs, st->nlhs == 1 ? "ex" : "ices");
			return;
		}
	}
	int rhs = build_expr(s, x->b);
	int mask = x->d ? build_expr(s, x->d) : 0;
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
	st = &m->stmt[sid];
	st->rhs = rhs, st->mask = mask;
	if (red == RED_KMIN) {
		long k = const_int(s, x->e);
		if (k < 1) {
			diag_error(s->d, N(s, x->e)->off, "kmin's k must be a positive integer constant");
			return;
		}
		st->kmin_k = (int)k;
	}
	/* Types. */
	ElemType vt = ET(s, rhs);
	if (is_append) {
		int count = tensor_find(s, x->a);
		Tensor *lt = &m->tensor[target];
		if (lt->rank != 1 || is_float(lt->type)) {
			diag_error(s->d, x->off, "type mismatch: '%.*s' must be a one-dimensional integer list to append to", NAMEF(s, lhs));
			return;
		}
		if (count < 0 || m->tensor[count].rank != 0 || is_float(m->tensor[count].type) || m->tensor[count].kind == TK_INPUT) {
			diag_error(s->d, N(s, x->a)->off, "'%.*s' must be a scalar integer output or temp that receives the list's length", NAMEF(s, x->a));
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

static void check_attrs(Sema *s, int stage_node, Stage *sg)
{
	static const char *const names[] = {
#define X(a, n) n,
		ATTRS(X)
#undef X
	};
	sg->precision = ET_F32;
	for (int a = N(s, stage_node)->a; a; a = N(s, a)->next) {
		int bit = -1;
		for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
			if (ast_name_eq(s->ast, a, names[i])) bit = (int)i;
		if (bit < 0) {
			diag_error(s->d, N(s, a)->off, "unknown attribute '%.*s' (expected reduction, tensor_eligible, precision, scatter, compact or deterministic)", NAMEF(s, a));
			continue;
		}
		if (sg->attrs & (1u << bit)) {
			diag_error(s->d, N(s, a)->off, "attribute '%s' given twice", names[bit]);
			continue;
		}
		sg->attrs |= 1u << bit;
		int v = N(s, a)->a;
		if (bit == ATTR_PRECISION_BIT) {
			int t = v && N(s, v)->kind == AST_IDENT ? elem_lookup(TXT(s, v), N(s, v)->len) : -1;
			if (t < 0 || !elem_info[t].is_float) {
				diag_error(s->d, N(s, v ? v : a)->off, "precision must be one of f64, f32, bf16, f16");
				continue;
			}
			sg->precision = (ElemType)t;
		} else if (v) {
			diag_error(s->d, N(s, v)->off, "attribute '%s' takes no value", names[bit]);
		}
	}
}

static int has_red(const Module *m, const Stage *sg, RedOp lo, RedOp hi)
{
	for (int i = sg->first_stmt; i < sg->first_stmt + sg->nstmt; i++)
		if (m->stmt[i].red >= lo && m->stmt[i].red <= hi) return 1;
	return 0;
}

/* The attributes a stage claims must be true of its statements. */
static void check_stage_claims(Sema *s, Stage *sg)
{
	Module *m = s->m;
	if ((sg->attrs & ATTR(REDUCTION)) && !has_red(m, sg, RED_SUM, RED_KMIN))
		diag_error(s->d, sg->off, "stage '%s' is marked 'reduction' but has no reduction (+=!, max=!, min=!, kmin[k]=!)", sg->name);
	if ((sg->attrs & ATTR(SCATTER)) && !has_red(m, sg, RED_ACCUM, RED_ACCUM))
		diag_error(s->d, sg->off, "stage '%s' is marked 'scatter' but has no '+=' statement", sg->name);
	if ((sg->attrs & ATTR(COMPACT)) && !has_red(m, sg, RED_APPEND, RED_APPEND))
		diag_error(s->d, sg->off, "stage '%s' is marked 'compact' but has no '<-' statement", sg->name);
	int reduces = has_red(m, sg, RED_SUM, RED_KMIN);
	if (reduces && (sg->precision == ET_F16 || sg->precision == ET_BF16) && !(sg->attrs & ATTR(TENSOR_ELIGIBLE)))
		diag_error(s->d, sg->off, "stage '%s' reduces, so it cannot have precision %s: accumulate in f32 or f64",
		           sg->name, elem_info[sg->precision].name);
	if (sg->attrs & ATTR(TENSOR_ELIGIBLE)) {
		const Stmt *c = NULL;
		for (int i = sg->first_stmt; i < sg->first_stmt + sg->nstmt; i++)
			if (m->stmt[i].pattern == PAT_CONTRACT && (m->stmt[i].nfree == 2 || m->stmt[i].nfree == 3)) /* 3: batched */
				c = &m->stmt[i];
		if (!c || sg->nstmt != 1) {
			diag_error(s->d, sg->off, "stage '%s' is marked 'tensor_eligible' but is not one matrix contraction acc(m,n) +=! A(m,k) * B(k,n) "
			           "(or batched, acc(b,m,n) +=! A(b,m,k) * B(b,k,n))", sg->name);
			return;
		}
		ElemType a = m->expr[c->contract_a].type, b = m->expr[c->contract_b].type;
		if (a != b || (a != ET_F16 && a != ET_BF16)) {
			diag_error(s->d, sg->off, "stage '%s' is 'tensor_eligible' but its operands are %s and %s; tensor cores need f16 or bf16 operands of one type",
			           sg->name, elem_info[a].name, elem_info[b].name);
			return;
		}
		if (!(sg->attrs & ATTR(PRECISION))) sg->precision = ET_F32;
		if (sg->precision != ET_F32 && !(sg->precision == ET_F16 && a == ET_F16))
			diag_error(s->d, sg->off, "a tensor-core stage over %s operands cannot have precision %s (use f32%s)",
			           elem_info[a].name, elem_info[sg->precision].name, a == ET_F16 ? " or f16" : "");
	}
}

/* stage := 'stage' IDENT [ '[' attr {',' attr} ']' ] '{' { stmt } '}' */
static void check_stage(Sema *s, int node)
{
	Module *m = s->m;
	Fusion *f = F(s);
	for (int i = f->first_stage; i < f->first_stage + f->nstage; i++)
		if (ast_name_eq(s->ast, node, m->stage[i].name)) {
			diag_error(s->d, N(s, node)->off, "redefinition of stage '%.*s'", NAMEF(s, node));
			break;
		}
	int id = ir_add_stage(m);
	F(s)->nstage++;
	Stage *sg = &m->stage[id];
	sg->name = dup_name(s, node);
	sg->off = N(s, node)->off;
	sg->first_stmt = m->nstmt;
	check_attrs(s, node, sg);
	s->stage = id;
	s->compute = sg->precision == ET_F64 ? ET_F64 : ET_F32;
	s->cur_stage_node = node;
	if (!N(s, node)->b) diag_warning(s->d, N(s, node)->off, "stage '%.*s' is empty", NAMEF(s, node));
	int errors = s->d->errors;
	for (int st = N(s, node)->b; st; st = N(s, st)->next) check_stmt(s, st);
	if (s->d->errors == errors) check_stage_claims(s, &m->stage[id]);
}

/* fusion := 'fusion' IDENT '(' params ')' '->' '(' params ')' '{' items '}' */
static void check_fusion(Sema *s, int node)
{
	Module *m = s->m;
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(s->ast, node, m->fusion[i].name)) {
			diag_error(s->d, N(s, node)->off, "redefinition of fusion '%.*s'", NAMEF(s, node));
			return;
		}
	name_fits(s, node, "fusion", MAX_FUSION_NAME, ", so that its kernels' names (NAME_f0 ...) are within the runtime's 63");
	s->fusion = ir_add_fusion(m);
	Fusion *f = F(s);
	f->name = dup_name(s, node);
	f->off = N(s, node)->off;
	f->first_tensor = m->ntensor;
	f->first_stage = m->nstage;
	s->nconst = s->nglobal;
	s->nfailed = 0;
	s->fusion_items = N(s, node)->c;
	for (int p = N(s, node)->a; p; p = N(s, p)->next) declare_param(s, p, TK_INPUT);
	if (!N(s, node)->b) diag_error(s->d, N(s, node)->off, "fusion '%.*s' has no outputs", NAMEF(s, node));
	for (int p = N(s, node)->b; p; p = N(s, p)->next) declare_param(s, p, TK_OUTPUT);
	for (int it = N(s, node)->c; it; it = N(s, it)->next) {
		switch (N(s, it)->kind) {
		case AST_CONST: declare_const(s, it); break;
		case AST_TEMP: {
			/* a temp's sizes must be the parameters' own: nothing else
			   binds a size at launch */
			int before = F(s)->nsym;
			declare_tensor(s, it, TK_TEMP);
			for (int d = N(s, it)->b; d; d = N(s, d)->next) {
				int k;
				if (N(s, d)->flag || const_find(s, d)) continue;
				for (k = 0; k < before; k++)
					if (ast_name_eq(s->ast, d, F(s)->sym[k])) break;
				if (k == before)
					diag_error(s->d, N(s, d)->off, "size '%.*s' of temp '%.*s' is no parameter's size", NAMEF(s, d), NAMEF(s, it));
			}
			if (tensor_find(s, it) >= 0) m->tensor[tensor_find(s, it)].zero_init = 1;
			break;
		}
		case AST_STAGE: check_stage(s, it); break;
		default: break;
		}
	}
	f = F(s);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		Tensor *t = &m->tensor[i];
		if (t->kind == TK_OUTPUT && t->def_stage < 0)
			diag_error(s->d, t->off, "output '%s' is never written", t->name);
	}
	if (!f->nstage) diag_error(s->d, f->off, "fusion '%s' has no stages", f->name);
	s->fusion = -1;
}

int sema_check(const Ast *ast, int root, Diag *d, Module *m)
{
	Sema s = {.ast = ast, .d = d, .m = m, .fusion = -1};
	int before = d->errors;
	int nfusion = 0;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_CONST) declare_const(&s, it), s.nglobal = s.nconst;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_FUSION) check_fusion(&s, it), nfusion++;
	if (!nfusion && d->errors == before) diag_error(d, 0, "no fusion in this file");
	sema_pipelines(ast, root, d, m);
	free(s.def_failed);
	return d->errors - before;
}
