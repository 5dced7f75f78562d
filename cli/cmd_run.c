/*
 * cmd_run.c -- `fuseplan run`: execute a plan on the CPU or a GPU and
 * hold what it measures (peak, traffic) to the evaluator's prediction and
 * its outputs to the eager program's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cuda_exec/exec.h"

static const char run_help[] =
    "usage: fuseplan run GRAPH PLAN [--backend cpu|cuda] [--repeat N]\n"
    "                    [--seed S] [--arch sm_NN] [--memory-limit BYTES]\n"
    "                    [--no-check] [--kernel-times FILE.csv] [--json]\n"
    "\n"
    "Executes PLAN group by group (one kernel per group) and measures the\n"
    "peak bytes live in its tracking allocator, the bytes its kernels read\n"
    "and write, and the time.  Nodes with an op compute float32 values;\n"
    "nodes without one run surrogate kernels that move their declared\n"
    "bytes (docs/executor.md).  The graph's outputs are compared with the\n"
    "eager program's: bitwise on the CPU, within a tolerance on CUDA.\n"
    "  --backend B         cpu (default) or cuda\n"
    "  --repeat N          run N times, report the fastest (default 1)\n"
    "  --seed S            input values (default 1)\n"
    "  --arch sm_NN        CUDA target for NVRTC (default sm_90)\n"
    "  --memory-limit B    refuse runs needing more (default 16GiB)\n"
    "  --no-check          skip the eager reference run\n"
    "  --kernel-times F    per kernel (group): step,nodes,time_s,first_node\n"
    "                      as CSV, from the fastest run\n"
    "  --json              one JSON object on stdout\n" CLI_INPUT_OPTIONS_HELP
    "Exit codes: 0 outputs match and measured peak and traffic equal the\n"
    "prediction; 1 a mismatch or an illegal plan; 2 usage; 3 invalid input;\n"
    "4 internal failure; 5 backend unavailable (not built with CUDA, or no\n"
    "GPU); 6 the run would exceed --memory-limit.\n";

/* Parses the options into prm; returns 0 or a usage exit code. */
static int parse_params(const cli_args *a, fp_exec_params *prm) {
  const char *be = cli_get(a, "backend"), *rp = cli_get(a, "repeat"),
             *sd = cli_get(a, "seed"), *ar = cli_get(a, "arch"),
             *ml = cli_get(a, "memory-limit");
  uint64_t v;
  fp_exec_params_init(prm);
  if (be && strcmp(be, "cpu") != 0 && strcmp(be, "cuda") != 0)
    return cli_usage_error("run", "--backend: expected cpu or cuda, got '%s'",
                           be);
  if (be && strcmp(be, "cuda") == 0)
    prm->backend = FP_BACKEND_CUDA;
  if (rp) {
    if (cli_parse_uint(rp, FP_EXEC_MAX_REPEAT, &v) != 0 || v < 1)
      return cli_usage_error("run", "--repeat: expected 1 .. %d, got '%s'",
                             FP_EXEC_MAX_REPEAT, rp);
    prm->repeat = (int32_t)v;
  }
  if (sd && cli_parse_uint(sd, UINT64_MAX, &prm->seed) != 0)
    return cli_usage_error("run", "--seed: expected an unsigned integer");
  if (ml &&
      (cli_parse_bytes(ml, &prm->memory_limit) != 0 || prm->memory_limit == 0))
    return cli_usage_error("run", "--memory-limit: expected a size, got '%s'",
                           ml);
  if (ar) {
    if (strlen(ar) >= sizeof prm->arch)
      return cli_usage_error("run", "--arch: too long");
    snprintf(prm->arch, sizeof prm->arch, "%s", ar);
  }
  prm->check = cli_get(a, "no-check") == NULL;
  fp_error err;
  if (fp_exec_params_check(prm, &err) != FP_OK)
    return cli_usage_error("run", "%s", err.msg);
  return 0;
}

