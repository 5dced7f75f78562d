/*
 * cuda_gen.c -- CUDA C source for one group of a plan: one kernel per
 * group, plain C text, compiled later by NVRTC (cuda.c).  No CUDA headers
 * here, so this file is built and tested everywhere.
 *
 * A group's nodes (in program order) are cut into phases, each a
 * grid-stride loop over independent work items, and the kernel takes the
 * phase as its first argument; the host launches it once per phase, so a
 * launch boundary is the only grid-wide barrier (no cooperative launch).
 *   ELEM  pointwise nodes over N elements, one item per element;
 *   ROW   reductions over [M, R], one item per output row (its r-loop in
 *         ascending r, as the CPU sums), plus pointwise nodes over M;
 *   MM    a matmul, one item per output element (ascending k);
 *   SD/SW a surrogate: digest its reads (atomic sums), then write.
 * Inside a phase a value a later node of the phase consumes at the same
 * item stays in a register.  A value that crosses phases is read back
 * from its materialized buffer or, when it is not materialized, from a
 * scratch slot (global memory outside the tracked peak, reported as
 * scratch).  Float semantics follow cpu.c operation by operation, with
 * the same exp/tanh/erf (fx_math.h); NVRTC runs with --fmad=false so no
 * multiply-add is contracted: the outputs should equal the CPU's bit for
 * bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/cuda_gen.h"
#include "cuda_exec/fx_math.h"
#include "cuda_exec/schedule.h"

enum { PH_ELEM, PH_ROW, PH_MM, PH_SD, PH_SW };

typedef struct gen_ctx {
  const fx_sched *s;
  const fp_graph *g;
  int32_t t, n; /* step, nodes in the group */
  const int32_t *nodes;
  int32_t *phase;    /* per group position */
  int32_t *ptype;    /* per phase */
  uint64_t *pm, *pr; /* per phase: items (N, M, M*N, bytes) and R */
  int32_t n_phase;
  int32_t *bufs; /* distinct buffers the group touches */
  int32_t n_bufs;
  int32_t *prod;  /* per bufs entry: producing position, -1 external */
  int32_t *arg;   /* per bufs entry: kernel argument, -1 none */
  bool *scratch;  /* per bufs entry: a LOCAL value staged in scratch */
  int32_t *dslot; /* per position: digest scratch argument, -1 */
  FILE *f;
} gen_ctx;

/* Index of buffer b in the context's list (adding it), or -1. */
static int32_t buf_slot(gen_ctx *C, int32_t b) {
  for (int32_t i = 0; i < C->n_bufs; i++)
    if (C->bufs[i] == b)
      return i;
  C->bufs[C->n_bufs] = b;
  C->prod[C->n_bufs] = -1;
  C->arg[C->n_bufs] = -1;
  C->scratch[C->n_bufs] = false;
  return C->n_bufs++;
}

/* The node at group position pos. */
static const fp_node *node_at(const gen_ctx *C, int32_t pos) {
  return fp_graph_node(C->g, C->nodes[pos]);
}

/* Whether read k of reduction n over [M, R], of a value held per row in
 * the same ROW phase, reads that row's value. */
static bool row_local_read(const fp_node *n, int32_t k) {
  int ix = n->reads[k].index;
  return n->rnumel == 1 || ix == FP_INDEX_ROW || ix == FP_INDEX_AUTO;
}

/* Whether node at `pos` may join the current phase. */
static bool joins(gen_ctx *C, int32_t pos) {
  const fp_node *n = node_at(C, pos);
  int32_t cur = C->n_phase - 1;
  if (cur < 0 || fx_is_surrogate(n) || n->kind == FP_KIND_EXTERN)
    return false;
  int ty = C->ptype[cur];
  if (n->kind == FP_KIND_POINTWISE)
    return (ty == PH_ELEM || ty == PH_ROW) && C->pm[cur] == n->numel;
  if (ty != PH_ROW || C->pm[cur] != n->numel || C->pr[cur] != n->rnumel)
    return false;
  for (int32_t k = 0; k < n->n_reads; k++) {
    int32_t p = C->prod[buf_slot(C, n->reads[k].buffer)];
    if (p >= 0 && C->phase[p] == cur && !row_local_read(n, k))
      return false;
  }
  return true;
}

