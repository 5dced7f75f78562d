/*
 * mpi.c -- one batch over the ranks of an MPI job (mpi.h).
 *
 * The protocol is two messages: a worker sends rank 0 "ready" (or "done
 * with item i", with its outcome), and rank 0 answers with the next item
 * or -1 (no more: the worker returns).  Rank 0 waits with MPI_Test and
 * short sleeps, so that it also keeps its clock: progress, and the
 * cancel flag (mpirun forwards SIGINT and SIGTERM).  Items go out in
 * order of expected cost, largest first, so that the longest solves do
 * not start last and leave the other ranks idle at the end.
 *
 * A worker rank that dies takes the job with it (Open MPI aborts every
 * rank); what finished is kept in DIR, and rank 0, told to stop, names
 * the items in flight.  A rerun finishes what is missing.
 */
#include "config.h"

#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch/mpi.h"
#include "model/graph.h"
#include "model/io.h"
#include "model/json.h"
#include "model/util.h"

enum { TAG_UP = 1, TAG_DOWN = 2 };    /* to rank 0; from rank 0 */
enum { MSG_READY = 0, MSG_DONE = 1 }; /* msg[0] */
enum { MSG_KIND, MSG_ITEM, MSG_GOLD, MSG_FAILED, MSG_LEN };

bool fp_batch_mpi_launched(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                     "PMIX_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && atoi(v) > 1)
      return true;
  }
  return false;
}

fp_status fp_batch_mpi_init(int *argc, char ***argv, int *rank, int *size,
                            fp_error *err) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return fp_error_set(err, FP_EINTERNAL, "MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return FP_OK;
}

void fp_batch_mpi_finalize(void) {
  MPI_Finalize();
}

void fp_batch_mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

/* ---- notes of the items in flight ---------------------------------------- */

/* A worker's note DIR/tmp/<id>.inflight ("rank R: source"), written
 * before it runs an item and removed after: a note left behind names an
 * item whose worker died. */
static void inflight_path(const char *dir, const char *id, char *buf,
                          size_t n) {
  snprintf(buf, n, "%s/tmp/%s.inflight", dir, id);
}

/* Collects (and removes) the notes left in DIR/tmp into counts. */
static void collect_lost(const char *dir, fp_batch_mpi_counts *counts) {
  char path[4200], *text = NULL;
  size_t len = 0, used = 0;
  snprintf(path, sizeof path, "%s/tmp", dir);
  DIR *d = opendir(path);
  counts->n_lost = 0;
  counts->lost[0] = '\0';
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t k = strlen(e->d_name);
    if (k != 64 + 9 || strcmp(e->d_name + 64, ".inflight") != 0)
      continue;
    snprintf(path, sizeof path, "%s/tmp/%s", dir, e->d_name);
    if (fp_file_read_all(path, &text, &len, NULL) == FP_OK) {
      text[strcspn(text, "\n")] = '\0';
      if (used + 100 < sizeof counts->lost)
        used += (size_t)snprintf(counts->lost + used,
                                 sizeof counts->lost - used, "%s%.16s (%.60s)",
                                 used ? "; " : "", e->d_name, text);
      counts->n_lost++;
    }
    free(text);
    text = NULL;
    unlink(path);
  }
  if (d)
    closedir(d);
}

/* ---- rank 0 -------------------------------------------------------------- */

/* An item waiting to be handed out, and its expected cost. */
typedef struct pending {
  int32_t item;
  double cost;
  const char *id;
} pending;

static int cmp_pending(const void *a, const void *b) {
  const pending *x = a, *y = b;
  if (x->cost != y->cost)
    return x->cost < y->cost ? 1 : -1; /* largest first */
  int c = strcmp(x->id, y->id);
  return c ? c : (x->item > y->item) - (x->item < y->item);
}

/* An item's expected cost: its nodes times its time limit (a solve's
 * time grows with both).  A whole graph's nodes are counted by loading
 * it (once per file in a row); a graph that does not load costs nothing
 * (it is an error item). */
static double item_cost(const fp_batch_item *it, char *last_source,
                        int32_t *last_nodes) {
  if (it->cut.count)
    return (double)it->cut.count * it->time_limit_s;
  if (strcmp(last_source, it->source) != 0) {
    fp_graph *g = NULL;
    *last_nodes = 0;
    if (!it->load_error[0] && fp_graph_load_file(it->source, &g, NULL) == FP_OK)
      *last_nodes = fp_graph_node_count(g);
    fp_graph_destroy(g);
    snprintf(last_source, 4096, "%s", it->source);
  }
  return (double)*last_nodes * it->time_limit_s;
}

