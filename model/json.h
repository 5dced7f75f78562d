/*
 * json.h -- reading and writing the graph and plan file formats
 * (docs/formats.md).  cJSON stays behind this header.
 *
 * Loading is strict: every violation is an FP_EINPUT whose message names the
 * file, the item (node, buffer, group) and the field, e.g.
 *   "g.json: node 'op3': reads[1]: unknown buffer 'buf9'".
 * Unknown fields are ignored.  Byte counts are read exactly (never through
 * cJSON's int) and written exactly (as raw integers, never as doubles).
 */
#ifndef FP_JSON_H
#define FP_JSON_H

#include <stddef.h>

#include "eval.h"
#include "graph.h"
#include "plan.h"
#include "status.h"

/* Parses a graph document held in memory (`len` bytes, need not be
 * NUL-terminated).  `source` names it in messages (a file name).  On success
 * *out is a finalized graph the caller destroys; on failure *out is NULL. */
fp_status fp_graph_load_buffer(const char *data, size_t len, const char *source,
                               fp_graph **out, fp_error *err);

/* Reads and parses a graph file (plain or gzip). */
fp_status fp_graph_load_file(const char *path, fp_graph **out, fp_error *err);

/* Serializes a finalized graph into a fresh string (free with free()).
 * `pretty` selects indented output.  NULL on FP_ENOMEM, or FP_EARG when g
 * is NULL or not finalized.  The loaders and savers here answer FP_EARG
 * for a NULL out, path or graph, or a graph not finalized. */
char *fp_graph_to_json(const fp_graph *g, int pretty, fp_error *err);

/* Writes a graph file atomically (gzip when the name ends in .gz). */
fp_status fp_graph_save_file(const fp_graph *g, const char *path,
                             fp_error *err);

/* Parses a plan document for graph `g`: node names must exist in g (an
 * unknown name is FP_EINPUT).  The plan may still be illegal (checked by
 * fp_plan_check, not here). */
fp_status fp_plan_load_buffer(const char *data, size_t len, const char *source,
                              const fp_graph *g, fp_plan **out, fp_error *err);

fp_status fp_plan_load_file(const char *path, const fp_graph *g, fp_plan **out,
                            fp_error *err);

/* Serializes a plan; `metrics` (may be NULL) is written as "metrics".
 * NULL with FP_EARG when p is NULL, g is NULL or not finalized, or an entry
 * of p is not a node of g; FP_ENOMEM.  fp_plan_save_file fails alike. */
char *fp_plan_to_json(const fp_plan *p, const fp_graph *g,
                      const fp_metrics *metrics, int pretty, fp_error *err);

fp_status fp_plan_save_file(const fp_plan *p, const fp_graph *g,
                            const fp_metrics *metrics, const char *path,
                            fp_error *err);

#endif /* FP_JSON_H */
