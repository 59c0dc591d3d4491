/* The host side of a validation case, no GPU involved: the tensors of a
 * fusion at given sizes, random inputs in the device's element types, the
 * float64 reference's view of them, the args and reference-args structs,
 * and the comparison of outputs against the reference. */
#ifndef FUSERUN_TENSORS_H
#define FUSERUN_TENSORS_H
#include <stdint.h>

#include "fuserun.h"
#include "registry.h"

typedef struct rt_tensor {
	const fz_tensor_info *ti;
	long long n;        /* elements (1 for a scalar) */
	size_t bytes;       /* on the device */
	void *host;         /* the values as the device holds them (not for temps) */
	double *ref;        /* the reference's values: float tensors */
	int32_t *iref;      /* i32 tensors */
	int64_t *lref;      /* i64 tensors */
	int rarg;           /* its field in the reference's args */
	int valued;         /* an integer input drawn from the manifest's values line */
	fz_ptr dev;
} rt_tensor;

typedef struct rt_case {
	const fz_artifact_info *info;
	const fr_spec *spec;
	long long size[64];       /* per info->sizes */
	rt_tensor *t;             /* per info->tensors */
	uint64_t *args;           /* the args struct: info->args_size bytes */
	uint64_t *rargs;          /* the reference's args struct */
	uint64_t rng;
	double bytes_moved;       /* every input and output once */
} rt_case;

/* 0 if every domain=LO..HI of the artifact lies within its element type
   (and, for an integer, holds one and is within 2^53); else 1 with err.
   fusec 0.1 writes domains the type cannot hold (i32 in [0, 3e9]). */
/* element conversions of the storage types, as the device stores them
   (round to nearest even; fp8 saturating at its largest finite value, as
   cvt.rn.satfinite does: e4m3 +-448, e5m2 +-57344): fuserun's inputs and
   tests/gpu/validate.c's, one definition for both */
uint16_t rt_f2h(float f);
float rt_h2f(uint16_t h);
uint16_t rt_f2b(float f);
float rt_b2f(uint16_t b);
uint8_t rt_f2e4m3(double v);
double rt_e4m32f(uint8_t b);
uint8_t rt_f2e5m2(double v);
double rt_e5m22f(uint8_t b);

int rt_check_domains(const fz_artifact_info *info, char *err);
/* sizes[i] for info->sizes[i], all > 0. Fills the inputs from seed: from
   each domain, else uniform, never by name (float scalars in (0.5, 1.5),
   float tensors in (-1, 1)); integer inputs without a domain from the
   manifest's values line (fz_tensor_values), else values the reference
   accepts (ranges tried on it, tensors.c). Then runs the reference on them (rt_case_reference): 0 only for inputs it
   accepts, with its outputs computed, so that nothing launches on inputs
   that would take a kernel outside its buffers. */
int rt_case_init(rt_case *c, const fz_artifact_info *info, const fr_spec *spec, const long long *sizes,
                 unsigned long long seed, char *err);
/* rt_case_init but the last run of the reference: the inputs drawn (an
   integer input without a values line may still take trial runs of it),
   the outputs not computed; for a caller that runs the reference itself
   before it launches anything (tests/gpu/validate.c) */
int rt_case_inputs(rt_case *c, const fz_artifact_info *info, const fr_spec *spec, const long long *sizes,
                   unsigned long long seed, char *err);
/* Runs the float64 reference on the inputs, in a child process: 0, or
   nonzero with err saying why (a subscript out of range, out of memory,
   a crash and its signal). */
int rt_case_reference(rt_case *c, char *err);
/* nonzero: the reference runs in this process instead (the manifest
   fuzzer, whose sanitizers must see it; a crash then ends the process) */
extern int rt_reference_in_process;
void rt_case_free(rt_case *c);

/* one output against the reference */
typedef struct rt_result {
	const char *name, *type;
	double error;       /* normwise: max|got - want| / max|want|; infinite for a NaN or an unwritten element */
	double tolerance;   /* by element type and how it is computed; 0: exact */
	double score;       /* error / tolerance: <= 1 passes */
	int as_set;         /* a compacted list, compared as a set */
	int ref_nan;        /* the reference has a NaN (which fails): inputs outside a function's domain */
	long long at;       /* the worst element, or -1 */
	double got, want;
} rt_result;

double rt_tolerance(const fz_tensor_info *ti);
/* Compares output i. got[j]: the device bytes of tensor j (outputs only),
   which a compacted list needs for its count. */
void rt_compare(const rt_case *c, int i, void *const *got, rt_result *r);

#endif
