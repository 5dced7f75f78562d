/*
 * test_plot.c -- the layout under the SVG plots (cli/plot.c), on its own:
 * axis ticks (4 to 8 round ticks in a binary unit that cover the data),
 * tick labels, and label placement, held to an independent check that no
 * two placed labels intersect, none covers an obstacle and all are inside
 * the area, on crowded random layouts (coincident anchors, anchors on the
 * edges); and the layout check itself catches an overlap and a label
 * outside.  Links only cli/plot.c: the module is library-free.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plot.h"

/* xorshift64*: a small deterministic generator for the random cases. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t next_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static double uniform(double lo, double hi) {
  return lo + (hi - lo) * (double)(next_u64() >> 11) / 9007199254740992.0;
}

/* Whether x / unit is 1, 2 or 5 times a power of ten. */
static bool round_step(double x) {
  double e = floor(log10(x)), m = x / pow(10, e);
  return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9 ||
         fabs(m - 10) < 1e-9;
}

static void check_axis(double lo, double hi) {
  plot_axis a;
  plot_axis_init(&a, lo, hi, true, true);
  ck_assert_msg(a.nticks >= PLOT_MIN_TICKS && a.nticks <= PLOT_MAX_TICKS,
                "[%g, %g]: %d ticks", lo, hi, a.nticks);
  ck_assert_msg(a.lo <= lo && a.hi >= hi, "[%g, %g] not covered by [%g, %g]",
                lo, hi, a.lo, a.hi);
  ck_assert_msg(round_step(a.step / a.scale), "[%g, %g]: step %g %s", lo, hi,
                a.step / a.scale, a.unit);
  /* Every tick is a multiple of the step, and the count is right. */
  ck_assert(fabs(a.lo / a.step - llround(a.lo / a.step)) < 1e-6);
  ck_assert_int_eq(llround((a.hi - a.lo) / a.step) + 1, a.nticks);
  /* The unit suits the largest value: hi is at least one unit, and less
   * than 1024 of them (below TiB). */
  ck_assert(hi >= a.scale || a.scale == 1);
  ck_assert(a.scale == 1099511627776.0 || hi < 1024 * a.scale);
}

START_TEST(axis_ticks_round_binary) {
  check_axis(517.0 * 1048576, 541.0 * 1048576); /* the example */
  check_axis(0, 7725793616.0);
  check_axis(40e9, 44e9);
  check_axis(1000, 1001);   /* a tiny span in bytes */
  check_axis(5e12, 5.5e12); /* TiB */
  for (int i = 0; i < 5000; i++) {
    double hi = pow(2, uniform(2, 44)), lo = hi * uniform(0, 0.9999);
    check_axis(lo, hi);
  }
}
END_TEST

/* A plain axis (not bytes) over [lo, hi]: 1, 2 or 5 times a power of
 * ten, covering, 4 to 8 ticks, none labelled "-0". */
static void check_plain_axis(double lo, double hi) {
  plot_axis a;
  char buf[64], prev[64] = "";
  plot_axis_init(&a, lo, hi, false, false);
  ck_assert_msg(a.nticks >= PLOT_MIN_TICKS && a.nticks <= PLOT_MAX_TICKS,
                "[%g, %g]: %d ticks", lo, hi, a.nticks);
  /* (within rounding: 1e200 is no multiple of 5e199 in binary) */
  ck_assert_msg(a.lo <= lo + 1e-9 * a.step && a.hi >= hi - 1e-9 * a.step &&
                    a.hi > a.lo,
                "[%g, %g] not covered by [%g, %g]", lo, hi, a.lo, a.hi);
  ck_assert_msg(round_step(a.step), "[%g, %g]: step %g", lo, hi, a.step);
  ck_assert(a.ticks[0] == a.lo);
  for (int i = 0; i < a.nticks; i++) {
    ck_assert(fabs(a.ticks[i] - (a.lo + i * a.step)) <= 1e-9 * a.step);
    plot_axis_label(&a, a.ticks[i], buf, sizeof buf);
    ck_assert_msg(strcmp(buf, "-0") != 0 && strlen(buf) < 24 &&
                      strcmp(buf, prev) != 0,
                  "[%g, %g]: label '%s' after '%s'", lo, hi, buf, prev);
    strcpy(prev, buf);
  }
}

