/*
 * plan_json.c -- the plan file format (docs/formats.md): loader and writer.
 *
 * The loader resolves node names against the graph and keeps whatever
 * grouping the file holds, legal or not: legality is fp_plan_check's
 * business, so that `fuseplan verify` can say what exactly is wrong.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/io.h"
#include "model/json.h"
#include "model/json_util.h"

static const cJSON *field(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Copies an optional string field into a fixed buffer (truncating). */
static void copy_str(const cJSON *obj, const char *key, char *dst, size_t n) {
  const cJSON *it = field(obj, key);
  if (cJSON_IsString(it)) {
    strncpy(dst, it->valuestring, n - 1);
    dst[n - 1] = '\0';
  }
}

static double opt_num(const cJSON *obj, const char *key) {
  const cJSON *it = field(obj, key);
  /* non-finite (1e999) is "unset": it could not be written back */
  return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble
                                                         : NAN;
}

static int64_t opt_count(const cJSON *obj, const char *key) {
  uint64_t v;
  return fp_json_u64(field(obj, key), &v) ? (int64_t)v : -1;
}

/* Reads the optional "solver" record; bad types there are ignored (it is
 * provenance, not input to any computation). */
static void load_solver(const cJSON *root, fp_solver_info *info) {
  const cJSON *s = field(root, "solver");
  fp_solver_info_init(info);
  if (!cJSON_IsObject(s))
    return;
  copy_str(s, "method", info->method, sizeof info->method);
  copy_str(s, "status", info->status, sizeof info->status);
  info->objective = opt_num(s, "objective");
  info->bound = opt_num(s, "bound");
  info->gap = opt_num(s, "gap");
  info->time_s = opt_num(s, "time_s");
  info->nodes = opt_count(s, "nodes");
  info->rows = opt_count(s, "rows");
  info->cols = opt_count(s, "cols");
  info->glpk_peak_bytes = opt_count(s, "glpk_peak_bytes");
  info->levels_proven = opt_count(s, "levels_proven");
  info->objective2 = opt_num(s, "objective2");
  info->bound2 = opt_num(s, "bound2");
  info->gap2 = opt_num(s, "gap2");
  copy_str(s, "stop_reason", info->stop_reason, sizeof info->stop_reason);
}

/* Reads the optional "metrics" object into the plan's claims. */
static fp_status load_claims(const cJSON *root, const char *src, fp_plan *p,
                             fp_error *err) {
  static const char *const keys[] = {"traffic_bytes", "peak_bytes", "kernels"};
  fp_plan_claims c = {NAN, NAN, NAN};
  double *dst[] = {&c.traffic_bytes, &c.peak_bytes, &c.kernels};
  const cJSON *m = field(root, "metrics");
  if (m && !cJSON_IsObject(m))
    return fp_error_set(err, FP_EINPUT, "%s: metrics: expected an object", src);
  for (int i = 0; m && i < 3; i++) {
    const cJSON *it = field(m, keys[i]);
    if (!it)
      continue;
    /* Sums may pass 2^53, so only integrality (of the literal, exactly)
     * and sign are checked. */
    if (!fp_json_integral(it))
      return fp_error_set(err, FP_EINPUT,
                          "%s: metrics.%s: must be a non-negative integer", src,
                          keys[i]);
    *dst[i] = it->valuedouble;
  }
  fp_plan_claims_set(p, &c);
  return FP_OK;
}

static fp_status load_group(const cJSON *grp, int i, const char *src,
                            const fp_graph *g, fp_plan *p, fp_error *err) {
  if (!cJSON_IsArray(grp))
    return fp_error_set(err, FP_EINPUT,
                        "%s: groups[%d]: expected an array of node names", src,
                        i);
  if (fp_plan_open_group(p, err) != FP_OK)
    return FP_ENOMEM;
  int j = 0;
  for (const cJSON *it = grp->child; it; it = it->next, j++) {
    if (!cJSON_IsString(it))
      return fp_error_set(err, FP_EINPUT,
                          "%s: groups[%d][%d]: expected a node name", src, i,
                          j);
    int32_t v = fp_graph_find_node(g, it->valuestring);
    if (v < 0)
      return fp_error_set(err, FP_EINPUT,
                          "%s: groups[%d][%d]: unknown node '%.200s'", src, i,
                          j, it->valuestring);
    if (fp_plan_append_node(p, v, err) != FP_OK)
      return FP_ENOMEM;
  }
  return FP_OK;
}

