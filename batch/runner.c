/*
 * runner.c -- the processes of a batch (batch.h): the lock of DIR, one
 * child per item under its limits, the bookkeeping of what finished, and
 * the dataset assembled from the item files.
 *
 * The parent blocks SIGCHLD and waits for it with sigtimedwait, so that
 * it wakes the moment an item ends (no polling delay per item) and also
 * on its own clock, to kill an item past its deadline and report
 * progress.  A child dies with its parent (PR_SET_PDEATHSIG on Linux),
 * and has a CPU-time limit as a backstop, so nothing outlives a kill -9
 * of the batch for long.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "batch/batch.h"
#include "batch/labels.h"
#include "model/io.h"
#include "model/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define FP_BATCH_NO_RLIMIT_AS 1 /* ASan reserves terabytes of addresses */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP_BATCH_NO_RLIMIT_AS 1
#endif
#endif

/* ---- the lock ------------------------------------------------------------ */

/* mkdir that accepts an existing directory. */
static fp_status make_dir(const char *path, fp_error *err) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST)
    return FP_OK;
  return fp_error_set(err, FP_EIO, "%s: %s", path, strerror(errno));
}

/* Removes the temporary files an atomic write killed in flight left in
 * directory `path` (fp_file_write_atomic's NAME.tmp.XXXXXX). */
static void remove_temps(const char *path) {
  char file[4500];
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len > 11 && strncmp(e->d_name + len - 11, ".tmp.", 5) == 0) {
      snprintf(file, sizeof file, "%s/%s", path, e->d_name);
      unlink(file);
    }
  }
  if (d)
    closedir(d);
}

fp_status fp_batch_lock(const char *dir, int *fd, fp_error *err) {
  static const char *const sub[] = {"items", "plans", "labels", "tmp"};
  char path[4200];
  *fd = -1;
  fp_status st = make_dir(dir, err);
  for (size_t i = 0; st == FP_OK && i < sizeof sub / sizeof *sub; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, sub[i]);
    st = make_dir(path, err);
  }
  if (st != FP_OK)
    return st;
  snprintf(path, sizeof path, "%s/.lock", dir);
  int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (f < 0)
    return fp_error_set(err, FP_EIO, "%s: %s", path, strerror(errno));
  if (flock(f, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = "";
    ssize_t k = pread(f, pid, sizeof pid - 1, 0);
    pid[k > 0 ? k : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    close(f);
    return fp_error_set(err, FP_EARG,
                        "%s is in use by another batch (pid %s): wait for it "
                        "or stop it",
                        dir, pid[0] ? pid : "?");
  }
  char pid[32];
  int k = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)k, 0) != k) {
    close(f);
    return fp_error_set(err, FP_EIO, "%s: %s", path, strerror(errno));
  }
  /* Whoever wrote them is gone: the lock was free. */
  remove_temps(dir);
  for (size_t i = 0; i < sizeof sub / sizeof *sub; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, sub[i]);
    remove_temps(path);
  }
  *fd = f;
  return FP_OK;
}

void fp_batch_unlock(int fd) {
  if (fd >= 0)
    close(fd); /* releases the flock */
}

/* ---- item records -------------------------------------------------------- */

/* Reads DIR/items/<id>.json into *rec; FP_OK when it is a record. */
static fp_status read_record(const char *dir, const char *id,
                             fp_batch_record *rec, fp_error *err) {
  char path[4200], *text = NULL;
  size_t len;
  snprintf(path, sizeof path, "%s/items/%s.json", dir, id);
  fp_status st = fp_file_read_all(path, &text, &len, err);
  if (st == FP_OK)
    st = fp_batch_record_parse(text, len, path, rec, err);
  free(text);
  return st;
}

/* Writes rec as DIR/items/<id>.json, atomically (the item's commit). */
static fp_status write_record(const char *dir, const fp_batch_record *rec,
                              fp_error *err) {
  char path[4200];
  char *text = fp_batch_record_to_json(rec, err);
  if (!text)
    return FP_ENOMEM;
  snprintf(path, sizeof path, "%s/items/%s.json", dir, rec->id);
  fp_status st = fp_file_write_atomic(path, text, strlen(text), err);
  free(text);
  return st;
}

