/* checksum.c — CRC32C and the 64-bit pattern digest. */
#include "checksum.h"
#include "shiro.h"

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

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
  if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_tables();
  const unsigned char *p = data;
  crc = ~crc;
  while (n && ((uintptr_t)p & 7)) { crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF]; n--; }
  while (n >= 8) {
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    w ^= crc;  /* little-endian: the low 4 bytes take the CRC */
    crc = table[7][w & 0xFF] ^ table[6][(w >> 8) & 0xFF] ^ table[5][(w >> 16) & 0xFF] ^ table[4][(w >> 24) & 0xFF] ^
          table[3][(w >> 32) & 0xFF] ^ table[2][(w >> 40) & 0xFF] ^ table[1][(w >> 48) & 0xFF] ^ table[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

void digest_init(digest64 *d) { d->h = 0x6A09E667F3BCC909ull; }

/* splitmix64-style mixing of each value into the state: order-sensitive. */
void digest_add(digest64 *d, int64_t v) {
  uint64_t z = d->h ^ ((uint64_t)v + 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  d->h = z ^ (z >> 31);
}

uint64_t shiro_pattern_digest(int64_t nrows, int64_t ncols, const int64_t *rowptr, const int64_t *colind) {
  digest64 d;
  digest_init(&d);
  digest_add(&d, nrows);
  digest_add(&d, ncols);
  for (int64_t i = 0; i < nrows; i++) {
    digest_add(&d, rowptr[i + 1] - rowptr[i]);
    for (int64_t t = rowptr[i]; t < rowptr[i + 1]; t++) digest_add(&d, colind[t]);
  }
  return d.h;
}
