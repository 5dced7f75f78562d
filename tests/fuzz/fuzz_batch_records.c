/*
 * fuzz_batch_records.c -- libFuzzer target for the readers of a batch
 * dataset's JSON lines (batch/batch_json.h): the manifest line reader
 * (fp_batch_line_parse) and the item record reader behind index.jsonl
 * and items/<id>.json (fp_batch_record_parse).
 *
 * The input is cut into lines, as the manifest and index.jsonl are read,
 * and the whole input is tried too.  Each piece goes to both readers.  A
 * rejection must be FP_EINPUT (or FP_ENOMEM) with a one-line message that
 * starts with the name it was given; an accepted piece must be one JSON
 * document.  An accepted record must be a fixed point of writing: record
 * -> fp_batch_record_to_json -> parse -> write gives the same line, one
 * line ending in '\n'.  The harness calls the readers by name only, so it
 * follows them if they move.
 *
 * Built with -fsanitize=fuzzer (`make fuzz`) or with standalone_main.c
 * (`make check` replays tests/fuzz/corpus/fuzz_batch_records).  See
 * docs/fuzzing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_json.h"
#include "tests/fuzz/fuzz_check.h"

/* A rejection of the batch readers: FP_EINPUT only (they have no size
 * limit of their own), otherwise as fuzz_check_rejection. */
static void check_batch_rejection(fp_status st, const fp_error *err,
                                  const char *where) {
  if (st == FP_ELIMIT)
    fuzz_fail("the batch readers reject with FP_EINPUT", err->msg);
  fuzz_check_rejection(st, err, where);
}

/* Writes r and checks that the line reads back to the same line. */
static void check_record_round_trip(const fp_batch_record *r) {
  fp_batch_record *back = malloc(sizeof *back);
  char *s1 = fp_batch_record_to_json(r, NULL), *s2 = NULL;
  fp_error err;
  if (!back || !s1)
    goto done; /* out of memory */
  size_t n = strlen(s1);
  if (n == 0 || s1[n - 1] != '\n' || memchr(s1, '\n', n - 1))
    fuzz_fail("a record is written as one line ending in a newline", s1);
  if (fp_batch_record_parse(s1, n, "rewritten", back, &err) != FP_OK) {
    fprintf(stderr, "%s", s1);
    fuzz_fail("a written record reads back", err.msg);
  }
  s2 = fp_batch_record_to_json(back, NULL);
  if (s2 && strcmp(s1, s2) != 0) {
    fprintf(stderr, "first:  %ssecond: %s", s1, s2);
    fuzz_fail("record write -> read -> write gives the same line", NULL);
  }
done:
  free(s1);
  free(s2);
  free(back);
}

/* Runs both readers on one piece of the input. */
static void try_piece(const char *text, size_t len) {
  fp_batch_line *ln = malloc(sizeof *ln);
  fp_batch_record *r = malloc(sizeof *r);
  fp_error err;
  if (!ln || !r)
    goto done;
  fp_error_clear(&err);
  fp_status st = fp_batch_line_parse(text, len, "manifest:1", ln, &err);
  if (st != FP_OK)
    check_batch_rejection(st, &err, "manifest:1");
  else if (!ln->graph[0])
    fuzz_fail("an accepted manifest line names a graph", NULL);
  else
    fuzz_check_valid_json(text, len, "only JSON loads as a manifest line");
  fp_error_clear(&err);
  st = fp_batch_record_parse(text, len, FUZZ_SRC, r, &err);
  if (st != FP_OK) {
    check_batch_rejection(st, &err, FUZZ_SRC);
  } else {
    fuzz_check_valid_json(text, len, "only JSON loads as a record");
    check_record_round_trip(r);
  }
done:
  free(ln);
  free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  const char *end = text + size;
  try_piece(text, size);
  /* Line by line, as the manifest and index.jsonl are read. */
  for (const char *s = text; s < end;) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (nl || s != text) /* the whole input was tried above */
      try_piece(s, k);
    s += k + 1;
  }
  return 0;
}
