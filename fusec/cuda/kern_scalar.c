/* Template: SCALAR kernels, rank-0 work with no space, by one thread of
 * one block. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

void cuda_kern_scalar(Cx *cx)
{
	cuda_kernel_head(cx);
	fputs("\tif (blockIdx.x != 0 || threadIdx.x != 0) return;\n", cx->out);
	for (int sid = cx->k->first_stmt; sid < cx->k->first_stmt + cx->k->nstmt; sid++)
		if (cx->p->op[sid - cx->p->first_stmt] != STEP_INLINE) cuda_map(cx, sid, 1, 0);
	fputs("}\n\n", cx->out);
	cuda_clear_locals(cx);
}

