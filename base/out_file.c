/* out_file.c — output paths written safely (contract in out_file.h): regular
 * files replaced by a durable rename, symlinks followed, devices and FIFOs
 * written in place, and nothing removed that this module did not create. */
#define _GNU_SOURCE /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "out_file.h"

struct out_file {
  char *path; /* the path as given, for messages */
  char *target; /* where the bytes go: path, or the last target of its symlinks */
  char *tmp; /* the temporary regular file this module created; NULL when written in place */
  mode_t mode; /* the target's file type: 0 (none yet or regular), S_IFCHR, S_IFBLK or S_IFIFO */
  int fd; /* open on tmp (read-write), or on the target when written in place; -1 once closed */
  FILE *stream; /* stdio stream on fd once out_file_stream made it, else NULL */
  int slot; /* index of tmp in the signal registry, -1 if not registered */
};

/* Temporaries of this process, for out_file_remove_temps in a signal
 * handler: fixed buffers (never freed), each slot 0 free, 1 being filled,
 * 2 holding a name to remove. */
#define OUT_SLOTS 16
static struct {
  int state;
  char name[4096];
} slots[OUT_SLOTS];

/* Registers `name` for removal on a signal; returns its slot, -1 if none is free (or too long). */
static int slot_claim(const char *name) {
  if (strlen(name) >= sizeof slots[0].name) return -1;
  for (int i = 0; i < OUT_SLOTS; i++) {
    int expect = 0;
    if (__atomic_compare_exchange_n(&slots[i].state, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      strcpy(slots[i].name, name);
      __atomic_store_n(&slots[i].state, 2, __ATOMIC_RELEASE);
      return i;
    }
  }
  return -1;
}

static void slot_release(int i) {
  if (i >= 0) __atomic_store_n(&slots[i].state, 0, __ATOMIC_RELEASE);
}

void out_file_remove_temps(void) {
  for (int i = 0; i < OUT_SLOTS; i++)
    if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) == 2) unlink(slots[i].name); /* async-signal-safe */
}

/* The text of symlink `link` (st_size bytes, a hint), made relative to the
 * link's directory when it is relative. NULL with errno set on failure. */
static char *link_target(const char *link, off_t hint) {
  size_t cap = hint > 0 ? (size_t)hint + 1 : 256;
  char *text = NULL;
  for (;;) {
    char *p = realloc(text, cap);
    if (!p) {
      free(text);
      errno = ENOMEM;
      return NULL;
    }
    text = p;
    ssize_t n = readlink(link, text, cap);
    if (n < 0) {
      free(text);
      return NULL;
    }
    if ((size_t)n < cap) {
      text[n] = 0;
      break;
    }
    cap *= 2; /* the link grew, or st_size was 0 */
  }
  const char *slash = strrchr(link, '/');
  if (text[0] == '/' || !slash) return text;
  size_t dir = (size_t)(slash - link) + 1, len = strlen(text);
  char *full = malloc(dir + len + 1);
  if (full) {
    memcpy(full, link, dir);
    memcpy(full + dir, text, len + 1);
  } else errno = ENOMEM;
  free(text);
  return full;
}

