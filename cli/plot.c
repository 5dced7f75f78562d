/*
 * plot.c -- axis ticks, text extents, label placement and SVG primitives
 * for the plots of `pareto --svg` and `eval`/`compare --timeline`.
 *
 * Placement is greedy and deterministic: labels are placed in the order
 * given (the caller puts the most important first), each at the first
 * free spot of a fixed search around its anchor.  The check that the
 * result holds (plot_layout_ok) is separate, so tests hold the placer to
 * it.
 */
#include "cli/plot.h"

#include <math.h>
#include <string.h>

bool plot_box_intersects(const plot_box *a, const plot_box *b) {
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h &&
         b->y < a->y + a->h;
}

bool plot_box_inside(const plot_box *inner, const plot_box *outer) {
  return inner->x >= outer->x && inner->y >= outer->y &&
         inner->x + inner->w <= outer->x + outer->w &&
         inner->y + inner->h <= outer->y + outer->h;
}

plot_box plot_text_box(const char *text, double font_size, double x, double y) {
  /* Ascent ~0.8 em above the baseline, descent ~0.25 em below. */
  return (plot_box){x, y - 0.8 * font_size,
                    PLOT_CHAR_W * font_size * (double)strlen(text),
                    1.05 * font_size};
}

const char *plot_fit(const char *s, double font, double width, char *buf,
                     size_t n) {
  size_t len = strlen(s), max = (size_t)fmax(0, width / (PLOT_CHAR_W * font));
  if (n == 0)
    return buf;
  if (len <= max && len < n) {
    memcpy(buf, s, len + 1);
    return buf;
  }
  size_t k = max < n - 1 ? max : n - 1;
  k = k > 3 ? k - 3 : 0;
  while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
    k--; /* not inside a character */
  memcpy(buf, s, k);
  snprintf(buf + k, n - k, "...");
  return buf;
}

/* ---- axes ---------------------------------------------------------------- */

static const struct {
  const char *name;
  double scale;
} byte_units[] = {{"B", 1},
                  {"KiB", 1024.0},
                  {"MiB", 1048576.0},
                  {"GiB", 1073741824.0},
                  {"TiB", 1099511627776.0}};

/* Ticks of step `step` covering [lo, hi]: how many. */
static int tick_count(double lo, double hi, double step) {
  return (int)llround(ceil(hi / step - 1e-9) - floor(lo / step + 1e-9)) + 1;
}

/* The step (1, 2 or 5 times a power of ten, times `scale`) whose ticks
 * over [lo, hi] number PLOT_MIN_TICKS..PLOT_MAX_TICKS, the coarsest such;
 * `min_step` bounds it below. */
static double nice_step(double lo, double hi, double scale, double min_step) {
  static const double mult[] = {5, 2, 1};
  double span = (hi - lo) / scale;
  int e = (int)floor(log10(span > 0 ? span : 1)) + 1;
  double best = 0;
  for (int k = e; k >= e - 6; k--)
    for (int i = 0; i < 3; i++) {
      double step = mult[i] * pow(10, k) * scale;
      if (step < min_step)
        return best > 0 ? best : min_step;
      int c = tick_count(lo, hi, step);
      if (c >= PLOT_MIN_TICKS && c <= PLOT_MAX_TICKS)
        return step;
      if (c < PLOT_MIN_TICKS)
        best = step; /* the finest too coarse so far: finer ones follow */
    }
  return best > 0 ? best : min_step;
}

/* The ticks of a linear axis, from lo by step; a tick within rounding
 * error of zero is zero (no "-0" label). */
static void linear_ticks(plot_axis *a) {
  if (a->nticks > PLOT_MAX_TICKS) /* cannot happen: nice_step bounds it */
    a->nticks = PLOT_MAX_TICKS;
  for (int i = 0; i < a->nticks; i++) {
    double v = a->lo + i * a->step;
    a->ticks[i] = fabs(v) < 1e-9 * a->step ? 0 : v;
  }
}

