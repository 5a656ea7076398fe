/* checksum.h — CRC32C of plan arrays and the pattern digest (shared by writer, reader, runtime). */
#ifndef SHIRO_CHECKSUM_H
#define SHIRO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78) of n bytes, continuing
 * from crc (start with 0). Software slicing-by-8, ~1-2 GB/s. */
uint32_t crc32c(uint32_t crc, const void *data, size_t n);

/* Streaming pattern digest: feed values in a fixed order. */
typedef struct digest64 { uint64_t h; } digest64;
void digest_init(digest64 *d);
void digest_add(digest64 *d, int64_t v);

#endif