/* ---- one child ----------------------------------------------------------- */

/* A child's wall-clock deadline: the solve's limit twice (the compared
 * heuristics and the labels run after it), plus a minute for loading. */
static double item_deadline_s(const fp_batch_item *it) {
  return 2 * it->time_limit_s + 60;
}

/* The child's limits: memory (address space), CPU time as a backstop,
 * death with the parent. */
static void child_limits(const fp_batch_item *it, uint64_t memory) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  /* A time limit may be huge (1e308 s): no CPU limit past a year. */
  double deadline = item_deadline_s(it);
  struct rlimit cpu = {RLIM_INFINITY, RLIM_INFINITY};
  if (deadline < 365 * 86400.0)
    cpu = (struct rlimit){(rlim_t)deadline + 5, (rlim_t)deadline + 10};
  setrlimit(RLIMIT_CPU, &cpu);
#ifndef FP_BATCH_NO_RLIMIT_AS
  if (memory) {
    struct rlimit as = {(rlim_t)memory, (rlim_t)memory};
    setrlimit(RLIMIT_AS, &as);
  }
#else
  (void)memory;
#endif
}

/* The child: solve, commit the record, exit.  Its stdout and stderr go
 * to DIR/tmp/<id>.log, which the parent reads if it dies. */
static void child_main(const fp_batch_item *it, const fp_batch_options *o) {
  char path[4200];
  struct sigaction dfl;
  sigset_t none;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGINT, &dfl, NULL);
  sigaction(SIGTERM, &dfl, NULL);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  snprintf(path, sizeof path, "%s/tmp/%s.log", o->dir, it->id);
  int log = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (log >= 0) {
    dup2(log, 1);
    dup2(log, 2);
    close(log);
  }
  child_limits(it, o->item_memory);
  fp_batch_record *rec = malloc(sizeof *rec);
  fp_error err;
  fp_error_clear(&err);
  if (!rec)
    _exit(3);
  if (fp_batch_item_solve(it, o->dir, o->version, rec, &err) != FP_OK) {
    snprintf(rec->status, sizeof rec->status, "error");
    snprintf(rec->error, sizeof rec->error, "%s", err.msg);
  }
  _exit(write_record(o->dir, rec, &err) == FP_OK ? 0 : 3);
}

/* The last non-empty line of a child's log (what it said before dying),
 * into buf[n] ("" when none); removes the log. */
static void last_words(const char *dir, const char *id, char *buf, size_t n) {
  char path[4200], *text = NULL;
  size_t len = 0;
  buf[0] = '\0';
  snprintf(path, sizeof path, "%s/tmp/%s.log", dir, id);
  if (fp_file_read_all(path, &text, &len, NULL) == FP_OK) {
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
      text[--len] = '\0';
    char *nl = strrchr(text, '\n');
    snprintf(buf, n, "%s", nl ? nl + 1 : text);
  }
  free(text);
  unlink(path);
}

/* An error record of item `it` (its identity, status error, no result;
 * the caller says why in rec->error). */
static void error_record(const fp_batch_item *it, const char *version,
                         fp_batch_record *rec) {
  fp_batch_record_init(rec);
  snprintf(rec->id, sizeof rec->id, "%s", it->id);
  snprintf(rec->source, sizeof rec->source, "%s", it->source);
  snprintf(rec->graph_sha256, sizeof rec->graph_sha256, "%s", it->graph_sha256);
  snprintf(rec->method, sizeof rec->method, "%s", it->method);
  snprintf(rec->objective, sizeof rec->objective, "%s", it->objective);
  fp_batch_peak_text(it, rec->peak_limit, sizeof rec->peak_limit);
  snprintf(rec->fuseplan_version, sizeof rec->fuseplan_version, "%s", version);
  snprintf(rec->status, sizeof rec->status, "error");
  if (it->cut.count)
    rec->cut_first = it->cut.first, rec->cut_count = it->cut.count;
}

