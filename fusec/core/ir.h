/* The checked program: plain structs in arrays, referenced by index.
 *
 * A Module holds one Fusion per `fusion` in the source. A fusion owns a
 * range of Tensors (inputs, outputs, declared and inferred intermediates,
 * scalars) and of Stages; a stage owns a range of Stmts; every statement
 * has its own index space (Index entries) and expression tree (Expr).
 *
 * Each Stmt is classified once here (its Pattern), so the planner and the
 * three backends read the same facts: which indices are free and which are
 * reduced, whether it is a contraction, a pairwise loop, a gather or a
 * scatter. Later work keeps this shape: tensor-core contractions read
 * Stmt.contract, persistent pipelines group Kernels, autotuned schedules
 * live in Schedule, and sharding splits the first free index. */
#ifndef FUSEC_IR_H
#define FUSEC_IR_H
#include <stddef.h>
#include <stdint.h>

#define MAX_RANK 4
#define MAX_IDX 8

/* name, C type, CUDA type, bytes, is_float, rank among floats (higher = wider) */
#define ELEM_TYPES(X) \
	X(F64, "f64", "double", "double", 8, 1, 4) \
	X(F32, "f32", "float", "float", 4, 1, 3) \
	X(BF16, "bf16", "float", "__nv_bfloat16", 2, 1, 2) \
	X(F16, "f16", "float", "__half", 2, 1, 1) \
	X(F8E4M3, "f8e4m3", "float", "unsigned char", 1, 1, 0) \
	X(F8E5M2, "f8e5m2", "float", "unsigned char", 1, 1, 0) \
	X(I64, "i64", "int64_t", "long long", 8, 0, 0) \
	X(I32, "i32", "int32_t", "int", 4, 0, 0) \
	X(BOOL, "bool", "int", "bool", 1, 0, 0)

typedef enum {
#define X(e, n, c, cu, b, f, r) ET_##e,
	ELEM_TYPES(X)
#undef X
	ET_N
} ElemType;

typedef struct {
	const char *name, *ctype, *cutype;
	int bytes, is_float, float_rank;
} ElemInfo;
extern const ElemInfo elem_info[ET_N];
int elem_lookup(const char *s, size_t len); /* -1 if unknown; bool is not a spec type */
/* f8e4m3 or f8e5m2: bytes that tensor cores alone read (sema's rules are
   the same for both, and one contraction may mix them) */
int elem_is_fp8(int t);

/* Expression opcodes: name, arity, C-ish spelling for printing. Built-in
 * functions are opcodes too, so every backend expands this one list. */
#define IR_OPS(X) \
	X(CONST, 0, "const") X(INDEX, 0, "index") X(LOAD, 0, "load") X(SCALAR, 0, "scalar") \
	X(SIZE, 0, "size") \
	X(NEG, 1, "-") X(NOT, 1, "!") \
	X(ADD, 2, "+") X(SUB, 2, "-") X(MUL, 2, "*") X(DIV, 2, "/") X(MOD, 2, "%") \
	X(LT, 2, "<") X(LE, 2, "<=") X(GT, 2, ">") X(GE, 2, ">=") X(EQ, 2, "==") X(NE, 2, "!=") \
	X(AND, 2, "&&") X(OR, 2, "||") \
	X(EXP, 1, "exp") X(LOG, 1, "log") X(SQRT, 1, "sqrt") X(RSQRT, 1, "rsqrt") \
	X(ABS, 1, "abs") X(TANH, 1, "tanh") X(SIGMOID, 1, "sigmoid") X(RELU, 1, "relu") \
	X(GELU, 1, "gelu") X(ERF, 1, "erf") X(DIGAMMA, 1, "digamma") \
	X(SIN, 1, "sin") X(COS, 1, "cos") X(EXP2, 1, "exp2") X(LOG2, 1, "log2") \
	X(LOG1P, 1, "log1p") X(EXPM1, 1, "expm1") X(FLOOR, 1, "floor") X(CEIL, 1, "ceil") \
	X(SILU, 1, "silu") \
	X(POW, 2, "pow") X(MINF, 2, "min") X(MAXF, 2, "max") X(SELECT, 3, "select") \
	X(CAST, 1, "cast")

