/*
 * branch.c -- the traffic bound under a peak limit, raised by branching on
 * fusions (docs/solver.md, "Bounds", the branch on fusions).
 *
 * Some limits cost traffic through a conflict between fusions that no
 * single unfusible pair states: on mixer_b16_224.fwd, grouping a late
 * layer norm with an early reader of its input saves a read, but then
 * another late kernel must run after that group's step, which forbids
 * its own read-saving group.  Every plan either groups a pair (u, v) or
 * keeps it apart, so the least traffic within the limit is the lesser of
 * the two branches':
 *   - apart: the plans are those of the graph with (u, v) unfusible;
 *   - grouped: every plan puts {u, v} in one group, so the min cut at the
 *     pair bounds their peak (over the limit: no plan), and the far rule
 *     at the pair (fp_peak_group_far) keeps apart more pairs; dropping
 *     the "grouped" requirement only adds plans, so the traffic bound of
 *     the graph with those pairs unfusible bounds the branch.
 * A node's figure is the partition's sum with the clusters that hold
 * both nodes of an added pair bounded again on the restricted graph (the
 * others keep theirs: the restricted graph has fewer plans).  The pairs
 * branched on are those that the clusters' least-traffic plans group and
 * the plan in hand does not, kept when grouping them costs something by
 * the far rule.  Calls: peak_pairs.c (peak_bound.h), partition.c,
 * cluster_graph.c, least_traffic.c, bound.c (the restricted graph).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/branch.h"
#include "solver/bound/cluster_graph.h"
#include "solver/bound/least_traffic.h"
#include "solver/bound/partition.h"
#include "solver/common/services.h"

/* The partition's cluster size: 16 nodes reach mixer_b16_224.fwd's least
 * traffic without the limit, in milliseconds a cluster. */
#define BR_CLUSTER_SIZE 16
/* Groups one cluster search may examine (least_traffic.h). */
#define BR_SEARCH_BUDGET 3000000
/* Depth of the tree, at most, and the candidates screened at one node
 * (each a far rule: a few hundred min cuts). */
#define BR_MAX_DEPTH 48
#define BR_MAX_SCREEN 24
/* Largest graph branched on: the far rule's min cuts stop at about this
 * size (model/peak_work.h, PB_MAX_CUT_SIZE), and without them a branch
 * learns nothing; the clusters' node rows cost clusters x nodes bits. */
#define BR_MAX_NODES 2048
/* Rounds of the single-node far rule before the branching. */
#define BR_TIGHTEN_ROUNDS 3

/* A list of tuples of ints (pairs, or pairs with their cluster). */
typedef struct br_list {
  int32_t *p;
  int32_t n, cap; /* ints */
} br_list;

/* A far rule run at a candidate on the path searched: it holds for every
 * node below (fewer plans, and a group at least as large). */
typedef struct br_memo {
  int32_t u, v;
  bool none;
  int32_t n_far;
  int32_t *far;
} br_memo;

typedef struct br_search {
  const fp_graph *g; /* the graph (restricted by the limit where it can be) */
  const fp_ilp_params *prm;
  int32_t k;
  uint64_t limit, upper;
  double floor, deadline;
  solver_clusters C;
  uint64_t *lb;     /* per cluster: its bound on g */
  uint64_t total;   /* their sum */
  uint64_t *member; /* per cluster: a bit row over the nodes, N(S) */
  size_t words;
  int32_t *group_of; /* node -> its group in the plan in hand */
  br_list root;      /* (u, v, cluster): pairs the clusters' plans group
                        and the plan in hand does not */
  br_list added;     /* pairs unfusible at the node searched */
  br_list grouped;   /* pairs grouped at the node searched */
  br_memo *memo;     /* the far rules run on the path, a stack */
  int32_t n_memo, cap_memo;
} br_search;

/* Appends k ints to L.  0, or -1 out of memory. */
static int br_push(br_list *L, const int32_t *v, int32_t k) {
  if (L->n + k > L->cap) {
    int32_t cap = 2 * (L->n + k) + 16;
    int32_t *p = realloc(L->p, (size_t)cap * sizeof *p);
    if (!p)
      return -1;
    L->p = p;
    L->cap = cap;
  }
  memcpy(L->p + L->n, v, (size_t)k * sizeof *v);
  L->n += k;
  return 0;
}