void plot_axis_init(plot_axis *a, double lo, double hi, bool bytes,
                    bool integral) {
  if (!(hi > lo)) { /* one value (or none): a range around it */
    double d = fabs(lo) > 0 ? fabs(lo) * 0.05 : 1;
    lo -= d;
    hi += d;
  }
  if ((integral || bytes) && hi - lo < PLOT_MIN_TICKS - 1) {
    /* Whole steps: room for the fewest ticks around the data. */
    lo = floor(lo);
    hi = fmax(ceil(hi), lo + PLOT_MIN_TICKS - 1);
  }
  a->scale = 1;
  a->unit = "";
  a->lin = 0;
  a->lin_width = 0;
  if (bytes) {
    for (size_t i = 0; i < sizeof byte_units / sizeof byte_units[0]; i++)
      if (fabs(hi) >= byte_units[i].scale) {
        a->scale = byte_units[i].scale;
        a->unit = byte_units[i].name;
      }
    if (!*a->unit)
      a->unit = "B";
  }
  a->step = nice_step(lo, hi, a->scale, integral || bytes ? 1 : 0);
  a->lo = floor(lo / a->step + 1e-9) * a->step;
  a->hi = ceil(hi / a->step - 1e-9) * a->step;
  a->nticks = tick_count(a->lo, a->hi, a->step);
  linear_ticks(a);
}

/* Decades of lin * 10^k, k = 0..K, that reach v (> 0): K. */
static int decades(double v, double lin) {
  int k = 0;
  while (k < 300 && lin * pow(10, k) < v * (1 - 1e-9))
    k++;
  return k;
}

/* Ticks of one side: 0, then lin * 10^(s*j) for j = 0 .. ceil(K/s). */
static int side_ticks(int K, int s) {
  return K < 0 ? 0 : (K + s - 1) / s + 1;
}

void plot_axis_symlog(plot_axis *a, double lo, double hi, double lin,
                      const char *unit) {
  int kn = lo < 0 ? decades(-lo, lin) : -1, kp = hi > 0 ? decades(hi, lin) : -1;
  int s = 1;
  while (side_ticks(kn, s) + 1 + side_ticks(kp, s) > PLOT_MAX_TICKS)
    s++;
  /* Too few: reach further right (the side an excess grows to). */
  while (side_ticks(kn, s) + 1 + side_ticks(kp, s) < PLOT_MIN_TICKS)
    kp = kp < 0 ? 0 : kp + s;
  a->lin = lin;
  a->lin_width = s;
  a->scale = 1;
  a->unit = unit;
  a->step = 0;
  a->nticks = 0;
  for (int j = side_ticks(kn, s) - 1; j >= 0; j--)
    a->ticks[a->nticks++] = -lin * pow(10, j * s);
  a->ticks[a->nticks++] = 0;
  for (int j = 0; j < side_ticks(kp, s); j++)
    a->ticks[a->nticks++] = lin * pow(10, j * s);
  a->lo = a->ticks[0];
  a->hi = a->ticks[a->nticks - 1];
}

/* Formats v (a multiple of step, both scaled) with the fewest decimals
 * that show the step; in e-notation, with the digits that tell the ticks
 * apart, when that would take more than 3 decimals or 7 digits. */
static void format_scaled(double v, double step, char *buf, size_t n) {
  if (fabs(v) >= 1e7 || step < 1e-3) {
    int digits = v == 0 ? 1 : (int)ceil(log10(fabs(v) / step + 1e-9)) + 1;
    snprintf(buf, n, "%.*g", digits < 1 ? 1 : digits > 15 ? 15 : digits, v);
    return;
  }
  int dec = 0;
  while (dec < 3 && fabs(step * pow(10, dec) - llround(step * pow(10, dec))) >
                        1e-6 * step * pow(10, dec))
    dec++;
  snprintf(buf, n, "%.*f", dec, v);
}

const char *plot_axis_label(const plot_axis *a, double v, char *buf, size_t n) {
  char num[48];
  /* A log tick shows its own digits: 0.01, 1, 100. */
  double step = a->lin > 0 ? (v != 0 ? fabs(v) : 1) : a->step;
  format_scaled(v / a->scale, step / a->scale, num, sizeof num);
  if (*a->unit)
    snprintf(buf, n, strcmp(a->unit, "%") ? "%s %s" : "%s%s", num, a->unit);
  else
    snprintf(buf, n, "%s", num);
  return buf;
}

