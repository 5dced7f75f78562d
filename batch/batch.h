/*
 * batch.h -- `fuseplan batch`: gold plans at corpus scale
 * (docs/formats.md, "Batch datasets").
 *
 * An *item* is one graph (or a cut of one, solver/window/cut.h) under one set
 * of limits, solved by one method, with the compared methods evaluated beside
 * it.  Its id is the SHA-256 of its canonical spec: the graph's content hash,
 * the cut, the limits, the methods and fuseplan's version, so that it is the
 * same on every machine (a shard of a job array can pick its items by id).
 *
 * Every item runs in a child process of its own (fork), under a memory
 * limit (RLIMIT_AS) and a wall-clock limit; whatever happens to it (a
 * crash, an abort inside GLPK, memory exhausted, a bad graph) is recorded
 * as that item's result, and the batch goes on.  Results are written
 * atomically per item (DIR/items/<id>.json last, after its plan and its
 * label rows), so a batch killed at any moment loses only the items in
 * flight, and a rerun skips the finished ones.  A lock file keeps a second
 * batch out of DIR.  The dataset files (index.jsonl, pairs.csv.gz,
 * nodes.csv.gz) are assembled from the item files, in id order, at the
 * end: any set of item files (of one run, or of many) makes one dataset.
 *
 * Nothing here prints; progress goes to a callback.
 */
#ifndef FP_BATCH_H
#define FP_BATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "batch/batch_json.h"
#include "model/limits.h"
#include "model/status.h"
#include "solver/window/cut.h"

/* Receives a one-line warning (a path skipped, a bad item record
 * recomputed or left out); never fails. */
typedef void (*fp_batch_warn_fn)(const char *msg, void *ctx);

/* One item, resolved (fp_batch_item_finish fills id and graph_sha256).
 * Its strings belong to whoever made it (expand.h's list): an item is
 * small (about half a KiB), so that a command of many items holds little
 * memory. */
typedef struct fp_batch_item {
  const char *source;   /* the graph file */
  const char *inductor; /* its *.inductor.plan.json* beside it, "" */
  char graph_sha256[65];
  fp_cut cut; /* count 0: the whole graph */
  char objective[32];
  fp_peak_spec peak;      /* eager, N% or bytes (model/limits.h) */
  uint64_t traffic_limit; /* UINT64_MAX: none */
  double time_limit_s;
  double gap, gap2; /* per-level tolerances (fp_ilp_params gap, gap2) */
  uint64_t seed;
  char method[32];
  char compare[FP_BATCH_MAX_COMPARE][32];
  int32_t n_compare;
  const char *load_error; /* "", or set at expansion: an error item */
  char id[65];
} fp_batch_item;

/* The SHA-256 of `len` bytes as 64 lowercase hex digits into hex[65]. */
void fp_sha256_hex(const void *data, size_t len, char hex[65]);

/* The SHA-256 of a graph file's content (after decompression, so a file
 * and its .gz have the same hash), read as a stream: the process holds
 * 64 KiB of it at a time, however large it is.  FP_EIO naming the file
 * when it cannot be opened or read, FP_EINPUT when it is not a regular
 * file (never waited on: a FIFO) or its gzip data is corrupt, FP_ELIMIT
 * past the input limit (fp_max_input_bytes, decompressed bytes),
 * FP_ENOMEM. */
fp_status fp_batch_graph_sha256(const char *path, char hex[65], fp_error *err);

/* The item's canonical spec (what its id hashes), into buf[n]. */
void fp_batch_item_spec(const fp_batch_item *it, char *buf, size_t n);

/* Sets it->id from its spec and `version` (fuseplan's). */
void fp_batch_item_finish(fp_batch_item *it, const char *version);

/* The peak limit as written in records: "eager", "N%" or bytes. */
void fp_batch_peak_text(const fp_batch_item *it, char *buf, size_t n);

/* Solves item `it` in this process and fills *rec: its gold plan written
 * to DIR/plans/<id>.json.gz, its label rows to DIR/labels/<id>.pairs.csv
 * and .nodes.csv (all atomically).  Outcomes of the item (a bad graph,
 * infeasible limits, a solver failure) are the record's status, not this
 * function's: it fails only when an output file cannot be written
 * (FP_EIO) or memory runs out (FP_ENOMEM). */
fp_status fp_batch_item_solve(const fp_batch_item *it, const char *dir,
                              const char *version, fp_batch_record *rec,
                              fp_error *err);

/* Progress of a batch, for the callback. */
typedef struct fp_batch_progress {
  int32_t total;   /* items of this run */
  int32_t skipped; /* finished before this run */
  int32_t done;    /* finished in this run (any status) */
  int32_t optimal; /* of them: proven (gold) */
  int32_t failed;  /* of them: error or infeasible */
  int32_t running;
  int32_t dataset_items;  /* at the end: the rows of the dataset */
  int32_t dataset_failed; /* of them: error or infeasible (the exit status) */
  double elapsed_s;
  const fp_batch_record *last; /* the item just finished, or NULL */
} fp_batch_progress;

typedef struct fp_batch_options {
  const char *dir;
  const char *version;  /* fuseplan's */
  int32_t jobs;         /* items at once, >= 1 */
  uint64_t item_memory; /* bytes of address space per item, 0: none */
  void (*progress)(const fp_batch_progress *p, void *ctx); /* optional */
  void *progress_ctx;
  double progress_every_s; /* also call it this often (0: only per item) */
  const volatile sig_atomic_t *cancel; /* optional: stop, killing the
                                          items in flight */
  fp_batch_warn_fn warn;               /* optional: bad item records found */
  void *warn_ctx;
} fp_batch_options;

