/*
 * item.c -- one batch item (batch.h): its id, and its work in the child
 * process: load (and cut) the graph, solve it, evaluate the compared
 * methods, write the gold plan and the label rows.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "batch/batch.h"
#include "batch/labels.h"
#include "model/eval.h"
#include "model/io.h"
#include "model/json.h"
#include "model/util.h"
#include "solver/planner.h"

void fp_sha256_hex(const void *data, size_t len, char hex[65]) {
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, len, data);
  sha256_digest(&ctx, sizeof digest, digest);
  for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
    snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

/* The SHA-256 of what gzread gives from the open file z (plain or gzip
 * content alike), at most `limit` bytes of it, through a 64 KiB buffer:
 * the whole file is never held. */
static fp_status hash_stream(gzFile z, const char *path, uint64_t limit,
                             char hex[65], fp_error *err) {
  enum { CHUNK = 1 << 16 };
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  unsigned char *buf = malloc(CHUNK);
  uint64_t total = 0;
  fp_status st = FP_OK;
  int k, zerr;
  if (!buf)
    return fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
  sha256_init(&ctx);
  while (st == FP_OK && (k = gzread(z, buf, CHUNK)) > 0) {
    if ((total += (uint64_t)k) > limit)
      st = fp_error_set(err, FP_ELIMIT, "%s: larger than %llu bytes", path,
                        (unsigned long long)limit);
    sha256_update(&ctx, (size_t)k, buf);
  }
  const char *why = gzerror(z, &zerr);
  if (st == FP_OK && zerr != Z_OK && zerr != Z_STREAM_END)
    st = fp_error_set(err, zerr == Z_ERRNO ? FP_EIO : FP_EINPUT,
                      "%s: read error: %s", path,
                      zerr == Z_ERRNO ? strerror(errno) : why);
  free(buf);
  sha256_digest(&ctx, sizeof digest, digest);
  for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
    snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  return st;
}

fp_status fp_batch_graph_sha256(const char *path, char hex[65], fp_error *err) {
  struct stat sb;
  /* O_NONBLOCK: a FIFO put in the file's place is not waited on. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fp_error_set(err, FP_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return fp_error_set(err, FP_EINPUT, "%s: not a regular file", path);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  gzFile z = gzdopen(fd, "rb");
  if (!z) {
    close(fd);
    return fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
  }
  fp_status st = hash_stream(z, path, fp_max_input_bytes(), hex, err);
  gzclose(z);
  return st;
}

void fp_batch_peak_text(const fp_batch_item *it, char *buf, size_t n) {
  if (it->peak.kind == FP_PEAK_EAGER)
    snprintf(buf, n, "eager");
  else if (it->peak.kind == FP_PEAK_PERCENT)
    snprintf(buf, n, "%llu%%", (unsigned long long)it->peak.value);
  else
    snprintf(buf, n, "%llu", (unsigned long long)it->peak.value);
}

void fp_batch_item_spec(const fp_batch_item *it, char *buf, size_t n) {
  char peak[32], traffic[32] = "none";
  size_t len;
  fp_batch_peak_text(it, peak, sizeof peak);
  if (it->traffic_limit != UINT64_MAX)
    snprintf(traffic, sizeof traffic, "%llu",
             (unsigned long long)it->traffic_limit);
  /* Only what decides the result, in a fixed order: never a path. */
  snprintf(buf, n,
           "fuseplan-batch-item 1\ngraph_sha256 %s\ncut %d+%d\nobjective "
           "%s\npeak_limit %s\ntraffic_limit %s\nmethod %s\ntime_limit "
           "%.17g\nseed %llu\ncompare",
           it->graph_sha256, (int)it->cut.first, (int)it->cut.count,
           it->objective, peak, traffic, it->method, it->time_limit_s,
           (unsigned long long)it->seed);
  for (int32_t i = 0; i < it->n_compare; i++)
    if ((len = strlen(buf)) < n)
      snprintf(buf + len, n - len, " %s", it->compare[i]);
  /* Tolerances other than the defaults only: older items keep their ids. */
  if ((it->gap != FP_ILP_DEFAULT_GAP || it->gap2 != FP_ILP_DEFAULT_GAP2) &&
      (len = strlen(buf)) < n)
    snprintf(buf + len, n - len, "\ngap %.17g\ngap2 %.17g", it->gap, it->gap2);
  if ((len = strlen(buf)) < n)
    snprintf(buf + len, n - len, "\n");
}

