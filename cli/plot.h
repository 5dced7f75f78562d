/*
 * plot.h -- the layout under fuseplan's SVG plots: round axis ticks in
 * binary units, text extents, label placement that keeps every label
 * inside the canvas and off every other label and obstacle, and the SVG
 * primitives the figures are drawn with.
 *
 * Library-free (libc and libm only), so that the layout is unit-tested on
 * its own (tests/cli/test_plot.c).  Text extents are estimated with a
 * fixed width per character (PLOT_CHAR_W of the font size, a little wider
 * than the average glyph of a sans-serif font, so estimates err large).
 */
#ifndef FP_PLOT_H
#define FP_PLOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PLOT_CHAR_W 0.7 /* estimated glyph width / font size */
#define PLOT_MIN_TICKS 4
#define PLOT_MAX_TICKS 8
#define PLOT_MAX_LABEL 96 /* bytes of a label's text, NUL included */

/* An axis-aligned box: x, y its top-left corner (SVG coordinates, y down). */
typedef struct plot_box {
  double x, y, w, h;
} plot_box;

/* Whether a and b overlap (touching edges do not). */
bool plot_box_intersects(const plot_box *a, const plot_box *b);

/* Whether `inner` lies wholly inside `outer`. */
bool plot_box_inside(const plot_box *inner, const plot_box *outer);

/* The estimated extent of `text` at `font_size` with its left end at x
 * and its baseline at y. */
plot_box plot_text_box(const char *text, double font_size, double x, double y);

/* s cut to fit `width` px at `font` (and n bytes), "..." marking a cut,
 * between characters; returns buf. */
const char *plot_fit(const char *s, double font, double width, char *buf,
                     size_t n);

/* An axis: ticks at lo, lo + step, ..., hi (every tick a multiple of
 * step), between PLOT_MIN_TICKS and PLOT_MAX_TICKS of them, and labels in
 * `unit` ("MiB"; "%"; "" for plain numbers) of `scale` (2^20 for MiB).
 * A symmetric log axis (lin > 0) is linear within [-lin, lin] and
 * logarithmic outside, with ticks at 0 and at +-lin times powers of ten;
 * its step is 0. */
typedef struct plot_axis {
  double lo, hi, step; /* the ends (the first and last ticks, unless a
                          caller widens them), in data units (bytes) */
  int nticks;
  double scale;
  const char *unit;
  double lin;                   /* > 0: symmetric log, linear up to lin */
  double lin_width;             /* the linear part's width, in decades: the
                                   ticks' decade stride, so that +-lin stand
                                   one tick spacing from 0 */
  double ticks[PLOT_MAX_TICKS]; /* the tick values, lo first, hi last */
} plot_axis;

/* Fills *a with round ticks covering [lo, hi] (lo <= hi; equal ends are
 * widened; finite values).  bytes: steps of 1, 2 or 5 times a power of
 * ten in the binary unit (B, KiB, MiB, GiB, TiB) that suits hi; otherwise
 * plain numbers with steps of 1, 2 or 5 times a power of ten (at least 1
 * when `integral`). */
void plot_axis_init(plot_axis *a, double lo, double hi, bool bytes,
                    bool integral);

/* Fills *a with a symmetric log axis covering [lo, hi] and 0: linear
 * within +-lin (lin > 0, a power of ten, say), ticks at 0 and at
 * +-lin * 10^k, every decade or every second, third... so that there
 * are at most PLOT_MAX_TICKS; when the data span fewer decades the axis
 * reaches further right, so that there are at least PLOT_MIN_TICKS.
 * Labels are plain numbers followed by `unit` ("%"). */
void plot_axis_symlog(plot_axis *a, double lo, double hi, double lin,
                      const char *unit);

/* The label of tick value v on axis a ("512 MiB", "1.5 GiB", "40",
 * "0.1%") into buf (n bytes); returns buf. */
const char *plot_axis_label(const plot_axis *a, double v, char *buf, size_t n);

/* Formats a byte count in the largest binary unit it reaches, with 3
 * significant digits ("517 MiB", "1.24 GiB"); returns buf. */
const char *plot_bytes(double bytes, char *buf, size_t n);

/* A label to place: its text, the point it names, and where it went. */
typedef struct plot_label {
  char text[PLOT_MAX_LABEL];
  double ax, ay; /* the anchor: the point the label names */
  double font;   /* font size */
  double tx, ty; /* placed: left end of the baseline */
  plot_box box;  /* placed: the text's extent */
  bool leader;   /* placed away from the anchor: draw a leader line */
  bool placed;   /* false only when no free room was left anywhere */
} plot_label;

