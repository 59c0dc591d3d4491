/* SHA-256 (FIPS 180-4): the one source of it, for the runtime (which checks
 * artifact hashes) and for fusec (which writes them); names prefixed fr_ as
 * the runtime library's are. */
#ifndef FUSERUN_SHA256_H
#define FUSERUN_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct fr_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
} fr_sha256;

void fr_sha256_init(fr_sha256 *s);
void fr_sha256_update(fr_sha256 *s, const void *data, size_t n);
void fr_sha256_final(fr_sha256 *s, unsigned char out[32]);
/* hex of the digest of data: 64 characters and a NUL */
void fr_sha256_hex(const void *data, size_t n, char hex[65]);

#endif
