/* plan_read.c — opens a plan file and maps one rank's arrays in place. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#include "error.h"
#include "h5_util.h"
#include "plan_envelope.h"
#include "plan_file.h"

static int read_i64(hid_t loc, const char *name, int64_t *v) {
  if (H5Aexists(loc, name) <= 0) return 0;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return 0;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  int ok = t >= 0 && sp >= 0 && H5Tequal(t, H5T_STD_I64LE) > 0 && H5Sget_simple_extent_npoints(sp) == 1 &&
      H5Aread(a, H5T_NATIVE_INT64, v) >= 0;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  H5Aclose(a);
  return ok;
}

static int read_str(hid_t loc, const char *name, char *buf, size_t cap) {
  if (H5Aexists(loc, name) <= 0) return 0;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return 0;
  hid_t t = H5Aget_type(a);
  int ok = 0;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) && H5Tget_size(t) <= cap && H5Aget_storage_size(a) == H5Tget_size(t)) {
    memset(buf, 0, cap);
    ok = H5Aread(a, t, buf) >= 0;
    buf[cap - 1] = 0;
  }
  if (t >= 0) H5Tclose(t);
  H5Aclose(a);
  return ok;
}

static shiro_status read_meta(hid_t f, const char *path, prog_meta *meta, shiro_error *err) {
  char fmt[32];
  int64_t major = 0, minor = 0, ranks = 0, gpn = 0;
  if (!read_str(f, "format", fmt, sizeof fmt) || strcmp(fmt, PLAN_FORMAT_NAME) != 0)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: not a shiro plan (root attribute 'format' is not '%s')", path, PLAN_FORMAT_NAME);
  if (!read_i64(f, "version_major", &major) || !read_i64(f, "version_minor", &minor))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: plan has no format version", path);
  if (major != PLAN_VERSION_MAJOR)
    return shiro_fail(err, SHIRO_ERR_VERSION, "%s: plan format version %lld.%lld, this reader understands %d.x",
                      path, (long long)major, (long long)minor, PLAN_VERSION_MAJOR);
  memset(meta, 0, sizeof *meta);
  char vt[16];
  if (!read_i64(f, "ranks", &ranks) || !read_i64(f, "gpus_per_node", &gpn) || !read_i64(f, "m", &meta->m) ||
      !read_i64(f, "k", &meta->k) || !read_i64(f, "nnz", &meta->nnz) ||
      !read_str(f, "strategy", meta->strategy, sizeof meta->strategy) ||
      !read_str(f, "partition", meta->partition, sizeof meta->partition) || !read_str(f, "value_type", vt, sizeof vt))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: a root attribute is missing or has the wrong type", path);
  if (ranks < 1 || ranks > INT32_MAX || gpn < 1 || gpn > INT32_MAX || meta->m < 0 || meta->k < 0 || meta->nnz < 0 ||
      strcmp(vt, "float64") != 0)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: root attributes out of range (ranks %lld, gpus_per_node %lld, value_type %s)",
                      path, (long long)ranks, (long long)gpn, vt);
  int64_t digest = 0;
  if (!read_i64(f, "matrix_digest", &digest))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: root attribute 'matrix_digest' is missing", path);
  meta->matrix_digest = (uint64_t)digest;
  meta->version_minor = minor;
  meta->ranks = (int32_t)ranks;
  meta->gpus_per_node = (int32_t)gpn;
  return SHIRO_OK;
}

shiro_status plan_file_read_meta(const char *path, prog_meta *meta, shiro_error *err) {
  shiro_status st = plan_envelope_check(path, err); /* a damaged file never reaches libhdf5 */
  if (st != SHIRO_OK) return st;
  h5_quiet q = h5_quiet_begin();
  hid_t f = h5_open_readonly(path);
  st = f < 0 ? shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open as an HDF5 file (%s)", path,
                          access(path, R_OK) == 0 ? "not HDF5 or damaged" : strerror(errno))
             : read_meta(f, path, meta, err);
  if (f >= 0) H5Fclose(f);
  h5_quiet_end(q);
  return st;
}

/* One dataset of the rank group: where its bytes are in the file. */
typedef struct dset_loc {
  const char *name;
  hid_t want; /* expected native type */
  int width; /* expected second dimension (1 = 1-D) */
  int64_t n; /* rows */
  haddr_t off; /* file offset of the data (valid if n > 0) */
  size_t bytes;
  uint32_t crc; /* stored CRC32C of the data */
} dset_loc;