static fp_status load_plan(const cJSON *root, const char *src,
                           const fp_graph *g, fp_plan *p, fp_error *err) {
  fp_status st = fp_json_check_header(root, src, "fuseplan.plan", err);
  if (st != FP_OK)
    return st;
  const cJSON *gn = field(root, "graph");
  if (gn && !cJSON_IsString(gn))
    return fp_error_set(err, FP_EINPUT, "%s: graph: expected a string", src);
  if (gn && gn->valuestring[0] && fp_graph_name(g)[0] &&
      strcmp(gn->valuestring, fp_graph_name(g)) != 0)
    return fp_error_set(err, FP_EINPUT,
                        "%s: graph: plan is for graph '%.200s', not '%.200s'",
                        src, gn->valuestring, fp_graph_name(g));
  if (fp_plan_set_graph_name(p, fp_graph_name(g), err) != FP_OK)
    return FP_ENOMEM;
  const cJSON *groups = field(root, "groups");
  if (!cJSON_IsArray(groups))
    return fp_error_set(err, FP_EINPUT, "%s: groups: missing or not an array",
                        src);
  int i = 0;
  for (const cJSON *it = groups->child; it; it = it->next, i++)
    if ((st = load_group(it, i, src, g, p, err)) != FP_OK)
      return st;
  load_solver(root, fp_plan_solver(p));
  return load_claims(root, src, p, err);
}

fp_status fp_plan_load_buffer(const char *data, size_t len, const char *source,
                              const fp_graph *g, fp_plan **out, fp_error *err) {
  const char *src = source ? source : "<plan>";
  if (fp_arg_ptr(out, src, "out", err) != FP_OK)
    return FP_EARG;
  *out = NULL;
  if (fp_arg_graph(g, src, err) != FP_OK ||
      (!data && len > 0 && fp_arg_ptr(data, src, "data", err) != FP_OK))
    return FP_EARG;
  fp_json_doc doc;
  fp_status st = fp_json_parse(data, len, src, &doc, err);
  fp_plan *p = NULL;
  if (st == FP_OK) {
    p = fp_plan_create();
    st = p ? load_plan(doc.root, src, g, p, err)
           : fp_error_set(err, FP_ENOMEM, "%s: out of memory", src);
  }
  fp_json_release(&doc);
  if (st != FP_OK) {
    fp_plan_destroy(p);
    return st;
  }
  *out = p;
  return FP_OK;
}

fp_status fp_plan_load_file(const char *path, const fp_graph *g, fp_plan **out,
                            fp_error *err) {
  char *data;
  size_t len;
  if (fp_arg_ptr(out, "plan load", "out", err) != FP_OK)
    return FP_EARG;
  *out = NULL;
  if (fp_arg_graph(g, "plan load", err) != FP_OK)
    return FP_EARG;
  fp_status st = fp_file_read_all(path, &data, &len, err);
  if (st != FP_OK)
    return st;
  st = fp_plan_load_buffer(data, len, path, g, out, err);
  free(data);
  return st;
}

/* ---- writer ------------------------------------------------------------- */

static void write_num(fp_jbuf *b, const char *key, double v, bool *first) {
  if (isnan(v))
    return;
  fp_jbuf_printf(b, "%s\"%s\": ", *first ? "" : ", ", key);
  fp_jbuf_double(b, v);
  *first = false;
}

static void write_count(fp_jbuf *b, const char *key, int64_t v, bool *first) {
  if (v < 0)
    return;
  fp_jbuf_printf(b, "%s\"%s\": %lld", *first ? "" : ", ", key, (long long)v);
  *first = false;
}