/* Opens a new phase of type ty. */
static void open_phase(gen_ctx *C, int ty, uint64_t m, uint64_t r) {
  C->ptype[C->n_phase] = ty;
  C->pm[C->n_phase] = m;
  C->pr[C->n_phase] = r;
  C->n_phase++;
}

/* Largest per-read / write byte count of a surrogate (>= 1). */
static uint64_t sur_items(const fp_graph *g, const fp_node *n, bool reads) {
  uint64_t m = 1;
  for (int32_t k = 0; reads && k < n->n_reads; k++)
    m = n->reads[k].bytes > m ? n->reads[k].bytes : m;
  for (int32_t w = 0; !reads && w < n->n_writes; w++) {
    uint64_t words = (fp_graph_buffer(g, n->writes[w])->bytes + 3) / 4;
    m = words > m ? words : m;
  }
  return m;
}

/* Cuts the group into phases and decides which values need scratch. */
static void plan_phases(gen_ctx *C) {
  for (int32_t pos = 0; pos < C->n; pos++) {
    const fp_node *n = node_at(C, pos);
    if (!joins(C, pos)) {
      if (fx_is_surrogate(n)) {
        open_phase(C, PH_SD, sur_items(C->g, n, true), 0);
        open_phase(C, PH_SW, sur_items(C->g, n, false), 0);
      } else if (n->op.fn == FP_OP_MATMUL) {
        open_phase(C, PH_MM, (uint64_t)n->op.m * n->op.n, 0);
      } else if (n->kind == FP_KIND_REDUCTION) {
        open_phase(C, PH_ROW, n->numel, n->rnumel);
      } else {
        open_phase(C, PH_ELEM, n->numel, 1);
      }
    }
    C->phase[pos] = C->n_phase - 1;
    for (int32_t k = 0; k < n->n_reads; k++) {
      int32_t i = buf_slot(C, n->reads[k].buffer);
      int32_t p = C->prod[i];
      /* A surrogate's digest phase is its own: its reads always come
       * from memory. */
      bool same = p >= 0 && C->phase[p] == C->phase[pos] &&
                  !fx_is_surrogate(n) && !fx_is_surrogate(node_at(C, p));
      if (p >= 0 && !same && C->s->where[C->bufs[i]] == FX_LOCAL)
        C->scratch[i] = true;
    }
    for (int32_t w = 0; w < n->n_writes; w++)
      C->prod[buf_slot(C, n->writes[w])] = pos;
  }
}

/* Kernel arguments: every tracked buffer the group touches, then the
 * scratch slots (staged values, surrogate digests). */
static int assign_args(gen_ctx *C, fx_kernel *k) {
  int32_t n_sur = 0;
  for (int32_t pos = 0; pos < C->n; pos++)
    n_sur += fx_is_surrogate(node_at(C, pos));
  k->arg_buf =
      malloc(((size_t)C->n_bufs + (size_t)n_sur + 1) * sizeof(int32_t));
  k->scratch_bytes =
      malloc(((size_t)C->n_bufs + (size_t)n_sur + 1) * sizeof(uint64_t));
  if (!k->arg_buf || !k->scratch_bytes)
    return -1;
  for (int32_t i = 0; i < C->n_bufs; i++)
    if (C->s->where[C->bufs[i]] == FX_MEM) {
      C->arg[i] = k->n_args;
      k->arg_buf[k->n_args++] = C->bufs[i];
    }
  for (int32_t i = 0; i < C->n_bufs; i++)
    if (C->scratch[i]) {
      C->arg[i] = k->n_args;
      k->scratch_bytes[k->n_scratch] = fp_graph_buffer(C->g, C->bufs[i])->bytes;
      k->arg_buf[k->n_args++] = -1 - k->n_scratch++;
    }
  for (int32_t pos = 0; pos < C->n; pos++) {
    const fp_node *n = node_at(C, pos);
    C->dslot[pos] = -1;
    if (!fx_is_surrogate(n))
      continue;
    C->dslot[pos] = k->n_args;
    k->scratch_bytes[k->n_scratch] = 4 * (uint64_t)(n->n_reads + 1);
    k->arg_buf[k->n_args++] = -1 - k->n_scratch++;
  }
  return 0;
}

/* ---- emitting ------------------------------------------------------------ */

