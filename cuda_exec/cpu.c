/*
 * cpu.c -- the CPU reference backend.
 *
 * Group by group in plan order: the buffers a group materializes are
 * allocated from the tracking allocator before its kernel runs, and every
 * buffer whose last reader is in the group is freed after it.  A group's
 * kernel runs its nodes in program order; values it produces and consumes
 * itself live in kernel-local temporaries (the CPU's stand-in for
 * registers), outside the tracked bytes.
 *
 * Measuring, not copying the prediction: every load from a tracked buffer
 * goes through an accessor that records the highest element it touched,
 * and every store likewise; a kernel's traffic is, per distinct buffer it
 * reads and does not produce, the largest extent its loads reached, plus
 * the extent of its stores to materialized buffers.  Peak is the tracking
 * allocator's high-water mark of the declared bytes it holds.
 *
 * Every node computes the same float32 operations in the same order
 * whether fused or not, so a plan's outputs equal the eager program's
 * bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/cpu.h"
#include "cuda_exec/fx_math.h"
#include "cuda_exec/schedule.h"
#include "model/util.h"

/* exp, tanh, erf: the same code the CUDA kernels get (fx_math.h). */
FX_MATH(static)

/* ---- the tracking allocator ------------------------------------------- */

typedef struct tracker {
  unsigned char **mem; /* per buffer: storage while allocated */
  uint64_t live, peak;
} tracker;

/* Storage for `bytes` declared bytes: whole float words, at least one, so
 * that every buffer has an address and float views stay in bounds. */
static unsigned char *storage(uint64_t bytes) {
  size_t n = (size_t)((bytes + 3) / 4 * 4);
  return malloc(n ? n : 4);
}

/* Allocates buffer b and counts its declared bytes (none when it takes
 * over a storage in place); -1 when out of memory. */
static int track_alloc(tracker *tr, const fx_sched *s, int32_t b) {
  tr->mem[b] = storage(fp_graph_buffer(s->g, b)->bytes);
  if (!tr->mem[b])
    return -1;
  tr->live += fx_alloc_bytes(s, b);
  tr->peak = tr->live > tr->peak ? tr->live : tr->peak;
  return 0;
}

/* Frees buffer b and uncounts its declared bytes (none when an output
 * took its storage over). */
static void track_free(tracker *tr, const fx_sched *s, int32_t b) {
  free(tr->mem[b]);
  tr->mem[b] = NULL;
  tr->live -= fx_free_bytes(s, b);
}

/* Allocates group t's workspace (docs/cost-model.md#workspaces: the
 * temporaries its kernels hold during the call) and counts it; *mem gets
 * the storage (NULL when there is none).  -1 when out of memory. */
static int track_workspace(tracker *tr, const fx_sched *s, int32_t t,
                           unsigned char **mem) {
  uint64_t ws = fp_graph_group_workspace(s->g, s->gnodes + s->goff[t],
                                         s->goff[t + 1] - s->goff[t]);
  *mem = NULL;
  if (ws == 0)
    return 0;
  if (!(*mem = storage(ws)))
    return -1;
  tr->live += ws;
  tr->peak = tr->live > tr->peak ? tr->live : tr->peak;
  tr->live -= ws; /* freed with the kernel's call, before the frees */
  return 0;
}

/* ---- accessors that measure -------------------------------------------- */

/* One read of a node as a kernel sees it: the values, the element count,
 * how iteration element i maps to an element, and the highest element
 * loaded so far (hi, elements). */
typedef struct in_view {
  const float *p;
  uint64_t E, div; /* elements; N / E for ROW */
  int mode;        /* fp_index, AUTO resolved */
  uint64_t hi;
} in_view;

/* Element of read `a` for iteration element i = o * rnumel + r. */
static inline float ld(in_view *a, uint64_t i, uint64_t o, uint64_t r,
                       uint64_t numel) {
  uint64_t e;
  switch (a->mode) {
  case FP_INDEX_ROW:
    e = i / a->div;
    break;
  case FP_INDEX_COL:
    e = i % a->E;
    break;
  case FP_INDEX_TRANS:
    e = r * numel + o;
    break;
  default:
    e = i;
    break;
  }
  if (e >= a->hi)
    a->hi = e + 1;
  return a->p[e];
}