const char *plot_bytes(double bytes, char *buf, size_t n) {
  size_t u = 0;
  while (u + 1 < sizeof byte_units / sizeof byte_units[0] &&
         fabs(bytes) >= byte_units[u + 1].scale)
    u++;
  snprintf(buf, n, "%.3g %s", bytes / byte_units[u].scale, byte_units[u].name);
  return buf;
}

/* Where v lies along axis a, before scaling to pixels: v itself, or on
 * a symmetric log axis w * v/lin inside +-lin and +-(w + log10(|v|/lin))
 * outside, w the linear part's width (1 decade unless set). */
static double axis_pos(const plot_axis *a, double v) {
  if (a->lin <= 0)
    return v;
  double w = a->lin_width > 0 ? a->lin_width : 1;
  double m = fabs(v) / a->lin, t = m <= 1 ? m * w : w + log10(m);
  return v < 0 ? -t : t;
}

/* Where v lies along a, from 0 at lo to 1 at hi. */
static double axis_frac(const plot_axis *a, double v) {
  double lo = axis_pos(a, a->lo), hi = axis_pos(a, a->hi);
  return hi > lo ? (axis_pos(a, v) - lo) / (hi - lo) : 0.5;
}

double plot_px(const plot_box *area, const plot_axis *x, double v) {
  return area->x + area->w * axis_frac(x, v);
}

double plot_py(const plot_box *area, const plot_axis *y, double v) {
  return area->y + area->h - area->h * axis_frac(y, v);
}

/* ---- labels -------------------------------------------------------------- */

void plot_label_init(plot_label *l, const char *text, double ax, double ay,
                     double font) {
  memset(l, 0, sizeof *l);
  size_t n = strlen(text);
  if (n >= sizeof l->text) { /* cut before a character, not inside one */
    n = sizeof l->text - 1;
    while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
      n--;
  }
  memcpy(l->text, text, n);
  l->ax = ax;
  l->ay = ay;
  l->font = font;
}

/* Whether box b is free: inside the area, off the obstacles and off the
 * labels placed so far. */
static bool box_free(const plot_box *b, const plot_box *area,
                     const plot_label *placed, int n_placed,
                     const plot_box *obstacles, int n_obstacles) {
  if (!plot_box_inside(b, area))
    return false;
  for (int i = 0; i < n_obstacles; i++)
    if (plot_box_intersects(b, &obstacles[i]))
      return false;
  for (int i = 0; i < n_placed; i++)
    if (placed[i].placed && plot_box_intersects(b, &placed[i].box))
      return false;
  return true;
}

/* Puts label l with its box's top-left at (x, y). */
static void put(plot_label *l, double x, double y, bool leader) {
  l->box = plot_text_box(l->text, l->font, 0, 0);
  l->box.x = x;
  l->box.y = y;
  l->tx = x;
  l->ty = y + 0.8 * l->font;
  l->leader = leader;
  l->placed = true;
}

/* Tries the eight spots around the anchor at distance r (right, left,
 * above, below, then the corners); true when one was free. */
static bool try_ring(plot_label *l, double r, const plot_box *area,
                     const plot_label *placed, int n_placed,
                     const plot_box *obstacles, int n_obstacles) {
  plot_box b = plot_text_box(l->text, l->font, 0, 0);
  const double cx[8] = {r, -r - b.w, -b.w / 2, -b.w / 2,
                        r, -r - b.w, r,        -r - b.w};
  const double cy[8] = {-b.h / 2, -b.h / 2, -r - b.h, r,
                        -r - b.h, -r - b.h, r,        r};
  for (int k = 0; k < 8; k++) {
    b.x = l->ax + cx[k];
    b.y = l->ay + cy[k];
    if (box_free(&b, area, placed, n_placed, obstacles, n_obstacles)) {
      put(l, b.x, b.y, r > PLOT_MARKER_R + 3);
      return true;
    }
  }
  return false;
}