/* The items not finished in DIR, each id once, largest cost first, into
 * order[] (*n_order of them); the others are counted as skipped. */
static fp_status plan_order(const fp_batch_item *items, int32_t n,
                            const char *dir, int32_t *order, int32_t *n_order,
                            fp_batch_progress *pr, fp_error *err) {
  pending *p = malloc(((size_t)n + 1) * sizeof *p);
  fp_batch_record *rec = malloc(sizeof *rec);
  char *last_source = calloc(1, 4096);
  int32_t nodes = 0, k = 0;
  fp_status st = FP_OK;
  if (!p || !rec || !last_source) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  for (int32_t i = 0; i < n; i++)
    if (fp_batch_item_finished(dir, &items[i], rec))
      pr->skipped++;
    else
      p[k++] =
          (pending){i, item_cost(&items[i], last_source, &nodes), items[i].id};
  qsort(p, (size_t)k, sizeof *p, cmp_pending);
  *n_order = 0;
  for (int32_t i = 0; i < k; i++)
    if (i > 0 && strcmp(p[i].id, p[i - 1].id) == 0)
      pr->skipped++; /* the same item twice (a glob and a manifest) */
    else
      order[(*n_order)++] = p[i].item;
done:
  free(p);
  free(rec);
  free(last_source);
  return st;
}

typedef struct master {
  const fp_batch_item *items;
  const fp_batch_options *o;
  int32_t *order, n_order, next;
  int32_t *busy; /* the item each rank runs, -1: none */
  fp_batch_progress pr;
  fp_batch_mpi_counts *counts;
  double t0, last_report;
} master;

static void master_report(master *M) {
  M->pr.elapsed_s = fp_clock_now() - M->t0;
  M->pr.last = NULL;
  M->last_report = fp_clock_now();
  if (M->o->progress)
    M->o->progress(&M->pr, M->o->progress_ctx);
}

/* The message of a cancelled batch: the items in flight, by rank. */
static fp_status cancelled(const master *M, fp_error *err) {
  char list[400] = "";
  size_t len = 0;
  for (int32_t r = 1; r < M->counts->size && len + 100 < sizeof list; r++)
    if (M->busy[r] >= 0)
      len += (size_t)snprintf(list + len, sizeof list - len,
                              "%srank %d: %.16s (%s)", len ? ", " : "", (int)r,
                              M->items[M->busy[r]].id,
                              M->items[M->busy[r]].source);
  return fp_error_set(err, FP_EINTERNAL,
                      "interrupted with %d items in flight%s%s: the rest is "
                      "kept; rerun the command to finish",
                      (int)M->pr.running, len ? ": " : "", list);
}

/* Books message msg from rank r and answers it with the next item.
 * Returns whether rank r goes on (false: it was told to stop). */
static bool master_answer(master *M, int r, const int *msg) {
  if (msg[MSG_KIND] == MSG_DONE) {
    M->busy[r] = -1;
    M->pr.running--;
    M->pr.done++;
    M->pr.optimal += msg[MSG_GOLD];
    M->pr.failed += msg[MSG_FAILED];
    M->counts->per_rank[r]++;
    master_report(M);
  }
  int next = M->next < M->n_order ? M->order[M->next++] : -1;
  MPI_Send(&next, 1, MPI_INT, r, TAG_DOWN, MPI_COMM_WORLD);
  if (next < 0)
    return false;
  M->busy[r] = next;
  M->pr.running++;
  return true;
}

/* Rank 0's loop: answers the workers until every one is told to stop. */
static fp_status master_loop(master *M, fp_error *err) {
  int active = M->counts->size - 1, msg[MSG_LEN], flag = 0;
  MPI_Request req;
  MPI_Status stat;
  MPI_Irecv(msg, MSG_LEN, MPI_INT, MPI_ANY_SOURCE, TAG_UP, MPI_COMM_WORLD,
            &req);
  while (active > 0) {
    if (M->o->cancel && *M->o->cancel)
      return cancelled(M, err); /* the caller aborts the job */
    MPI_Test(&req, &flag, &stat);
    if (!flag) {
      struct timespec ts = {0, 2000000}; /* 2 ms */
      nanosleep(&ts, NULL);
      if (M->o->progress_every_s > 0 &&
          fp_clock_now() >= M->last_report + M->o->progress_every_s)
        master_report(M);
      continue;
    }
    if (!master_answer(M, stat.MPI_SOURCE, msg))
      active--;
    if (active > 0)
      MPI_Irecv(msg, MSG_LEN, MPI_INT, MPI_ANY_SOURCE, TAG_UP, MPI_COMM_WORLD,
                &req);
  }
  return FP_OK;
}

