/*
 * test_io.c -- fp_file_read_all under the input limit (plain files, gzip,
 * a gzip bomb, /dev/zero, a pipe, a sparse file: each stops at the limit
 * with bounded memory and time) and fp_file_write_atomic on targets that
 * are not plain files (symbolic links, loops, devices), and the removal
 * of its temporary file by a signal handler in the middle of a write.
 */
/* mknod, makedev and S_IFCHR are XSI, not strict POSIX. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "model/io.h"
#include "tests/testutil.h"

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/fp_test_io_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  fp_set_max_input_bytes(0);
}

static char *path_in(const char *name) {
  static char p[4][128];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

/* Writes `n` bytes of `c` to path, gzip-compressed when gz. */
static void write_filled(const char *path, size_t n, char c, int gz) {
  static char chunk[1 << 16];
  memset(chunk, c, sizeof chunk);
  if (gz) {
    gzFile f = gzopen(path, "wb9");
    ck_assert_ptr_nonnull(f);
    for (size_t done = 0; done < n;) {
      size_t m = n - done < sizeof chunk ? n - done : sizeof chunk;
      ck_assert_int_eq(gzwrite(f, chunk, (unsigned)m), (int)m);
      done += m;
    }
    ck_assert_int_eq(gzclose(f), Z_OK);
    return;
  }
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  for (size_t done = 0; done < n;) {
    size_t m = n - done < sizeof chunk ? n - done : sizeof chunk;
    ck_assert_uint_eq(fwrite(chunk, 1, m, f), m);
    done += m;
  }
  ck_assert_int_eq(fclose(f), 0);
}

static long max_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads path under a 1 MiB limit: it must fail with FP_ELIMIT naming the
 * file, in well under a second, without the process growing by more than
 * a few MiB (the limit plus the reader's buffers). */
static void expect_bounded_refusal(const char *path) {
  fp_set_max_input_bytes(1 << 20);
  char *data = NULL;
  size_t len = 0;
  fp_error err;
  long rss0 = max_rss_kb();
  double t0 = now_s();
  fp_status st = fp_file_read_all(path, &data, &len, &err);
  double dt = now_s() - t0;
  long grew_kb = max_rss_kb() - rss0;
  free(data);
  ck_assert_msg(st == FP_ELIMIT, "%s: got %s (%s), %zu bytes", path,
                fp_status_name(st), st ? err.msg : "", len);
  ck_assert_ptr_null(data);
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  ck_assert_ptr_nonnull(strstr(err.msg, "larger than 1048576 bytes"));
  ck_assert_msg(dt < 1.0, "%s: refused after %.2f s", path, dt);
  ck_assert_msg(grew_kb < 16 * 1024, "%s: memory grew by %ld KiB", path,
                grew_kb);
}

START_TEST(limit_setter) {
  ck_assert_uint_eq(fp_max_input_bytes(), FP_MAX_FILE_BYTES);
  ck_assert_uint_eq(FP_MAX_FILE_BYTES, (uint64_t)4 << 30);
  fp_set_max_input_bytes(12345);
  ck_assert_uint_eq(fp_max_input_bytes(), 12345);
  fp_set_max_input_bytes(0); /* back to the default */
  ck_assert_uint_eq(fp_max_input_bytes(), FP_MAX_FILE_BYTES);
}
END_TEST

/* A file of exactly the limit loads; one byte more does not, plain and
 * gzip alike. */
START_TEST(limit_is_exact) {
  make_dir();
  for (int gz = 0; gz < 2; gz++) {
    const char *p = path_in(gz ? "f.gz" : "f");
    write_filled(p, 100000, 'x', gz);
    char *data = NULL;
    size_t len = 0;
    fp_error err;
    fp_set_max_input_bytes(100000);
    ck_assert_int_eq(fp_file_read_all(p, &data, &len, &err), FP_OK);
    ck_assert_uint_eq(len, 100000);
    ck_assert_int_eq(data[99999], 'x');
    ck_assert_int_eq(data[100000], '\0');
    free(data);
    fp_set_max_input_bytes(99999);
    ck_assert_int_eq(fp_file_read_all(p, &data, &len, &err), FP_ELIMIT);
    ck_assert_ptr_null(data);
    ck_assert_ptr_nonnull(strstr(err.msg, "larger than 99999 bytes"));
  }
  remove_dir();
}
END_TEST

/* 256 MiB of zeros in ~256 KiB of gzip. */
START_TEST(gzip_bomb_is_refused_early) {
  make_dir();
  const char *p = path_in("bomb.json.gz");
  write_filled(p, (size_t)256 << 20, '\0', 1);
  struct stat sb;
  ck_assert_int_eq(stat(p, &sb), 0);
  ck_assert_int_lt(sb.st_size, 2 << 20);
  expect_bounded_refusal(p);
  remove_dir();
}
END_TEST

/* A character device that never ends. */
START_TEST(dev_zero_is_refused_early) {
  expect_bounded_refusal("/dev/zero");
}
END_TEST

/* A 1 GiB sparse file: a plain regular file past the limit is refused by
 * its size, unread. */
START_TEST(large_file_is_refused_unread) {
  make_dir();
  const char *p = path_in("sparse.json");
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
  close(fd);
  expect_bounded_refusal(p);
  remove_dir();
}
END_TEST

/* Standard input from a pipe that a child fills with 64 MiB. */
START_TEST(pipe_is_refused_early) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    static char chunk[1 << 16];
    memset(chunk, '1', sizeof chunk);
    close(fds[0]);
    for (int i = 0; i < 1024; i++)
      if (write(fds[1], chunk, sizeof chunk) < 0)
        _exit(0); /* the reader stopped: as it should */
    _exit(0);
  }
  close(fds[1]);
  int saved = dup(0);
  ck_assert_int_eq(dup2(fds[0], 0), 0);
  close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  fp_set_max_input_bytes(1 << 20);
  char *data = NULL;
  size_t len;
  fp_error err;
  ck_assert_int_eq(fp_file_read_all("-", &data, &len, &err), FP_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "-: larger than 1048576 bytes"));
  dup2(saved, 0); /* closes the pipe: the child ends */
  close(saved);
  waitpid(pid, NULL, 0);
  fp_set_max_input_bytes(0);
}
END_TEST

