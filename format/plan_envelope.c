/* plan_envelope.c — seals and checks the integrity envelope of a plan file
 * (user block header + raw-data extent table + metadata CRC32C; R10 in
 * format/README.md). Byte layout of the header (little-endian):
 *   0  magic[8]       PLAN_ENVELOPE_MAGIC
 *   8  u32 version    PLAN_ENVELOPE_VERSION
 *  12  u32 header     PLAN_ENVELOPE_HEADER (bytes before the table)
 *  16  u64 userblock  bytes of the user block (power of two ≥ 512)
 *  24  u64 file size  bytes of the whole file
 *  32  u64 extents    entries in the table
 *  40  u32 meta crc   CRC32C of every byte in [userblock, size) outside the extents
 *  44  u32 block crc  CRC32C of the user block with these 4 bytes read as zero
 *  48  reserved, zero; then the table: per extent u64 offset, u64 bytes
 *      (absolute, sorted, disjoint); the rest of the user block is zero. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#include "error.h"
#include "h5_util.h"
#include "plan_envelope.h"

enum { OFF_VERSION = 8,
       OFF_HEADER = 12,
       OFF_UB = 16,
       OFF_SIZE = 24,
       OFF_N = 32,
       OFF_META = 40,
       OFF_BLOCK = 44 };
static const uint8_t hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++, v >>= 8) p[i] = (uint8_t)v;
}

uint64_t plan_envelope_userblock(int64_t ranks, int arrays_per_rank) {
  uint64_t need = PLAN_ENVELOPE_HEADER + 16 * ((uint64_t)ranks * (uint64_t)arrays_per_rank + 64), ub = 512;
  while (ub < need) ub <<= 1;
  return ub;
}

/* CRC32C of the user block with the block-CRC field read as zero. */
static uint32_t block_crc(const uint8_t *img, uint64_t ub) {
  static const uint8_t zero[4] = {0};
  uint32_t c = crc32c(0, img, OFF_BLOCK);
  c = crc32c(c, zero, 4);
  return crc32c(c, img + OFF_BLOCK + 4, (size_t)(ub - OFF_BLOCK - 4));
}

/* CRC32C of [ub, size) outside the (validated) extents. */
/* The metadata CRC's bytes: every byte after the user block [0, ub) that lies outside the
 * extents of table (n records, sorted, disjoint), as ranges in file order. Calls
 * range(arg, off, len, &c) on each, continuing crc32c c from 0; returns 0 if one did. */
typedef int (*crc_range_fn)(void *arg, uint64_t off, uint64_t len, uint32_t *c);
static int meta_crc_walk(uint64_t size, uint64_t ub, const uint8_t *table, uint64_t n, crc_range_fn range, void *arg,
                         uint32_t *c) {
  *c = 0;
  uint64_t pos = ub;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t off = get_le(table + 16 * i, 8), len = get_le(table + 16 * i + 8, 8);
    if (!range(arg, pos, off - pos, c)) return 0;
    pos = off + len;
  }
  return range(arg, pos, size - pos, c);
}

/* crc_range_fn over an image in memory (arg: its first byte). */
static int crc_image_range(void *arg, uint64_t off, uint64_t len, uint32_t *c) {
  *c = crc32c(*c, (const uint8_t *)arg + off, (size_t)len);
  return 1;
}

static uint32_t meta_crc(const uint8_t *img, uint64_t size, uint64_t ub, const uint8_t *table, uint64_t n) {
  uint32_t c;
  meta_crc_walk(size, ub, table, n, crc_image_range, (void *)img, &c);
  return c;
}

bool plan_extent_inside(uint64_t off, uint64_t bytes, uint64_t size) {
  return off <= size && bytes <= size - off;
}

/* Header and table structure (no checksums): magic, version, sizes, and
 * extents sorted, disjoint and inside [ub, size). */
