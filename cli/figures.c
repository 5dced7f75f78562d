/*
 * figures.c -- the front and timeline plots (figures.h).
 *
 * Both figures have the same frame: the plot area on the left, the
 * legend to its right (outside the data, so it never hides a point), the
 * title above.  Text labels go through plot_place_labels with every
 * marker, the legend and the axis labels as obstacles, so no label covers
 * another label, a marker or an axis, or leaves the canvas.
 */
#include "cli/figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plot.h"

#define FIG_W 860.0
#define FIG_H 500.0
#define FIG_MAX_OBSTACLES 512
#define FIG_MAX_LABELS 80

static const plot_box fig_area = {100, 44, 520, 380};

static const char *const palette[] = {"#1f4e79", "#c00000", "#2e7d32",
                                      "#7b1fa2", "#ef6c00", "#00838f",
                                      "#5d4037", "#455a64"};
#define PALETTE_N ((int)(sizeof palette / sizeof palette[0]))

#define LEGEND_X (fig_area.x + fig_area.w + 16)

/* The frame: the svg element, a white background and the title; wide
 * enough for the legend `rows` at the right of the plot area. */
static void begin(FILE *f, const char *title, const plot_legend_row *rows,
                  int n_rows) {
  plot_box lb = plot_legend_box(rows, n_rows, LEGEND_X, fig_area.y);
  double w = fmax(FIG_W, lb.x + lb.w + 12);
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
          "height='%.0f' viewBox='0 0 %.0f %.0f' font-family='sans-serif' "
          "font-size='11'>\n<rect width='100%%' height='100%%' "
          "fill='white'/>\n",
          w, FIG_H, w, FIG_H);
  char fit[256]; /* a long graph name is cut at the canvas's edge */
  plot_text(f, fig_area.x, 24, 14, "black", "start", 0,
            plot_fit(title, 14, w - fig_area.x - 12, fit, sizeof fit));
}

/* Everything a figure keeps labels off. */
typedef struct layout {
  plot_box obs[FIG_MAX_OBSTACLES];
  int n_obs;
  plot_label labels[FIG_MAX_LABELS];
  const char *colors[FIG_MAX_LABELS];
  int n_labels;
} layout;

static void add_obstacle(layout *L, plot_box b) {
  if (L->n_obs < FIG_MAX_OBSTACLES)
    L->obs[L->n_obs++] = b;
}

static void add_label(layout *L, const char *text, double x, double y,
                      const char *color) {
  if (L->n_labels == FIG_MAX_LABELS)
    return;
  plot_label_init(&L->labels[L->n_labels], text, x, y, 11);
  L->colors[L->n_labels++] = color;
}

/* Places and draws the labels, inside the plot area. */
static void draw_labels(FILE *f, layout *L) {
  plot_place_labels(L->labels, L->n_labels, &fig_area, L->obs, L->n_obs);
  for (int i = 0; i < L->n_labels; i++)
    plot_label_svg(f, &L->labels[i], L->colors[i]);
}

/* The legend at the right of the plot area. */
static void legend(FILE *f, const plot_legend_row *rows, int n) {
  plot_legend_svg(f, rows, n, LEGEND_X, fig_area.y);
}

/* ---- the front ----------------------------------------------------------- */

/* The range of peak (x) and traffic (y) over everything drawn, widened
 * by 4% so that no marker sits on the frame. */
static void front_axes(const fp_pareto_point *pts, int32_t n,
                       const fig_plan_point *marks, int nm, plot_axis *x,
                       plot_axis *y) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (int i = 0; i < n + nm; i++) {
    const fp_metrics *m = i < n ? &pts[i].m : &marks[i - n].m;
    x0 = fmin(x0, (double)m->peak_bytes);
    x1 = fmax(x1, (double)m->peak_bytes);
    y0 = fmin(y0, (double)m->traffic_bytes);
    y1 = fmax(y1, (double)m->traffic_bytes);
  }
  if (n + nm == 0)
    x0 = x1 = y0 = y1 = 0;
  double dx = (x1 - x0) * 0.04, dy = (y1 - y0) * 0.04;
  plot_axis_init(x, fmax(0, x0 - dx), x1 + dx, true, true);
  plot_axis_init(y, fmax(0, y0 - dy), y1 + dy, true, true);
}

