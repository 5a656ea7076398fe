/* fuzz_prog.h — support for the plan harnesses: exact-size heap copies of a
 * rank's arrays, a flat byte encoding of one rank's program (the structured
 * fuzzer's input), and a bounds-asserting interpreter that replays a program
 * the way runtime/cpu_backend.c and runtime/cpu_kernels.c do.
 *
 * The interpreter is the oracle of the plan fuzzers: plan_check_rank promises
 * (format/README.md R7) that a program it accepts can never make the runtime
 * read or write out of bounds. fuzz_interp_run touches exactly the elements
 * the runtime would touch (same loops, same casts, same order) and aborts,
 * with a message, on the first one that is outside its array or buffer. The
 * buffers and pools it works on are separate exact-size heap blocks, so
 * AddressSanitizer also catches anything the explicit checks miss. */
#ifndef SHIRO_FUZZ_PROG_H
#define SHIRO_FUZZ_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "program.h"

/* Replaces every array pointer of *pr (ops, xchg, ptr, col, val, rows,
 * cert, c_global, b_global) by an exact-size malloc'd copy (NULL for empty
 * arrays). Other fields are left as they are. Free the copies with
 * fuzz_prog_free_arrays. Aborts when out of memory. */
void fuzz_prog_copy_arrays(prog_rank *pr);

/* Frees the arrays made by fuzz_prog_copy_arrays or fuzz_prog_decode and
 * sets their pointers to NULL. */
void fuzz_prog_free_arrays(prog_rank *pr);

/* Number of int64 fields that open the encoding below. */
enum { FUZZ_PROG_HEADER = 20,
       FUZZ_PROG_TRAILER = 4 };

/* Decodes one rank's program from data[0 .. size-1]: FUZZ_PROG_HEADER
 * little-endian int64 (ranks, rank, nstages, c_rows, b_rows, s_rows, r_rows,
 * c_first, b_first, m, k, then the record count of each array in PA_* order:
 * nops, nx, nptr, ncol, nval, nrowidx, ncert, ncglobal, nbglobal), then the
 * arrays in that order as stored in the file (ops int64 x 12 per op, xchg
 * int64 x 9 per record, ptr int64, col int32, val float64, rows int32, cert
 * int64 x 2 per pair, c_global and b_global int64); then, optionally (format
 * 2.1's arrays: absent in the seeds made before them, which decode as 2.0
 * programs), FUZZ_PROG_TRAILER int64 counts naptr, nacol, naval, nvalsrc and
 * those arrays (a_ptr, a_col int64, a_val float64, val_src int64). meta's
 * version_minor is 1 when the trailer is there, else 0. Returns 0 and fills
 * *meta and *pr (arrays on the heap, exact size; crc[] computed, as a reader
 * that verified them would leave it) when the bytes hold such a program with
 * values the file reader could produce (ranks >= 1, 0 <= rank < ranks,
 * 0 <= nstages <= 64, m, k >= 0); -1 otherwise (nothing allocated). */
int fuzz_prog_decode(const uint8_t *data, size_t size, prog_meta *meta, prog_rank *pr);

/* Writes the encoding of (meta, pr) to the file `path`; 0 on success. */
int fuzz_prog_encode(const char *path, const prog_meta *meta, const prog_rank *pr);

/* True if one of the four buffers has between 2^24 and 2^31 - 1 rows: legal,
 * but the checker and the interpreter then allocate gigabytes of row marks
 * per input, which only slows fuzzing down (larger counts are refused early,
 * and still fuzzed). The harnesses skip such programs. */
int fuzz_prog_too_big(const prog_rank *pr);

/* Replays every op of pr as the CPU backend would, with n values per row,
 * asserting every index (abort on the first bad one). Requires
 * plan_check_rank(meta, pr) == SHIRO_OK: that is the property under test.
 * Buffers larger than a few million values are not allocated; their indices
 * are still checked. With strict != 0 it also asserts protocol rules the
 * checker does not promise (no START of a stage already in flight, every
 * stage completed by the end, one message per (stage, peer, dir, kind)). */
void fuzz_interp_run(const prog_meta *meta, const prog_rank *pr, int n, int strict);

/* Strict cross-rank rule for a whole plan (progs[0 .. ranks-1], each already
 * checked): for every stage, kind and ordered pair, the rows p sends to q
 * equal the rows q receives from p (otherwise the runtime would hang or MPI
 * would abort on a truncated message). Returns 0 when consistent, else -1
 * with a description in why[0 .. cap-1]. */
int fuzz_cross_check(const prog_rank *progs, int32_t ranks, char *why, size_t cap);

#endif
