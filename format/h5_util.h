/* h5_util.h — how format/ calls libhdf5 where the writer, the reader and the
 * envelope would otherwise each write it: silenced error printing, and a
 * read-only open. Internal to format/ (static inline, nothing exported). */
#ifndef SHIRO_H5_UTIL_H
#define SHIRO_H5_UTIL_H

#include <hdf5.h>

/* HDF5's error printing, off for the span of one format call: the library
 * never prints, it reports through shiro_error. The setting is per thread
 * (a thread-safe libhdf5), and a planner calls the writer from whichever
 * thread finished a rank, so each call silences and restores its own. */
typedef struct h5_quiet {
  H5E_auto2_t fn;
  void *data;
} h5_quiet;

/* Saves the current error handler and turns printing off. */
static inline h5_quiet h5_quiet_begin(void) {
  h5_quiet q;
  H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return q;
}

/* Restores the handler h5_quiet_begin saved. */
static inline void h5_quiet_end(h5_quiet q) { H5Eset_auto2(H5E_DEFAULT, q.fn, q.data); }

/* Opens an HDF5 file read-only without file locking (many ranks open one
 * file at once; a reader never writes). Returns the file id, or < 0. */
static inline hid_t h5_open_readonly(const char *path) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return -1;
  H5Pset_file_locking(fapl, 0, 1);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  return f;
}

#endif