/* Follows `path`'s symlinks to *target (malloc'd); *sb and *exists say what is there. */
static shiro_status resolve(const char *path, char **target, struct stat *sb, bool *exists, shiro_error *err) {
  char *cur = strdup(path);
  if (!cur) return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  for (int hops = 0;; hops++) {
    if (lstat(cur, sb) != 0) {
      int e = errno;
      if (e == ENOENT) {
        *exists = false;
        break;
      } /* a new file (or a missing directory: creating it says so) */
      free(cur);
      return shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (!S_ISLNK(sb->st_mode)) {
      *exists = true;
      break;
    }
    if (hops == 40) {
      free(cur);
      return shiro_fail(err, SHIRO_ERR_IO, "%s: %s", path, strerror(ELOOP));
    }
    char *next = link_target(cur, sb->st_size);
    if (!next) {
      int e = errno;
      free(cur);
      return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot read the link: %s", path, strerror(e));
    }
    free(cur);
    cur = next;
  }
  *target = cur;
  return SHIRO_OK;
}

/* Creates the temporary beside the target: "TARGET.tmp.PID", or ".N" after it if taken. */
static shiro_status create_beside(out_file *o, shiro_error *err) {
  size_t len = strlen(o->target) + 48;
  if (!(o->tmp = malloc(len))) return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", o->path);
  for (int n = 0; n < 100; n++) {
    if (n == 0) snprintf(o->tmp, len, "%s.tmp.%ld", o->target, (long)getpid());
    else snprintf(o->tmp, len, "%s.tmp.%ld.%d", o->target, (long)getpid(), n);
    o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd >= 0) return SHIRO_OK;
    if (errno != EEXIST) break;
  }
  int e = errno;
  free(o->tmp);
  o->tmp = NULL;
  return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot create a file there (%s)", o->path, strerror(e));
}

/* Creates the temporary of a device or FIFO target in $TMPDIR (or /tmp). */
static shiro_status create_in_tmpdir(out_file *o, shiro_error *err) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  size_t len = strlen(dir) + 32;
  if (!(o->tmp = malloc(len))) return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", o->path);
  snprintf(o->tmp, len, "%s/shiro-out.XXXXXX", dir);
  o->fd = mkostemp(o->tmp, O_CLOEXEC);
  if (o->fd >= 0) return SHIRO_OK;
  int e = errno;
  shiro_fail(err, SHIRO_ERR_IO, "%s: cannot create a temporary file in %s (%s)", o->path, dir, strerror(e));
  free(o->tmp);
  o->tmp = NULL;
  return SHIRO_ERR_IO;
}

/* Opens a device or FIFO for writing in place (a FIFO waits for its reader). */
static int open_in_place(const char *target) {
  int fd;
  do fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  return fd;
}

/* The temporary, created with the signals that remove it held off until it is registered. */
static shiro_status create_temp(out_file *o, bool beside, shiro_error *err) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  shiro_status st = beside ? create_beside(o, err) : create_in_tmpdir(o, err);
  if (st == SHIRO_OK) o->slot = slot_claim(o->tmp);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return st;
}

/* Closes the stream or descriptor (any state). */
static void close_fd(out_file *o) {
  if (o->stream) fclose(o->stream);
  else if (o->fd >= 0) close(o->fd);
  o->stream = NULL;
  o->fd = -1;
}

/* Frees o, removing the temporary if it is still there. */
static void discard(out_file *o) {
  close_fd(o);
  if (o->tmp) unlink(o->tmp);
  slot_release(o->slot);
  free(o->tmp);
  free(o->target);
  free(o->path);
  free(o);
}

shiro_status out_file_open(out_file **out, const char *path, unsigned flags, shiro_error *err) {
  *out = NULL;
  if (!path || !*path) return shiro_fail(err, SHIRO_ERR_ARG, "no output path");
  out_file *o = calloc(1, sizeof *o);
  if (o) {
    o->fd = -1;
    o->slot = -1;
    o->path = strdup(path);
  }
  if (!o || !o->path) {
    if (o) free(o);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  }
  struct stat sb;
  bool exists = false;
  shiro_status st = resolve(path, &o->target, &sb, &exists, err);
  if (st == SHIRO_OK && exists && S_ISDIR(sb.st_mode))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: is a directory", path);
  else if (st == SHIRO_OK && exists && !S_ISREG(sb.st_mode) && !S_ISCHR(sb.st_mode) && !S_ISBLK(sb.st_mode) &&
           !S_ISFIFO(sb.st_mode))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: not a file, a device or a FIFO", path);
  if (st == SHIRO_OK && exists && !S_ISREG(sb.st_mode)) {
    o->mode = sb.st_mode & S_IFMT;
    if (flags & OUT_FILE_SEEKABLE) st = create_temp(o, false, err); /* copied in at commit */
    else if ((o->fd = open_in_place(o->target)) < 0)
      st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open for writing (%s)", path, strerror(errno));
  } else if (st == SHIRO_OK) {
    st = create_temp(o, true, err);
  }
  if (st != SHIRO_OK) {
    discard(o);
    return st;
  }
  *out = o;
  return SHIRO_OK;
}

