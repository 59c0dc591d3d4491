/* libcuda through dlopen(): one table, loaded once under a lock. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const fr_cuda *fr_cu;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fr_cuda table;
static void *handle;
static int initialised; /* cuInit succeeded */

static const struct {
	const char *sym, *alt;
	size_t off;
} symbols[] = {
#define FR_ENTRY(sym, alt, params) {#sym, alt, offsetof(fr_cuda, sym)},
	FR_CUDA_API(FR_ENTRY)
#undef FR_ENTRY
};

static int load(char *err)
{
	const char *env = getenv("FUSERUN_LIBCUDA");
	const char *path = env && *env ? env : "libcuda.so.1";
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return fr_err(err, FZ_ERR_NO_DRIVER, "cannot load the CUDA driver library %s%s: %s%s", path,
		              env && *env ? " (from FUSERUN_LIBCUDA)" : "", why ? why : "dlopen failed",
		              env && *env ? "" : " (is the NVIDIA driver installed? FUSERUN_LIBCUDA may name the library)");
	}
	fr_cuda t;
	char missing[FZ_ERRMSG_SIZE / 2] = "";
	int nmissing = 0;
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		void *p = dlsym(h, symbols[i].sym);
		if (!p && symbols[i].alt) p = dlsym(h, symbols[i].alt);
		if (!p) {
			size_t n = strlen(missing);
			if (n + strlen(symbols[i].sym) + 8 < sizeof missing)
				snprintf(missing + n, sizeof missing - n, "%s%s", nmissing ? ", " : "", symbols[i].sym);
			else if (!strstr(missing, "..."))
				snprintf(missing + n, sizeof missing - n, ", ...");
			nmissing++;
		}
		memcpy((char *)&t + symbols[i].off, &p, sizeof p);
	}
	if (nmissing) {
		dlclose(h);
		return fr_err(err, FZ_ERR_NO_DRIVER, "the CUDA driver library %s lacks %d Driver API function%s: %s", path,
		              nmissing, nmissing == 1 ? "" : "s", missing);
	}
	table = t, handle = h;
	fr_cu = &table;
	return FZ_OK;
}

int fr_cuda_get(const fr_cuda **api, char *err)
{
	int rc = FZ_OK;
	pthread_mutex_lock(&lock);
	if (!handle) rc = load(err);
	if (!rc && !initialised) {
		CUresult r = table.cuInit(0);
		if (r == CUDA_SUCCESS) initialised = 1;
		else rc = fr_cuda_error(err, "cuInit", r);
	}
	pthread_mutex_unlock(&lock);
	if (api) *api = rc ? NULL : &table;
	return rc;
}
