/*
 * cmd_batch.c -- `fuseplan batch`: items from graph files, globs,
 * directories and a manifest, checked before any work (exit 3 naming the
 * argument or the manifest line), run by batch/ in child processes, with
 * a progress bar on a terminal.  `fuseplan batch report` is
 * cmd_batch_report.c.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "batch/expand.h"
#ifdef HAVE_MPI
#include "batch/mpi.h"
#endif
#include "cli/args.h"
#include "cli/cli.h"
#include "solver/planner.h"
#include "solver/window/cut.h"

static const char batch_help[] =
    "usage: fuseplan batch GRAPH... [--manifest FILE] -o DIR [options]\n"
    "       fuseplan batch report DIR [--json] [--svg FILE]\n"
    "       fuseplan batch merge DIR... -o OUT\n"
    "\n"
    "Solves every item (graph x peak limit) in a child process of its own\n"
    "and writes a dataset of gold plans into DIR (docs/formats.md): a\n"
    "GRAPH may be a file, a directory (its graph files) or a glob.\n"
    "Rerunning the same command skips finished items.  Exit 0 when every\n"
    "row of the dataset is ok, 1 when some row is an error or infeasible\n"
    "(so a rerun exits as the first run did), 2 for a bad option, 3 for\n"
    "bad input, 4 when interrupted (SIGINT, SIGTERM: rerun to finish) or\n"
    "a file cannot be written.\n"
    "Started by mpirun -np N (when built with MPI), rank 0 hands the items\n"
    "out to the other ranks; DIR must be on a shared filesystem\n"
    "(docs/cluster.md).\n"
    "\n"
    "  --manifest FILE  JSON Lines, one item spec per line (docs/formats.md)\n"
    "  -o, --output DIR the dataset directory (locked while a batch runs)\n"
    "  --objective O    traffic (default) | peak | weighted\n"
    "  --peak-limit L[,L...]  bytes, 'eager' (default) or N% of eager's\n"
    "                   peak; one item per limit\n"
    "  --traffic-limit B  traffic cap (--objective peak)\n"
    "  --time-limit S   seconds per item's solve (default 10)\n"
    "  --gap G, --gap2 G  each item's tolerance on the first and second\n"
    "                   level, as for solve (default 0 and 0.001; gold\n"
    "                   needs both levels proven: --gap2 0)\n"
    "  --method M       the gold method (default auto)\n"
    "  --compare M[,M...]  methods evaluated on every item (default\n"
    "                   greedy,greedy-lowmem,greedy-peak,inductor;\n"
    "                   'inductor': the *.inductor.plan.json* beside a graph)\n"
    "  --seed S         auto's window placement (default 1)\n"
    "  -j, --jobs N     items at once (default 1), each single-threaded\n"
    "  --item-memory B  address space per item (default half the RAM / N;\n"
    "                   0: none)\n"
    "  --shard K/N      only the items of shard K (1..N) of N, by id\n"
    "                   (a job array: one shard per task; then merge)\n"
    "  -q, --quiet      no progress on stderr\n" CLI_INPUT_OPTIONS_HELP
    "                       (a graph over it is an error item)\n"
    "\n"
    "merge: copies the items of shard directories into OUT and assembles\n"
    "its dataset as one run would; an id whose records differ between two\n"
    "directories (but for time_s) is refused (exit 3).\n";

/* The values every item gets unless its manifest line says otherwise. */
typedef struct defaults {
  const char *objective, *peak, *traffic, *time, *method, *seed, *compare;
  const char *gap, *gap2;
} defaults;

