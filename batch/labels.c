/*
 * labels.c -- the per-decision and per-node label rows of an item
 * (labels.h): every candidate pair greedy fusion considers
 * (fp_fusion_decisions) with the features it decides on, labelled by
 * whether the gold plan, greedy's plan and the compiler's plan put the
 * two nodes in one group; and every node's group and step in the gold
 * plan.
 */
#include "batch/labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/io.h"

const char fp_batch_pairs_header[] =
    "id,gold,round,u,v,shared_bytes,vertical,u_kind,v_kind,u_numel,u_rnumel,"
    "v_numel,v_rnumel,proximity,u_group_size,v_group_size,raises_peak,"
    "accepted,fused_in_gold,fused_by_greedy,fused_by_inductor\n";
const char fp_batch_nodes_header[] =
    "id,gold,node,kind,group,step,group_size\n";

/* Writes s as a CSV field (quoted when it holds a comma, quote or line
 * break). */
static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* node -> its step (group index) in p; NULL out of memory. */
static int32_t *group_of(const fp_graph *g, const fp_plan *p) {
  int32_t n = fp_graph_node_count(g), len;
  int32_t *grp = malloc(((size_t)n + 1) * sizeof *grp);
  if (!grp || !p)
    return grp;
  for (int32_t v = 0; v < n; v++)
    grp[v] = -1;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    const int32_t *nodes = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      grp[nodes[i]] = t;
  }
  return grp;
}

typedef struct pair_rows {
  FILE *f;
  const fp_graph *g;
  const fp_batch_record *rec;
  const int32_t *gold, *greedy, *inductor; /* inductor may be NULL */
} pair_rows;

/* One row of pairs.csv per decision. */
static int pair_row(const fp_fusion_decision *d, void *ctx) {
  pair_rows *R = ctx;
  const fp_node *u = fp_graph_node(R->g, d->u), *v = fp_graph_node(R->g, d->v);
  fprintf(R->f, "%s,%d,%d,", R->rec->id, R->rec->gold, (int)d->round);
  csv_field(R->f, u->name);
  fputc(',', R->f);
  csv_field(R->f, v->name);
  fprintf(R->f, ",%llu,%d,%s,%s,%llu,%llu,%llu,%llu,%d,%d,%d,",
          (unsigned long long)d->shared_bytes, d->vertical,
          fp_kind_name(u->kind), fp_kind_name(v->kind),
          (unsigned long long)u->numel, (unsigned long long)u->rnumel,
          (unsigned long long)v->numel, (unsigned long long)v->rnumel,
          (int)d->proximity, (int)d->size_u, (int)d->size_v);
  if (d->raises_peak >= 0)
    fprintf(R->f, "%d", d->raises_peak);
  fprintf(R->f, ",%d,%d,%d,", d->fused, R->gold[d->u] == R->gold[d->v],
          R->greedy[d->u] == R->greedy[d->v]);
  if (R->inductor)
    fprintf(R->f, "%d", R->inductor[d->u] == R->inductor[d->v]);
  fputc('\n', R->f);
  return 0;
}

/* Writes the text of memstream f (buffer *text) to dir/labels/<id><ext>. */
static fp_status write_rows(FILE *f, char **text, size_t *len, const char *dir,
                            const char *id, const char *ext, fp_error *err) {
  char path[4200];
  if (fclose(f) != 0 || !*text)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  snprintf(path, sizeof path, "%s/labels/%s%s", dir, id, ext);
  fp_status st = fp_file_write_atomic(path, *text, *len, err);
  free(*text);
  *text = NULL;
  return st;
}

/* The pairs rows: greedy's decisions, labelled. */
static fp_status pairs_rows(const fp_graph *g, pair_rows *R, fp_error *err) {
  fp_fusion_params prm;
  fp_plan *p = fp_plan_create();
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY);
  fp_status st = p ? fp_fuse(g, &prm, p, err)
                   : fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t *greedy = st == FP_OK ? group_of(g, p) : NULL;
  fp_plan_destroy(p);
  if (st != FP_OK)
    return st;
  if (!greedy)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  R->greedy = greedy;
  st = fp_fusion_decisions(g, &prm, pair_row, R, err);
  free(greedy);
  return st;
}

/* The nodes rows: each node's group (named by its first node) and step. */
static void node_rows(FILE *f, const fp_graph *g, const fp_plan *gold,
                      const fp_batch_record *rec) {
  int32_t len;
  for (int32_t t = 0; t < fp_plan_group_count(gold); t++) {
    const int32_t *nodes = fp_plan_group(gold, t, &len);
    for (int32_t i = 0; i < len; i++) {
      const fp_node *nd = fp_graph_node(g, nodes[i]);
      fprintf(f, "%s,%d,", rec->id, rec->gold);
      csv_field(f, nd->name);
      fprintf(f, ",%s,", fp_kind_name(nd->kind));
      csv_field(f, fp_graph_node(g, nodes[0])->name);
      fprintf(f, ",%d,%d\n", (int)t, (int)len);
    }
  }
}

fp_status fp_batch_write_labels(const fp_graph *g, const fp_plan *gold,
                                const fp_plan *inductor, fp_batch_record *rec,
                                const char *dir, fp_error *err) {
  char *text = NULL;
  size_t len = 0;
  int32_t *gg = group_of(g, gold),
          *ig = inductor ? group_of(g, inductor) : NULL;
  FILE *f = gg && (!inductor || ig) ? open_memstream(&text, &len) : NULL;
  fp_status st = FP_OK;
  if (!f) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  pair_rows R = {f, g, rec, gg, NULL, ig};
  st = pairs_rows(g, &R, err);
  if (st != FP_OK) {
    fclose(f);
    free(text);
    goto done;
  }
  if ((st = write_rows(f, &text, &len, dir, rec->id, ".pairs.csv", err)) !=
      FP_OK)
    goto done;
  if (!(f = open_memstream(&text, &len))) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  node_rows(f, g, gold, rec);
  if ((st = write_rows(f, &text, &len, dir, rec->id, ".nodes.csv", err)) ==
      FP_OK)
    snprintf(rec->labels, sizeof rec->labels, "labels/%s", rec->id);
done:
  free(gg);
  free(ig);
  return st;
}