void fp_batch_item_finish(fp_batch_item *it, const char *version) {
  char spec[1024], all[1200];
  fp_batch_item_spec(it, spec, sizeof spec);
  snprintf(all, sizeof all, "%sversion %s\n", spec, version);
  fp_sha256_hex(all, strlen(all), it->id);
}

/* ---- the work of the child ----------------------------------------------- */

#ifdef FP_TEST_HOOKS
/* Test hook: FUSEPLAN_TEST_FAULT=KIND:NAME makes items whose graph name
 * contains NAME abort, exhaust memory, crash or hang, so that the tests
 * can check that the batch records it and goes on. */
static void test_fault(const char *graph_name) {
  const char *f = getenv("FUSEPLAN_TEST_FAULT"), *colon;
  if (!f || !(colon = strchr(f, ':')) || !strstr(graph_name, colon + 1))
    return;
  size_t k = (size_t)(colon - f);
  if (k == 5 && strncmp(f, "abort", 5) == 0)
    abort();
  if (k == 4 && strncmp(f, "segv", 4) == 0)
    raise(SIGSEGV);
  if (k == 4 && strncmp(f, "hang", 4) == 0)
    for (;;)
      pause();
  struct rlimit as;
  if (k == 3 && strncmp(f, "oom", 3) == 0 &&
      (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY))
    abort(); /* no limit to run into (a sanitizer build): never exhaust RAM */
  if (k == 3 && strncmp(f, "oom", 3) == 0)
    for (;;) { /* until the item's memory limit (of addresses) stops it;
                  untouched, so that the test costs no RAM */
      volatile char *p = malloc((size_t)64 << 20);
      if (!p)
        abort(); /* what an allocation inside GLPK does */
      p[0] = 1;
    }
}
#endif

/* The request of method `pl` for the item. */
static void item_request(const fp_batch_item *it, const fp_planner *pl,
                         uint64_t limit, fp_plan_request *req) {
  fp_plan_request_init(req, pl);
  req->limits.peak = limit;
  int o = fp_objective_parse(it->objective);
  req->ilp.objective = o < 0 ? FP_OBJECTIVE_TRAFFIC : (fp_objective)o;
  req->limits.traffic = it->traffic_limit;
  req->ilp.time_limit_s = it->time_limit_s;
  req->ilp.gap = it->gap;
  req->ilp.gap2 = it->gap2;
  req->ilp.seed = it->seed;
  req->ilp.jobs = 1;
}

/* The compiler's plan beside the item's graph, for the whole graph g
 * (NULL when there is none or it does not load: it then counts as
 * absent). */
static fp_plan *load_inductor(const fp_batch_item *it, const fp_graph *g) {
  fp_plan *p = NULL;
  if (!it->inductor[0] || fp_plan_load_file(it->inductor, g, &p, NULL) != FP_OK)
    return NULL;
  return p;
}

/* Plan p of a whole graph restricted to cut c, whose sub-graph is sg:
 * each group's nodes inside the cut, in p's order (sub-graph node i is
 * node c.first + i).  The compiler's plan on a cut is that.  NULL when
 * it is no legal plan of sg. */
static fp_plan *restrict_to_cut(const fp_plan *p, fp_cut c,
                                const fp_graph *sg) {
  fp_plan *q = fp_plan_create();
  fp_status st = q ? FP_OK : FP_ENOMEM;
  for (int32_t t = 0; st == FP_OK && t < fp_plan_group_count(p); t++) {
    int32_t len;
    bool opened = false;
    const int32_t *nodes = fp_plan_group(p, t, &len);
    for (int32_t i = 0; st == FP_OK && i < len; i++) {
      int32_t v = nodes[i] - c.first;
      if (v < 0 || v >= c.count)
        continue;
      if (!opened && (st = fp_plan_open_group(q, NULL)) != FP_OK)
        break;
      opened = true;
      st = fp_plan_append_node(q, v, NULL);
    }
  }
  if (st == FP_OK)
    st = fp_plan_check(sg, q, 0, NULL);
  if (st != FP_OK) {
    fp_plan_destroy(q);
    return NULL;
  }
  return q;
}