/* The free spot nearest the anchor on a grid over the area. */
static bool try_grid(plot_label *l, const plot_box *area,
                     const plot_label *placed, int n_placed,
                     const plot_box *obstacles, int n_obstacles) {
  plot_box b = plot_text_box(l->text, l->font, 0, 0);
  double best = INFINITY, bx = 0, by = 0;
  for (double y = area->y; y + b.h <= area->y + area->h; y += 4)
    for (double x = area->x; x + b.w <= area->x + area->w; x += 4) {
      double dx = x + b.w / 2 - l->ax, dy = y + b.h / 2 - l->ay;
      double d = dx * dx + dy * dy;
      if (d >= best)
        continue;
      b.x = x;
      b.y = y;
      if (box_free(&b, area, placed, n_placed, obstacles, n_obstacles)) {
        best = d;
        bx = x;
        by = y;
      }
    }
  if (best == INFINITY)
    return false;
  put(l, bx, by, true);
  return true;
}

int plot_place_labels(plot_label *labels, int n, const plot_box *area,
                      const plot_box *obstacles, int n_obstacles) {
  int missed = 0;
  for (int i = 0; i < n; i++) {
    plot_label *l = &labels[i];
    l->placed = false;
    bool done = false;
    for (double r = PLOT_MARKER_R + 2; !done && r <= 60; r += 12)
      done = try_ring(l, r, area, labels, i, obstacles, n_obstacles);
    if (!done)
      done = try_grid(l, area, labels, i, obstacles, n_obstacles);
    missed += !done;
  }
  return missed;
}

bool plot_layout_ok(const plot_label *labels, int n, const plot_box *area,
                    const plot_box *obstacles, int n_obstacles) {
  for (int i = 0; i < n; i++) {
    if (!labels[i].placed)
      continue;
    if (!box_free(&labels[i].box, area, labels, i, obstacles, n_obstacles))
      return false;
  }
  return true;
}

/* ---- SVG ----------------------------------------------------------------- */

/* The length (1 to 4) of the well-formed UTF-8 sequence at p, its code
 * point in *cp; 0 when p starts none: a stray continuation byte, an
 * overlong form, a surrogate, a code point above U+10FFFF, or a sequence
 * cut short (by the terminating NUL too). */
static int utf8_seq(const unsigned char *p, uint32_t *cp) {
  static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  int n = p[0] < 0x80                    ? 1
          : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
          : p[0] >= 0xe0 && p[0] <= 0xef ? 3
          : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                         : 0;
  uint32_t c = p[0] & lead_mask[n];
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (p[i] & 0x3fu);
  }
  if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
      (n == 4 && (c < 0x10000 || c > 0x10ffff)))
    return 0;
  *cp = c;
  return n;
}

/* The escape of code point c in XML text and attributes; NULL when c
 * stands for itself.  XML 1.0 forbids the C0 controls but tab, LF and CR
 * (which we show as a space: names are one line) and U+FFFE, U+FFFF; DEL
 * and the C1 controls it allows, but a terminal obeys them, so they go
 * too. */
static const char *xml_escape(uint32_t c) {
  switch (c) {
  case '<':
    return "&lt;";
  case '>':
    return "&gt;";
  case '&':
    return "&amp;";
  case '\'':
    return "&apos;";
  case '"':
    return "&quot;";
  case '\t':
  case '\n':
  case '\r':
    return " ";
  default:
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xfffe || c == 0xffff
               ? PLOT_XML_REPLACEMENT
               : NULL;
  }
}

void plot_xml(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    uint32_t c = 0;
    int n = utf8_seq(p, &c);
    const char *esc = n ? xml_escape(c) : PLOT_XML_REPLACEMENT;
    if (esc)
      fputs(esc, f);
    else
      fwrite(p, 1, (size_t)n, f);
    p += n ? n : 1; /* a bad byte is replaced alone; the next may start a
                       good sequence */
  }
}

