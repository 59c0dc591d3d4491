/* The checker's expressions: pass 1 collects a statement's indices and
 * their ranges, pass 2 builds typed IR expressions; reads of names a later
 * stage defines, and expressions nested too deeply, are refused first. */
#include "front/sema_impl.h"

/* Pass 1: find the indices of a statement and the ranges the tensors they
 * subscript give them. */

/* After an error at X(...): a tensor named like a built-in function hides
   it (sema_declare_tensor), so exp(x(i)) may have meant the function */
static void note_hidden_builtin(Sema *s, int node, int t)
{
	if (sema_builtin_find(s, node))
		diag_note(s->d, s->m->tensor[t].off, "the tensor '%.*s' declared here hides the built-in function of that name", NAMEF(s, node));
}

/* X(i) where X has another rank */
static void rank_mismatch(Sema *s, int node, int t, int nargs)
{
	diag_error(s->d, N(s, node)->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, node),
	           s->m->tensor[t].rank, nargs, nargs == 1 ? "ex" : "ices");
	note_hidden_builtin(s, node, t);
}
void sema_collect_indices(Sema *s, int e)
{
	if (!e) return;
	const Node *x = N(s, e);
	switch (x->kind) {
	case AST_REF: {
		if (!x->flag) {
			int t = sema_tensor_find(s, e);
			if (t >= 0 && s->m->tensor[t].rank && !s->rank_error) {
				diag_error(s->d, x->off, "'%.*s' has rank %d; index it, as in %.*s(...)", NAMEF(s, e),
				           s->m->tensor[t].rank, NAMEF(s, e));
				s->rank_error = 1;
				return;
			}
			if (sema_is_index_name(s, e)) {
				int k = sema_slot_get(s, e);
				(void)k;
			}
			return;
		}
		int t = sema_tensor_find(s, e);
		int pos = 0, nargs = 0;
		int unknown = (t < 0 && ((!sema_builtin_find(s, e) && elem_lookup(TXT(s, e), x->len) < 0) || sema_is_failed(s, e))) ||
		              sema_shape_failed(s, t);
		for (int a = x->a; a; a = N(s, a)->next) nargs++;
		if (t >= 0 && !unknown && nargs != s->m->tensor[t].rank && !s->rank_error) {
			rank_mismatch(s, e, t, nargs);
			s->rank_error = 1;
			return;
		}
		for (int a = x->a; a; a = N(s, a)->next, pos++) {
			if (sema_is_index_name(s, a)) {
				int k = sema_slot_get(s, a);
				if (k < 0) continue;
				if (!s->no_ranges) s->slot[k].in_access = 1;
				if (unknown) s->slot[k].in_unknown = 1;
				/* a 'for' bound is weak evidence: row_ptr(r) must not
				 * give r the size of row_ptr when y(r) says otherwise */
				if (s->no_ranges) s->slot[k].in_bound = 1;
				if (t >= 0 && !unknown && pos < s->m->tensor[t].rank && (!s->no_ranges || !s->slot[k].has_range))
					sema_give_range(s, a, k, s->m->tensor[t].dim[pos]);
			} else {
				sema_collect_indices(s, a);
				if (t >= 0 && !unknown && pos < s->m->tensor[t].rank && !s->no_ranges && s->naff < (int)(sizeof s->aff / sizeof s->aff[0])) {
					struct Aff f = {.slot = -1, .slot2 = -1, .ssym = -1};
					if (sema_affine_subscript(s, a, &f) || sema_fixed_subscript(s, a)) {
						f.dim = s->m->tensor[t].dim[pos], f.tensor = t, f.pos = pos, f.node = a;
						s->aff[s->naff++] = f;
					}
				}
			}
		}
		return;
	}
	case AST_UNARY: sema_collect_indices(s, x->a); return;
	case AST_BINARY: sema_collect_indices(s, x->a), sema_collect_indices(s, x->b); return;
	default: return;
	}
}


static ElemType arith_type(Sema *s, ElemType a, ElemType b)
{
	if (is_float(a) || is_float(b)) return s->compute;
	if (a == ET_I64 || b == ET_I64) return ET_I64;
	return ET_I32;
}

static int mk(Sema *s, IrOp op, ElemType t, unsigned off, int a, int b, int c)
{
	int e = ir_add_expr(s->m, op, t, off);
	s->m->expr[e].a = a, s->m->expr[e].b = b, s->m->expr[e].c = c;
	return e;
}