static int by_peak(const void *a, const void *b) {
  const fp_pareto_point *p = *(const fp_pareto_point *const *)a,
                        *q = *(const fp_pareto_point *const *)b;
  return (p->m.peak_bytes > q->m.peak_bytes) -
         (p->m.peak_bytes < q->m.peak_bytes);
}

/* The non-dominated points as a staircase: the least traffic reachable
 * at each peak. */
static void staircase(FILE *f, const fp_pareto_point *pts, int32_t n,
                      const plot_axis *x, const plot_axis *y) {
  const fp_pareto_point **s = malloc((size_t)(n ? n : 1) * sizeof *s);
  int k = 0;
  if (!s)
    return; /* only the line is lost; the markers are drawn */
  for (int32_t i = 0; i < n; i++)
    if (!pts[i].dominated)
      s[k++] = &pts[i];
  qsort(s, (size_t)k, sizeof *s, by_peak);
  fputs("<polyline fill='none' stroke='#1f4e79' stroke-width='1.2' "
        "stroke-opacity='0.6' points='",
        f);
  for (int i = 0; i < k; i++) {
    double px = plot_px(&fig_area, x, (double)s[i]->m.peak_bytes);
    double py = plot_py(&fig_area, y, (double)s[i]->m.traffic_bytes);
    if (i > 0)
      fprintf(f, "%.1f,%.1f ", px,
              plot_py(&fig_area, y, (double)s[i - 1]->m.traffic_bytes));
    fprintf(f, "%.1f,%.1f ", px, py);
  }
  fputs("'/>\n", f);
  free(s);
}

static const char *kind_color(fig_kind k) {
  return k == FIG_EAGER ? "#000000" : k == FIG_GIVEN ? "#2e7d32" : "#c00000";
}

static plot_marker kind_marker(fig_kind k) {
  return k == FIG_EAGER   ? PLOT_DIAMOND
         : k == FIG_GIVEN ? PLOT_TRIANGLE
                          : PLOT_SQUARE;
}

/* Draws a marker of half-size r (hollow or filled) with its tooltip,
 * and makes it an obstacle. */
static void marker_r(FILE *f, layout *L, plot_marker mk, double px, double py,
                     double r, bool hollow, const char *color, const char *name,
                     const fp_metrics *m) {
  char tip[320], t[32], p[32];
  /* The exact byte counts too: the axes are rounded, the tooltip is not. */
  snprintf(tip, sizeof tip,
           "%s: traffic %s (%llu bytes), peak %s (%llu bytes), %d kernels",
           name, plot_bytes((double)m->traffic_bytes, t, sizeof t),
           (unsigned long long)m->traffic_bytes,
           plot_bytes((double)m->peak_bytes, p, sizeof p),
           (unsigned long long)m->peak_bytes, (int)m->kernels);
  plot_marker_svg_r(f, mk, px, py, r, hollow, color, tip);
  add_obstacle(L, plot_marker_box_r(px, py, r));
}

/* A filled marker of the usual size. */
static void marker(FILE *f, layout *L, plot_marker mk, double px, double py,
                   const char *color, const char *name, const fp_metrics *m) {
  marker_r(f, L, mk, px, py, PLOT_MARKER_R, false, color, name, m);
}

/* The plans beside the front, hollow, in order; a plan that shares its
 * point with later ones is drawn larger by 2.5 px for each, so that
 * coincident plans (Inductor's and greedy's, say) show as nested
 * outlines, none hidden. */
