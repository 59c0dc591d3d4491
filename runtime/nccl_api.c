/* libnccl through dlopen(): one table, loaded once under a lock, only when
 * a group of several devices is opened (one device needs no NCCL). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nccl_api.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fr_nccl table;
static void *handle;

static const struct {
	const char *sym;
	size_t off;
} symbols[] = {
#define FR_NCCL_ENTRY(sym, ret, params) {#sym, offsetof(fr_nccl, sym)},
	FR_NCCL_API(FR_NCCL_ENTRY)
#undef FR_NCCL_ENTRY
};

static int load(char *err)
{
	const char *env = getenv("FUSERUN_NCCL");
	const int named = env && *env;
	const char *path = named ? env : "libnccl.so.2";
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return fr_err(err, FZ_ERR_NO_NCCL, "cannot load the NCCL library %s%s: %s%s", path,
		              named ? " (from FUSERUN_NCCL)" : "", why ? why : "dlopen failed",
		              named ? "" : " (a group of several GPUs needs NCCL; FUSERUN_NCCL may name the library)");
	}
	fr_nccl t;
	memset(&t, 0, sizeof t);
	char missing[FZ_ERRMSG_SIZE / 2] = "";
	int nmissing = 0;
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		void *p = dlsym(h, symbols[i].sym);
		if (!p) {
			size_t n = strlen(missing);
			if (n + strlen(symbols[i].sym) + 8 < sizeof missing)
				snprintf(missing + n, sizeof missing - n, "%s%s", nmissing ? ", " : "", symbols[i].sym);
			nmissing++;
		}
		memcpy((char *)&t + symbols[i].off, &p, sizeof p);
	}
	if (nmissing) {
		dlclose(h);
		return fr_err(err, FZ_ERR_NO_NCCL, "the library %s lacks %d NCCL function%s: %s", path, nmissing,
		              nmissing == 1 ? "" : "s", missing);
	}
	/* the types above are NCCL 2's ABI: refuse another major version */
	fr_ncclResult_t r = t.ncclGetVersion(&t.version);
	if (r != FR_NCCL_SUCCESS || t.version < 20000 || t.version >= 30000) {
		dlclose(h);
		return fr_err(err, FZ_ERR_NO_NCCL, "the NCCL library %s reports version %d (ncclGetVersion returned %d): NCCL 2.x is needed",
		              path, t.version, r);
	}
	table = t, handle = h;
	return FZ_OK;
}

int fr_nccl_get(const fr_nccl **api, char *err)
{
	int rc = FZ_OK;
	pthread_mutex_lock(&lock);
	if (!handle) rc = load(err);
	pthread_mutex_unlock(&lock);
	if (api) *api = rc ? NULL : &table;
	return rc;
}

int fr_nccl_error(const fr_nccl *api, char *err, const char *call, fr_ncclResult_t r)
{
	const char *text = api && api->ncclGetErrorString ? api->ncclGetErrorString(r) : NULL;
	return fr_err(err, FZ_ERR_NCCL, "%s: NCCL error %d: %s", call, (int)r, text ? text : "(no description)");
}