/* gzip members that follow one another are one file; anything else after
 * a gzip stream is corrupt. */
START_TEST(gzip_members_and_trailing_data) {
  make_dir();
  const char *a = path_in("a.gz"), *b = path_in("b.gz"), *ab = path_in("ab.gz");
  write_filled(a, 1000, 'a', 1);
  write_filled(b, 2000, 'b', 1);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cat '%s' '%s' > '%s'", a, b, ab);
  ck_assert_int_eq(system(cmd), 0);
  char *data = NULL;
  size_t len;
  fp_error err;
  ck_assert_int_eq(fp_file_read_all(ab, &data, &len, &err), FP_OK);
  ck_assert_uint_eq(len, 3000);
  ck_assert(data[999] == 'a' && data[1000] == 'b');
  free(data);
  /* One byte of garbage, then a whole non-gzip line. */
  const char *tails[] = {"x", "\037", "not gzip\n"};
  for (int i = 0; i < 3; i++) {
    snprintf(cmd, sizeof cmd, "cat '%s' > '%s' && printf '%s' >> '%s'", a, ab,
             tails[i], ab);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(fp_file_read_all(ab, &data, &len, &err), FP_EINPUT);
    ck_assert_ptr_nonnull(
        strstr(err.msg, "corrupt or truncated gzip data (data after the end "
                        "of the stream)"));
  }
  /* A gzip member cut anywhere. */
  struct stat sb;
  ck_assert_int_eq(stat(a, &sb), 0);
  for (off_t cut = 2; cut < sb.st_size; cut++) {
    snprintf(cmd, sizeof cmd, "head -c %lld '%s' > '%s'", (long long)cut, a,
             ab);
    ck_assert_int_eq(system(cmd), 0);
    fp_status st = fp_file_read_all(ab, &data, &len, &err);
    ck_assert_msg(st == FP_EINPUT, "cut at %lld: %s", (long long)cut,
                  fp_status_name(st));
  }
  remove_dir();
}
END_TEST

static char *slurp(const char *path) {
  char *data = NULL;
  size_t len;
  fp_error err;
  ck_assert_msg(fp_file_read_all(path, &data, &len, &err) == FP_OK, "%s",
                err.msg);
  return data;
}

/* A link (relative, into another directory, through a second, absolute
 * link) is followed: its final target is replaced, every link stays. */
