/* plan_envelope.h — the integrity envelope of a plan file (schema R10 in format/README.md).
 *
 * The plan is an HDF5 file behind a user block (bytes libhdf5 skips). The
 * user block holds a small header and the table of the file's raw-data
 * extents (the datasets' bytes, each protected by its own CRC32C
 * attribute); the header holds a CRC32C of everything else after the user
 * block: the superblock, object headers, attributes, heaps and free space,
 * i.e. every byte libhdf5 itself parses. Readers check the envelope before
 * they hand the file to libhdf5, so a damaged file is refused by our code
 * and never reaches HDF5's parser (which does not survive damaged metadata).
 * Checksums detect damage, not forgery: a file whose checksums were
 * recomputed after editing is as trusted as any HDF5 file. */
#ifndef SHIRO_PLAN_ENVELOPE_H
#define SHIRO_PLAN_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shiro_status.h"

#define PLAN_ENVELOPE_MAGIC "\211SHIRO\r\n" /* 8 bytes: high bit and line-ending damage show */
#define PLAN_ENVELOPE_VERSION 1
#define PLAN_ENVELOPE_HEADER 64 /* bytes before the extent table */

/* The user block size a writer should create a file with for `ranks` ranks
 * of `arrays_per_rank` datasets each: a power of two ≥ 512 that holds the
 * header and one table entry per dataset (plus slack for a few more). */
uint64_t plan_envelope_userblock(int64_t ranks, int arrays_per_rank);

/* Seals a closed HDF5 file that was created with a user block: lists every
 * dataset's stored bytes (via libhdf5, on a file we just wrote), then writes
 * the header, the table and the checksums into the user block. Call again
 * after any change to the file. */
shiro_status plan_envelope_seal(const char *path, shiro_error *err);

/* The datasets' stored bytes, [offset, bytes] each (absolute, as
 * H5Dget_offset and H5Dget_storage_size give them): the envelope's table. */
typedef struct plan_extents {
  uint64_t (*e)[2];
  size_t n, cap;
  int failed; /* 1 once an entry could not be added (out of memory) or a dataset not visited */
} plan_extents;

/* Adds dataset d's stored bytes to L; nothing for a dataset with no stored
 * bytes (empty, chunked or compact: its bytes count as metadata). 0 (and
 * L->failed set) when out of memory. */
int plan_extents_add(plan_extents *L, int64_t d);

/* plan_envelope_seal with the extents given (sorted here, in place) and the
 * user block's size ub: for the writer, which adds each dataset as it writes
 * it, so the file is not opened again and every dataset visited (4 of 11 s of
 * writing 8192 ranks). */
shiro_status plan_envelope_seal_extents(const char *path, uint64_t ub, plan_extents *L, shiro_error *err);

/* Checks `path`'s envelope: header and table checksum, the file size it
 * records, and the CRC32C of every byte outside the raw-data extents.
 * SHIRO_ERR_FORMAT (damaged, or not a shiro plan), SHIRO_ERR_VERSION (an
 * envelope version it does not know, or an HDF5 file without an envelope),
 * SHIRO_ERR_IO (cannot open or map). Reads metadata bytes only. */
shiro_status plan_envelope_check(const char *path, shiro_error *err);

/* The same check on a file image in memory (`path` only names it in messages). */
shiro_status plan_envelope_check_image(const uint8_t *img, size_t size, const char *path, shiro_error *err);

/* Writes a fresh envelope into img[0, ub): header, the n extents (sorted,
 * disjoint, inside [ub, size)), and the checksums. False when they do not
 * fit or are not valid extents. For the writer, tests and fuzzing. */
bool plan_envelope_seal_image(uint8_t *img, size_t size, uint64_t ub, const uint64_t (*extents)[2], size_t n);

/* True when the byte range [off, off + bytes) lies inside a file of `size`
 * bytes. Computed without overflow: off and bytes come from the file, and
 * off + bytes may wrap around 64 bits. */
bool plan_extent_inside(uint64_t off, uint64_t bytes, uint64_t size);

/* Recomputes the checksums of an image whose header and table parse (the
 * table and sizes are trusted as they are); false if they do not. For
 * tests and fuzzing: what a deliberate edit does to a file. */
bool plan_envelope_reseal_image(uint8_t *img, size_t size);

#endif
