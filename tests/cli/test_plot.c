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

START_TEST(text_extent_and_xml) {
  plot_box b = plot_text_box("greedy", 10, 5, 20);
  ck_assert(fabs(b.w - 6 * PLOT_CHAR_W * 10) < 1e-9);
  ck_assert(b.y < 20 && b.y + b.h > 20); /* spans the baseline */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  plot_xml(f, "a<b>&'\"");
  fclose(f);
  ck_assert_str_eq(text, "a&lt;b&gt;&amp;&apos;&quot;");
  free(text);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli/plot");
  TCase *tc = tcase_create("plot");
  tcase_add_test(tc, axis_ticks_round_binary);
  tcase_add_test(tc, axis_labels);
  tcase_add_test(tc, labels_never_overlap);
  tcase_add_test(tc, labels_when_the_area_is_full);
  tcase_add_test(tc, layout_check_catches_errors);
  tcase_add_test(tc, text_extent_and_xml);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