static const char prelude[] =
    "typedef unsigned long long u64;\n"
    "typedef unsigned int u32;\n"
    "__device__ __forceinline__ u32 fx_mix32(u32 x) {\n"
    "  x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u;\n"
    "  x ^= x >> 16; return x;\n}\n"
    "__device__ __forceinline__ float fx_unit(u32 u) {\n"
    "  return (float)((int)(u >> 8) - (1 << 23)) * (1.0f / 8388608.0f);\n}\n"
    "#define FX_LOOP(i, n) for (u64 i = (u64)blockIdx.x * blockDim.x + "
    "threadIdx.x; i < (n); i += (u64)gridDim.x * "
    "blockDim.x)\n" FX_MATH_CUDA_SRC;

/* The C expression of read k of node `pos` at item variables i (element),
 * o (row), r (reduction index); registers when the value is in-phase. */
static void emit_read(gen_ctx *C, int32_t pos, int32_t k, const char *i,
                      uint64_t numel, uint64_t N) {
  const fp_node *n = node_at(C, pos);
  int32_t slot = buf_slot(C, n->reads[k].buffer);
  int32_t p = C->prod[slot];
  if (p >= 0 && p < pos && C->phase[p] == C->phase[pos]) {
    fprintf(C->f, "v%d", (int)p);
    return;
  }
  uint64_t E = fp_graph_buffer(C->g, n->reads[k].buffer)->bytes / 4;
  int ix = n->reads[k].index;
  if (ix == FP_INDEX_AUTO)
    ix = E == N ? FP_INDEX_ELEM : FP_INDEX_ROW;
  if (ix == FP_INDEX_TRANS && n->kind != FP_KIND_REDUCTION)
    ix = FP_INDEX_ELEM;
  fprintf(C->f, "((const float *)a%d)[", (int)C->arg[slot]);
  if (ix == FP_INDEX_ROW)
    fprintf(C->f, "%s / %lluull]", i, (unsigned long long)(N / E));
  else if (ix == FP_INDEX_COL)
    fprintf(C->f, "%s %% %lluull]", i, (unsigned long long)E);
  else if (ix == FP_INDEX_TRANS)
    fprintf(C->f, "r * %lluull + o]", (unsigned long long)numel);
  else
    fprintf(C->f, "%s]", i);
}

/* Stores register v<pos> to every write that needs memory, at item `i`. */
static void emit_stores(gen_ctx *C, int32_t pos, const char *i) {
  const fp_node *n = node_at(C, pos);
  for (int32_t w = 0; w < n->n_writes; w++) {
    int32_t slot = buf_slot(C, n->writes[w]);
    if (C->arg[slot] >= 0)
      fprintf(C->f, "    ((float *)a%d)[%s] = v%d;\n", (int)C->arg[slot], i,
              (int)pos);
  }
}

/* A float constant, bit-exact. */
static void emit_const(FILE *f, double alpha) {
  float x = (float)alpha;
  uint32_t u;
  memcpy(&u, &x, 4);
  fprintf(f, "__int_as_float(0x%08x)", (unsigned)u);
}

/* The statements that turn `a` (read 0) and b1.. (the other reads) into
 * the result of pointwise op n, as cpu.c computes it. */
static void emit_pointwise_op(FILE *f, const fp_node *n) {
  switch (n->op.fn) {
  case FP_OP_ADD:
  case FP_OP_MUL:
    for (int32_t k = 1; k < n->n_reads; k++)
      fprintf(f, "      a = a %c b%d;\n", n->op.fn == FP_OP_ADD ? '+' : '*',
              (int)k);
    break;
  case FP_OP_SUB:
    fputs("      a = a - b1;\n", f);
    break;
  case FP_OP_DIV:
    fputs("      a = a / b1;\n", f);
    break;
  case FP_OP_NEG:
    fputs("      a = -a;\n", f);
    break;
  case FP_OP_SCALE:
  case FP_OP_FILL:
    fputs("      a = ", f);
    emit_const(f, n->op.alpha);
    fputs(n->op.fn == FP_OP_SCALE ? " * a;\n" : ";\n", f);
    break;
  case FP_OP_RELU:
    fputs("      a = a > 0.0f ? a : 0.0f;\n", f);
    break;
  case FP_OP_RELU_GRAD:
    fputs("      a = b1 > 0.0f ? a : 0.0f;\n", f);
    break;
  case FP_OP_GELU:
    fputs("      a = 0.5f * a * (1.0f + fx_erf(a * 0.70710678118654752f));\n",
          f);
    break;
  case FP_OP_EXP:
    fputs("      a = fx_exp(a);\n", f);
    break;
  case FP_OP_TANH:
    fputs("      a = fx_tanh(a);\n", f);
    break;
  case FP_OP_RSQRT:
    fputs("      a = 1.0f / sqrtf(a);\n", f);
    break;
  default: /* COPY */
    break;
  }
}

