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
 * By default a worker rank that dies takes the job with it (Open MPI
 * aborts every rank); what finished is kept in DIR, and rank 0, told to
 * stop, names the items in flight.  A rerun finishes what is missing.
 * Under `mpirun --enable-recovery` the job outlives a dead rank, but
 * Open MPI 4 tells the survivors nothing (a send to the dead rank still
 * succeeds, a receive just never completes), so rank 0 finds it by its
 * silence: a worker says "alive" every FP_BATCH_MPI_HEARTBEAT_S while it
 * solves (the parent of the item's child, waking on its own clock), and
 * one not heard for FP_BATCH_MPI_LOST_AFTER_S is lost: its item becomes
 * an error item (retried by a rerun), it gets nothing more, and the
 * other workers finish the batch.  Heartbeats, rather than a deadline
 * per item from its time limit, find a dead worker in seconds whatever
 * the limit, and never take a long solve for a death.
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

enum { TAG_UP = 1, TAG_DOWN = 2 }; /* to rank 0; from rank 0 */
enum { MSG_READY = 0, MSG_DONE = 1, MSG_ALIVE = 2 }; /* msg[0] */
/* master.state; RANK_UNHEARD: taken for lost before its first word (it
 * held no item, and is taken back if it speaks after all). */
enum { RANK_ACTIVE, RANK_STOPPED, RANK_LOST, RANK_UNHEARD };
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
  /* A failed call returns (a lost rank), rather than aborting the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return FP_OK;
}

bool fp_batch_mpi_recovery(void) {
  const char *v = getenv("OMPI_MCA_orte_enable_recovery");
  return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

int fp_batch_mpi_finalize(int code) {
  if (fp_batch_mpi_recovery()) {
    fflush(NULL);
    _exit(code);
  }
  MPI_Finalize();
  return code;
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
    if (fp_batch_item_finished(dir, &items[i], rec, NULL))
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
  int32_t *busy;  /* the item each rank runs, -1: none */
  int8_t *state;  /* each rank's RANK_ */
  double *heard;  /* when each rank last said something */
  int32_t active; /* workers neither told to stop nor lost */
  fp_batch_progress pr;
  fp_batch_mpi_counts *counts;
  double t0, last_report, last_check;
} master;

static void master_report(master *M) {
  M->pr.elapsed_s = fp_clock_now() - M->t0;
  M->pr.last = NULL;
  M->last_report = fp_clock_now();
  if (M->o->progress)
    M->o->progress(&M->pr, M->o->progress_ctx);
}

/* The message of a batch stopped early: the items in flight, by rank. */
static fp_status stopped(const master *M, fp_error *err) {
  char list[400] = "";
  size_t len = 0;
  for (int32_t r = 1; r < M->counts->size && len + 100 < sizeof list; r++)
    if (M->busy[r] >= 0)
      len += (size_t)snprintf(list + len, sizeof list - len,
                              "%srank %d: %.16s (%s)", len ? ", " : "", (int)r,
                              M->items[M->busy[r]].id,
                              M->items[M->busy[r]].source);
  if (M->active == 0)
    return fp_error_set(err, FP_EINTERNAL,
                        "every worker rank was lost, with %d items not run: "
                        "the rest is kept; rerun the command to finish",
                        (int)(M->n_order - M->next));
  return fp_error_set(err, FP_EINTERNAL,
                      "interrupted with %d items in flight%s%s: the rest is "
                      "kept; rerun the command to finish",
                      (int)M->pr.running, len ? ": " : "", list);
}

/* Takes worker rank r for lost (why: what showed it): its item, if it
 * had one, becomes an error item of DIR (unless its result is there
 * already), and it is sent nothing more. */
