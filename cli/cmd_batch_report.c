/*
 * cmd_batch_report.c -- `fuseplan batch report DIR`: every compared
 * method against the gold plans of a batch dataset: how often it equals
 * gold, and its excess traffic and peak over gold (median, p90, max), in
 * all and per source graph; a text table, --json, and an SVG chart of the
 * distribution of each method's excess traffic.
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

static const char report_help[] =
    "usage: fuseplan batch report DIR [--json] [--svg FILE]\n"
    "\n"
    "Every compared method against gold (the proven lexicographic optimum)\n"
    "on the items of DIR/index.jsonl: how often it equals gold, and its\n"
    "excess traffic and peak over gold (median, p90, max), in all and per\n"
    "source graph.\n"
    "\n"
    "  --json           the report as JSON on stdout\n"
    "  --svg FILE       the distribution of each method's excess traffic\n";

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

/* A round axis end at or above v (1, 2 or 5 times a power of ten). */
static double nice_ceil(double v) {
  if (!(v > 0))
    return 1;
  double p = pow(10, floor(log10(v)));
  return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

/* The chart's frame: where the plot lies inside the picture. */
typedef struct frame {
  double W, H, L, R, T, B; /* size, margins */
  double pw, ph;           /* the plot's size */
  double xmin, xmax;       /* the x axis, % */
} frame;

/* x of an excess of v %. */
static double frame_x(const frame *fr, double v) {
  return fr->L + fr->pw * (v - fr->xmin) / (fr->xmax - fr->xmin);
}

/* Title, grid, ticks (x: xmin..xmax %, y: 0..100 %), the line of no
 * excess, and axis labels. */
static void svg_axes(FILE *f, const frame *fr, int gold) {
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
          "font-family='sans-serif' font-size='12'>\n<rect width='100%%' "
          "height='100%%' fill='white'/>\n<text x='%.0f' y='22' "
          "font-size='15'>Excess traffic over gold: share of %d gold items "
          "at or below x</text>\n",
          fr->W, fr->H, fr->L, gold);
  for (int i = 0; i <= 5; i++) {
    double x = fr->L + fr->pw * i / 5, y = fr->T + fr->ph - fr->ph * i / 5;
    fprintf(f,
            "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='#ddd'/>"
            "<text x='%.1f' y='%.0f' text-anchor='middle'>%g%%</text>\n",
            x, fr->T, x, fr->T + fr->ph, x, fr->T + fr->ph + 18,
            fr->xmin + (fr->xmax - fr->xmin) * i / 5);
    fprintf(f,
            "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#ddd'/>"
            "<text x='%.0f' y='%.1f' text-anchor='end'>%d%%</text>\n",
            fr->L, y, fr->L + fr->pw, y, fr->L - 6, y + 4, 20 * i);
  }
  fprintf(f,
          "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' "
          "stroke='black'/>\n<text x='%.0f' y='%.0f' "
          "text-anchor='middle'>excess traffic over gold (%% of gold's "
          "traffic)</text>\n<text transform='translate(18 %.0f) rotate(-90)' "
          "text-anchor='middle'>gold items (%%)</text>\n",
          fr->L, fr->T, fr->pw, fr->ph, fr->L + fr->pw / 2, fr->H - 18,
          fr->T + fr->ph / 2);
  if (fr->xmin < 0)
    fprintf(f,
            "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='black' "
            "stroke-dasharray='4 3'/>\n",
            frame_x(fr, 0), fr->T, frame_x(fr, 0), fr->T + fr->ph);
}

/* Method k's curve (a step function of its sorted excesses) and its
 * legend entry. */
static void svg_curve(FILE *f, const frame *fr, const method_stats *m, int k) {
  static const char *const color[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#7f7f7f"};
  double L = fr->L, T = fr->T, pw = fr->pw, ph = fr->ph;
  fprintf(f, "<polyline fill='none' stroke-width='2' stroke='%s' points='",
          color[k % 8]);
  for (int32_t i = 0; i < m->n; i++) {
    double x = frame_x(fr, m->traffic[i]);
    fprintf(f, "%.1f,%.1f %.1f,%.1f ", x, T + ph - ph * i / m->n, x,
            T + ph - ph * (i + 1) / m->n);
  }
  if (m->n)
    fprintf(f, "%.1f,%.1f", L + pw, T);
  double ly = T + 10 + 20 * k;
  fprintf(f,
          "'/>\n<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='%s' "
          "stroke-width='2'/><text x='%.0f' y='%.0f'>%s (%d, %.0f%% "
          "= gold)</text>\n",
          L + pw + 12, ly, L + pw + 36, ly, color[k % 8], L + pw + 42, ly + 4,
          m->method, (int)m->n, m->n ? 100.0 * m->equal / m->n : 0.0);
}

/* The SVG chart: per method, the share of gold items (y) whose excess
 * traffic over gold is at most x.  NULL out of memory. */
static char *report_svg(const group_stats *G) {
  frame fr = {820, 440, 70, 270, 40, 60, 0, 0, 0, 0};
  fr.pw = fr.W - fr.L - fr.R;
  fr.ph = fr.H - fr.T - fr.B;
  for (int32_t k = 0; k < G->n_methods; k++)
    if (G->m[k].n) { /* sorted: first and last are the extremes */
      fr.xmin = fmin(fr.xmin, G->m[k].traffic[0]);
      fr.xmax = fmax(fr.xmax, G->m[k].traffic[G->m[k].n - 1]);
    }
  fr.xmin = fr.xmin < 0 ? -nice_ceil(-fr.xmin) : 0;
  fr.xmax = nice_ceil(fr.xmax);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return NULL;
  svg_axes(f, &fr, (int)G->gold);
  for (int32_t k = 0; k < G->n_methods; k++)
    svg_curve(f, &fr, &G->m[k], (int)k);
  fputs("</svg>\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
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
  if (!rc && cli_get(&a, "svg")) {
    char *svg = report_svg(&G[0]);
    rc = svg ? cli_write_file(cli_get(&a, "svg"), svg)
             : cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
    free(svg);
  }
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
