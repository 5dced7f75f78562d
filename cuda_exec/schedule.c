/*
 * schedule.c -- the executor's lower layer, shared by the driver
 * (driver.c) and the backends (cpu.c, cuda.c, cuda_gen.c): parameters,
 * the schedule of a plan (where each buffer lives and when it is
 * allocated and freed, exactly as model/eval.c counts it), the read
 * accounting, backend results, and the input and surrogate values every
 * backend computes alike.  It calls no other file of cuda_exec/.
 */
#include "cuda_exec/schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"

/* ---- parameters --------------------------------------------------------- */

void fp_exec_params_init(fp_exec_params *p) {
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->backend = FP_BACKEND_CPU;
  p->repeat = FP_EXEC_DEFAULT_REPEAT;
  p->seed = FP_EXEC_DEFAULT_SEED;
  p->check = true;
  p->rtol = FP_EXEC_DEFAULT_RTOL;
  p->atol = FP_EXEC_DEFAULT_ATOL;
  p->memory_limit = FP_EXEC_DEFAULT_MEMORY_LIMIT;
  snprintf(p->arch, sizeof p->arch, "%s", FP_EXEC_DEFAULT_ARCH);
}

/* Whether s is "sm_" followed by 2-3 digits (what NVRTC accepts as
 * --gpu-architecture; anything else would reach its command line). */