/* The record of an item whose child did not commit one. */
static void death_record(const fp_batch_item *it, const fp_batch_options *o,
                         int wstatus, bool timed_out, fp_batch_record *rec) {
  char words[400];
  last_words(o->dir, it->id, words, sizeof words);
  error_record(it, o->version, rec);
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    rec->signal = sig;
    char mem[96] = "";
    if (o->item_memory && !timed_out &&
        (sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGKILL))
      snprintf(mem, sizeof mem, " (its memory limit: %llu MiB)",
               (unsigned long long)(o->item_memory >> 20));
    snprintf(rec->error, sizeof rec->error, "%s signal %d (%s)%s%s%s",
             timed_out ? "past its deadline: killed with" : "killed by", sig,
             strsignal(sig), mem, words[0] ? ": " : "", words);
  } else {
    snprintf(rec->error, sizeof rec->error, "exited with status %d%s%s",
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
             words[0] ? ": " : "", words);
  }
}

/* ---- the loop ------------------------------------------------------------ */

typedef struct slot {
  pid_t pid; /* 0: free */
  int32_t item;
  double deadline;
  bool killed;
} slot;

typedef struct run_state {
  const fp_batch_item *items;
  const fp_batch_options *o;
  slot *slots;
  fp_batch_progress pr;
  fp_batch_record rec; /* the last finished item's */
  double t0, last_report;
} run_state;

/* Whether record rec is item it's: what decides its result. */
static bool record_of(const fp_batch_record *rec, const fp_batch_item *it) {
  char peak[32];
  fp_batch_peak_text(it, peak, sizeof peak);
  int64_t first = it->cut.count ? it->cut.first : -1,
          count = it->cut.count ? it->cut.count : -1;
  return strcmp(rec->graph_sha256, it->graph_sha256) == 0 &&
         strcmp(rec->method, it->method) == 0 &&
         strcmp(rec->objective, it->objective) == 0 &&
         strcmp(rec->peak_limit, peak) == 0 && rec->cut_first == first &&
         rec->cut_count == count;
}

bool fp_batch_item_finished(const char *dir, const fp_batch_item *it,
                            fp_batch_record *rec, fp_error *bad) {
  fp_error e;
  fp_error_clear(&e);
  if (bad)
    fp_error_clear(bad);
  fp_status st = fp_batch_record_load(dir, it->id, rec, &e);
  if (st == FP_OK && !record_of(rec, it))
    st = fp_error_set(&e, FP_EINPUT,
                      "%s/items/%s.json: the record of another "
                      "item (its graph, method, objective or limit differ)",
                      dir, it->id);
  if (st != FP_OK && st != FP_EIO && bad)
    *bad = e; /* there, but not a valid record of the item */
  return st == FP_OK && strcmp(rec->status, "error") != 0;
}

static void report(run_state *S, const fp_batch_record *last) {
  S->pr.elapsed_s = fp_clock_now() - S->t0;
  S->pr.last = last;
  S->last_report = fp_clock_now();
  if (S->o->progress)
    S->o->progress(&S->pr, S->o->progress_ctx);
}

/* Books the end of the child in slot s (exit status wstatus). */
static fp_status reap(run_state *S, slot *s, int wstatus, fp_error *err) {
  const fp_batch_item *it = &S->items[s->item];
  fp_status st = FP_OK;
  bool committed = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 &&
                   read_record(S->o->dir, it->id, &S->rec, NULL) == FP_OK;
  if (!committed) {
    death_record(it, S->o, wstatus, s->killed, &S->rec);
    st = write_record(S->o->dir, &S->rec, err);
  } else {
    char words[8];
    last_words(S->o->dir, it->id, words, sizeof words);
  }
  s->pid = 0;
  S->pr.running--;
  S->pr.done++;
  S->pr.optimal += S->rec.gold;
  S->pr.failed += strcmp(S->rec.status, "error") == 0 ||
                  strcmp(S->rec.status, "infeasible") == 0;
  report(S, &S->rec);
  return st;
}

