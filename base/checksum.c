/* checksum.c — CRC32C (the pattern digest is digest.c's). */
#include "checksum.h"

static uint32_t table[8][256];
static int table_ready;

/* Builds the slicing-by-8 tables once; racing first calls write identical values. */
static void build_tables(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int s = 1; s < 8; s++) table[s][i] = (table[s - 1][i] >> 8) ^ table[0][table[s - 1][i] & 0xFF];
  __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t crc32c_portable(uint32_t crc, const void *data, size_t n) {
  if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_tables();
  const unsigned char *p = data;
  crc = ~crc;
  while (n && ((uintptr_t)p & 7)) {
    crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
    n--;
  }
  while (n >= 8) {
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    w ^= crc; /* little-endian: the low 4 bytes take the CRC */
    crc = table[7][w & 0xFF] ^ table[6][(w >> 8) & 0xFF] ^ table[5][(w >> 16) & 0xFF] ^ table[4][(w >> 24) & 0xFF] ^
        table[3][(w >> 32) & 0xFF] ^ table[2][(w >> 40) & 0xFF] ^ table[1][(w >> 48) & 0xFF] ^ table[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same CRC by the SSE4.2 crc32 instruction, 8 bytes a step (~8 GB/s
 * against ~1.5 for the tables). */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t c = ~crc;
  while (n && ((uintptr_t)p & 7)) {
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    n--;
  }
  while (n >= 8) {
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    n -= 8;
  }
  while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
  return ~(uint32_t)c;
}

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
  static int hw = -1; /* racing first calls store the same answer */
  int h = __atomic_load_n(&hw, __ATOMIC_RELAXED);
  if (h < 0) __atomic_store_n(&hw, h = __builtin_cpu_supports("sse4.2") ? 1 : 0, __ATOMIC_RELAXED);
  return h ? crc32c_sse42(crc, data, n) : crc32c_portable(crc, data, n);
}
#else
uint32_t crc32c(uint32_t crc, const void *data, size_t n) { return crc32c_portable(crc, data, n); }
#endif
