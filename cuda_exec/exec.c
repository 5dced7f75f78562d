/*
 * exec.c -- the executor's front: parameters, the schedule of a plan
 * (where each buffer lives and when it is allocated and freed, exactly as
 * model/eval.c counts it), the numerical check against the eager program,
 * and the report.  The backends (cpu.c, cuda.c) only run schedules.
 */
#include "cuda_exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/exec_internal.h"

/* ---- parameters and report -------------------------------------------- */

void fp_exec_params_init(fp_exec_params *p) {
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

void fp_exec_report_free(fp_exec_report *r) {
  if (!r)
    return;
  free(r->group_time_s);
  memset(r, 0, sizeof *r);
}

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

/* splitmix64, as the generator uses: the stream depends only on its
 * seed. */
static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

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
    f[q] = unit_float((uint32_t)(splitmix(&s) >> 32));
  for (uint64_t q = words * 4; q < bytes; q++)
    dst[q] = (unsigned char)splitmix(&s);
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
  if (!s->step || !s->gnodes || !s->goff || !s->where || !s->alloc_at ||
      !s->free_after)
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
  if (build_lists(s) != 0)
    goto fail;
  return FP_OK;
fail:
  fx_sched_free(s);
  return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
}

/* ---- the check --------------------------------------------------------- */

/* Compares float word a (measured) with r (reference): equal bits, both
 * NaN, or within atol + rtol * |r|.  Updates the report's error figures. */
static void compare_word(float a, float r, const fp_exec_params *prm,
                         bool exact, fp_exec_report *out) {
  uint32_t ba, br;
  memcpy(&ba, &a, 4);
  memcpy(&br, &r, 4);
  out->compared++;
  if (ba == br || (isnan(a) && isnan(r)))
    return;
  double d = fabs((double)a - (double)r);
  if (isfinite(d)) {
    double rel = d / fmax(fabs((double)r), 1e-30);
    out->max_abs_err = d > out->max_abs_err ? d : out->max_abs_err;
    out->max_rel_err = rel > out->max_rel_err ? rel : out->max_rel_err;
    if (!exact && d <= prm->atol + prm->rtol * fabs((double)r))
      return;
  } else {
    out->max_abs_err = INFINITY;
    out->max_rel_err = INFINITY;
  }
  out->mismatches++;
}

/* Compares the graph's outputs of a run with the reference run: every
 * float32 word (bitwise when `exact`), and tail bytes bitwise. */
static void compare_outputs(const fp_graph *g, const fx_result *got,
                            const fx_result *ref, const fp_exec_params *prm,
                            bool exact, fp_exec_report *out) {
  for (int32_t i = 0; i < fp_graph_output_count(g); i++) {
    uint64_t bytes = fp_graph_buffer(g, fp_graph_output(g, i))->bytes;
    const unsigned char *a = got->outputs[i], *r = ref->outputs[i];
    out->output_digest =
        fx_digest_combine(out->output_digest, fx_digest(a, bytes), i);
    for (uint64_t q = 0; q + 4 <= bytes; q += 4) {
      float fa, fr;
      memcpy(&fa, a + q, 4);
      memcpy(&fr, r + q, 4);
      compare_word(fa, fr, prm, exact, out);
    }
    for (uint64_t q = bytes / 4 * 4; q < bytes; q++) {
      out->compared++;
      out->mismatches += a[q] != r[q];
    }
  }
  out->check = out->mismatches ? FP_CHECK_FAIL : FP_CHECK_PASS;
}

/* ---- running ----------------------------------------------------------- */

/* Runs schedule s on the requested backend, `repeat` times, keeping the
 * fastest run's times and the first run's outputs.  Every run must
 * measure the same bytes (they are deterministic); a difference is an
 * internal error. */
static fp_status run_repeated(const fx_sched *s, const fp_exec_params *prm,
                              bool keep, fx_result *best, double *compile_s,
                              fp_error *err) {
  int32_t n_out = fp_graph_output_count(s->g);
  fx_compiled *cc = NULL;
  fp_status st = FP_OK;
  for (int32_t i = 0; i < prm->repeat && st == FP_OK; i++) {
    fx_result r;
    memset(&r, 0, sizeof r);
    st = prm->backend == FP_BACKEND_CUDA
             ? fx_cuda_run(s, prm, keep && i == 0, &r, &cc, compile_s, err)
             : fx_cpu_run(s, prm, keep && i == 0, &r, err);
    if (st != FP_OK) {
      fx_result_free(&r, n_out);
      break;
    }
    if (i == 0) {
      *best = r;
      continue;
    }
    bool same = r.peak_bytes == best->peak_bytes &&
                r.read_bytes == best->read_bytes &&
                r.write_bytes == best->write_bytes;
    if (same && r.time_s < best->time_s) {
      best->time_s = r.time_s;
      double *tmp = best->group_time_s;
      best->group_time_s = r.group_time_s;
      r.group_time_s = tmp;
    }
    fx_result_free(&r, n_out);
    if (!same)
      st = fp_error_set(err, FP_EINTERNAL,
                        "exec: run %d measured different bytes", (int)i);
  }
  fx_compiled_free(cc);
  return st;
}