/* One line on stderr naming what is wrong; returns `code`. */
static int report_bad(int code, const char *fmt, va_list ap) {
  char msg[FP_ERROR_MSG_MAX + 256], safe[CLI_SAFE_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  fprintf(stderr, "fuseplan batch: %s\n", cli_safe(msg, safe, sizeof safe));
  return code;
}

#if defined(__GNUC__)
#define BATCH_PRINTF __attribute__((format(printf, 1, 2)))
#else
#define BATCH_PRINTF
#endif

/* A bad input file or manifest line: one line, returns EXIT_INPUT. */
static int bad_input(const char *fmt, ...) BATCH_PRINTF;
static int bad_input(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = report_bad(EXIT_INPUT, fmt, ap);
  va_end(ap);
  return rc;
}

/* A bad value on the command line: one line, returns EXIT_USAGE. */
static int bad_option(const char *fmt, ...) BATCH_PRINTF;
static int bad_option(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = report_bad(EXIT_USAGE, fmt, ap);
  va_end(ap);
  return rc;
}

/* Fills the item's settings (not graph or limits) from the defaults
 * overridden by the line; 0 or EXIT_INPUT naming `where`. */
static int item_settings(const defaults *d, const fp_batch_line *ln,
                         const char *where, fp_batch_item *it) {
  const char *obj = ln->objective[0] ? ln->objective : d->objective;
  const char *tl = ln->traffic_limit[0] ? ln->traffic_limit : d->traffic;
  const char *t = ln->time_limit[0] ? ln->time_limit : d->time;
  const char *m = ln->method[0] ? ln->method : d->method;
  const char *sd = ln->seed[0] ? ln->seed : d->seed;
  const char *cmp = ln->compare[0] ? ln->compare : d->compare;
  if (fp_objective_parse(obj) < 0)
    return bad_input("%s: objective '%s': expected traffic, peak or weighted",
                     where, obj);
  snprintf(it->objective, sizeof it->objective, "%s", obj);
  it->traffic_limit = UINT64_MAX;
  if (tl && cli_parse_bytes(tl, &it->traffic_limit) != 0)
    return bad_input("%s: traffic limit '%s': expected BYTES", where, tl);
  if (cli_parse_seconds(t, &it->time_limit_s) != 0)
    return bad_input("%s: time limit '%s': expected seconds > 0", where, t);
  const char *g1 = ln->gap[0] ? ln->gap : d->gap;
  const char *g2 = ln->gap2[0] ? ln->gap2 : d->gap2;
  it->gap = FP_ILP_DEFAULT_GAP, it->gap2 = FP_ILP_DEFAULT_GAP2;
  if (g1 && cli_parse_gap(g1, &it->gap) != 0)
    return bad_input("%s: gap '%s': expected a number >= 0 and < 1", where, g1);
  if (g2 && cli_parse_gap(g2, &it->gap2) != 0)
    return bad_input("%s: gap2 '%s': expected a number >= 0 and < 1", where,
                     g2);
  if (!fp_planner_find(m))
    return bad_input("%s: unknown method '%s'", where, m);
  snprintf(it->method, sizeof it->method, "%s", m);
  if (cli_parse_uint(sd, UINT64_MAX, &it->seed) != 0)
    return bad_input("%s: seed '%s': expected an integer >= 0", where, sd);
  char list[256];
  snprintf(list, sizeof list, "%s", cmp);
  it->n_compare = 0;
  for (char *save = NULL, *c = strtok_r(list, ",", &save); c;
       c = strtok_r(NULL, ",", &save)) {
    if (strcmp(c, "inductor") != 0 && !fp_planner_find(c))
      return bad_input("%s: compare: unknown method '%s'", where, c);
    if (it->n_compare == FP_BATCH_MAX_COMPARE)
      return bad_input("%s: compare: at most %d methods", where,
                       FP_BATCH_MAX_COMPARE);
    snprintf(it->compare[it->n_compare++], sizeof it->compare[0], "%s", c);
  }
  return 0;
}

/* Checks every limit of a comma-separated list into spec's peaks; 0 or
 * EXIT_INPUT. */
static int check_peaks(const char *list, const char *where,
                       fp_batch_spec *spec) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  spec->n_peaks = 0;
  for (char *save = NULL, *l = strtok_r(buf, ",", &save); l;
       l = strtok_r(NULL, ",", &save)) {
    if (spec->n_peaks == FP_BATCH_MAX_PEAKS)
      return bad_input("%s: at most %d peak limits", where, FP_BATCH_MAX_PEAKS);
    if (fp_limits_parse_peak(l, &spec->peaks[spec->n_peaks], NULL) != FP_OK)
      return bad_input("%s: peak limit '%s': expected BYTES, eager or N%%",
                       where, l);
    spec->n_peaks++;
  }
  return 0;
}