/* Resolves the index mode of read k of n over N iteration elements. */
static void make_view(in_view *v, const fp_node *n, int32_t k, const float *p,
                      uint64_t E, uint64_t N) {
  int mode = n->reads[k].index;
  if (mode == FP_INDEX_AUTO)
    mode = E == N ? FP_INDEX_ELEM : FP_INDEX_ROW;
  if (mode == FP_INDEX_TRANS && n->kind != FP_KIND_REDUCTION)
    mode = FP_INDEX_ELEM; /* TRANS is ELEM for pointwise nodes */
  v->p = p;
  v->E = E;
  v->div = E ? N / E : 1;
  v->mode = mode;
  v->hi = 0;
}

/* ---- op kernels (docs/ops.md) ------------------------------------------ */

/* One pointwise element. */
static float pw_value(const fp_node *n, in_view *in, uint64_t i) {
  uint64_t N = n->numel;
  float a = n->n_reads > 0 ? ld(&in[0], i, i, 0, N) : 0.0f, b;
  switch (n->op.fn) {
  case FP_OP_ADD:
    for (int32_t k = 1; k < n->n_reads; k++)
      a = a + ld(&in[k], i, i, 0, N);
    return a;
  case FP_OP_MUL:
    for (int32_t k = 1; k < n->n_reads; k++)
      a = a * ld(&in[k], i, i, 0, N);
    return a;
  case FP_OP_SUB:
    return a - ld(&in[1], i, i, 0, N);
  case FP_OP_DIV:
    return a / ld(&in[1], i, i, 0, N);
  case FP_OP_NEG:
    return -a;
  case FP_OP_SCALE:
    return (float)n->op.alpha * a;
  case FP_OP_RELU:
    return a > 0.0f ? a : 0.0f;
  case FP_OP_RELU_GRAD:
    b = ld(&in[1], i, i, 0, N);
    return b > 0.0f ? a : 0.0f;
  case FP_OP_GELU:
    return 0.5f * a * (1.0f + fx_erf(a * 0.70710678118654752f));
  case FP_OP_EXP:
    return fx_exp(a);
  case FP_OP_TANH:
    return fx_tanh(a);
  case FP_OP_RSQRT:
    return 1.0f / sqrtf(a);
  case FP_OP_FILL:
    return (float)n->op.alpha;
  default: /* COPY */
    return a;
  }
}

/* One reduction row j: the reads' product summed (or max'ed) over r, in
 * ascending r. */
static float red_value(const fp_node *n, in_view *in, uint64_t j) {
  uint64_t R = n->rnumel, M = n->numel;
  float acc = n->op.fn == FP_OP_MAX ? -INFINITY : 0.0f;
  for (uint64_t r = 0; r < R; r++) {
    uint64_t i = j * R + r;
    float x = ld(&in[0], i, j, r, M);
    if (n->op.fn == FP_OP_SUM)
      for (int32_t k = 1; k < n->n_reads; k++)
        x = x * ld(&in[k], i, j, r, M);
    if (n->op.fn == FP_OP_MAX)
      acc = x > acc ? x : acc;
    else if (n->op.fn == FP_OP_SUMSQ)
      acc = acc + x * x;
    else
      acc = acc + x;
  }
  return n->op.fn == FP_OP_MEAN ? acc / (float)R : acc;
}

/* C[m,n] = op(A) op(B), each element summed in ascending k.  The loop
 * order only changes which element is updated when, not the order of any
 * element's sum. */
static void matmul(const fp_node *n, in_view *in, float *C) {
  uint64_t M = n->op.m, N = n->op.n, K = n->op.k;
  const float *A = in[0].p, *B = in[1].p;
  bool ta = n->op.trans_a, tb = n->op.trans_b;
  memset(C, 0, (size_t)(M * N) * sizeof *C);
  for (uint64_t i = 0; i < M; i++) {
    float *c = C + i * N;
    if (tb) {
      for (uint64_t j = 0; j < N; j++) {
        float s = 0.0f;
        for (uint64_t k = 0; k < K; k++)
          s = s + (ta ? A[k * M + i] : A[i * K + k]) * B[j * K + k];
        c[j] = s;
      }
      continue;
    }
    for (uint64_t k = 0; k < K; k++) {
      float a = ta ? A[k * M + i] : A[i * K + k];
      const float *b = B + k * N;
      for (uint64_t j = 0; j < N; j++)
        c[j] = c[j] + a * b[j];
    }
  }
  /* Every element of both operands was loaded. */
  in[0].hi = M * K;
  in[1].hi = K * N;
}

/* ---- running a group --------------------------------------------------- */