const char *out_file_temp(const out_file *o) {
  return o->tmp;
}

FILE *out_file_stream(out_file *o) {
  if (!o->stream && o->fd >= 0) o->stream = fdopen(o->fd, "w");
  return o->stream;
}

/* Flushes and closes what was written (fsync first when durable == true);
 * 0 or the errno of the first failure. */
static int finish_writes(out_file *o, bool durable) {
  int e = 0;
  if (o->stream) {
    errno = 0;
    if (fflush(o->stream) != 0) e = errno ? errno : EIO;
    else if (ferror(o->stream)) e = errno ? errno : EIO;
  }
  if (!e && durable && fsync(o->fd) != 0) e = errno;
  int fd = o->fd;
  FILE *f = o->stream;
  o->stream = NULL;
  o->fd = -1;
  if ((f ? fclose(f) : close(fd)) != 0 && !e) e = errno;
  return e;
}

/* Writes n bytes to fd, resuming after short writes and interruptions; 0 or errno. */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Copies the finished temporary into the device or FIFO; 0 or errno, and
 * *what says which step failed. */
static int copy_in(const out_file *o, const char **what) {
  enum { CHUNK = 1 << 18 };
  int src = -1, dst = -1, e = 0;
  char *buf = malloc(CHUNK);
  *what = "out of memory";
  if (!buf) return ENOMEM;
  *what = "cannot read back its temporary file";
  if ((src = open(o->tmp, O_RDONLY | O_CLOEXEC)) < 0) e = errno;
  *what = "cannot open for writing";
  if (!e && (dst = open_in_place(o->target)) < 0) e = errno;
  while (!e) {
    ssize_t n = read(src, buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    *what = "cannot read back its temporary file";
    if (n <= 0) {
      e = n < 0 ? errno : 0;
      break;
    }
    *what = "write error";
    e = write_all(dst, buf, (size_t)n);
  }
  *what = "write error";
  if (!e && o->mode == S_IFBLK && fsync(dst) != 0) e = errno;
  if (dst >= 0 && close(dst) != 0 && !e) e = errno;
  if (src >= 0) close(src);
  free(buf);
  return e;
}

/* fsync of the directory holding `target`, so that a rename into it survives a
 * power cut; 0 or errno. File systems that cannot sync a directory (EINVAL)
 * and directories we may not open for reading are let be. */
static int sync_dir(const char *target) {
  const char *slash = strrchr(target, '/');
  char *dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
  if (!dir) return ENOMEM;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = 0;
  free(dir);
  if (fd < 0) return errno == EACCES ? 0 : errno;
  if (fsync(fd) != 0 && errno != EINVAL) e = errno;
  close(fd);
  return e;
}

shiro_status out_file_commit(out_file *o, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  bool in_place = o->mode != 0;
  int e = finish_writes(o, o->tmp && !in_place); /* a temporary copied into a device needs no fsync */
  if (e) {
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: write error: %s", o->path, strerror(e));
  } else if (in_place && o->tmp) {
    const char *what;
    if ((e = copy_in(o, &what)) != 0) st = shiro_fail(err, SHIRO_ERR_IO, "%s: %s: %s", o->path, what, strerror(e));
  } else if (!in_place) {
    if (rename(o->tmp, o->target) != 0) {
      e = errno;
      st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot rename %s into place: %s", o->path, o->tmp, strerror(e));
    } else {
      free(o->tmp);
      o->tmp = NULL; /* renamed: nothing to remove */
      if ((e = sync_dir(o->target)) != 0)
        st = shiro_fail(err, SHIRO_ERR_IO, "%s: written, but its directory could not be synced: %s", o->path, strerror(e));
    }
  }
  discard(o);
  return st;
}

void out_file_abandon(out_file *o) {
  if (o) discard(o);
}