/* Loads the item's graph (and cuts it) and the compiler's plan for it
 * into *inductor (NULL when absent or illegal); the loader's message
 * into rec on failure. */
static fp_graph *load_item_graph(const fp_batch_item *it, fp_batch_record *rec,
                                 fp_plan **inductor) {
  fp_graph *g = NULL, *whole = NULL;
  fp_error e;
  fp_error_clear(&e);
  *inductor = NULL;
  if (fp_graph_load_file(it->source, &whole, &e) == FP_OK)
    *inductor = load_inductor(it, whole);
  if (e.code == FP_OK && it->cut.count &&
      fp_graph_cut(whole, it->cut, &g, &e) == FP_OK) {
    fp_plan *q = *inductor ? restrict_to_cut(*inductor, it->cut, g) : NULL;
    fp_plan_destroy(*inductor);
    *inductor = q;
    fp_graph_destroy(whole);
    whole = g;
  }
  if (e.code == FP_OK && *inductor &&
      fp_plan_check(whole, *inductor, 0, NULL) != FP_OK) {
    fp_plan_destroy(*inductor);
    *inductor = NULL;
  }
  if (e.code != FP_OK) {
    fp_graph_destroy(whole);
    fp_plan_destroy(*inductor);
    *inductor = NULL;
    snprintf(rec->status, sizeof rec->status, "error");
    snprintf(rec->error, sizeof rec->error, "%s", e.msg);
    return NULL;
  }
  return whole;
}

/* Evaluates the compared methods into rec. */
static void run_compare(const fp_batch_item *it, const fp_graph *g,
                        uint64_t limit, const fp_plan *inductor,
                        fp_batch_record *rec) {
  for (int32_t i = 0; i < it->n_compare; i++) {
    fp_batch_compare *c = &rec->compare[rec->n_compare++];
    fp_metrics m;
    snprintf(c->method, sizeof c->method, "%s", it->compare[i]);
    const fp_planner *pl = fp_planner_find(it->compare[i]);
    fp_plan *p = fp_plan_create();
    fp_plan_request req;
    fp_status st = FP_EARG;
    if (strcmp(it->compare[i], "inductor") == 0 && inductor)
      st = fp_plan_eval(g, inductor, &m, NULL, NULL);
    else if (pl && p) {
      item_request(it, pl, limit, &req);
      st = fp_planner_run(pl, g, &req, p, &m, NULL);
    }
    fp_plan_destroy(p);
    c->present = st == FP_OK;
    c->traffic_bytes = st == FP_OK ? m.traffic_bytes : 0;
    c->peak_bytes = st == FP_OK ? m.peak_bytes : 0;
    c->kernels = st == FP_OK ? m.kernels : -1;
  }
}

/* Fills the figures of the gold plan p into rec. */
static void record_plan(const fp_batch_item *it, const fp_planner *pl,
                        const fp_plan *p, const fp_metrics *m,
                        fp_batch_record *rec) {
  const fp_solver_info *si = fp_plan_solver_const(p);
  rec->traffic_bytes = (int64_t)m->traffic_bytes;
  rec->peak_bytes = (int64_t)m->peak_bytes;
  rec->kernels = m->kernels;
  rec->bound = si->bound;
  rec->gap = si->gap;
  bool optimal = strcmp(si->status, "optimal") == 0;
  rec->proven = si->levels_proven >= 0 ? si->levels_proven : 0;
  if (optimal && strcmp(pl->name, "exhaustive") == 0)
    rec->proven = 2; /* enumeration: the lexicographic optimum */
  rec->gold = optimal && rec->proven >= 2;
  snprintf(rec->status, sizeof rec->status, "%s",
           optimal ? "optimal" : "feasible");
  snprintf(rec->plan, sizeof rec->plan, "plans/%s.json.gz", it->id);
}

/* Solves the loaded graph g (the compiler's plan for it: `inductor` or
 * NULL); FP_OK with rec's status set, or an output failure (FP_EIO,
 * FP_ENOMEM). */