static shiro_status locate(hid_t g, const char *path, int32_t rank, dset_loc *ds, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  hid_t d = H5Dopen2(g, ds->name, H5P_DEFAULT);
  if (d < 0) return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d has no dataset '%s'", path, rank, ds->name);
  hid_t dcpl = H5Dget_create_plist(d), t = H5Dget_type(d), sp = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  if (dcpl < 0 || t < 0 || sp < 0 || nd != (ds->width > 1 ? 2 : 1) || H5Sget_simple_extent_dims(sp, dims, NULL) < 0 ||
      (ds->width > 1 && dims[1] != (hsize_t)ds->width) || dims[0] > (hsize_t)(INT64_MAX / 8) / (hsize_t)ds->width) {
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' has an unexpected shape", path, rank, ds->name);
  } else if (H5Pget_layout(dcpl) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl) != 0 || H5Pget_external_count(dcpl) != 0) {
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' is not contiguous and unfiltered", path, rank, ds->name);
  } else if (H5Tequal(t, ds->want) <= 0) {
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' has a non-native type or byte order", path, rank, ds->name);
  } else {
    int64_t crc = -1;
    ds->n = (int64_t)dims[0];
    ds->bytes = (size_t)dims[0] * (size_t)(ds->width) * H5Tget_size(t);
    ds->off = H5Dget_offset(d);
    if (!read_i64(d, "crc32c", &crc) || crc < 0 || crc > UINT32_MAX)
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' has no checksum", path, rank, ds->name);
    ds->crc = (uint32_t)crc;
    if (st == SHIRO_OK && ds->n > 0 && (ds->off == HADDR_UNDEF || H5Dget_storage_size(d) != ds->bytes))
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' has no storage of the right size", path, rank, ds->name);
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Dclose(d);
  return st;
}

static shiro_status read_rank_attrs(hid_t g, const char *path, int32_t rank, prog_rank *pr, shiro_error *err) {
  int64_t r = -1, stages = -1;
  if (!read_i64(g, "rank", &r) || !read_i64(g, "stages", &stages) || !read_i64(g, "c_first", &pr->c_first) ||
      !read_i64(g, "c_rows", &pr->c_rows) || !read_i64(g, "b_first", &pr->b_first) ||
      !read_i64(g, "b_rows", &pr->b_rows) || !read_i64(g, "s_rows", &pr->s_rows) || !read_i64(g, "r_rows", &pr->r_rows))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d group lacks an attribute", path, rank);
  int64_t digest = 0;
  if (!read_i64(g, "pattern_digest", &digest))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d group lacks 'pattern_digest'", path, rank);
  pr->pattern_digest = (uint64_t)digest;
  if (r != rank || stages < 0 || stages > 64)
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d group says rank %lld, %lld stages", path, rank, (long long)r,
                      (long long)stages);
  pr->rank = rank;
  pr->nstages = (int32_t)stages;
  return SHIRO_OK;
}

/* Maps the file bytes [lo, hi) and points the program's arrays into it.
 * Every array's extent is checked against the file's size first, without
 * overflow (a damaged offset near 2^64 must not wrap past the check). */
