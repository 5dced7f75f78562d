/*
 * io.h -- whole-file reading (gzip-transparent) and atomic writing.
 *
 * Graph files of real models are large and often gzipped; every reader in
 * fuseplan goes through fp_file_read_all, which accepts plain and .gz
 * content alike (by magic bytes, not by name).  Every output file goes
 * through fp_file_write_atomic: written to a temporary file in the same
 * directory, flushed, then renamed over the target, so a reader never sees
 * a half-written file and a failed write leaves the old file in place.
 */
#ifndef FP_IO_H
#define FP_IO_H

#include <stddef.h>

#include "model/status.h"

/* Largest file accepted by fp_file_read_all (decompressed): 4 GiB. */
#define FP_MAX_FILE_BYTES ((size_t)4 << 30)

/* Reads all of `path` ("-" = standard input), decompressing gzip content,
 * into a fresh NUL-terminated buffer (*data, length *len without the NUL;
 * free with free()).  FP_EIO (message names the file and the OS reason),
 * FP_ELIMIT past FP_MAX_FILE_BYTES, FP_EINPUT for corrupt gzip data,
 * FP_ENOMEM. */
fp_status fp_file_read_all(const char *path, char **data, size_t *len,
                           fp_error *err);

/* Writes `len` bytes to `path` atomically ("-" = standard output, not
 * atomic).  When `path` ends in ".gz" the data is gzip-compressed.  FP_EIO
 * naming the file on failure (the target is left untouched). */
fp_status fp_file_write_atomic(const char *path, const void *data, size_t len,
                               fp_error *err);

/* True when `path` ends with `suffix`. */
int fp_path_has_suffix(const char *path, const char *suffix);

#endif /* FP_IO_H */
