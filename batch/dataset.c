/*
 * dataset.c -- the dataset files of a batch directory (batch.h):
 * index.jsonl, pairs.csv.gz and nodes.csv.gz, assembled from the item
 * files in id order, so that the same items give the same bytes however
 * they were computed; the check of one item's files (a record that is not
 * valid is left out, and recomputed by a batch that asks for it); and the
 * index read back (for the report).
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

/* ---- checking an item's files ---------------------------------------------
 */

/* Checks label file DIR/labels/<id><ext>: readable, and empty or whole
 * rows of item id (it starts with "<id>," and ends with a line break). */
static fp_status check_labels(const char *dir, const char *id, const char *ext,
                              fp_error *err) {
  char path[4200], *text = NULL;
  size_t len = 0, k = strlen(id);
  snprintf(path, sizeof path, "%s/labels/%s%s", dir, id, ext);
  fp_status st = fp_file_read_all(path, &text, &len, err);
  if (st == FP_OK && len &&
      (len <= k || strncmp(text, id, k) != 0 || text[k] != ',' ||
       text[len - 1] != '\n'))
    st = fp_error_set(err, FP_EINPUT, "%s: not the label rows of item %s", path,
                      id);
  free(text);
  return st;
}

/* Checks the plan file of record rec: DIR/plans/<id>.json.gz reads as a
 * plan file. */
static fp_status check_plan(const char *dir, const fp_batch_record *rec,
                            fp_error *err) {
  char path[4200], want[128], *text = NULL;
  size_t len = 0;
  snprintf(want, sizeof want, "plans/%s.json.gz", rec->id);
  snprintf(path, sizeof path, "%s/%s", dir, want);
  if (strcmp(rec->plan, want) != 0)
    return fp_error_set(err, FP_EINPUT,
                        "%s/items/%s.json: plan '%s': "
                        "expected %s",
                        dir, rec->id, rec->plan, want);
  fp_status st = fp_file_read_all(path, &text, &len, err);
  if (st == FP_OK)
    st = fp_batch_plan_json_check(text, len, path, err);
  free(text);
  return st;
}

/* Whether status s is one a record may have. */
static bool known_status(const char *s) {
  return strcmp(s, "optimal") == 0 || strcmp(s, "feasible") == 0 ||
         strcmp(s, "infeasible") == 0 || strcmp(s, "error") == 0;
}

fp_status fp_batch_record_load(const char *dir, const char *id,
                               fp_batch_record *rec, fp_error *err) {
  char path[4200], labels[128], *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/items/%s.json", dir, id);
  fp_status st = fp_file_read_all(path, &text, &len, err);
  if (st == FP_OK)
    st = fp_batch_record_parse(text, len, path, rec, err);
  free(text);
  if (st != FP_OK)
    return st;
  if (strcmp(rec->id, id) != 0)
    return fp_error_set(err, FP_EINPUT, "%s: holds item %s, not %s", path,
                        rec->id, id);
  if (!known_status(rec->status))
    return fp_error_set(err, FP_EINPUT, "%s: unknown status '%s'", path,
                        rec->status);
  bool solved = strcmp(rec->status, "optimal") == 0 ||
                strcmp(rec->status, "feasible") == 0;
  if (!solved)
    return FP_OK;
  snprintf(labels, sizeof labels, "labels/%s", id);
  if (strcmp(rec->labels, labels) != 0)
    return fp_error_set(err, FP_EINPUT, "%s: labels '%s': expected %s", path,
                        rec->labels, labels);
  st = check_plan(dir, rec, err);
  if (st == FP_OK)
    st = check_labels(dir, id, ".pairs.csv", err);
  if (st == FP_OK)
    st = check_labels(dir, id, ".nodes.csv", err);
  if (st == FP_EIO && err) /* a file of a record that is there */
    err->code = FP_EINPUT;
  return st == FP_EIO ? FP_EINPUT : st;
}

/* ---- assembling ------------------------------------------------------------
 */

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
  int32_t rows, failed;
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

/* Adds item id of DIR to the outputs, when its record is valid; a bad
 * one is left out with a warning.  FP_ENOMEM only. */
static fp_status add_item(outputs *O, const char *dir, const char *id,
                          fp_batch_warn_fn warn, void *ctx,
                          fp_batch_record *rec) {
  char path[4200], msg[FP_ERROR_MSG_MAX + 32];
  fp_error e;
  fp_error_clear(&e);
  if (fp_batch_record_load(dir, id, rec, &e) != FP_OK) {
    if (e.code == FP_ENOMEM)
      return FP_ENOMEM;
    snprintf(msg, sizeof msg, "%s: left out of the dataset", e.msg);
    if (warn)
      warn(msg, ctx);
    return FP_OK;
  }
  /* Re-serialised, so that a row is one compact line whatever the file's
   * layout. */
  char *row = fp_batch_record_to_json(rec, &e);
  if (!row)
    return FP_ENOMEM;
  fputs(row, O->f[0]);
  free(row);
  O->rows++;
  O->failed += strcmp(rec->status, "error") == 0 ||
               strcmp(rec->status, "infeasible") == 0;
  snprintf(path, sizeof path, "%s/labels/%s.pairs.csv", dir, id);
  append_file(O->f[1], path);
  snprintf(path, sizeof path, "%s/labels/%s.nodes.csv", dir, id);
  append_file(O->f[2], path);
  return FP_OK;
}

fp_status fp_batch_assemble(const char *dir, fp_batch_warn_fn warn, void *ctx,
                            int32_t *rows, int32_t *failed, fp_error *err) {
  char **ids = NULL;
  int32_t n = 0;
  outputs O;
  memset(&O, 0, sizeof O);
  fp_batch_record *rec = malloc(sizeof *rec);
  fp_status st = fp_batch_list_ids(dir, &ids, &n, err);
  for (int i = 0; i < 3; i++)
    O.f[i] = open_memstream(&O.text[i], &O.len[i]);
  if (st == FP_OK && (!O.f[0] || !O.f[1] || !O.f[2] || !rec))
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK) {
    fputs(fp_batch_pairs_header, O.f[1]);
    fputs(fp_batch_nodes_header, O.f[2]);
  }
  for (int32_t i = 0; st == FP_OK && i < n; i++)
    if (add_item(&O, dir, ids[i], warn, ctx, rec) != FP_OK)
      st = fp_error_set(err, FP_ENOMEM, "out of memory");
  st = write_outputs(&O, dir, st, err);
  if (rows)
    *rows = O.rows;
  if (failed)
    *failed = O.failed;
  for (int32_t i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
  free(rec);
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