/* Parses "A..B" into lo, hi; 0 or -1. */
static int parse_range(const char *s, int32_t *lo, int32_t *hi) {
  char a[32];
  const char *dots = strstr(s, "..");
  uint64_t x, y;
  if (!dots || (size_t)(dots - s) >= sizeof a)
    return -1;
  memcpy(a, s, (size_t)(dots - s));
  a[dots - s] = '\0';
  if (cli_parse_uint(a, INT32_MAX, &x) != 0 ||
      cli_parse_uint(dots + 2, INT32_MAX, &y) != 0 || x < 1 || x > y)
    return -1;
  *lo = (int32_t)x;
  *hi = (int32_t)y;
  return 0;
}

/* The cut of a manifest line into spec; 0 or EXIT_INPUT. */
static int line_cut(const fp_batch_line *ln, const char *where,
                    fp_batch_spec *spec) {
  uint64_t count, seed = 1;
  spec->cut = ln && ln->cut_nodes[0];
  if (!spec->cut)
    return 0;
  if (parse_range(ln->cut_nodes, &spec->cut_lo, &spec->cut_hi) != 0)
    return bad_input("%s: cut.nodes '%s': expected A..B with 1 <= A <= B",
                     where, ln->cut_nodes);
  if (cli_parse_uint(ln->cut_count, FP_CUT_MAX, &count) != 0)
    return bad_input("%s: cut.count '%s': expected 0..%d", where, ln->cut_count,
                     FP_CUT_MAX);
  if (ln->cut_seed[0] && cli_parse_uint(ln->cut_seed, UINT64_MAX, &seed) != 0)
    return bad_input("%s: cut.seed '%s': expected an integer >= 0", where,
                     ln->cut_seed);
  spec->cut_count = (int32_t)count;
  spec->cut_seed = seed;
  return 0;
}

/* The settings of a manifest line over the command's (fp_batch_resolve_fn;
 * ctx: the defaults).  The message is printed here: the error only
 * stops the expansion. */
static fp_status resolve_line(const fp_batch_line *ln, const char *where,
                              fp_batch_spec *spec, void *ctx, fp_error *err) {
  const defaults *d = ctx;
  const char *peaks = ln->peak_limit[0] ? ln->peak_limit : d->peak;
  if (check_peaks(peaks, where, spec) ||
      item_settings(d, ln, where, &spec->proto) || line_cut(ln, where, spec))
    return fp_error_set(err, FP_EINPUT, "%s", ""); /* said */
  return FP_OK;
}

/* The exit code of a failed expansion (its message printed unless the
 * resolver printed it). */
static int expand_failed(const fp_error *err) {
  if (err->code == FP_ENOMEM)
    return cli_fail(err);
  if (err->msg[0])
    bad_input("%s", err->msg);
  return EXIT_INPUT;
}
/* ---- progress ------------------------------------------------------------ */

typedef struct progress_view {
  bool tty, quiet;
  double last_line;
} progress_view;

/* A bar on a terminal, a line every 10 s (and at the end) otherwise. */
static void show_progress(const fp_batch_progress *p, void *ctx) {
  progress_view *v = ctx;
  int32_t todo = p->total - p->skipped;
  double eta = p->done ? p->elapsed_s / p->done * (todo - p->done) : NAN;
  char eta_s[32] = "?";
  if (v->quiet)
    return;
  if (!isnan(eta))
    snprintf(eta_s, sizeof eta_s, "%.0f s", eta);
  if (v->tty) {
    int w = 30, full = todo ? (int)((int64_t)w * p->done / todo) : w;
    fprintf(stderr, "\r[%.*s%*s] %d/%d items, %d optimal, %d failed, ETA %s  ",
            full, "##############################", w - full, "", (int)p->done,
            (int)todo, (int)p->optimal, (int)p->failed, eta_s);
    fflush(stderr);
    return;
  }
  if (p->elapsed_s - v->last_line < 10 && p->done < todo)
    return;
  v->last_line = p->elapsed_s;
  fprintf(stderr,
          "fuseplan batch: %d/%d items done (%d skipped), %d optimal, %d "
          "failed, %.0f s, ETA %s\n",
          (int)p->done, (int)todo, (int)p->skipped, (int)p->optimal,
          (int)p->failed, p->elapsed_s, eta_s);
}