void plot_text(FILE *f, double x, double y, double font, const char *fill,
               const char *anchor, double rotate, const char *s) {
  fprintf(f, "<text x='%.1f' y='%.1f' font-size='%.0f' fill='%s'", x, y, font,
          fill);
  if (strcmp(anchor, "start") != 0)
    fprintf(f, " text-anchor='%s'", anchor);
  if (rotate != 0)
    fprintf(f, " transform='rotate(%.0f %.1f %.1f)'", rotate, x, y);
  fputc('>', f);
  plot_xml(f, s);
  fputs("</text>\n", f);
}

void plot_label_svg(FILE *f, const plot_label *l, const char *fill) {
  if (!l->placed)
    return;
  if (l->leader) {
    /* From the anchor to the nearest point of the label's box. */
    double x = fmax(l->box.x, fmin(l->ax, l->box.x + l->box.w));
    double y = fmax(l->box.y, fmin(l->ay, l->box.y + l->box.h));
    fprintf(f,
            "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' "
            "stroke-width='0.7'/>\n",
            l->ax, l->ay, x, y, fill);
  }
  /* A white halo keeps the text readable over the curves it may cross. */
  fprintf(f,
          "<text x='%.1f' y='%.1f' font-size='%.0f' fill='%s' stroke='white' "
          "stroke-width='3' stroke-linejoin='round' paint-order='stroke'>",
          l->tx, l->ty, l->font, fill);
  plot_xml(f, l->text);
  fputs("</text>\n", f);
}

/* Appends b to the obstacles when there is room. */
static void add_obstacle(plot_box *obs, int *n, int max, plot_box b) {
  if (obs && *n < max)
    obs[(*n)++] = b;
}

void plot_axes_svg(FILE *f, const plot_box *area, const plot_axis *x,
                   const plot_axis *y, const char *xtitle, const char *ytitle,
                   plot_box *obstacles, int *n_obstacles, int max) {
  const double font = 11, bottom = area->y + area->h;
  char buf[64];
  double ylabel_w = 0;
  fprintf(f, "<g stroke='#dddddd' stroke-width='0.6'>\n");
  for (int i = 0; i < x->nticks; i++) {
    double px = plot_px(area, x, x->ticks[i]);
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>\n", px, area->y,
            px, bottom);
  }
  for (int i = 0; i < y->nticks; i++) {
    double py = plot_py(area, y, y->ticks[i]);
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>\n", area->x, py,
            area->x + area->w, py);
  }
  fprintf(f,
          "</g>\n<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
          "fill='none' stroke='black'/>\n",
          area->x, area->y, area->w, area->h);
  for (int i = 0; i < x->nticks; i++) {
    double v = x->ticks[i], px = plot_px(area, x, v);
    plot_axis_label(x, v, buf, sizeof buf);
    plot_box b = plot_text_box(buf, font, 0, bottom + 16);
    b.x = px - b.w / 2;
    fprintf(f,
            "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
            "stroke='black'/>\n",
            px, bottom, px, bottom + 4);
    plot_text(f, px, bottom + 16, font, "black", "middle", 0, buf);
    add_obstacle(obstacles, n_obstacles, max, b);
  }
  for (int i = 0; i < y->nticks; i++) {
    double v = y->ticks[i], py = plot_py(area, y, v);
    plot_axis_label(y, v, buf, sizeof buf);
    plot_box b = plot_text_box(buf, font, 0, py + 4);
    b.x = area->x - 7 - b.w;
    ylabel_w = fmax(ylabel_w, b.w);
    fprintf(f,
            "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
            "stroke='black'/>\n",
            area->x - 4, py, area->x, py);
    plot_text(f, area->x - 7, py + 4, font, "black", "end", 0, buf);
    add_obstacle(obstacles, n_obstacles, max, b);
  }
  plot_text(f, area->x + area->w / 2, bottom + 36, 12, "black", "middle", 0,
            xtitle);
  plot_box xt = plot_text_box(xtitle, 12, 0, bottom + 36);
  xt.x = area->x + area->w / 2 - xt.w / 2;
  add_obstacle(obstacles, n_obstacles, max, xt);
  double ty = area->y + area->h / 2, tx = area->x - 14 - ylabel_w;
  plot_text(f, tx, ty, 12, "black", "middle", -90, ytitle);
  plot_box yt = plot_text_box(ytitle, 12, 0, 0); /* rotated: swap w, h */
  add_obstacle(obstacles, n_obstacles, max,
               (plot_box){tx - yt.h, ty - yt.w / 2, yt.h, yt.w});
}