static shiro_status parse(const uint8_t *img, size_t size, const char *path, uint64_t *ub_out, uint64_t *n_out,
                          shiro_error *err) {
  if (size < 8 || memcmp(img, PLAN_ENVELOPE_MAGIC, 8) != 0) {
    if (size >= 8 && memcmp(img, hdf5_signature, 8) == 0)
      return shiro_fail(err, SHIRO_ERR_VERSION, "%s: an HDF5 file without a shiro envelope (a plan of format 1.x, "
                                                "or not written by shiro-plan): plan the matrix again with this shiro-plan",
                        path);
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: not a shiro plan (no shiro envelope at byte 0%s)", path,
                      size < 8 ? ": file too short" : "");
  }
  if (size < 512) return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged: %zu bytes, shorter than a plan's user block", path, size);
  uint64_t version = get_le(img + OFF_VERSION, 4), header = get_le(img + OFF_HEADER, 4);
  uint64_t ub = get_le(img + OFF_UB, 8), fsize = get_le(img + OFF_SIZE, 8), n = get_le(img + OFF_N, 8);
  if (version != PLAN_ENVELOPE_VERSION)
    return shiro_fail(err, SHIRO_ERR_VERSION, "%s: envelope version %llu, this reader understands %d", path,
                      (unsigned long long)version, PLAN_ENVELOPE_VERSION);
  if (header != PLAN_ENVELOPE_HEADER || ub < 512 || (ub & (ub - 1)) != 0 || ub > size)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged envelope header (user block %llu bytes)", path, (unsigned long long)ub);
  if (fsize != size)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged: the file has %zu bytes, its envelope says %llu (truncated or appended to?)",
                      path, size, (unsigned long long)fsize);
  if (n > (ub - PLAN_ENVELOPE_HEADER) / 16)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged envelope header (%llu extents)", path, (unsigned long long)n);
  const uint8_t *table = img + PLAN_ENVELOPE_HEADER;
  uint64_t pos = ub;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t off = get_le(table + 16 * i, 8), len = get_le(table + 16 * i + 8, 8);
    if (off < pos || len == 0 || !plan_extent_inside(off, len, size))
      return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged envelope: extent %llu is out of order or outside the file", path,
                        (unsigned long long)i);
    pos = off + len;
  }
  *ub_out = ub;
  *n_out = n;
  return SHIRO_OK;
}

shiro_status plan_envelope_check_image(const uint8_t *img, size_t size, const char *path, shiro_error *err) {
  uint64_t ub = 0, n = 0;
  shiro_status st = parse(img, size, path, &ub, &n, err);
  if (st != SHIRO_OK) return st;
  /* parse read the header before it was trusted: its checks only keep the
   * reads in bounds. The block CRC is what makes the header believable... */
  uint32_t want = (uint32_t)get_le(img + OFF_BLOCK, 4), got = block_crc(img, ub);
  if (got != want)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged: the envelope's user block fails its CRC32C (%08x, stored %08x)", path,
                      got, want);
  /* ...and the metadata CRC vouches for every byte libhdf5 will parse. */
  want = (uint32_t)get_le(img + OFF_META, 4);
  got = meta_crc(img, size, ub, img + PLAN_ENVELOPE_HEADER, n);
  if (got != want)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: damaged: the HDF5 metadata fails its CRC32C (%08x, stored %08x)", path, got,
                      want);
  return SHIRO_OK;
}

shiro_status plan_envelope_check(const char *path, shiro_error *err) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return shiro_fail(err, SHIRO_ERR_IO, "%s: not a regular file", path);
  }
  if (sb.st_size == 0) {
    close(fd);
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: not a shiro plan (empty file)", path);
  }
  void *img = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (img == MAP_FAILED) return shiro_fail(err, SHIRO_ERR_IO, "%s: mmap failed: %s", path, strerror(errno));
  shiro_status st = plan_envelope_check_image(img, (size_t)sb.st_size, path, err);
  munmap(img, (size_t)sb.st_size);
  return st;
}

static void seal_crcs(uint8_t *img, size_t size, uint64_t ub, uint64_t n) {
  put_le(img + OFF_META, meta_crc(img, size, ub, img + PLAN_ENVELOPE_HEADER, n), 4);
  put_le(img + OFF_BLOCK, block_crc(img, ub), 4);
}