START_TEST(write_follows_links) {
  make_dir();
  fp_error err;
  ck_assert_int_eq(mkdir(path_in("a"), 0755), 0);
  ck_assert_int_eq(mkdir(path_in("b"), 0755), 0);
  write_filled(path_in("b/target"), 10, 'o', 0);
  ck_assert_int_eq(symlink(path_in("b/target"), path_in("b/abs")), 0);
  ck_assert_int_eq(symlink("../b/abs", path_in("a/rel")), 0);
  ck_assert_int_eq(fp_file_write_atomic(path_in("a/rel"), "new\n", 4, &err),
                   FP_OK);
  char *s = slurp(path_in("b/target"));
  ck_assert_str_eq(s, "new\n");
  free(s);
  struct stat sb;
  ck_assert_int_eq(lstat(path_in("a/rel"), &sb), 0);
  ck_assert(S_ISLNK(sb.st_mode));
  ck_assert_int_eq(lstat(path_in("b/abs"), &sb), 0);
  ck_assert(S_ISLNK(sb.st_mode));
  /* A dangling link: its target is created. */
  ck_assert_int_eq(symlink("made", path_in("a/dangling")), 0);
  ck_assert_int_eq(fp_file_write_atomic(path_in("a/dangling"), "x", 1, &err),
                   FP_OK);
  s = slurp(path_in("a/made"));
  ck_assert_str_eq(s, "x");
  free(s);
  /* A loop: FP_EIO naming the path, nothing created. */
  ck_assert_int_eq(symlink("l2", path_in("a/l1")), 0);
  ck_assert_int_eq(symlink("l1", path_in("a/l2")), 0);
  ck_assert_int_eq(fp_file_write_atomic(path_in("a/l1"), "x", 1, &err), FP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "l1: cannot write: "));
  ck_assert_ptr_nonnull(strstr(err.msg, strerror(ELOOP)));
  remove_dir();
}
END_TEST

/* Device nodes (made here, as root) are written in place: a full one
 * fails with ENOSPC, a null one takes the data; both stay devices. */
START_TEST(write_devices_in_place) {
  make_dir();
  const char *full = path_in("full"), *null = path_in("null");
  if (mknod(full, S_IFCHR | 0666, makedev(1, 7)) != 0 ||
      mknod(null, S_IFCHR | 0666, makedev(1, 3)) != 0) {
    fprintf(stderr, "note: mknod failed (%s): device cases skipped\n",
            strerror(errno));
    remove_dir();
    return;
  }
  fp_error err;
  struct stat sb;
  ck_assert_int_eq(fp_file_write_atomic(full, "data\n", 5, &err), FP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "full: cannot write: "));
  ck_assert_ptr_nonnull(strstr(err.msg, strerror(ENOSPC)));
  ck_assert_int_eq(lstat(full, &sb), 0);
  ck_assert(S_ISCHR(sb.st_mode));
  ck_assert_int_eq(fp_file_write_atomic(null, "data\n", 5, &err), FP_OK);
  ck_assert_int_eq(lstat(null, &sb), 0);
  ck_assert(S_ISCHR(sb.st_mode));
  remove_dir();
}
END_TEST

/* The entries of dir (but . and ..). */
static int dir_entries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  ck_assert_ptr_nonnull(d);
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static void remove_temps_and_exit(int sig) {
  (void)sig;
  fp_file_remove_temps();
  _exit(9);
}

/* A signal in the middle of a write (SIGXFSZ, raised by the write itself
 * past RLIMIT_FSIZE: exactly then) whose handler calls
 * fp_file_remove_temps leaves nothing in the directory; after writes
 * that ended, it removes nothing. */
START_TEST(signal_mid_write_removes_temp) {
  make_dir();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    static char big[1 << 16];
    struct rlimit rl = {4096, 4096};
    fp_error err;
    signal(SIGXFSZ, remove_temps_and_exit);
    setrlimit(RLIMIT_FSIZE, &rl);
    fp_file_write_atomic(path_in("out"), big, sizeof big, &err);
    _exit(0); /* no signal came */
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 9);
  ck_assert_int_eq(dir_entries(), 0);
  fp_error err;
  for (int i = 0; i < 20; i++) /* more writes than the table has slots */
    ck_assert_int_eq(fp_file_write_atomic(path_in("done"), "x", 1, &err),
                     FP_OK);
  fp_file_remove_temps();
  char *s = slurp(path_in("done"));
  ck_assert_str_eq(s, "x");
  free(s);
  ck_assert_int_eq(dir_entries(), 1);
  remove_dir();
}
END_TEST

static Suite *io_suite(void) {
  Suite *s = suite_create("model/io");
  TCase *tc = tcase_create("io");
  tcase_add_test(tc, limit_setter);
  tcase_add_test(tc, limit_is_exact);
  tcase_add_test(tc, gzip_bomb_is_refused_early);
  tcase_add_test(tc, dev_zero_is_refused_early);
  tcase_add_test(tc, large_file_is_refused_unread);
  tcase_add_test(tc, pipe_is_refused_early);
  tcase_add_test(tc, gzip_members_and_trailing_data);
  tcase_add_test(tc, write_follows_links);
  tcase_add_test(tc, write_devices_in_place);
  tcase_add_test(tc, signal_mid_write_removes_temp);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(io_suite());
}