/* The built-in functions a spec may call: opcode, arity, and for those that
 * are one C math function in both CUDA and the float64 reference, its double
 * and float names (NULL: ir_write_expr spells it). The checker, the printers
 * and both backends read this one list. */
#define IR_BUILTINS(X) \
	X(EXP, 1, "exp", "expf") X(LOG, 1, "log", "logf") X(SQRT, 1, "sqrt", "sqrtf") \
	X(RSQRT, 1, NULL, NULL) X(ABS, 1, NULL, NULL) X(TANH, 1, "tanh", "tanhf") \
	X(SIGMOID, 1, "fz_sigmoid", "fz_sigmoidf") X(RELU, 1, "fz_relu", "fz_reluf") \
	X(GELU, 1, "fz_gelu", "fz_geluf") X(ERF, 1, "erf", "erff") \
	X(DIGAMMA, 1, "fz_digamma", "fz_digammaf") \
	X(SIN, 1, "sin", "sinf") X(COS, 1, "cos", "cosf") X(EXP2, 1, "exp2", "exp2f") \
	X(LOG2, 1, "log2", "log2f") X(LOG1P, 1, "log1p", "log1pf") X(EXPM1, 1, "expm1", "expm1f") \
	X(FLOOR, 1, "floor", "floorf") X(CEIL, 1, "ceil", "ceilf") \
	X(SILU, 1, "fz_silu", "fz_siluf") \
	X(POW, 2, "pow", "powf") X(MINF, 2, NULL, NULL) X(MAXF, 2, NULL, NULL) \
	X(SELECT, 3, NULL, NULL)

typedef enum {
#define X(o, n, s) IR_##o,
	IR_OPS(X)
#undef X
	IR_NOPS
} IrOp;
extern const char *const ir_op_name[IR_NOPS];
extern const int ir_op_arity[IR_NOPS];
/* The built-in called `name` (its ir_op_name), or -1. */

/* A size: a symbol or a constant, or derived from one by range inference
 * through an affine subscript (c in X(r, 2*c) ranges over (C + 1) / 2):
 * max(base + add, 0) / div, or / the size symbol dsym - 1. Zeroed fields
 * (add 0, div 0 or 1, dsym 0) are the plain size. */
typedef struct Dim {
	int sym;         /* index into Fusion's symbols, or -1 for a constant */
	int64_t value;   /* the constant when sym < 0 */
	int64_t add;     /* derived: added to the base */
	int64_t div;     /* derived: divides it (0 or 1: not) */
	int dsym;        /* derived: 1 + the size symbol dividing it, 0 none */
} Dim;
static inline int dim_derived(Dim d) { return d.add || d.div > 1 || d.dsym; }
int dim_same(Dim a, Dim b);

typedef enum { TK_INPUT, TK_OUTPUT, TK_TEMP } TensorKind;

typedef struct Tensor {
	char *name;
	TensorKind kind;
	ElemType type;
	int rank;
	Dim dim[MAX_RANK];
	int param;       /* position among the fusion's parameters, -1 for temps */
	int def_stage;   /* first stage that writes it, -1 for inputs */
	int list_count;  /* for a compacted list: the tensor holding its length */
	int zero_init;   /* a declared temp: starts as zeros, may be accumulated */
	int inplace;     /* an output that is also an input: the buffer holds the
	                    input's values until its first write */
	int has_domain;  /* an input's declared values: [dom_lo, dom_hi], closed
	                    (open ends already moved inside, see sema_names.c) */
	double dom_lo, dom_hi;
	int dom_open;    /* as written: 1 lo open, 2 hi open */
	unsigned off;    /* declaration, for diagnostics */
} Tensor;

typedef enum { IX_DENSE, IX_RAGGED } IndexKind;

typedef struct Index {
	char *name;
	IndexKind kind;
	Dim range;       /* dense: [0, range) */
	int lo, hi;      /* ragged: expressions, evaluated per outer point */
	int reduced;     /* not on the left of a reduction */
	unsigned off;
} Index;

typedef struct Expr {
	IrOp op;
	ElemType type;
	int a, b, c;     /* operands (expr ids) */
	int tensor;      /* LOAD, SCALAR */
	int nargs, args[MAX_RANK]; /* LOAD: index expressions */
	int index;       /* INDEX: index id */
	int sym;         /* SIZE: the fusion's size symbol, read as an i64 value */
	int fusion;      /* SIZE: the fusion it belongs to */
	double value;    /* CONST */
	unsigned off;
} Expr;