/* Sets the text, anchor and font of a label (text cut to fit). */
void plot_label_init(plot_label *l, const char *text, double ax, double ay,
                     double font);

/* Places labels[0..n) in order, each inside `area`, off the obstacles
 * and off every label placed before it: first at one of eight positions
 * next to its anchor, then on rings further out (with a leader line),
 * then anywhere free in the area nearest the anchor.  A label for which
 * no free room is left is not placed (placed = false, and not drawn).
 * Returns the number not placed. */
int plot_place_labels(plot_label *labels, int n, const plot_box *area,
                      const plot_box *obstacles, int n_obstacles);

/* The layout check: every placed label inside `area`, none intersecting
 * another placed label or an obstacle.  Returns true when it holds. */
bool plot_layout_ok(const plot_label *labels, int n, const plot_box *area,
                    const plot_box *obstacles, int n_obstacles);

/* What plot_xml writes for a character XML cannot hold: U+FFFD, the
 * replacement character, in UTF-8. */
#define PLOT_XML_REPLACEMENT "\xef\xbf\xbd"

/* Writes s (text from input files: any bytes) as XML 1.0 character data,
 * fit for an element's text and for a quoted attribute value: & < > " '
 * escaped; tab, LF and CR as a space; every other C0 control, DEL, the
 * C1 controls, U+FFFE, U+FFFF and each byte that does not belong to a
 * well-formed UTF-8 sequence as U+FFFD.  Every SVG text and attribute
 * made from data goes through it.  Cannot fail (errors stay in f). */
void plot_xml(FILE *f, const char *s);

/* Writes <text> at (x, y) with the given font size, fill and anchor
 * ("start", "middle", "end"); `rotate` != 0 rotates about (x, y). */
void plot_text(FILE *f, double x, double y, double font, const char *fill,
               const char *anchor, double rotate, const char *s);

/* Writes a placed label (and its leader line); nothing when not placed. */
void plot_label_svg(FILE *f, const plot_label *l, const char *fill);

/* Writes both axes of the plot area: lines, tick marks, grid, tick labels
 * and the titles; `ytitle` is drawn rotated at the left.  The boxes of
 * the tick labels and titles are appended to obstacles (up to `max`;
 * *n_obstacles counts them) so that labels keep off them. */
void plot_axes_svg(FILE *f, const plot_box *area, const plot_axis *x,
                   const plot_axis *y, const char *xtitle, const char *ytitle,
                   plot_box *obstacles, int *n_obstacles, int max);

/* Maps a data value to a pixel on the plot area. */
double plot_px(const plot_box *area, const plot_axis *x, double v);
double plot_py(const plot_box *area, const plot_axis *y, double v);

/* Point markers. */
typedef enum plot_marker {
  PLOT_DOT,      /* filled circle */
  PLOT_RING,     /* hollow circle */
  PLOT_SQUARE,   /* filled square */
  PLOT_DIAMOND,  /* filled diamond */
  PLOT_TRIANGLE, /* filled triangle */
  PLOT_LINE      /* a short line (legend rows of curves) */
} plot_marker;

/* The half-size of a marker in pixels (its obstacle box is twice that). */
#define PLOT_MARKER_R 4.5

/* Writes a marker centred at (x, y); `tip` (may be NULL) becomes its
 * <title> tooltip. */
void plot_marker_svg(FILE *f, plot_marker m, double x, double y,
                     const char *color, const char *tip);

/* A marker of half-size r; hollow: its outline only (1.6 px wide), so
 * that markers drawn at one point, larger first, all stay visible. */
void plot_marker_svg_r(FILE *f, plot_marker m, double x, double y, double r,
                       bool hollow, const char *color, const char *tip);

/* The box a marker at (x, y) covers (of half-size PLOT_MARKER_R, or r). */
plot_box plot_marker_box(double x, double y);
plot_box plot_marker_box_r(double x, double y, double r);

/* A legend: one row per entry, drawn with its top-left at (x, y). */
typedef struct plot_legend_row {
  const char *text;
  plot_marker marker;
  const char *color;
  bool hollow; /* the marker's outline only */
} plot_legend_row;

/* The box the legend covers (an obstacle for labels). */
plot_box plot_legend_box(const plot_legend_row *rows, int n, double x,
                         double y);
void plot_legend_svg(FILE *f, const plot_legend_row *rows, int n, double x,
                     double y);

#endif /* FP_PLOT_H */
