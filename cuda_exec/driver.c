/*
 * driver.c -- the executor's driver, fp_exec_run (exec.h): checks a run's
 * memory need, builds the schedule (schedule.c), runs it on the requested
 * backend (cpu.c, cuda.c) and the eager reference on the CPU, compares
 * the outputs, and fills the report.  Only this file calls the backends;
 * they and it share the layer below (schedule.h), so no two files here
 * call each other.
 */
#include "cuda_exec/exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/cpu.h"
#include "cuda_exec/cuda.h"
#include "cuda_exec/schedule.h"

/* ---- the report -------------------------------------------------------- */

void fp_exec_report_free(fp_exec_report *r) {
  if (!r)
    return;
  free(r->group_time_s);
  memset(r, 0, sizeof *r);
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
  if (!fp_graph_is_finalized(g) || !p || !out)
    return fp_error_set(err, FP_EARG,
                        "exec: NULL argument or graph not finalized");
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
