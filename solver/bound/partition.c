/*
 * partition.c -- clusters of buffers for the decomposed traffic bound.
 *
 * A buffer's traffic depends only on how N(b), its writer and readers,
 * are grouped; the bound (bound.c) minimizes each cluster's traffic on
 * its own, so when a fusible node v lies in N(S) of two clusters, each
 * may count a saving that needs v grouped its own way, and the bound
 * loses the difference.  Extern nodes always stand alone, so buffers
 * that meet only at extern nodes never interact.
 *
 * Clusters are grown as in Kruskal's algorithm: every fusible node links
 * its largest buffer to each of its other buffers, with the smaller
 * one's bytes as the weight (what the link can be worth); links are
 * taken heaviest first, and two clusters merge when their N(S) stays
 * within the size.  A buffer's link can join buffers far apart in
 * program order: a gelu's input, saved for the backward pass, and the
 * gelu derivative computed from it (which any plan may run right after
 * the forward gelu) end up together, where cutting the program into
 * consecutive pieces splits them.  Clusters left small are then merged
 * along program order within one connected component (fewer cluster
 * models to solve; nothing links two components, so a cluster spanning
 * both would bound no more).  The ordered variant skips the links: on
 * small graphs consecutive pieces sometimes bound more (a 36-node
 * transformer's optimum, which the linked clusters miss by 6 KB), and
 * the bound takes the best partition.
 *
 * Invariant: root[b] == b exactly for the roots, and a root's set holds
 * N(S) of its cluster, distinct, count <= size unless it is a single
 * buffer with a larger N(b) (then it never merges).
 */
#include "solver/bound/partition.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Most buffers in one cluster: buffers adding no node to N(S) could
 * otherwise gather without end. */
#define CLUSTER_SPAN 256

typedef struct link {
  uint64_t weight;
  int32_t node, a, b; /* buffers a and b meet at fusible node `node` */
} link;

typedef struct grower {
  const fp_graph *g;
  int32_t size;
  int32_t *root;      /* buffer -> parent in the union-find */
  int32_t **set;      /* root -> N(S), distinct */
  int32_t *set_n;     /* root -> |N(S)| */
  int32_t *bufs;      /* root -> buffers in the cluster */
  int32_t *stamp;     /* node -> last merge that looked at it */
  int32_t gen;        /* the current merge */
  int32_t *comp;      /* node -> its connected component */
  int32_t *comp_last; /* component -> its last buffer so far (grow) */
  int32_t *seq;       /* the buffers in program order */
  int32_t len;        /* entries in seq */
  link *links;
  size_t n_links;
} grower;

static int32_t find(int32_t *root, int32_t b) {
  while (root[b] != b) {
    root[b] = root[root[b]];
    b = root[b];
  }
  return b;
}

/* Connected components of the nodes (linked by every buffer between its
 * writer and readers) into G->comp, each node naming its root. */
static void find_components(grower *G) {
  const fp_graph *g = G->g;
  int32_t n = fp_graph_node_count(g);
  for (int32_t v = 0; v < n; v++)
    G->comp[v] = v;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    int32_t first = buf->writer >= 0     ? buf->writer
                    : buf->n_readers > 0 ? buf->readers[0]
                                         : -1;
    for (int32_t i = 0; first >= 0 && i < buf->n_readers; i++) {
      int32_t x = find(G->comp, first), y = find(G->comp, buf->readers[i]);
      G->comp[x > y ? x : y] = x > y ? y : x;
    }
  }
  for (int32_t v = 0; v < n; v++)
    G->comp[v] = find(G->comp, v);
}

/* The buffers in program order, each where its writer is reached (an
 * input: its first reader), into G->seq; buffers nothing touches are left
 * out.  seen: scratch of one flag per buffer. */
static void buffer_sequence(grower *G, bool *seen) {
  const fp_graph *g = G->g;
  memset(seen, 0, (size_t)fp_graph_buffer_count(g) * sizeof *seen);
  G->len = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t i = 0; i < nd->n_reads + nd->n_writes; i++) {
      int32_t b =
          i < nd->n_reads ? nd->reads[i].buffer : nd->writes[i - nd->n_reads];
      if (!seen[b] && (i >= nd->n_reads || fp_graph_buffer(g, b)->input)) {
        seen[b] = true;
        G->seq[G->len++] = b;
      }
    }
  }
}

