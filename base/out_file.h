/* out_file.h — an output path written safely: open, write, then commit or abandon.
 *
 * What the path names decides how it is written:
 *  - nothing, or a regular file: a temporary file "TARGET.tmp.PID" (".N"
 *    appended if that name is taken) is created beside it, written, fsynced,
 *    renamed onto TARGET, and the directory fsynced, so that TARGET is the
 *    old file or the complete new one, even after a power cut;
 *  - a symbolic link: followed (every hop) to TARGET, which is then written
 *    as above; the link itself stays a link;
 *  - a character or block device, or a FIFO: written in place, and its
 *    errors reported (ENOSPC from /dev/full is a failure naming the path).
 *    A writer that needs a regular file (HDF5 seeks and reopens by name:
 *    OUT_FILE_SEEKABLE) writes a temporary in $TMPDIR (or /tmp) whose bytes
 *    the commit copies into the device or FIFO;
 *  - a directory or a socket: refused.
 * Nothing is ever removed or renamed over but this module's own temporary
 * file: a failure or an abandon leaves TARGET as it was (a device or FIFO
 * written in place may have received part of the bytes).
 *
 * Local; not thread-safe per object (one writer at a time). */
#ifndef SHIRO_OUT_FILE_H
#define SHIRO_OUT_FILE_H

#include <stdio.h>

#include "shiro_status.h"

/* An output being written; opaque. */
typedef struct out_file out_file;

/* Flags of out_file_open. */
enum {
  OUT_FILE_SEEKABLE = 1 /* the writer needs a regular file by name (out_file_temp), even for a device or FIFO */
};

/* Opens `path` for writing as described above. A FIFO written in place
 * (without OUT_FILE_SEEKABLE) is opened here, which waits for its reader.
 * *o is NULL on failure; SHIRO_ERR_IO with "PATH: what went wrong". */
SHIRO_MUST_CHECK shiro_status out_file_open(out_file **o, const char *path, unsigned flags, shiro_error *err);

/* The temporary regular file to write, for writers that open it by name
 * (HDF5, with H5F_ACC_TRUNC: it exists, empty); NULL when the output is
 * written in place. Owned by o. */
const char *out_file_temp(const out_file *o);

/* A stdio stream on what to write (the temporary, or the device or FIFO),
 * made on first call, owned by o (commit or abandon closes it). NULL only
 * when out of memory. */
FILE *out_file_stream(out_file *o);

/* Finishes the output: flushes and checks every write, fsyncs, renames the
 * temporary onto the target and fsyncs its directory (or copies the
 * temporary into the device or FIFO), then frees o. On failure
 * (SHIRO_ERR_IO, naming the path and the reason) the temporary is removed
 * and the target is untouched, except when only the directory's fsync
 * failed: the new file is then in place, but not yet durable. */
SHIRO_MUST_CHECK shiro_status out_file_commit(out_file *o, shiro_error *err);

/* Drops the output: closes it, removes the temporary, frees o. NULL is a no-op. */
void out_file_abandon(out_file *o);

/* Removes the temporary file of every out_file open in this process.
 * Async-signal-safe: for a tool's handler of SIGINT, SIGTERM, ... (the
 * process must exit afterwards: the objects still think they own them). */
void out_file_remove_temps(void);

#endif
