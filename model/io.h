/*
 * io.h -- whole-file reading (gzip-transparent) and atomic writing.
 *
 * Graph files of real models are large and often gzipped; every reader in
 * fuseplan goes through fp_file_read_all, which accepts plain and .gz
 * content alike (by magic bytes, not by name) and stops at the input limit
 * (fp_set_max_input_bytes) while it reads, before it holds more than that.
 * Every output file goes through fp_file_write_atomic: a regular file (or a
 * new one) is written to a temporary file in the same directory, flushed,
 * then renamed over the target, so a reader never sees a half-written file
 * and a failed write leaves the old file in place.
 */
#ifndef FP_IO_H
#define FP_IO_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* The default input limit (decompressed bytes): 4 GiB. */
#define FP_MAX_FILE_BYTES ((uint64_t)4 << 30)

/* Sets the process-wide input limit: fp_file_read_all (and so every
 * fp_graph_load_file and fp_plan_load_file) fails with FP_ELIMIT on an
 * input of more than `bytes` bytes after decompression, having read (and
 * held) at most `bytes` + 1 of them.  0 restores the default,
 * FP_MAX_FILE_BYTES.  Safe to call from any thread; a read in progress
 * keeps the limit it started with. */
void fp_set_max_input_bytes(uint64_t bytes);

/* The input limit now in force, in bytes. */
uint64_t fp_max_input_bytes(void);

/* Reads all of `path` ("-" = standard input), decompressing gzip content,
 * into a fresh NUL-terminated buffer (*data, length *len without the NUL;
 * free with free()).  gzip members may follow one another (as gzip
 * allows); anything else after a gzip stream is corrupt.  FP_EIO (message
 * names the file and the OS reason), FP_ELIMIT past the input limit,
 * FP_EINPUT for corrupt or truncated gzip data, FP_ENOMEM. */
fp_status fp_file_read_all(const char *path, char **data, size_t *len,
                           fp_error *err);

/* Writes `len` bytes to `path` ("-" = standard output, not atomic).  When
 * `path` ends in ".gz" the data is gzip-compressed.  A symbolic link is
 * followed (up to 40 links): the file it points to is replaced and the
 * link stays.  A regular file or a new name is written atomically (a
 * temporary file in the target's directory, fsync, rename; mode
 * 0666 & ~umask).  Any other existing target (a character or block device,
 * a FIFO) is opened and written in place, never replaced.  FP_EIO naming
 * the file and the OS reason on failure (a regular target is then left
 * untouched), FP_ENOMEM. */
fp_status fp_file_write_atomic(const char *path, const void *data, size_t len,
                               fp_error *err);

/* Removes the temporary files of the atomic writes in progress, in any
 * thread, and forgets them.  Async-signal-safe (unlink(2) only): for the
 * handler of a signal that ends the process, so that it leaves no
 * TARGET.tmp.XXXXXX behind.  Nothing a signal cannot be caught for
 * (SIGKILL) can do this; such a file may then remain. */
void fp_file_remove_temps(void);

/* True when `path` ends with `suffix`. */
int fp_path_has_suffix(const char *path, const char *suffix);

#endif /* FP_IO_H */
