/*
 * testutil.c -- see testutil.h.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "model/json.h"
#include "model/util.h"

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
  return fp_splitmix64(&r->s);
}

uint32_t tu_below(tu_rng *r, uint32_t n) {
  return (uint32_t)(tu_next(r) % n);
}

/* n reads of the nb buffers so far (sizes in size[]).  Plain: any
 * buffer, one read in five of a single byte.  Deep: recent buffers
 * favoured (deeper graphs), one read in four of a random part. */
static void random_reads(tu_rng *r, bool deep, fp_read *reads, int32_t n,
                         int32_t nb, const uint64_t *size) {
  for (int32_t i = 0; i < n; i++) {
    uint32_t lo = deep && nb > 4 && tu_below(r, 2) ? (uint32_t)nb - 4 : 0;
    reads[i].buffer = (int32_t)(lo + tu_below(r, (uint32_t)nb - lo));
    reads[i].index = FP_INDEX_AUTO;
    if (!deep)
      reads[i].bytes = tu_below(r, 5) == 0 ? 1 : FP_READ_WHOLE;
    else
      reads[i].bytes = tu_below(r, 4) == 0
                           ? 1 + tu_below(r, (uint32_t)size[reads[i].buffer])
                           : FP_READ_WHOLE;
  }
}

/* The loop nests random graphs draw from, per iteration space: loops
 * that equal, extend, prefix or merely match in size each other's, so
 * every rule of docs/cost-model.md#loop-nests takes part. */
static const struct {
  uint64_t numel, rnumel;
  uint8_t n, rn;
  uint64_t size[3];
} random_loops[] = {
    {4, 1, 1, 0, {4}},        {4, 1, 2, 0, {2, 2}},    {8, 1, 1, 0, {8}},
    {8, 1, 2, 0, {2, 4}},     {8, 1, 2, 0, {4, 2}},    {8, 1, 3, 0, {2, 2, 2}},
    {16, 1, 1, 0, {16}},      {16, 1, 2, 0, {8, 2}},   {16, 1, 2, 0, {4, 4}},
    {16, 1, 3, 0, {2, 4, 2}}, {4, 2, 1, 1, {4, 2}},    {4, 2, 2, 1, {2, 2, 2}},
    {8, 2, 1, 1, {8, 2}},     {8, 2, 2, 1, {2, 4, 2}}, {8, 2, 2, 1, {4, 2, 2}},
    {2, 2, 1, 1, {2, 2}},
};

/* Gives node v of g, one time in six, no loop nest, else one of
 * random_loops that fits its iteration space (draws from r). */
static void random_loop(tu_rng *r, fp_graph *g, int32_t v,
                        const fp_node_spec *s) {
  int32_t fit[16], nf = 0;
  for (int32_t i = 0; i < 16; i++)
    if (random_loops[i].numel == s->numel &&
        random_loops[i].rnumel == s->rnumel)
      fit[nf++] = i;
  if (s->kind == FP_KIND_EXTERN || nf == 0 || tu_below(r, 6) == 0)
    return;
  int32_t i = fit[tu_below(r, (uint32_t)nf)];
  fp_loop l = {true, random_loops[i].n, random_loops[i].rn, {0}};
  memcpy(l.size, random_loops[i].size, sizeof random_loops[i].size);
  ck_assert_int_eq(fp_graph_set_node_loop(g, v, &l, NULL), FP_OK);
}

/* The graphs of tu_random_graph (deep false), tu_random_deep_graph and,
 * with loops, tu_random_loop_graph: the loop nests come from a stream of
 * their own, so the graph is the deep one of the same seed. */
