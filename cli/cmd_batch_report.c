/*
 * cmd_batch_report.c -- `fuseplan batch report DIR`: every compared
 * method against the gold plans of a batch dataset: how often it equals
 * gold, and its excess traffic and peak over gold (median, p90, max), in
 * all and per source graph; a text table, --json, and an SVG chart of the
 * distribution of each method's excess traffic and peak (figures.h).
 *
 * Only items whose plan is proven to be the lexicographic optimum (gold)
 * are counted; the others are reported as a count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/figures.h"

static const char report_help[] =
    "usage: fuseplan batch report DIR [--json] [--svg FILE]\n"
    "\n"
    "Every compared method against gold (the proven lexicographic optimum)\n"
    "on the items of DIR/index.jsonl: how often it equals gold, and its\n"
    "excess traffic and peak over gold (median, p90, max), in all and per\n"
    "source graph.\n"
    "\n"
    "  --json           the report as JSON on stdout\n"
    "  --svg FILE       the distribution of each method's excess traffic and\n"
    "                   peak over gold, as an SVG chart\n";

#define MAX_METHODS FP_BATCH_MAX_COMPARE

/* One method's figures over a set of items. */
typedef struct method_stats {
  char method[32];
  int32_t n, equal;
  double *traffic, *peak; /* excess over gold, % (n of them) */
} method_stats;

/* The figures of one group of items (all, or one source graph). */
typedef struct group_stats {
  char graph[256];
  int32_t items, gold;
  method_stats m[MAX_METHODS];
  int32_t n_methods;
} group_stats;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of sorted v[0..n); NaN when empty. */
static double quantile(const double *v, int32_t n, double q) {
  if (n == 0)
    return NAN;
  int32_t k = (int32_t)ceil(q * n) - 1;
  return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* The source graph of a record: its name before a cut's '@'. */
static void source_graph(const fp_batch_record *r, char *out, size_t n) {
  const char *src = r->graph[0] ? r->graph : r->source;
  size_t len = strnlen(src, n - 1); /* truncated to fit, as intended */
  memcpy(out, src, len);
  out[len] = '\0';
  char *at = strchr(out, '@');
  if (at)
    *at = '\0';
}

/* Adds record r (a gold item) into group G; -1 out of memory. */
static int add_record(group_stats *G, const fp_batch_record *r, int32_t cap) {
  for (int32_t i = 0; i < r->n_compare; i++) {
    const fp_batch_compare *c = &r->compare[i];
    int32_t k = 0;
    while (k < G->n_methods && strcmp(G->m[k].method, c->method) != 0)
      k++;
    if (k == G->n_methods) {
      if (k == MAX_METHODS)
        continue;
      method_stats *m = &G->m[G->n_methods++];
      snprintf(m->method, sizeof m->method, "%s", c->method);
      m->traffic = malloc((size_t)cap * sizeof *m->traffic);
      m->peak = malloc((size_t)cap * sizeof *m->peak);
      if (!m->traffic || !m->peak)
        return -1;
    }
    method_stats *m = &G->m[k];
    if (!c->present || r->traffic_bytes <= 0 || r->peak_bytes <= 0)
      continue;
    double gt = (double)r->traffic_bytes, gp = (double)r->peak_bytes;
    m->traffic[m->n] = 100 * ((double)c->traffic_bytes - gt) / gt;
    m->peak[m->n] = 100 * ((double)c->peak_bytes - gp) / gp;
    m->equal += c->traffic_bytes == (uint64_t)r->traffic_bytes &&
                c->peak_bytes == (uint64_t)r->peak_bytes;
    m->n++;
  }
  return 0;
}

static void group_free(group_stats *G) {
  for (int32_t k = 0; k < G->n_methods; k++) {
    free(G->m[k].traffic);
    free(G->m[k].peak);
  }
}

static int cmp_group(const void *a, const void *b) {
  return strcmp(((const group_stats *)a)->graph,
                ((const group_stats *)b)->graph);
}

/* The groups: [0] all items, then one per source graph, by name. */
static int build_groups(const fp_batch_record *r, int32_t n, group_stats **out,
                        int32_t *n_groups) {
  group_stats *G = calloc((size_t)n + 1, sizeof *G);
  int32_t ng = 1;
  if (!G)
    return -1;
  snprintf(G[0].graph, sizeof G[0].graph, "all");
  for (int32_t i = 0; i < n; i++) {
    char name[256];
    source_graph(&r[i], name, sizeof name);
    int32_t k = 1;
    while (k < ng && strcmp(G[k].graph, name) != 0)
      k++;
    if (k == ng)
      snprintf(G[ng++].graph, sizeof G[0].graph, "%s", name);
    int32_t both[2] = {0, k};
    for (int j = 0; j < 2; j++) {
      G[both[j]].items++;
      if (!r[i].gold)
        continue;
      G[both[j]].gold++;
      if (add_record(&G[both[j]], &r[i], n) != 0)
        return *out = G, *n_groups = ng, -1;
    }
  }
  qsort(G + 1, (size_t)(ng - 1), sizeof *G, cmp_group);
  for (int32_t g = 0; g < ng; g++)
    for (int32_t k = 0; k < G[g].n_methods; k++) {
      qsort(G[g].m[k].traffic, (size_t)G[g].m[k].n, sizeof(double), cmp_double);
      qsort(G[g].m[k].peak, (size_t)G[g].m[k].n, sizeof(double), cmp_double);
    }
  *out = G;
  *n_groups = ng;
  return 0;
}

/* A percentage, or "-" when there is none. */
static const char *pct(double v, char *buf, size_t n) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.2f%%", v);
  return buf;
}

