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

static const char usage_text[] =
    "usage: fuseplan <command> [options]\n"
    "\n"
    "Kernel-fusion and execution-order plans for tensor-compiler graphs:\n"
    "memory traffic against peak live memory, exactly.\n"
    "\n"
    "commands:\n"
    "  solve   GRAPH [-o PLAN] [--method M] [--peak-limit L] [--json]\n"
    "          make a plan: greedy-peak (default), greedy, greedy-lowmem,\n"
    "          eager, ilp (GLPK), exhaustive\n"
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
    fputs(usage_text, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    fputs(usage_text, stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("fuseplan %s\n", PACKAGE_VERSION);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "fuseplan: unknown command '%s'\n\n%s", cmd, usage_text);
  return EXIT_USAGE;
}