static void plan_marks(FILE *f, layout *L, const fig_plan_point *marks, int n,
                       const plot_axis *x, const plot_axis *y) {
  for (int i = 0; i < n; i++) {
    double px = plot_px(&fig_area, x, (double)marks[i].m.peak_bytes);
    double py = plot_py(&fig_area, y, (double)marks[i].m.traffic_bytes);
    int later = 0;
    for (int j = i + 1; j < n; j++)
      later +=
          fabs(plot_px(&fig_area, x, (double)marks[j].m.peak_bytes) - px) < 2 &&
          fabs(plot_py(&fig_area, y, (double)marks[j].m.traffic_bytes) - py) <
              2;
    marker_r(f, L, kind_marker(marks[i].kind), px, py,
             PLOT_MARKER_R + 2.5 * fmin(later, 6), true,
             kind_color(marks[i].kind), marks[i].name, &marks[i].m);
  }
}

char *fig_pareto_svg(const char *graph, const char *method,
                     const fp_pareto_point *pts, int32_t n,
                     const fig_plan_point *marks, int n_marks) {
  char *text = NULL, title[160], name[64];
  size_t len = 0;
  layout *L = calloc(1, sizeof *L);
  FILE *f = L ? open_memstream(&text, &len) : NULL;
  plot_axis x, y;
  if (!f) {
    free(L);
    return NULL;
  }
  front_axes(pts, n, marks, n_marks, &x, &y);
  snprintf(title, sizeof title, "memory traffic vs peak live memory: %s",
           graph);
  char front[64];
  snprintf(front, sizeof front, "fuseplan %s front", method);
  const plot_legend_row rows[] = {
      {front, PLOT_DOT, "#1f4e79", false},
      {"dominated point", PLOT_RING, "#1f4e79", false},
      {"eager (unfused)", PLOT_DIAMOND, "#000000", true},
      {"heuristic", PLOT_SQUARE, "#c00000", true},
      {"given plan (--start)", PLOT_TRIANGLE, "#2e7d32", true}};
  begin(f, title, rows, 5);
  char xt[64], yt[64];
  snprintf(xt, sizeof xt, "peak live memory (%s)", x.unit);
  snprintf(yt, sizeof yt, "memory traffic, bytes read + written (%s)", y.unit);
  plot_axes_svg(f, &fig_area, &x, &y, xt, yt, L->obs, &L->n_obs,
                FIG_MAX_OBSTACLES);
  staircase(f, pts, n, &x, &y);
  for (int32_t i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s, peak limit %llu", method,
             (unsigned long long)pts[i].peak_limit);
    marker(f, L, pts[i].dominated ? PLOT_RING : PLOT_DOT,
           plot_px(&fig_area, &x, (double)pts[i].m.peak_bytes),
           plot_py(&fig_area, &y, (double)pts[i].m.traffic_bytes), "#1f4e79",
           name, &pts[i].m);
  }
  /* Markers first (all of them are obstacles), then their labels. */
  plan_marks(f, L, marks, n_marks, &x, &y);
  legend(f, rows, 5);
  for (int i = 0; i < n_marks; i++)
    add_label(L, marks[i].name,
              plot_px(&fig_area, &x, (double)marks[i].m.peak_bytes),
              plot_py(&fig_area, &y, (double)marks[i].m.traffic_bytes),
              kind_color(marks[i].kind));
  draw_labels(f, L);
  fputs("</svg>\n", f);
  free(L);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* ---- the timeline -------------------------------------------------------- */

/* One plan's curve: a step line, and over each step a wide invisible
 * segment whose <title> names the kernel. */
static void timeline_curve(FILE *f, const fp_graph *g, const fig_series *s,
                           const plot_axis *x, const plot_axis *y,
                           const char *color) {
  int32_t T = fp_plan_group_count(s->plan);
  char live[32];
  fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='",
          color);
  for (int32_t t = 0; t < T; t++) {
    double py = plot_py(&fig_area, y, (double)s->steps[t].live_bytes);
    fprintf(f, "%.2f,%.2f %.2f,%.2f ", plot_px(&fig_area, x, t), py,
            plot_px(&fig_area, x, t + 1), py);
  }
  fputs("'/>\n<g stroke='black' stroke-opacity='0' stroke-width='6'>\n", f);
  for (int32_t t = 0; t < T; t++) {
    int32_t k;
    const int32_t *grp = fp_plan_group(s->plan, t, &k);
    double py = plot_py(&fig_area, y, (double)s->steps[t].live_bytes);
    fprintf(f, "<line x1='%.2f' y1='%.2f' x2='%.2f' y2='%.2f'><title>",
            plot_px(&fig_area, x, t), py, plot_px(&fig_area, x, t + 1), py);
    plot_xml(f, s->name);
    fprintf(f, ", step %d: kernel ", (int)t);
    plot_xml(f, fp_graph_node(g, grp[0])->name);
    if (k > 1)
      fprintf(f, " (+%d fused)", (int)(k - 1));
    fprintf(f, ", live %s</title></line>\n",
            plot_bytes((double)s->steps[t].live_bytes, live, sizeof live));
  }
  fputs("</g>\n", f);
}