/* Starts item i in a free slot; FP_EIO when fork fails. */
static fp_status start(run_state *S, slot *s, int32_t i, fp_error *err) {
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0)
    return fp_error_set(err, FP_EIO, "fork: %s", strerror(errno));
  if (pid == 0)
    child_main(&S->items[i], S->o);
  s->pid = pid;
  s->item = i;
  s->killed = false;
  s->deadline = fp_clock_now() + item_deadline_s(&S->items[i]);
  S->pr.running++;
  return FP_OK;
}

/* Reaps every child that ended; kills those past their deadline. */
static fp_status sweep(run_state *S, fp_error *err) {
  int32_t jobs = S->o->jobs;
  fp_status st = FP_OK;
  double now = fp_clock_now();
  for (int32_t k = 0; k < jobs && st == FP_OK; k++) {
    slot *s = &S->slots[k];
    int wstatus;
    if (!s->pid)
      continue;
    if (waitpid(s->pid, &wstatus, WNOHANG) == s->pid)
      st = reap(S, s, wstatus, err);
    else if (now > s->deadline && !s->killed) {
      kill(s->pid, SIGKILL);
      s->killed = true;
    }
  }
  return st;
}

/* Kills and reaps every child (cancel or failure). */
static void stop_all(run_state *S) {
  for (int32_t k = 0; k < S->o->jobs; k++)
    if (S->slots[k].pid) {
      kill(S->slots[k].pid, SIGKILL);
      waitpid(S->slots[k].pid, NULL, 0);
      S->slots[k].pid = 0;
    }
}

/* Waits for a child to end, at most until the next report is due. */
static void wait_a_while(run_state *S, const sigset_t *chld) {
  double every = S->o->progress_every_s > 0 ? S->o->progress_every_s : 1;
  double wait = S->last_report + every - fp_clock_now();
  if (wait < 0.001)
    wait = 0.001;
  if (wait > 0.25)
    wait = 0.25; /* deadlines and cancel are checked this often */
  struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
  sigtimedwait(chld, NULL, &ts);
  if (S->o->progress_every_s > 0 &&
      fp_clock_now() >= S->last_report + S->o->progress_every_s)
    report(S, NULL);
}

/* The loop: start items while slots are free, reap them as they end. */
static fp_status run_items(run_state *S, const int32_t *todo, int32_t n_todo,
                           const sigset_t *chld, fp_error *err) {
  int32_t next = 0;
  fp_status st = FP_OK;
  while (st == FP_OK && (next < n_todo || S->pr.running > 0)) {
    if (S->o->cancel && *S->o->cancel) {
      stop_all(S);
      return fp_error_set(err, FP_EINTERNAL,
                          "interrupted: the items in flight are lost, the "
                          "rest is kept; rerun the command to finish");
    }
    for (int32_t k = 0; st == FP_OK && k < S->o->jobs && next < n_todo; k++)
      if (!S->slots[k].pid)
        st = start(S, &S->slots[k], todo[next++], err);
    if (st == FP_OK)
      wait_a_while(S, chld);
    if (st == FP_OK)
      st = sweep(S, err);
  }
  if (st != FP_OK)
    stop_all(S);
  return st;
}

/* An item's id and index, to find the same item twice. */
typedef struct id_at {
  const char *id;
  int32_t i;
} id_at;

