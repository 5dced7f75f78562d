/*
 * generate.c -- deterministic generator of NN-shaped training graphs.
 *
 * The transformer, convnet and mlp families build a training step as
 *   pre (inputs, stem) -> layers forward -> top (head, loss, head backward)
 *   -> layers backward, in reverse -> post (backward of the stem)
 * from four callbacks per family.  Forward activations are saved in a
 * per-layer record and read again by the backward pass, as autograd does.
 *
 * Hitting `size` exactly: the head and the layers come in levels of
 * richness (a transformer layer without or with its layernorms, ...).  A
 * planner counts the nodes of each piece by running the same callbacks in a
 * dry mode (no graph, only counters), so counts can never drift from what
 * is built; it then picks the head level, the number of full layers and
 * the level of one last, lighter layer so the total lands just under
 * `size`.  The small rest is spread evenly as extra pointwise nodes
 * (dropout-like scales and skip adds) over "sites" in the graph.
 *
 * The random family builds a random DAG of NN-like ops node by node.
 *
 * Determinism: every structural choice comes from splitmix64 and integer
 * arithmetic; the only doubles are op constants that are exact (powers of
 * two, 1.25).
 */
#include "gen/generate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"

/* ---- names and parameters ---------------------------------------------- */

static const char *const family_names[] = {
#define FP_GEN_FAMILY_STR_(name, str) str,
    FP_GEN_FAMILY_MAP(FP_GEN_FAMILY_STR_)
#undef FP_GEN_FAMILY_STR_
};

const char *fp_gen_family_name(fp_gen_family f) {
  return fp_name_of(family_names, FP_GEN_FAMILY_COUNT_, (int)f);
}

int fp_gen_family_parse(const char *s) {
  return fp_name_lookup(family_names, FP_GEN_FAMILY_COUNT_, s);
}

void fp_gen_params_init(fp_gen_params *p) {
  p->family = FP_GEN_TRANSFORMER;
  p->size = FP_GEN_DEFAULT_SIZE;
  p->seed = 1;
}

/* ---- deterministic random numbers --------------------------------------- */

typedef struct rng {
  uint64_t s;
} rng;

/* One splitmix64 step (fp_splitmix64: the stream depends on nothing but
 * its seed, on every platform). */
static uint64_t rng_next(rng *r) {
  return fp_splitmix64(&r->s);
}

/* An integer in [0, n), 1 <= n < 2^32.  Multiply-shift: integer only, so
 * the same everywhere; its bias (below 2^-32) does not matter here. */