static shiro_status map_range(const char *path, dset_loc *ds, int nds, prog_rank *pr, plan_mapping *map,
                              shiro_error *err) {
  int any = 0;
  for (int i = 0; i < nds; i++) any |= ds[i].n > 0;
  if (!any) return SHIRO_OK; /* every array empty */
  int fd = open(path, O_RDONLY);
  if (fd < 0) return shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(e));
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < nds; i++) {
    if (ds[i].n == 0) continue;
    if (!plan_extent_inside(ds[i].off, ds[i].bytes, (uint64_t)sb.st_size)) {
      close(fd);
      return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: rank %d dataset '%s' (offset %llu, %zu bytes) lies outside the file of %llu "
                                               "bytes (truncated or damaged?)",
                        path, pr->rank, ds[i].name, (unsigned long long)ds[i].off, ds[i].bytes,
                        (unsigned long long)sb.st_size);
    }
    if (ds[i].off < lo) lo = ds[i].off;
    if (ds[i].off + ds[i].bytes > hi) hi = ds[i].off + ds[i].bytes; /* no wrap: inside the file */
  }
  long page = sysconf(_SC_PAGESIZE);
  uint64_t start = lo - lo % (uint64_t)page;
  void *addr = mmap(NULL, (size_t)(hi - start), PROT_READ, MAP_SHARED, fd, (off_t)start);
  close(fd);
  if (addr == MAP_FAILED) return shiro_fail(err, SHIRO_ERR_IO, "%s: mmap failed: %s", path, strerror(errno));
  map->addr = addr;
  map->len = (size_t)(hi - start);
  void **dst[PROG_NARRAYS] = {(void **)&pr->ops, (void **)&pr->xchg, (void **)&pr->ptr, (void **)&pr->col,
                              (void **)&pr->val, (void **)&pr->rows, (void **)&pr->cert, (void **)&pr->c_global,
                              (void **)&pr->b_global, (void **)&pr->a_ptr, (void **)&pr->a_col, (void **)&pr->a_val,
                              (void **)&pr->val_src};
  for (int i = 0; i < nds; i++) {
    if (ds[i].n == 0) {
      *dst[i] = NULL;
      continue;
    }
    if ((ds[i].off - start) % 8 != 0) {
      plan_file_unmap(map);
      return shiro_fail(err, SHIRO_ERR_FORMAT, "%s: dataset '%s' is not 8-byte aligned", path, ds[i].name);
    }
    *dst[i] = (char *)addr + (ds[i].off - start);
  }
  return SHIRO_OK;
}

/* Compares the CRC32C of array a with the stored one. */
static shiro_status verify_array(const prog_rank *pr, int a, const char *path, shiro_error *err) {
  size_t bytes;
  const void *p = prog_array(pr, a, &bytes);
  uint32_t crc = crc32c(0, p, bytes);
  if (crc != pr->crc[a])
    return shiro_fail(err, SHIRO_ERR_FORMAT, "%s%srank %d dataset '%s' is damaged (CRC32C %08x, stored %08x)", path ? path : "",
                      path ? ": " : "", pr->rank, prog_array_name(a), crc, pr->crc[a]);
  return SHIRO_OK;
}

shiro_status plan_verify_checksums(const prog_rank *pr, shiro_error *err) {
  for (int a = 0; a < PROG_NARRAYS; a++) {
    shiro_status st = verify_array(pr, a, NULL, err);
    if (st != SHIRO_OK) return st;
  }
  return SHIRO_OK;
}

/* An open plan file: the envelope checked, HDF5 open, the root attributes read. */
struct plan_reader {
  char *path; /* owned copy, names the file in messages */
  hid_t f; /* the HDF5 file, read-only */
  prog_meta meta; /* its root attributes */
};

shiro_status plan_reader_open(const char *path, plan_reader **rd, prog_meta *meta, shiro_error *err) {
  *rd = NULL;
  shiro_status st = plan_envelope_check(path, err); /* a damaged file never reaches libhdf5 */
  if (st != SHIRO_OK) return st;
  plan_reader *r = calloc(1, sizeof *r);
  char *copy = strdup(path);
  if (!r || !copy) {
    free(r);
    free(copy);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  }
  h5_quiet q = h5_quiet_begin();
  r->path = copy;
  r->f = h5_open_readonly(path);
  st = r->f < 0 ? shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open as an HDF5 file (%s)", path,
                             access(path, R_OK) == 0 ? "not HDF5 or damaged" : strerror(errno))
                : read_meta(r->f, path, &r->meta, err);
  h5_quiet_end(q);
  if (st != SHIRO_OK) {
    plan_reader_close(r);
    return st;
  }
  if (meta) *meta = r->meta;
  *rd = r;
  return SHIRO_OK;
}

void plan_reader_close(plan_reader *rd) {
  if (!rd) return;
  if (rd->f >= 0) {
    h5_quiet q = h5_quiet_begin();
    H5Fclose(rd->f);
    h5_quiet_end(q);
  }
  free(rd->path);
  free(rd);
}

