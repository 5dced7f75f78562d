/*
 * dataset.c -- the dataset files of a batch directory (batch.h):
 * index.jsonl, pairs.csv.gz and nodes.csv.gz, assembled from the item
 * files in id order, so that the same items give the same bytes however
 * they were computed; and the index read back (for the report).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "batch/labels.h"
#include "model/io.h"

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

fp_status fp_batch_list_ids(const char *dir, char ***ids, int32_t *n,
                            fp_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/items", dir);
  DIR *d = opendir(path);
  size_t cap = 0;
  *ids = NULL;
  *n = 0;
  if (!d)
    return fp_error_set(err, FP_EIO, "%s: cannot open", path);
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len != 64 + 5 || strcmp(e->d_name + 64, ".json") != 0)
      continue;
    if ((size_t)*n == cap) {
      char **grown = realloc(*ids, (cap = cap ? 2 * cap : 256) * sizeof *grown);
      if (!grown)
        break;
      *ids = grown;
    }
    if (!((*ids)[*n] = strndup(e->d_name, 64)))
      break;
    (*n)++;
  }
  closedir(d);
  if (*n)
    qsort(*ids, (size_t)*n, sizeof **ids, cmp_str);
  return FP_OK;
}

/* Appends the file at path (if any) to f. */
static void append_file(FILE *f, const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (fp_file_read_all(path, &text, &len, NULL) == FP_OK) {
    fwrite(text, 1, len, f);
    if (len && text[len - 1] != '\n')
      fputc('\n', f);
  }
  free(text);
}

typedef struct outputs {
  FILE *f[3];
  char *text[3];
  size_t len[3];
} outputs;

static const char *const output_names[3] = {"index.jsonl", "pairs.csv.gz",
                                            "nodes.csv.gz"};

/* Closes the three streams and writes them atomically. */
static fp_status write_outputs(outputs *O, const char *dir, fp_status st,
                               fp_error *err) {
  char path[4200];
  for (int i = 0; i < 3; i++) {
    bool ok = O->f[i] && fclose(O->f[i]) == 0 && O->text[i];
    if (st == FP_OK && !ok)
      st = fp_error_set(err, FP_ENOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/%s", dir, output_names[i]);
    if (st == FP_OK)
      st = fp_file_write_atomic(path, O->text[i], O->len[i], err);
    free(O->text[i]);
  }
  return st;
}

fp_status fp_batch_assemble(const char *dir, fp_error *err) {
  char **ids = NULL, path[4200];
  int32_t n = 0;
  outputs O;
  memset(&O, 0, sizeof O);
  fp_status st = fp_batch_list_ids(dir, &ids, &n, err);
  for (int i = 0; i < 3; i++)
    O.f[i] = open_memstream(&O.text[i], &O.len[i]);
  if (st == FP_OK && (!O.f[0] || !O.f[1] || !O.f[2]))
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK) {
    fputs(fp_batch_pairs_header, O.f[1]);
    fputs(fp_batch_nodes_header, O.f[2]);
  }
  for (int32_t i = 0; st == FP_OK && i < n; i++) {
    snprintf(path, sizeof path, "%s/items/%s.json", dir, ids[i]);
    append_file(O.f[0], path);
    snprintf(path, sizeof path, "%s/labels/%s.pairs.csv", dir, ids[i]);
    append_file(O.f[1], path);
    snprintf(path, sizeof path, "%s/labels/%s.nodes.csv", dir, ids[i]);
    append_file(O.f[2], path);
  }
  st = write_outputs(&O, dir, st, err);
  for (int32_t i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
  return st;
}

fp_status fp_batch_load_index(const char *dir, fp_batch_record **out,
                              int32_t *n, fp_error *err) {
  char path[4200], *text = NULL, where[4300];
  size_t len = 0, lines = 0;
  snprintf(path, sizeof path, "%s/index.jsonl", dir);
  *out = NULL;
  *n = 0;
  fp_status st = fp_file_read_all(path, &text, &len, err);
  for (size_t i = 0; st == FP_OK && i < len; i++)
    lines += text[i] == '\n';
  if (st == FP_OK && !(*out = calloc(lines + 1, sizeof **out)))
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  size_t line = 0;
  for (char *s = text; st == FP_OK && s && *s; line++) {
    char *nl = strchr(s, '\n');
    size_t k = nl ? (size_t)(nl - s) : strlen(s);
    snprintf(where, sizeof where, "%s:%zu", path, line + 1);
    if (k)
      st = fp_batch_record_parse(s, k, where, &(*out)[(*n)++], err);
    s = nl ? nl + 1 : NULL;
  }
  free(text);
  if (st != FP_OK) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return st;
}