/* What a statement's loop nest looks like; one per backend template. */
#define PATTERNS(X) \
	X(MAP, "map")                 /* out(free) = f(...) */ \
	X(REDUCE, "reduce")           /* out(free) op= f(free, reduced) */ \
	X(CONTRACT, "contract")       /* out(free) +=! a(.., r) * b(.., r) */ \
	X(PAIRWISE, "pairwise")       /* reduce over j with the same range as free i */ \
	X(SCATTER, "scatter")         /* out(g(..)) += f(..): gathered target */ \
	X(COMPACT, "compact")         /* list[count] <- v where p */

typedef enum {
#define X(p, s) PAT_##p,
	PATTERNS(X)
#undef X
	PAT_N
} Pattern;
extern const char *const pattern_name[PAT_N];

typedef enum { RED_NONE, RED_SUM, RED_MAX, RED_MIN, RED_KMIN, RED_ACCUM, RED_APPEND } RedOp;

typedef struct Stmt {
	int stage;
	RedOp red;
	int kmin_k;
	int out;                 /* tensor written */
	int nlhs, lhs[MAX_RANK]; /* index expressions of the target */
	int rhs, mask;           /* expr ids; mask 0 = none */
	int first_index, nindex; /* its indices; free ones first, in lhs order */
	int nfree;
	Pattern pattern;
	int contract_a, contract_b; /* CONTRACT: the two loads multiplied */
	int contract_scale;      /* CONTRACT: the product of the rhs's other factors, values with no index
	                            (scale * Q(m,k) * K(n,k)); 0: none */
	ElemType acc;            /* accumulator/compute type */
	unsigned off;
} Stmt;

#define ATTRS(X) \
	X(REDUCTION, "reduction") X(TENSOR_ELIGIBLE, "tensor_eligible") \
	X(SCATTER, "scatter") X(COMPACT, "compact") X(DETERMINISTIC, "deterministic") \
	X(PRECISION, "precision")

enum {
#define X(a, s) ATTR_##a##_BIT,
	ATTRS(X)
#undef X
};
#define ATTR(a) (1u << ATTR_##a##_BIT)

typedef struct Stage {
	char *name;
	unsigned attrs;
	ElemType precision;      /* f32 unless the stage says */
	int tf32;                /* precision = tf32: f32, but its tensor-core contraction may read its
	                            f32 operands as tf32 (dsl/MATH.md); precision is ET_F32 */
	int first_stmt, nstmt;
	unsigned off;
} Stage;

/* A dimension an input's domain reaches: a subscript reads integer input
 * `tensor` (plus a constant) directly, so every value its domain allows
 * must fall inside `dim`, which must hold at least `least` elements
 * (front/sema_fits.c). The manifest's fits lines, which the runtime checks
 * before launching, and the reference's first check. */
typedef struct Fit {
	int tensor;
	Dim dim;
	int64_t least;           /* the most any such subscript needs */
} Fit;

typedef struct Fusion {
	char *name;
	int first_tensor, ntensor;
	int nparam;              /* inputs then outputs, in declaration order */
	int first_stage, nstage;
	char **sym; int nsym;    /* size symbols, in order of first appearance */
	unsigned off;
	int failed;              /* the checker reported errors in it */
	Fit *fit; int nfit;      /* malloc'd: at most one per input and dimension */
} Fusion;

/* pipeline NAME = [repeat STEPS] FUSION(in <- out, ...): the fusion's
 * kernels as the phases of one persistent launch, STEPS times (a launch-
 * time value), each carried output feeding its input on the next step.
 * Checked by sema_pipelines (front/pipeline_check.c), planned by
 * plan/plan_pipe.c, written by cuda/pipe_kernel.c and host/pipe_header.c. */
#define MAX_CARRY 8
typedef struct Pipeline {
	char *name;
	int fusion;
	int repeat;              /* 1: `repeat STEPS` (steps is its name) */
	char *steps;
	int ncarry;
	int carry_in[MAX_CARRY], carry_out[MAX_CARRY]; /* tensor ids */
	unsigned off;
} Pipeline;