/* "pass", "fail" or "skipped". */
static const char *check_name(fp_check c) {
  return c == FP_CHECK_PASS ? "pass" : c == FP_CHECK_FAIL ? "fail" : "skipped";
}

/* Whether measured peak and traffic equal the prediction. */
static bool exact(const fp_exec_report *r) {
  return r->peak_bytes == r->predicted.peak_bytes &&
         r->traffic_bytes == r->predicted.traffic_bytes;
}

/* The --json object (docs/executor.md). */
static void print_json(const fp_graph *g, const fp_exec_params *prm,
                       const fp_exec_report *r, bool pass) {
  printf("{\"graph\": ");
  cli_json_str(stdout, fp_graph_name(g));
  printf(", \"backend\": \"%s\", \"repeat\": %d, \"seed\": %llu, "
         "\"predicted\": {\"traffic_bytes\": %llu, \"peak_bytes\": %llu, "
         "\"read_bytes\": %llu, \"write_bytes\": %llu, \"kernels\": %d}, ",
         prm->backend == FP_BACKEND_CUDA ? "cuda" : "cpu", (int)prm->repeat,
         (unsigned long long)prm->seed,
         (unsigned long long)r->predicted.traffic_bytes,
         (unsigned long long)r->predicted.peak_bytes,
         (unsigned long long)r->predicted.read_bytes,
         (unsigned long long)r->predicted.write_bytes,
         (int)r->predicted.kernels);
  printf("\"measured\": {\"traffic_bytes\": %llu, \"peak_bytes\": %llu, "
         "\"read_bytes\": %llu, \"write_bytes\": %llu, \"time_s\": %.9g, "
         "\"kernels\": %d, \"launches\": %d, \"scratch_bytes\": %llu, "
         "\"pool_used_high\": %llu, \"pool_reserved_high\": %llu, "
         "\"compile_s\": %.6g}, ",
         (unsigned long long)r->traffic_bytes,
         (unsigned long long)r->peak_bytes, (unsigned long long)r->read_bytes,
         (unsigned long long)r->write_bytes, r->time_s, (int)r->kernels,
         (int)r->launches, (unsigned long long)r->scratch_bytes,
         (unsigned long long)r->pool_used_high,
         (unsigned long long)r->pool_reserved_high, r->compile_s);
  printf("\"accounting\": \"%s\", \"outputs\": \"%s\", \"compared\": %llu, "
         "\"mismatches\": %llu, \"max_abs_err\": %.9g, \"max_rel_err\": "
         "%.9g, \"surrogate_nodes\": %d, \"check\": \"%s\"}\n",
         exact(r) ? "exact" : "differs", check_name(r->check),
         (unsigned long long)r->compared, (unsigned long long)r->mismatches,
         r->max_abs_err, r->max_rel_err, (int)r->surrogate_nodes,
         pass ? "pass" : "fail");
}

/* The human table: predicted against measured. */
static void print_text(const fp_graph *g, const fp_exec_params *prm,
                       const fp_exec_report *r, bool pass) {
  char b1[64], b2[64];
  char safe[CLI_SAFE_MAX];
  printf("graph        %s\n", cli_safe(fp_graph_name(g), safe, sizeof safe));
  printf("backend      %s, %d kernels (%d launches), %d surrogate nodes\n",
         prm->backend == FP_BACKEND_CUDA ? "cuda" : "cpu", (int)r->kernels,
         (int)r->launches, (int)r->surrogate_nodes);
  printf("%-12s %-28s %-28s\n", "", "predicted", "measured");
  printf("%-12s %-28s %-28s%s\n", "peak",
         cli_bytes(r->predicted.peak_bytes, b1, sizeof b1),
         cli_bytes(r->peak_bytes, b2, sizeof b2),
         r->peak_bytes == r->predicted.peak_bytes ? "" : "  DIFFERS");
  printf("%-12s %-28s %-28s%s\n", "traffic",
         cli_bytes(r->predicted.traffic_bytes, b1, sizeof b1),
         cli_bytes(r->traffic_bytes, b2, sizeof b2),
         r->traffic_bytes == r->predicted.traffic_bytes ? "" : "  DIFFERS");
  printf("time         %.6f s (fastest of %d)\n", r->time_s, (int)prm->repeat);
  if (r->scratch_bytes)
    printf("scratch      %s kernel-local (not in the peak)\n",
           cli_bytes(r->scratch_bytes, b1, sizeof b1));
  if (r->check != FP_CHECK_SKIPPED)
    printf("outputs      %s: %llu values, %llu mismatches (max abs err %.3g, "
           "max rel err %.3g) against eager\n",
           check_name(r->check), (unsigned long long)r->compared,
           (unsigned long long)r->mismatches, r->max_abs_err, r->max_rel_err);
  printf("check        %s\n", pass ? "pass" : "fail");
}

