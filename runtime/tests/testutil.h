/* Helpers of the runtime's CPU tests: PASS/FAIL lines, and artifact
 * copies to damage. */
#ifndef FUSERUN_TESTUTIL_H
#define FUSERUN_TESTUTIL_H
#include <stddef.h>

#include "fuserun.h"

extern int passed, failed;
extern const char *gen_dir, *fake_so, *nocuda_so, *tmp_dir;

int check(int cond, const char *name, const char *detail);
/* rc is code, and the message mentions every one of the NULL-terminated words */
int expect(const char *name, int rc, int code, const char *msg, ...);

char *slurp(const char *path, size_t *n);
void spit(const char *path, const char *data, size_t n);
char *path2(char *buf, const char *dir, const char *name);   /* buf: 4096 bytes */
/* copies the artifact NAME into TMP/CASE/; returns the directory (static) */
const char *copy_artifact(const char *name, const char *casename);
/* the same from another directory (an artifact fusec wrote for the test) */
const char *copy_artifact_from(const char *from, const char *name, const char *casename);
/* recomputes a manifest's manifest-sha256 line */
void rehash(const char *path);
/* replaces the first `from` in the file with `to`; rehashes if asked */
void edit(const char *path, const char *from, const char *to, int re);
/* the line of the manifest starting with prefix (without its newline) */
void manifest_line(const char *path, const char *prefix, char *line, size_t cap);
/* recomputes a manifest's layout line from its fusion, size, param and
   temp lines (as an attacker would), and re-hashes */
void relayout(const char *path);
/* relayout of DIR/FUSION.manifest, then FUSION.h's layout and its SHA-256
   line made to agree: a consistent artifact with the manifest's edits */
void refingerprint(const char *dir, const char *fusion);
/* inserts extra before the first `before` in the file, and rehashes */
void insert_before(const char *path, const char *before, const char *extra);
/* fz_artifact_verify of DIR/NAME; also fails if a refusal leaves info filled */
int verify(const char *dir, const char *name, char *err);

void test_generated(void);
void test_op_block(void);
void test_refusals(void);
void test_values_lines(void);
void test_hostile(void);
void test_shapes(void);
void test_strerror(void);
void test_checks(void);
void test_fits_lines(void);
void test_fits_fake(void);
void test_compare(void);
void test_no_driver(void);
void bind_fake(void);
void test_fake_device(void);
void test_fault_injection(void);
void test_pipeline_fake(void);
void test_fp8(void);
void unbind_fake(void);

#endif