/* Writes the envelope's header and extent table into the user block blk[0..ub), CRCs zero, and
 * checks them (parse reads nothing past the user block). false: they do not fit or are bad. */
static bool fill_block(uint8_t *img, size_t size, uint64_t ub, const uint64_t (*extents)[2], size_t n) {
  if (ub < 512 || (ub & (ub - 1)) != 0 || ub > size || n > (ub - PLAN_ENVELOPE_HEADER) / 16) return false;
  memset(img, 0, (size_t)ub);
  memcpy(img, PLAN_ENVELOPE_MAGIC, 8);
  put_le(img + OFF_VERSION, PLAN_ENVELOPE_VERSION, 4);
  put_le(img + OFF_HEADER, PLAN_ENVELOPE_HEADER, 4);
  put_le(img + OFF_UB, ub, 8);
  put_le(img + OFF_SIZE, size, 8);
  put_le(img + OFF_N, n, 8);
  for (size_t i = 0; i < n; i++) {
    put_le(img + PLAN_ENVELOPE_HEADER + 16 * i, extents[i][0], 8);
    put_le(img + PLAN_ENVELOPE_HEADER + 16 * i + 8, extents[i][1], 8);
  }
  uint64_t ub2, n2;
  shiro_error e;
  return parse(img, size, "", &ub2, &n2, &e) == SHIRO_OK; /* extents not sorted, disjoint, inside */
}

bool plan_envelope_seal_image(uint8_t *img, size_t size, uint64_t ub, const uint64_t (*extents)[2], size_t n) {
  if (!fill_block(img, size, ub, extents, n)) return false;
  seal_crcs(img, size, ub, n);
  return true;
}

bool plan_envelope_reseal_image(uint8_t *img, size_t size) {
  uint64_t ub, n;
  shiro_error e;
  if (parse(img, size, "", &ub, &n, &e) != SHIRO_OK) return false;
  seal_crcs(img, size, ub, n);
  return true;
}

int plan_extents_add(plan_extents *L, int64_t d) {
  const haddr_t off = H5Dget_offset((hid_t)d);
  const hsize_t bytes = H5Dget_storage_size((hid_t)d);
  if (off == HADDR_UNDEF || bytes == 0) return 1; /* chunked, compact and empty datasets count as metadata */
  if (L->n == L->cap) {
    const size_t cap = L->cap ? 2 * L->cap : 256;
    void *p = realloc(L->e, cap * sizeof *L->e);
    if (!p) return !(L->failed = 1);
    L->e = p;
    L->cap = cap;
  }
  L->e[L->n][0] = (uint64_t)off;
  L->e[L->n++][1] = (uint64_t)bytes;
  return 1;
}

/* The stored extents of every dataset under a group, recursively (data: a plan_extents). */
static herr_t visit_link(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
  (void)info;
  plan_extents *L = data;
  hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
  if (o < 0) return L->failed = 1, -1;
  herr_t ret = 0;
  H5I_type_t type = H5Iget_type(o);
  if (type == H5I_GROUP) ret = H5Literate(o, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_link, data) < 0 ? -1 : 0;
  else if (type == H5I_DATASET && !plan_extents_add(L, o)) ret = -1;
  H5Oclose(o);
  return ret;
}

static int by_offset(const void *a, const void *b) {
  uint64_t x = (*(const uint64_t(*)[2])a)[0], y = (*(const uint64_t(*)[2])b)[0];
  return (x > y) - (x < y);
}

/* The user block size and sorted raw extents of a file we wrote. */
static shiro_status list_extents(const char *path, uint64_t *ub, plan_extents *L, shiro_error *err) {
  hid_t f = h5_open_readonly(path);
  if (f < 0) return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot reopen the written plan to seal it", path);
  hid_t fcpl = H5Fget_create_plist(f);
  hsize_t size = 0;
  int ok = fcpl >= 0 && H5Pget_userblock(fcpl, &size) >= 0;
  if (fcpl >= 0) H5Pclose(fcpl);
  ok = ok && H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_link, L) >= 0 && !L->failed;
  H5Fclose(f);
  if (!ok) return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot list the written plan's datasets", path);
  *ub = size;
  return SHIRO_OK;
}

