/* The host side of one fusion for fuserun: its generated header's
 * functions and float64 reference, made callable without a rebuild. For an
 * artifact, refso.c compiles NAME.h and NAME_ref.c (as the manifest hashed
 * them) into a temporary shared object and loads it; tests fill one by hand
 * from headers they include. */
#ifndef FUSERUN_REGISTRY_H
#define FUSERUN_REGISTRY_H
#include <stddef.h>

#include "fuserun.h"

typedef struct fr_spec {
	const char *name;
	const char *unused_;
	size_t args_size, ref_args_size;
	int (*reference)(const void *ref_args);
	/* [0] the fused variant, [1] the unfused one */
	unsigned long long (*scratch[2])(void *args, unsigned long long base, int sm);
	int (*ops[2])(const void *args, int sm, fz_op *ops, int max_ops);
	void *handle;          /* the loaded object (refso.c) */
	char tmpdir[512];
} fr_spec;

/* Compiles and loads the header and reference of a verified artifact; 0,
   or -1 with err (FZ_ERRMSG_SIZE bytes) saying why: no C compiler, a file
   changed since verification, a compile error, a layout that is not the
   manifest's. */
int fr_spec_load(const fz_artifact_info *info, fr_spec *spec, char *err);
void fr_spec_unload(fr_spec *spec);
/* 0 if a compiled header (its layout string and struct sizes) is the one
   info describes, filling spec's sizes; else -1 with err */
int fr_spec_check(const fz_artifact_info *info, fr_spec *spec, const char *layout, unsigned long long args_size,
                  unsigned long long ref_args_size, char *err);

/* C source (malloc'd, NULL when out of memory) defining fr_fields[][4]:
   where the compiled header's structs hold each param and size the
   manifest lists, computed by the compiler; fr_spec_check_fields compares
   it with where the manifest puts them (0, or -1 with err) */
char *fr_spec_fields_source(const fz_artifact_info *info);
int fr_spec_check_fields(const fz_artifact_info *info, const long long (*fields)[4], char *err);
/* 0 if the reference's table of {name, shape} (fz_NAME_ref_shapes, ended
   by {0, 0}) has every param and temp of the manifest once, each with the
   manifest's shape; else -1 with err */
int fr_spec_check_shapes(const fz_artifact_info *info, const char *const (*shapes)[2], char *err);

#endif