START_TEST(axis_ticks_plain_degenerate) {
  check_plain_axis(3, 3);        /* all equal */
  check_plain_axis(0, 0);        /* all zero */
  check_plain_axis(-7, -7);      /* one negative value */
  check_plain_axis(-20, 100);    /* the old report's range */
  check_plain_axis(-5e-7, 3e-7); /* tiny, across zero */
  check_plain_axis(-1e150, 1e150);
  check_plain_axis(1e200, 3e200); /* huge */
  check_plain_axis(0.1, 0.3);     /* 0.1 + 0.2 is not 0.3 */
  for (int i = 0; i < 3000; i++) {
    double a = uniform(-1, 1) * pow(10, uniform(-6, 12));
    double b = a + fabs(a) * pow(10, uniform(-4, 2));
    check_plain_axis(a, b);
  }
  plot_axis a;
  char buf[64];
  plot_axis_init(&a, -0.3, 0.1, false, false); /* a 0 tick, labelled 0 */
  bool zero = false;
  for (int i = 0; i < a.nticks; i++)
    zero |=
        strcmp(plot_axis_label(&a, a.ticks[i], buf, sizeof buf), "0.0") == 0 ||
        strcmp(buf, "0") == 0;
  ck_assert(zero);
}
END_TEST

/* A symmetric log axis: ticks at 0 and +-lin * 10^k, covering [lo, hi],
 * 4 to 8 of them, ascending, each a power of ten. */
static void check_symlog(double lo, double hi, double lin) {
  plot_axis a;
  plot_axis_symlog(&a, lo, hi, lin, "%");
  ck_assert_msg(a.nticks >= PLOT_MIN_TICKS && a.nticks <= PLOT_MAX_TICKS,
                "[%g, %g] lin %g: %d ticks", lo, hi, lin, a.nticks);
  ck_assert_msg(a.lo <= fmin(lo, 0) && a.hi >= fmax(hi, 0),
                "[%g, %g] not covered by [%g, %g]", lo, hi, a.lo, a.hi);
  bool zero = false;
  for (int i = 0; i < a.nticks; i++) {
    double v = a.ticks[i];
    zero |= v == 0;
    ck_assert(i == 0 || v > a.ticks[i - 1]);
    ck_assert_msg(v == 0 ||
                      (fabs(v) >= lin * (1 - 1e-12) && round_step(fabs(v)) &&
                       fabs(log10(fabs(v)) - round(log10(fabs(v)))) < 1e-9),
                  "tick %g", v);
  }
  ck_assert(zero);
  /* Pixels grow with the value, 0 maps inside, ends to the area's ends. */
  const plot_box area = {10, 10, 300, 200};
  ck_assert(fabs(plot_px(&area, &a, a.lo) - 10) < 1e-9);
  ck_assert(fabs(plot_px(&area, &a, a.hi) - 310) < 1e-9);
  for (int i = 1; i < a.nticks; i++)
    ck_assert(plot_px(&area, &a, a.ticks[i]) >
              plot_px(&area, &a, a.ticks[i - 1]));
}

START_TEST(axis_ticks_symlog) {
  check_symlog(0, 0, 0.1);       /* nothing differs */
  check_symlog(-0.01, 50, 0.01); /* one step left of 0 */
  check_symlog(0, 1e6, 0.001);   /* thinned: every second decade or more */
  check_symlog(-1e4, 1e4, 0.001);
  check_symlog(-3, 0, 1);
  for (int i = 0; i < 2000; i++) {
    double lin = pow(10, floor(uniform(-3, 1)));
    check_symlog(-uniform(0, 1) * pow(10, uniform(-3, 5)),
                 uniform(0, 1) * pow(10, uniform(-3, 5)), lin);
  }
  plot_axis a;
  char buf[64];
  plot_axis_symlog(&a, -0.01, 50, 0.01, "%");
  static const char *const want[] = {"-0.01%", "0%",  "0.01%", "0.1%",
                                     "1%",     "10%", "100%"};
  ck_assert_int_eq(a.nticks, 7);
  for (int i = 0; i < 7; i++)
    ck_assert_str_eq(plot_axis_label(&a, a.ticks[i], buf, sizeof buf), want[i]);
  /* 0.001 .. 1e6: 0 and ten decades thinned to every second decade. */
  plot_axis_symlog(&a, 0, 1e6, 0.001, "%");
  ck_assert_int_eq(a.nticks, 7);
  ck_assert(a.ticks[2] == 0.1 && a.hi == 1e7);
}
END_TEST

