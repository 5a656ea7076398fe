/* plan_write.c — writes a plan as one HDF5 file, atomically and durably (out_file.h:
 * temporary file, fsync, rename, fsync of the directory; devices and FIFOs get a copy). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "h5_util.h"
#include "out_file.h"
#include "plan_envelope.h"
#include "plan_file.h"
#include "shiro_config.h"

/* Contiguous, early-allocated, never-filled: the dataset's bytes sit at one
 * file offset that the reader can map. */
static hid_t mappable_dcpl(void) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (dcpl < 0) return dcpl;
  /* No modification times: the same plan gives the same bytes. */
  if (H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 || H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
    H5Pclose(dcpl);
    return -1;
  }
  return dcpl;
}

static int attr_i64(hid_t loc, const char *name, int64_t v);

/* Creates one dataset of n rows × width columns (width 1 → 1-D) with crc as its attribute
 * "crc32c", writes buf into it (buf NULL: declared only, its bytes left for plan_rank_write_raw),
 * adds its stored bytes to x and gives its file offset in *off (UINT64_MAX when n is 0: no
 * stored bytes); dcpl: mappable_dcpl's. */
static int write_array(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int64_t n, int width,
                       const void *buf, hid_t dcpl, uint32_t crc, plan_extents *x, uint64_t *off) {
  hsize_t dims[2] = {(hsize_t)n, (hsize_t)width};
  hid_t sp = H5Screate_simple(width > 1 ? 2 : 1, dims, NULL);
  hid_t d = sp >= 0 ? H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
  int ok = d >= 0 && (n == 0 || !buf || H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0) &&
      attr_i64(d, "crc32c", (int64_t)crc) && plan_extents_add(x, d);
  haddr_t at = ok && n > 0 ? H5Dget_offset(d) : HADDR_UNDEF;
  ok = ok && (n == 0 || at != HADDR_UNDEF); /* early allocation: every non-empty dataset has its place */
  *off = at == HADDR_UNDEF ? UINT64_MAX : (uint64_t)at;
  if (d >= 0) H5Dclose(d);
  if (sp >= 0) H5Sclose(sp);
  return ok;
}

static int write_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *v) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = sp >= 0 ? H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int ok = a >= 0 && H5Awrite(a, mtype, v) >= 0;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return ok;
}