/* A read of an in-place tensor's old value (before its first write). It is
 * correct in every schedule only as the updating statement's own '=' at
 * its own point, p(i) = f(p(i), ...): the thread that reads an element is
 * the one that overwrites it, and nothing computed from the old value can
 * be recomputed after the write. Anything else is refused. */
static int old_value_read(Sema *s, int t, int node)
{
	const Node *x = N(s, node);
	int ok = t == s->cur_target && s->cur_red == RED_NONE;
	int a = x->a, b = s->cur_lhs ? N(s, s->cur_lhs)->a : 0;
	for (; ok && a && b; a = N(s, a)->next, b = N(s, b)->next)
		ok = sema_is_index_name(s, b) && N(s, a)->kind == AST_REF && !N(s, a)->flag && name_is(s, a, N(s, b)->off, N(s, b)->len);
	if (ok && !a && !b) return 1;
	if (t == s->cur_target) {
		char at[128] = "";
		int n = 0;
		for (b = s->cur_lhs ? N(s, s->cur_lhs)->a : 0; b && n < 100; b = N(s, b)->next)
			n += snprintf(at + n, sizeof at - (size_t)n, "%s%.*s", n ? ", " : "(", NAMEF(s, b));
		if (n) snprintf(at + n, sizeof at - (size_t)n, ")");
		diag_error(s->d, x->off, "the in-place update of '%.*s' may read its old value only with '=', at the point it writes: %.*s%s",
		           NAMEF(s, node), NAMEF(s, node), at);
	} else {
		diag_error(s->d, x->off, "'%.*s' is updated in place later: only the statement that updates it may read its old value",
		           NAMEF(s, node));
	}
	return 0;
}

static int need_number(Sema *s, int e, const char *what)
{
	if (ET(s, e) == ET_BOOL) {
		diag_error(s->d, s->m->expr[e].off, "type mismatch: %s needs a number, not a boolean (use select(c, 1, 0))", what);
		return 0;
	}
	return 1;
}

/* A bare name: a constant, a rank-0 tensor, a size or an index */
static int build_name(Sema *s, int node, int t)
{
	const Node *x = N(s, node);
	const Const *c = sema_const_find(s, node);
	if (c) {
		int e = mk(s, IR_CONST, c->is_int ? ET_I32 : s->compute, x->off, 0, 0, 0);
		s->m->expr[e].value = c->value;
		return e;
	}
	if (t >= 0) {
		Tensor *tt = &s->m->tensor[t];
		if (tt->rank != 0) {
			diag_error(s->d, x->off, "'%.*s' has rank %d; index it, as in %.*s(...)", NAMEF(s, node), tt->rank, NAMEF(s, node));
			return 0;
		}
		if (tt->inplace && tt->def_stage < 0) {
			if (!old_value_read(s, t, node)) return 0;
		} else if (tt->kind != TK_INPUT && tt->def_stage < 0) {
			diag_error(s->d, x->off, "'%.*s' is read before any stage writes it", NAMEF(s, node));
			return 0;
		}
		int e = mk(s, IR_SCALAR, tt->type, x->off, 0, 0, 0);
		s->m->expr[e].tensor = t;
		return e;
	}
	if (sema_is_failed(s, node)) return 0;
	int sym = sema_sym_find(s, node);
	if (sym >= 0) { /* a size, bound at launch: an i64 value like an index */
		int e = mk(s, IR_SIZE, ET_I64, x->off, 0, 0, 0);
		s->m->expr[e].sym = sym, s->m->expr[e].fusion = s->fusion;
		return e;
	}
	int k = sema_slot_find(s, x->off, x->len);
	if (k < 0) {
		for (int i = 0; i < s->nundef; i++)
			if (!s->undef[i].done && s->undef[i].len == x->len && !memcmp(s->ast->text + s->undef[i].off, TXT(s, node), x->len))
				sema_undefined_name(s, x->off, x->len), s->undef[i].done = 1;
		return 0;
	}
	Slot *sl = &s->slot[k];
	if (!sl->has_range && !sl->ragged) {
		sema_undefined_name(s, x->off, x->len);
		sl->has_range = 1, sl->range = (Dim){.sym = -1, .value = 1}; /* report once */
		return 0;
	}
	int e = mk(s, IR_INDEX, ET_I64, x->off, 0, 0, 0);
	s->m->expr[e].index = s->first_index + k;
	return e;
}