/* Whether the pair list L holds (u, v), either way round. */
static bool br_holds(const br_list *L, int32_t u, int32_t v) {
  for (int32_t i = 0; i + 1 < L->n; i += 2)
    if ((L->p[i] == u && L->p[i + 1] == v) ||
        (L->p[i] == v && L->p[i + 1] == u))
      return true;
  return false;
}

static bool br_has(const br_search *R, int32_t c, int32_t v) {
  return (R->member[(size_t)c * R->words + (size_t)v / 64] >> (v % 64)) & 1;
}

/* Fills each cluster's bit row of N(S).  0, or -1 out of memory. */
static int br_members(br_search *R) {
  int32_t n = fp_graph_node_count(R->g);
  R->words = ((size_t)n + 63) / 64;
  R->member = calloc((size_t)R->C.count * R->words + 1, sizeof *R->member);
  if (!R->member)
    return -1;
  for (int32_t c = 0; c < R->C.count; c++)
    for (int32_t i = R->C.start[c]; i < R->C.start[c + 1]; i++) {
      const fp_buffer *b = fp_graph_buffer(R->g, R->C.list[i]);
      uint64_t *row = R->member + (size_t)c * R->words;
      for (int32_t j = -1; j < b->n_readers; j++) {
        int32_t v = j < 0 ? b->writer : b->readers[j];
        if (v >= 0)
          row[v / 64] |= 1ULL << (v % 64);
      }
    }
  return 0;
}

/* Appends to L as (u, v, c) the pairs that cluster c's plan p groups
 * (members: B->members) and the plan in hand does not.  0, or -1 out of
 * memory. */
static int br_plan_pairs(const br_search *R, const cluster_build *B,
                         const fp_plan *p, int32_t c, br_list *L) {
  for (int32_t i = 0; i < fp_plan_group_count(p); i++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, i, &len);
    for (int32_t a = 0; a < len; a++)
      for (int32_t b = a + 1; b < len; b++) {
        int32_t t[3] = {B->members[grp[a]], B->members[grp[b]], c};
        if (R->group_of[t[0]] != R->group_of[t[1]] && br_push(L, t, 3) != 0)
          return -1;
      }
  }
  return 0;
}

/* The bound of cluster c on graph h (R->g with R->added unfusible; B is
 * initialized for it) into *lb, at least `base`, and the pairs of its
 * least-traffic plan into L (br_plan_pairs) when the search ends. */
