/*
 * args.c -- option parsing and value parsers for the CLI.
 */
#include "cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/io.h"
#include "model/limits.h"

/* The option named `name` (len bytes) in `opts`, or NULL. */
static cli_opt *find_in(cli_opt *opts, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
      return &opts[i];
  return NULL;
}

/* The command's option, else an input option when the command takes them. */
static cli_opt *find_long(cli_args *a, const char *name, size_t len) {
  cli_opt *o = find_in(a->opts, a->n_opts, name, len);
  if (!o && a->inputs)
    o = find_in(a->input_opts, CLI_N_INPUT_OPTS, name, len);
  return o;
}

static cli_opt *find_short(cli_args *a, char c) {
  for (int i = 0; i < a->n_opts; i++)
    if (a->opts[i].short_name == c)
      return &a->opts[i];
  return NULL;
}

/* Handles one option word at argv[*i]; may consume the next word. */
static int parse_option(cli_args *a, int argc, char **argv, int *i) {
  const char *w = argv[*i], *eq = NULL;
  cli_opt *o;
  if (w[1] == '-') {
    eq = strchr(w + 2, '=');
    o = find_long(a, w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2));
  } else {
    o = w[2] == '\0' ? find_short(a, w[1]) : NULL;
  }
  if (!o) {
    snprintf(a->error, sizeof a->error, "unknown option '%s'", w);
    return -1;
  }
  if (!o->takes_value) {
    if (eq) {
      snprintf(a->error, sizeof a->error, "option '--%s' takes no value",
               o->name);
      return -1;
    }
    o->value = "1";
    return 0;
  }
  if (eq) {
    o->value = eq + 1;
  } else if (*i + 1 < argc) {
    o->value = argv[++*i];
  } else {
    snprintf(a->error, sizeof a->error, "option '%s' needs a value", w);
    return -1;
  }
  if (a->n_seen == CLI_MAX_SEEN) {
    snprintf(a->error, sizeof a->error, "too many options");
    return -1;
  }
  a->seen[a->n_seen].opt = o;
  a->seen[a->n_seen++].value = o->value;
  return 0;
}

/* Checks and applies the input options that were given; 0 or -1 with
 * a->error set. */
static int apply_inputs(cli_args *a) {
  const char *mb = a->input_opts[0].value;
  uint64_t bytes;
  if (!mb)
    return 0;
  if (cli_parse_bytes(mb, &bytes) != 0 || bytes == 0) {
    snprintf(a->error, sizeof a->error,
             "--max-input-bytes: expected a size > 0, got '%.64s'", mb);
    return -1;
  }
  fp_set_max_input_bytes(bytes);
  return 0;
}

int cli_parse(cli_args *a, int argc, char **argv) {
  bool only_pos = false;
  a->n_pos = 0;
  a->n_seen = 0;
  a->help = false;
  a->error[0] = '\0';
  a->input_opts[0] = (cli_opt){"max-input-bytes", 0, true, NULL};
  for (int i = 1; i < argc; i++) {
    const char *w = argv[i];
    if (!only_pos && strcmp(w, "--") == 0) {
      only_pos = true;
    } else if (!only_pos &&
               (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0)) {
      a->help = true;
    } else if (!only_pos && w[0] == '-' && w[1] != '\0') {
      if (parse_option(a, argc, argv, &i) != 0)
        return -1;
    } else {
      if (a->n_pos == CLI_MAX_POS) {
        snprintf(a->error, sizeof a->error, "too many arguments");
        return -1;
      }
      a->pos[a->n_pos++] = w;
    }
  }
  return a->inputs && !a->help ? apply_inputs(a) : 0;
}

const char *cli_get(const cli_args *a, const char *name) {
  for (int i = 0; i < a->n_opts; i++)
    if (strcmp(a->opts[i].name, name) == 0)
      return a->opts[i].value;
  for (int i = 0; a->inputs && i < CLI_N_INPUT_OPTS; i++)
    if (strcmp(a->input_opts[i].name, name) == 0)
      return a->input_opts[i].value;
  return NULL;
}

int cli_get_all(const cli_args *a, const char *name, const char **out,
                int max) {
  int n = 0;
  for (int i = 0; i < a->n_seen; i++)
    if (strcmp(a->seen[i].opt->name, name) == 0) {
      if (n < max)
        out[n] = a->seen[i].value;
      n++;
    }
  return n;
}

int cli_parse_uint(const char *s, uint64_t max, uint64_t *out) {
  if (!s || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > max)
    return -1;
  *out = v;
  return 0;
}

int cli_parse_bytes(const char *s, uint64_t *out) {
  return fp_limits_parse_bytes(s, out, NULL) == FP_OK ? 0 : -1;
}

int cli_parse_seconds(const char *s, double *out) {
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v <= 0)
    return -1;
  *out = v;
  return 0;
}

int cli_parse_gap(const char *s, double *out) {
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !(v >= 0 && v < 1)) /* NaN fails */
    return -1;
  *out = v;
  return 0;
}