static fp_graph *random_graph(tu_rng *r, int32_t min_nodes, int32_t max_nodes,
                              bool deep, bool loops) {
  tu_rng lr = {r->s ^ 0x2545f4914f6cdd1du};
  fp_graph *g = fp_graph_create("random");
  char name[32];
  uint64_t size[3 + 2 * TU_RANDOM_MAX_NODES];
  /* One graph in two gets in-place pairs, drawn from their own stream so
   * that a graph without them is the one the seed has always given; a
   * pair's written buffer takes its read buffer's size. */
  tu_rng ip = {r->s ^ 0x5851f42d4c957f2du};
  bool with_ip = tu_below(&ip, 2) == 0;
  ck_assert_int_le(max_nodes, TU_RANDOM_MAX_NODES);
  int32_t nb = 0, n = min_nodes + (int32_t)tu_below(
                                      r, (uint32_t)(max_nodes - min_nodes + 1));
  int32_t ni = 1 + (int32_t)tu_below(r, 3);
  for (int32_t i = 0; i < ni; i++, nb++) {
    snprintf(name, sizeof name, "in%d", (int)i);
    /* The two kinds draw these in their own order, so that every seed
     * keeps the graph it has always had. */
    bool fr = !deep && tu_below(r, 2);
    size[nb] = 1 + tu_below(r, 500);
    fr = deep ? tu_below(r, 2) : fr;
    ck_assert_int_ge(fp_graph_add_buffer(g, name, size[nb], true, fr, NULL), 0);
  }
  static const uint64_t pw[] = {4, 8, 16}, rd[][2] = {{4, 2}, {8, 2}, {2, 2}};
  for (int32_t v = 0; v < n; v++) {
    fp_node_spec s = {0};
    fp_read reads[3];
    int32_t writes[2];
    snprintf(name, sizeof name, "n%d", (int)v);
    s.name = name;
    uint32_t k = tu_below(r, 20);
    s.kind = k < 3   ? FP_KIND_EXTERN
             : k < 7 ? FP_KIND_REDUCTION
                     : FP_KIND_POINTWISE;
    if (s.kind == FP_KIND_POINTWISE) {
      s.numel = pw[tu_below(r, 3)];
      s.rnumel = 1;
    } else if (s.kind == FP_KIND_REDUCTION) {
      uint32_t j = tu_below(r, 3);
      s.numel = rd[j][0];
      s.rnumel = rd[j][1];
    }
    s.n_reads = (int32_t)tu_below(r, 4);
    random_reads(r, deep, reads, s.n_reads, nb, size);
    s.reads = reads;
    s.n_writes = 1 + (int32_t)tu_below(r, 2);
    /* in: the read an in-place pair takes over (-1: none); pairs: how many
     * writes take it (a second one meets the one-takeover rule). */
    int32_t in = with_ip && s.n_reads && tu_below(&ip, 2) == 0
                     ? reads[tu_below(&ip, (uint32_t)s.n_reads)].buffer
                     : -1;
    int32_t pairs = in < 0 ? 0 : 1 + (int32_t)tu_below(&ip, 2);
    for (int32_t i = 0; i < s.n_writes; i++, nb++) {
      char bn[32];
      snprintf(bn, sizeof bn, "b%d", (int)nb);
      size[nb] = 1 + tu_below(r, 1000);
      size[nb] = i < pairs ? size[in] : size[nb];
      writes[i] = fp_graph_add_buffer(g, bn, size[nb], false, false, NULL);
      ck_assert_int_ge(writes[i], 0);
    }
    s.writes = writes;
    fp_error err;
    ck_assert_msg(fp_graph_add_node(g, &s, &err) == v, "%s", err.msg);
    if (loops)
      random_loop(&lr, g, v, &s);
    for (int32_t i = 0; i < pairs && i < s.n_writes; i++)
      ck_assert_int_eq(fp_graph_add_inplace(g, v, in, writes[i], NULL), FP_OK);
  }
  for (int32_t b = 0; b < nb; b++)
    if (tu_below(r, 6) == 0)
      ck_assert_int_eq(fp_graph_add_output(g, b, NULL), FP_OK);
  if (n > 1 && tu_below(r, 4) == 0) /* an unfusible pair needs two nodes */
    fp_graph_add_unfusible(g, 0, 1 + (int32_t)tu_below(r, (uint32_t)n - 1),
                           NULL);
  if (tu_below(r, deep ? 4 : 3) == 0)
    fp_graph_set_max_fusion_size(g, 1 + (int32_t)tu_below(r, 3), NULL);
  /* One graph in three holds bytes live outside it (every property test
   * sees the constant term), drawn from a copy of r: every seed keeps the
   * graph, and the draws after it, that it has always had. */
  tu_rng o = {r->s ^ 0x9e3779b97f4a7c15u};
  if (tu_below(&o, 3) == 0)
    ck_assert_int_eq(
        fp_graph_set_outside_live_bytes(g, 1 + tu_below(&o, 3000), NULL),
        FP_OK);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  return g;
}

fp_graph *tu_random_graph(tu_rng *r, int32_t min_nodes, int32_t max_nodes) {
  return random_graph(r, min_nodes, max_nodes, false, false);
}