static fp_status solve_graph(const fp_batch_item *it, const fp_graph *g,
                             const fp_plan *inductor, const char *dir,
                             fp_batch_record *rec, fp_error *err) {
  const fp_planner *pl = fp_planner_find(it->method);
  fp_plan *eager = fp_plan_create(), *p = fp_plan_create();
  fp_metrics em, m;
  fp_plan_request req;
  fp_error e;
  fp_status st = FP_OK;
  fp_error_clear(&e);
  if (!pl || !eager || !p || fp_plan_make_eager(eager, g, &e) != FP_OK ||
      fp_plan_eval(g, eager, &em, NULL, &e) != FP_OK) {
    st = fp_error_set(err, FP_ENOMEM, "%s", pl ? e.msg : "unknown method");
    goto done;
  }
  uint64_t limit = 1;
  if (fp_limits_resolve_peak(&it->peak, em.peak_bytes, &limit, &e) != FP_OK) {
    st = fp_error_set(err, FP_EARG, "%s", e.msg);
    goto done;
  }
  rec->peak_limit_bytes = (int64_t)limit;
  item_request(it, pl, limit, &req);
  /* On a whole graph the compiler's plan joins the starts; a cut is
   * small enough for the exact model, which needs none. */
  req.ilp.starts = &inductor;
  req.ilp.n_starts = inductor && !it->cut.count ? 1 : 0;
  fp_status run = fp_planner_run(pl, g, &req, p, &m, &e);
  if (run == FP_OK && fp_plan_check(g, p, 0, &e) != FP_OK)
    run = FP_EINTERNAL; /* a gold plan that does not verify is no gold */
  if (run == FP_OK && m.peak_bytes > limit &&
      (pl->flags & FP_PLANNER_PEAK_LIMITED))
    run = fp_error_set(&e, FP_EINFEASIBLE,
                       "the plan's peak is above the "
                       "limit");
  if (run != FP_OK) {
    snprintf(rec->status, sizeof rec->status, "%s",
             run == FP_EINFEASIBLE ? "infeasible" : "error");
    snprintf(rec->error, sizeof rec->error, "%s", e.msg);
    goto done;
  }
  record_plan(it, pl, p, &m, rec);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, rec->plan);
  if ((st = fp_plan_save_file(p, g, &m, path, err)) != FP_OK)
    goto done;
  run_compare(it, g, limit, inductor, rec);
  st = fp_batch_write_labels(g, p, inductor, rec, dir, err);
done:
  fp_plan_destroy(eager);
  fp_plan_destroy(p);
  return st;
}

fp_status fp_batch_item_solve(const fp_batch_item *it, const char *dir,
                              const char *version, fp_batch_record *rec,
                              fp_error *err) {
  fp_batch_record_init(rec);
  snprintf(rec->id, sizeof rec->id, "%s", it->id);
  snprintf(rec->source, sizeof rec->source, "%s", it->source);
  snprintf(rec->graph_sha256, sizeof rec->graph_sha256, "%s", it->graph_sha256);
  snprintf(rec->objective, sizeof rec->objective, "%s", it->objective);
  fp_batch_peak_text(it, rec->peak_limit, sizeof rec->peak_limit);
  rec->traffic_limit_bytes =
      it->traffic_limit == UINT64_MAX ? -1 : (int64_t)it->traffic_limit;
  snprintf(rec->method, sizeof rec->method, "%s", it->method);
  snprintf(rec->fuseplan_version, sizeof rec->fuseplan_version, "%s", version);
  snprintf(rec->glpk_version, sizeof rec->glpk_version, "%s",
           fp_glpk_version());
  if (it->cut.count)
    rec->cut_first = it->cut.first, rec->cut_count = it->cut.count;
  if (it->load_error[0]) {
    snprintf(rec->status, sizeof rec->status, "error");
    snprintf(rec->error, sizeof rec->error, "%s", it->load_error);
    return FP_OK;
  }
  double t0 = fp_clock_now();
  fp_plan *inductor = NULL;
  fp_graph *g = load_item_graph(it, rec, &inductor);
  if (!g)
    return FP_OK;
  snprintf(rec->graph, sizeof rec->graph, "%s", fp_graph_name(g));
  rec->nodes = fp_graph_node_count(g);
#ifdef FP_TEST_HOOKS
  test_fault(fp_graph_name(g));
#endif
  fp_status st = solve_graph(it, g, inductor, dir, rec, err);
  rec->time_s = fp_clock_now() - t0;
  fp_plan_destroy(inductor);
  fp_graph_destroy(g);
  return st;
}