/* ---- the command --------------------------------------------------------- */

/* Half the RAM, shared among the jobs. */
static uint64_t default_item_memory(int32_t jobs) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0)
    return 0;
  return (uint64_t)pages * (uint64_t)size / 2 / (uint64_t)jobs;
}

/* Reads the batch-wide options into o; 0 or an exit code. */
static int read_run_options(const cli_args *a, fp_batch_options *o) {
  const char *j = cli_get(a, "jobs"), *mem = cli_get(a, "item-memory");
  uint64_t v;
  o->dir = cli_get(a, "output");
  o->version = PACKAGE_VERSION;
  o->jobs = 1;
  if (!o->dir)
    return cli_usage_error("batch", "expected -o DIR");
  if (j && (cli_parse_uint(j, 1024, &v) != 0 || v < 1))
    return bad_option("--jobs '%s': expected 1..1024", j);
  if (j)
    o->jobs = (int32_t)v;
  o->item_memory = default_item_memory(o->jobs);
  if (mem && cli_parse_bytes(mem, &o->item_memory) != 0)
    return bad_option("--item-memory '%s': expected BYTES", mem);
  return 0;
}

/* Parses --shard K/N (1 <= K <= N <= 1000000) into *k, *n (1/1 when
 * absent); 0 or EXIT_USAGE. */
static int read_shard(const cli_args *a, int32_t *k, int32_t *n) {
  const char *s = cli_get(a, "shard"), *slash = s ? strchr(s, '/') : NULL;
  char left[32];
  uint64_t x, y;
  *k = *n = 1;
  if (!s)
    return 0;
  if (!slash || (size_t)(slash - s) >= sizeof left)
    return bad_option("--shard '%s': expected K/N with 1 <= K <= N", s);
  memcpy(left, s, (size_t)(slash - s));
  left[slash - s] = '\0';
  if (cli_parse_uint(left, 1000000, &x) != 0 ||
      cli_parse_uint(slash + 1, 1000000, &y) != 0 || x < 1 || y < 1 || x > y)
    return bad_option("--shard '%s': expected K/N with 1 <= K <= N <= 1000000",
                      s);
  *k = (int32_t)x;
  *n = (int32_t)y;
  return 0;
}

/* A warning of the expansion (a path skipped), on one line. */
static void show_warning(const char *msg, void *ctx) {
  char safe[CLI_SAFE_MAX];
  (void)ctx;
  fprintf(stderr, "fuseplan batch: warning: %s\n",
          cli_safe(msg, safe, sizeof safe));
}

/* Every item of the command line into L; 0 or an exit code. */
static int collect_items(const cli_args *a, fp_batch_items *L) {
  defaults d = {cli_get(a, "objective"),     cli_get(a, "peak-limit"),
                cli_get(a, "traffic-limit"), cli_get(a, "time-limit"),
                cli_get(a, "method"),        cli_get(a, "seed"),
                cli_get(a, "compare"),       cli_get(a, "gap"),
                cli_get(a, "gap2")};
  d.objective = d.objective ? d.objective : "traffic";
  d.peak = d.peak ? d.peak : "eager";
  d.time = d.time ? d.time : "10";
  d.method = d.method ? d.method : fp_planner_default()->name;
  d.seed = d.seed ? d.seed : "1";
  d.compare = d.compare ? d.compare
                        : "greedy,greedy-lowmem,greedy-peak,"
                          "inductor";
  fp_batch_line none;
  fp_batch_spec *spec = calloc(1, sizeof *spec);
  fp_error err;
  fp_error_clear(&err);
  memset(&none, 0, sizeof none);
  if (!spec)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  fp_batch_items_on_warning(L, show_warning, NULL);
  /* The same checks serve manifest lines (a bad input file: EXIT_INPUT)
   * and the command line, where a bad value is a usage error. */
  int rc = check_peaks(d.peak, "--peak-limit", spec);
  if (!rc)
    rc = item_settings(&d, &none, "options", &spec->proto);
  if (rc == EXIT_INPUT)
    rc = EXIT_USAGE;
  for (int i = 0; !rc && i < a->n_pos; i++) {
    char where[64];
    snprintf(where, sizeof where, "argument %d", i + 1);
    if (fp_batch_items_add_path(L, spec, a->pos[i], NULL, where, &err) != FP_OK)
      rc = expand_failed(&err);
  }
  free(spec);
  if (!rc && cli_get(a, "manifest") &&
      fp_batch_items_add_manifest(L, cli_get(a, "manifest"), resolve_line, &d,
                                  &err) != FP_OK)
    rc = expand_failed(&err);
  int32_t n = 0;
  fp_batch_items_get(L, &n);
  if (!rc && n == 0)
    rc = bad_input("no items: give GRAPH files or --manifest");
  return rc;
}

