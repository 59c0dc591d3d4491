/* A fusion's compiled header against the verified manifest it is used
 * with: the same layout fingerprint and the struct sizes the manifest
 * implies, or nothing runs. Shared by refso.c and the manifest fuzzer. */
#include <stdio.h>
#include <string.h>

#include "registry.h"

int fr_spec_check(const fz_artifact_info *info, fr_spec *s, const char *layout, unsigned long long args_size,
                  unsigned long long ref_args_size, char *err)
{
	size_t ref_want = 8 * (size_t)info->nsizes; /* the reference's args: every non-temp tensor and every size */
	for (int i = 0; i < info->ntensors; i++) ref_want += 8 * (info->tensors[i].role != FZ_TEMP);
	if (strcmp(s->name, info->fusion) || strcmp(layout, info->layout) || args_size != info->args_size ||
	    ref_args_size != ref_want) {
		snprintf(err, FZ_ERRMSG_SIZE,
		         "%s: the header's layout (args %llu bytes, reference args %llu) is not the manifest's (%zu, %zu)",
		         info->fusion, args_size, ref_args_size, info->args_size, ref_want);
		return -1;
	}
	s->args_size = (size_t)args_size, s->ref_args_size = (size_t)ref_args_size;
	return 0;
}