/* Each sequenced buffer its own cluster, its set N(b).  0 or -1. */
static int init_sets(grower *G) {
  const fp_graph *g = G->g;
  for (int32_t i = 0; i < G->len; i++) {
    int32_t b = G->seq[i];
    const fp_buffer *buf = fp_graph_buffer(g, b);
    G->set[b] = malloc(((size_t)buf->n_readers + 1) * sizeof **G->set);
    if (!G->set[b])
      return -1;
    G->set_n[b] = 0;
    if (buf->writer >= 0)
      G->set[b][G->set_n[b]++] = buf->writer;
    for (int32_t r = 0; r < buf->n_readers; r++)
      G->set[b][G->set_n[b]++] = buf->readers[r];
    G->bufs[b] = 1;
  }
  return 0;
}

/* Links of fusible node v: its largest buffer (the first of equals) to
 * each other distinct buffer, appended to G->links (room for the node's
 * reads and writes). */
static void node_links(grower *G, int32_t v) {
  const fp_graph *g = G->g;
  const fp_node *nd = fp_graph_node(g, v);
  int32_t hub = -1, total = nd->n_reads + nd->n_writes;
  for (int32_t i = 0; i < total; i++) {
    int32_t b =
        i < nd->n_reads ? nd->reads[i].buffer : nd->writes[i - nd->n_reads];
    if (hub < 0 ||
        fp_graph_buffer(g, b)->bytes > fp_graph_buffer(g, hub)->bytes)
      hub = b;
  }
  for (int32_t i = 0; i < total; i++) {
    int32_t b =
        i < nd->n_reads ? nd->reads[i].buffer : nd->writes[i - nd->n_reads];
    bool dup = b == hub;
    for (int32_t j = 0; j < i && !dup; j++)
      dup = (j < nd->n_reads ? nd->reads[j].buffer
                             : nd->writes[j - nd->n_reads]) == b;
    if (dup)
      continue;
    uint64_t wb = fp_graph_buffer(g, b)->bytes,
             wh = fp_graph_buffer(g, hub)->bytes;
    G->links[G->n_links++] = (link){wb < wh ? wb : wh, v, hub, b};
  }
}

/* Heaviest first; then by node and buffer, so the result never depends
 * on qsort's order among equals. */
static int link_cmp(const void *x, const void *y) {
  const link *a = x, *b = y;
  if (a->weight != b->weight)
    return a->weight > b->weight ? -1 : 1;
  if (a->node != b->node)
    return a->node < b->node ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

/* Every fusible node's links, sorted.  0 or -1 (memory). */
static int collect_links(grower *G) {
  const fp_graph *g = G->g;
  size_t room = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *nd = fp_graph_node(g, v);
    room += (size_t)nd->n_reads + (size_t)nd->n_writes;
  }
  G->links = malloc((room + 1) * sizeof *G->links);
  if (!G->links)
    return -1;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++)
    if (fp_graph_node(g, v)->kind != FP_KIND_EXTERN)
      node_links(G, v);
  qsort(G->links, G->n_links, sizeof *G->links, link_cmp);
  return 0;
}

/* Merges the clusters of buffers a and b when their N(S) stays within
 * the size and their buffers within CLUSTER_SPAN.  0 (merged or not) or
 * -1 (memory). */
static int try_merge(grower *G, int32_t a, int32_t b) {
  int32_t ra = find(G->root, a), rb = find(G->root, b);
  if (ra == rb || G->set_n[ra] > G->size || G->set_n[rb] > G->size ||
      G->bufs[ra] + G->bufs[rb] > CLUSTER_SPAN)
    return 0;
  int32_t gen = ++G->gen, extra = 0;
  for (int32_t i = 0; i < G->set_n[ra]; i++)
    G->stamp[G->set[ra][i]] = gen;
  for (int32_t i = 0; i < G->set_n[rb]; i++)
    extra += G->stamp[G->set[rb][i]] != gen;
  if (G->set_n[ra] + extra > G->size)
    return 0;
  int32_t *grown =
      realloc(G->set[ra], ((size_t)G->set_n[ra] + extra + 1) * sizeof *grown);
  if (!grown)
    return -1;
  G->set[ra] = grown;
  for (int32_t i = 0; i < G->set_n[rb]; i++)
    if (G->stamp[G->set[rb][i]] != gen)
      grown[G->set_n[ra]++] = G->set[rb][i];
  free(G->set[rb]);
  G->set[rb] = NULL;
  G->bufs[ra] += G->bufs[rb];
  G->root[rb] = ra;
  return 0;
}

/* The component of buffer b's nodes (b is sequenced: it has a node). */
static int32_t buffer_comp(const grower *G, int32_t b) {
  const fp_buffer *buf = fp_graph_buffer(G->g, b);
  return G->comp[buf->writer >= 0 ? buf->writer : buf->readers[0]];
}