/* The closing summary: this run's items, then the dataset's rows (which
 * decide the exit status, so that a rerun exits as the first run did). */
static void print_summary(const fp_batch_progress *last, const char *dir) {
  fprintf(stderr,
          "fuseplan batch: %d items: %d run (%d optimal, %d failed or "
          "infeasible), %d already done; dataset in %s: %d rows, %d failed or "
          "infeasible\n",
          (int)last->total, (int)last->done, (int)last->optimal,
          (int)last->failed, (int)last->skipped, dir, (int)last->dataset_items,
          (int)last->dataset_failed);
}

/* Runs the batch under the lock; the exit code. */
static int run_batch(const cli_args *a, fp_batch_options *o,
                     const fp_batch_items *L) {
  fp_error err;
  int fd;
  progress_view view = {isatty(2), cli_get(a, "quiet") != NULL, 0};
  fp_batch_progress last;
  if (fp_batch_lock(o->dir, &fd, &err) != FP_OK)
    return bad_input("%s", err.msg);
  cli_trap trap;
  cli_trap_interrupts(&trap);
  o->progress = show_progress;
  o->progress_ctx = &view;
  o->progress_every_s = view.tty ? 1 : 10;
  o->cancel = &cli_interrupted;
  o->warn = show_warning;
  int32_t n;
  const fp_batch_item *items = fp_batch_items_get(L, &n);
  fp_status st = fp_batch_run(items, n, o, &last, &err);
  cli_untrap_interrupts(&trap);
  fp_batch_unlock(fd);
  if (view.tty && !view.quiet)
    fputc('\n', stderr);
  if (st != FP_OK)
    return fprintf(stderr, "fuseplan batch: %s\n", err.msg), EXIT_INTERNAL;
  if (last.dataset_failed || !view.quiet)
    print_summary(&last, o->dir);
  return last.dataset_failed ? EXIT_PROBLEM : EXIT_OK;
}

#ifdef HAVE_MPI
/* The batch over the ranks of an MPI job (batch/mpi.h): rank 0 locks DIR,
 * shows progress and the items each worker ran; the exit code (rank 0's;
 * a failure on rank 0 aborts the job, so that no worker waits). */
