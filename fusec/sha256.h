/* SHA-256 (FIPS 180-4), for the hashes artifacts record. */
#ifndef FUSEC_SHA256_H
#define FUSEC_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct Sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t n);
void sha256_final(Sha256 *s, unsigned char out[32]);
/* hex of the digest of data: 64 characters and a NUL */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
