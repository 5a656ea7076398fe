/* plan_file.h — the plan file: writer and per-rank memory-mapping reader.
 * This is the only code that knows the file layout (schema: format/README.md). */
#ifndef SHIRO_PLAN_FILE_H
#define SHIRO_PLAN_FILE_H

#include <stddef.h>

#include "program.h"
#include "shiro_status.h"

#define PLAN_FORMAT_NAME "shiro-plan"
#define PLAN_VERSION_MAJOR 2
#define PLAN_VERSION_MINOR 1

/* Writes the whole plan (meta + one program per rank) to `path` atomically
 * and durably (out_file.h): into a temporary file beside it (beside a
 * symlink's target, which is replaced and the link kept), fsynced, renamed
 * to it only when complete, and its directory fsynced; a device or FIFO
 * gets the finished file's bytes copied in (through a temporary in $TMPDIR).
 * On failure nothing is left under `path` (an older file there is untouched). */
shiro_status plan_file_write(const char *path, const prog_meta *meta, const prog_rank *ranks,
                             shiro_error *err);

/* The same, one rank at a time, so that a planner can free each program as
 * soon as it is written: open with the root facts, write ranks 0 .. R-1 in
 * order, then close (sealed and renamed into place) or abort (the temporary
 * file removed). The file is byte for byte the one plan_file_write gives. */
typedef struct plan_writer plan_writer;
shiro_status plan_writer_open(plan_writer **w, const char *path, const prog_meta *meta, shiro_error *err);
shiro_status plan_writer_rank(plan_writer *w, const prog_rank *pr, shiro_error *err);
/* Finishes the file; on failure nothing is left under the path. Frees w either way. */
shiro_status plan_writer_close(plan_writer *w, shiro_error *err);
/* Drops an unfinished file and frees w. NULL is a no-op. */
void plan_writer_abort(plan_writer *w);

/* For a program that writes plans and then exits (shiro-plan): keeps HDF5
 * from tidying up at exit. After a write that failed part way (the disk
 * full), libhdf5 1.10 cannot close the file, and its exit handler, trying
 * again, crashes; the temporary file is already removed and the error
 * reported by then. Call before any other plan_file function. */
void plan_file_exit_quietly(void);

/* The temporary name plan_file_write uses for `path` in process `pid`
 * ("PATH.tmp.PID") when `path` is a regular file or absent, not a symlink
 * (the name out_file.h tries first). For tests; a tool removes the
 * temporaries when interrupted with out_file_remove_temps. */
void plan_file_temp_name(const char *path, long pid, char *buf, size_t len);

/* Reads the root attributes of a plan file (metadata only). */
shiro_status plan_file_read_meta(const char *path, prog_meta *meta, shiro_error *err);

/* A rank's arrays mapped read-only from the file. */
typedef struct plan_mapping {
  void *addr; /* start of the mapping (page-aligned), NULL if nothing was mapped */
  size_t len; /* bytes mapped */
} plan_mapping;

/* Opens `path`, checks its root attributes and the layout of rank `rank`'s
 * datasets (contiguous, unfiltered, native little-endian types, expected
 * shapes), and maps only that rank's arrays: *pr's pointers point into the
 * mapping (never write through them). Reads metadata only. Does not check
 * the indices inside the arrays: see plan_check_rank. */
shiro_status plan_file_map_rank(const char *path, int32_t rank, prog_meta *meta, prog_rank *pr,
                                plan_mapping *map, shiro_error *err);

/* An open plan file, for a reader that maps many ranks (shiro-plan-dump, a
 * test): the envelope is checked and the root attributes read once, at open,
 * so that mapping R ranks costs O(the file), not R times the envelope's
 * pass over all the metadata (which grows with R). */
typedef struct plan_reader plan_reader;

/* Checks `path`'s envelope, opens it with HDF5 and reads its root attributes
 * into *meta (may be NULL). *rd is NULL on failure; close it with
 * plan_reader_close. */
shiro_status plan_reader_open(const char *path, plan_reader **rd, prog_meta *meta, shiro_error *err);

/* plan_file_map_rank on an open reader: maps rank `rank`'s arrays (the
 * mapping outlives the reader; unmap it with plan_file_unmap). O(the rank's
 * metadata), plus the CRC32C of its ops and xchg. */
shiro_status plan_reader_map_rank(plan_reader *rd, int32_t rank, prog_rank *pr, plan_mapping *map, shiro_error *err);

/* Closes HDF5's file; the mappings made stay valid. NULL is a no-op. */
void plan_reader_close(plan_reader *rd);

/* Recomputes the CRC32C of every array of a mapped program and compares it
 * with the stored one (O(size of the program)). plan_file_map_rank already
 * checks the small arrays (ops, xchg). */
shiro_status plan_verify_checksums(const prog_rank *pr, shiro_error *err);

/* Unmaps a mapping made by plan_file_map_rank; a zeroed mapping is a no-op. */
void plan_file_unmap(plan_mapping *map);

/* Checks that every index of a program stays inside its buffers and pools
 * (ops, pointers, rows, exchange records), so that a damaged file can never
 * make a runtime read or write out of bounds, and that no two exchange
 * records share (stage, peer, direction, kind) (R4: the runtime's posting
 * order and MPI tags rely on it). O(size of the program + nx log nx). */
shiro_status plan_check_rank(const prog_meta *meta, const prog_rank *pr, shiro_error *err);

#endif