static uint32_t rng_below(rng *r, uint32_t n) {
  return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* An integer in [lo, hi]. */
static uint32_t rng_range(rng *r, uint32_t lo, uint32_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

/* A hash of (seed, a) for per-layer choices: they must not depend on how
 * many numbers were drawn before (the planner's dry runs repeat layers). */
static uint64_t hash2(uint64_t seed, uint64_t a) {
  rng r = {seed ^ (a * 0xd1342543de82ef95ull)};
  return rng_next(&r);
}

/* 2^-floor(log2(d)/2): the attention scale 1/sqrt(d), rounded to a power
 * of two so that it is exact in binary (byte-identical output). */
static double inv_sqrt_pow2(uint32_t d) {
  int lg = 0;
  while (d >> (lg + 1))
    lg++;
  double a = 1.0;
  for (int i = 0; i < lg / 2; i++)
    a *= 0.5;
  return a;
}

/* ---- the emitter: nodes, buffers, names ---------------------------------- */

#define PFX_CAP 64
#define NAME_CAP 160

typedef struct gen {
  fp_graph *g;       /* NULL in a dry run: nodes and sites are only counted */
  fp_error e;        /* the first failure */
  bool failed;       /* once set, every call is a no-op */
  int64_t nodes;     /* nodes emitted so far */
  int64_t sites;     /* sites visited so far */
  int64_t extras;    /* extra pointwise nodes to spread ... */
  int64_t n_sites;   /* ... over this many sites */
  size_t plen;       /* strlen(pfx) */
  char pfx[PFX_CAP]; /* name prefix: "l3.attn", "bwd.l3", "" at top level */
  char name[NAME_CAP];
} gen;

/* Records the first failure; later ones would only be its consequences.
 * Returns the code. */
static fp_status gen_fail(gen *G, fp_status code, const char *msg) {
  if (!G->failed)
    fp_error_set(&G->e, code, "generate: %s", msg);
  G->failed = true;
  return G->e.code;
}

/* Whether calls should touch the graph (a real run that has not failed). */
static bool live(const gen *G) {
  return G->g && !G->failed;
}

/* Sets the prefix to `base` followed by `l` when l >= 0 ("l" 3 -> "l3"). */
static void setpfx(gen *G, const char *base, int32_t l) {
  int n = l < 0 ? snprintf(G->pfx, PFX_CAP, "%s", base)
                : snprintf(G->pfx, PFX_CAP, "%s%d", base, (int)l);
  G->plen = n < 0 || n >= PFX_CAP ? 0 : (size_t)n;
  G->pfx[G->plen] = '\0';
}

/* Appends ".seg" to the prefix; returns the old length, for pop(). */
static size_t push(gen *G, const char *seg) {
  size_t old = G->plen, n = strlen(seg);
  if (old + n + 2 > PFX_CAP) {
    gen_fail(G, FP_EINTERNAL, "name prefix too long");
    return old;
  }
  if (old)
    G->pfx[G->plen++] = '.';
  memcpy(G->pfx + G->plen, seg, n + 1);
  G->plen += n;
  return old;
}

/* Restores the prefix saved by push(). */
static void pop(gen *G, size_t old) {
  G->plen = old;
  G->pfx[old] = '\0';
}

/* Writes "<pfx>.<nm>" into G->name (just nm at top level) and returns a
 * pointer to its end, with room for ".out"; NULL (a failure) if too long. */
static char *join(gen *G, const char *nm) {
  size_t n = strlen(nm);
  if (G->plen + n + 6 > NAME_CAP) {
    gen_fail(G, FP_EINTERNAL, "name too long");
    return NULL;
  }
  char *p = G->name;
  if (G->plen) {
    memcpy(p, G->pfx, G->plen);
    p += G->plen;
    *p++ = '.';
  }
  memcpy(p, nm, n + 1);
  return p + n;
}

/* Adds input buffer "<pfx>.<nm>" of `elems` float32s: a parameter, or a
 * minibatch tensor when `freeable`.  Returns it, or -1 (dry run / error). */
static int32_t input(gen *G, const char *nm, uint64_t elems, bool freeable) {
  if (!live(G) || !join(G, nm))
    return -1;
  int32_t b =
      fp_graph_add_buffer(G->g, G->name, 4 * elems, true, freeable, &G->e);
  if (b < 0)
    G->failed = true;
  return b;
}

/* Marks buffer b as a graph output (the loss, weight gradients). */
static void output(gen *G, int32_t b) {
  if (live(G) && fp_graph_add_output(G->g, b, &G->e) != FP_OK)
    G->failed = true;
}

/* Adds node "<pfx>.<nm>" described by `s` (name and writes are filled in
 * here) writing a new buffer "<pfx>.<nm>.out" of `elems` float32s.
 * Returns the buffer, or -1 in a dry run or after a failure. */
static int32_t emit(gen *G, const char *nm, fp_node_spec s, uint64_t elems) {
  G->nodes++;
  if (!live(G))
    return -1;
  char *end = join(G, nm);
  if (!end)
    return -1;
  memcpy(end, ".out", 5);
  int32_t b =
      fp_graph_add_buffer(G->g, G->name, 4 * elems, false, false, &G->e);
  *end = '\0';
  s.name = G->name;
  s.n_writes = 1;
  s.writes = &b;
  if (b < 0 || fp_graph_add_node(G->g, &s, &G->e) < 0) {
    G->failed = true;
    return -1;
  }
  return b;
}

/* Read descriptors: ELEM (same size as the iteration space), ROW (one
 * value per row, broadcast), COL (one value per column, e.g. a bias). */
#define RD_(b, ix) ((fp_read){(b), (uint8_t)(ix), FP_READ_WHOLE})
#define EL(b) RD_(b, FP_INDEX_ELEM)
#define ROW(b) RD_(b, FP_INDEX_ROW)
#define COL(b) RD_(b, FP_INDEX_COL)
/* TRANS: a reduction over the rows of a row-major buffer (a column sum). */
#define TR(b) RD_(b, FP_INDEX_TRANS)
#define READS(...)                                                             \
  (int)(sizeof((fp_read[]){__VA_ARGS__}) / sizeof(fp_read)), (fp_read[]) {     \
    __VA_ARGS__                                                                \
  }

/* A pointwise node over `numel` elements. */
static int32_t pwa(gen *G, const char *nm, fp_op_fn fn, double alpha,
                   uint64_t numel, int nr, const fp_read *rd) {
  fp_op op = {.fn = fn, .alpha = alpha};
  fp_node_spec s = {.kind = FP_KIND_POINTWISE,
                    .numel = numel,
                    .rnumel = 1,
                    .n_reads = nr,
                    .reads = rd,
                    .op = &op};
  return emit(G, nm, s, numel);
}

/* A reduction over iter [numel, rnumel], writing numel elements. */
static int32_t red(gen *G, const char *nm, fp_op_fn fn, uint64_t numel,
                   uint64_t rnumel, int nr, const fp_read *rd) {
  fp_op op = {.fn = fn, .alpha = 1.0};
  fp_node_spec s = {.kind = FP_KIND_REDUCTION,
                    .numel = numel,
                    .rnumel = rnumel,
                    .n_reads = nr,
                    .reads = rd,
                    .op = &op};
  return emit(G, nm, s, numel);
}

#define PW(G, nm, fn, numel, ...)                                              \
  pwa(G, nm, FP_OP_##fn, 1.0, numel, READS(__VA_ARGS__))
#define SCALE(G, nm, alpha, numel, rd)                                         \
  pwa(G, nm, FP_OP_SCALE, alpha, numel, READS(rd))
#define RED(G, nm, fn, numel, rnumel, ...)                                     \
  red(G, nm, FP_OP_##fn, numel, rnumel, READS(__VA_ARGS__))

enum { NT = 0, TA = 1, TB = 2 }; /* matmul transposes */

/* An extern matmul C[m,n] = op(a)[m,k] * op(b)[k,n]; `t` holds TA / TB
 * when a is stored [k,m] / b is stored [n,k]. */
static int32_t mm(gen *G, const char *nm, uint32_t m, uint32_t n, uint32_t k,
                  int t, int32_t a, int32_t b) {
  fp_op op = {.fn = FP_OP_MATMUL,
              .alpha = 1.0,
              .m = m,
              .n = n,
              .k = k,
              .trans_a = (t & TA) != 0,
              .trans_b = (t & TB) != 0};
  fp_read rd[2] = {RD_(a, FP_INDEX_AUTO), RD_(b, FP_INDEX_AUTO)};
  fp_node_spec s = {
      .kind = FP_KIND_EXTERN, .n_reads = 2, .reads = rd, .op = &op};
  return emit(G, nm, s, (uint64_t)m * n);
}

/* Visits a site: appends this site's share of the extra nodes as a
 * pointwise chain on x (numel elements) -- alternately a dropout-like
 * scale and a skip add of x -- and returns the chain's end (x when the
 * share is 0).  Shares follow Bresenham, so extras spread evenly. */
static int32_t site(gen *G, const char *nm, int32_t x, uint64_t numel) {
  int64_t j = G->sites++, e = 0;
  if (G->n_sites > 0)
    e = (j + 1) * G->extras / G->n_sites - j * G->extras / G->n_sites;
  if (e == 0)
    return x;
  size_t old = push(G, nm);
  int32_t y = x;
  for (int64_t k = 0; k < e; k++) {
    char kn[24];
    snprintf(kn, sizeof kn, "x%d", (int)k);
    y = k % 2 == 0 ? SCALE(G, kn, 0.5, numel, EL(y))
                   : PW(G, kn, ADD, numel, EL(y), EL(x));
  }
  pop(G, old);
  return y;
}

/* ---- shared building blocks --------------------------------------------- */

typedef struct norm_state {
  int32_t gamma, beta, xhat, rstd;
} norm_state;

/* Normalization of x [rows, cols] with statistics per row (mean, sumsq
 * reductions), decomposed as Inductor lowers it.  Affine parameters are per
 * column (layernorm) or per row (batchnorm-like over [channels, N*H*W]).
 * Saves what the backward needs in `st`; returns the normalized output. */
static int32_t norm_fwd(gen *G, const char *nm, int32_t x, uint64_t rows,
                        uint64_t cols, bool per_col, norm_state *st) {
  size_t old = push(G, nm);
  uint64_t n = rows * cols;
  fp_index ix = per_col ? FP_INDEX_COL : FP_INDEX_ROW;
  st->gamma = input(G, "gamma", per_col ? cols : rows, false);
  st->beta = input(G, "beta", per_col ? cols : rows, false);
  int32_t mu = RED(G, "mean", MEAN, rows, cols, EL(x));
  int32_t xc = PW(G, "sub", SUB, n, EL(x), ROW(mu));
  int32_t var = RED(G, "var", SUMSQ, rows, cols, EL(xc));
  st->rstd = PW(G, "rstd", RSQRT, rows, EL(var));
  st->xhat = PW(G, "norm", MUL, n, EL(xc), ROW(st->rstd));
  int32_t y = PW(G, "scale", MUL, n, EL(st->xhat), RD_(st->gamma, ix));
  y = PW(G, "shift", ADD, n, EL(y), RD_(st->beta, ix));
  pop(G, old);
  return y;
}

/* Backward of norm_fwd for the gradient dy: parameter gradients (two
 * reductions reading dy: horizontal-fusion candidates) and the input
 * gradient (two more reductions reading the same dxhat).  Returns dx. */
static int32_t norm_bwd(gen *G, const char *nm, int32_t dy, uint64_t rows,
                        uint64_t cols, bool per_col, const norm_state *st) {
  size_t old = push(G, nm);
  uint64_t n = rows * cols;
  /* Parameter grads reduce over the dimension the parameter is not on. */
  uint64_t pn = per_col ? cols : rows, pr = per_col ? rows : cols;
  fp_index ix = per_col ? FP_INDEX_COL : FP_INDEX_ROW;
  fp_read dyr = per_col ? TR(dy) : EL(dy);
  fp_read xhr = per_col ? TR(st->xhat) : EL(st->xhat);
  output(G, RED(G, "dbeta", SUM, pn, pr, dyr));
  output(G, RED(G, "dgamma", SUM, pn, pr, dyr, xhr));
  int32_t dxh = PW(G, "dxhat", MUL, n, EL(dy), RD_(st->gamma, ix));
  int32_t m1 = RED(G, "dmean", MEAN, rows, cols, EL(dxh));
  int32_t m2 = RED(G, "ddot", SUM, rows, cols, EL(dxh), EL(st->xhat));
  int32_t t = PW(G, "proj", MUL, n, EL(st->xhat), ROW(m2));
  t = PW(G, "sub1", SUB, n, EL(dxh), EL(t));
  t = PW(G, "sub2", SUB, n, EL(t), ROW(m1));
  int32_t dx = PW(G, "dX", MUL, n, EL(t), ROW(st->rstd));
  pop(G, old);
  return dx;
}

/* Row softmax of x [rows, cols]: max, sub, exp, sum, div.  Returns p. */
static int32_t softmax(gen *G, const char *nm, int32_t x, uint64_t rows,
                       uint64_t cols) {
  size_t old = push(G, nm);
  uint64_t n = rows * cols;
  int32_t mx = RED(G, "max", MAX, rows, cols, EL(x));
  int32_t z = PW(G, "sub", SUB, n, EL(x), ROW(mx));
  int32_t e = PW(G, "exp", EXP, n, EL(z));
  int32_t s = RED(G, "sum", SUM, rows, cols, EL(e));
  int32_t p = PW(G, "div", DIV, n, EL(e), ROW(s));
  pop(G, old);
  return p;
}

/* Cross-entropy-like loss of probabilities p against freeable targets
 * [rows, cols]: the loss (an output) and its gradient p - targets, passed
 * through the "loss.scale" site (loss scaling).  Returns the gradient. */
static int32_t ce_loss(gen *G, int32_t p, uint64_t rows, uint64_t cols) {
  uint64_t n = rows * cols;
  setpfx(G, "", -1);
  int32_t tg = input(G, "data.targets", n, true);
  output(G, RED(G, "loss", SUM, 1, n, EL(p), EL(tg)));
  setpfx(G, "bwd", -1);
  int32_t dl = PW(G, "loss.dX", SUB, n, EL(p), EL(tg));
  return site(G, "loss.scale", dl, n);
}

/* ---- the model: dims, per-layer records, family callbacks ---------------- */

typedef struct tf_model {
  uint32_t rows, d, f, vocab; /* tokens, hidden, MLP hidden, vocabulary */
  double alpha;               /* attention scale */
  int32_t tokens, embed, hf, wout;
  norm_state lnf;
} tf_model;

typedef struct cn_model {
  uint32_t batch, side, c0, classes, bps; /* bps: blocks per stage */
  uint32_t p0;                            /* batch * side * side */
  int32_t image, w0, a0;
  norm_state bn0;
} cn_model;

typedef struct mlp_model {
  uint32_t batch, base, in, classes;
  int32_t up_dz, up_w; /* the module above: its pre-activation grad, weight */
  uint32_t up_n;       /* and its output width */
  int32_t up_l;        /* its layer index, -1 for the head */
} mlp_model;

typedef struct model {
  uint64_t seed;
  int head; /* head level */
  int32_t n_layers;
  int32_t x, dx; /* activation flowing up / gradient flowing down */
  union {
    tf_model tf;
    cn_model cn;
    mlp_model mlp;
  } u;
} model;

typedef struct tf_layer {
  int32_t h, y1, q, k, v, p, a, h1, y2, ub, g; /* saved activations */
  int32_t wq, wk, wv, wo, w1, w2;              /* weights */
  norm_state ln1, ln2;
} tf_layer;

typedef struct cn_layer {
  int32_t xp, cols1, a1, cols2, a2, w1, w2, wsc;
  norm_state bn1, bn2;
} cn_layer;

typedef struct mlp_layer {
  int32_t x, w, a;
} mlp_layer;

typedef struct layer {
  int32_t l;
  int level;
  union {
    tf_layer tf;
    cn_layer cn;
    mlp_layer mlp;
  } u;
} layer;

/* A family: level counts and the callbacks run_model() strings together.
 * Node counts may depend on the head level, on whether there are layers,
 * and on a layer's level and kind -- nothing else (the planner relies on
 * it). */
typedef struct family {
  int head_levels, layer_levels;
  void (*dims)(model *M, rng *r);
  int (*kind)(const model *M, int32_t l); /* 0 or 1 */
  void (*pre)(gen *G, model *M);
  void (*fwd)(gen *G, model *M, layer *L);
  void (*top)(gen *G, model *M);
  void (*bwd)(gen *G, model *M, layer *L);
  void (*post)(gen *G, model *M);
} family;

/* ---- transformer ----------------------------------------------------------
 */

/* Layer levels (each adds to the one before) and head levels. */
enum { TF_CORE, TF_BIAS, TF_MLP, TF_LN2, TF_LN1, TF_LEVELS };
enum { TH_MIN, TH_EMBED_GRAD, TH_POS, TH_LNF, TH_LEVELS };

/* Picks the transformer's shapes (all tensors <= 32 MiB). */
static void tf_dims(model *M, rng *r) {
  tf_model *t = &M->u.tf;
  t->rows = 128 * rng_range(r, 1, 8);
  t->d = 64 * rng_range(r, 2, 16);
  t->f = t->d * rng_range(r, 2, 4);
  t->vocab = 256 * rng_range(r, 4, 32);
  t->alpha = inv_sqrt_pow2(t->d);
}

static int zero_kind(const model *M, int32_t l) {
  (void)M;
  (void)l;
  return 0;
}

/* Token embedding (one-hot minibatch times the table), positions, and the
 * embedding dropout site. */
static void tf_pre(gen *G, model *M) {
  tf_model *t = &M->u.tf;
  uint64_t n = (uint64_t)t->rows * t->d;
  setpfx(G, "", -1);
  t->tokens = input(G, "data.tokens", (uint64_t)t->rows * t->vocab, true);
  t->embed = input(G, "embed.W", (uint64_t)t->vocab * t->d, false);
  int32_t h = mm(G, "embed", t->rows, t->d, t->vocab, NT, t->tokens, t->embed);
  if (M->head >= TH_POS) {
    int32_t pos = input(G, "embed.pos", n, false);
    h = PW(G, "embed.pos_add", ADD, n, EL(h), EL(pos));
  }
  M->x = site(G, "embed.drop", h, n);
}

/* Attention forward on y1: q/k/v projections, scores, softmax, attn @ v,
 * output projection.  Returns the projection (through the dropout site). */
static int32_t tf_attn_fwd(gen *G, const tf_model *t, tf_layer *L) {
  uint32_t R = t->rows, d = t->d;
  size_t old = push(G, "attn");
  L->wq = input(G, "q.W", (uint64_t)d * d, false);
  L->wk = input(G, "k.W", (uint64_t)d * d, false);
  L->wv = input(G, "v.W", (uint64_t)d * d, false);
  L->wo = input(G, "proj.W", (uint64_t)d * d, false);
  L->q = mm(G, "q", R, d, d, NT, L->y1, L->wq);
  L->k = mm(G, "k", R, d, d, NT, L->y1, L->wk);
  L->v = mm(G, "v", R, d, d, NT, L->y1, L->wv);
  int32_t s = mm(G, "scores", R, R, d, TB, L->q, L->k);
  s = SCALE(G, "scale", t->alpha, (uint64_t)R * R, EL(s));
  L->p = softmax(G, "softmax", s, R, R);
  L->a = mm(G, "av", R, d, R, NT, L->p, L->v);
  int32_t o = mm(G, "proj", R, d, d, NT, L->a, L->wo);
  o = site(G, "drop", o, (uint64_t)R * d);
  pop(G, old);
  return o;
}

/* MLP forward on h1 (after ln2 when present): fc1, bias, gelu, fc2,
 * dropout site, residual add with bias.  Returns the new stream. */
static int32_t tf_mlp_fwd(gen *G, const tf_model *t, tf_layer *L) {
  uint32_t R = t->rows, d = t->d, f = t->f;
  size_t old = push(G, "mlp");
  L->w1 = input(G, "fc1.W", (uint64_t)d * f, false);
  int32_t b1 = input(G, "fc1.b", f, false);
  L->w2 = input(G, "fc2.W", (uint64_t)f * d, false);
  int32_t b2 = input(G, "fc2.b", d, false);
  int32_t u = mm(G, "fc1", R, f, d, NT, L->y2, L->w1);
  L->ub = PW(G, "fc1.bias", ADD, (uint64_t)R * f, EL(u), COL(b1));
  L->g = PW(G, "gelu", GELU, (uint64_t)R * f, EL(L->ub));
  int32_t w = mm(G, "fc2", R, d, f, NT, L->g, L->w2);
  w = site(G, "drop", w, (uint64_t)R * d);
  int32_t h2 = PW(G, "res", ADD, (uint64_t)R * d, EL(L->h1), EL(w), COL(b2));
  pop(G, old);
  return h2;
}

/* One pre-norm transformer block, forward. */
static void tf_fwd(gen *G, model *M, layer *Ly) {
  const tf_model *t = &M->u.tf;
  tf_layer *L = &Ly->u.tf;
  uint64_t n = (uint64_t)t->rows * t->d;
  setpfx(G, "l", Ly->l);
  L->h = M->x;
  L->y1 = Ly->level >= TF_LN1
              ? norm_fwd(G, "ln1", L->h, t->rows, t->d, true, &L->ln1)
              : L->h;
  int32_t o = tf_attn_fwd(G, t, L);
  if (Ly->level >= TF_BIAS) {
    int32_t bo = input(G, "attn.proj.b", t->d, false);
    L->h1 = PW(G, "attn.res", ADD, n, EL(L->h), EL(o), COL(bo));
  } else {
    L->h1 = PW(G, "attn.res", ADD, n, EL(L->h), EL(o));
  }
  M->x = L->h1;
  if (Ly->level >= TF_MLP) {
    L->y2 = Ly->level >= TF_LN2
                ? norm_fwd(G, "ln2", L->h1, t->rows, t->d, true, &L->ln2)
                : L->h1;
    M->x = tf_mlp_fwd(G, t, L);
  }
}

/* Final layernorm, LM head, softmax cross-entropy and the head backward. */
static void tf_top(gen *G, model *M) {
  tf_model *t = &M->u.tf;
  uint32_t R = t->rows, d = t->d, V = t->vocab;
  setpfx(G, "", -1);
  t->hf =
      M->head >= TH_LNF ? norm_fwd(G, "lnf", M->x, R, d, true, &t->lnf) : M->x;
  t->wout = input(G, "head.W", (uint64_t)d * V, false);
  int32_t logits = mm(G, "head", R, V, d, NT, t->hf, t->wout);
  int32_t p = softmax(G, "loss.softmax", logits, R, V);
  int32_t dl = ce_loss(G, p, R, V);
  output(G, mm(G, "head.dW", d, V, R, TA, t->hf, dl));
  /* A frozen embedding with no layers needs no gradient below the head. */
  if (M->n_layers > 0 || M->head >= TH_EMBED_GRAD) {
    int32_t dh = mm(G, "head.dX", R, d, V, TB, dl, t->wout);
    if (M->head >= TH_LNF)
      dh = norm_bwd(G, "lnf", dh, R, d, true, &t->lnf);
    M->dx = dh;
  }
}

/* Backward of the MLP half for the stream gradient dh2; returns dh1. */
static int32_t tf_mlp_bwd(gen *G, const tf_model *t, const layer *Ly,
                          int32_t dh2) {
  const tf_layer *L = &Ly->u.tf;
  uint32_t R = t->rows, d = t->d, f = t->f;
  size_t old = push(G, "mlp");
  output(G, RED(G, "fc2.db", SUM, d, R, TR(dh2)));
  output(G, mm(G, "fc2.dW", f, d, R, TA, L->g, dh2));
  int32_t dg = mm(G, "fc2.dX", R, f, d, TB, dh2, L->w2);
  int32_t gd = PW(G, "gelu.deriv", TANH, (uint64_t)R * f, EL(L->ub));
  int32_t dub = PW(G, "gelu.dX", MUL, (uint64_t)R * f, EL(dg), EL(gd));
  output(G, RED(G, "fc1.db", SUM, f, R, TR(dub)));
  output(G, mm(G, "fc1.dW", d, f, R, TA, L->y2, dub));
  int32_t dy = mm(G, "fc1.dX", R, d, f, TB, dub, L->w1);
  pop(G, old);
  if (Ly->level >= TF_LN2)
    dy = norm_bwd(G, "ln2", dy, R, d, true, &L->ln2);
  return PW(G, "mlp.res.dX", ADD, (uint64_t)R * d, EL(dh2), EL(dy));
}

/* Backward of the attention half for the stream gradient dh1: weight
 * gradients, softmax backward, and the gradient of the block input. */
static int32_t tf_attn_bwd(gen *G, const tf_model *t, const layer *Ly,
                           int32_t dh1) {
  const tf_layer *L = &Ly->u.tf;
  uint32_t R = t->rows, d = t->d;
  size_t old = push(G, "attn");
  if (Ly->level >= TF_BIAS)
    output(G, RED(G, "proj.db", SUM, d, R, TR(dh1)));
  output(G, mm(G, "proj.dW", d, d, R, TA, L->a, dh1));
  int32_t da = mm(G, "proj.dX", R, d, d, TB, dh1, L->wo);
  int32_t dp = mm(G, "av.dA", R, R, d, TB, da, L->v);
  int32_t dv = mm(G, "av.dB", R, d, R, TA, L->p, da);
  int32_t dot = RED(G, "softmax.ddot", SUM, R, R, EL(dp), EL(L->p));
  int32_t ds = PW(G, "softmax.sub", SUB, (uint64_t)R * R, EL(dp), ROW(dot));
  ds = PW(G, "softmax.dX", MUL, (uint64_t)R * R, EL(L->p), EL(ds));
  ds = SCALE(G, "scale.dX", t->alpha, (uint64_t)R * R, EL(ds));
  int32_t dq = mm(G, "scores.dA", R, d, R, NT, ds, L->k);
  int32_t dk = mm(G, "scores.dB", R, d, R, TA, ds, L->q);
  output(G, mm(G, "q.dW", d, d, R, TA, L->y1, dq));
  output(G, mm(G, "k.dW", d, d, R, TA, L->y1, dk));
  output(G, mm(G, "v.dW", d, d, R, TA, L->y1, dv));
  int32_t xq = mm(G, "q.dX", R, d, d, TB, dq, L->wq);
  int32_t xk = mm(G, "k.dX", R, d, d, TB, dk, L->wk);
  int32_t xv = mm(G, "v.dX", R, d, d, TB, dv, L->wv);
  int32_t dy = PW(G, "dX", ADD, (uint64_t)R * d, EL(xq), EL(xk), EL(xv));
  pop(G, old);
  if (Ly->level >= TF_LN1)
    dy = norm_bwd(G, "ln1", dy, R, d, true, &L->ln1);
  return PW(G, "attn.res.dX", ADD, (uint64_t)R * d, EL(dh1), EL(dy));
}

/* One transformer block, backward. */
static void tf_bwd(gen *G, model *M, layer *Ly) {
  setpfx(G, "bwd.l", Ly->l);
  int32_t dh = M->dx;
  if (Ly->level >= TF_MLP)
    dh = tf_mlp_bwd(G, &M->u.tf, Ly, dh);
  M->dx = tf_attn_bwd(G, &M->u.tf, Ly, dh);
}

/* Embedding gradients; the positional table's gradient is the stream
 * gradient itself (the batch is folded into the rows). */
static void tf_post(gen *G, model *M) {
  const tf_model *t = &M->u.tf;
  setpfx(G, "bwd", -1);
  if (M->head >= TH_EMBED_GRAD)
    output(G, mm(G, "embed.dW", t->vocab, t->d, t->rows, TA, t->tokens, M->dx));
  if (M->head >= TH_POS)
    output(G, M->dx);
}

/* ---- convnet --------------------------------------------------------------
 */

/* Block levels, head levels, block kinds. */
enum { CN_CONV1, CN_BN1, CN_CONV2, CN_BN2, CN_LEVELS };
enum { CH_MIN, CH_RELU, CH_CE, CH_BN, CH_LEVELS };
enum { CN_PLAIN, CN_DOWN };

/* Picks the convnet's shapes.  Activations are [channels, N*H*W]; the
 * biggest tensor (an im2col of stage 0) stays under 40 MiB. */
static void cn_dims(model *M, rng *r) {
  cn_model *c = &M->u.cn;
  c->batch = 4u << rng_below(r, 3);
  c->side = 8u << rng_below(r, 3);
  c->c0 = 8 * rng_range(r, 2, 8);
  c->classes = rng_range(r, 10, 1000);
  c->bps = rng_range(r, 1, 3);
  c->p0 = c->batch * c->side * c->side;
}

/* Stage (0..3) of block l; the stem (l < 0) is stage 0.  Stages halve the
 * side and double the channels; past stage 3 blocks repeat its shape. */
static int cn_stage(const cn_model *c, int32_t l) {
  int32_t s = l < 0 ? 0 : l / (int32_t)c->bps;
  return s > 3 ? 3 : (int)s;
}

/* Block l downsamples when its stage differs from its input's. */
static bool cn_down(const cn_model *c, int32_t l) {
  return cn_stage(c, l) != cn_stage(c, l - 1);
}

static int cn_kind(const model *M, int32_t l) {
  return cn_down(&M->u.cn, l) ? CN_DOWN : CN_PLAIN;
}

/* Patchify stem (the image tensor is already [3*4*4, N*H/4*W/4]: a 4x4
 * stride-4 conv is a plain matmul), optional norm and relu, and a site. */
static void cn_pre(gen *G, model *M) {
  cn_model *c = &M->u.cn;
  uint64_t n = (uint64_t)c->c0 * c->p0;
  setpfx(G, "", -1);
  c->image = input(G, "data.images", 48ull * c->p0, true);
  c->w0 = input(G, "stem.W", 48ull * c->c0, false);
  int32_t y = mm(G, "stem", c->c0, c->p0, 48, NT, c->w0, c->image);
  if (M->head >= CH_BN)
    y = norm_fwd(G, "stem.bn", y, c->c0, c->p0, false, &c->bn0);
  if (M->head >= CH_RELU)
    y = c->a0 = PW(G, "stem.relu", RELU, n, EL(y));
  M->x = site(G, "stem.act", y, n);
}

/* Shapes of block l: input/output channels and positions. */
static void cn_shape(const cn_model *c, int32_t l, uint32_t *ci, uint32_t *co,
                     uint32_t *pi, uint32_t *p) {
  int si = cn_stage(c, l - 1), s = cn_stage(c, l);
  *ci = c->c0 << si;
  *co = c->c0 << s;
  *pi = c->p0 >> (2 * si);
  *p = c->p0 >> (2 * s);
}

/* Second half of a residual block: im2col, conv2, bn2, shortcut (a 1x1
 * conv when downsampling), residual add, relu.  Returns the output. */
static int32_t cn_fwd2(gen *G, const cn_model *c, layer *Ly, int32_t y,
                       uint32_t ci, uint32_t co, uint32_t p) {
  cn_layer *L = &Ly->u.cn;
  uint64_t n = (uint64_t)co * p;
  L->w2 = input(G, "conv2.W", 9ull * co * co, false);
  L->cols2 = PW(G, "conv2.im2col", COPY, 9 * n, COL(y));
  int32_t y2 = mm(G, "conv2", co, p, 9 * co, NT, L->w2, L->cols2);
  if (Ly->level >= CN_BN2)
    y2 = norm_fwd(G, "bn2", y2, co, p, false, &L->bn2);
  int32_t sc = L->xp;
  if (cn_down(c, Ly->l)) {
    L->wsc = input(G, "shortcut.W", (uint64_t)co * ci, false);
    sc = mm(G, "shortcut", co, p, ci, NT, L->wsc, L->xp);
  }
  int32_t s = PW(G, "res", ADD, n, EL(y2), EL(sc));
  return L->a2 = PW(G, "relu2", RELU, n, EL(s));
}

/* One convnet block, forward: [avg-pool when downsampling], im2col (a
 * pointwise broadcast copy), conv1 as an implicit-GEMM matmul, bn1, relu,
 * a site, then the residual second half. */
static void cn_fwd(gen *G, model *M, layer *Ly) {
  const cn_model *c = &M->u.cn;
  cn_layer *L = &Ly->u.cn;
  uint32_t ci, co, pi, p;
  cn_shape(c, Ly->l, &ci, &co, &pi, &p);
  setpfx(G, "l", Ly->l);
  L->xp = M->x;
  if (cn_down(c, Ly->l))
    L->xp = RED(G, "pool", MEAN, (uint64_t)ci * p, 4, EL(M->x));
  L->w1 = input(G, "conv1.W", 9ull * co * ci, false);
  L->cols1 = PW(G, "conv1.im2col", COPY, 9ull * ci * p, COL(L->xp));
  int32_t y = mm(G, "conv1", co, p, 9 * ci, NT, L->w1, L->cols1);
  if (Ly->level >= CN_BN1)
    y = norm_fwd(G, "bn1", y, co, p, false, &L->bn1);
  L->a1 = PW(G, "relu1", RELU, (uint64_t)co * p, EL(y));
  y = site(G, "act1", L->a1, (uint64_t)co * p);
  M->x = Ly->level >= CN_CONV2 ? cn_fwd2(G, c, Ly, y, ci, co, p) : y;
}

/* Global average pool, classifier, loss (squared error at the lowest head
 * level, softmax cross-entropy above) and their backward. */
static void cn_top(gen *G, model *M) {
  const cn_model *c = &M->u.cn;
  int s = M->n_layers > 0 ? cn_stage(c, M->n_layers - 1) : 0;
  uint32_t ch = c->c0 << s, p = c->p0 >> (2 * s), N = c->batch;
  uint32_t K = c->classes;
  setpfx(G, "", -1);
  int32_t pooled = RED(G, "gap", MEAN, (uint64_t)ch * N, p / N, EL(M->x));
  int32_t wfc = input(G, "fc.W", (uint64_t)ch * K, false);
  int32_t logits = mm(G, "fc", N, K, ch, TA, pooled, wfc);
  int32_t dl;
  if (M->head >= CH_CE) {
    dl = ce_loss(G, softmax(G, "loss.softmax", logits, N, K), N, K);
  } else {
    int32_t tg = input(G, "data.targets", (uint64_t)N * K, true);
    dl = PW(G, "loss.diff", SUB, (uint64_t)N * K, EL(logits), EL(tg));
    output(G, RED(G, "loss", SUMSQ, 1, (uint64_t)N * K, EL(dl)));
    setpfx(G, "bwd", -1);
    dl = site(G, "loss.scale", dl, (uint64_t)N * K);
  }
  output(G, mm(G, "fc.dW", ch, K, N, NT, pooled, dl));
  int32_t dp = mm(G, "fc.dX", ch, N, K, TB, wfc, dl);
  /* p / N is a power of two, so 1 / (p / N) is exact. */
  M->dx = SCALE(G, "gap.dX", 1.0 / (double)(p / N), (uint64_t)ch * p, ROW(dp));
}

/* Backward of the block's second half for the output gradient d; sets *dsc
 * to the shortcut's input gradient and returns conv1's output gradient. */
static int32_t cn_bwd2(gen *G, const cn_model *c, const layer *Ly, int32_t d,
                       int32_t *dsc) {
  const cn_layer *L = &Ly->u.cn;
  uint32_t ci, co, pi, p;
  cn_shape(c, Ly->l, &ci, &co, &pi, &p);
  uint64_t n = (uint64_t)co * p;
  int32_t ds = PW(G, "relu2.dX", RELU_GRAD, n, EL(d), EL(L->a2));
  int32_t dy =
      Ly->level >= CN_BN2 ? norm_bwd(G, "bn2", ds, co, p, false, &L->bn2) : ds;
  output(G, mm(G, "conv2.dW", co, 9 * co, p, TB, dy, L->cols2));
  int32_t dc = mm(G, "conv2.dX", 9 * co, p, co, TA, L->w2, dy);
  *dsc = ds;
  if (cn_down(c, Ly->l)) {
    output(G, mm(G, "shortcut.dW", co, ci, p, TB, ds, L->xp));
    *dsc = mm(G, "shortcut.dX", ci, p, co, TA, L->wsc, ds);
  }
  /* col2im sums the 9 taps back: a reduction. */
  return RED(G, "conv2.col2im", SUM, n, 9, EL(dc));
}

/* One convnet block, backward. */
static void cn_bwd(gen *G, model *M, layer *Ly) {
  const cn_model *c = &M->u.cn;
  const cn_layer *L = &Ly->u.cn;
  uint32_t ci, co, pi, p;
  cn_shape(c, Ly->l, &ci, &co, &pi, &p);
  setpfx(G, "bwd.l", Ly->l);
  int32_t d = M->dx, dsc = -1;
  if (Ly->level >= CN_CONV2)
    d = cn_bwd2(G, c, Ly, d, &dsc);
  d = PW(G, "relu1.dX", RELU_GRAD, (uint64_t)co * p, EL(d), EL(L->a1));
  if (Ly->level >= CN_BN1)
    d = norm_bwd(G, "bn1", d, co, p, false, &L->bn1);
  output(G, mm(G, "conv1.dW", co, 9 * ci, p, TB, d, L->cols1));
  int32_t dc = mm(G, "conv1.dX", 9 * ci, p, co, TA, L->w1, d);
  d = RED(G, "conv1.col2im", SUM, (uint64_t)ci * p, 9, EL(dc));
  if (Ly->level >= CN_CONV2)
    d = PW(G, "res.dX", ADD, (uint64_t)ci * p, EL(d), EL(dsc));
  if (cn_down(c, Ly->l))
    d = SCALE(G, "pool.dX", 0.25, (uint64_t)ci * pi, ROW(d));
  M->dx = d;
}

/* Stem backward: relu, norm, and the stem weight gradient. */
static void cn_post(gen *G, model *M) {
  const cn_model *c = &M->u.cn;
  uint64_t n = (uint64_t)c->c0 * c->p0;
  setpfx(G, "bwd", -1);
  int32_t d = M->dx;
  if (M->head >= CH_RELU)
    d = PW(G, "stem.relu.dX", RELU_GRAD, n, EL(d), EL(c->a0));
  if (M->head >= CH_BN)
    d = norm_bwd(G, "stem.bn", d, c->c0, c->p0, false, &c->bn0);
  output(G, mm(G, "stem.dW", c->c0, 48, c->p0, TB, d, c->image));
}

/* ---- mlp -------------------------------------------------------------------
 */

enum { ML_PLAIN, ML_BIAS, ML_DROP, ML_LEVELS };
enum { MH_MIN, MH_BIAS, MH_LEVELS };

/* Picks the MLP's shapes (weights up to 3072 x 3072: 36 MiB). */
static void mlp_dims(model *M, rng *r) {
  mlp_model *m = &M->u.mlp;
  m->batch = 64 * rng_range(r, 1, 16);
  m->base = 128 * rng_range(r, 1, 12);
  m->in = 64 * rng_range(r, 2, 16);
  m->classes = rng_range(r, 2, 1000);
}

/* Output width of layer l (l < 0: the input features).  About one layer
 * in four is twice as wide, chosen by a hash so dry runs agree. */
static uint32_t mlp_width(const model *M, int32_t l) {
  const mlp_model *m = &M->u.mlp;
  if (l < 0)
    return m->in;
  return (hash2(M->seed, (uint64_t)l) & 3) == 0 ? 2 * m->base : m->base;
}

/* The data batch, through an input-normalization site. */
static void mlp_pre(gen *G, model *M) {
  const mlp_model *m = &M->u.mlp;
  uint64_t n = (uint64_t)m->batch * m->in;
  setpfx(G, "", -1);
  int32_t x = input(G, "data.x", n, true);
  M->x = site(G, "data.norm", x, n);
}

/* One layer forward: matmul, bias, relu, dropout-like scale, site. */
static void mlp_fwd(gen *G, model *M, layer *Ly) {
  mlp_layer *L = &Ly->u.mlp;
  uint32_t B = M->u.mlp.batch, wi = mlp_width(M, Ly->l - 1);
  uint32_t wo = mlp_width(M, Ly->l);
  uint64_t n = (uint64_t)B * wo;
  setpfx(G, "l", Ly->l);
  L->x = M->x;
  L->w = input(G, "fc.W", (uint64_t)wi * wo, false);
  int32_t z = mm(G, "fc", B, wo, wi, NT, L->x, L->w);
  if (Ly->level >= ML_BIAS) {
    int32_t b = input(G, "fc.b", wo, false);
    z = PW(G, "fc.bias", ADD, n, EL(z), COL(b));
  }
  int32_t a = L->a = PW(G, "relu", RELU, n, EL(z));
  if (Ly->level >= ML_DROP)
    a = SCALE(G, "drop", 1.25, n, EL(a));
  M->x = site(G, "drop", a, n);
}

/* Classifier head, softmax cross-entropy, and the head's weight grads.
 * The gradient below the head is computed by the top layer (see
 * mlp_bwd), so a graph without layers has no useless input gradient. */
static void mlp_top(gen *G, model *M) {
  mlp_model *m = &M->u.mlp;
  uint32_t B = m->batch, K = m->classes, w = mlp_width(M, M->n_layers - 1);
  setpfx(G, "", -1);
  int32_t x = M->x;
  int32_t wc = input(G, "head.W", (uint64_t)w * K, false);
  int32_t z = mm(G, "head", B, K, w, NT, x, wc);
  if (M->head >= MH_BIAS) {
    int32_t b = input(G, "head.b", K, false);
    z = PW(G, "head.bias", ADD, (uint64_t)B * K, EL(z), COL(b));
  }
  int32_t dl = ce_loss(G, softmax(G, "loss.softmax", z, B, K), B, K);
  output(G, mm(G, "head.dW", w, K, B, TA, x, dl));
  if (M->head >= MH_BIAS)
    output(G, RED(G, "head.db", SUM, K, B, TR(dl)));
  m->up_dz = dl;
  m->up_w = wc;
  m->up_n = K;
  m->up_l = -1;
}

/* One layer backward: first the input gradient of the module above (named
 * after that module), then relu/dropout grads and this layer's weight
 * grads; leaves this layer as "the module above" for the next one. */
static void mlp_bwd(gen *G, model *M, layer *Ly) {
  mlp_model *m = &M->u.mlp;
  const mlp_layer *L = &Ly->u.mlp;
  uint32_t B = m->batch, wi = mlp_width(M, Ly->l - 1);
  uint32_t wo = mlp_width(M, Ly->l);
  uint64_t n = (uint64_t)B * wo;
  setpfx(G, m->up_l < 0 ? "bwd.head" : "bwd.l", m->up_l);
  int32_t da = mm(G, m->up_l < 0 ? "dX" : "fc.dX", B, wo, m->up_n, TB, m->up_dz,
                  m->up_w);
  setpfx(G, "bwd.l", Ly->l);
  if (Ly->level >= ML_DROP)
    da = SCALE(G, "drop.dX", 1.25, n, EL(da));
  int32_t dz = PW(G, "relu.dX", RELU_GRAD, n, EL(da), EL(L->a));
  if (Ly->level >= ML_BIAS)
    output(G, RED(G, "fc.db", SUM, wo, B, TR(dz)));
  output(G, mm(G, "fc.dW", wi, wo, B, TA, L->x, dz));
  m->up_dz = dz;
  m->up_w = L->w;
  m->up_n = wo;
  m->up_l = Ly->l;
}

/* Nothing below the first layer: the data batch needs no gradient. */
static void mlp_post(gen *G, model *M) {
  (void)G;
  (void)M;
}

/* Indexed by fp_gen_family (the random family is built elsewhere). */
static const family families[] = {
    {TH_LEVELS, TF_LEVELS, tf_dims, zero_kind, tf_pre, tf_fwd, tf_top, tf_bwd,
     tf_post},
    {CH_LEVELS, CN_LEVELS, cn_dims, cn_kind, cn_pre, cn_fwd, cn_top, cn_bwd,
     cn_post},
    {MH_LEVELS, ML_LEVELS, mlp_dims, zero_kind, mlp_pre, mlp_fwd, mlp_top,
     mlp_bwd, mlp_post},
};

/* ---- planning the node count ----------------------------------------------
 */

#define MAX_LEVELS 8

typedef struct plan {
  int head;       /* head level */
  int32_t layers; /* number of layers */
  int last_level; /* level of the last layer; the others are full */
  int64_t extras; /* extra pointwise nodes ... */
  int64_t sites;  /* ... spread over this many sites */
} plan;

/* Node and site counts of the pieces, measured by dry runs; -1 = not yet.
 * head[h][with layers][nodes|sites], layer[kind][level][nodes|sites]. */
typedef struct costs {
  const family *F;
  const model *M;
  int64_t head[MAX_LEVELS][2][2];
  int64_t layer[2][MAX_LEVELS][2];
} costs;

/* Counts of head level h, with or without layers above it (dry run). */
static const int64_t *head_cost(costs *C, int h, bool with_layers) {
  int64_t *c = C->head[h][with_layers];
  if (c[0] < 0) {
    gen D;
    memset(&D, 0, sizeof D);
    model M = *C->M;
    M.head = h;
    M.n_layers = with_layers;
    C->F->pre(&D, &M);
    C->F->top(&D, &M);
    C->F->post(&D, &M);
    c[0] = D.nodes;
    c[1] = D.sites;
  }
  return c;
}

/* Counts of layer l at level v (dry run; cached by the layer's kind). */
static const int64_t *layer_cost(costs *C, int32_t l, int v) {
  int64_t *c = C->layer[C->F->kind(C->M, l)][v];
  if (c[0] < 0) {
    gen D;
    memset(&D, 0, sizeof D);
    model M = *C->M;
    M.n_layers = l + 1;
    layer L;
    memset(&L, 0, sizeof L);
    L.l = l;
    L.level = v;
    C->F->fwd(&D, &M, &L);
    C->F->bwd(&D, &M, &L);
    c[0] = D.nodes;
    c[1] = D.sites;
  }
  return c;
}

/* The highest level of layer l costing at most `budget` nodes, or -1. */
static int best_level(costs *C, int32_t l, int64_t budget) {
  for (int v = C->F->layer_levels - 1; v >= 0; v--)
    if (layer_cost(C, l, v)[0] <= budget)
      return v;
  return -1;
}

/* Small graphs: a minimal head, at most one layer (as rich as fits), then
 * the richest head upgrade the rest pays for.  Returns the rest. */
static int64_t plan_small(costs *C, int64_t size, plan *P) {
  int64_t rem = size - head_cost(C, 0, true)[0];
  int v = best_level(C, 0, rem);
  if (v >= 0) {
    P->layers = 1;
    P->last_level = v;
    rem -= layer_cost(C, 0, v)[0];
  } else {
    rem = size - head_cost(C, 0, false)[0];
  }
  bool wl = P->layers > 0;
  for (int h = C->F->head_levels - 1; h > 0; h--) {
    int64_t more = head_cost(C, h, wl)[0] - head_cost(C, 0, wl)[0];
    if (more <= rem) {
      P->head = h;
      rem -= more;
      break;
    }
  }
  return rem;
}

/* Picks head level, layers and the last layer's level so the count lands
 * at or just under `size`; the rest becomes extras over the sites. */
static fp_status make_plan(costs *C, int64_t size, plan *P, fp_error *err) {
  int hmax = C->F->head_levels - 1, vmax = C->F->layer_levels - 1;
  memset(P, 0, sizeof *P);
  P->last_level = vmax;
  int64_t rem;
  if (size < head_cost(C, hmax, true)[0] + layer_cost(C, 0, vmax)[0]) {
    rem = plan_small(C, size, P);
  } else {
    P->head = hmax;
    rem = size - head_cost(C, hmax, true)[0];
    while (rem >= layer_cost(C, P->layers, vmax)[0])
      rem -= layer_cost(C, P->layers++, vmax)[0];
    int v = best_level(C, P->layers, rem);
    if (v >= 0) {
      rem -= layer_cost(C, P->layers++, v)[0];
      P->last_level = v;
    }
  }
  P->sites = head_cost(C, P->head, P->layers > 0)[1];
  for (int32_t l = 0; l < P->layers; l++)
    P->sites += layer_cost(C, l, l == P->layers - 1 ? P->last_level : vmax)[1];
  P->extras = rem;
  if (rem < 0 || (rem > 0 && P->sites == 0))
    return fp_error_set(err, FP_EINTERNAL, "generate: cannot plan %lld nodes",
                        (long long)size);
  return FP_OK;
}

/* Builds the planned model: forward, loss, backward. */
static void run_model(gen *G, const family *F, model *M, layer *ls,
                      const plan *P) {
  F->pre(G, M);
  for (int32_t l = 0; l < P->layers && !G->failed; l++) {
    ls[l].l = l;
    ls[l].level = l == P->layers - 1 ? P->last_level : F->layer_levels - 1;
    F->fwd(G, M, &ls[l]);
  }
  F->top(G, M);
  for (int32_t l = P->layers; l-- > 0 && !G->failed;)
    F->bwd(G, M, &ls[l]);
  F->post(G, M);
}

/* Generates a transformer / convnet / mlp graph of exactly p->size nodes
 * into G->g. */
static fp_status build_nn(gen *G, const fp_gen_params *p) {
  const family *F = &families[p->family];
  model M;
  memset(&M, 0, sizeof M);
  M.seed = p->seed;
  rng r = {p->seed ^ (0x5eedull << (8 * p->family))};
  F->dims(&M, &r);
  costs C;
  memset(&C, 0xff, sizeof C); /* all counts -1: not measured */
  C.F = F;
  C.M = &M;
  plan P;
  if (make_plan(&C, p->size, &P, &G->e) != FP_OK) {
    G->failed = true;
    return G->e.code;
  }
  layer *ls = calloc(P.layers > 0 ? (size_t)P.layers : 1, sizeof *ls);
  if (!ls)
    return gen_fail(G, FP_ENOMEM, "out of memory");
  M.head = P.head;
  M.n_layers = P.layers;
  G->extras = P.extras;
  G->n_sites = P.sites;
  run_model(G, F, &M, ls, &P);
  free(ls);
  if (!G->failed && (G->nodes != p->size || G->sites != P.sites))
    gen_fail(G, FP_EINTERNAL, "node count does not match the plan");
  return G->failed ? G->e.code : FP_OK;
}

/* ---- random ---------------------------------------------------------------
 */

#define RING 24 /* recent tensors a new node usually reads */

typedef struct ring {
  int32_t b[RING];
  int n, next;
} ring;

typedef struct rnd {
  gen *G;
  rng r;
  uint32_t rows0, dims[4];  /* batch rows and feature widths */
  uint32_t *rows, *cols;    /* shape [rows, cols] of every buffer */
  int32_t *writer;          /* node writing each buffer, -1 for inputs */
  int32_t *nread;           /* readers of each buffer so far */
  uint8_t *kind;            /* kind of each node */
  uint64_t *numel, *rnumel; /* iteration space of each node */
  int32_t *acts;            /* the data batch and every activation */
  int32_t n_acts;
  ring act;  /* recent activations [rows, cols >= 1] */
  ring stat; /* recent per-row statistics [rows, 1] */
} rnd;

/* Where a new buffer goes: read again as an activation, as a per-row
 * statistic, or nowhere (weight-gradient-like: it becomes an output). */
enum { TO_ACT, TO_STAT, TO_NONE };

/* Adds b to a ring of recent buffers, dropping the oldest. */
static void ring_push(ring *q, int32_t b) {
  q->b[q->next] = b;
  q->next = (q->next + 1) % RING;
  if (q->n < RING)
    q->n++;
}

/* The compatibility rule (docs/cost-model.md, "Legality") on the recorded
 * iters. */
static bool rnd_compatible(const rnd *S, int32_t u, int32_t v) {
  if (S->kind[u] == FP_KIND_EXTERN || S->kind[v] == FP_KIND_EXTERN)
    return false;
  if (S->numel[u] == S->numel[v] && S->rnumel[u] == S->rnumel[v])
    return true;
  for (int i = 0; i < 2; i++) {
    int32_t p = i ? v : u, o = i ? u : v;
    if (S->kind[p] == FP_KIND_POINTWISE &&
        (S->numel[p] == S->numel[o] * S->rnumel[o] ||
         S->numel[p] == S->numel[o]))
      return true;
  }
  return false;
}

/* Records node v's output b ([rows, cols], kind k) and its reads x, y (y
 * -1 if none).  Now and then declares v unfusible with x's writer, where
 * that forbids something (the pair would be compatible otherwise). */
static void rnd_record(rnd *S, int32_t b, uint32_t rows, uint32_t cols,
                       fp_kind k, int32_t x, int32_t y, int to) {
  gen *G = S->G;
  if (b < 0)
    return;
  int32_t v = (int32_t)G->nodes - 1, w = S->writer[x];
  uint64_t out = (uint64_t)rows * cols;
  S->rows[b] = rows;
  S->cols[b] = cols;
  S->writer[b] = v;
  S->kind[v] = (uint8_t)k;
  S->numel[v] = out; /* a reduction's input x is read whole (ELEM) */
  S->rnumel[v] =
      k == FP_KIND_REDUCTION ? (uint64_t)S->rows[x] * S->cols[x] / out : 1;
  S->nread[x]++;
  if (y >= 0)
    S->nread[y]++;
  if (w >= 0 && rnd_compatible(S, w, v) && rng_below(&S->r, 32) == 0 &&
      fp_graph_add_unfusible(G->g, w, v, &G->e) != FP_OK)
    G->failed = true;
  if (to == TO_ACT) {
    S->acts[S->n_acts++] = b;
    ring_push(&S->act, b);
  } else if (to == TO_STAT) {
    ring_push(&S->stat, b);
  }
}

/* An input for the next node: usually a recent activation, sometimes any
 * earlier one (a long-lived, "saved" activation). */
static int32_t rnd_pick(rnd *S) {
  if (rng_below(&S->r, 8) == 0)
    return S->acts[rng_below(&S->r, (uint32_t)S->n_acts)];
  return S->act.b[rng_below(&S->r, (uint32_t)S->act.n)];
}

enum { SAME_NUMEL, SAME_ROWS, SAME_COLS, ROW_STAT };

/* A recent buffer other than x related to it by `rel` (ROW_STAT: a
 * statistic with one value per row of x), or -1. */
static int32_t rnd_find(rnd *S, int32_t x, int rel) {
  const ring *q = rel == ROW_STAT ? &S->stat : &S->act;
  if (q->n == 0)
    return -1;
  uint64_t nx = (uint64_t)S->rows[x] * S->cols[x];
  int start = (int)rng_below(&S->r, (uint32_t)q->n);
  for (int i = 0; i < q->n; i++) {
    int32_t y = q->b[(start + i) % q->n];
    bool ok = rel == SAME_NUMEL  ? (uint64_t)S->rows[y] * S->cols[y] == nx
              : rel == SAME_ROWS ? S->rows[y] == S->rows[x]
              : rel == SAME_COLS ? S->cols[y] == S->cols[x]
                                 : S->rows[y] == S->rows[x];
    if (y != x && ok)
      return y;
  }
  return -1;
}

/* A unary pointwise op on x; the result joins x's pool. */
static void rnd_unary(rnd *S, int32_t x, int to) {
  static const fp_op_fn fns[] = {FP_OP_RELU,  FP_OP_GELU, FP_OP_TANH,
                                 FP_OP_SCALE, FP_OP_NEG,  FP_OP_COPY};
  static const char *const names[] = {"relu",  "gelu", "tanh",
                                      "scale", "neg",  "copy"};
  uint32_t i = rng_below(&S->r, 6);
  uint64_t n = (uint64_t)S->rows[x] * S->cols[x];
  int32_t b = pwa(S->G, names[i], fns[i], 0.5, n, READS(EL(x)));
  rnd_record(S, b, S->rows[x], S->cols[x], FP_KIND_POINTWISE, x, -1, to);
}

/* A binary pointwise op: with a same-sized partner, else broadcasting a
 * per-row statistic (ROW) or a new bias parameter (COL). */
static void rnd_binary(rnd *S, int32_t x) {
  static const fp_op_fn fns[] = {FP_OP_ADD, FP_OP_MUL, FP_OP_SUB,
                                 FP_OP_RELU_GRAD};
  static const char *const names[] = {"add", "mul", "sub", "relu_grad"};
  gen *G = S->G;
  uint64_t n = (uint64_t)S->rows[x] * S->cols[x];
  uint32_t i = rng_below(&S->r, 4);
  /* One in three tries a normalization-like broadcast first. */
  int32_t y = rng_below(&S->r, 3) == 0 ? rnd_find(S, x, ROW_STAT) : -1, b;
  if (y >= 0) {
    b = pwa(G, names[i % 3], fns[i % 3], 1.0, n, READS(EL(x), ROW(y)));
  } else if ((y = rnd_find(S, x, SAME_NUMEL)) >= 0) {
    b = pwa(G, names[i], fns[i], 1.0, n, READS(EL(x), EL(y)));
  } else if ((y = rnd_find(S, x, ROW_STAT)) >= 0) {
    b = pwa(G, names[i % 3], fns[i % 3], 1.0, n, READS(EL(x), ROW(y)));
  } else {
    int32_t bias = input(G, "b", S->cols[x], false);
    b = PW(G, "bias", ADD, n, EL(x), COL(bias));
  }
  rnd_record(S, b, S->rows[x], S->cols[x], FP_KIND_POINTWISE, x, y, TO_ACT);
}

/* A reduction of x [r, c]: over columns into a per-row statistic
 * (sometimes a sum of products with a partner), or over rows
 * (bias-gradient-like, read by nobody).  False if x has one column. */
static bool rnd_reduce(rnd *S, int32_t x) {
  static const fp_op_fn fns[] = {FP_OP_SUM, FP_OP_MEAN, FP_OP_MAX, FP_OP_SUMSQ};
  static const char *const names[] = {"sum", "mean", "max", "sumsq"};
  uint32_t r = S->rows[x], c = S->cols[x];
  uint32_t mode = rng_below(&S->r, 8);
  int32_t b, y = -1;
  if (c < 2)
    return false;
  if (mode == 0) {
    b = RED(S->G, "colsum", SUM, c, r, TR(x));
    rnd_record(S, b, c, 1, FP_KIND_REDUCTION, x, -1, TO_NONE);
    return true;
  }
  if (mode == 1 && (y = rnd_find(S, x, SAME_NUMEL)) >= 0) {
    b = RED(S->G, "dot", SUM, r, c, EL(x), EL(y));
  } else {
    uint32_t i = rng_below(&S->r, 4);
    b = red(S->G, names[i], fns[i], r, c, READS(EL(x)));
  }
  rnd_record(S, b, r, 1, FP_KIND_REDUCTION, x, y, TO_STAT);
  return true;
}

/* A matmul on x [r, c]: times a new weight (x W), a weight-gradient-like
 * x^T y, or a scores-like x y^T with a recent partner.  False if x has
 * one column. */
static bool rnd_matmul(rnd *S, int32_t x) {
  gen *G = S->G;
  uint32_t r = S->rows[x], c = S->cols[x];
  uint32_t mode = rng_below(&S->r, 4);
  int32_t y, b;
  if (c < 2)
    return false;
  if (mode == 2 && (y = rnd_find(S, x, SAME_ROWS)) >= 0) {
    b = mm(G, "matmul_tn", c, S->cols[y], r, TA, x, y);
    rnd_record(S, b, c, S->cols[y], FP_KIND_EXTERN, x, y, TO_NONE);
    return true;
  }
  if (mode == 3 && (y = rnd_find(S, x, SAME_COLS)) >= 0) {
    b = mm(G, "matmul_nt", r, S->rows[y], c, TB, x, y);
    rnd_record(S, b, r, S->rows[y], FP_KIND_EXTERN, x, y, TO_ACT);
    return true;
  }
  uint32_t n = S->dims[rng_below(&S->r, 4)];
  int32_t w = input(G, "W", (uint64_t)c * n, false);
  b = mm(G, "matmul", r, n, c, NT, x, w);
  rnd_record(S, b, r, n, FP_KIND_EXTERN, x, w, TO_ACT);
  return true;
}

/* Node v: an input and an op drawn with NN-like frequencies. */
static void rnd_node(rnd *S, int32_t v) {
  setpfx(S->G, "n", v);
  uint32_t u = rng_below(&S->r, 100);
  if (u < 6 && S->stat.n > 0) {
    rnd_unary(S, S->stat.b[rng_below(&S->r, (uint32_t)S->stat.n)], TO_STAT);
    return;
  }
  int32_t x = rnd_pick(S);
  if (u < 32)
    rnd_unary(S, x, TO_ACT);
  else if (u < 57)
    rnd_binary(S, x);
  else if (u < 75 ? !rnd_reduce(S, x) : !rnd_matmul(S, x))
    rnd_unary(S, x, TO_ACT);
}

/* Allocates the per-buffer tables: at most one parameter per node, plus
 * the data batch.  Every buffer starts with no writer. */
static bool rnd_alloc(rnd *S, size_t size) {
  size_t nb = 2 * size + 2;
  S->rows = malloc(nb * sizeof *S->rows);
  S->cols = malloc(nb * sizeof *S->cols);
  S->writer = malloc(nb * sizeof *S->writer);
  S->nread = calloc(nb, sizeof *S->nread);
  S->kind = malloc(size);
  S->numel = malloc(size * sizeof *S->numel);
  S->rnumel = malloc(size * sizeof *S->rnumel);
  S->acts = malloc((size + 1) * sizeof *S->acts);
  if (!S->rows || !S->cols || !S->writer || !S->nread || !S->kind ||
      !S->numel || !S->rnumel || !S->acts)
    return false;
  memset(S->writer, 0xff, nb * sizeof *S->writer);
  return true;
}

/* Frees the tables of rnd_alloc() (also after a partial failure). */
static void rnd_free(rnd *S) {
  free(S->rows);
  free(S->cols);
  free(S->writer);
  free(S->nread);
  free(S->kind);
  free(S->numel);
  free(S->rnumel);
  free(S->acts);
}

/* Generates a random NN-like DAG of exactly p->size nodes into G->g.
 * Every node output nobody reads becomes a graph output (the DAG's
 * "weight gradients" and "loss"), so no node is dead. */
static fp_status build_random(gen *G, const fp_gen_params *p) {
  rnd S;
  memset(&S, 0, sizeof S);
  S.G = G;
  S.r.s = p->seed ^ 0x7a6d0f3ull;
  if (!rnd_alloc(&S, (size_t)p->size)) {
    rnd_free(&S);
    return gen_fail(G, FP_ENOMEM, "out of memory");
  }
  S.rows0 = 64 * rng_range(&S.r, 2, 16);
  for (int i = 0; i < 4; i++)
    S.dims[i] = 64 * rng_range(&S.r, 1, 16);
  int32_t x = input(G, "data.x", (uint64_t)S.rows0 * S.dims[0], true);
  if (x >= 0) {
    S.rows[x] = S.rows0;
    S.cols[x] = S.dims[0];
    S.acts[S.n_acts++] = x;
    ring_push(&S.act, x);
  }
  for (int32_t v = 0; v < p->size && !G->failed; v++)
    rnd_node(&S, v);
  int32_t nb = G->failed ? 0 : fp_graph_buffer_count(G->g);
  for (int32_t b = 0; b < nb && !G->failed; b++)
    if (S.writer[b] >= 0 && S.nread[b] == 0)
      output(G, b);
  rnd_free(&S);
  return G->failed ? G->e.code : FP_OK;
}

/* ---- entry point ------------------------------------------------------------
 */

fp_status fp_generate(const fp_gen_params *p, fp_graph **out, fp_error *err) {
  if (out)
    *out = NULL;
  if (!p || !out)
    return fp_error_set(err, FP_EARG, "generate: NULL argument");
  if ((unsigned)p->family >= FP_GEN_FAMILY_COUNT_)
    return fp_error_set(err, FP_EARG, "generate: unknown family %d",
                        (int)p->family);
  if (p->size < FP_GEN_MIN_SIZE || p->size > FP_GEN_MAX_SIZE)
    return fp_error_set(err, FP_EARG,
                        "generate: size %d is outside %d..%d nodes",
                        (int)p->size, FP_GEN_MIN_SIZE, FP_GEN_MAX_SIZE);
  const char *fam = family_names[p->family];
  char text[160];
  snprintf(text, sizeof text, "gen.%s.n%d.s%llu", fam, (int)p->size,
           (unsigned long long)p->seed);
  gen G;
  memset(&G, 0, sizeof G);
  G.g = fp_graph_create(text);
  if (!G.g)
    return fp_error_set(err, FP_ENOMEM, "generate: out of memory");
  snprintf(text, sizeof text, "fuseplan gen --family %s --size %d --seed %llu",
           fam, (int)p->size, (unsigned long long)p->seed);
  fp_status st = fp_graph_set_source(G.g, text, &G.e);
  if (st == FP_OK)
    st = p->family == FP_GEN_RANDOM ? build_random(&G, p) : build_nn(&G, p);
  if (st == FP_OK)
    st = fp_graph_finalize(G.g, &G.e);
  if (st != FP_OK)
    goto fail;
  *out = G.g;
  return FP_OK;
fail:
  fp_graph_destroy(G.g);
  if (err)
    *err = G.e;
  return st;
}
