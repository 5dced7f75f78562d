/*
 * labels.h -- internal to batch/: the label rows of one item
 * (docs/formats.md, pairs.csv.gz and nodes.csv.gz), written beside its
 * record as DIR/labels/<id>.pairs.csv and <id>.nodes.csv (no header; the
 * dataset's files add it).
 */
#ifndef FP_BATCH_LABELS_H
#define FP_BATCH_LABELS_H

#include "batch/batch_json.h"
#include "model/graph.h"
#include "model/plan.h"
#include "model/status.h"

/* The header lines of the two dataset files (ending in '\n'). */
extern const char fp_batch_pairs_header[];
extern const char fp_batch_nodes_header[];

/* Writes the label rows of item rec (its gold plan `gold`, the compiler's
 * plan `inductor` or NULL) and sets rec->labels.  FP_EIO, FP_ENOMEM. */
fp_status fp_batch_write_labels(const fp_graph *g, const fp_plan *gold,
                                const fp_plan *inductor, fp_batch_record *rec,
                                const char *dir, fp_error *err);

#endif /* FP_BATCH_LABELS_H */