/* A call: a cast or a built-in function */
static int build_call(Sema *s, int node)
{
	const Node *x = N(s, node);
	const struct Builtin *b = sema_builtin_find(s, node);
	int ty = elem_lookup(TXT(s, node), x->len);
	int nargs = 0, args[3] = {0, 0, 0};
	for (int a = x->a; a; a = N(s, a)->next, nargs++)
		if (nargs < 3) args[nargs] = sema_build_expr(s, a);
	if (ty >= 0 && elem_is_fp8(ty)) {
		diag_error(s->d, x->off, "there is no '%s' cast: %s is the type of inputs that tensor cores read and of outputs (stored "
		           "saturated: declare the output %s)", elem_info[ty].name, elem_info[ty].name, elem_info[ty].name);
		return 0;
	}
	if (ty == ET_F16 || ty == ET_BF16) {
		/* it would round nothing: arithmetic stays in the compute type */
		diag_error(s->d, x->off, "there is no '%.*s' cast: half precision comes from a stage's precision "
		           "([precision = %.*s]) or from storing into a tensor of type %.*s", NAMEF(s, node), NAMEF(s, node), NAMEF(s, node));
		return 0;
	}
	if (ty >= 0) {
		if (nargs != 1) {
			diag_error(s->d, x->off, "cast '%.*s' takes 1 argument, not %d", NAMEF(s, node), nargs);
			return 0;
		}
		if (!args[0]) return 0;
		/* a comparison cast to a number is 1 or 0, as in C (i32(x > 0), a mask) */
		if (ET(s, args[0]) != ET_BOOL && !need_number(s, args[0], "a cast")) return 0;
		ElemType to = is_float((ElemType)ty) ? (ty == ET_F64 ? ET_F64 : s->compute) : (ElemType)ty;
		return mk(s, IR_CAST, to, x->off, args[0], 0, 0);
	}
	if (!b && sema_sym_find(s, node) >= 0) {
		diag_error(s->d, x->off, "'%.*s' is a size, not a tensor: read it as a value, without parentheses", NAMEF(s, node));
		return 0;
	}
	if (!b && sema_is_failed(s, node)) return 0; /* its definition's error is reported */
	if (!b && sema_reads_own_definition(s, x->off, x->len)) return 0;
	if (!b) {
		char buf[96];
		diag_error(s->d, x->off, "unknown function or tensor '%.*s'%s", NAMEF(s, node),
		           sema_did_you_mean(s, x->off, x->len, 1, buf, sizeof buf));
		return 0;
	}
	if (nargs != b->arity) {
		diag_error(s->d, x->off, "'%s' takes %d argument%s, not %d", ir_op_name[b->op], b->arity, b->arity == 1 ? "" : "s", nargs);
		return 0;
	}
	for (int i = 0; i < nargs; i++)
		if (!args[i]) return 0;
	if (b->op == IR_SELECT) {
		if (ET(s, args[0]) != ET_BOOL) {
			diag_error(s->d, s->m->expr[args[0]].off, "type mismatch: select's condition must be a comparison");
			return 0;
		}
		if (!need_number(s, args[1], "select") || !need_number(s, args[2], "select")) return 0;
		return mk(s, IR_SELECT, arith_type(s, ET(s, args[1]), ET(s, args[2])), x->off, args[0], args[1], args[2]);
	}
	for (int i = 0; i < nargs; i++)
		if (!need_number(s, args[i], ir_op_name[b->op])) return 0;
	ElemType rt = s->compute;
	if ((b->op == IR_MINF || b->op == IR_MAXF) && !is_float(ET(s, args[0])) && !is_float(ET(s, args[1])))
		rt = arith_type(s, ET(s, args[0]), ET(s, args[1]));
	if (b->op == IR_ABS && !is_float(ET(s, args[0]))) rt = ET(s, args[0]);
	return mk(s, b->op, rt, x->off, args[0], args[1], 0);
}

