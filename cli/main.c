/*
 * main.c -- `fuseplan`: the usage text and the dispatch to subcommands.
 * The helpers the subcommands share are in common.c (so no subcommand
 * calls back into this file).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/io.h"
#include "model/json.h"
#include "solver/planner.h"

/* The subcommands, in the manner of Lua's luaL_Reg: one row drives the
 * dispatch and the usage text.  `synopsis` follows the name on the first
 * line; `summary` (lines separated by '\n') is indented below it.  The
 * summary of `solve` is followed by the planner table's methods. */
typedef struct command {
  const char *name;
  int (*fn)(int, char **);
  const char *synopsis, *summary;
} command;

static const command commands[] = {
    {"solve", cmd_solve,
     "GRAPH [-o PLAN] [--method M] [--peak-limit L] [--json]",
     "make a plan; M:"},
    {"pareto", cmd_pareto,
     "GRAPH [--points N] [-o FRONT.json] [--svg FRONT.svg]",
     "the traffic-vs-peak front, with the heuristics for comparison"},
    {"eval", cmd_eval, "GRAPH PLAN [--json] [--timeline FILE.csv]",
     "traffic, peak and kernels of a plan"},
    {"verify", cmd_verify,
     "GRAPH PLAN      check that a plan is legal (exit 1 if not)", NULL},
    {"compare", cmd_compare, "GRAPH PLAN... [--json]",
     "side-by-side table of plans, with eager"},
    {"info", cmd_info,
     "GRAPH [--json]  what a graph holds, eager costs, lower bounds", NULL},
    {"run", cmd_run, "GRAPH PLAN [--backend cpu|cuda] [--repeat N] [--json]",
     "execute a plan: measured peak and traffic against the\nprediction, "
     "outputs against eager"},
    {"batch", cmd_batch, "GRAPH... [--manifest FILE] -o DIR [--jobs N]",
     "gold plans for many graphs, in child processes; a dataset\n"
     "('batch report DIR': the heuristics against gold)"},
    {"cut", cmd_cut, "GRAPH --nodes A..B --count K -o DIR",
     "sub-graphs of consecutive nodes, small enough to prove"},
    {"gen", cmd_gen, "--family F --size N --seed S [-o GRAPH]",
     "generate a training-like graph (transformer, convnet, mlp,\nrandom)"},
};

static const char usage_head[] =
    "usage: fuseplan <command> [options]\n"
    "\n"
    "Kernel-fusion and execution-order plans for tensor-compiler graphs:\n"
    "memory traffic against peak live memory, exactly.\n"
    "\n"
    "commands:\n";
static const char usage_tail[] =
    "\n"
    "Run 'fuseplan <command> --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 problem found or infeasible, 2 usage, 3 invalid\n"
    "input file, 4 internal failure, 5 run: backend unavailable, 6 run:\n"
    "over --memory-limit.\n";

/* The planner table's methods after "make a plan; M:", the default
 * marked, wrapped under the `solve` line. */
static void print_methods(FILE *f) {
  int col = 25; /* after "          make a plan; M:" */
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
}

/* The usage text, from the command table. */
static void print_usage(FILE *f) {
  fputs(usage_head, f);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    const command *c = &commands[i];
    fprintf(f, "  %-7s %s\n", c->name, c->synopsis);
    for (const char *s = c->summary; s && *s;) {
      const char *nl = strchr(s, '\n');
      int len = nl ? (int)(nl - s) : (int)strlen(s);
      fprintf(f, "          %.*s", len, s);
      if (c->fn == cmd_solve && !nl)
        print_methods(f);
      fputc('\n', f);
      s = nl ? nl + 1 : s + len;
    }
  }
  fputs(usage_tail, f);
}

/* What a command printed on stdout is only delivered once flushed: a full
 * disk or a closed pipe shows here, and turns a success into exit 4. */
static int finish_stdout(int rc) {
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout))
    return rc;
  fprintf(stderr, "fuseplan: standard output: %s\n",
          errno ? strerror(errno) : "write error");
  return rc == EXIT_OK ? EXIT_INTERNAL : rc;
}

int main(int argc, char **argv) {
  cli_trap_fatal_signals();
  if (argc < 2) {
    print_usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    print_usage(stdout);
    return finish_stdout(EXIT_OK);
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("fuseplan %s\n", PACKAGE_VERSION);
    return finish_stdout(EXIT_OK);
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return finish_stdout(commands[i].fn(argc - 1, argv + 1));
  fprintf(stderr, "fuseplan: unknown command '%s'\n\n", cmd);
  print_usage(stderr);
  return EXIT_USAGE;
}