static fp_status lose_rank(master *M, int r, const char *why, fp_error *err) {
  fp_batch_mpi_counts *C = M->counts;
  char msg[512], path[4200];
  M->state[r] = M->busy[r] < 0 ? RANK_UNHEARD : RANK_LOST;
  M->active--;
  C->rank_lost[r] = true;
  if (M->busy[r] < 0)
    return FP_OK;
  const fp_batch_item *it = &M->items[M->busy[r]];
  fp_batch_record *rec = malloc(sizeof *rec);
  if (!rec)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  snprintf(msg, sizeof msg,
           "worker rank %d lost while solving %.16s (%.300s): %s", r, it->id,
           it->source, why);
  fp_status st =
      fp_batch_item_lost(M->o->dir, it, M->o->version, msg, rec, err);
  inflight_path(M->o->dir, it->id, path, sizeof path);
  unlink(path); /* the loss is booked: a rerun need not report it */
  bool lost = strcmp(rec->status, "error") == 0;
  size_t used = strlen(C->lost_now);
  if (lost && used + 100 < sizeof C->lost_now)
    snprintf(C->lost_now + used, sizeof C->lost_now - used, "%s%s",
             used ? "; " : "", msg);
  C->n_lost_now += lost;
  M->busy[r] = -1;
  M->pr.running--;
  M->pr.done++;
  M->pr.optimal += !lost && rec->gold;
  M->pr.failed += lost || strcmp(rec->status, "infeasible") == 0;
  free(rec);
  master_report(M);
  return st;
}

/* Takes every worker rank silent for too long for lost (looking at
 * most every 0.1 s: with thousands of ranks, their heartbeats keep the
 * loop busy). */
static fp_status find_lost(master *M, fp_error *err) {
  double now = fp_clock_now();
  fp_status st = FP_OK;
  char why[64];
  if (now - M->last_check < 0.1)
    return FP_OK;
  M->last_check = now;
  for (int r = 1; r < M->counts->size && st == FP_OK; r++)
    if (M->state[r] == RANK_ACTIVE &&
        now - M->heard[r] > FP_BATCH_MPI_LOST_AFTER_S) {
      snprintf(why, sizeof why, "no word from it for %.0f s",
               now - M->heard[r]);
      st = lose_rank(M, r, why, err);
    }
  return st;
}

/* Tells rank r to stop, and waits (at most FP_BATCH_MPI_LOST_AFTER_S / 2)
 * until it has the word: a rank may end without MPI_Finalize
 * (fp_batch_mpi_finalize), and a word merely buffered would die with
 * it.  Whether r took it. */
static bool send_stop(int r) {
  int stop = -1, flag = 0;
  MPI_Request req;
  double t0 = fp_clock_now();
  if (MPI_Issend(&stop, 1, MPI_INT, r, TAG_DOWN, MPI_COMM_WORLD, &req) !=
      MPI_SUCCESS)
    return false;
  while (fp_clock_now() - t0 < FP_BATCH_MPI_LOST_AFTER_S / 2) {
    if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return false;
    if (flag)
      return true;
    struct timespec ts = {0, 1000000}; /* 1 ms */
    nanosleep(&ts, NULL);
  }
  MPI_Cancel(&req);
  MPI_Request_free(&req);
  return false;
}

/* Books message msg from rank r and answers it with the next item
 * (nothing for a heartbeat; "stop" to a rank already lost, which was
 * only slow, once it asks: it waits for no answer while it solves). */
static fp_status master_answer(master *M, int r, const int *msg,
                               fp_error *err) {
  int next = -1;
  M->heard[r] = fp_clock_now();
  if (msg[MSG_KIND] == MSG_ALIVE)
    return FP_OK;
  if (M->state[r] == RANK_UNHEARD && msg[MSG_KIND] == MSG_READY &&
      M->active > 0) { /* only late to start: it may still help */
    M->state[r] = RANK_ACTIVE;
    M->active++;
    M->counts->rank_lost[r] = false;
  }
  if (M->state[r] != RANK_ACTIVE) {
    send_stop(r);
    return FP_OK;
  }
  if (msg[MSG_KIND] == MSG_DONE) {
    M->busy[r] = -1;
    M->pr.running--;
    M->pr.done++;
    M->pr.optimal += msg[MSG_GOLD];
    M->pr.failed += msg[MSG_FAILED];
    M->counts->per_rank[r]++;
    master_report(M);
  }
  if (M->next >= M->n_order) {
    if (!send_stop(r))
      return lose_rank(M, r, "it did not take the word to stop", err);
    M->state[r] = RANK_STOPPED;
    M->active--;
    return FP_OK;
  }
  next = M->order[M->next++];
  if (MPI_Send(&next, 1, MPI_INT, r, TAG_DOWN, MPI_COMM_WORLD) != MPI_SUCCESS) {
    M->next--; /* back, for another worker */
    return lose_rank(M, r, "a send to it failed", err);
  }
  M->busy[r] = next;
  M->pr.running++;
  return FP_OK;
}