/* Takes the lock of DIR (made with items/, plans/, labels/ when missing):
 * *fd holds it until fp_batch_unlock.  Then removes the temporary files
 * (NAME.tmp.XXXXXX) that a writer killed in flight (kill -9) left in DIR
 * and its sub-directories.  FP_EARG "DIR is in use by another
 * batch (pid N)" when one holds it; FP_EIO. */
fp_status fp_batch_lock(const char *dir, int *fd, fp_error *err);
void fp_batch_unlock(int fd);

/* Runs the items not finished in DIR (fp_batch_item_finished), o->jobs
 * at a time, each in its own child process, then assembles the dataset
 * (fp_batch_assemble).  A record in DIR that is not a valid one of its
 * item is recomputed, with a warning through o->warn naming its file.
 * DIR must be locked by the caller.  *last receives the final counts, the
 * dataset's included.  FP_EIO / FP_ENOMEM for failures of the batch
 * itself (never of an item); FP_EINTERNAL when cancelled (the dataset is
 * still assembled from what finished). */
fp_status fp_batch_run(const fp_batch_item *items, int32_t n,
                       const fp_batch_options *o, fp_batch_progress *last,
                       fp_error *err);

/* Runs item `it` in a child process of its own under o's limits, as
 * fp_batch_run does (o->jobs is not used), and waits for it: *rec is its
 * record, written to DIR/items (a death record when the child died).
 * o->progress, when set, is called every o->progress_every_s while it
 * waits and once at the end (an MPI worker's heartbeat).  DIR's lock is
 * not taken (the caller coordinates).  FP_EIO when fork fails or the
 * record cannot be written; FP_EINTERNAL when cancelled (the item is
 * killed). */
fp_status fp_batch_run_one(const fp_batch_item *it, const fp_batch_options *o,
                           fp_batch_record *rec, fp_error *err);

/* Records item `it`, whose process was lost (an MPI worker rank that
 * died), as an error item of DIR with message `why`, unless DIR already
 * holds a finished record of it (a worker only stalled may have
 * committed it); an error item is run again by a rerun.  *rec is the
 * item's record in DIR: the finished one, or the error one written.
 * FP_EIO when the record cannot be written. */
fp_status fp_batch_item_lost(const char *dir, const fp_batch_item *it,
                             const char *version, const char *why,
                             fp_batch_record *rec, fp_error *err);

/* Whether item `it` is finished in DIR: its record is valid
 * (fp_batch_record_load), is the item's (its id, graph hash, method,
 * objective and limit) and has a status other than error; *rec is that
 * record.  When a record is there but is not valid or not the item's,
 * *bad (unless NULL) says why, naming the file (else bad->code is
 * FP_OK). */
bool fp_batch_item_finished(const char *dir, const fp_batch_item *it,
                            fp_batch_record *rec, fp_error *bad);

/* Loads DIR/items/<id>.json into *rec and checks it: one item record
 * whose id is its file's name, with a known status; for a plan (optimal
 * or feasible), its plan DIR/plans/<id>.json.gz a plan file that reads
 * (gzip intact, JSON, the plan header) and its label files
 * DIR/labels/<id>.{pairs,nodes}.csv present, of its id's rows and whole.
 * FP_EIO when the record is missing; FP_EINPUT naming the file and what
 * is wrong; FP_ENOMEM. */
fp_status fp_batch_record_load(const char *dir, const char *id,
                               fp_batch_record *rec, fp_error *err);

/* Writes DIR/index.jsonl (each valid record re-serialised: one compact
 * JSON object per line), DIR/pairs.csv.gz and DIR/nodes.csv.gz from the
 * item records in DIR/items (in id order), each atomically.  A record
 * that is not valid (fp_batch_record_load) is left out, with a warning
 * through `warn` (optional) naming its file.  *failed (optional): the rows
 * with status error or infeasible; *rows (optional): the rows.  FP_EIO,
 * FP_ENOMEM. */
fp_status fp_batch_assemble(const char *dir, fp_batch_warn_fn warn, void *ctx,
                            int32_t *rows, int32_t *failed, fp_error *err);

/* The ids of DIR/items/<id>.json, sorted, into a fresh array (*ids and
 * each of its *n strings: free()).  FP_EIO when DIR/items cannot be
 * opened. */
fp_status fp_batch_list_ids(const char *dir, char ***ids, int32_t *n,
                            fp_error *err);

/* The shard, 1 to n, of item id `id` (64 hex digits): its leading 64
 * bits modulo n, plus one, so that it is the same on every machine. */
int32_t fp_batch_shard_of(const char *id, int32_t n);

/* Copies the valid items of directories dirs[0..n_dirs)
 * (fp_batch_record_load: their item records, plans and label files) into
 * OUT, each file atomically and the item record last, then assembles
 * OUT's dataset (fp_batch_assemble).  An item record that is not valid is
 * not copied, with a warning through `warn` (optional).  An id found in
 * two places (two dirs, or a dir and OUT) with item records that differ
 * other than in their timing fields (fp_batch_records_same) is refused
 * before anything is written: FP_EINPUT naming the id and both
 * directories.  OUT must be locked by the caller (fp_batch_lock).  FP_EIO,
 * FP_ENOMEM. */
fp_status fp_batch_merge(const char *const *dirs, int32_t n_dirs,
                         const char *out, fp_batch_warn_fn warn, void *ctx,
                         fp_error *err);

/* Every record of DIR/index.jsonl, in a fresh array (*out, free()).
 * FP_EIO when it is missing, FP_EINPUT naming the line of a bad row. */
fp_status fp_batch_load_index(const char *dir, fp_batch_record **out,
                              int32_t *n, fp_error *err);

#endif /* FP_BATCH_H */
