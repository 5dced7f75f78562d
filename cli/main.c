/*
 * main.c -- `fuseplan`: dispatch to subcommands, and the helpers they share
 * (loading with error reporting, byte formatting, exit-code mapping).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/io.h"
#include "model/json.h"
#include "solver/planner.h"

/* The usage text around the method list of `solve` (which comes from
 * the planner table). */
static const char usage_head[] =
    "usage: fuseplan <command> [options]\n"
    "\n"
    "Kernel-fusion and execution-order plans for tensor-compiler graphs:\n"
    "memory traffic against peak live memory, exactly.\n"
    "\n"
    "commands:\n"
    "  solve   GRAPH [-o PLAN] [--method M] [--peak-limit L] [--json]\n"
    "          make a plan; M:";
static const char usage_tail[] =
    "  pareto  GRAPH [--points N] [-o FRONT.json] [--svg FRONT.svg]\n"
    "          the traffic-vs-peak front, with the heuristics for comparison\n"
    "  eval    GRAPH PLAN [--json] [--timeline FILE.csv]\n"
    "          traffic, peak and kernels of a plan\n"
    "  verify  GRAPH PLAN      check that a plan is legal (exit 1 if not)\n"
    "  compare GRAPH PLAN... [--json]\n"
    "          side-by-side table of plans, with eager\n"
    "  info    GRAPH [--json]  what a graph holds, eager costs, lower bounds\n"
    "  run     GRAPH PLAN [--backend cpu|cuda] [--repeat N] [--json]\n"
    "          execute a plan: measured peak and traffic against the\n"
    "          prediction, outputs against eager\n"
    "  gen     --family F --size N --seed S [-o GRAPH]\n"
    "          generate a training-like graph (transformer, convnet, mlp,\n"
    "          random)\n"
    "\n"
    "Run 'fuseplan <command> --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 problem found or infeasible, 2 usage, 3 invalid\n"
    "input file, 4 internal failure, 5 run: backend unavailable.\n";

/* Prints the usage text with the methods, the default marked, wrapped
 * under the `solve` line. */
static void print_usage(FILE *f) {
  int col = 25; /* after "          make a plan; M:" */
  fputs(usage_head, f);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    bool last = i == fp_planner_count() - 1;
    int w = (int)strlen(pl->name) + (last ? 0 : 1) +
            (pl == fp_planner_default() ? 10 : 0);
    if (col + 1 + w > 72) {
      fputs("\n         ", f);
      col = 9;
    }
    fprintf(f, " %s%s%s", pl->name,
            pl == fp_planner_default() ? " (default)" : "", last ? "" : ",");
    col += 1 + w;
  }
  fputs("\n", f);
  fputs(usage_tail, f);
}

/* Joins into buf the names of the rows that have every flag in `flags`
 * and, when opt >= 0, accept option opt: `sep` between names, `last`
 * before the last one.  Returns buf ("" when none; cut at n). */
static const char *join_methods(unsigned flags, int opt, const char *sep,
                                const char *last, char *buf, size_t n) {
  const fp_planner *pick[64];
  int k = 0;
  size_t len = 0;
  for (int32_t i = 0; i < fp_planner_count() && k < 64; i++) {
    const fp_planner *pl = fp_planner_at(i);
    if ((pl->flags & flags) == flags &&
        (opt < 0 || fp_planner_accepts(pl, (fp_planner_option)opt)))
      pick[k++] = pl;
  }
  buf[0] = '\0';
  for (int i = 0; i < k && len < n; i++) {
    int r = snprintf(buf + len, n - len, "%s%s",
                     i == 0       ? ""
                     : i == k - 1 ? last
                                  : sep,
                     pick[i]->name);
    len += r > 0 ? (size_t)r : 0;
  }
  return buf;
}

const char *cli_methods_join(unsigned flags, const char *sep, const char *last,
                             char *buf, size_t n) {
  return join_methods(flags, -1, sep, last, buf, n);
}

const char *cli_methods_taking(int opt, char *buf, size_t n) {
  bool heuristics_only = true, any = false;
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    bool takes = fp_planner_accepts(pl, (fp_planner_option)opt);
    any = any || takes;
    heuristics_only =
        heuristics_only && takes == !(pl->flags & FP_PLANNER_EXACT);
  }
  if (any && heuristics_only) {
    snprintf(buf, n, "the heuristics");
    return buf;
  }
  int k = snprintf(buf, n, "--method ");
  if (k < 0 || (size_t)k >= n)
    return buf;
  join_methods(0, opt, ", ", " or ", buf + k, n - (size_t)k);
  return buf;
}

int cli_fail(const fp_error *err) {
  fprintf(stderr, "fuseplan: %s\n", err->msg);
  switch (err->code) {
  case FP_EILLEGAL:
  case FP_EINFEASIBLE:
    return EXIT_PROBLEM;
  case FP_EARG:
    return EXIT_USAGE;
  case FP_EINPUT:
  case FP_ELIMIT:
  case FP_EIO:
    return EXIT_INPUT;
  default:
    return EXIT_INTERNAL;
  }
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "fuseplan %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(run 'fuseplan %s --help' for usage)\n", cmd);
  return EXIT_USAGE;
}

int cli_load_graph(const char *path, fp_graph **g) {
  fp_error err;
  fp_error_clear(&err);
  if (fp_graph_load_file(path, g, &err) != FP_OK)
    return cli_fail(&err);
  return 0;
}

int cli_load_plan(const char *path, const fp_graph *g, fp_plan **p) {
  fp_error err;
  fp_error_clear(&err);
  if (fp_plan_load_file(path, g, p, &err) != FP_OK)
    return cli_fail(&err);
  return 0;
}

const char *cli_bytes(uint64_t bytes, char *buf, size_t n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, n, "%llu B", (unsigned long long)bytes);
  else
    snprintf(buf, n, "%llu (%.2f %s)", (unsigned long long)bytes, v, unit[u]);
  return buf;
}

void cli_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

int cli_write_file(const char *path, const char *text) {
  fp_error err;
  fp_error_clear(&err);
  if (fp_file_write_atomic(path, text, strlen(text), &err) != FP_OK) {
    fprintf(stderr, "fuseplan: %s\n", err.msg);
    return EXIT_INTERNAL;
  }
  return 0;
}

int cli_write_memstream(FILE *f, char **text, const char *path) {
  if (fclose(f) != 0 || !*text) {
    free(*text);
    *text = NULL;
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  }
  int rc = cli_write_file(path, *text);
  free(*text);
  *text = NULL;
  return rc;
}

typedef struct command {
  const char *name;
  int (*fn)(int, char **);
} command;

static const command commands[] = {
    {"solve", cmd_solve},     {"eval", cmd_eval}, {"verify", cmd_verify},
    {"compare", cmd_compare}, {"info", cmd_info}, {"gen", cmd_gen},
    {"pareto", cmd_pareto},   {"run", cmd_run},
};

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    print_usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("fuseplan %s\n", PACKAGE_VERSION);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "fuseplan: unknown command '%s'\n\n", cmd);
  print_usage(stderr);
  return EXIT_USAGE;
}