/* v<pos> = a pointwise op at element variable i over N elements. */
static void emit_pointwise(gen_ctx *C, int32_t pos, const char *i) {
  const fp_node *n = node_at(C, pos);
  uint64_t N = n->numel;
  FILE *f = C->f;
  fprintf(f, "    float v%d;\n    { float a = ", (int)pos);
  if (n->n_reads > 0)
    emit_read(C, pos, 0, i, N, N);
  else
    fputs("0.0f", f);
  fputs(";\n", f);
  for (int32_t k = 1; k < n->n_reads; k++) {
    fprintf(f, "      float b%d = ", (int)k);
    emit_read(C, pos, k, i, N, N);
    fputs(";\n", f);
  }
  emit_pointwise_op(f, n);
  fprintf(f, "      v%d = a; }\n", (int)pos);
  emit_stores(C, pos, i);
}

/* v<pos> = a reduction of row o, its r-loop in ascending r. */
static void emit_reduction(gen_ctx *C, int32_t pos) {
  const fp_node *n = node_at(C, pos);
  uint64_t M = n->numel, R = n->rnumel, N = M * R;
  FILE *f = C->f;
  fprintf(f, "    float v%d;\n    { float acc = %s;\n", (int)pos,
          n->op.fn == FP_OP_MAX ? "-__int_as_float(0x7f800000)" : "0.0f");
  fprintf(f,
          "      for (u64 r = 0; r < %lluull; r++) {\n"
          "        u64 i = o * %lluull + r;\n        float x = ",
          (unsigned long long)R, (unsigned long long)R);
  emit_read(C, pos, 0, "i", M, N);
  fputs(";\n", f);
  for (int32_t k = 1; n->op.fn == FP_OP_SUM && k < n->n_reads; k++) {
    fputs("        x = x * ", f);
    emit_read(C, pos, k, "i", M, N);
    fputs(";\n", f);
  }
  fputs(n->op.fn == FP_OP_MAX     ? "        acc = x > acc ? x : acc;\n"
        : n->op.fn == FP_OP_SUMSQ ? "        acc = acc + x * x;\n"
                                  : "        acc = acc + x;\n",
        f);
  if (n->op.fn == FP_OP_MEAN)
    fprintf(f, "      }\n      v%d = acc / (float)%lluull; }\n", (int)pos,
            (unsigned long long)R);
  else
    fprintf(f, "      }\n      v%d = acc; }\n", (int)pos);
  emit_stores(C, pos, "o");
}

/* A matmul phase: one output element per item. */
static void emit_matmul(gen_ctx *C, int32_t pos) {
  const fp_node *n = node_at(C, pos);
  unsigned long long M = n->op.m, N = n->op.n, K = n->op.k;
  int a = C->arg[buf_slot(C, n->reads[0].buffer)];
  int b = C->arg[buf_slot(C, n->reads[1].buffer)];
  FILE *f = C->f;
  fprintf(
      f,
      "  FX_LOOP(e, %lluull) {\n    u64 i = e / %lluull, j = e %% %lluull;\n"
      "    float s = 0.0f;\n    for (u64 k = 0; k < %lluull; k++)\n",
      M * N, N, N, K);
  fprintf(f, "      s = s + ((const float *)a%d)[", a);
  if (n->op.trans_a)
    fprintf(f, "k * %lluull + i", M);
  else
    fprintf(f, "i * %lluull + k", K);
  fprintf(f, "] * ((const float *)a%d)[", b);
  if (n->op.trans_b)
    fprintf(f, "j * %lluull + k];\n", K);
  else
    fprintf(f, "k * %lluull + j];\n", N);
  fprintf(f, "    float v%d = s;\n", (int)pos);
  emit_stores(C, pos, "e");
  fputs("  }\n", f);
}

