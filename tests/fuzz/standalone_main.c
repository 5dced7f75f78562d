/*
 * standalone_main.c -- replays inputs through a fuzz target without
 * libFuzzer: `fuzz_graph_load FILE|DIR...` (or any other target linked
 * with this file) runs LLVMFuzzerTestOneInput on
 * every regular file given, and on every regular file found (recursively)
 * in every directory given.  This is how `make check` runs the seed corpus
 * and the bad-input corpus under the ordinary compiler (and, in a
 * --enable-sanitizers build, under ASan and UBSan).
 *
 * Exit status: 0 when every input ran (a broken invariant aborts the
 * process), 1 when an argument could not be read, 2 on usage errors.
 */
#ifndef FP_FUZZ_LIBFUZZER

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs run and arguments that could not be read. */
static long n_run, n_errors;
static int verbose;
/* The program's name, for messages. */
static const char *prog = "fuzz";

/* Reads all of `path` into a fresh buffer (*size bytes); NULL on error. */
static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0;
  if (!f)
    return NULL;
  for (;;) {
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 65536;
      uint8_t *nb = realloc(buf, ncap);
      if (!nb) {
        free(buf);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      buf = nb;
      cap = ncap;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  *size = n;
  return buf;
}

/* Runs the target on one file. */
static void run_file(const char *path) {
  size_t size = 0;
  uint8_t *data = read_file(path, &size);
  if (!data) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    n_errors++;
    return;
  }
  if (verbose)
    fprintf(stderr, "running %s (%zu bytes)\n", path, size);
  /* Copied into an exact-size block, as libFuzzer does, so that ASan
   * catches any read past the end of the input. */
  uint8_t *exact = malloc(size ? size : 1);
  if (!exact) {
    free(data);
    n_errors++;
    return;
  }
  memcpy(exact, data, size);
  free(data);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  n_run++;
}

/* qsort comparator for an array of C strings. */
static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs the target on a file, or on every file below a directory. */
static void run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    n_errors++;
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    run_file(path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    n_errors++;
    return;
  }
  /* Sorted, so that runs are reproducible. */
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e = readdir(d); e; e = readdir(d)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn)
        break;
      names = nn;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    if (!(names[n] = malloc(len)))
      break;
    snprintf(names[n], len, "%s/%s", path, e->d_name);
    n++;
  }
  closedir(d);
  if (n > 1)
    qsort(names, n, sizeof *names, cmp_names);
  for (size_t i = 0; i < n; i++) {
    run_path(names[i]);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  int first = 1;
  if (argc > 0 && argv[0][0]) {
    const char *slash = strrchr(argv[0], '/');
    prog = slash ? slash + 1 : argv[0];
  }
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    verbose = 1;
    first = 2;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: %s [-v] FILE|DIR...\n", argv[0]);
    return 2;
  }
  for (int i = first; i < argc; i++)
    run_path(argv[i]);
  printf("%s: %ld inputs ran, %ld unreadable\n", prog, n_run, n_errors);
  return n_errors ? 1 : 0;
}

#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int fp_standalone_main_unused;
#endif /* FP_FUZZ_LIBFUZZER */
