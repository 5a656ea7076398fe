/* test_checksum.c — CRC32C and the pattern digest are part of the plan format:
 * known answers, and the hardware and software CRC paths agree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "digest.h"
#include "test_util.h"

/* CRC32C one bit at a time: the definition the fast paths must match. */
static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n) {
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

static void known_answers(void) {
  EXPECT(crc32c(0, "123456789", 9) == 0xE3069283u, "crc32c check value, got 0x%08x", crc32c(0, "123456789", 9));
  EXPECT(crc32c_portable(0, "123456789", 9) == 0xE3069283u, "portable check value");
  EXPECT(crc32c(0, "", 0) == 0, "crc32c of nothing");
  /* the digest's values as recorded in plans since format 1.0 */
  digest64 d;
  digest_init(&d);
  for (int64_t v = -5; v < 1000; v += 7) digest_add(&d, v * v * v);
  EXPECT(d.h == 0x92c805510f5fd185ull, "digest of the cube sequence, got 0x%016llx", (unsigned long long)d.h);
  int64_t rp[4] = {0, 2, 2, 5}, ci[5] = {1, 3, 0, 2, 3};
  uint64_t pd = shiro_pattern_digest(3, 4, rp, ci);
  EXPECT(pd == 0xf6ee4d47b3e7389bull, "pattern digest of a 3x4 pattern, got 0x%016llx", (unsigned long long)pd);
}

/* Every length up to 300 at every alignment, a long buffer, and chaining. */
static void paths_agree(void) {
  size_t big = (size_t)1 << 20;
  unsigned char *buf = malloc(big + 8);
  if (!buf) {
    EXPECT(0, "out of memory");
    return;
  }
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < big + 8; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (unsigned char)x;
  }
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n <= 300; n++) {
      uint32_t want = crc_bitwise(0x1234u, buf + off, n);
      EXPECT(crc32c(0x1234u, buf + off, n) == want, "crc32c off %zu len %zu", off, n);
      EXPECT(crc32c_portable(0x1234u, buf + off, n) == want, "portable off %zu len %zu", off, n);
    }
  uint32_t whole = crc32c(0, buf + 3, big), part = crc32c(crc32c(0, buf + 3, 12345), buf + 3 + 12345, big - 12345);
  EXPECT(whole == part, "chained crc32c");
  EXPECT(whole == crc32c_portable(0, buf + 3, big), "long buffer: hardware and software agree");
  EXPECT(whole == crc_bitwise(0, buf + 3, big), "long buffer: the definition");
  free(buf);
}

int main(void) {
  known_answers();
  paths_agree();
  if (test_failures) fprintf(stderr, "test_checksum: %d failures\n", test_failures);
  return test_failures ? 1 : 0;
}