static void print_group(const group_stats *G) {
  char safe[CLI_SAFE_MAX];
  printf("%s: %d items, %d gold\n", cli_safe(G->graph, safe, sizeof safe),
         (int)G->items, (int)G->gold);
  if (!G->n_methods)
    return;
  printf("  %-14s %6s %7s  %9s %9s %9s  %9s %9s %9s\n", "method", "items",
         "=gold", "traffic50", "p90", "max", "peak50", "p90", "max");
  for (int32_t k = 0; k < G->n_methods; k++) {
    const method_stats *m = &G->m[k];
    char b[6][32], eq[32] = "-";
    if (m->n)
      snprintf(eq, sizeof eq, "%.1f%%", 100.0 * m->equal / m->n);
    printf("  %-14s %6d %7s  %9s %9s %9s  %9s %9s %9s\n",
           cli_safe(m->method, safe, sizeof safe), (int)m->n, eq,
           pct(quantile(m->traffic, m->n, .5), b[0], 32),
           pct(quantile(m->traffic, m->n, .9), b[1], 32),
           pct(quantile(m->traffic, m->n, 1), b[2], 32),
           pct(quantile(m->peak, m->n, .5), b[3], 32),
           pct(quantile(m->peak, m->n, .9), b[4], 32),
           pct(quantile(m->peak, m->n, 1), b[5], 32));
  }
}

static void json_num(double v) {
  if (isnan(v))
    fputs("null", stdout);
  else
    printf("%.6g", v);
}

static void print_json(const group_stats *G, int32_t ng) {
  printf("{\"groups\": [");
  for (int32_t g = 0; g < ng; g++) {
    printf("%s\n {\"graph\": ", g ? "," : "");
    cli_json_str(stdout, G[g].graph);
    printf(", \"items\": %d, \"gold\": %d, \"methods\": [", (int)G[g].items,
           (int)G[g].gold);
    for (int32_t k = 0; k < G[g].n_methods; k++) {
      const method_stats *m = &G[g].m[k];
      printf("%s{\"method\": ", k ? ", " : "");
      cli_json_str(stdout, m->method);
      printf(", \"items\": %d, \"equal\": %d", (int)m->n, (int)m->equal);
      const char *key[6] = {
          "traffic_excess_median_pct", "traffic_excess_p90_pct",
          "traffic_excess_max_pct",    "peak_excess_median_pct",
          "peak_excess_p90_pct",       "peak_excess_max_pct"};
      double q[3] = {.5, .9, 1};
      for (int j = 0; j < 6; j++) {
        printf(", \"%s\": ", key[j]);
        json_num(quantile(j < 3 ? m->traffic : m->peak, m->n, q[j % 3]));
      }
      printf("}");
    }
    printf("]}");
  }
  printf("\n]}\n");
}

/* The figure of group G (figures.h): its methods' excesses and their
 * quantiles.  NULL out of memory. */
static char *report_svg(const group_stats *G) {
  fig_excess e[MAX_METHODS];
  static const double q[3] = {.5, .9, 1};
  for (int32_t k = 0; k < G->n_methods; k++) {
    const method_stats *m = &G->m[k];
    e[k] = (fig_excess){m->method, m->traffic, m->peak,  m->n,
                        m->equal,  {0, 0, 0},  {0, 0, 0}};
    for (int j = 0; j < 3; j++) {
      e[k].traffic_q[j] = m->n ? quantile(m->traffic, m->n, q[j]) : 0;
      e[k].peak_q[j] = m->n ? quantile(m->peak, m->n, q[j]) : 0;
    }
  }
  return fig_excess_svg(e, (int)G->n_methods, G->gold);
}

int cmd_batch_report(int argc, char **argv) {
  cli_opt opts[] = {{"json", 0, false, NULL}, {"svg", 0, true, NULL}};
  cli_args a = {.opts = opts, .n_opts = sizeof opts / sizeof *opts};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("batch report", "%s", a.error);
  if (a.help)
    return fputs(report_help, stdout), EXIT_OK;
  if (a.n_pos != 1)
    return cli_usage_error("batch report", "expected one DIR");
  fp_batch_record *r = NULL;
  int32_t n = 0, ng = 0;
  group_stats *G = NULL;
  fp_error err;
  int rc = 0;
  if (fp_batch_load_index(a.pos[0], &r, &n, &err) != FP_OK)
    return cli_fail(&err);
  if (build_groups(r, n, &G, &ng) != 0)
    rc = cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if (!rc && cli_get(&a, "svg"))
    rc = cli_write_text(cli_get(&a, "svg"), report_svg(&G[0]));
  if (!rc && cli_get(&a, "json"))
    print_json(G, ng);
  else if (!rc)
    for (int32_t g = 0; g < ng; g++)
      print_group(&G[g]);
  for (int32_t g = 0; G && g < ng; g++)
    group_free(&G[g]);
  free(G);
  free(r);
  return rc;
}
