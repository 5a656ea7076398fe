/* checksum.h — CRC32C of plan arrays and of the envelope (shared by writer, reader, runtime). */
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

#endif
