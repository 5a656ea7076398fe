/* fuzz_util.h — helpers shared by the libFuzzer harnesses: a scratch file in
 * RAM that the readers open by path, and a crash-with-message macro.
 *
 * The readers under test take a path (mm_read, plan_file_read_meta,
 * plan_file_map_rank), so every harness rewrites one file per process under
 * /dev/shm (tmpfs: no disk traffic; $TMPDIR or /tmp when /dev/shm is
 * missing) and hands them its name: the API stays as it is. Not a memfd:
 * HDF5 resolves the real path of a file it opens, and /proc/self/fd/N of a
 * memfd resolves to "/memfd:NAME (deleted)", which it then cannot open. The
 * file is removed at exit; a crash (abort, sanitizer report) leaves it behind.
 * Include this header first, after #define _GNU_SOURCE. */
#ifndef SHIRO_FUZZ_UTIL_H
#define SHIRO_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* A harness invariant broke: print where and why, then abort so that
 * libFuzzer records the input as a crash. Never used for input errors. */
#define FUZZ_ASSERT(cond, ...)                                               \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "FUZZ_ASSERT %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      abort();                                                               \
    }                                                                        \
  } while (0)

/* One scratch file, reused across inputs. */
typedef struct fuzz_file {
  int fd; /* open read-write, -1 before fuzz_file_open */
  char path[256]; /* its name */
} fuzz_file;

static fuzz_file *fuzz_files[4];

static inline void fuzz_files_remove(void) {
  for (int i = 0; i < 4; i++)
    if (fuzz_files[i]) unlink(fuzz_files[i]->path);
}

/* Creates the scratch file (once per process; aborts if it cannot). f must
 * live until exit (a static). At most 4 per process. */
static inline void fuzz_file_open(fuzz_file *f, const char *name) {
  const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR")
                                                                                  : "/tmp";
  snprintf(f->path, sizeof f->path, "%s/shiro-fuzz-%s-XXXXXX", dir, name);
  f->fd = mkostemp(f->path, O_CLOEXEC);
  FUZZ_ASSERT(f->fd >= 0, "cannot create %s", f->path);
  int i = 0;
  while (i < 4 && fuzz_files[i]) i++;
  FUZZ_ASSERT(i < 4, "too many scratch files");
  if (i == 0) atexit(fuzz_files_remove);
  fuzz_files[i] = f;
}

/* Replaces the file's content with data[0 .. size-1]. */
static inline void fuzz_file_set(fuzz_file *f, const uint8_t *data, size_t size) {
  FUZZ_ASSERT(ftruncate(f->fd, 0) == 0, "ftruncate failed");
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(f->fd, data + done, size - done, (off_t)done);
    FUZZ_ASSERT(w > 0, "pwrite failed");
    done += (size_t)w;
  }
}

#endif
