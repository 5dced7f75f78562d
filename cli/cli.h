/*
 * cli.h -- shared pieces of the `fuseplan` command (the only code that
 * prints or exits).  Each subcommand is a function cmd_<name>(argc, argv)
 * returning the process exit code (docs/cli.md, the commands and "Exit codes").
 */
#ifndef FP_CLI_H
#define FP_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/args.h"
#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"
#include "model/status.h"

enum {
  EXIT_OK = 0,          /* success */
  EXIT_PROBLEM = 1,     /* verify/compare found a problem; infeasible request */
  EXIT_USAGE = 2,       /* bad command line */
  EXIT_INPUT = 3,       /* invalid input file */
  EXIT_INTERNAL = 4,    /* internal, output or solver failure */
  EXIT_UNAVAILABLE = 5, /* run: backend not built, or no GPU */
  EXIT_OVER_MEMORY = 6  /* run: the run would exceed --memory-limit */
};

int cmd_info(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_pareto(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_batch_report(int argc, char **argv);
int cmd_batch_merge(int argc, char **argv);
int cmd_cut(int argc, char **argv);

/* Prints "fuseplan: <msg>" to stderr and returns the exit code for the
 * status of a failed load or computation on input files. */
int cli_fail(const fp_error *err);

/* Prints "fuseplan <cmd>: <msg>" and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Loads a graph file, printing the error; returns 0 or an exit code. */
int cli_load_graph(const char *path, fp_graph **g);

/* Loads a plan file for g, printing the error; 0 or an exit code. */
int cli_load_plan(const char *path, const fp_graph *g, fp_plan **p);

/* The plans of every --start option (solve, pareto), loaded for g. */
#define CLI_MAX_STARTS 64
typedef struct cli_starts {
  fp_plan *plans[CLI_MAX_STARTS];
  int n;
} cli_starts;

/* Loads every `--start FILE` of `a` for g and checks it (fp_plan_check
 * with fusion limit k, 0 = the graph's): 0, or the exit code after the
 * message (EXIT_INPUT for an unreadable file, a plan of another graph, or
 * an illegal plan, naming the file and the first violation).  Free with
 * cli_starts_free whatever it returns. */
int cli_load_starts(const cli_args *a, const fp_graph *g, int32_t k,
                    cli_starts *out);
void cli_starts_free(cli_starts *s);

/* Formats bytes as "1234567 (1.18 MiB)" into buf. */
const char *cli_bytes(uint64_t bytes, char *buf, size_t n);

/* Text from an input file made safe to print on a terminal: s itself when
 * it holds no control character, else a copy in buf (cut at n bytes) with
 * each C0 control byte and DEL as \xHH and each C1 control (U+0080 ..
 * U+009F, which some terminals obey like ESC sequences) as \u00HH.  So
 * a name with an escape sequence is shown, never obeyed.  Returns s or
 * buf. */
#define CLI_SAFE_MAX 1024
const char *cli_safe(const char *s, char *buf, size_t n);

/* A file name made from text in an input file (a graph's name), so that
 * a path DIR/<it> stays inside DIR and prints cleanly: letters, digits
 * and . _ + @ = - kept, every other byte (/, controls, spaces, non-ASCII)
 * as '_', a leading '.' as '_' (no "..", no hidden file), "" as "_", cut
 * at CLI_FILE_NAME_MAX bytes (n of buf at most).  Returns buf. */
#define CLI_FILE_NAME_MAX 160
const char *cli_file_name(const char *s, char *buf, size_t n);

/* Prints s as a JSON string literal (quoted, escaped) to f. */
void cli_json_str(FILE *f, const char *s);

/* Closes the open_memstream `f` whose buffer is *text and writes that
 * text atomically to path (as cli_write_file); frees *text.  Returns 0 or
 * the exit code of what failed, printed. */
int cli_write_memstream(FILE *f, char **text, const char *path);

/* Writes a CSV table of plan p's steps atomically to path: the line
 * `header` (no newline), then per step t a row of the fields that row()
 * prints for it (each followed by a comma) and the name of the step's
 * first node, quoted.  Returns 0 or the exit code of what failed,
 * printed. */
int cli_write_step_csv(const char *path, const char *header, const fp_graph *g,
                       const fp_plan *p,
                       void (*row)(FILE *f, int32_t t, int32_t n,
                                   const void *ctx),
                       const void *ctx);

/* The names of the planner rows (solver/planner.h) that have every flag
 * in `flags` (0: all rows), in table order, joined into buf with `sep`
 * between them and `last` before the last one ("auto, ilp or
 * exhaustive").  Returns buf, cut at n bytes. */
const char *cli_methods_join(unsigned flags, const char *sep, const char *last,
                             char *buf, size_t n);

/* Who takes option `opt` (an fp_planner_option), for "--X applies to
 * ...": "the heuristics" when exactly the non-exact rows do, else
 * "--method a, b or c".  Returns buf, cut at n bytes. */
const char *cli_methods_taking(int opt, char *buf, size_t n);

/* SIGINT and SIGTERM set cli_interrupted while trapped (the solvers stop
 * with their best plan, a batch kills its items in flight), instead of
 * ending the process.  cli_untrap_interrupts restores what was there. */
extern volatile sig_atomic_t cli_interrupted;
typedef struct cli_trap {
  struct sigaction old_int, old_term;
} cli_trap;
void cli_trap_interrupts(cli_trap *saved);
void cli_untrap_interrupts(const cli_trap *saved);

/* Installs, once at start-up, what the signals that end the process do
 * to the outputs being written: SIGHUP, SIGINT, SIGQUIT, SIGTERM,
 * SIGPIPE, SIGALRM, SIGXCPU, SIGUSR1 and SIGUSR2 remove the temporary
 * files of atomic writes in progress, then end the process as before (by
 * the same signal); SIGXFSZ is ignored, so a write past the file-size
 * limit (ulimit -f) fails like any other (exit 4, the target untouched).
 * A signal ignored when the process started stays ignored. */
void cli_trap_fatal_signals(void);

/* Writes `text` atomically to path; prints the error and returns
 * EXIT_INTERNAL on failure, 0 on success. */
int cli_write_file(const char *path, const char *text);

/* Writes text that a figure or serializer made (malloc'd; NULL means it
 * ran out of memory) atomically to path, and frees it; 0 or the exit code
 * of what failed, printed. */
int cli_write_text(const char *path, char *text);

#endif /* FP_CLI_H */