fp_graph *tu_random_deep_graph(tu_rng *r, int32_t min_nodes,
                               int32_t max_nodes) {
  return random_graph(r, min_nodes, max_nodes, true, false);
}

fp_graph *tu_random_loop_graph(tu_rng *r, int32_t min_nodes,
                               int32_t max_nodes) {
  return random_graph(r, min_nodes, max_nodes, true, true);
}

/* A random node other than u and v that is compatible with both (a
 * linker that can join them), or any other node once in four; -1 when
 * the graph has no third node. */
static int32_t random_linker(const fp_graph *g, tu_rng *r, int32_t u,
                             int32_t v) {
  int32_t n = fp_graph_node_count(g), c[TU_RANDOM_MAX_NODES], k = 0;
  bool any = tu_below(r, 4) == 0;
  for (int32_t x = 0; x < n && x < TU_RANDOM_MAX_NODES; x++)
    if (x != u && x != v &&
        (any || (fp_graph_compatible(g, x, u) && fp_graph_compatible(g, x, v))))
      c[k++] = x;
  return k ? c[tu_below(r, (uint32_t)k)] : -1;
}

fp_graph *tu_add_linked(fp_graph *g, tu_rng *r) {
  int32_t n = fp_graph_node_count(g), pu[64], pv[64], np = 0;
  for (int32_t u = 0; u < n && np < 64; u++)
    for (int32_t v = u + 1; v < n && np < 64; v++)
      if (fp_graph_compatible(g, u, v))
        pu[np] = u, pv[np++] = v;
  if (np == 0)
    return g;
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_ptr_nonnull(c);
  for (int32_t i = 0, m = 1 + (int32_t)tu_below(r, 3); i < m; i++) {
    int32_t k = (int32_t)tu_below(r, (uint32_t)np), via[2], nv = 0;
    for (int32_t j = 0; j < 1 + (int32_t)tu_below(r, 2); j++)
      if ((via[nv] = random_linker(g, r, pu[k], pv[k])) >= 0)
        nv++;
    if (nv)
      ck_assert_int_eq(fp_graph_add_linked(c, pu[k], pv[k], nv, via, NULL),
                       FP_OK);
  }
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  fp_graph_destroy(g);
  return c;
}

fp_graph *tu_add_workspaces(fp_graph *g, tu_rng *r) {
  uint64_t big = 1;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    if (fp_graph_buffer(g, b)->bytes > big)
      big = fp_graph_buffer(g, b)->bytes;
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_ptr_nonnull(c);
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    bool ext = fp_graph_node(g, v)->kind == FP_KIND_EXTERN;
    if (tu_below(r, 4) >= (ext ? 3u : 2u))
      continue;
    uint64_t ws = tu_below(r, 2) ? big * (1 + tu_below(r, 2))
                                 : 1 + tu_below(r, (uint32_t)(2 * big));
    ck_assert_int_eq(fp_graph_set_node_workspace(c, v, ws, NULL), FP_OK);
  }
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  fp_graph_destroy(g);
  return c;
}

/* A read for tu_random_update_graph: one of the last four buffers (of nb)
 * mostly, whole five times in six. */
static fp_read update_read(tu_rng *r, int32_t nb, uint64_t bytes) {
  int32_t back = (int32_t)tu_below(r, 4);
  fp_read rd = {tu_below(r, 4) ? (back < nb ? nb - 1 - back : 0)
                               : (int32_t)tu_below(r, (uint32_t)nb),
                FP_INDEX_AUTO, FP_READ_WHOLE};
  if (tu_below(r, 6) == 0)
    rd.bytes = 1 + tu_below(r, (uint32_t)bytes);
  return rd;
}

