/* plan_write_raw.c — a rank's array bytes written straight into a plan file whose metadata
 * another process writes (plan_writer_declare): the distributed planner's part of the writer. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "plan_file.h"

/* The arrays go to the file as they lie in memory: int32, int64 and double are the file's
 * int32 / int64 / float64 little-endian types only on a little-endian host. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "plan_rank_write_raw writes native bytes as little-endian");

/* Writes n bytes of p at file offset off of fd, resuming after short writes and interruptions;
 * 0 or errno. */
static int pwrite_all(int fd, const char *p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
    off += (uint64_t)w;
  }
  return 0;
}

shiro_status plan_rank_write_raw(int fd, const prog_rank *pr, const uint64_t off[PROG_NARRAYS], const char *path,
                                 shiro_error *err) {
  for (int a = 0; a < PROG_NARRAYS; a++) {
    size_t bytes;
    const char *p = prog_array(pr, a, &bytes);
    if ((bytes == 0) != (off[a] == UINT64_MAX) || (bytes && off[a] > (uint64_t)INT64_MAX - bytes))
      return shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: rank %d's %s has %zu bytes but offset %llu (declared with another shape?)",
                        path, pr->rank, prog_array_name(a), bytes, (unsigned long long)off[a]);
    int e = bytes ? pwrite_all(fd, p, bytes, off[a]) : 0;
    if (e)
      return shiro_fail(err, SHIRO_ERR_IO, "%s: writing rank %d's %s (%zu bytes at offset %llu) failed: %s (disk full?)", path,
                        pr->rank, prog_array_name(a), bytes, (unsigned long long)off[a], strerror(e));
  }
  return SHIRO_OK;
}
