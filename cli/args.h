/*
 * args.h -- a small long-option parser for the subcommands.
 *
 * Options are declared in a table; "--name value", "--name=value" and
 * "-o value" forms are accepted, "--" ends options.  Parsing is strict: an
 * unknown option, a missing value, or too many positionals is a usage
 * error with a message.  A command that reads graph or plan files sets
 * `inputs`, and then also takes the input options, the same for every
 * such command (CLI_INPUT_OPTIONS_HELP): --max-input-bytes.
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

/* The --help lines of the input options, for every command that sets
 * cli_args.inputs. */
#define CLI_INPUT_OPTIONS_HELP                                                 \
  "  --max-input-bytes B  refuse an input larger than B bytes after\n"         \
  "                       decompression, before reading more (default\n"       \
  "                       4GiB; exit 3)\n"

#define CLI_N_INPUT_OPTS 1

typedef struct cli_args {
  cli_opt *opts;
  int n_opts;
  bool inputs; /* also take the input options (and apply them) */
  cli_opt input_opts[CLI_N_INPUT_OPTS]; /* filled by cli_parse */
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

/* Parses argv[1..argc) (argv[0] is the subcommand).  With args->inputs,
 * also takes the input options and applies them: --max-input-bytes B
 * (a byte size > 0) sets the input limit of every later load
 * (fp_set_max_input_bytes).  Returns 0, or -1 with args->error set (a bad
 * value included, and then nothing is applied). */
int cli_parse(cli_args *args, int argc, char **argv);

/* The value of option `name`, or NULL when absent (the last one given
 * when it is given more than once). */
const char *cli_get(const cli_args *args, const char *name);

/* The values of every occurrence of option `name`, in order: up to `max`
 * of them into out[]; returns how many were given. */
int cli_get_all(const cli_args *args, const char *name, const char **out,
                int max);

/* Parses a byte count with optional suffix (B, K/KB/KiB, M/MiB, G/GiB,
 * T/TiB; K = KiB = 1024) as fp_limits_parse_bytes does.  Returns 0, or
 * -1 for bad syntax / overflow. */
int cli_parse_bytes(const char *s, uint64_t *out);

/* Parses a non-negative decimal integer not above `max`; 0 or -1. */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Parses a positive, finite decimal number of seconds; 0 or -1. */
int cli_parse_seconds(const char *s, double *out);

/* Parses a relative gap tolerance: a decimal number in [0, 1); 0 or -1. */
int cli_parse_gap(const char *s, double *out);

#endif /* FP_ARGS_H */