/* Step t's node count and time in the report ctx, as CSV fields. */
static void kernel_time_row(FILE *f, int32_t t, int32_t n, const void *ctx) {
  const fp_exec_report *r = ctx;
  fprintf(f, "%d,%d,%.9g,", (int)t, (int)n, r->group_time_s[t]);
}

/* Writes the per-kernel times of the report as CSV to path; 0 or an
 * exit code. */
static int write_kernel_times(const char *path, const fp_graph *g,
                              const fp_plan *p, const fp_exec_report *r) {
  return cli_write_step_csv(path, "step,nodes,time_s,first_node", g, p,
                            kernel_time_row, r);
}

int cmd_run(int argc, char **argv) {
  cli_opt opts[] = {
      {"backend", 0, true, NULL},      {"repeat", 0, true, NULL},
      {"seed", 0, true, NULL},         {"arch", 0, true, NULL},
      {"memory-limit", 0, true, NULL}, {"no-check", 0, false, NULL},
      {"json", 0, false, NULL},        {"kernel-times", 0, true, NULL}};
  cli_args a = {.opts = opts, .n_opts = 8, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("run", "%s", a.error);
  if (a.help)
    return fputs(run_help, stdout), EXIT_OK;
  if (a.n_pos != 2)
    return cli_usage_error("run", "expected GRAPH and PLAN");
  fp_exec_params prm;
  int rc = parse_params(&a, &prm);
  if (rc)
    return rc;
  fp_graph *g = NULL;
  fp_plan *p = NULL;
  fp_exec_report r;
  fp_error err;
  memset(&r, 0, sizeof r);
  fp_error_clear(&err);
  if ((rc = cli_load_graph(a.pos[0], &g)) ||
      (rc = cli_load_plan(a.pos[1], g, &p)))
    goto done;
  fp_status st = fp_exec_run(g, p, &prm, &r, &err);
  if (st == FP_ENOTBUILT || st == FP_ENODEVICE) {
    cli_fail(&err);
    rc = EXIT_UNAVAILABLE;
    goto done;
  }
  if (st == FP_ELIMIT) { /* over --memory-limit: a request, not an input */
    cli_fail(&err);
    rc = EXIT_OVER_MEMORY;
    goto done;
  }
  if (st != FP_OK) {
    if (st == FP_EILLEGAL)
      fp_error_prefix(&err, a.pos[1]);
    rc = cli_fail(&err);
    goto done;
  }
  bool pass = r.check != FP_CHECK_FAIL && exact(&r);
  if (cli_get(&a, "json"))
    print_json(g, &prm, &r, pass);
  else
    print_text(g, &prm, &r, pass);
  rc = pass ? EXIT_OK : EXIT_PROBLEM;
  if (cli_get(&a, "kernel-times")) {
    int wrc = write_kernel_times(cli_get(&a, "kernel-times"), g, p, &r);
    rc = wrc ? wrc : rc;
  }
done:
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}
