/*
 * test_limits.c -- the limits of a planning problem (model/limits.c):
 * defaults and check, the resolved peak and group size, and the one
 * grammar of byte counts and peak limits ("eager", "N%", bytes with
 * units) that solve and batch share, with the percent rounding they have
 * always had (computed by hand below).
 */
#include <stdio.h>
#include <string.h>

#include "model/limits.h"
#include "tests/testutil.h"

START_TEST(defaults_check_and_resolution) {
  fp_limits lim;
  fp_error err;
  memset(&lim, 0x5a, sizeof lim);
  fp_limits_init(&lim);
  ck_assert_uint_eq(lim.peak, FP_LIMITS_PEAK_EAGER);
  ck_assert(lim.traffic == FP_NO_LIMIT);
  ck_assert_int_eq(lim.max_fusion_size, FP_LIMITS_GRAPH_FUSION);
  ck_assert_int_eq(fp_limits_check(&lim, "x", NULL), FP_OK);
  ck_assert_uint_eq(fp_limits_peak_cap(&lim, 777), 777);
  lim.peak = FP_NO_LIMIT;
  ck_assert(fp_limits_peak_cap(&lim, 777) == FP_NO_LIMIT);
  lim.peak = 5;
  ck_assert_uint_eq(fp_limits_peak_cap(&lim, 777), 5);
  fp_graph *g = tu_chain_graph(3, 64); /* max_fusion_size: the default */
  ck_assert_int_eq(fp_limits_fusion_size(&lim, g), fp_graph_max_fusion_size(g));
  lim.max_fusion_size = 2;
  ck_assert_int_eq(fp_limits_fusion_size(&lim, g), 2);
  /* a limit may only lower the graph's own */
  lim.max_fusion_size = fp_graph_max_fusion_size(g) + 1;
  ck_assert_int_eq(fp_limits_fusion_size(&lim, g), fp_graph_max_fusion_size(g));
  ck_assert_int_eq(fp_limits_fusion_size(NULL, g), fp_graph_max_fusion_size(g));
  ck_assert_int_eq(fp_graph_fusion_cap(g, 1), 1);
  ck_assert_int_eq(fp_graph_fusion_cap(NULL, 1), 0);
  fp_graph_destroy(g);
  lim.max_fusion_size = -1;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_limits_check(&lim, "solver params", &err), FP_EARG);
  ck_assert_str_eq(err.msg, "solver params: max_fusion_size must be >= 0");
  ck_assert_int_eq(fp_limits_check(NULL, "x", NULL), FP_EARG);
}
END_TEST

/* text parses to want (ok) or fails leaving *out alone. */
static void bytes_case(const char *text, int ok, uint64_t want) {
  uint64_t v = 42;
  fp_status st = fp_limits_parse_bytes(text, &v, NULL);
  ck_assert_msg((st == FP_OK) == ok, "'%s': status %d", text ? text : "NULL",
                (int)st);
  ck_assert_msg(v == (ok ? want : 42), "'%s': %llu", text ? text : "NULL",
                (unsigned long long)v);
}

START_TEST(byte_counts) {
  static const char *const units[5][3] = {{"B", "B", "B"},
                                          {"K", "KB", "KiB"},
                                          {"M", "MB", "MiB"},
                                          {"G", "GB", "GiB"},
                                          {"T", "TB", "TiB"}};
  for (int u = 0; u < 5; u++)
    for (int s = 0; s < 3; s++) {
      char text[32];
      snprintf(text, sizeof text, "3%s", units[u][s]);
      bytes_case(text, 1, (uint64_t)3 << (10 * u));
    }
  bytes_case("0", 1, 0);
  bytes_case("007", 1, 7);
  bytes_case("18446744073709551615", 1, UINT64_MAX);
  bytes_case("16777215T", 1, (uint64_t)16777215 << 40);
  bytes_case("18446744073709551616", 0, 0);    /* 2^64 */
  bytes_case("16777216TiB", 0, 0);             /* 2^64 */
  bytes_case("99999999999999999999GiB", 0, 0); /* past strtoull */
  bytes_case("17179869184G", 0, 0);            /* 2^34 GiB = 2^64 */
  static const char *const bad[] = {"",    "-1",  "+1",    " 1",   "1 ",
                                    "1k",  "1kb", "1Ki",   "1.5G", "0x10",
                                    "1e3", "G",   "1KiBx", "1%"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    bytes_case(bad[i], 0, 0);
  bytes_case(NULL, 0, 0);
  fp_error err;
  uint64_t v;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_limits_parse_bytes("12x", &v, &err), FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "'12x'"));
}
END_TEST

