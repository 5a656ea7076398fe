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
/* Finishes the file: every rank written or declared, else SHIRO_ERR_INTERNAL naming a missing
 * rank. On failure nothing is left under the path. Frees w either way. */
shiro_status plan_writer_close(plan_writer *w, shiro_error *err);

/* A distributed planner's writer: P processes, each building the programs of its own ranks,
 * write ONE plan file. Process 0 writes all of HDF5's metadata with this writer (serial
 * HDF5); every process writes its own ranks' array bytes straight into the same temporary
 * file with plain pwrite at offsets process 0 hands out. The result is the plan
 * plan_file_write gives (byte for byte when the ranks are declared in rank order). The order
 * the caller must follow:
 *   1. process 0: plan_writer_open; every process: prog_rank_shape of each of its ranks,
 *      sent to process 0;
 *   2. process 0: plan_writer_declare of every rank, in any order, each exactly once (not
 *      mixed with plan_writer_rank, which takes only the next rank in rank order), sending
 *      each rank's off[] to its owner;
 *   3. every process (process 0 too, for its ranks): fd = open(plan_writer_temp_path(w),
 *      O_WRONLY) (the path process 0 sent), plan_rank_write_raw of each of its ranks, once its
 *      off[] arrived (before or after other ranks' declarations), then fsync(fd) and
 *      close(fd) (for a network file system: its bytes visible on process 0's node);
 *   4. after every process finished step 3 (a barrier), process 0: plan_writer_close, which
 *      closes HDF5 (the datasets are never filled: it writes metadata only, outside every
 *      extent, and sets the file's size to the end of its allocations, past every extent),
 *      seals the envelope from the recorded extents and commits the file; or, when any
 *      process failed, plan_writer_abort (the temporary file removed; a late raw write then
 *      lands in an unlinked file). A raw write after plan_writer_close started is a bug: the
 *      commit's fsync and rename need not include it.
 * Local (each call on the process named); no MPI here.
 *
 * Creates rank shape->rank's group with its attributes and its 13 datasets, as plan_writer_rank
 * does, each with shape->crc[a] as its CRC32C, but writes none of their bytes (they are
 * allocated, never filled: plan_rank_write_raw writes them); shape: prog_rank_shape's (counts,
 * attributes, CRCs; its array pointers are not read). off[a] receives dataset a's absolute file
 * offset, UINT64_MAX for an empty one (no stored bytes). SHIRO_ERR_INTERNAL for a rank outside
 * 0 .. R-1 or declared (or written) before; SHIRO_ERR_IO / _NOMEM when HDF5 fails (then abort
 * the writer). off is written only on success. */
shiro_status plan_writer_declare(plan_writer *w, const prog_rank *shape, uint64_t off[PROG_NARRAYS], shiro_error *err);

/* The path of w's temporary file, which the other processes open with open(path, O_WRONLY) to
 * write their ranks' bytes (plan_rank_write_raw). Owned by w, valid until close or abort. A
 * regular file beside the target (for a device or FIFO target: in $TMPDIR, which only this
 * node may see). */
const char *plan_writer_temp_path(const plan_writer *w);

/* Writes pr's array bytes into the file open as fd (named `path` in messages) at the offsets
 * plan_writer_declare gave for pr's shape: each non-empty array at off[a], resuming after
 * short writes and EINTR. pr must be the program whose shape was declared (same counts,
 * sealed CRCs of these bytes); the arrays go as they lie in memory, the file's little-endian
 * types on the little-endian hosts shiro supports (checked when compiled). No fsync: the
 * caller syncs fd (step 3 above). SHIRO_ERR_IO naming path, the rank, the array and the
 * system's reason; SHIRO_ERR_INTERNAL when an array's emptiness disagrees with its offset
 * (a shape not pr's). Local; writes nothing else. */
shiro_status plan_rank_write_raw(int fd, const prog_rank *pr, const uint64_t off[PROG_NARRAYS], const char *path,
                                 shiro_error *err);
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
