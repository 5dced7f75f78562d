/*
 * common.c -- helpers every subcommand shares: loading with error
 * reporting, exit-code mapping, byte formatting, JSON strings, output
 * files, and the method lists of the planner table for help texts.
 * Only cli/ prints.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/eval.h"
#include "model/io.h"
#include "model/json.h"
#include "solver/planner.h"

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

/* Whether byte p[0] starts a control character: C0, DEL, or the UTF-8
 * form (C2 80 .. C2 9F) of a C1 control. */
static bool is_control(const unsigned char *p) {
  return p[0] < 0x20 || p[0] == 0x7f ||
         (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
}

const char *cli_safe(const char *s, char *buf, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p && !is_control(p))
    p++;
  if (!*p || n == 0)
    return s;
  size_t k = 0;
  for (p = (const unsigned char *)s; *p && k + 1 < n; p++) {
    char esc[8];
    if (!is_control(p)) {
      buf[k++] = (char)*p;
      continue;
    }
    if (p[0] == 0xc2)
      snprintf(esc, sizeof esc, "\\u00%02x", *++p);
    else
      snprintf(esc, sizeof esc, "\\x%02x", *p);
    size_t e = strlen(esc);
    if (k + e >= n)
      break;
    memcpy(buf + k, esc, e);
    k += e;
  }
  buf[k] = '\0';
  return buf;
}

const char *cli_file_name(const char *s, char *buf, size_t n) {
  static const char keep[] = "._+@=-";
  size_t k = 0, cap = n < CLI_FILE_NAME_MAX + 1 ? n : CLI_FILE_NAME_MAX + 1;
  if (n == 0)
    return buf;
  for (; s[k] && k + 1 < cap; k++) {
    unsigned char c = (unsigned char)s[k];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || (c && strchr(keep, c));
    buf[k] = ok && !(k == 0 && c == '.') ? (char)c : '_';
  }
  if (k == 0 && cap > 1)
    buf[k++] = '_';
  buf[k] = '\0';
  return buf;
}

int cli_fail(const fp_error *err) {
  char safe[CLI_SAFE_MAX];
  fprintf(stderr, "fuseplan: %s\n", cli_safe(err->msg, safe, sizeof safe));
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
  char msg[FP_ERROR_MSG_MAX + 256], safe[CLI_SAFE_MAX];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "fuseplan %s: %s\n(run 'fuseplan %s --help' for usage)\n",
          cmd, cli_safe(msg, safe, sizeof safe), cmd);
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

int cli_load_starts(const cli_args *a, const fp_graph *g, int32_t k,
                    cli_starts *out) {
  const char *paths[CLI_MAX_STARTS];
  int n = cli_get_all(a, "start", paths, CLI_MAX_STARTS);
  out->n = 0;
  if (n > CLI_MAX_STARTS) {
    fprintf(stderr, "fuseplan: at most %d --start plans\n", CLI_MAX_STARTS);
    return EXIT_USAGE;
  }
  for (int i = 0; i < n; i++) {
    fp_error err;
    fp_plan *p = NULL;
    int rc = cli_load_plan(paths[i], g, &p);
    if (rc)
      return rc;
    out->plans[out->n++] = p;
    if (fp_plan_check(g, p, k, &err) != FP_OK) {
      if (err.code == FP_ENOMEM)
        return cli_fail(&err);
      char s1[CLI_SAFE_MAX], s2[CLI_SAFE_MAX];
      fprintf(stderr, "fuseplan: %s: not a legal plan of %s: %s\n", paths[i],
              cli_safe(fp_graph_name(g), s1, sizeof s1),
              cli_safe(err.msg, s2, sizeof s2));
      return EXIT_INPUT;
    }
  }
  return 0;
}

void cli_starts_free(cli_starts *s) {
  for (int i = 0; i < s->n; i++)
    fp_plan_destroy(s->plans[i]);
  s->n = 0;
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

volatile sig_atomic_t cli_interrupted;

static void on_interrupt(int sig) {
  (void)sig;
  cli_interrupted = 1;
}

void cli_trap_interrupts(cli_trap *saved) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &saved->old_int);
  sigaction(SIGTERM, &sa, &saved->old_term);
}

void cli_untrap_interrupts(const cli_trap *saved) {
  sigaction(SIGINT, &saved->old_int, NULL);
  sigaction(SIGTERM, &saved->old_term, NULL);
}

/* Removes the temporary files in progress and lets the signal end the
 * process: the disposition was reset to the default on entry
 * (SA_RESETHAND), and the raised signal is delivered on return. */
static void on_fatal_signal(int sig) {
  int saved = errno;
  fp_file_remove_temps();
  raise(sig);
  errno = saved;
}

void cli_trap_fatal_signals(void) {
  static const int fatal[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE,
                              SIGALRM, SIGXCPU, SIGUSR1, SIGUSR2, SIGXFSZ};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fatal[i] == SIGXFSZ ? SIG_IGN : on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    sigfillset(&sa.sa_mask);
    if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(fatal[i], &sa, NULL);
  }
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

int cli_write_step_csv(const char *path, const char *header, const fp_graph *g,
                       const fp_plan *p,
                       void (*row)(FILE *f, int32_t t, int32_t n,
                                   const void *ctx),
                       const void *ctx) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  fprintf(f, "%s\n", header);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t n;
    const int32_t *grp = fp_plan_group(p, t, &n);
    row(f, t, n, ctx);
    fputc('"', f);
    for (const char *c = fp_graph_node(g, grp[0])->name; *c; c++) {
      if (*c == '"')
        fputc('"', f); /* CSV doubles quotes inside a quoted field */
      fputc(*c, f);
    }
    fputs("\"\n", f);
  }
  return cli_write_memstream(f, &text, path);
}

int cli_write_text(const char *path, char *text) {
  if (!text)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  int rc = cli_write_file(path, text);
  free(text);
  return rc;
}