static fp_status br_cluster(br_search *R, cluster_build *B, int32_t c,
                            uint64_t base, fp_plan *plan, br_list *L,
                            uint64_t *lb, fp_error *err) {
  *lb = base;
  B->bufs = R->C.list + R->C.start[c];
  B->n_bufs = R->C.start[c + 1] - R->C.start[c];
  fp_plan_clear(plan);
  fp_status st = cluster_build_graph(B, c, R->k, err);
  solver_lt_result r = {0};
  if (st == FP_OK && B->count <= SOLVER_LT_MAX_NODES)
    st = cluster_least_traffic(B->sg, fp_graph_max_fusion_size(B->sg),
                               BR_SEARCH_BUDGET, R->deadline, R->prm->cancel,
                               plan, &r, err);
  if (st == FP_OK && r.solved) {
    *lb = r.traffic > base ? r.traffic : base;
    if (br_plan_pairs(R, B, plan, c, L) != 0)
      st = fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  fp_graph_destroy(B->sg);
  B->sg = NULL;
  return st;
}

/* R->g with the added pairs unfusible, into *h (NULL with err filled). */
static fp_status br_graph(const br_search *R, fp_graph **h, fp_error *err) {
  *h = fp_graph_copy_open(R->g, err);
  fp_status st = *h ? FP_OK : FP_ENOMEM;
  for (int32_t i = 0; st == FP_OK && i < R->added.n; i += 2)
    st = fp_graph_add_unfusible(*h, R->added.p[i], R->added.p[i + 1], err);
  if (st == FP_OK)
    st = fp_graph_finalize(*h, err);
  if (st != FP_OK) {
    fp_graph_destroy(*h);
    *h = NULL;
  }
  return st;
}

/* Whether cluster c holds both nodes of an added pair. */
static bool br_touched(const br_search *R, int32_t c) {
  for (int32_t i = 0; i < R->added.n; i += 2)
    if (br_has(R, c, R->added.p[i]) && br_has(R, c, R->added.p[i + 1]))
      return true;
  return false;
}

/* Every cluster's bound on `h` into lb[] (R->lb: the root's), the
 * untouched ones from R->lb (the restricted graph has fewer plans), and
 * the candidate pairs of the clusters' plans into L.  *total: the sum. */
static fp_status br_clusters(br_search *R, const fp_graph *h, bool root,
                             const uint64_t *base, br_list *L, uint64_t *total,
                             fp_error *err) {
  cluster_build B;
  fp_plan *p = fp_plan_create();
  fp_status st = FP_OK;
  if (!p || cluster_build_init(&B, h) != 0) {
    fp_plan_destroy(p);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  B.of = R->C.of;
  B.size = R->C.size;
  *total = 0;
  for (int32_t c = 0; st == FP_OK && c < R->C.count; c++) {
    uint64_t lb = root ? base[c] : R->lb[c];
    if ((root || br_touched(R, c)) && fp_clock_now() < R->deadline)
      st = br_cluster(R, &B, c, lb, p, L, &lb, err);
    else
      for (int32_t i = 0; i + 2 < R->root.n && st == FP_OK; i += 3)
        if (R->root.p[i + 2] == c && br_push(L, R->root.p + i, 3) != 0)
          st = fp_error_set(err, FP_ENOMEM, "out of memory");
    if (root)
      R->lb[c] = lb;
    *total += lb;
  }
  cluster_build_free(&B);
  fp_plan_destroy(p);
  return st;
}

/* Root of x in the union-find of parent[] (indices into a node list). */
static int32_t br_find(int32_t *parent, int32_t x) {
  while (parent[x] != x)
    x = parent[x] = parent[parent[x]];
  return x;
}

/* Index of node v in list[0..*n), appended when missing. */
static int32_t br_index(int32_t *list, int32_t *n, int32_t v) {
  for (int32_t i = 0; i < *n; i++)
    if (list[i] == v)
      return i;
  list[*n] = v;
  return (*n)++;
}

/* The groups every plan of the node with u and v grouped has: the pairs
 * grouped on the path and (u, v), joined where they share a node, as
 * nodes/start (fp_peak_group_far), the one holding u and v first.  The
 * arrays hold 2 * (R->grouped.n / 2 + 1) nodes and one more start.
 * Returns the number of groups. */
static int32_t br_groups(const br_search *R, int32_t u, int32_t v,
                         int32_t *nodes, int32_t *start, int32_t *parent) {
  int32_t n = 0, *list = nodes + R->grouped.n + 2; /* scratch half */
  int32_t a = br_index(list, &n, u), b = br_index(list, &n, v);
  for (int32_t i = 0; i < R->grouped.n; i++)
    br_index(list, &n, R->grouped.p[i]);
  for (int32_t i = 0; i < n; i++)
    parent[i] = i;
  parent[br_find(parent, a)] = br_find(parent, b);
  for (int32_t i = 0; i + 1 < R->grouped.n; i += 2) {
    int32_t x = br_index(list, &n, R->grouped.p[i]);
    int32_t y = br_index(list, &n, R->grouped.p[i + 1]);
    parent[br_find(parent, x)] = br_find(parent, y);
  }
  int32_t groups = 0, k = 0, first = br_find(parent, a);
  for (int32_t pass = 0; pass < 2; pass++) /* u's group first */
    for (int32_t r = 0; r < n; r++) {
      if (br_find(parent, r) != r || (pass == 0) != (r == first))
        continue;
      start[groups++] = k;
      for (int32_t i = 0; i < n; i++)
        if (br_find(parent, i) == r)
          nodes[k++] = list[i];
    }
  start[groups] = k;
  return groups;
}

/* Whether the nodes of grp may all share one group in h. */
static bool br_compatible(const fp_graph *h, const int32_t *grp, int32_t ng) {
  for (int32_t i = 0; i < ng; i++)
    for (int32_t j = i + 1; j < ng; j++)
      if (!fp_graph_compatible(h, grp[i], grp[j]))
        return false;
  return true;
}

/* The far rule at candidate (u, v) for the node searched (graph h), from
 * the path's memo or run now (fp_peak_group_far at br_group) and pushed
 * on it.  *m: the entry, NULL when out of memory. */
static fp_status br_screen(br_search *R, const fp_graph *h, int32_t u,
                           int32_t v, const br_memo **m, fp_error *err) {
  *m = NULL;
  for (int32_t i = 0; i < R->n_memo; i++)
    if (R->memo[i].u == u && R->memo[i].v == v) {
      *m = &R->memo[i];
      return FP_OK;
    }
  if (R->n_memo == R->cap_memo) {
    int32_t cap = 2 * R->cap_memo + 16;
    br_memo *p = realloc(R->memo, (size_t)cap * sizeof *p);
    if (!p)
      return fp_error_set(err, FP_ENOMEM, "out of memory");
    R->memo = p;
    R->cap_memo = cap;
  }
  br_memo *e = &R->memo[R->n_memo];
  size_t room = (size_t)R->grouped.n + 2;
  int32_t *nodes = malloc(2 * room * sizeof *nodes);
  int32_t *start = malloc((room + 1) * sizeof *start);
  int32_t *parent = malloc(room * sizeof *parent);
  fp_status st = FP_OK;
  *e = (br_memo){u, v, false, 0, NULL};
  if (!nodes || !start || !parent)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t groups = st == FP_OK ? br_groups(R, u, v, nodes, start, parent) : 0;
  if (st == FP_OK)
    e->none = !br_compatible(h, nodes, start[1]);
  if (st == FP_OK && !e->none)
    st = fp_peak_group_far(h, R->k, R->limit, nodes, start, groups, &e->none,
                           &e->far, &e->n_far, err);
  free(nodes);
  free(start);
  free(parent);
  if (st != FP_OK)
    return st;
  R->n_memo++;
  *m = e;
  return FP_OK;
}

/* The first candidate of L worth branching on in h: not decided on this
 * path, and grouping it costs something by the far rule at its group
 * (br_screen; no plan, or a pair not yet unfusible in h).  *m: its
 * screen, NULL when there is none. */
static fp_status br_pick(br_search *R, const fp_graph *h, const br_list *L,
                         const br_memo **m, fp_error *err) {
  fp_status st = FP_OK;
  const br_memo *e = NULL;
  *m = NULL;
  for (int32_t i = 0, tried = 0;
       st == FP_OK && i + 2 < L->n && tried < BR_MAX_SCREEN &&
       fp_clock_now() < R->deadline;
       i += 3) {
    int32_t u = L->p[i] < L->p[i + 1] ? L->p[i] : L->p[i + 1];
    int32_t v = L->p[i] < L->p[i + 1] ? L->p[i + 1] : L->p[i];
    if (!fp_graph_compatible(h, u, v) || br_holds(&R->grouped, u, v))
      continue;
    int32_t before = R->n_memo, useful = 0;
    st = br_screen(R, h, u, v, &e, err);
    tried += R->n_memo > before;
    for (int32_t j = 0; st == FP_OK && j < e->n_far; j++)
      useful += !fp_graph_is_unfusible(h, e->far[2 * j], e->far[2 * j + 1]);
    if (st == FP_OK && (e->none || useful > 0)) {
      *m = e;
      return FP_OK;
    }
  }
  return st;
}

/* The node's bound (R->added unfusible), into *out, and its graph and
 * candidates. */
static fp_status br_node(br_search *R, fp_graph **h, br_list *L, double *out,
                         fp_error *err) {
  uint64_t total = 0;
  fp_status st = br_graph(R, h, err);
  if (st == FP_OK)
    st = br_clusters(R, *h, false, NULL, L, &total, err);
  *out = (double)total > R->floor ? (double)total : R->floor;
  return st;
}

/* Both branches on (u, v): grouped (the far pairs unfusible, or nothing
 * when none) and apart; the lesser bound into *out. */
static fp_status br_dfs(br_search *R, int32_t depth, double *out,
                        fp_error *err);
static fp_status br_split(br_search *R, int32_t depth, int32_t u, int32_t v,
                          bool none, const int32_t *far, int32_t n_far,
                          double *out, fp_error *err) {
  int32_t mark = R->added.n, gmark = R->grouped.n, pair[2] = {u, v};
  double grouped = INFINITY, apart = INFINITY;
  fp_status st = FP_OK;
  if (!none) {
    if (br_push(&R->added, far, 2 * n_far) != 0 ||
        br_push(&R->grouped, pair, 2) != 0)
      return fp_error_set(err, FP_ENOMEM, "out of memory");
    st = br_dfs(R, depth + 1, &grouped, err);
    R->added.n = mark;
    R->grouped.n = gmark;
  }
  if (st == FP_OK && br_push(&R->added, pair, 2) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = br_dfs(R, depth + 1, &apart, err);
  R->added.n = mark;
  *out = grouped < apart ? grouped : apart;
  return st;
}

/* The least bound over the leaves below the node searched (R->added),
 * into *out: the node's own bound once it reaches R->upper, past the
 * deadline or the depth, or when no candidate is worth a branch. */
static fp_status br_dfs(br_search *R, int32_t depth, double *out,
                        fp_error *err) {
  fp_graph *h = NULL;
  br_list L = {0};
  const br_memo *m = NULL;
  int32_t memo_mark = R->n_memo;
  fp_status st = br_node(R, &h, &L, out, err);
  if (st == FP_OK && *out < (double)R->upper && depth < BR_MAX_DEPTH &&
      fp_clock_now() < R->deadline && !(R->prm->cancel && *R->prm->cancel))
    st = br_pick(R, h, &L, &m, err);
  fp_graph_destroy(h);
  free(L.p);
  double below = *out;
  if (st == FP_OK && m) {
    br_memo e = *m; /* the memo may move below */
    st = br_split(R, depth, e.u, e.v, e.none, e.far, e.n_far, &below, err);
  }
  for (int32_t i = memo_mark; i < R->n_memo; i++)
    free(R->memo[i].far);
  R->n_memo = memo_mark;
  *out = below > *out ? below : *out;
  return st;
}

/* The far rule at every single node x (G = {x}) of `in`, its pairs added
 * as unfusible, in up to BR_TIGHTEN_ROUNDS rounds while new ones turn up
 * (a restricted graph has more strict order to build on).  With the
 * takeover refunds of fp_peak_group_far it reaches pairs that
 * fp_peak_restrict's cap leaves open.  *out: the restricted graph (the
 * caller destroys it), NULL when nothing was added.  Stops at
 * R->deadline. */
static fp_status br_tighten(br_search *R, const fp_graph *in, fp_graph **out,
                            fp_error *err) {
  fp_status st = FP_OK;
  const fp_graph *base = R->g;
  *out = NULL;
  for (int round = 0; st == FP_OK && round < BR_TIGHTEN_ROUNDS; round++) {
    const fp_graph *cur = *out ? *out : in;
    R->added.n = 0;
    for (int32_t x = 0; st == FP_OK && x < fp_graph_node_count(cur) &&
                        fp_clock_now() < R->deadline;
         x++) {
      bool none;
      int32_t *far = NULL, n_far = 0;
      int32_t one[2] = {0, 1};
      st = fp_peak_group_far(cur, R->k, R->limit, &x, one, 1, &none, &far,
                             &n_far, err);
      for (int32_t j = 0; st == FP_OK && j < n_far; j++)
        if (!fp_graph_is_unfusible(cur, far[2 * j], far[2 * j + 1]) &&
            !br_holds(&R->added, far[2 * j], far[2 * j + 1]) &&
            br_push(&R->added, far + 2 * j, 2) != 0)
          st = fp_error_set(err, FP_ENOMEM, "out of memory");
      free(far);
    }
    if (st != FP_OK || R->added.n == 0)
      break;
    fp_graph *next = NULL;
    R->g = cur;
    st = br_graph(R, &next, err);
    fp_graph_destroy(*out);
    *out = next;
  }
  R->g = base;
  R->added.n = 0;
  return st;
}

/* Sets up R on R->g: the partition, each cluster's bound (R->lb, R->total)
 * and the root's candidates (R->root). */
static fp_status br_setup(br_search *R, const fp_plan *plan, fp_error *err) {
  int32_t n = fp_graph_node_count(R->g);
  uint64_t *per_buffer =
      malloc(((size_t)fp_graph_buffer_count(R->g) + 1) * sizeof *per_buffer);
  R->group_of = malloc(((size_t)n + 1) * sizeof *R->group_of);
  if (!per_buffer || !R->group_of ||
      solver_clusters_make(R->g, BR_CLUSTER_SIZE, false, &R->C) != 0 ||
      !(R->lb = calloc((size_t)R->C.count + 1, sizeof *R->lb)) ||
      br_members(R) != 0) {
    free(per_buffer);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  for (int32_t v = 0; v < n; v++)
    R->group_of[v] = -1 - v; /* a node the plan leaves out groups alone */
  for (int32_t i = 0; i < fp_plan_group_count(plan); i++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(plan, i, &len);
    for (int32_t j = 0; j < len; j++)
      if (grp[j] >= 0 && grp[j] < n)
        R->group_of[grp[j]] = i;
  }
  fp_status st = fp_graph_buffer_traffic_bounds(R->g, per_buffer, err);
  for (int32_t c = 0; st == FP_OK && c < R->C.count; c++)
    for (int32_t i = R->C.start[c]; i < R->C.start[c + 1]; i++)
      R->lb[c] += per_buffer[R->C.list[i]];
  if (st == FP_OK)
    st = br_clusters(R, R->g, true, R->lb, &R->root, &R->total, err);
  free(per_buffer);
  return st;
}

static void br_free(br_search *R) {
  for (int32_t i = 0; i < R->n_memo; i++)
    free(R->memo[i].far);
  free(R->memo);
  free(R->root.p);
  free(R->added.p);
  free(R->grouped.p);
  free(R->lb);
  free(R->member);
  free(R->group_of);
  solver_clusters_free(&R->C);
}

fp_status solver_branch_bound(const fp_graph *g, const fp_ilp_params *prm,
                              const fp_plan *plan, uint64_t upper,
                              double time_s, double *bound, fp_error *err) {
  if (prm->objective != FP_OBJECTIVE_TRAFFIC ||
      prm->limits.peak == FP_NO_LIMIT || time_s <= 0 ||
      fp_graph_node_count(g) > BR_MAX_NODES || (double)upper <= *bound ||
      (prm->cancel && *prm->cancel))
    return FP_OK;
  br_search R;
  memset(&R, 0, sizeof R);
  fp_graph *rg = NULL;
  R.prm = prm;
  R.upper = upper;
  R.floor = *bound;
  R.deadline = fp_clock_now() + time_s;
  R.limit = prm->limits.peak;
  fp_status st = R.limit ? FP_OK : solver_eager_peak(g, &R.limit, err);
  if (st == FP_OK)
    st = solver_peak_restricted(g, prm, &rg, err);
  R.g = rg ? rg : g;
  R.k = fp_limits_fusion_size(&prm->limits, R.g);
  fp_graph *tg = NULL;
  if (st == FP_OK)
    st = br_tighten(&R, R.g, &tg, err);
  R.g = tg ? tg : R.g;
  R.k = fp_limits_fusion_size(&prm->limits, R.g);
  double b = *bound;
  if (st == FP_OK)
    st = br_setup(&R, plan, err);
  if (st == FP_OK)
    st = br_dfs(&R, 0, &b, err);
  if (st == FP_OK && b > *bound)
    *bound = b;
  br_free(&R);
  fp_graph_destroy(rg);
  fp_graph_destroy(tg);
  return st;
}