/* The two phases of a surrogate: digest its reads into its slot, then
 * write its outputs from the combined digest. */
static void emit_surrogate(gen_ctx *C, int32_t pos, bool digest) {
  const fp_node *n = node_at(C, pos);
  FILE *f = C->f;
  int d = C->dslot[pos];
  if (digest) {
    for (int32_t k = 0; k < n->n_reads; k++) {
      int src = C->arg[buf_slot(C, n->reads[k].buffer)];
      fprintf(f,
              "  { u32 h = 0; FX_LOOP(q, %lluull) h += ((u32)a%d[q] + 1u) * "
              "(2u * (u32)q + 1u);\n    atomicAdd((u32 *)a%d + %d, h); }\n",
              (unsigned long long)n->reads[k].bytes, src, d, (int)k);
    }
    return;
  }
  fprintf(f, "  u32 h = 0x%08xu;\n",
          (unsigned)fx_surrogate_seed(C->nodes[pos]));
  for (int32_t k = 0; k < n->n_reads; k++)
    fprintf(f, "  h = fx_mix32(h ^ (((u32 *)a%d)[%d] + 0x9e3779b9u * %uu));\n",
            d, (int)k, (unsigned)(k + 1));
  for (int32_t w = 0; w < n->n_writes; w++) {
    int dst = C->arg[buf_slot(C, n->writes[w])];
    unsigned long long bytes = fp_graph_buffer(C->g, n->writes[w])->bytes;
    if (dst < 0)
      continue;
    fprintf(f,
            "  { u32 base = fx_mix32(h + 0x85ebca6bu * %uu);\n"
            "    FX_LOOP(q, %lluull) ((float *)a%d)[q] = "
            "fx_unit(fx_mix32(base ^ (u32)q * 0x9e3779b9u));\n",
            (unsigned)(w + 1), bytes / 4, dst);
    fprintf(f,
            "    if (blockIdx.x == 0 && threadIdx.x == 0)\n"
            "      for (u64 q = %lluull; q < %lluull; q++) a%d[q] = "
            "(unsigned char)fx_mix32(base ^ (u32)q * 0x9e3779b9u); }\n",
            bytes / 4 * 4, bytes, dst);
  }
}

/* The body of phase ph. */
static void emit_phase(gen_ctx *C, int32_t ph) {
  int ty = C->ptype[ph];
  fprintf(C->f, "  if (phase == %d) {\n", (int)ph);
  if (ty == PH_ELEM || ty == PH_ROW)
    fprintf(C->f, "  FX_LOOP(%s, %lluull) {\n", ty == PH_ELEM ? "i" : "o",
            (unsigned long long)C->pm[ph]);
  /* A surrogate's position is recorded in its write phase. */
  int32_t want = ty == PH_SD ? ph + 1 : ph;
  for (int32_t pos = 0; pos < C->n; pos++) {
    if (C->phase[pos] != want)
      continue;
    const fp_node *n = node_at(C, pos);
    if (ty == PH_SD || ty == PH_SW)
      emit_surrogate(C, pos, ty == PH_SD);
    else if (ty == PH_MM)
      emit_matmul(C, pos);
    else if (n->kind == FP_KIND_REDUCTION)
      emit_reduction(C, pos);
    else
      emit_pointwise(C, pos, ty == PH_ELEM ? "i" : "o");
  }
  if (ty == PH_ELEM || ty == PH_ROW)
    fputs("  }\n", C->f);
  fputs("  return;\n  }\n", C->f);
}

const char *fx_cuda_prelude(void) {
  return prelude;
}

/* Writes the kernel's source (after the shared prelude). */
static void emit_kernel(gen_ctx *C, fx_kernel *k) {
  fprintf(C->f, "extern \"C\" __global__ void %s(int phase", k->name);
  for (int32_t a = 0; a < k->n_args; a++)
    fprintf(C->f, ", unsigned char *__restrict__ a%d", (int)a);
  fputs(") {\n", C->f);
  for (int32_t ph = 0; ph < C->n_phase; ph++)
    emit_phase(C, ph);
  fputs("}\n", C->f);
}