/* Links heaviest first, then each buffer with the one before it in
 * program order within its component (components may interleave).
 * last: scratch of one entry per node.  0 or -1 (memory). */
static int grow(grower *G, int32_t *last) {
  for (size_t i = 0; i < G->n_links; i++)
    if (try_merge(G, G->links[i].a, G->links[i].b) != 0)
      return -1;
  memset(last, 0xff, (size_t)fp_graph_node_count(G->g) * sizeof *last);
  for (int32_t i = 0; i < G->len; i++) {
    int32_t b = G->seq[i], c = buffer_comp(G, b);
    if (last[c] >= 0 && try_merge(G, last[c], b) != 0)
      return -1;
    last[c] = b;
  }
  return 0;
}

/* Cluster numbers in program order, sizes, and the CSR lists into C.
 * 0 or -1 (memory). */
static int number_clusters(grower *G, solver_clusters *C) {
  const fp_graph *g = G->g;
  int32_t nb = fp_graph_buffer_count(g);
  int32_t *id = G->stamp; /* reused: buffer roots -> cluster, by buffer */
  C->count = 0;
  C->nodes = malloc(((size_t)G->len + 1) * sizeof *C->nodes);
  C->start = calloc((size_t)G->len + 2, sizeof *C->start);
  C->list = malloc(((size_t)nb + 1) * sizeof *C->list);
  if (!C->nodes || !C->start || !C->list)
    return -1;
  for (int32_t i = 0; i < G->len; i++)
    id[G->seq[i]] = -1;
  for (int32_t i = 0; i < G->len; i++) {
    int32_t r = find(G->root, G->seq[i]);
    if (id[r] < 0) {
      C->nodes[C->count] = G->set_n[r];
      id[r] = C->count++;
    }
    C->of[G->seq[i]] = id[r];
  }
  for (int32_t b = 0; b < nb; b++)
    if (C->of[b] >= 0)
      C->start[C->of[b] + 2]++;
  for (int32_t c = 0; c < C->count; c++)
    C->start[c + 2] += C->start[c + 1];
  for (int32_t b = 0; b < nb; b++)
    if (C->of[b] >= 0)
      C->list[C->start[C->of[b] + 1]++] = b;
  return 0;
}

int solver_clusters_make(const fp_graph *g, int32_t size, bool ordered,
                         solver_clusters *C) {
  int32_t n = fp_graph_node_count(g), nb = fp_graph_buffer_count(g);
  size_t cells = (size_t)(n > nb ? n : nb) + 1;
  grower G = {0};
  bool *seen = NULL;
  int rc = -1;
  memset(C, 0, sizeof *C);
  C->size = size;
  G.g = g;
  G.size = size;
  G.root = malloc(((size_t)nb + 1) * sizeof *G.root);
  G.set = calloc((size_t)nb + 1, sizeof *G.set);
  G.set_n = calloc((size_t)nb + 1, sizeof *G.set_n);
  G.bufs = calloc((size_t)nb + 1, sizeof *G.bufs);
  G.stamp = calloc(cells, sizeof *G.stamp);
  G.comp = malloc(((size_t)n + 1) * sizeof *G.comp);
  G.comp_last = malloc(((size_t)n + 1) * sizeof *G.comp_last);
  G.seq = malloc(((size_t)nb + 1) * sizeof *G.seq);
  seen = malloc(((size_t)nb + 1) * sizeof *seen);
  C->of = malloc(((size_t)nb + 1) * sizeof *C->of);
  if (!G.root || !G.set || !G.set_n || !G.bufs || !G.stamp || !G.comp ||
      !G.comp_last || !G.seq || !seen || !C->of)
    goto fail;
  for (int32_t b = 0; b < nb; b++)
    G.root[b] = b;
  memset(C->of, 0xff, (size_t)nb * sizeof *C->of);
  find_components(&G);
  buffer_sequence(&G, seen);
  if (init_sets(&G) != 0 || (!ordered && collect_links(&G) != 0) ||
      grow(&G, G.comp_last) != 0 || number_clusters(&G, C) != 0)
    goto fail;
  rc = 0;
fail:
  for (int32_t b = 0; G.set && b < nb; b++)
    free(G.set[b]);
  free(G.set);
  free(G.root);
  free(G.set_n);
  free(G.bufs);
  free(G.stamp);
  free(G.comp);
  free(G.comp_last);
  free(G.seq);
  free(G.links);
  free(seen);
  return rc;
}

void solver_clusters_free(solver_clusters *C) {
  if (!C)
    return;
  free(C->of);
  free(C->nodes);
  free(C->start);
  free(C->list);
  memset(C, 0, sizeof *C);
}
