/*
 * batch_json.h -- the JSON records of a `fuseplan batch` dataset
 * (docs/formats.md, "Batch datasets"): a manifest line (one item spec),
 * and an item's result (one line of index.jsonl, the content of
 * items/<id>.json).  cJSON stays behind this header.
 */
#ifndef FP_BATCH_JSON_H
#define FP_BATCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/status.h"

/* One manifest line, as text: "" where the line does not say (the
 * command line's value then applies).  Numbers are kept as their
 * literals, a list of peak limits joined with commas. */
typedef struct fp_batch_line {
  char graph[4096];
  char peak_limit[256];
  char objective[32];
  char traffic_limit[64];
  char time_limit[32];
  char gap[32], gap2[32];
  char method[32];
  char seed[32];
  char compare[256];
  char cut_nodes[32]; /* "A..B" */
  char cut_count[32];
  char cut_seed[32];
} fp_batch_line;

/* Parses one manifest line (a JSON object; `len` bytes).  `where` names
 * it in messages ("manifest:3").  Keys: graph (required), peak_limit
 * (a string, number or list of them), objective, traffic_limit,
 * time_limit, gap, gap2, method, seed, compare (a string or list), cut (an
 * object with nodes, count, seed).  FP_EINPUT naming the line and the key for
 * an unknown key, a value of the wrong type or one too long; FP_ENOMEM. */
fp_status fp_batch_line_parse(const char *text, size_t len, const char *where,
                              fp_batch_line *out, fp_error *err);

#define FP_BATCH_MAX_COMPARE 8

/* A compared method's figures on the item (present = it made a plan). */
typedef struct fp_batch_compare {
  char method[32];
  bool present;
  uint64_t traffic_bytes, peak_bytes;
  int64_t kernels;
} fp_batch_compare;

/* An item's result.  Numbers that do not apply are NaN / -1 and are
 * written as null. */
typedef struct fp_batch_record {
  char id[65];
  char graph[4200];  /* the graph's name ("<name>@<first>+<count>" for a
                        cut) */
  char source[4096]; /* the graph file, as given */
  char graph_sha256[65];
  int64_t cut_first, cut_count; /* -1: the whole graph */
  int64_t nodes;
  char objective[32];
  char peak_limit[32]; /* as asked: bytes, "eager", "N%" */
  int64_t peak_limit_bytes;
  int64_t traffic_limit_bytes; /* -1: none */
  char method[32];
  char status[16]; /* optimal | feasible | infeasible | error */
  int64_t traffic_bytes, peak_bytes, kernels;
  double bound, gap;
  int64_t proven; /* lexicographic levels proven: 0, 1, 2 (-1 unknown) */
  bool gold;      /* proven == 2: the canonical plan */
  double time_s;
  char fuseplan_version[32], glpk_version[32];
  char plan[128];   /* relative path, "" when none */
  char labels[128]; /* relative path of the item's label rows, "" */
  char error[600];  /* the message of an error item */
  int64_t signal;   /* the signal that ended it, -1 */
  int32_t n_compare;
  fp_batch_compare compare[FP_BATCH_MAX_COMPARE];
} fp_batch_record;

/* Fills r with "unset" values (no figures, no compare). */
void fp_batch_record_init(fp_batch_record *r);

/* One JSON line (ending in '\n') for r, in a fresh string (free()).
 * Compared methods become flat columns <m>_traffic_bytes, <m>_peak_bytes,
 * <m>_kernels and <m>_gap (m with '-' as '_').  NULL on FP_ENOMEM. */
char *fp_batch_record_to_json(const fp_batch_record *r, fp_error *err);

/* Parses what fp_batch_record_to_json wrote.  FP_EINPUT (naming
 * `source`) for anything else; FP_ENOMEM. */
fp_status fp_batch_record_parse(const char *text, size_t len,
                                const char *source, fp_batch_record *r,
                                fp_error *err);

/* Whether the item records a and b (JSON text, na and nb bytes) are the
 * same but for their timing fields (time_s: the one list of them is in
 * batch_json.c): the same members with equal values.  False when either
 * is not a JSON object. */
bool fp_batch_records_same(const char *a, size_t na, const char *b, size_t nb);

/* Checks that `len` bytes of text are a plan file's JSON (an object with
 * the plan format's header); FP_EINPUT naming `source` otherwise. */
fp_status fp_batch_plan_json_check(const char *text, size_t len,
                                   const char *source, fp_error *err);

#endif /* FP_BATCH_JSON_H */