static int cmp_id_at(const void *a, const void *b) {
  const id_at *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Marks dup[i] for every item whose id an earlier item has (the same
 * item twice: a glob and a manifest), in n log n. */
static fp_status mark_duplicates(const fp_batch_item *items, int32_t n,
                                 bool *dup) {
  id_at *by_id = malloc(((size_t)n + 1) * sizeof *by_id);
  if (!by_id)
    return FP_ENOMEM;
  for (int32_t i = 0; i < n; i++)
    by_id[i] = (id_at){items[i].id, i};
  qsort(by_id, (size_t)n, sizeof *by_id, cmp_id_at);
  for (int32_t i = 0; i < n; i++)
    dup[by_id[i].i] = i > 0 && strcmp(by_id[i].id, by_id[i - 1].id) == 0;
  free(by_id);
  return FP_OK;
}

/* The items to run into todo[] (*n_todo, in the given order): those not
 * finished in DIR, each once; the others counted as skipped.  A record
 * there that is not valid is reported (o->warn) and its item run again.
 * FP_ENOMEM only. */
static fp_status plan_todo(const fp_batch_item *items, int32_t n,
                           const fp_batch_options *o, int32_t *todo,
                           int32_t *n_todo, fp_batch_progress *pr,
                           fp_batch_record *rec) {
  char msg[FP_ERROR_MSG_MAX + 32];
  bool *dup = calloc((size_t)n + 1, sizeof *dup);
  fp_error bad;
  if (!dup || mark_duplicates(items, n, dup) != FP_OK) {
    free(dup);
    return FP_ENOMEM;
  }
  for (int32_t i = 0; i < n; i++) {
    if (dup[i] || fp_batch_item_finished(o->dir, &items[i], rec, &bad)) {
      pr->skipped++;
      continue;
    }
    if (bad.code != FP_OK && o->warn) {
      snprintf(msg, sizeof msg, "%s: recomputed", bad.msg);
      o->warn(msg, o->warn_ctx);
    }
    todo[(*n_todo)++] = i;
  }
  free(dup);
  return FP_OK;
}

fp_status fp_batch_run(const fp_batch_item *items, int32_t n,
                       const fp_batch_options *o, fp_batch_progress *last,
                       fp_error *err) {
  run_state *S = calloc(1, sizeof *S);
  int32_t *todo = malloc(((size_t)n + 1) * sizeof *todo), n_todo = 0;
  fp_status st = FP_OK;
  sigset_t chld, old;
  if (!S || !todo || !(S->slots = calloc((size_t)o->jobs, sizeof *S->slots))) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  S->items = items;
  S->o = o;
  S->pr.total = n;
  S->t0 = S->last_report = fp_clock_now();
  st = plan_todo(items, n, o, todo, &n_todo, &S->pr, &S->rec);
  if (st != FP_OK) {
    fp_error_set(err, st, "out of memory");
    goto done;
  }
  report(S, NULL);
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  st = run_items(S, todo, n_todo, &chld, err);
  sigprocmask(SIG_SETMASK, &old, NULL);
  /* Cancelled or not, the dataset holds every item finished so far. */
  if (st == FP_OK || (o->cancel && *o->cancel)) {
    fp_error as_err;
    fp_status as =
        fp_batch_assemble(o->dir, o->warn, o->warn_ctx, &S->pr.dataset_items,
                          &S->pr.dataset_failed, st == FP_OK ? err : &as_err);
    if (st == FP_OK)
      st = as;
  }
  S->pr.last = NULL;
  S->pr.elapsed_s = fp_clock_now() - S->t0;
  if (last)
    *last = S->pr;
done:
  if (S)
    free(S->slots);
  free(S);
  free(todo);
  return st;
}

fp_status fp_batch_item_lost(const char *dir, const fp_batch_item *it,
                             const char *version, const char *why,
                             fp_batch_record *rec, fp_error *err) {
  char path[4200];
  fp_status st = FP_OK;
  if (!fp_batch_item_finished(dir, it, rec, NULL)) {
    error_record(it, version, rec);
    snprintf(rec->error, sizeof rec->error, "%s", why);
    st = write_record(dir, rec, err);
  }
  snprintf(path, sizeof path, "%s/tmp/%s.log", dir, it->id);
  unlink(path);
  return st;
}

fp_status fp_batch_run_one(const fp_batch_item *it, const fp_batch_options *o,
                           fp_batch_record *rec, fp_error *err) {
  fp_batch_options one = *o;
  one.jobs = 1;
  if (!one.progress)
    one.progress_every_s = 0;
  run_state *S = calloc(1, sizeof *S);
  slot s;
  int32_t todo = 0;
  sigset_t chld, old;
  if (!S)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  memset(&s, 0, sizeof s);
  S->items = it;
  S->o = &one;
  S->slots = &s;
  S->t0 = S->last_report = fp_clock_now();
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  fp_status st = run_items(S, &todo, 1, &chld, err);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (st == FP_OK)
    *rec = S->rec;
  free(S);
  return st;
}
