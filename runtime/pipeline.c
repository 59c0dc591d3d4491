/* Persistent pipelines: one cooperative launch sized by the kernel's
 * occupancy, the watchdog's report read back and turned into an error
 * naming the phase; and CUDA graphs captured from a stream (what a
 * pipeline is measured against). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int c_ident(const char *s)
{
	if (!s || !*s || strlen(s) > 127) return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p != s && *p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/* ---- the kernels' parameter sizes, from the PTX ---- */

static int ptx_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* the bytes of a PTX parameter declaration [s, end): ".param [.align A]
   [.ptr ...] TYPE NAME[COUNT]" or "... TYPE NAME"; 0 if it cannot tell */
static unsigned long long param_decl_bytes(const char *s, const char *end)
{
	static const struct { const char *type; unsigned bytes; } types[] = {
		{".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".b32", 4}, {".u32", 4},
		{".s32", 4}, {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
	unsigned elem = 0;
	const char *q = s;
	while (q < end && !elem) { /* the type is the first token that names one */
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
		size_t n = 0;
		while (q + n < end && q[n] != ' ' && q[n] != '\t' && q[n] != '\n' && q[n] != '\r') n++;
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strlen(types[i].type) == n && !strncmp(q, types[i].type, n)) elem = types[i].bytes;
		q += n;
	}
	const char *br = memchr(q, '[', (size_t)(end - q));
	if (!elem || !br) return elem;
	unsigned long long count = 0;
	for (br++; br < end && *br >= '0' && *br <= '9' && count < (1ull << 32); br++) count = count * 10 + (unsigned)(*br - '0');
	return br < end && *br == ']' ? count * elem : 0;
}

static int add_entry(fz_artifact *a, const char *name, size_t len, unsigned long long bytes, int *cap)
{
	if (len >= sizeof a->entry[0].name) return FZ_OK; /* longer than any name a launch may give */
	if (a->nentries == *cap) {
		int more = *cap ? 2 * *cap : 64;
		fr_entry *e = realloc(a->entry, (size_t)more * sizeof *e);
		if (!e) return FZ_ERR_NO_MEMORY;
		a->entry = e, *cap = more;
	}
	fr_entry *e = &a->entry[a->nentries++];
	memcpy(e->name, name, len), e->name[len] = 0;
	e->param_bytes = bytes;
	return FZ_OK;
}

int fr_ptx_entries(fz_artifact *a, const char *ptx, char *err)
{
	int cap = 0;
	for (const char *e = strstr(ptx, ".entry"); e; e = strstr(e + 6, ".entry")) {
		const char *name = e + 6, *q;
		if (*name != ' ' && *name != '\t') continue;
		while (*name == ' ' || *name == '\t') name++;
		for (q = name; ptx_ident_char(*q); q++) {}
		const char *open = q;
		while (*open == ' ' || *open == '\t' || *open == '\n' || *open == '\r') open++;
		const char *close = *open == '(' ? strchr(open, ')') : NULL;
		if (q == name || !close) continue;
		/* one parameter, or its size is not known (0) */
		const char *p1 = strstr(open, ".param"), *p2 = p1 ? strstr(p1 + 6, ".param") : NULL;
		unsigned long long bytes = p1 && p1 < close && !(p2 && p2 < close) ? param_decl_bytes(p1 + 6, close) : 0;
		if (add_entry(a, name, (size_t)(q - name), bytes, &cap)) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	}
	return FZ_OK;
}

/* FZ_OK if kernel is an entry of the loaded PTX taking params_size bytes */
static int params_fit(fz_artifact *a, const char *kernel, size_t params_size)
{
	for (int i = 0; i < a->nentries; i++) {
		if (strcmp(a->entry[i].name, kernel)) continue;
		if (a->entry[i].param_bytes == params_size) return FZ_OK;
		if (!a->entry[i].param_bytes)
			return fr_err(a->err, FZ_ERR_ARGS_SIZE, "fz_pipeline_launch: kernel %s of %s does not take one parameter of a known size",
			              kernel, a->info.fusion);
		return fr_err(a->err, FZ_ERR_ARGS_SIZE, "fz_pipeline_launch: params are %zu bytes; kernel %s of %s takes %llu (its PTX)",
		              params_size, kernel, a->info.fusion, a->entry[i].param_bytes);
	}
	return fr_err(a->err, FZ_ERR_UNKNOWN_KERNEL, "artifact %s has no pipeline kernel '%s'", a->info.fusion, kernel);
}

int fz_pipeline_launch(fz_artifact *a, const char *kernel, const void *params, size_t params_size, unsigned int block,
                       int max_per_sm, fz_stream *stream, unsigned int *grid)
{
	return fz_pipeline_launch_capped(a, kernel, params, params_size, block, max_per_sm, 0, stream, grid);
}

int fz_pipeline_launch_capped(fz_artifact *a, const char *kernel, const void *params, size_t params_size, unsigned int block,
                              int max_per_sm, unsigned long long max_blocks, fz_stream *stream, unsigned int *grid)
{
	if (!a) return FZ_ERR_INVALID;
	if (!c_ident(kernel)) return fr_err(a->err, FZ_ERR_INVALID, "fz_pipeline_launch: the kernel name is not a C identifier");
	if (!params || !params_size || params_size > 4096)
		return fr_err(a->err, FZ_ERR_INVALID, "fz_pipeline_launch: params must be 1 to 4096 bytes (have %zu)", params_size);
	if (block < 32 || block > 1024 || block % 32)
		return fr_err(a->err, FZ_ERR_INVALID, "fz_pipeline_launch: block %u is not a multiple of 32 in 32..1024", block);
	/* the driver copies as many bytes as the kernel declares from params */
	int rc = params_fit(a, kernel, params_size);
	if (rc) return rc;
	rc = fr_enter(a->dev, a->err);
	if (rc) return rc;
	CUfunction f = a->pipe_fn;
	int per = a->pipe_per_sm;
	CUresult r = CUDA_SUCCESS;
	if (!f || a->pipe_block != block || strcmp(a->pipe_name, kernel)) {
		a->pipe_fn = NULL;
		r = fr_cu->cuModuleGetFunction(&f, a->mod, kernel);
		if (r == CUDA_ERROR_NOT_FOUND) {
			rc = fr_err(a->err, FZ_ERR_UNKNOWN_KERNEL, "artifact %s has no pipeline kernel '%s'", a->info.fusion, kernel);
		} else if (r != CUDA_SUCCESS) {
			rc = fr_cuda_error(a->err, "cuModuleGetFunction", r);
		} else if ((r = fr_cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per, f, (int)block, 0)) != CUDA_SUCCESS) {
			rc = fr_cuda_error(a->err, "cuOccupancyMaxActiveBlocksPerMultiprocessor", r);
		} else if (per < 1) {
			rc = fr_err(a->err, FZ_ERR_CUDA, "pipeline kernel %s: no block of %u threads fits on an SM", kernel, block);
		} else {
			snprintf(a->pipe_name, sizeof a->pipe_name, "%s", kernel);
			a->pipe_fn = f, a->pipe_block = block, a->pipe_per_sm = per;
		}
	}
	if (!rc) {
		if (max_per_sm > 0 && per > max_per_sm) per = max_per_sm;
		unsigned int g = (unsigned int)per * (unsigned int)a->dev->sm_count;
		/* blocks past what the largest phase can use would only idle at
		   every barrier, and a barrier's cost grows with its blocks */
		if (max_blocks > 0 && g > max_blocks) g = (unsigned int)max_blocks;
		void *kp[] = {(void *)params};
		r = fr_cu->cuLaunchCooperativeKernel(f, g, 1, 1, block, 1, 1, 0, (CUstream)stream, kp);
		if (r != CUDA_SUCCESS) {
			char call[192];
			snprintf(call, sizeof call, "cuLaunchCooperativeKernel(%s, %u blocks of %u)", kernel, g, block);
			rc = fr_cuda_error(a->err, call, r);
		} else if (grid) {
			*grid = g;
		}
	}
	fr_leave(a->dev);
	return rc;
}

int fz_pipeline_wait(fz_artifact *a, const char *pipeline, fz_ptr ctl, fz_ptr also_clear, const char *const *phase,
                     int nphase, fz_stream *stream)
{
	if (!a) return FZ_ERR_INVALID;
	if (!ctl) return fr_err(a->err, FZ_ERR_INVALID, "fz_pipeline_wait: the barrier words' pointer is 0");
	int rc = fr_enter(a->dev, a->err);
	if (rc) return rc;
	unsigned int w[4] = {0, 0, 0, 0}; /* count, generation, status (phase + 1), step */
	CUresult r = fr_cu->cuStreamSynchronize((CUstream)stream);
	if (r != CUDA_SUCCESS) rc = fr_cuda_error(a->err, "cuStreamSynchronize (pipeline)", r);
	if (!rc && (r = fr_cu->cuMemcpyDtoH_v2(w, (CUdeviceptr)ctl, sizeof w)) != CUDA_SUCCESS)
		rc = fr_cuda_error(a->err, "cuMemcpyDtoH (pipeline barrier words)", r);
	if (!rc && w[2]) {
		const unsigned int op = w[2] - 1;
		const char *name = phase && (int)op < nphase && phase[op] ? phase[op] : "?";
		rc = fr_err(a->err, FZ_ERR_STALL,
		            "pipeline %s stalled: the barrier after phase %u (%s) of step %u waited past its watchdog "
		            "(a block never arrived); the launch stopped there and its outputs are incomplete",
		            pipeline && c_ident(pipeline) ? pipeline : "?", op, name, w[3]);
		/* the words as a fresh scratch has them, for the next launch */
		if ((r = fr_cu->cuMemsetD8_v2((CUdeviceptr)ctl, 0, sizeof w)) != CUDA_SUCCESS ||
		    (also_clear && (r = fr_cu->cuMemsetD8_v2((CUdeviceptr)also_clear, 0, 4)) != CUDA_SUCCESS)) {
			const size_t n = strlen(a->err);
			snprintf(a->err + n, sizeof a->err - n, "; clearing the barrier words failed too: zero the scratch again");
		}
	}
	fr_leave(a->dev);
	return rc;
}

struct fz_graph {
	CUgraphExec exec;
};

int fz_graph_begin(fz_device *d, fz_stream *stream)
{
	if (!d) return FZ_ERR_INVALID;
	if (!stream) return fr_err(d->err, FZ_ERR_INVALID, "fz_graph_begin: the default stream cannot be captured");
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	CUresult r = fr_cu->cuStreamBeginCapture_v2((CUstream)stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
	if (r != CUDA_SUCCESS) rc = fr_cuda_error(d->err, "cuStreamBeginCapture", r);
	fr_leave(d);
	return rc;
}

int fz_graph_end(fz_device *d, fz_stream *stream, fz_graph **out)
{
	if (!d || !out) return FZ_ERR_INVALID;
	*out = NULL;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUresult r = fr_cu->cuStreamEndCapture((CUstream)stream, &g);
	if (r != CUDA_SUCCESS) rc = fr_cuda_error(d->err, "cuStreamEndCapture", r);
	if (!rc && (r = fr_cu->cuGraphInstantiateWithFlags(&e, g, 0)) != CUDA_SUCCESS) rc = fr_cuda_error(d->err, "cuGraphInstantiate", r);
	if (g) fr_cu->cuGraphDestroy(g);
	if (!rc && !(*out = malloc(sizeof **out))) {
		fr_cu->cuGraphExecDestroy(e);
		rc = fr_err(d->err, FZ_ERR_NO_MEMORY, "fz_graph_end: out of memory");
	}
	if (!rc) (*out)->exec = e;
	fr_leave(d);
	return rc;
}

int fz_graph_launch(fz_device *d, fz_graph *g, fz_stream *stream)
{
	if (!d || !g) return FZ_ERR_INVALID;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	CUresult r = fr_cu->cuGraphLaunch(g->exec, (CUstream)stream);
	if (r != CUDA_SUCCESS) rc = fr_cuda_error(d->err, "cuGraphLaunch", r);
	fr_leave(d);
	return rc;
}

int fz_graph_destroy(fz_device *d, fz_graph *g)
{
	if (!g) return FZ_OK;
	if (!d) return FZ_ERR_INVALID;
	int rc = fr_enter(d, d->err);
	if (!rc) {
		CUresult r = fr_cu->cuGraphExecDestroy(g->exec);
		if (r != CUDA_SUCCESS) rc = fr_cuda_error(d->err, "cuGraphExecDestroy", r);
		fr_leave(d);
	}
	free(g);
	return rc;
}