START_TEST(axis_labels) {
  plot_axis a;
  char buf[64];
  plot_axis_init(&a, 517.0 * 1048576, 541.0 * 1048576, true, true);
  ck_assert_str_eq(a.unit, "MiB");
  ck_assert_str_eq(plot_axis_label(&a, 520.0 * 1048576, buf, sizeof buf),
                   "520 MiB");
  plot_axis_init(&a, 6.9 * 1073741824, 7.6 * 1073741824, true, true);
  ck_assert_str_eq(a.unit, "GiB");
  ck_assert_str_eq(plot_axis_label(&a, 7.2 * 1073741824, buf, sizeof buf),
                   "7.2 GiB");
  plot_axis_init(&a, 0, 645, false, true);
  ck_assert_str_eq(a.unit, "");
  ck_assert(a.nticks >= 4 && a.nticks <= 8);
  ck_assert_str_eq(plot_axis_label(&a, 200, buf, sizeof buf), "200");
  ck_assert_str_eq(plot_bytes(1536, buf, sizeof buf), "1.5 KiB");
  ck_assert_str_eq(plot_bytes(7725793616.0, buf, sizeof buf), "7.2 GiB");
  ck_assert_str_eq(plot_bytes(100, buf, sizeof buf), "100 B");
}
END_TEST

/* The independent check: pairwise, with the box arithmetic written out. */
static bool overlap(const plot_box *a, const plot_box *b) {
  return !(a->x + a->w <= b->x || b->x + b->w <= a->x || a->y + a->h <= b->y ||
           b->y + b->h <= a->y);
}

static void check_layout(const plot_label *l, int n, const plot_box *area,
                         const plot_box *obs, int n_obs) {
  for (int i = 0; i < n; i++) {
    if (!l[i].placed)
      continue;
    const plot_box *b = &l[i].box;
    ck_assert_msg(b->x >= area->x && b->y >= area->y &&
                      b->x + b->w <= area->x + area->w &&
                      b->y + b->h <= area->y + area->h,
                  "label %d '%s' leaves the area", i, l[i].text);
    /* The box is the text's extent at the drawn position. */
    plot_box t = plot_text_box(l[i].text, l[i].font, l[i].tx, l[i].ty);
    ck_assert(fabs(t.x - b->x) < 1e-9 && fabs(t.y - b->y) < 1e-9 &&
              fabs(t.w - b->w) < 1e-9 && fabs(t.h - b->h) < 1e-9);
    for (int j = 0; j < i; j++)
      ck_assert_msg(!l[j].placed || !overlap(b, &l[j].box),
                    "labels %d '%s' and %d '%s' overlap", i, l[i].text, j,
                    l[j].text);
    for (int k = 0; k < n_obs; k++)
      ck_assert_msg(!overlap(b, &obs[k]), "label %d covers obstacle %d", i, k);
  }
  ck_assert(plot_layout_ok(l, n, area, obs, n_obs));
}

static const char *const names[] = {
    "eager",       "greedy",   "greedy-lowmem",
    "greedy-peak", "inductor", "a-rather-long-plan-name-here"};

