/*
 * expand.h -- the items of a `fuseplan batch` command (batch.h): each
 * GRAPH argument and each manifest line (docs/formats.md, "Batch
 * datasets") expanded into items, one per graph file (a file, the graph
 * files of a directory, or a glob's), per cut and per peak limit, each
 * with its id.
 *
 * The settings of a line (objective, limits, method, seed, compare, cut)
 * are text in the manifest and on the command line alike; their grammar
 * belongs to the caller (the command's), which resolves them through a
 * callback into an fp_batch_spec.  What is here: reading the manifest,
 * finding the graph files, hashing them, choosing the cuts, making the
 * items.  Nothing here prints: a bad line or path is an FP_EINPUT whose
 * message names it ("manifest:3: ...", "argument 2: ...").
 */
#ifndef FP_BATCH_EXPAND_H
#define FP_BATCH_EXPAND_H

#include <stdbool.h>
#include <stdint.h>

#include "batch/batch.h"
#include "batch/batch_json.h"
#include "model/status.h"

/* The most items of one command. */
#define FP_BATCH_MAX_ITEMS 200000

/* The longest manifest line, in bytes. */
#define FP_BATCH_MAX_LINE (1 << 20)

/* The most peak limits of one argument or line. */
#define FP_BATCH_MAX_PEAKS 128

/* What one GRAPH argument or manifest line asks for, resolved. */
typedef struct fp_batch_spec {
  fp_batch_item proto; /* objective, limits, method, seed, compare */
  int32_t n_peaks;     /* one item per peak limit, >= 1 */
  fp_peak_spec peaks[FP_BATCH_MAX_PEAKS];
  bool cut;               /* cuts of the graph instead of the whole */
  int32_t cut_lo, cut_hi; /* nodes per cut, 1 <= lo <= hi */
  int32_t cut_count;      /* cuts wanted, 0..FP_CUT_MAX */
  uint64_t cut_seed;
} fp_batch_spec;

/* Resolves manifest line `ln` (its settings, falling back to the
 * command's) into *spec: FP_OK, or an error whose message names `where`
 * (the line, "manifest:3") and the bad setting. */
typedef fp_status (*fp_batch_resolve_fn)(const fp_batch_line *ln,
                                         const char *where, fp_batch_spec *spec,
                                         void *ctx, fp_error *err);

/* The items of a command, in the order found. */
typedef struct fp_batch_items fp_batch_items;

/* A new empty list for fuseplan version `version` (part of every id);
 * NULL out of memory. */
fp_batch_items *fp_batch_items_create(const char *version);

/* Frees L and its items; NULL is a no-op. */
void fp_batch_items_destroy(fp_batch_items *L);

/* Sends L's warnings to fn (none: they are dropped). */
void fp_batch_items_on_warning(fp_batch_items *L, fp_batch_warn_fn fn,
                               void *ctx);

/* The items of L (valid until L changes or is destroyed); *n their
 * count. */
const fp_batch_item *fp_batch_items_get(const fp_batch_items *L, int32_t *n);

/* Adds the items of path `arg` (relative to `base` unless NULL or arg is
 * absolute) under spec: a graph file, every graph file of a directory
 * (*.json, *.json.gz, not plans, by name), or the files and directories
 * of a glob.  A path that is not a regular file (FIFO, socket, device,
 * a directory inside a directory) is skipped with a warning naming
 * `where` and the path, never opened.  A graph is hashed as a stream
 * (fp_batch_graph_sha256): one that cannot be read or is over the input
 * limit becomes an error item (its message is its record's).  With
 * spec->cut the graph is loaded whole (under the input limit) to choose
 * the cuts.  FP_EINPUT naming `where` for a path that matches nothing or
 * a directory without a graph file, or past FP_BATCH_MAX_ITEMS;
 * FP_ENOMEM. */
fp_status fp_batch_items_add_path(fp_batch_items *L, const fp_batch_spec *spec,
                                  const char *arg, const char *base,
                                  const char *where, fp_error *err);

/* Adds the items of every line of manifest `file` (JSON Lines, plain or
 * gzip: blank lines and lines starting with '#' skipped; paths relative
 * to the manifest's directory), each line resolved by `resolve`.  The
 * file is read as a stream, one line held at a time.  Fails as
 * fp_batch_line_parse, `resolve` and fp_batch_items_add_path (the first
 * bad line stops it); FP_ELIMIT naming the line when one is longer than
 * FP_BATCH_MAX_LINE, or the file past the input limit; FP_EIO when the
 * file cannot be read. */
fp_status fp_batch_items_add_manifest(fp_batch_items *L, const char *file,
                                      fp_batch_resolve_fn resolve, void *ctx,
                                      fp_error *err);

/* Keeps only the items of shard k (1..n) of n (fp_batch_shard_of). */
void fp_batch_items_keep_shard(fp_batch_items *L, int32_t k, int32_t n);

#endif /* FP_BATCH_EXPAND_H */