/* text parses to (kind, value), or fails leaving *out alone. */
static void peak_case(const char *text, int ok, fp_peak_kind kind,
                      uint64_t value) {
  fp_peak_spec sp = {FP_PEAK_BYTES, 42};
  fp_status st = fp_limits_parse_peak(text, &sp, NULL);
  const char *t = text ? text : "NULL";
  ck_assert_msg((st == FP_OK) == ok, "'%s': status %d", t, (int)st);
  if (!ok)
    kind = FP_PEAK_BYTES, value = 42;
  ck_assert_msg(sp.kind == kind && sp.value == value, "'%s': %d %llu", t,
                (int)sp.kind, (unsigned long long)sp.value);
}

START_TEST(peak_limit_grammar) {
  peak_case("eager", 1, FP_PEAK_EAGER, 0);
  peak_case("95%", 1, FP_PEAK_PERCENT, 95);
  peak_case("0%", 1, FP_PEAK_PERCENT, 0); /* accepted, as it always was */
  peak_case("080%", 1, FP_PEAK_PERCENT, 80);
  peak_case("100000%", 1, FP_PEAK_PERCENT, FP_LIMITS_MAX_PERCENT);
  peak_case("4GiB", 1, FP_PEAK_BYTES, (uint64_t)4 << 30);
  peak_case("4096", 1, FP_PEAK_BYTES, 4096);
  peak_case("0", 1, FP_PEAK_BYTES, 0);
  peak_case("7K", 1, FP_PEAK_BYTES, 7168);
  static const char *const bad[] = {
      "",     "Eager",  "eager ",  " eager", "eager%",
      "%",    "5%%",    "%5",      "5 %",    "-5%",
      "+5%",  "5.5%",   "100001%", "1e400%", "99999999999999999999%",
      "-1",   "1.5GiB", "1e400",   "12x",    "99999999999999999999GiB",
      "4 GiB"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    peak_case(bad[i], 0, FP_PEAK_BYTES, 42);
  peak_case(NULL, 0, FP_PEAK_BYTES, 42);
  fp_peak_spec sp;
  fp_error err;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_limits_parse_peak("lots", &sp, &err), FP_EARG);
  ck_assert_str_eq(err.msg, "peak limit 'lots': expected BYTES, eager or N%");
  ck_assert_int_eq(fp_limits_parse_peak("200001%", &sp, &err), FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "'200001%'"));
}
END_TEST

/* The bytes that (kind, value) resolves to against eager. */
static uint64_t resolved(fp_peak_kind kind, uint64_t value, uint64_t eager) {
  fp_peak_spec sp = {kind, value};
  uint64_t v = 42;
  ck_assert_int_eq(fp_limits_resolve_peak(&sp, eager, &v, NULL), FP_OK);
  return v;
}

START_TEST(peak_resolution) {
  const uint64_t two63 = (uint64_t)1 << 63;
  ck_assert_uint_eq(resolved(FP_PEAK_EAGER, 0, 43335506720u), 43335506720u);
  ck_assert_uint_eq(resolved(FP_PEAK_EAGER, 0, 0), 1); /* 0 means eager */
  ck_assert_uint_eq(resolved(FP_PEAK_BYTES, 4096, 9), 4096);
  ck_assert_uint_eq(resolved(FP_PEAK_BYTES, 0, 9), 1);
  /* floor(eager * N / 100), by hand: */
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 95, 1000), 950);
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 33, 1001), 330);  /* 330.33 */
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 150, 999), 1498); /* 1498.5 */
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 1, 12345), 123);  /* 123.45 */
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 95, 43335506720u), 41168731384u);
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 1, 99), 1); /* 0.99 -> 0 -> 1 */
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 0, 5000), 1);
  /* 64-bit edges: exact up to 2^64 - 1, FP_NO_LIMIT past it */
  ck_assert(resolved(FP_PEAK_PERCENT, 100, UINT64_MAX) == UINT64_MAX);
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 101, two63 - 1),
                    9315605757223323565u);
  ck_assert_uint_eq(resolved(FP_PEAK_PERCENT, 199, two63),
                    18354510353341003857u);
  ck_assert(resolved(FP_PEAK_PERCENT, 200, two63) == FP_NO_LIMIT);
  ck_assert(resolved(FP_PEAK_PERCENT, FP_LIMITS_MAX_PERCENT, UINT64_MAX) ==
            FP_NO_LIMIT);
  fp_peak_spec bad = {(fp_peak_kind)7, 1};
  uint64_t v = 42;
  ck_assert_int_eq(fp_limits_resolve_peak(&bad, 1, &v, NULL), FP_EARG);
  ck_assert_int_eq(fp_limits_resolve_peak(NULL, 1, &v, NULL), FP_EARG);
  ck_assert_int_eq(fp_limits_resolve_peak(&bad, 1, NULL, NULL), FP_EARG);
  ck_assert_uint_eq(v, 42);
}
END_TEST

int main(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, defaults_check_and_resolution);
  tcase_add_test(tc, byte_counts);
  tcase_add_test(tc, peak_limit_grammar);
  tcase_add_test(tc, peak_resolution);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