/* Sleeps a little (no busy wait), reports progress when due. */
static void master_idle(master *M) {
  struct timespec ts = {0, 2000000}; /* 2 ms */
  nanosleep(&ts, NULL);
  if (M->o->progress_every_s > 0 &&
      fp_clock_now() >= M->last_report + M->o->progress_every_s)
    master_report(M);
}

/* Leaves a word to stop for every worker rank taken for lost: one only
 * slow (late to start, stalled) finds it when it asks, after rank 0 has
 * ended, and ends too rather than wait for an answer.  The sends are
 * not waited for beyond a moment (a dead rank never takes them). */
static void farewell(const master *M) {
  static const int stop = -1;
  for (int r = 1; r < M->counts->size; r++) {
    if (M->state[r] != RANK_LOST && M->state[r] != RANK_UNHEARD)
      continue;
    MPI_Request req;
    int flag = 0;
    if (MPI_Isend(&stop, 1, MPI_INT, r, TAG_DOWN, MPI_COMM_WORLD, &req) !=
        MPI_SUCCESS)
      continue;
    for (int k = 0; k < 50 && !flag; k++) {
      struct timespec ts = {0, 2000000}; /* 2 ms */
      if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        break;
      if (!flag)
        nanosleep(&ts, NULL);
    }
    if (!flag)
      MPI_Request_free(&req);
  }
}

/* Rank 0's loop: answers the workers until every one is told to stop or
 * lost.  FP_EINTERNAL when cancelled or left without workers with items
 * still to run. */