/* A tensor's element at its subscripts */
static int build_load(Sema *s, int node, int t)
{
	const Node *x = N(s, node);
	Tensor *tt = &s->m->tensor[t];
	if (tt->inplace && tt->def_stage < 0) {
		if (!old_value_read(s, t, node)) return 0;
	} else if (tt->kind != TK_INPUT && tt->def_stage < 0 && !tt->zero_init) {
		diag_error(s->d, x->off, "'%.*s' is read before any stage writes it", NAMEF(s, node));
		return 0;
	}
	int nargs = 0, args[MAX_RANK] = {0}, ok = 1;
	for (int a = x->a; a; a = N(s, a)->next, nargs++) {
		int e = sema_build_expr(s, a);
		if (!e) { ok = 0; continue; }
		if (is_float(ET(s, e)) || ET(s, e) == ET_BOOL) {
			diag_error(s->d, N(s, a)->off, "type mismatch: a subscript must be an integer, not %s",
			           ET(s, e) == ET_BOOL ? "a boolean" : "a float");
			if (ok) note_hidden_builtin(s, node, t);
			ok = 0;
		}
		if (nargs < MAX_RANK) args[nargs] = e;
	}
	if (sema_shape_failed(s, t)) return 0; /* its declaration's error is reported */
	if (nargs != tt->rank) {
		rank_mismatch(s, node, t, nargs);
		return 0;
	}
	if (!ok) return 0;
	int e = mk(s, IR_LOAD, tt->type, x->off, 0, 0, 0);
	s->m->expr[e].tensor = t;
	s->m->expr[e].nargs = nargs;
	memcpy(s->m->expr[e].args, args, sizeof args);
	return e;
}

static int build_ref(Sema *s, int node)
{
	int t = sema_tensor_find(s, node);
	if (!N(s, node)->flag) return build_name(s, node, t);
	if (t < 0) return build_call(s, node);
	return build_load(s, node, t);
}

/* Pass 2: expressions, with types. Returns 0 after reporting an error. */
int sema_build_expr(Sema *s, int node)
{
	const Node *x = N(s, node);
	switch (x->kind) {
	case AST_NUM: {
		if (!isfinite(x->num)) {
			diag_error(s->d, x->off, "number out of range: '%.*s' is beyond the largest double", (int)x->len, s->ast->text + x->off);
			return 0;
		}
		int isint = x->flag && x->num <= 9e15;
		int e = mk(s, IR_CONST, isint ? (x->num > 2147483647.0 ? ET_I64 : ET_I32) : s->compute, x->off, 0, 0, 0);
		s->m->expr[e].value = x->num;
		return e;
	}
	case AST_REF: return build_ref(s, node);
	case AST_UNARY: {
		int a = sema_build_expr(s, x->a);
		if (!a) return 0;
		if (x->op == OP_NOT) {
			if (ET(s, a) != ET_BOOL) {
				diag_error(s->d, x->off, "type mismatch: '!' needs a boolean operand");
				return 0;
			}
			return mk(s, IR_NOT, ET_BOOL, x->off, a, 0, 0);
		}
		if (!need_number(s, a, "'-'")) return 0;
		return mk(s, IR_NEG, ET(s, a), x->off, a, 0, 0);
	}
	case AST_BINARY: {
		int a = sema_build_expr(s, x->a), b = sema_build_expr(s, x->b);
		if (!a || !b) return 0;
		static const IrOp map[OP_N] = {
			[OP_ADD] = IR_ADD, [OP_SUB] = IR_SUB, [OP_MUL] = IR_MUL, [OP_DIV] = IR_DIV,
			[OP_MOD] = IR_MOD, [OP_LT] = IR_LT, [OP_LE] = IR_LE, [OP_GT] = IR_GT,
			[OP_GE] = IR_GE, [OP_EQ] = IR_EQ, [OP_NE] = IR_NE, [OP_AND] = IR_AND, [OP_OR] = IR_OR,
		};
		IrOp op = map[x->op];
		if (op == IR_AND || op == IR_OR) {
			if (ET(s, a) != ET_BOOL || ET(s, b) != ET_BOOL) {
				diag_error(s->d, x->off, "type mismatch: '%s' needs boolean operands", ast_expr_op_spelling[x->op]);
				return 0;
			}
			return mk(s, op, ET_BOOL, x->off, a, b, 0);
		}
		char what[8];
		snprintf(what, sizeof what, "'%s'", ast_expr_op_spelling[x->op]);
		if (!need_number(s, a, what) || !need_number(s, b, what)) return 0;
		if (op == IR_MOD && (is_float(ET(s, a)) || is_float(ET(s, b)))) {
			diag_error(s->d, x->off, "type mismatch: '%%' needs integer operands");
			return 0;
		}
		ElemType t = op >= IR_LT && op <= IR_NE ? ET_BOOL : arith_type(s, ET(s, a), ET(s, b));
		return mk(s, op, t, x->off, a, b, 0);
	}
	default:
		die("checker: AST node kind %d is not an expression", x->kind);
	}
}

