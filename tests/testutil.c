/*
 * testutil.c -- see testutil.h.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "model/json.h"

fp_status tu_graph_try(const char *json, fp_graph **out, fp_error *err) {
  size_t n = strlen(json);
  char *s = malloc(n + 1);
  ck_assert_ptr_nonnull(s);
  for (size_t i = 0; i <= n; i++)
    s[i] = json[i] == '\'' ? '"' : json[i];
  fp_status st = fp_graph_load_buffer(s, n, "test.json", out, err);
  free(s);
  return st;
}

fp_graph *tu_graph(const char *json) {
  fp_graph *g = NULL;
  fp_error err;
  fp_error_clear(&err);
  fp_status st = tu_graph_try(json, &g, &err);
  ck_assert_msg(st == FP_OK, "graph did not load: %s", err.msg);
  return g;
}

fp_plan *tu_plan(const fp_graph *g, const char *text) {
  fp_plan *p = fp_plan_create();
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(fp_plan_open_group(p, NULL), FP_OK);
  const char *c = text;
  while (*c) {
    while (*c == ' ')
      c++;
    if (*c == '|') {
      ck_assert_int_eq(fp_plan_open_group(p, NULL), FP_OK);
      c++;
      continue;
    }
    if (!*c)
      break;
    char name[128];
    size_t k = 0;
    while (*c && *c != ' ' && *c != '|' && k + 1 < sizeof name)
      name[k++] = *c++;
    name[k] = '\0';
    int32_t v = fp_graph_find_node(g, name);
    ck_assert_msg(v >= 0, "unknown node '%s' in plan text", name);
    ck_assert_int_eq(fp_plan_append_node(p, v, NULL), FP_OK);
  }
  return p;
}

fp_metrics tu_eval(const fp_graph *g, const fp_plan *p) {
  fp_metrics m;
  fp_error err;
  fp_error_clear(&err);
  fp_status st = fp_plan_eval(g, p, &m, NULL, &err);
  ck_assert_msg(st == FP_OK, "plan is not legal: %s", err.msg);
  return m;
}

int tu_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

uint64_t tu_next(tu_rng *r) {
  /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint32_t tu_below(tu_rng *r, uint32_t n) {
  return (uint32_t)(tu_next(r) % n);
}