static int attr_i64(hid_t loc, const char *name, int64_t v) {
  return write_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static int attr_str(hid_t loc, const char *name, const char *s) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return 0;
  int ok = H5Tset_size(t, strlen(s) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 &&
      write_attr(loc, name, t, t, s);
  H5Tclose(t);
  return ok;
}

static int write_root(hid_t f, const prog_meta *meta) {
  return attr_str(f, "format", PLAN_FORMAT_NAME) && attr_i64(f, "version_major", PLAN_VERSION_MAJOR) &&
      attr_i64(f, "version_minor", PLAN_VERSION_MINOR) && attr_i64(f, "ranks", meta->ranks) &&
      attr_i64(f, "gpus_per_node", meta->gpus_per_node) && attr_i64(f, "m", meta->m) &&
      attr_i64(f, "k", meta->k) && attr_i64(f, "nnz", meta->nnz) &&
      attr_str(f, "value_type", "float64") && attr_str(f, "strategy", meta->strategy) &&
      attr_str(f, "partition", meta->partition) && attr_i64(f, "matrix_digest", (int64_t)meta->matrix_digest) &&
      attr_str(f, "writer", "shiro " SHIRO_VERSION);
}

/* Creates rank pr->rank's group with its attributes and its datasets, each with crc[a] as its
 * CRC32C, records their extents in x and their offsets in off (write_array); with with_data,
 * writes pr's arrays into them (plan_writer_rank), else leaves them unwritten
 * (plan_writer_declare: pr is a shape, its array pointers unused). */
static int write_rank(hid_t f, const prog_rank *pr, const uint32_t crc[PROG_NARRAYS], int with_data, plan_extents *x,
                      uint64_t off[PROG_NARRAYS]) {
  char name[32];
  snprintf(name, sizeof name, "rank_%06d", pr->rank);
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  if (gcpl < 0 || H5Pset_obj_track_times(gcpl, 0) < 0) return 0;
  hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (g < 0) return 0;
  const hid_t ftypes[PROG_NARRAYS] = {H5T_STD_I64LE, H5T_STD_I64LE, H5T_STD_I64LE, H5T_STD_I32LE, H5T_IEEE_F64LE,
                                      H5T_STD_I32LE, H5T_STD_I64LE, H5T_STD_I64LE, H5T_STD_I64LE,
                                      H5T_STD_I64LE, H5T_STD_I64LE, H5T_IEEE_F64LE, H5T_STD_I64LE};
  const hid_t mtypes[PROG_NARRAYS] = {H5T_NATIVE_INT64, H5T_NATIVE_INT64, H5T_NATIVE_INT64, H5T_NATIVE_INT32, H5T_NATIVE_DOUBLE,
                                      H5T_NATIVE_INT32, H5T_NATIVE_INT64, H5T_NATIVE_INT64, H5T_NATIVE_INT64,
                                      H5T_NATIVE_INT64, H5T_NATIVE_INT64, H5T_NATIVE_DOUBLE, H5T_NATIVE_INT64};
  const int64_t rows[PROG_NARRAYS] = {pr->nops, pr->nx, pr->nptr, pr->ncol, pr->nval, pr->nrowidx, pr->ncert,
                                      pr->ncglobal, pr->nbglobal, pr->naptr, pr->nacol, pr->naval, pr->nvalsrc};
  const int width[PROG_NARRAYS] = {PROG_OP_WIDTH, PROG_X_WIDTH, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1};
  int ok = attr_i64(g, "rank", pr->rank) && attr_i64(g, "stages", pr->nstages) &&
      attr_i64(g, "c_first", pr->c_first) && attr_i64(g, "c_rows", pr->c_rows) &&
      attr_i64(g, "b_first", pr->b_first) && attr_i64(g, "b_rows", pr->b_rows) &&
      attr_i64(g, "s_rows", pr->s_rows) && attr_i64(g, "r_rows", pr->r_rows) &&
      attr_i64(g, "pattern_digest", (int64_t)pr->pattern_digest);
  hid_t dcpl = mappable_dcpl();
  ok = ok && dcpl >= 0;
  for (int a = 0; ok && a < PROG_NARRAYS; a++) {
    size_t bytes;
    const void *buf = with_data ? prog_array(pr, a, &bytes) : NULL;
    ok = write_array(g, prog_array_name(a), ftypes[a], mtypes[a], rows[a], width[a], buf, dcpl, crc[a], x, &off[a]);
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Gclose(g);
  return ok;
}

void plan_file_exit_quietly(void) {
  H5dont_atexit();
}

void plan_file_temp_name(const char *path, long pid, char *buf, size_t len) {
  snprintf(buf, len, "%s.tmp.%ld", path, pid);
}

/* An open plan file being written, rank after rank, or its ranks declared in any order. */
struct plan_writer {
  char *path; /* the final name, for messages */
  out_file *out; /* the output (its temporary regular file is what HDF5 writes); NULL once committed */
  hid_t f, fapl; /* the open file (-1 once closed) */
  int32_t ranks; /* ranks the plan has */
  int32_t ndone; /* ranks written or declared */
  uint8_t *done; /* [ranks / 8 + 1] bit r: rank r written or declared */
  uint64_t ub; /* the user block's bytes */
  plan_extents ext; /* every dataset's stored bytes, as written (the envelope's table) */
};

/* Closes everything and drops the output (its temporary removed), any state. */
static void writer_discard(plan_writer *w) {
  if (w->f >= 0) H5Fclose(w->f);
  if (w->fapl >= 0) H5Pclose(w->fapl);
  out_file_abandon(w->out);
  free(w->ext.e);
  free(w->done);
  free(w->path);
  free(w);
}

shiro_status plan_writer_open(plan_writer **out, const char *path, const prog_meta *meta, shiro_error *err) {
  *out = NULL;
  plan_writer *w = calloc(1, sizeof *w);
  if (w) {
    w->f = w->fapl = -1;
    w->path = strdup(path);
    w->done = calloc((size_t)(meta->ranks > 0 ? meta->ranks : 0) / 8 + 1, 1);
  }
  if (!w || !w->path || !w->done) {
    if (w) {
      free(w->path);
      free(w->done);
      free(w);
    }
    return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  }
  w->ranks = meta->ranks;
  w->ub = plan_envelope_userblock(meta->ranks, PROG_NARRAYS);
  /* HDF5 writes a regular file by name: beside the target (renamed onto it),
   * or for a device or FIFO in $TMPDIR (copied into it at the end). */
  shiro_status st = out_file_open(&w->out, path, OUT_FILE_SEEKABLE, err);
  if (st != SHIRO_OK) {
    writer_discard(w);
    return st;
  }
  h5_quiet q = h5_quiet_begin();
  w->fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* 64-byte alignment: every mapped array starts on a cache line. */
  if (w->fapl < 0 || H5Pset_alignment(w->fapl, 1, 64) < 0) {
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot set up HDF5", path);
    goto done;
  }
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  /* A user block for the integrity envelope (plan_envelope.h), sealed once HDF5 is done. */
  w->f = fcpl >= 0 && H5Pset_obj_track_times(fcpl, 0) >= 0 &&
          H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) >= 0 &&
          H5Pset_userblock(fcpl, w->ub) >= 0
      ? H5Fcreate(out_file_temp(w->out), H5F_ACC_TRUNC, fcpl, w->fapl)
      : -1;
  if (fcpl >= 0) H5Pclose(fcpl);
  if (w->f < 0)
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot create the plan file %s with HDF5", path, out_file_temp(w->out));
  else if (!write_root(w->f, meta))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: writing the plan failed (disk full?)", path);
done:
  if (st == SHIRO_OK) *out = w;
  else writer_discard(w);
  h5_quiet_end(q);
  return st;
}

/* Whether rank r (0 <= r < w->ranks) was written or declared. */
static int is_done(const plan_writer *w, int32_t r) {
  return w->done[r / 8] >> (r % 8) & 1;
}

/* write_rank into w, HDF5 silenced, its failure a status; on success rank pr->rank is done and
 * off (may be NULL) holds its datasets' offsets. */
static shiro_status put_rank(plan_writer *w, const prog_rank *pr, const uint32_t crc[PROG_NARRAYS], int with_data,
                             uint64_t *off, shiro_error *err) {
  uint64_t at[PROG_NARRAYS];
  h5_quiet q = h5_quiet_begin();
  int ok = write_rank(w->f, pr, crc, with_data, &w->ext, at);
  h5_quiet_end(q);
  if (!ok && w->ext.failed) return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory writing the plan", w->path);
  if (!ok) return shiro_fail(err, SHIRO_ERR_IO, "%s: writing the plan failed (disk full?)", w->path);
  w->done[pr->rank / 8] |= (uint8_t)(1u << (pr->rank % 8));
  w->ndone++;
  if (off) memcpy(off, at, sizeof at);
  return SHIRO_OK;
}

shiro_status plan_writer_rank(plan_writer *w, const prog_rank *pr, shiro_error *err) {
  if (pr->rank != w->ndone || w->ndone >= w->ranks || is_done(w, pr->rank))
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: rank %d written out of order (expected %d of %d)", w->path,
                      pr->rank, w->ndone, w->ranks);
  prog_rank sealed = *pr; /* the CRCs of exactly the bytes written */
  prog_rank_seal(&sealed);
  return put_rank(w, pr, sealed.crc, 1, NULL, err);
}