shiro_status plan_reader_map_rank(plan_reader *rd, int32_t rank, prog_rank *pr, plan_mapping *map, shiro_error *err) {
  memset(pr, 0, sizeof *pr);
  memset(map, 0, sizeof *map);
  const char *path = rd->path;
  const prog_meta *meta = &rd->meta;
  shiro_status st = SHIRO_OK;
  if (rank < 0 || rank >= meta->ranks)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "%s: rank %d requested, the plan has ranks 0..%d", path, rank, meta->ranks - 1);
  h5_quiet q = h5_quiet_begin();
  char name[32];
  snprintf(name, sizeof name, "rank_%06d", rank);
  hid_t g = H5Gopen2(rd->f, name, H5P_DEFAULT);
  if (g < 0) {
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "%s: group '%s' is missing", path, name);
    goto done;
  }
  SHIRO_CHECK_GOTO(read_rank_attrs(g, path, rank, pr, err), st);
  dset_loc ds[PROG_NARRAYS] = {{"ops", H5T_NATIVE_INT64, PROG_OP_WIDTH, 0, 0, 0, 0},
                               {"xchg", H5T_NATIVE_INT64, PROG_X_WIDTH, 0, 0, 0, 0},
                               {"ptr", H5T_NATIVE_INT64, 1, 0, 0, 0, 0},
                               {"col", H5T_NATIVE_INT32, 1, 0, 0, 0, 0},
                               {"val", H5T_NATIVE_DOUBLE, 1, 0, 0, 0, 0},
                               {"rows", H5T_NATIVE_INT32, 1, 0, 0, 0, 0},
                               {"cert", H5T_NATIVE_INT64, 2, 0, 0, 0, 0},
                               {"c_global", H5T_NATIVE_INT64, 1, 0, 0, 0, 0},
                               {"b_global", H5T_NATIVE_INT64, 1, 0, 0, 0, 0},
                               {"a_ptr", H5T_NATIVE_INT64, 1, 0, 0, 0, 0},
                               {"a_col", H5T_NATIVE_INT64, 1, 0, 0, 0, 0},
                               {"a_val", H5T_NATIVE_DOUBLE, 1, 0, 0, 0, 0},
                               {"val_src", H5T_NATIVE_INT64, 1, 0, 0, 0, 0}};
  /* A 2.0 plan has the first nine; from 2.1 on every one is required. Their empty stand-ins
   * (n = 0, CRC32C of nothing = 0) make a 2.0 rank's program the one it always was. */
  const int narrays = meta->version_minor >= 1 ? PROG_NARRAYS : PROG_NARRAYS_2_0;
  for (int i = 0; i < narrays; i++) SHIRO_CHECK_GOTO(locate(g, path, rank, &ds[i], err), st);
  pr->nops = ds[0].n;
  pr->nx = ds[1].n;
  pr->nptr = ds[2].n;
  pr->ncol = ds[3].n;
  pr->nval = ds[4].n;
  pr->nrowidx = ds[5].n;
  pr->ncert = ds[6].n;
  pr->ncglobal = ds[7].n;
  pr->nbglobal = ds[8].n;
  pr->naptr = ds[PA_APTR].n;
  pr->nacol = ds[PA_ACOL].n;
  pr->naval = ds[PA_AVAL].n;
  pr->nvalsrc = ds[PA_VALSRC].n;
  for (int i = 0; i < PROG_NARRAYS; i++) pr->crc[i] = ds[i].crc;
  H5Gclose(g);
  g = -1;
  SHIRO_CHECK_GOTO(map_range(path, ds, PROG_NARRAYS, pr, map, err), st);
  /* Cheap integrity check at open: the arrays that steer control flow. */
  for (int a = PA_OPS; a <= PA_XCHG && st == SHIRO_OK; a++) st = verify_array(pr, a, path, err);
done:
  if (g >= 0) H5Gclose(g);
  h5_quiet_end(q);
  if (st != SHIRO_OK) {
    plan_file_unmap(map);
    memset(pr, 0, sizeof *pr);
  }
  return st;
}

shiro_status plan_file_map_rank(const char *path, int32_t rank, prog_meta *meta, prog_rank *pr,
                                plan_mapping *map, shiro_error *err) {
  memset(pr, 0, sizeof *pr);
  memset(map, 0, sizeof *map);
  plan_reader *rd = NULL;
  shiro_status st = plan_reader_open(path, &rd, meta, err);
  if (st == SHIRO_OK) st = plan_reader_map_rank(rd, rank, pr, map, err);
  plan_reader_close(rd);
  return st;
}

void plan_file_unmap(plan_mapping *map) {
  if (map && map->addr) munmap(map->addr, map->len);
  if (map) memset(map, 0, sizeof *map);
}
