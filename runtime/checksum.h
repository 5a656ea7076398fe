/* checksum.h — CRC32C of plan arrays and the pattern digest (shared by writer, reader, runtime). */
#ifndef SHIRO_CHECKSUM_H
#define SHIRO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78) of n bytes, continuing
 * from crc (start with 0). The SSE4.2 crc32 instruction where the CPU has it
 * (checked once), else software slicing-by-8 (~1-2 GB/s); same values. */
uint32_t crc32c(uint32_t crc, const void *data, size_t n);

/* crc32c by the software tables whatever the CPU (tests compare the two). */
uint32_t crc32c_portable(uint32_t crc, const void *data, size_t n);

/* Streaming pattern digest: feed values in a fixed order. Part of the plan
 * format (plans record digests applications recompute): never change it. */
typedef struct digest64 { uint64_t h; } digest64;

static inline void digest_init(digest64 *d) { d->h = 0x6A09E667F3BCC909ull; }

/* splitmix64-style mixing of each value into the state: order-sensitive.
 * Inline: it runs once per nonzero of every digest. */
static inline void digest_add(digest64 *d, int64_t v) {
  uint64_t z = d->h ^ ((uint64_t)v + 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  d->h = z ^ (z >> 31);
}

#endif