shiro_status plan_writer_declare(plan_writer *w, const prog_rank *shape, uint64_t off[PROG_NARRAYS], shiro_error *err) {
  if (shape->rank < 0 || shape->rank >= w->ranks)
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: rank %d declared in a plan of %d ranks", w->path, shape->rank,
                      w->ranks);
  if (is_done(w, shape->rank))
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: rank %d declared twice", w->path, shape->rank);
  return put_rank(w, shape, shape->crc, 0, off, err);
}

const char *plan_writer_temp_path(const plan_writer *w) {
  return out_file_temp(w->out);
}

shiro_status plan_writer_close(plan_writer *w, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  h5_quiet q = h5_quiet_begin();
  if (w->ndone != w->ranks) {
    int32_t missing = 0;
    while (is_done(w, missing)) missing++;
    st = shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: closed after %d of %d ranks (rank %d missing)", w->path, w->ndone,
                    w->ranks, missing);
  } else {
    int closed = H5Fclose(w->f) >= 0;
    w->f = -1;
    if (!closed) st = shiro_fail(err, SHIRO_ERR_IO, "%s: writing the plan failed (disk full?)", w->path);
  }
  if (st == SHIRO_OK) st = plan_envelope_seal_extents(out_file_temp(w->out), w->ub, &w->ext, err);
  /* fsync, rename onto the target, fsync of its directory (or the copy into a device / FIFO) */
  if (st == SHIRO_OK) {
    out_file *o = w->out;
    w->out = NULL; /* committed or removed by out_file_commit */
    st = out_file_commit(o, err);
  }
  writer_discard(w);
  h5_quiet_end(q);
  return st;
}

void plan_writer_abort(plan_writer *w) {
  if (!w) return;
  h5_quiet q = h5_quiet_begin();
  writer_discard(w);
  h5_quiet_end(q);
}

shiro_status plan_file_write(const char *path, const prog_meta *meta, const prog_rank *ranks,
                             shiro_error *err) {
  plan_writer *w;
  shiro_status st = plan_writer_open(&w, path, meta, err);
  for (int32_t r = 0; st == SHIRO_OK && r < meta->ranks; r++) st = plan_writer_rank(w, &ranks[r], err);
  if (st != SHIRO_OK) {
    plan_writer_abort(w);
    return st;
  }
  return plan_writer_close(w, err);
}