fp_graph *tu_random_update_graph(tu_rng *r, int32_t min_nodes,
                                 int32_t max_nodes) {
  fp_graph *g = fp_graph_create("update");
  char name[32];
  uint64_t bytes = 4 * (1 + tu_below(r, 64));
  int32_t nb = 0, n = min_nodes + (int32_t)tu_below(
                                      r, (uint32_t)(max_nodes - min_nodes + 1));
  for (int32_t i = 1 + (int32_t)tu_below(r, 3); i > 0; i--, nb++) {
    snprintf(name, sizeof name, "in%d", (int)nb);
    ck_assert_int_ge(
        fp_graph_add_buffer(g, name, bytes, true, tu_below(r, 4) > 0, NULL), 0);
  }
  for (int32_t v = 0; v < n; v++, nb++) {
    fp_read reads[3];
    int32_t w, nr = 1 + (int32_t)tu_below(r, 3);
    for (int32_t i = 0; i < nr; i++)
      reads[i] = update_read(r, nb, bytes);
    snprintf(name, sizeof name, "b%d", (int)nb);
    ck_assert_int_ge(
        w = fp_graph_add_buffer(g, name, bytes, false, false, NULL), 0);
    snprintf(name, sizeof name, "n%d", (int)v);
    fp_node_spec s = {
        name,      tu_below(r, 8) ? FP_KIND_POINTWISE : FP_KIND_EXTERN,
        bytes / 4, 1,
        nr,        1,
        reads,     &w,
        NULL};
    s.numel = s.kind == FP_KIND_EXTERN ? 0 : s.numel;
    s.rnumel = s.kind == FP_KIND_EXTERN ? 0 : 1;
    ck_assert_int_eq(fp_graph_add_node(g, &s, NULL), v);
    /* two nodes in three take over their first read buffer */
    if (tu_below(r, 3))
      ck_assert_int_eq(fp_graph_add_inplace(g, v, reads[0].buffer, w, NULL),
                       FP_OK);
  }
  for (int32_t b = 0; b < nb; b++)
    if (tu_below(r, 5) == 0)
      ck_assert_int_eq(fp_graph_add_output(g, b, NULL), FP_OK);
  if (tu_below(r, 4) == 0)
    fp_graph_set_max_fusion_size(g, 2 + (int32_t)tu_below(r, 2), NULL);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  return g;
}

fp_graph *tu_chain_graph(int n, uint64_t bytes) {
  fp_graph *g = fp_graph_create("chain");
  int32_t prev = fp_graph_add_buffer(g, "x", bytes, true, false, NULL);
  for (int i = 0; i < n; i++) {
    char bn[16], nn[16];
    snprintf(bn, sizeof bn, "b%d", i);
    snprintf(nn, sizeof nn, "n%d", i);
    int32_t w = fp_graph_add_buffer(g, bn, bytes, false, false, NULL);
    fp_read r = {prev, FP_INDEX_AUTO, FP_READ_WHOLE};
    fp_node_spec s = {nn, FP_KIND_POINTWISE, bytes / 4, 1, 1, 1, &r, &w, NULL};
    ck_assert_int_eq(fp_graph_add_node(g, &s, NULL), i);
    prev = w;
  }
  fp_graph_add_output(g, prev, NULL);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  return g;
}

const char tu_chain3_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'chain',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true},"
    "  {'name': 't1', 'bytes': 1000}, {'name': 't2', 'bytes': 1000},"
    "  {'name': 'y', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['t1']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t1'],"
    "   'writes': ['t2']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t2'],"
    "   'writes': ['y']}],"
    " 'outputs': ['y']}";

/* tu_chain3_json with each node writing in place over what it reads. */
static const char inplace_chain_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'ipchain',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true,"
    "   'freeable': true},"
    "  {'name': 't1', 'bytes': 1000}, {'name': 't2', 'bytes': 1000},"
    "  {'name': 'y', 'bytes': 1000}%s],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['t1'], 'inplace': [['x', 't1']]},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t1'],"
    "   'writes': ['t2'], 'inplace': [['t1', 't2']]},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t2'],"
    "   'writes': ['y'], 'inplace': [['t2', 'y']]}%s],"
    " 'outputs': ['y'%s]}";

fp_graph *tu_inplace_chain(bool late, bool plain) {
  char doc[1500], *f;
  snprintf(doc, sizeof doc, inplace_chain_json,
           late ? ", {'name': 'z', 'bytes': 10}" : "",
           late ? ", {'name': 'd', 'kind': 'extern', 'reads': ['x'],"
                  " 'writes': ['z']}"
                : "",
           late ? ", 'z'" : "");
  while (plain && (f = strstr(doc, "'inplace'")))
    memcpy(f, "'unknown'", 9);
  return tu_graph(doc);
}

fp_graph *tu_generated(int family, int32_t size, uint64_t seed) {
  fp_gen_params prm;
  fp_graph *g = NULL;
  fp_error err;
  fp_gen_params_init(&prm);
  prm.family = (fp_gen_family)family;
  prm.size = size;
  prm.seed = seed;
  ck_assert_msg(fp_generate(&prm, &g, &err) == FP_OK, "%s", err.msg);
  return g;
}

void tu_plan_steps(const fp_plan *p, int32_t *step) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      step[grp[i]] = t;
  }
}
