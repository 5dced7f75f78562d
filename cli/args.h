/*
 * args.h -- a small long-option parser for the subcommands.
 *
 * Options are declared in a table; "--name value", "--name=value" and
 * "-o value" forms are accepted, "--" ends options.  Parsing is strict: an
 * unknown option, a missing value, or too many positionals is a usage
 * error with a message.
 */
#ifndef FP_ARGS_H
#define FP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cli_opt {
  const char *name; /* long name without dashes, e.g. "time-limit" */
  char short_name;  /* 0 = none */
  bool takes_value;
  const char *value; /* set by parsing (flags get "1") */
} cli_opt;

#define CLI_MAX_POS 64
#define CLI_MAX_SEEN 256 /* option occurrences kept for cli_get_all */

typedef struct cli_args {
  cli_opt *opts;
  int n_opts;
  const char *pos[CLI_MAX_POS];
  int n_pos;
  bool help;
  char error[256];
  /* Every occurrence of a valued option, in command-line order (for
   * repeatable options). */
  struct {
    const cli_opt *opt;
    const char *value;
  } seen[CLI_MAX_SEEN];
  int n_seen;
} cli_args;

/* Parses argv[1..argc) (argv[0] is the subcommand).  Returns 0, or -1 with
 * args->error set. */
int cli_parse(cli_args *args, int argc, char **argv);

/* The value of option `name`, or NULL when absent (the last one given
 * when it is given more than once). */
const char *cli_get(const cli_args *args, const char *name);

/* The values of every occurrence of option `name`, in order: up to `max`
 * of them into out[]; returns how many were given. */
int cli_get_all(const cli_args *args, const char *name, const char **out,
                int max);

/* Parses a byte count with optional suffix (B, K/KB/KiB, M/MiB, G/GiB,
 * T/TiB; K = KiB = 1024).  Returns 0, or -1 for bad syntax / overflow. */
int cli_parse_bytes(const char *s, uint64_t *out);

/* Parses a non-negative decimal integer not above `max`; 0 or -1. */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Parses a positive, finite decimal number of seconds; 0 or -1. */
int cli_parse_seconds(const char *s, double *out);

#endif /* FP_ARGS_H */