START_TEST(labels_never_overlap) {
  const plot_box area = {100, 44, 520, 380};
  for (int round = 0; round < 300; round++) {
    plot_label l[40];
    plot_box obs[80];
    int n = 2 + (int)(next_u64() % 39), n_obs = 0;
    /* Clusters: several labels on one point, as the heuristics that find
     * the same plan are; some anchors on the edges of the area. */
    double cx = uniform(area.x, area.x + area.w),
           cy = uniform(area.y, area.y + area.h);
    for (int i = 0; i < n; i++) {
      int mode = (int)(next_u64() % 4);
      double x = mode == 0 ? cx : uniform(area.x, area.x + area.w);
      double y = mode == 0   ? cy
                 : mode == 1 ? area.y + area.h
                             : uniform(area.y, area.y + area.h);
      plot_label_init(&l[i], names[next_u64() % 6], x, y, 11);
      obs[n_obs++] = plot_marker_box(x, y);
    }
    obs[n_obs++] = (plot_box){area.x + area.w - 150, area.y, 150, 90};
    int missed = plot_place_labels(l, n, &area, obs, n_obs);
    check_layout(l, n, &area, obs, n_obs);
    ck_assert_msg(missed == 0, "round %d: %d of %d labels not placed", round,
                  missed, n);
    for (int i = 0; i < n; i++)
      if (!l[i].leader) /* next to its anchor, within the first ring */
        ck_assert(hypot(l[i].box.x + l[i].box.w / 2 - l[i].ax,
                        l[i].box.y + l[i].box.h / 2 - l[i].ay) <
                  l[i].box.w / 2 + l[i].box.h + PLOT_MARKER_R + 3);
  }
}
END_TEST

START_TEST(labels_when_the_area_is_full) {
  /* Room for a few labels only: the rest are not placed (and not drawn),
   * never drawn over another. */
  const plot_box area = {0, 0, 120, 40};
  plot_label l[30];
  for (int i = 0; i < 30; i++)
    plot_label_init(&l[i], "greedy-lowmem", 60, 20, 11);
  int missed = plot_place_labels(l, 30, &area, NULL, 0);
  ck_assert_int_gt(missed, 0);
  ck_assert_int_lt(missed, 30);
  check_layout(l, 30, &area, NULL, 0);
}
END_TEST

START_TEST(layout_check_catches_errors) {
  const plot_box area = {0, 0, 200, 100};
  plot_label l[2];
  plot_label_init(&l[0], "eager", 50, 50, 11);
  plot_label_init(&l[1], "greedy", 52, 50, 11);
  ck_assert_int_eq(plot_place_labels(l, 2, &area, NULL, 0), 0);
  ck_assert(plot_layout_ok(l, 2, &area, NULL, 0));
  l[1].box = l[0].box; /* moved onto the other */
  l[1].box.x += 3;
  ck_assert(!plot_layout_ok(l, 2, &area, NULL, 0));
  l[1].box.x = 195; /* off the right edge */
  l[1].box.y = 0;
  ck_assert(!plot_layout_ok(l, 2, &area, NULL, 0));
  plot_box ob = l[0].box; /* an obstacle under a label */
  ck_assert(!plot_layout_ok(l, 1, &area, &ob, 1));
}
END_TEST

/* plot_xml's output of s. */
static char *xml_of(const char *s) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  plot_xml(f, s);
  fclose(f);
  return text;
}

static void check_xml(const char *in, const char *want) {
  char *got = xml_of(in);
  ck_assert_str_eq(got, want);
  free(got);
}

START_TEST(text_extent_and_xml) {
  plot_box b = plot_text_box("greedy", 10, 5, 20);
  ck_assert(fabs(b.w - 6 * PLOT_CHAR_W * 10) < 1e-9);
  ck_assert(b.y < 20 && b.y + b.h > 20); /* spans the baseline */
  check_xml("a<b>&'\"", "a&lt;b&gt;&amp;&apos;&quot;");
}
END_TEST

#define R PLOT_XML_REPLACEMENT