static fp_status master_loop(master *M, fp_error *err) {
  int msg[MSG_LEN], flag = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status stat;
  fp_status st = FP_OK;
  for (int r = 1; r < M->counts->size; r++)
    M->heard[r] = fp_clock_now();
  while (st == FP_OK && M->active > 0) {
    if (M->o->cancel && *M->o->cancel)
      break;
    if (req == MPI_REQUEST_NULL)
      MPI_Irecv(msg, MSG_LEN, MPI_INT, MPI_ANY_SOURCE, TAG_UP, MPI_COMM_WORLD,
                &req);
    if (MPI_Test(&req, &flag, &stat) != MPI_SUCCESS) {
      req = MPI_REQUEST_NULL; /* failed (a lost sender): post another */
      flag = 0;
    }
    if (flag)
      st = master_answer(M, stat.MPI_SOURCE, msg, err);
    else
      master_idle(M);
    if (st == FP_OK)
      st = find_lost(M, err);
  }
  if (req != MPI_REQUEST_NULL) {
    MPI_Cancel(&req);
    MPI_Request_free(&req);
  }
  farewell(M);
  if (st == FP_OK && (M->o->cancel && *M->o->cancel))
    return stopped(M, err); /* the caller aborts the job */
  if (st == FP_OK && M->next < M->n_order)
    return stopped(M, err);
  return st;
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
  M.active = counts->size - 1;
  M.t0 = M.last_report = fp_clock_now();
  M.order = malloc(((size_t)n + 1) * sizeof *M.order);
  M.busy = malloc((size_t)counts->size * sizeof *M.busy);
  M.state = calloc((size_t)counts->size, sizeof *M.state);
  M.heard = calloc((size_t)counts->size, sizeof *M.heard);
  fp_status st = FP_OK;
  if (!M.order || !M.busy || !M.state || !M.heard)
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
  /* Cancelled or left without workers, DIR holds what finished. */
  bool early =
      (o->cancel && *o->cancel) || (M.active == 0 && M.next < M.n_order);
  if (st == FP_OK || early) {
    fp_error as_err;
    fp_status as =
        fp_batch_assemble(o->dir, o->warn, o->warn_ctx, &M.pr.dataset_items,
                          &M.pr.dataset_failed, st == FP_OK ? err : &as_err);
    if (st == FP_OK)
      st = as;
  }
  M.pr.elapsed_s = fp_clock_now() - M.t0;
  M.pr.last = NULL;
  *last = M.pr;
  free(M.order);
  free(M.busy);
  free(M.state);
  free(M.heard);
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

/* The worker's heartbeat (its fp_batch_run_one's progress callback):
 * "alive" to rank 0.  A failed send is left to the wait for the answer
 * (worker_ask) to find. */
static void worker_alive(const fp_batch_progress *p, void *ctx) {
  int msg[MSG_LEN] = {MSG_ALIVE, -1, 0, 0};
  (void)p;
  (void)ctx;
  MPI_Send(msg, MSG_LEN, MPI_INT, 0, TAG_UP, MPI_COMM_WORLD);
}

/* Sends msg to rank 0 and waits for its answer, *next.  The first wait
 * has no bound (rank 0 first plans the order of the items); a later one
 * gives up after 3 x FP_BATCH_MPI_LOST_AFTER_S (rank 0 answers at once
 * while it lives, but may first wait for a worker to take its word to
 * stop, send_stop): FP_EINTERNAL, as for a failed send or receive. */
static fp_status worker_ask(const int *msg, bool first, int *next,
                            fp_error *err) {
  MPI_Request req;
  int flag = 0;
  double t0 = fp_clock_now();
  if (MPI_Send(msg, MSG_LEN, MPI_INT, 0, TAG_UP, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      MPI_Irecv(next, 1, MPI_INT, 0, TAG_DOWN, MPI_COMM_WORLD, &req) !=
          MPI_SUCCESS)
    return fp_error_set(err, FP_EINTERNAL, "rank 0 cannot be reached");
  for (;;) {
    if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return fp_error_set(err, FP_EINTERNAL, "rank 0 cannot be reached");
    if (flag)
      return FP_OK;
    if (!first && fp_clock_now() - t0 > 3 * FP_BATCH_MPI_LOST_AFTER_S) {
      MPI_Cancel(&req);
      MPI_Request_free(&req);
      return fp_error_set(err, FP_EINTERNAL,
                          "rank 0 lost: no answer from it for %.0f s",
                          fp_clock_now() - t0);
    }
    struct timespec ts = {0, 2000000}; /* 2 ms */
    nanosleep(&ts, NULL);
  }
}

static fp_status run_worker(const fp_batch_item *items, int32_t n,
                            const fp_batch_options *o, fp_error *err) {
  int msg[MSG_LEN] = {MSG_READY, -1, 0, 0}, next, rank;
  char note[4200], path[4200];
  fp_batch_record *rec = malloc(sizeof *rec);
  fp_batch_options beat = *o;
  beat.progress = worker_alive;
  beat.progress_ctx = NULL;
  beat.progress_every_s = FP_BATCH_MPI_HEARTBEAT_S;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fp_status st = FP_OK;
  if (!rec)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (bool first = true;; first = false) {
    st = worker_ask(msg, first, &next, err);
    if (st != FP_OK || next < 0 || next >= n)
      break;
    inflight_path(o->dir, items[next].id, path, sizeof path);
    int k =
        snprintf(note, sizeof note, "rank %d: %s\n", rank, items[next].source);
    fp_file_write_atomic(path, note, (size_t)k, NULL); /* a hint only */
#ifdef FP_TEST_HOOKS
    test_rank_fault(&items[next]);
#endif
    st = fp_batch_run_one(&items[next], &beat, rec, err);
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
  counts->rank_lost = calloc((size_t)size, sizeof *counts->rank_lost);
  if (!counts->per_rank || !counts->rank_lost)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  return run_master(items, n, o, last, counts, err);
}