/* Per-run state. */
typedef struct cpu_run {
  const fx_sched *s;
  const fp_exec_params *prm;
  tracker tr;
  unsigned char **local; /* per buffer: kernel-local storage */
  fx_reads reads;        /* what kernels loaded, counted per group */
  uint64_t write_bytes, scratch, scratch_max;
} cpu_run;

/* The storage a node of step t reads or writes for buffer b. */
static unsigned char *data_of(cpu_run *R, int32_t b) {
  return R->s->where[b] == FX_MEM ? R->tr.mem[b] : R->local[b];
}

/* Runs surrogate node v: digests exactly its per-read bytes, writes every
 * output in full. */
static void run_surrogate(cpu_run *R, int32_t t, int32_t v) {
  const fp_node *n = fp_graph_node(R->s->g, v);
  uint32_t h = fx_surrogate_seed(v);
  for (int32_t k = 0; k < n->n_reads; k++) {
    uint64_t bytes = n->reads[k].bytes;
    h = fx_digest_combine(h, fx_digest(data_of(R, n->reads[k].buffer), bytes),
                          k);
    fx_reads_add(&R->reads, R->s, t, n->reads[k].buffer, bytes);
  }
  for (int32_t w = 0; w < n->n_writes; w++) {
    int32_t b = n->writes[w];
    uint64_t bytes = fp_graph_buffer(R->s->g, b)->bytes;
    fx_surrogate_write(data_of(R, b), bytes, h, w);
    if (R->s->where[b] == FX_MEM)
      R->write_bytes += bytes;
  }
}

/* Runs op node v of step t: the result goes to its first write, then is
 * copied to the others (every write receives the result). */
static int run_op(cpu_run *R, int32_t t, int32_t v) {
  const fp_node *n = fp_graph_node(R->s->g, v);
  in_view stackv[4], *in = stackv;
  if (n->n_reads > 4 && !(in = malloc((size_t)n->n_reads * sizeof *in)))
    return -1;
  uint64_t N = n->kind == FP_KIND_EXTERN ? 0 : n->numel * n->rnumel;
  for (int32_t k = 0; k < n->n_reads; k++) {
    int32_t b = n->reads[k].buffer;
    make_view(&in[k], n, k, (const float *)(void *)data_of(R, b),
              fp_graph_buffer(R->s->g, b)->bytes / 4, N);
  }
  float *out = (float *)(void *)data_of(R, n->writes[0]);
  uint64_t count;
  if (n->op.fn == FP_OP_MATMUL) {
    matmul(n, in, out);
    count = (uint64_t)n->op.m * n->op.n;
  } else {
    count = n->numel;
    for (uint64_t i = 0; i < count; i++)
      out[i] = n->kind == FP_KIND_REDUCTION ? red_value(n, in, i)
                                            : pw_value(n, in, i);
  }
  for (int32_t k = 0; k < n->n_reads; k++)
    fx_reads_add(&R->reads, R->s, t, n->reads[k].buffer, in[k].hi * 4);
  for (int32_t w = 0; w < n->n_writes; w++) {
    int32_t b = n->writes[w];
    if (w > 0)
      memcpy(data_of(R, b), out, (size_t)count * 4);
    if (R->s->where[b] == FX_MEM)
      R->write_bytes += count * 4;
  }
  if (in != stackv)
    free(in);
  return 0;
}

/* Allocates the kernel-local buffers step t produces. */
static int local_alloc(cpu_run *R, int32_t t) {
  const fx_sched *s = R->s;
  R->scratch = 0;
  for (int32_t i = s->goff[t]; i < s->goff[t + 1]; i++) {
    const fp_node *n = fp_graph_node(s->g, s->gnodes[i]);
    for (int32_t w = 0; w < n->n_writes; w++) {
      int32_t b = n->writes[w];
      if (s->where[b] != FX_LOCAL)
        continue;
      uint64_t bytes = fp_graph_buffer(s->g, b)->bytes;
      if (!(R->local[b] = storage(bytes)))
        return -1;
      R->scratch += bytes;
    }
  }
  if (R->scratch > R->scratch_max)
    R->scratch_max = R->scratch;
  return 0;
}

/* Frees the kernel-local buffers of step t. */
static void local_free(cpu_run *R, int32_t t) {
  const fx_sched *s = R->s;
  for (int32_t i = s->goff[t]; i < s->goff[t + 1]; i++) {
    const fp_node *n = fp_graph_node(s->g, s->gnodes[i]);
    for (int32_t w = 0; w < n->n_writes; w++) {
      free(R->local[n->writes[w]]);
      R->local[n->writes[w]] = NULL;
    }
  }
}