char *fig_timeline_svg(const fp_graph *g, const fig_series *s, int n) {
  char *text = NULL, title[160], buf[PLOT_MAX_LABEL], peak[32];
  size_t len = 0;
  layout *L = calloc(1, sizeof *L);
  plot_legend_row *rows = calloc((size_t)n + 1, sizeof *rows);
  FILE *f = L && rows ? open_memstream(&text, &len) : NULL;
  plot_axis x, y;
  if (!f) {
    free(L);
    free(rows);
    return NULL;
  }
  double steps = 1, top = 0;
  for (int i = 0; i < n; i++) {
    steps = fmax(steps, fp_plan_group_count(s[i].plan));
    top = fmax(top, (double)s[i].m->peak_bytes);
  }
  plot_axis_init(&x, 0, steps, false, true);
  plot_axis_init(&y, 0, top * 1.05, true, true);
  snprintf(title, sizeof title, "live memory at each step: %s",
           fp_graph_name(g));
  for (int i = 0; i < n; i++)
    rows[i] =
        (plot_legend_row){s[i].name, PLOT_LINE, palette[i % PALETTE_N], false};
  rows[n] =
      (plot_legend_row){"peak of each plan", PLOT_DIAMOND, "#555555", false};
  begin(f, title, rows, n + 1);
  char yt[64];
  snprintf(yt, sizeof yt, "live memory (%s)", y.unit);
  plot_axes_svg(f, &fig_area, &x, &y,
                "step (kernels in execution order, count)", yt, L->obs,
                &L->n_obs, FIG_MAX_OBSTACLES);
  for (int i = 0; i < n; i++)
    timeline_curve(f, g, &s[i], &x, &y, palette[i % PALETTE_N]);
  for (int i = 0; i < n; i++) {
    const char *color = palette[i % PALETTE_N];
    int32_t ps = s[i].m->peak_step < 0 ? 0 : s[i].m->peak_step;
    double px = plot_px(&fig_area, &x, ps + 0.5);
    double py = plot_py(&fig_area, &y, (double)s[i].m->peak_bytes);
    plot_bytes((double)s[i].m->peak_bytes, peak, sizeof peak);
    snprintf(buf, sizeof buf, "%s peak, step %d", s[i].name, (int)ps);
    marker(f, L, PLOT_DIAMOND, px, py, color, buf, s[i].m);
    if (n > 1)
      snprintf(buf, sizeof buf, "%s: peak %s", s[i].name, peak);
    else
      snprintf(buf, sizeof buf, "peak %s", peak);
    add_label(L, buf, px, py, color);
  }
  legend(f, rows, n + 1);
  draw_labels(f, L);
  fputs("</svg>\n", f);
  free(L);
  free(rows);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* ---- the batch report ---------------------------------------------------- */

#define EXCESS_H 470.0
#define EXCESS_LEGEND_X 870.0

static const plot_box excess_area[2] = {{84, 56, 330, 330},
                                        {510, 56, 330, 330}};

static const plot_marker excess_shape[] = {PLOT_DOT, PLOT_SQUARE, PLOT_DIAMOND,
                                           PLOT_TRIANGLE};
#define EXCESS_SHAPES ((int)(sizeof excess_shape / sizeof excess_shape[0]))

/* Panel p's values of method m (0: traffic, 1: peak). */
static const double *excess_of(const fig_excess *m, int p) {
  return p == 0 ? m->traffic : m->peak;
}

/* The symmetric log x axis of panel p: linear up to the power of ten at
 * or below the least nonzero excess (0.001% to 1%), decades beyond; one
 * linear step either side of 0 at least, so that a vertical jump at 0
 * stays off the frame. */
static void excess_axis(const fig_excess *m, int n, int p, plot_axis *x) {
  double lo = 0, hi = 0, least = INFINITY;
  for (int k = 0; k < n; k++)
    for (int32_t i = 0; i < m[k].n; i++) {
      double v = excess_of(&m[k], p)[i];
      lo = fmin(lo, v);
      hi = fmax(hi, v);
      if (v != 0)
        least = fmin(least, fabs(v));
    }
  double lin = isfinite(least) ? pow(10, floor(log10(least))) : 0.1;
  lin = fmin(1, fmax(0.001, lin));
  plot_axis_symlog(x, fmin(lo, -lin), fmax(hi, lin), lin, "%");
}

/* How many of the points after i (of n) lie within 2 px of point i. */
static int later_coincident(const double *px, const double *py, int i, int n) {
  int c = 0;
  for (int j = i + 1; j < n; j++)
    c += fabs(px[j] - px[i]) < 2 && fabs(py[j] - py[i]) < 2;
  return c;
}

/* How far method k of n is drawn off its true position, right and down,
 * in px: methods side by side, 3 px apart (less when many), so that
 * curves and markers of equal values all show. */
static double excess_offset(int k, int n) {
  double gap = n > 1 ? fmin(3, 12.0 / (n - 1)) : 0;
  return gap * (k - (n - 1) / 2.0);
}

/* Method k's curve in panel p: the share of items (y, %) whose excess is
 * at most x, a step line, off by d px (excess_offset). */
static void excess_curve(FILE *f, const fig_excess *m, int k, double d, int p,
                         const plot_axis *x, const plot_axis *y) {
  const plot_box *a = &excess_area[p];
  const double *v = excess_of(m, p);
  fprintf(f,
          "<polyline fill='none' stroke='%s' stroke-width='2' "
          "stroke-linejoin='round' points='%.1f,%.1f ",
          palette[k % PALETTE_N], a->x, plot_py(a, y, 0) + d);
  for (int32_t i = 0; i < m->n;) {
    int32_t j = i;
    while (j < m->n && v[j] == v[i])
      j++;
    double px = plot_px(a, x, v[i]) + d;
    fprintf(f, "%.1f,%.1f %.1f,%.1f ", px, plot_py(a, y, 100.0 * i / m->n) + d,
            px, plot_py(a, y, 100.0 * j / m->n) + d);
    i = j;
  }
  fprintf(f, "%.1f,%.1f'/>\n", a->x + a->w, plot_py(a, y, 100) + d);
}

/* The median, p90 and max of every method in panel p, hollow, each on
 * its curve; where values coincide the earlier markers are larger. */
static void excess_marks(FILE *f, const fig_excess *m, int n, int p,
                         const plot_axis *x, const plot_axis *y) {
  static const char *const qname[3] = {"median", "p90", "max"};
  static const double qy[3] = {50, 90, 100};
  double px[3 * FIG_MAX_METHODS], py[3 * FIG_MAX_METHODS];
  char tip[160];
  for (int i = 0; i < 3 * n; i++) {
    const double *q = p == 0 ? m[i / 3].traffic_q : m[i / 3].peak_q;
    px[i] = plot_px(&excess_area[p], x, q[i % 3]);
    py[i] = plot_py(&excess_area[p], y, qy[i % 3]);
  }
  for (int i = 0; i < 3 * n; i++) {
    const fig_excess *e = &m[i / 3];
    double d = excess_offset(i / 3, n);
    if (!e->n)
      continue;
    snprintf(tip, sizeof tip, "%.40s: %s %s excess %.3g%% over %d items",
             e->name, qname[i % 3], p == 0 ? "traffic" : "peak",
             (p == 0 ? e->traffic_q : e->peak_q)[i % 3], (int)e->n);
    plot_marker_svg_r(
        f, excess_shape[(i / 3) % EXCESS_SHAPES], px[i] + d, py[i] + d,
        PLOT_MARKER_R + 2.5 * fmin(later_coincident(px, py, i, 3 * n), 6), true,
        palette[(i / 3) % PALETTE_N], tip);
  }
}

/* One panel: axes, curves, markers. */
static void excess_panel(FILE *f, const fig_excess *m, int n, int p) {
  plot_axis x, y;
  char xt[96];
  excess_axis(m, n, p, &x);
  plot_axis_init(&y, 0, 100, false, false);
  y.unit = "%";
  y.lo = -4;  /* the ends a little past 0% and 100%: curves along them */
  y.hi = 104; /* stay off the frame */
  snprintf(xt, sizeof xt, "excess %s over gold (linear to %g%%, log beyond)",
           p == 0 ? "traffic" : "peak", x.lin);
  plot_axes_svg(f, &excess_area[p], &x, &y, xt, "gold items at or below x",
                NULL, NULL, 0);
  for (int k = 0; k < n; k++)
    if (m[k].n)
      excess_curve(f, &m[k], k, excess_offset(k, n), p, &x, &y);
  excess_marks(f, m, n, p, &x, &y);
}

char *fig_excess_svg(const fig_excess *m, int n, int32_t gold) {
  char *text = NULL, title[128];
  char names[FIG_MAX_METHODS][PLOT_MAX_LABEL];
  plot_legend_row rows[FIG_MAX_METHODS + 1];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return NULL;
  n = n < FIG_MAX_METHODS ? n : FIG_MAX_METHODS;
  for (int k = 0; k < n; k++) {
    snprintf(names[k], sizeof names[k], "%.40s: %d items, %.0f%% = gold",
             m[k].name, (int)m[k].n, m[k].n ? 100.0 * m[k].equal / m[k].n : 0);
    rows[k] = (plot_legend_row){names[k], excess_shape[k % EXCESS_SHAPES],
                                palette[k % PALETTE_N], true};
  }
  plot_box lb = plot_legend_box(rows, n, EXCESS_LEGEND_X, excess_area[0].y);
  double w = fmax(EXCESS_LEGEND_X + 200, lb.x + lb.w + 12);
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
          "height='%.0f' viewBox='0 0 %.0f %.0f' font-family='sans-serif' "
          "font-size='11'>\n<rect width='100%%' height='100%%' "
          "fill='white'/>\n",
          w, EXCESS_H, w, EXCESS_H);
  snprintf(title, sizeof title,
           "Excess over gold on %d gold items: the share of items at or "
           "below each excess",
           (int)gold);
  plot_text(f, excess_area[0].x, 24, 14, "black", "start", 0, title);
  for (int p = 0; p < 2; p++)
    excess_panel(f, m, n, p);
  plot_legend_svg(f, rows, n, EXCESS_LEGEND_X, excess_area[0].y);
  plot_text(f, EXCESS_LEGEND_X, lb.y + lb.h + 18, 11, "#555555", "start", 0,
            "markers: median, p90, max");
  plot_text(f, EXCESS_LEGEND_X, lb.y + lb.h + 34, 11, "#555555", "start", 0,
            "equal curves side by side, 3 px apart");
  fputs("</svg>\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

const char *fig_short_name(const char *path, char *buf, size_t n) {
  static const char *const ext[] = {".gz", ".json", ".plan"};
  const char *base = strrchr(path, '/');
  snprintf(buf, n, "%s", base ? base + 1 : path);
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    size_t bl = strlen(buf), el = strlen(ext[i]);
    if (bl > el && strcmp(buf + bl - el, ext[i]) == 0)
      buf[bl - el] = '\0';
  }
  if (n > FIG_NAME_MAX + 1 && strlen(buf) > FIG_NAME_MAX)
    strcpy(buf + FIG_NAME_MAX - 2, "..");
  return buf;
}