static fp_status run_master(const fp_batch_item *items, int32_t n,
                            const fp_batch_options *o, fp_batch_progress *last,
                            fp_batch_mpi_counts *counts, fp_error *err) {
  master M;
  memset(&M, 0, sizeof M);
  M.items = items;
  M.o = o;
  M.counts = counts;
  M.pr.total = n;
  M.t0 = M.last_report = fp_clock_now();
  M.order = malloc(((size_t)n + 1) * sizeof *M.order);
  M.busy = malloc((size_t)counts->size * sizeof *M.busy);
  fp_status st = FP_OK;
  if (!M.order || !M.busy)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t r = 0; M.busy && r < counts->size; r++)
    M.busy[r] = -1;
  collect_lost(o->dir, counts);
  if (st == FP_OK)
    st = plan_order(items, n, o->dir, M.order, &M.n_order, &M.pr, err);
  if (st == FP_OK) {
    master_report(&M);
    st = master_loop(&M, err);
  }
  bool cancel = o->cancel && *o->cancel;
  if (st == FP_OK || cancel) {
    fp_error as_err;
    fp_status as = fp_batch_assemble(o->dir, st == FP_OK ? err : &as_err);
    if (st == FP_OK)
      st = as;
  }
  M.pr.elapsed_s = fp_clock_now() - M.t0;
  M.pr.last = NULL;
  *last = M.pr;
  free(M.order);
  free(M.busy);
  return st;
}

/* ---- the workers --------------------------------------------------------- */

#ifdef FP_TEST_HOOKS
/* Test hook: FUSEPLAN_TEST_FAULT=rankdie:NAME kills the worker rank
 * itself (not the item's child) when it is handed an item whose graph
 * file's path contains NAME. */
static void test_rank_fault(const fp_batch_item *it) {
  const char *f = getenv("FUSEPLAN_TEST_FAULT");
  if (f && strncmp(f, "rankdie:", 8) == 0 && strstr(it->source, f + 8))
    raise(SIGKILL);
}
#endif

static fp_status run_worker(const fp_batch_item *items, int32_t n,
                            const fp_batch_options *o, fp_error *err) {
  int msg[MSG_LEN] = {MSG_READY, -1, 0, 0}, next, rank;
  char note[4200], path[4200];
  fp_batch_record *rec = malloc(sizeof *rec);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fp_status st = FP_OK;
  if (!rec)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (;;) {
    MPI_Send(msg, MSG_LEN, MPI_INT, 0, TAG_UP, MPI_COMM_WORLD);
    MPI_Recv(&next, 1, MPI_INT, 0, TAG_DOWN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (next < 0 || next >= n)
      break;
    inflight_path(o->dir, items[next].id, path, sizeof path);
    int k =
        snprintf(note, sizeof note, "rank %d: %s\n", rank, items[next].source);
    fp_file_write_atomic(path, note, (size_t)k, NULL); /* a hint only */
#ifdef FP_TEST_HOOKS
    test_rank_fault(&items[next]);
#endif
    st = fp_batch_run_one(&items[next], o, rec, err);
    unlink(path);
    if (st != FP_OK)
      break;
    msg[MSG_KIND] = MSG_DONE;
    msg[MSG_ITEM] = next;
    msg[MSG_GOLD] = rec->gold;
    msg[MSG_FAILED] = strcmp(rec->status, "error") == 0 ||
                      strcmp(rec->status, "infeasible") == 0;
  }
  free(rec);
  return st;
}

fp_status fp_batch_mpi_run(const fp_batch_item *items, int32_t n,
                           const fp_batch_options *o, fp_batch_progress *last,
                           fp_batch_mpi_counts *counts, fp_error *err) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0)
    return run_worker(items, n, o, err);
  counts->size = size;
  counts->per_rank = calloc((size_t)size, sizeof *counts->per_rank);
  if (!counts->per_rank)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  return run_master(items, n, o, last, counts, err);
}