/* The element name of marker m. */
static const char *marker_element(plot_marker m) {
  return m == PLOT_DOT || m == PLOT_RING ? "circle"
         : m == PLOT_SQUARE              ? "rect"
         : m == PLOT_LINE                ? "line"
                                         : "polygon";
}

void plot_marker_svg_r(FILE *f, plot_marker m, double x, double y, double r,
                       bool hollow, const char *color, const char *tip) {
  char paint[96];
  /* Hollow: the outline only, so a marker under it shows through. */
  if (hollow || m == PLOT_RING)
    snprintf(paint, sizeof paint, "fill='%s' stroke='%s' stroke-width='1.6'",
             m == PLOT_RING ? "white" : "none", color);
  else if (m == PLOT_DOT)
    snprintf(paint, sizeof paint, "fill='%s' stroke='%s'", color, color);
  else
    snprintf(paint, sizeof paint, "fill='%s'", color);
  switch (m) {
  case PLOT_DOT:
  case PLOT_RING:
    fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%.1f' %s", x, y, r, paint);
    break;
  case PLOT_SQUARE:
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' %s", x - r,
            y - r, 2 * r, 2 * r, paint);
    break;
  case PLOT_DIAMOND:
    fprintf(f, "<polygon points='%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f' %s",
            x, y - r - 1, x + r + 1, y, x, y + r + 1, x - r - 1, y, paint);
    break;
  case PLOT_TRIANGLE:
    fprintf(f, "<polygon points='%.1f,%.1f %.1f,%.1f %.1f,%.1f' %s", x,
            y - r - 1, x + r + 1, y + r, x - r - 1, y + r, paint);
    break;
  case PLOT_LINE:
    fprintf(f,
            "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' "
            "stroke-width='2'",
            x - 2 * r, y, x + 2 * r, y, color);
    break;
  }
  if (tip) {
    fputs("><title>", f);
    plot_xml(f, tip);
    fprintf(f, "</title></%s>\n", marker_element(m));
  } else {
    fputs("/>\n", f);
  }
}

void plot_marker_svg(FILE *f, plot_marker m, double x, double y,
                     const char *color, const char *tip) {
  plot_marker_svg_r(f, m, x, y, PLOT_MARKER_R, false, color, tip);
}

plot_box plot_marker_box(double x, double y) {
  return plot_marker_box_r(x, y, PLOT_MARKER_R);
}

plot_box plot_marker_box_r(double x, double y, double r) {
  r += 1;
  return (plot_box){x - r, y - r, 2 * r, 2 * r};
}

#define LEGEND_ROW 16.0
#define LEGEND_FONT 11.0

plot_box plot_legend_box(const plot_legend_row *rows, int n, double x,
                         double y) {
  double w = 0;
  for (int i = 0; i < n; i++)
    w = fmax(w, plot_text_box(rows[i].text, LEGEND_FONT, 0, 0).w);
  return (plot_box){x, y, w + 40, n * LEGEND_ROW + 8};
}

void plot_legend_svg(FILE *f, const plot_legend_row *rows, int n, double x,
                     double y) {
  plot_box b = plot_legend_box(rows, n, x, y);
  fprintf(f,
          "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
          "fill='white' stroke='#888888'/>\n",
          b.x, b.y, b.w, b.h);
  for (int i = 0; i < n; i++) {
    double cy = y + 4 + LEGEND_ROW * i + LEGEND_ROW / 2;
    plot_marker_svg_r(f, rows[i].marker, x + 16, cy, PLOT_MARKER_R,
                      rows[i].hollow, rows[i].color, NULL);
    plot_text(f, x + 32, cy + 4, LEGEND_FONT, "black", "start", 0,
              rows[i].text);
  }
}