static bool arch_ok(const char *s) {
  size_t n = strnlen(s, FP_EXEC_ARCH_MAX);
  if (n < 5 || n > 7 || strncmp(s, "sm_", 3) != 0)
    return false;
  for (size_t i = 3; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

fp_status fp_exec_params_check(const fp_exec_params *p, fp_error *err) {
  if (!p)
    return fp_error_set(err, FP_EARG, "exec: NULL parameters");
  if (p->backend != FP_BACKEND_CPU && p->backend != FP_BACKEND_CUDA)
    return fp_error_set(err, FP_EARG, "exec: unknown backend %d",
                        (int)p->backend);
  if (p->repeat < 1 || p->repeat > FP_EXEC_MAX_REPEAT)
    return fp_error_set(err, FP_EARG, "exec: repeat must be 1..%d, got %d",
                        FP_EXEC_MAX_REPEAT, (int)p->repeat);
  if (!(p->rtol >= 0 && isfinite(p->rtol)) ||
      !(p->atol >= 0 && isfinite(p->atol)))
    return fp_error_set(err, FP_EARG,
                        "exec: rtol and atol must be finite and >= 0");
  if (p->memory_limit == 0)
    return fp_error_set(err, FP_EARG, "exec: memory_limit must be >= 1");
  if (!arch_ok(p->arch))
    return fp_error_set(err, FP_EARG,
                        "exec: arch must look like sm_90 (got '%.*s')",
                        FP_EXEC_ARCH_MAX - 1, p->arch);
  return FP_OK;
}

/* ---- backend results --------------------------------------------------- */

void fx_result_free(fx_result *r, int32_t n_outputs) {
  free(r->group_time_s);
  if (r->outputs)
    for (int32_t i = 0; i < n_outputs; i++)
      free(r->outputs[i]);
  free(r->outputs);
  memset(r, 0, sizeof *r);
}

/* ---- read accounting -------------------------------------------------- */

int fx_reads_init(fx_reads *r, int32_t n) {
  r->total = 0;
  r->stamp = malloc(((size_t)n + 1) * sizeof *r->stamp);
  r->cur = calloc((size_t)n + 1, sizeof *r->cur);
  if (!r->stamp || !r->cur)
    return -1;
  for (int32_t b = 0; b < n; b++)
    r->stamp[b] = -1;
  return 0;
}

void fx_reads_free(fx_reads *r) {
  free(r->stamp);
  free(r->cur);
  r->stamp = NULL;
  r->cur = NULL;
}

void fx_reads_add(fx_reads *r, const fx_sched *s, int32_t t, int32_t b,
                  uint64_t extent) {
  int32_t w = fp_graph_buffer(s->g, b)->writer;
  if (w >= 0 && s->step[w] == t)
    return;
  if (r->stamp[b] != t) {
    r->stamp[b] = t;
    r->cur[b] = extent;
    r->total += extent;
  } else if (extent > r->cur[b]) {
    r->total += extent - r->cur[b];
    r->cur[b] = extent;
  }
}

/* ---- values shared by the backends ------------------------------------ */

/* A float in [-1, 1) from the top 24 bits of u: exact in float32. */
static float unit_float(uint32_t u) {
  return (float)((int32_t)(u >> 8) - (1 << 23)) * (1.0f / (float)(1 << 23));
}

void fx_fill_input(unsigned char *dst, uint64_t bytes, uint64_t seed,
                   int32_t b) {
  uint64_t s = seed ^ ((uint64_t)(uint32_t)b * 0xd1342543de82ef95ull);
  uint64_t words = bytes / 4;
  float *f = (float *)(void *)dst;
  for (uint64_t q = 0; q < words; q++)
    f[q] = unit_float((uint32_t)(fp_splitmix64(&s) >> 32));
  for (uint64_t q = words * 4; q < bytes; q++)
    dst[q] = (unsigned char)fp_splitmix64(&s);
}

uint32_t fx_digest(const unsigned char *src, uint64_t bytes) {
  uint32_t h = 0;
  for (uint64_t q = 0; q < bytes; q++)
    h += ((uint32_t)src[q] + 1u) * (2u * (uint32_t)q + 1u);
  return h;
}

uint32_t fx_digest_combine(uint32_t h, uint32_t d, int32_t k) {
  return fx_mix32(h ^ (d + 0x9e3779b9u * (uint32_t)(k + 1)));
}

uint32_t fx_surrogate_seed(int32_t v) {
  return fx_mix32((uint32_t)v * 0x27d4eb2fu + 0x165667b1u);
}

void fx_surrogate_write(unsigned char *dst, uint64_t bytes, uint32_t h,
                        int32_t w) {
  uint32_t base = fx_mix32(h + 0x85ebca6bu * (uint32_t)(w + 1));
  uint64_t words = bytes / 4;
  float *f = (float *)(void *)dst;
  for (uint64_t q = 0; q < words; q++)
    f[q] = unit_float(fx_mix32(base ^ (uint32_t)q * 0x9e3779b9u));
  for (uint64_t q = words * 4; q < bytes; q++)
    dst[q] = (unsigned char)fx_mix32(base ^ (uint32_t)q * 0x9e3779b9u);
}

bool fx_is_surrogate(const fp_node *n) {
  return n->op.fn == FP_OP_NONE;
}

/* ---- the schedule ------------------------------------------------------ */

void fx_sched_free(fx_sched *s) {
  free(s->step);
  free(s->where);
  free(s->alloc_at);
  free(s->free_after);
  free(s->gnodes);
  free(s->goff);
  free(s->alloc_list);
  free(s->aoff);
  free(s->free_list);
  free(s->foff);
  free(s->inplace);
  memset(s, 0, sizeof *s);
}

/* qsort order of int32_t. */
static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Where buffer b lives and its lifetime, by the rules of model/eval.c:
 * inputs are allocated at the start (a freeable one that nobody reads is
 * never counted; one that is not an output is freed after its last
 * reader); a produced buffer is materialized unless every reader shares
 * its writer's group, and then lives from its writer's step through its
 * last reader's (outputs: to the end; unread: its own step). */
static void place_buffer(fx_sched *s, int32_t b) {
  const fp_buffer *buf = fp_graph_buffer(s->g, b);
  int32_t last = -1, ws = buf->writer >= 0 ? s->step[buf->writer] : -1;
  bool split = false;
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t t = s->step[buf->readers[i]];
    last = t > last ? t : last;
    split |= t != ws;
  }
  s->where[b] = FX_NONE;
  if (buf->input) {
    bool resident = !buf->freeable || buf->output;
    if (resident || buf->n_readers > 0) {
      s->where[b] = FX_MEM;
      s->alloc_at[b] = -1;
      s->free_after[b] = resident ? FX_NEVER : last;
    }
    return;
  }
  if (buf->writer < 0)
    return;
  if (!(buf->output || buf->n_readers == 0 || split)) {
    s->where[b] = FX_LOCAL;
    return;
  }
  s->where[b] = FX_MEM;
  s->alloc_at[b] = ws;
  s->free_after[b] = buf->output ? FX_NEVER : (buf->n_readers ? last : ws);
}

/* Builds the per-step allocation and free lists (counting sort). */
static int build_lists(fx_sched *s) {
  int32_t T = s->steps, B = s->buffers;
  s->aoff = calloc((size_t)T + 2, sizeof *s->aoff);
  s->foff = calloc((size_t)T + 2, sizeof *s->foff);
  s->alloc_list = malloc(((size_t)B + 1) * sizeof *s->alloc_list);
  s->free_list = malloc(((size_t)B + 1) * sizeof *s->free_list);
  if (!s->aoff || !s->foff || !s->alloc_list || !s->free_list)
    return -1;
  /* Slot 0 of aoff holds the inputs (allocated before step 0 with it). */
  for (int32_t b = 0; b < B; b++) {
    if (s->where[b] != FX_MEM)
      continue;
    s->aoff[(s->alloc_at[b] < 0 ? 0 : s->alloc_at[b]) + 1]++;
    if (s->free_after[b] != FX_NEVER)
      s->foff[s->free_after[b] + 1]++;
  }
  for (int32_t t = 0; t <= T; t++) {
    s->aoff[t + 1] += s->aoff[t];
    s->foff[t + 1] += s->foff[t];
  }
  int32_t *ai = malloc(((size_t)T + 1) * sizeof *ai);
  int32_t *fi = malloc(((size_t)T + 1) * sizeof *fi);
  if (!ai || !fi) {
    free(ai);
    free(fi);
    return -1;
  }
  memcpy(ai, s->aoff, ((size_t)T + 1) * sizeof *ai);
  memcpy(fi, s->foff, ((size_t)T + 1) * sizeof *fi);
  for (int32_t b = 0; b < B; b++) {
    if (s->where[b] != FX_MEM)
      continue;
    s->alloc_list[ai[s->alloc_at[b] < 0 ? 0 : s->alloc_at[b]]++] = b;
    if (s->free_after[b] != FX_NEVER)
      s->free_list[fi[s->free_after[b]]++] = b;
  }
  free(ai);
  free(fi);
  return 0;
}

/* Marks the takeovers the evaluator applies (fp_inplace_plan_applied). */
static void mark_inplace(fx_sched *s) {
  for (int32_t v = 0; v < s->nodes; v++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(s->g, v, &m);
    uint64_t on = m ? fp_inplace_plan_applied(s->g, s->step, v) : 0;
    for (int32_t k = 0; k < m; k++)
      if (on >> k & 1) {
        s->inplace[pr[k].write] |= FX_IP_TAKES;
        s->inplace[pr[k].read] |= FX_IP_HANDS;
      }
  }
}

uint64_t fx_alloc_bytes(const fx_sched *s, int32_t b) {
  return s->inplace[b] & FX_IP_TAKES ? 0 : fp_graph_buffer(s->g, b)->bytes;
}

uint64_t fx_free_bytes(const fx_sched *s, int32_t b) {
  return s->inplace[b] & FX_IP_HANDS ? 0 : fp_graph_buffer(s->g, b)->bytes;
}

fp_status fx_sched_build(const fp_graph *g, const fp_plan *p, fx_sched *s,
                         fp_error *err) {
  memset(s, 0, sizeof *s);
  s->g = g;
  s->p = p;
  s->steps = fp_plan_group_count(p);
  s->nodes = fp_graph_node_count(g);
  s->buffers = fp_graph_buffer_count(g);
  size_t n = (size_t)s->nodes + 1, nb = (size_t)s->buffers + 1;
  s->step = malloc(n * sizeof *s->step);
  s->gnodes = malloc(n * sizeof *s->gnodes);
  s->goff = malloc(((size_t)s->steps + 1) * sizeof *s->goff);
  s->where = calloc(nb, 1);
  s->alloc_at = calloc(nb, sizeof *s->alloc_at);
  s->free_after = calloc(nb, sizeof *s->free_after);
  s->inplace = calloc(nb, 1);
  if (!s->step || !s->gnodes || !s->goff || !s->where || !s->alloc_at ||
      !s->free_after || !s->inplace)
    goto fail;
  s->goff[0] = 0;
  for (int32_t t = 0; t < s->steps; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    memcpy(s->gnodes + s->goff[t], grp, (size_t)len * sizeof *grp);
    /* Ascending node index is a program order inside the group. */
    qsort(s->gnodes + s->goff[t], (size_t)len, sizeof *grp, cmp_i32);
    for (int32_t i = 0; i < len; i++)
      s->step[grp[i]] = t;
    s->goff[t + 1] = s->goff[t] + len;
  }
  for (int32_t b = 0; b < s->buffers; b++)
    place_buffer(s, b);
  mark_inplace(s);
  if (build_lists(s) != 0)
    goto fail;
  return FP_OK;
fail:
  fx_sched_free(s);
  return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
}