/* The eager reference: the eager plan of g on the CPU, outputs kept. */
static fp_status run_reference(const fp_graph *g, const fp_exec_params *prm,
                               fx_result *ref, fp_error *err) {
  fp_plan *eager = fp_plan_create();
  fx_sched s;
  memset(&s, 0, sizeof s);
  if (!eager)
    return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
  fp_status st = fp_plan_make_eager(eager, g, err);
  if (st == FP_OK)
    st = fx_sched_build(g, eager, &s, err);
  if (st == FP_OK)
    st = fx_cpu_run(&s, prm, true, ref, err);
  fx_sched_free(&s);
  fp_plan_destroy(eager);
  return st;
}

/* Refuses runs that need more than the memory limit: the plan's peak, and
 * with a check the eager reference's too (both hold outputs at once). */
static fp_status check_memory(const fp_graph *g, const fp_exec_params *prm,
                              const fp_metrics *m, fp_error *err) {
  uint64_t need = m->peak_bytes;
  if (prm->check) {
    fp_plan *eager = fp_plan_create();
    fp_metrics em;
    if (!eager)
      return fp_error_set(err, FP_ENOMEM, "exec: out of memory");
    fp_status st = fp_plan_make_eager(eager, g, err);
    if (st == FP_OK)
      st = fp_plan_eval(g, eager, &em, NULL, err);
    fp_plan_destroy(eager);
    if (st != FP_OK)
      return st;
    need += em.peak_bytes;
  }
  if (need > prm->memory_limit)
    return fp_error_set(err, FP_ELIMIT,
                        "exec: the run needs %llu bytes, over the memory "
                        "limit of %llu",
                        (unsigned long long)need,
                        (unsigned long long)prm->memory_limit);
  return FP_OK;
}

/* Copies a backend result's measurements into the report. */
static void fill_report(const fx_sched *s, fx_result *r, fp_exec_report *out) {
  out->peak_bytes = r->peak_bytes;
  out->read_bytes = r->read_bytes;
  out->write_bytes = r->write_bytes;
  out->traffic_bytes = r->read_bytes + r->write_bytes;
  out->scratch_bytes = r->scratch_bytes;
  out->pool_used_high = r->pool_used_high;
  out->pool_reserved_high = r->pool_reserved_high;
  out->kernels = s->steps;
  out->launches = r->launches;
  out->time_s = r->time_s;
  out->group_time_s = r->group_time_s;
  r->group_time_s = NULL;
  for (int32_t v = 0; v < s->nodes; v++)
    out->surrogate_nodes += fx_is_surrogate(fp_graph_node(s->g, v));
}

fp_status fp_exec_run(const fp_graph *g, const fp_plan *p,
                      const fp_exec_params *params, fp_exec_report *out,
                      fp_error *err) {
  fp_exec_params dflt;
  fx_sched s;
  fx_result run, ref;
  memset(&s, 0, sizeof s);
  memset(&run, 0, sizeof run);
  memset(&ref, 0, sizeof ref);
  if (!params) {
    fp_exec_params_init(&dflt);
    params = &dflt;
  }
  if (out)
    memset(out, 0, sizeof *out);
  if (!g || !p || !out)
    return fp_error_set(err, FP_EARG, "exec: NULL argument");
  fp_status st = fp_exec_params_check(params, err);
  if (st == FP_OK)
    st = fp_plan_eval(g, p, &out->predicted, NULL, err);
  if (st == FP_OK)
    st = check_memory(g, params, &out->predicted, err);
  if (st == FP_OK && params->backend == FP_BACKEND_CUDA)
    st = fp_exec_cuda_available(err);
  if (st == FP_OK)
    st = fx_sched_build(g, p, &s, err);
  if (st == FP_OK && params->check)
    st = run_reference(g, params, &ref, err);
  if (st == FP_OK)
    st = run_repeated(&s, params, params->check, &run, &out->compile_s, err);
  if (st != FP_OK)
    goto fail;
  fill_report(&s, &run, out);
  if (params->check)
    compare_outputs(g, &run, &ref, params, params->backend == FP_BACKEND_CPU,
                    out);
fail:
  fx_result_free(&run, fp_graph_output_count(g));
  fx_result_free(&ref, fp_graph_output_count(g));
  fx_sched_free(&s);
  return st;
}
