/* The checker's driver: stages and their attributes, fusions. Its other
 * pieces are listed in sema_impl.h. */
#include "front/sema_impl.h"

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
			/* tf32 is no element type: an f32 stage whose tensor cores may
			   read f32 operands as tf32 (checked in check_stage_claims) */
			if (t < 0 && v && N(s, v)->kind == AST_IDENT && ast_name_eq(s->ast, v, "tf32")) t = ET_F32, sg->tf32 = 1;
			if (t < 0 || !elem_info[t].is_float || elem_is_fp8(t)) {
				diag_error(s->d, N(s, v ? v : a)->off, "precision must be one of f64, f32, tf32, bf16, f16");
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
/* Is load e an intermediate (a temp a stage computes), of f32? */
static int f32_intermediate(const Module *m, int e)
{
	const Expr *x = &m->expr[e];
	return x->op == IR_LOAD && m->tensor[x->tensor].kind == TK_TEMP && m->tensor[x->tensor].type == ET_F32;
}

/* Is load e a plain read of an input, X(i, k) (batched X(b, i, k)): every
   subscript an index, the reduced index k last, the batch index first?
   Then i, else -1. */
static int kmajor_input_load(const Module *m, const Stmt *c, int e)
{
	const Expr *x = &m->expr[e];
	if (x->op != IR_LOAD || m->tensor[x->tensor].kind != TK_INPUT || x->nargs != c->nfree) return -1;
	for (int i = 0; i < x->nargs; i++)
		if (m->expr[x->args[i]].op != IR_INDEX) return -1;
	const int bat = c->nfree == 3;
	if (m->expr[x->args[x->nargs - 1]].index != c->first_index + c->nfree || (bat && m->expr[x->args[0]].index != c->first_index))
		return -1;
	return m->expr[x->args[bat]].index;
}

/* "T" or "T and U": a contraction's operand types, for its errors */
static const char *operand_types(ElemType a, ElemType b, char *buf, size_t n)
{
	if (a == b) return elem_info[a].name;
	snprintf(buf, n, "%s and %s", elem_info[a].name, elem_info[b].name);
	return buf;
}

/* fp8 (f8e4m3, f8e5m2, or one of each) operands: on tensor cores only
   (nothing else reads fp8), so the contraction must be one the tile kernel
   takes, read the way fp8 tensor cores read it: sm_90a's wgmma takes e4m3
   and e5m2 only k-major from shared memory (no transposed fp8 operands), so
   A(m,k) and B(n,k), k contiguous in both (B stored transposed, as
   torch._scaled_mm takes it); f32 accumulation. */
static int check_fp8_contraction(Sema *s, Stage *sg, const Stmt *c)
{
	const Module *m = s->m;
	char both[32];
	const char *tys = operand_types(m->expr[c->contract_a].type, m->expr[c->contract_b].type, both, sizeof both);
	if (c->red != RED_SUM || c->nindex != c->nfree + 1 || c->mask) {
		diag_error(s->d, sg->off, "stage '%s' multiplies %s operands, so it must be one plain sum over k "
		           "(acc(m,n) +=! A(m,k) * B(n,k), no 'where'): fp8 is read by tensor cores alone", sg->name, tys);
		return 0;
	}
	int rows[2];
	for (int i = 0; i < 2; i++) {
		const int e = i ? c->contract_b : c->contract_a;
		if ((rows[i] = kmajor_input_load(m, c, e)) < 0) {
			const Expr *x = &m->expr[e];
			diag_error(s->d, x->off ? x->off : sg->off, "%s operand '%s' must be an input read with the reduced index last and every "
			           "subscript an index (A(m,k) and B(n,k), batched A(b,m,k) and B(b,n,k)): fp8 tensor cores read both operands "
			           "k-contiguous (wgmma has no transposed fp8 operands), so store B as B[N,K] (x W^T, as torch._scaled_mm takes it)",
			           elem_info[x->type].name, x->op == IR_LOAD ? m->tensor[x->tensor].name : "?");
			return 0;
		}
	}
	/* one operand over C's row index, the other over its column index */
	const int im = c->first_index + (c->nfree == 3), in = im + 1;
	if (!((rows[0] == im && rows[1] == in) || (rows[0] == in && rows[1] == im))) {
		diag_error(s->d, sg->off, "stage '%s' multiplies %s operands that are not one over each of its result's indices: "
		           "write acc(m,n) +=! A(m,k) * B(n,k) (fp8 is read by tensor cores alone)", sg->name, tys);
		return 0;
	}
	if (sg->precision != ET_F32) {
		diag_error(s->d, sg->off, "a tensor-core stage over %s operands accumulates in f32: it cannot have precision %s (use f32)",
		           tys, sg->tf32 ? "tf32" : elem_info[sg->precision].name);
		return 0;
	}
	return 1;
}

static void check_stage_claims(Sema *s, Stage *sg)
{
	Module *m = s->m;
	if ((sg->attrs & ATTR(REDUCTION)) && !has_red(m, sg, RED_SUM, RED_KMIN))
		diag_error(s->d, sg->off, "stage '%s' is marked 'reduction' but has no reduction (+=!, max=!, min=!, kmin[k]=!)", sg->name);
	if ((sg->attrs & ATTR(SCATTER)) && !has_red(m, sg, RED_ACCUM, RED_ACCUM))
		diag_error(s->d, sg->off, "stage '%s' is marked 'scatter' but has no '+=' statement", sg->name);
	if ((sg->attrs & ATTR(COMPACT)) && !has_red(m, sg, RED_APPEND, RED_APPEND))
		diag_error(s->d, sg->off, "stage '%s' is marked 'compact' but has no '<-' statement", sg->name);
	/* fusec 0.1 has no fixed-order scatter or compaction: a user who asks
	   for one is told, not silently given atomics */
	for (int i = sg->first_stmt; (sg->attrs & ATTR(DETERMINISTIC)) && i < sg->first_stmt + sg->nstmt; i++) {
		const Stmt *st = &m->stmt[i];
		if (st->pattern == PAT_SCATTER && is_float(st->acc))
			diag_warning(s->d, st->off, "stage '%s' is marked 'deterministic', but this scatter-add is not: its float sums use atomics and may differ in the last bits between runs (a fixed-order scatter is not implemented yet)", sg->name);
		else if (st->pattern == PAT_COMPACT)
			diag_warning(s->d, st->off, "stage '%s' is marked 'deterministic', but this compaction is not: the list's order may differ between runs, its set and count do not (a fixed-order compaction is not implemented yet)", sg->name);
	}
	if (sg->tf32 && !(sg->attrs & ATTR(TENSOR_ELIGIBLE)))
		diag_error(s->d, sg->off, "stage '%s' has precision tf32 but is not 'tensor_eligible': tf32 is for a tensor-core "
		           "contraction over f32 operands (elsewhere f32 arithmetic is exact; use f32)", sg->name);
	int reduces = has_red(m, sg, RED_SUM, RED_KMIN);
	if (reduces && (sg->precision == ET_F16 || sg->precision == ET_BF16) && !(sg->attrs & ATTR(TENSOR_ELIGIBLE)))
		diag_error(s->d, sg->off, "stage '%s' reduces, so it cannot have precision %s: accumulate in f32 or f64",
		           sg->name, elem_info[sg->precision].name);
	if (sg->attrs & ATTR(TENSOR_ELIGIBLE)) {
		const Stmt *c = NULL, *wide = NULL;
		for (int i = sg->first_stmt; i < sg->first_stmt + sg->nstmt; i++)
			if (m->stmt[i].pattern == PAT_CONTRACT && (m->stmt[i].nfree == 2 || m->stmt[i].nfree == 3)) /* 3: batched */
				c = &m->stmt[i];
			else if (m->stmt[i].pattern == PAT_CONTRACT && m->stmt[i].nfree > 3)
				wide = &m->stmt[i];
		if (!c && wide && sg->nstmt == 1) {
			/* batch and heads as two indices, as PyTorch code has them: the
			   tile and attention kernels take one batch index */
			diag_error(s->d, sg->off, "stage '%s' is marked 'tensor_eligible' but its contraction has %d free indices: tensor "
			           "cores take one batch index, acc(b,m,n) +=! A(b,m,k) * B(b,k,n) (several batch indices, such as a batch "
			           "and heads, are not supported yet)", sg->name, wide->nfree);
			diag_note(s->d, sg->off, "write the batch indices as one: Q: bf16[BH,T,D] read as Q(b,m,d), not Q: bf16[B,H,T,D] "
			          "read as Q(b,h,m,d)");
			return;
		}
		if (!c || sg->nstmt != 1) {
			diag_error(s->d, sg->off, "stage '%s' is marked 'tensor_eligible' but is not one matrix contraction acc(m,n) +=! A(m,k) * B(k,n) "
			           "(or batched, acc(b,m,n) +=! A(b,m,k) * B(b,k,n))", sg->name);
			return;
		}
		ElemType a = m->expr[c->contract_a].type, b = m->expr[c->contract_b].type;
		/* an f32 intermediate beside a 16-bit operand is rounded to its type
		   on the way in (the tensor cores' input; dsl/MATH.md) */
		if (a == ET_F32 && (b == ET_F16 || b == ET_BF16) && f32_intermediate(m, c->contract_a)) a = b;
		if (b == ET_F32 && (a == ET_F16 || a == ET_BF16) && f32_intermediate(m, c->contract_b)) b = a;
		/* f32 operands: on tensor cores as tf32 where the stage allows it
		   (precision = tf32), else exact on CUDA cores (the planner says so) */
		/* fp8: e4m3 and e5m2 in any pair (wgmma and the f16 widening take each operand's own type) */
		const int fp8 = elem_is_fp8(a) && elem_is_fp8(b);
		if (!fp8 && (a != b || (a != ET_F16 && a != ET_BF16 && a != ET_F32))) {
			diag_error(s->d, sg->off, "stage '%s' is 'tensor_eligible' but its operands are %s and %s; tensor cores need f16 or bf16 "
			           "operands of one type, fp8 ones (f8e4m3, f8e5m2, or one of each), or f32 ones (read as tf32 with precision = tf32)",
			           sg->name, elem_info[a].name, elem_info[b].name);
			return;
		}
		if (fp8 && !check_fp8_contraction(s, sg, c)) return;
		if (sg->tf32 && a != ET_F32) {
			char both[32];
			diag_error(s->d, sg->off, "stage '%s' has precision tf32 but its operands are %s: tf32 is for f32 operands (use f32)",
			           sg->name, operand_types(a, b, both, sizeof both));
			return;
		}
		if (a == ET_F32) return; /* f32 accumulation, tf32 or exact */
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
	if (sema_namemap_get(&s->stages, TXT(s, node), N(s, node)->len) >= 0)
		diag_error(s->d, N(s, node)->off, "redefinition of stage '%.*s'", NAMEF(s, node));
	int id = ir_add_stage(m);
	s->stage_ord = F(s)->nstage++;
	Stage *sg = &m->stage[id];
	sg->name = sema_dup_name(s, node);
	sema_namemap_put(&s->stages, sg->name, N(s, node)->len, id);
	sg->off = N(s, node)->off;
	sg->first_stmt = m->nstmt;
	check_attrs(s, node, sg);
	s->stage = id;
	s->compute = sg->precision == ET_F64 ? ET_F64 : ET_F32;
	if (!N(s, node)->b) diag_warning(s->d, N(s, node)->off, "stage '%.*s' is empty", NAMEF(s, node));
	int errors = s->d->errors;
	for (int st = N(s, node)->b; st; st = N(s, st)->next) sema_check_stmt(s, st);
	if (s->d->errors == errors) check_stage_claims(s, &m->stage[id]);
}

/* fp8 inputs are read by tensor cores alone: each read of one must be
   an operand of a tensor_eligible stage's contraction (checked there), not
   a value anywhere else (no CUDA-core path converts fp8). An fp8 output is
   stored, never read: rounded to nearest and saturated at its largest
   finite value (cvt.rn.satfinite), by a pointwise statement alone (a
   reduction accumulates in f32: into a temp, then stored). */
static void check_fp8_reads(Sema *s, int first_expr)
{
	const Module *m = s->m;
	const Fusion *f = F(s);
	for (int e = first_expr; e < m->nexpr; e++) {
		const Expr *x = &m->expr[e];
		if ((x->op != IR_LOAD && x->op != IR_SCALAR) || x->tensor < f->first_tensor || x->tensor >= f->first_tensor + f->ntensor ||
		    !elem_is_fp8(m->tensor[x->tensor].type))
			continue;
		int ok = 0;
		for (int sg = f->first_stage; sg < f->first_stage + f->nstage && !ok; sg++)
			for (int i = m->stage[sg].first_stmt; i < m->stage[sg].first_stmt + m->stage[sg].nstmt; i++)
				if ((m->stage[sg].attrs & ATTR(TENSOR_ELIGIBLE)) && m->stmt[i].pattern == PAT_CONTRACT &&
				    (m->stmt[i].contract_a == e || m->stmt[i].contract_b == e))
					ok = 1;
		if (!ok && m->tensor[x->tensor].kind == TK_OUTPUT)
			diag_error(s->d, x->off, "%s output '%s' is read: an fp8 output is stored, not read again (read the f32 value it "
			           "is stored from: a temp of its own)", elem_info[m->tensor[x->tensor].type].name, m->tensor[x->tensor].name);
		else if (!ok)
			diag_error(s->d, x->off, "%s input '%s' is read outside a tensor-core contraction: fp8 is read only as an operand of a "
			           "'tensor_eligible' stage's acc(m,n) +=! A(m,k) * B(n,k) (keep other reads in f32, bf16 or f16)",
			           elem_info[m->tensor[x->tensor].type].name, m->tensor[x->tensor].name);
	}
	for (int i = f->first_stage; i < f->first_stage + f->nstage; i++)
		for (int k = m->stage[i].first_stmt; k < m->stage[i].first_stmt + m->stage[i].nstmt; k++) {
			const Stmt *st = &m->stmt[k];
			if (st->out < f->first_tensor || st->out >= f->first_tensor + f->ntensor) continue; /* a statement that failed its checks */
			if (m->tensor[st->out].kind == TK_OUTPUT && elem_is_fp8(m->tensor[st->out].type) && (st->red != RED_NONE || st->pattern != PAT_MAP))
				diag_error(s->d, st->off, "'%s' is %s: an fp8 output is stored by a pointwise statement alone (reduce into an "
				           "f32 temp, then store it: out(i) = t(i))", m->tensor[st->out].name, elem_info[m->tensor[st->out].type].name);
		}
}

/* fusion := 'fusion' IDENT '(' params ')' '->' '(' params ')' '{' items '}' */
static void check_fusion(Sema *s, int node)
{
	Module *m = s->m;
	if (sema_namemap_get(&s->fusions, TXT(s, node), N(s, node)->len) >= 0) {
		diag_error(s->d, N(s, node)->off, "redefinition of fusion '%.*s'", NAMEF(s, node));
		return;
	}
	sema_name_fits(s, node, "fusion", MAX_FUSION_NAME, ", so that its kernels' names (NAME_f0 ...) are within the runtime's 63");
	s->fusion = ir_add_fusion(m);
	Fusion *f = F(s);
	f->name = sema_dup_name(s, node);
	sema_namemap_put(&s->fusions, f->name, N(s, node)->len, s->fusion);
	sema_namemap_free(&s->tensors), sema_namemap_free(&s->stages), sema_namemap_free(&s->syms);
	sema_stage_defs(s, N(s, node)->c);
	f->off = N(s, node)->off;
	const int first_expr = m->nexpr;
	f->first_tensor = m->ntensor;
	f->first_stage = m->nstage;
	s->nconst = s->nglobal;
	s->nfailed = 0;
	for (int p = N(s, node)->a; p; p = N(s, p)->next) sema_declare_param(s, p, TK_INPUT);
	if (!N(s, node)->b) diag_error(s->d, N(s, node)->off, "fusion '%.*s' has no outputs", NAMEF(s, node));
	for (int p = N(s, node)->b; p; p = N(s, p)->next) sema_declare_param(s, p, TK_OUTPUT);
	for (int it = N(s, node)->c; it; it = N(s, it)->next) {
		switch (N(s, it)->kind) {
		case AST_CONST: sema_declare_const(s, it); break;
		case AST_TEMP: {
			/* a temp's sizes must be the parameters' own: nothing else
			   binds a size at launch */
			int before = F(s)->nsym;
			sema_declare_tensor(s, it, TK_TEMP);
			for (int d = N(s, it)->b; d; d = N(s, d)->next) {
				if (N(s, d)->flag || sema_const_find(s, d)) continue;
				int k = sema_sym_find(s, d);
				if (k < 0 || k >= before) /* unknown, or new with this temp */
					diag_error(s->d, N(s, d)->off, "size '%.*s' of temp '%.*s' is no parameter's size", NAMEF(s, d), NAMEF(s, it));
			}
			if (sema_tensor_find(s, it) >= 0) m->tensor[sema_tensor_find(s, it)].zero_init = 1;
			break;
		}
		case AST_STAGE: check_stage(s, it); break;
		default: break;
		}
	}
	f = F(s);
	if (!f->nstage) diag_error(s->d, f->off, "fusion '%s' has no stages", f->name); /* its outputs' error too */
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor && f->nstage; i++) {
		Tensor *t = &m->tensor[i];
		if (t->kind == TK_OUTPUT && t->def_stage < 0)
			diag_error(s->d, t->off, "output '%s' is never written", t->name);
	}
	check_fp8_reads(s, first_expr);
	sema_domain_fits(s);
	s->fusion = -1;
}

int sema_check(const Ast *ast, int root, Diag *d, Module *m)
{
	Sema s = {.ast = ast, .d = d, .m = m, .fusion = -1};
	for (int i = 0; i < m->nfusion; i++) sema_namemap_put(&s.fusions, m->fusion[i].name, (unsigned)strlen(m->fusion[i].name), i);
	int before = d->errors;
	int nfusion = 0;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_CONST) sema_declare_const(&s, it), s.nglobal = s.nconst;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_FUSION) {
			int errors = d->errors, id = m->nfusion;
			check_fusion(&s, it), nfusion++;
			if (m->nfusion > id && d->errors != errors) m->fusion[id].failed = 1;
		}
	if (!nfusion && d->errors == before) diag_error(d, 0, "no fusion in this file");
	sema_pipelines(ast, root, d, m);
	free(s.def_failed.v);
	free(s.shape_failed.v);
	sema_namemap_free(&s.fusions), sema_namemap_free(&s.tensors), sema_namemap_free(&s.stages), sema_namemap_free(&s.syms);
	free(s.defs);
	return d->errors - before;
}