/* Constant integer value of an AST expression (kmin's k), or -1. */
long sema_const_int(Sema *s, int node)
{
	const Node *x = N(s, node);
	if (x->kind == AST_NUM && x->flag && x->num >= 1 && x->num < 1e6) return (long)x->num;
	if (x->kind == AST_REF && !x->flag) {
		const Const *c = sema_const_find(s, node);
		if (c && c->is_int && c->value >= 1 && c->value < 1e6) return (long)c->value;
	}
	return -1;
}

/* The names that the statements of a fusion's stages define, sorted by
 * name and then stage, for defined_later. */
static int def_cmp(const void *a, const void *b)
{
	const StageDef *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
	if (c) return c;
	if (x->len != y->len) return x->len < y->len ? -1 : 1;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

void sema_stage_defs(Sema *s, int items)
{
	int n = 0, ord = 0;
	for (int it = items; it; it = N(s, it)->next)
		if (N(s, it)->kind == AST_STAGE)
			for (int st = N(s, it)->b; st; st = N(s, st)->next) n++;
	free(s->defs);
	s->defs = xcalloc(n ? (size_t)n : 1, sizeof *s->defs);
	s->ndefs = 0;
	for (int it = items; it; it = N(s, it)->next) {
		if (N(s, it)->kind != AST_STAGE) continue;
		for (int st = N(s, it)->b; st; st = N(s, st)->next) {
			int lhs = N(s, st)->kind == AST_STMT ? N(s, st)->a : st;
			s->defs[s->ndefs++] = (StageDef){TXT(s, lhs), N(s, lhs)->len, ord, st};
		}
		ord++;
	}
	qsort(s->defs, (size_t)s->ndefs, sizeof *s->defs, def_cmp);
}

/* Is this name written by a statement of a later stage of this fusion?
 * The first such statement, found by binary search. */
static int defined_later(Sema *s, int name_node)
{
	StageDef key = {TXT(s, name_node), N(s, name_node)->len, s->stage_ord, 0};
	int lo = 0, hi = s->ndefs; /* the first past (name, current stage) */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (def_cmp(&s->defs[mid], &key) <= 0) lo = mid + 1;
		else hi = mid;
	}
	if (lo < s->ndefs && s->defs[lo].len == key.len && !memcmp(s->defs[lo].p, key.p, key.len)) return s->defs[lo].stmt;
	return 0;
}

/* Expressions deeper than this are refused before any recursive walk, so
 * no later pass can exhaust the C stack (a+a+...+a nests without bound). */
#define MAX_EXPR_DEPTH 1000

/* Reports reads of names that a later stage defines, with a note, and
 * expressions nested too deeply. Every expression passes here first. */
static int check_order_at(Sema *s, int e, int depth)
{
	if (!e) return 0;
	const Node *x = N(s, e);
	int bad = 0;
	if (depth > MAX_EXPR_DEPTH) {
		diag_error(s->d, x->off, "expression nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
		return -1;
	}
	if (x->kind == AST_REF) {
		if (sema_tensor_find(s, e) < 0 && !sema_builtin_find(s, e) && (x->flag || !sema_const_find(s, e))) {
			int later = defined_later(s, e);
			if (later) {
				diag_error(s->d, x->off, "'%.*s' is used before it is defined", NAMEF(s, e));
				diag_note(s->d, N(s, later)->off, "'%.*s' is defined here, in a later stage", NAMEF(s, e));
				bad = 1;
			}
		}
		for (int a = x->a; a && bad >= 0; a = N(s, a)->next) bad |= check_order_at(s, a, depth + 1);
	} else if (x->kind == AST_UNARY) {
		bad |= check_order_at(s, x->a, depth + 1);
	} else if (x->kind == AST_BINARY) {
		bad |= check_order_at(s, x->a, depth + 1);
		if (bad >= 0) bad |= check_order_at(s, x->b, depth + 1);
	}
	return bad;
}

int sema_check_order(Sema *s, int e) { return check_order_at(s, e, 0); }

int sema_loads_index(const Module *m, int e, int ix)
{
	const Expr *x = &m->expr[e];
	if (x->op != IR_LOAD) return 0;
	for (int i = 0; i < x->nargs; i++)
		if (m->expr[x->args[i]].op == IR_INDEX && m->expr[x->args[i]].index == ix) return 1;
	return 0;
}