static void write_solver(fp_jbuf *b, const fp_solver_info *s) {
  bool first = true;
  fp_jbuf_puts(b, ",\n\"solver\": {");
  if (s->method[0]) {
    fp_jbuf_puts(b, "\"method\": ");
    fp_jbuf_str(b, s->method);
    first = false;
  }
  if (s->status[0]) {
    fp_jbuf_puts(b, first ? "\"status\": " : ", \"status\": ");
    fp_jbuf_str(b, s->status);
    first = false;
  }
  write_num(b, "objective", s->objective, &first);
  write_num(b, "bound", s->bound, &first);
  write_num(b, "gap", s->gap, &first);
  write_num(b, "time_s", s->time_s, &first);
  write_count(b, "nodes", s->nodes, &first);
  write_count(b, "rows", s->rows, &first);
  write_count(b, "cols", s->cols, &first);
  write_count(b, "glpk_peak_bytes", s->glpk_peak_bytes, &first);
  write_count(b, "levels_proven", s->levels_proven, &first);
  write_num(b, "objective2", s->objective2, &first);
  write_num(b, "bound2", s->bound2, &first);
  write_num(b, "gap2", s->gap2, &first);
  if (s->stop_reason[0]) {
    fp_jbuf_puts(b, first ? "\"stop_reason\": " : ", \"stop_reason\": ");
    fp_jbuf_str(b, s->stop_reason);
    first = false;
  }
  fp_jbuf_puts(b, "}");
}

static void write_metrics(fp_jbuf *b, const fp_metrics *m) {
  fp_jbuf_puts(b, ",\n\"metrics\": {\"traffic_bytes\": ");
  fp_jbuf_u64(b, m->traffic_bytes);
  fp_jbuf_puts(b, ", \"peak_bytes\": ");
  fp_jbuf_u64(b, m->peak_bytes);
  fp_jbuf_printf(b, ", \"kernels\": %d, \"read_bytes\": ", (int)m->kernels);
  fp_jbuf_u64(b, m->read_bytes);
  fp_jbuf_puts(b, ", \"write_bytes\": ");
  fp_jbuf_u64(b, m->write_bytes);
  fp_jbuf_puts(b, "}");
}

/* FP_EARG unless g is finalized and every entry of p is one of its nodes
 * (a plan is only a container: fp_plan_add_group cannot know the graph). */
static fp_status check_writable(const fp_plan *p, const fp_graph *g,
                                fp_error *err) {
  if (fp_arg_ptr(p, "plan write", "the plan", err) != FP_OK ||
      fp_arg_graph(g, "plan write", err) != FP_OK)
    return FP_EARG;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      if (!fp_graph_node(g, grp[i]))
        return fp_error_set(err, FP_EARG,
                            "plan write: group %ld: node index %ld is not a "
                            "node of graph '%s'",
                            (long)t, (long)grp[i], fp_graph_name(g));
  }
  return FP_OK;
}

char *fp_plan_to_json(const fp_plan *p, const fp_graph *g,
                      const fp_metrics *metrics, int pretty, fp_error *err) {
  if (check_writable(p, g, err) != FP_OK)
    return NULL;
  fp_jbuf b = {0};
  const char *sep = pretty ? ",\n  " : ", ";
  fp_jbuf_puts(&b, "{\"format\": \"fuseplan.plan\", \"version\": 1, "
                   "\"graph\": ");
  fp_jbuf_str(&b, fp_graph_name(g));
  fp_jbuf_puts(&b, pretty ? ",\n\"groups\": [\n  " : ",\n\"groups\": [");
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    fp_jbuf_puts(&b, t ? sep : "");
    fp_jbuf_puts(&b, "[");
    for (int32_t i = 0; i < len; i++) {
      fp_jbuf_puts(&b, i ? ", " : "");
      fp_jbuf_str(&b, fp_graph_node(g, grp[i])->name);
    }
    fp_jbuf_puts(&b, "]");
  }
  fp_jbuf_puts(&b, pretty ? "\n]" : "]");
  if (metrics)
    write_metrics(&b, metrics);
  write_solver(&b, fp_plan_solver_const(p));
  fp_jbuf_puts(&b, "}\n");
  if (b.oom) {
    free(b.s);
    fp_error_set(err, FP_ENOMEM, "out of memory writing plan");
    return NULL;
  }
  return b.s;
}

fp_status fp_plan_save_file(const fp_plan *p, const fp_graph *g,
                            const fp_metrics *metrics, const char *path,
                            fp_error *err) {
  fp_error local;
  err = err ? err : &local;
  if (fp_arg_ptr(path, "plan write", "the path", err) != FP_OK)
    return FP_EARG;
  char *s = fp_plan_to_json(p, g, metrics, 1, err);
  if (!s)
    return err->code;
  fp_status st = fp_file_write_atomic(path, s, strlen(s), err);
  free(s);
  return st;
}