START_TEST(xml_only_xml_characters) {
  /* Controls: ESC and BEL (C0), DEL, a C1 control; tab and newline. */
  check_xml("G\x1b[2J\a", "G" R "[2J" R);
  check_xml("a\x7f b\xc2\x85", "a" R " b" R);
  check_xml("t\tn\nr\r", "t n r ");
  /* Well-formed UTF-8 is kept: 2, 3 and 4 bytes. */
  check_xml("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  /* U+FFFE, U+FFFF: not characters. */
  check_xml("x\xef\xbf\xbey\xef\xbf\xbf", "x" R "y" R);
  /* Invalid UTF-8: a stray continuation byte, a lead byte cut short (by
   * the end, by an ASCII byte), an overlong '/', a surrogate, a code point
   * above U+10FFFF, 0xff. */
  check_xml("\x80", R);
  check_xml("ab\xc3", "ab" R);
  check_xml("\xe2\x82<", R R "&lt;");
  check_xml("\xc0\xaf", R R);
  check_xml("\xed\xa0\x80", R R R);
  check_xml("\xf4\x90\x80\x80", R R R R);
  check_xml("\xff", R);
  /* Every byte 1..255 alone: a bad byte or a control is replaced, a
   * byte above 0x7f alone is no UTF-8, other bytes stay or are escaped. */
  for (int c = 1; c < 256; c++) {
    char in[2] = {(char)c, 0};
    char *got = xml_of(in);
    if (c >= 0x7f || (c < 0x20 && !strchr("\t\n\r", c)))
      ck_assert_msg(strcmp(got, R) == 0, "byte 0x%02x", c);
    else
      ck_assert_msg(strlen(got) == 1 ? (unsigned char)got[0] == c ||
                                           (got[0] == ' ' && c < 0x20)
                                     : got[0] == '&',
                    "byte 0x%02x gave '%s'", c, got);
    free(got);
  }
}
END_TEST

START_TEST(fit_cuts_long_text) {
  char buf[64], text[301];
  ck_assert_str_eq(plot_fit("short", 10, 100, buf, sizeof buf), "short");
  memset(text, 'L', 300);
  text[300] = '\0';
  plot_fit(text, 10, 140, buf, sizeof buf); /* 20 glyphs of 7 px */
  ck_assert_int_eq(strlen(buf), 20);
  ck_assert(strcmp(buf + 17, "...") == 0);
  plot_fit(text, 1, 1e6, buf, sizeof buf); /* the buffer bounds it */
  ck_assert_int_eq(strlen(buf), sizeof buf - 1);
  for (int i = 0; i < 150; i++)
    memcpy(text + 2 * i, "\xc3\xa9", 2);
  for (double w = 20; w < 200; w += 7) {
    plot_fit(text, 10, w, buf, sizeof buf);
    char *got = xml_of(buf);
    ck_assert_msg(strstr(got, R) == NULL, "cut inside a character at %g", w);
    free(got);
  }
}
END_TEST

START_TEST(label_cut_between_characters) {
  /* A long name of 2-byte characters is cut before a character. */
  char text[2 * PLOT_MAX_LABEL + 1];
  for (int i = 0; i < PLOT_MAX_LABEL; i++)
    memcpy(text + 2 * i, "\xc3\xa9", 2);
  text[2 * PLOT_MAX_LABEL] = '\0';
  for (int skip = 0; skip < 2; skip++) {
    plot_label l;
    plot_label_init(&l, text + skip, 0, 0, 11);
    size_t n = strlen(l.text);
    ck_assert(n < PLOT_MAX_LABEL && n >= PLOT_MAX_LABEL - 3);
    char *got = xml_of(l.text);
    ck_assert_msg(strstr(got, R) == NULL || skip == 1,
                  "cut inside a character");
    free(got);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli/plot");
  TCase *tc = tcase_create("plot");
  tcase_add_test(tc, axis_ticks_round_binary);
  tcase_add_test(tc, axis_ticks_plain_degenerate);
  tcase_add_test(tc, axis_ticks_symlog);
  tcase_add_test(tc, axis_labels);
  tcase_add_test(tc, labels_never_overlap);
  tcase_add_test(tc, labels_when_the_area_is_full);
  tcase_add_test(tc, layout_check_catches_errors);
  tcase_add_test(tc, text_extent_and_xml);
  tcase_add_test(tc, xml_only_xml_characters);
  tcase_add_test(tc, label_cut_between_characters);
  tcase_add_test(tc, fit_cuts_long_text);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