/* Runs step t: allocations, the kernel (timed), frees. */
static int run_step(cpu_run *R, int32_t t, double *dt) {
  const fx_sched *s = R->s;
  for (int32_t i = s->aoff[t]; i < s->aoff[t + 1]; i++) {
    int32_t b = s->alloc_list[i];
    if (track_alloc(&R->tr, s, b) != 0)
      return -1;
    if (s->alloc_at[b] < 0)
      fx_fill_input(R->tr.mem[b], fp_graph_buffer(s->g, b)->bytes, R->prm->seed,
                    b);
  }
  unsigned char *ws;
  if (local_alloc(R, t) != 0 || track_workspace(&R->tr, s, t, &ws) != 0)
    return -1;
  double t0 = fp_clock_now();
  for (int32_t i = s->goff[t]; i < s->goff[t + 1]; i++) {
    int32_t v = s->gnodes[i];
    if (fx_is_surrogate(fp_graph_node(s->g, v)))
      run_surrogate(R, t, v);
    else if (run_op(R, t, v) != 0) {
      free(ws);
      return -1;
    }
  }
  *dt = fp_clock_now() - t0;
  free(ws);
  local_free(R, t);
  for (int32_t i = s->foff[t]; i < s->foff[t + 1]; i++)
    track_free(&R->tr, s, s->free_list[i]);
  return 0;
}

/* Copies the graph's outputs out of the tracker (they are never freed
 * during the run). */
static int keep_outputs_of(cpu_run *R, fx_result *r) {
  const fp_graph *g = R->s->g;
  int32_t n = fp_graph_output_count(g);
  r->outputs = calloc((size_t)n + 1, sizeof *r->outputs);
  if (!r->outputs)
    return -1;
  for (int32_t i = 0; i < n; i++) {
    int32_t b = fp_graph_output(g, i);
    uint64_t bytes = fp_graph_buffer(g, b)->bytes;
    if (!(r->outputs[i] = storage(bytes)))
      return -1;
    memcpy(r->outputs[i], R->tr.mem[b], (size_t)bytes);
  }
  return 0;
}

fp_status fx_cpu_run(const fx_sched *s, const fp_exec_params *prm,
                     bool keep_outputs, fx_result *r, fp_error *err) {
  cpu_run R;
  size_t nb = (size_t)s->buffers + 1;
  memset(&R, 0, sizeof R);
  memset(r, 0, sizeof *r);
  R.s = s;
  R.prm = prm;
  /* The bytes live outside the graph belong to another owner (the caller's
   * parameters, autograd's saved tensors): counted, never allocated. */
  R.tr.live = R.tr.peak = fp_graph_outside_live_bytes(s->g);
  R.tr.mem = calloc(nb, sizeof *R.tr.mem);
  R.local = calloc(nb, sizeof *R.local);
  r->group_time_s = calloc((size_t)s->steps + 1, sizeof *r->group_time_s);
  fp_status st = FP_OK;
  if (fx_reads_init(&R.reads, s->buffers) != 0 || !R.tr.mem || !R.local ||
      !r->group_time_s)
    goto fail;
  /* With no steps, the inputs are still allocated (the resident bytes are
   * the peak of an empty program) and filled: an input that is an output
   * is compared with the eager run's. */
  if (s->steps == 0)
    for (int32_t i = s->aoff[0]; i < s->aoff[1]; i++) {
      int32_t b = s->alloc_list[i];
      if (track_alloc(&R.tr, s, b) != 0)
        goto fail;
      fx_fill_input(R.tr.mem[b], fp_graph_buffer(s->g, b)->bytes, prm->seed, b);
    }
  for (int32_t t = 0; t < s->steps; t++) {
    if (run_step(&R, t, &r->group_time_s[t]) != 0)
      goto fail;
    r->time_s += r->group_time_s[t];
  }
  if (keep_outputs && keep_outputs_of(&R, r) != 0)
    goto fail;
  r->peak_bytes = R.tr.peak;
  r->read_bytes = R.reads.total;
  r->write_bytes = R.write_bytes;
  r->scratch_bytes = R.scratch_max;
  r->launches = s->steps;
  goto done;
fail:
  st = fp_error_set(err, FP_ENOMEM, "exec: out of memory");
done:
  for (int32_t b = 0; R.tr.mem && b < s->buffers; b++)
    free(R.tr.mem[b]);
  for (int32_t b = 0; R.local && b < s->buffers; b++)
    free(R.local[b]);
  free(R.tr.mem);
  free(R.local);
  fx_reads_free(&R.reads);
  return st;
}