/* Fills the launch list: one launch per phase, in order. */
static int fill_launches(gen_ctx *C, fx_kernel *k) {
  k->launch = malloc(((size_t)C->n_phase + 1) * sizeof *k->launch);
  if (!k->launch)
    return -1;
  for (int32_t ph = 0; ph < C->n_phase; ph++) {
    k->launch[ph].phase = ph;
    k->launch[ph].threads = C->pm[ph] ? C->pm[ph] : 1;
  }
  k->n_launch = C->n_phase;
  return 0;
}

/* Frees the context's arrays (a partly allocated one too). */
static void ctx_free(gen_ctx *C) {
  free(C->phase);
  free(C->ptype);
  free(C->pm);
  free(C->pr);
  free(C->bufs);
  free(C->prod);
  free(C->arg);
  free(C->scratch);
  free(C->dslot);
}

/* Allocates the context of group t. */
static int ctx_alloc(gen_ctx *C, const fx_sched *s, int32_t t) {
  memset(C, 0, sizeof *C);
  C->s = s;
  C->g = s->g;
  C->t = t;
  C->nodes = s->gnodes + s->goff[t];
  C->n = s->goff[t + 1] - s->goff[t];
  size_t nb = 1, np = 2 * (size_t)C->n + 1;
  for (int32_t pos = 0; pos < C->n; pos++)
    nb += (size_t)node_at(C, pos)->n_reads + (size_t)node_at(C, pos)->n_writes;
  C->phase = malloc(np * sizeof *C->phase);
  C->ptype = malloc(np * sizeof *C->ptype);
  C->pm = malloc(np * sizeof *C->pm);
  C->pr = malloc(np * sizeof *C->pr);
  C->dslot = malloc(np * sizeof *C->dslot);
  C->bufs = malloc(nb * sizeof *C->bufs);
  C->prod = malloc(nb * sizeof *C->prod);
  C->arg = malloc(nb * sizeof *C->arg);
  C->scratch = malloc(nb * sizeof *C->scratch);
  return C->phase && C->ptype && C->pm && C->pr && C->dslot && C->bufs &&
                 C->prod && C->arg && C->scratch
             ? 0
             : -1;
}

fp_status fx_gen_kernel(const fx_sched *s, int32_t t, fx_kernel *k,
                        fp_error *err) {
  gen_ctx C;
  size_t len = 0;
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "fp_g%d", (int)t);
  if (ctx_alloc(&C, s, t) != 0)
    goto fail;
  plan_phases(&C);
  if (assign_args(&C, k) != 0 || fill_launches(&C, k) != 0)
    goto fail;
  C.f = open_memstream(&k->src, &len);
  if (!C.f)
    goto fail;
  emit_kernel(&C, k);
  if (fclose(C.f) != 0 || !k->src)
    goto fail;
  ctx_free(&C);
  return FP_OK;
fail:
  ctx_free(&C);
  fx_kernel_free(k);
  return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
}

void fx_kernel_free(fx_kernel *k) {
  free(k->src);
  free(k->launch);
  free(k->arg_buf);
  free(k->scratch_bytes);
  memset(k, 0, sizeof *k);
}

/* What the group's kernel loads and stores, counted from the same rules
 * the generator follows at its load sites: an op read loads its whole
 * buffer (every element feeds some item), a surrogate read exactly its
 * per-read bytes; each buffer the group reads and does not produce counts
 * once, at its largest extent; stores count the materialized writes. */
void fx_kernel_traffic(const fx_sched *s, int32_t t, fx_reads *reads,
                       uint64_t *write_bytes) {
  for (int32_t i = s->goff[t]; i < s->goff[t + 1]; i++) {
    const fp_node *n = fp_graph_node(s->g, s->gnodes[i]);
    for (int32_t k = 0; k < n->n_reads; k++) {
      int32_t b = n->reads[k].buffer;
      fx_reads_add(reads, s, t, b,
                   fx_is_surrogate(n)
                       ? n->reads[k].bytes
                       : fp_graph_buffer(s->g, b)->bytes / 4 * 4);
    }
    for (int32_t w = 0; w < n->n_writes; w++)
      if (s->where[n->writes[w]] == FX_MEM)
        *write_bytes += fp_graph_buffer(s->g, n->writes[w])->bytes;
  }
}