typedef struct Module {
	Fusion *fusion; int nfusion;
	Pipeline *pipeline; int npipeline; /* malloc'd, in declaration order */
	Tensor *tensor; int ntensor;
	Stage *stage; int nstage;
	Stmt *stmt; int nstmt;
	Index *index; int nindex;
	Expr *expr; int nexpr;   /* expr 0 is a sentinel "none" */
	int caps[6];
} Module;

/* Fusion f's indices are [*first, *first + n), n returned: its statements'
 * (sema_stmt.c makes each statement's in turn, and a fusion's statements
 * are contiguous). Emitters size their per-index arrays by it, not by the
 * Module's, which a file of many fusions makes long. */
static inline int fusion_indices(const Module *m, const Fusion *f, int *first)
{
	*first = 0;
	if (!f->nstage) return 0;
	const Stage *a = &m->stage[f->first_stage], *z = &m->stage[f->first_stage + f->nstage - 1];
	int s0 = a->first_stmt, s1 = z->first_stmt + z->nstmt;
	if (s0 >= s1) return 0;
	*first = m->stmt[s0].first_index;
	return m->stmt[s1 - 1].first_index + m->stmt[s1 - 1].nindex - *first;
}

void ir_init(Module *m);
void ir_free(Module *m);
int ir_add_fusion(Module *m);
int ir_add_tensor(Module *m);
int ir_add_stage(Module *m);
int ir_add_stmt(Module *m);
int ir_add_index(Module *m);
int ir_add_expr(Module *m, IrOp op, ElemType t, unsigned off);
/* Does expression e read index ix anywhere (subscripts, operands)? */
int ir_expr_uses_index(const Module *m, int e, int ix);
/* Does expression e read tensor t anywhere (a load or a rank-0 read, in
   subscripts and operands)? The front end's fits check and the planner's
   guards ask the same question */
int ir_expr_reads(const Module *m, int e, int t);
int ir_uses_op(const Module *m, IrOp op);

void ir_print(const Module *m, void *file);
/* Writes an expression as C (used by printers and backends). The callback
 * renders leaves (indices, loads, scalars) that differ between backends. */
typedef struct ExprWriter ExprWriter;
struct ExprWriter {
	const Module *m;
	void (*leaf)(ExprWriter *w, int expr, void *out);
	ElemType compute;   /* type in which float arithmetic happens */
	int half;           /* the stage's precision is f16 or bf16: dsl/MATH.md's
	                       approximations for 16-bit storage apply (tanh, gelu) */
	int cuda;           /* choose CUDA intrinsics */
	int cond;           /* > 0 inside an operand evaluated only conditionally
	                       (select's branches, the right of && and ||) */
	/* or NULL: may the right operand e of && or || be evaluated whatever the
	   left one is? Then it is written as & or |: no branch, so a kernel's
	   loads need not wait on the condition (cuda_read.c, in reduction loops) */
	int (*eager_ok)(struct ExprWriter *w, int e);
	int select_true;    /* > 0: a select known to take its first value there (the
	                       causal mask's where every n <= m): written as that value */
	int select_ninf;    /* > 0: a select written with -inf as its second value (the
	                       causal mask's, its exponential 0 whatever the scale) */
	int fold_mul;       /* > 0: a product written as its operand fold_keep (1: the */
	int fold_keep;      /* first, 2: the second) alone: the attention kernel's z, its
	                       scalar factor moved into the exponent (kern_attn.c) */
	void *user;
};
void ir_write_expr(ExprWriter *w, int e, void *out);
void dim_write(const Module *m, const Fusion *f, Dim d, void *out);
/* [d0 SEP d1 ...], each as dim_write spells it */
void dim_write_list(const Module *m, const Fusion *f, const Dim *d, int n, const char *sep, void *out);
/* A size as a C expression: symbols as PREFIX NAME (a.n_C, n_C, a->n_C),
 * constants as 123LL; a derived size clamps at 0 and divides. */
void dim_write_c(const Fusion *f, Dim d, const char *prefix, void *out);
/* The manifest's domain token of an input, "domain=LO..HI", with LO and HI
 * C decimal floating literals; nothing for a tensor without a domain. */
void domain_write(const Tensor *t, void *out);

#endif