static int run_batch_mpi(const cli_args *a, fp_batch_options *o,
                         const fp_batch_items *L, int *argc, char ***argv) {
  fp_error err;
  int rank = 0, size = 1, fd = -1, rc = EXIT_OK;
  fp_error_clear(&err);
  if (fp_batch_mpi_init(argc, argv, &rank, &size, &err) != FP_OK)
    return fprintf(stderr, "fuseplan batch: %s\n", err.msg), EXIT_INTERNAL;
  progress_view view = {rank == 0 && isatty(2),
                        rank != 0 || cli_get(a, "quiet") != NULL, 0};
  fp_batch_progress last;
  fp_batch_mpi_counts counts;
  memset(&counts, 0, sizeof counts);
  memset(&last, 0, sizeof last);
  if (rank == 0 && fp_batch_lock(o->dir, &fd, &err) != FP_OK) {
    bad_input("%s", err.msg);
    fp_batch_mpi_abort(EXIT_INPUT);
  }
  cli_trap trap;
  cli_trap_interrupts(&trap);
  o->progress = rank == 0 ? show_progress : NULL;
  o->progress_ctx = &view;
  o->progress_every_s = view.tty ? 1 : 10;
  o->cancel = &cli_interrupted;
  o->warn = rank == 0 ? show_warning : NULL;
  int32_t n;
  const fp_batch_item *items = fp_batch_items_get(L, &n);
  fp_status st = fp_batch_mpi_run(items, n, o, &last, &counts, &err);
  cli_untrap_interrupts(&trap);
  if (rank == 0 && counts.n_lost)
    fprintf(stderr,
            "fuseplan batch: the last MPI run over %s died with %d items in "
            "flight (run again now): %s\n",
            o->dir, (int)counts.n_lost, counts.lost);
  if (view.tty && !view.quiet)
    fputc('\n', stderr);
  if (rank == 0 && counts.n_lost_now)
    fprintf(stderr,
            "fuseplan batch: %d items lost with their worker rank, recorded "
            "as errors (a rerun retries them): %s\n",
            (int)counts.n_lost_now, counts.lost_now);
  if (st != FP_OK) {
    fprintf(stderr, "fuseplan batch: rank %d: %s\n", rank, err.msg);
    fp_batch_unlock(fd);
    fp_batch_mpi_abort(EXIT_INTERNAL);
  }
  if (rank == 0) {
    fp_batch_unlock(fd);
    if (last.dataset_failed || !view.quiet) {
      print_summary(&last, o->dir);
      fprintf(stderr, "fuseplan batch: items per worker:");
      for (int32_t r = 1; r < counts.size; r++)
        fprintf(stderr, " rank %d: %d%s;", (int)r, (int)counts.per_rank[r],
                counts.rank_lost[r] ? " (lost)" : "");
      fputc('\n', stderr);
    }
    rc = last.dataset_failed ? EXIT_PROBLEM : EXIT_OK;
  }
  free(counts.per_rank);
  free(counts.rank_lost);
  return fp_batch_mpi_finalize(rc);
}
#endif

int cmd_batch(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "report") == 0)
    return cmd_batch_report(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "merge") == 0)
    return cmd_batch_merge(argc - 1, argv + 1);
  cli_opt opts[] = {
      {"manifest", 0, true, NULL},      {"output", 'o', true, NULL},
      {"objective", 0, true, NULL},     {"peak-limit", 0, true, NULL},
      {"traffic-limit", 0, true, NULL}, {"time-limit", 0, true, NULL},
      {"method", 0, true, NULL},        {"compare", 0, true, NULL},
      {"seed", 0, true, NULL},          {"jobs", 'j', true, NULL},
      {"item-memory", 0, true, NULL},   {"quiet", 'q', false, NULL},
      {"shard", 0, true, NULL},         {"gap", 0, true, NULL},
      {"gap2", 0, true, NULL}};
  cli_args a = {
      .opts = opts, .n_opts = sizeof opts / sizeof *opts, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("batch", "%s", a.error);
  if (a.help)
    return fputs(batch_help, stdout), EXIT_OK;
  fp_batch_options o;
  fp_batch_items *L = fp_batch_items_create(PACKAGE_VERSION);
  memset(&o, 0, sizeof o);
  int32_t shard_k, shard_n;
  int rc = L ? read_run_options(&a, &o)
             : cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if (!rc)
    rc = read_shard(&a, &shard_k, &shard_n);
  if (!rc)
    rc = collect_items(&a, L);
  if (!rc)
    fp_batch_items_keep_shard(L, shard_k, shard_n);
#ifdef HAVE_MPI
  if (!rc && fp_batch_mpi_launched()) {
    rc = run_batch_mpi(&a, &o, L, &argc, &argv);
    fp_batch_items_destroy(L);
    return rc;
  }
#endif
  if (!rc)
    rc = run_batch(&a, &o, L);
  fp_batch_items_destroy(L);
  return rc;
}