/* crc_range_fn over a file read through a buffer: pread, so its pages stay in the page cache. */
typedef struct fd_reader {
  int fd;
  uint8_t *buf;
  size_t cap;
} fd_reader;
static int crc_fd_range(void *arg, uint64_t off, uint64_t len, uint32_t *c) {
  const fd_reader *r = arg;
  while (len > 0) {
    size_t want = len < r->cap ? (size_t)len : r->cap;
    ssize_t got = pread(r->fd, r->buf, want, (off_t)off);
    if (got <= 0) return 0;
    *c = crc32c(*c, r->buf, (size_t)got);
    off += (uint64_t)got;
    len -= (uint64_t)got;
  }
  return 1;
}

/* plan_envelope_seal_image's bytes, written into the file fd of `size` bytes: the user block is
 * built in memory, the metadata CRC read through a small buffer (pread: the file's pages stay in
 * the page cache, out of this process's memory; a mapping of the whole file made them count in
 * its resident set, tens of MiB on a large plan), then the block is written at offset 0. */
static shiro_status seal_fd(int fd, uint64_t size, uint64_t ub, const uint64_t (*extents)[2], size_t n,
                            const char *path, shiro_error *err) {
  enum { CAP = 1 << 20 };
  const int fits = ub <= size && ub <= ((uint64_t)1 << 30); /* a writer's user block: KiBs to MiBs */
  uint8_t *blk = fits ? malloc((size_t)ub) : NULL, *buf = fits ? malloc(CAP) : NULL;
  shiro_status st = SHIRO_OK;
  if (fits && (!blk || !buf)) st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory sealing", path);
  else if (!fits || !fill_block(blk, (size_t)size, ub, extents, n))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot seal: no user block of %llu bytes for %zu extents", path,
                    (unsigned long long)ub, n);
  uint32_t c = 0;
  fd_reader rd = {fd, buf, CAP};
  if (st == SHIRO_OK && !meta_crc_walk(size, ub, blk + PLAN_ENVELOPE_HEADER, n, crc_fd_range, &rd, &c))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: read failed sealing: %s", path, strerror(errno));
  if (st == SHIRO_OK) {
    put_le(blk + OFF_META, c, 4);
    put_le(blk + OFF_BLOCK, block_crc(blk, ub), 4);
    for (uint64_t done = 0; st == SHIRO_OK && done < ub;) {
      ssize_t w = pwrite(fd, blk + done, (size_t)(ub - done), (off_t)done);
      if (w <= 0) st = shiro_fail(err, SHIRO_ERR_IO, "%s: write failed sealing: %s", path, strerror(errno));
      else done += (uint64_t)w;
    }
  }
  free(blk);
  free(buf);
  return st;
}

shiro_status plan_envelope_seal_extents(const char *path, uint64_t ub, plan_extents *L, shiro_error *err) {
  if (L->n > 1) qsort(L->e, L->n, sizeof *L->e, by_offset);
  int fd = open(path, O_RDWR);
  struct stat sb;
  shiro_status st = SHIRO_OK;
  if (fd < 0 || fstat(fd, &sb) != 0) st = shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(errno));
  /* no msync or fsync here: the caller fsyncs before the rename */
  if (st == SHIRO_OK) st = seal_fd(fd, (uint64_t)sb.st_size, ub, (const uint64_t(*)[2])L->e, L->n, path, err);
  if (fd >= 0) close(fd);
  return st;
}

shiro_status plan_envelope_seal(const char *path, shiro_error *err) {
  plan_extents L = {0};
  uint64_t ub = 0;
  shiro_status st = list_extents(path, &ub, &L, err);
  if (st == SHIRO_OK) st = plan_envelope_seal_extents(path, ub, &L, err);
  free(L.e);
  return st;
}
