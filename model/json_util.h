/*
 * json_util.h -- internal helpers shared by graph_json.c and plan_json.c:
 * strict typed reads from cJSON items and an exact JSON writer.
 *
 * Only model/'s JSON files include this header (it pulls in cJSON).
 * Output is produced by a small string builder instead of cJSON's printer:
 * it writes 64-bit integers exactly (cJSON prints doubles above 1e15
 * inexactly) and is several times faster on million-node graphs.
 */
#ifndef FP_JSON_UTIL_H
#define FP_JSON_UTIL_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/status.h"

/* Parses `len` bytes of JSON.  On failure returns NULL and fills err with
 * FP_EINPUT "source: malformed JSON at line L, column C". */
cJSON *fp_json_parse(const char *data, size_t len, const char *source,
                     fp_error *err);

/* Reads a non-negative integer below 2^53 from a JSON number.  Returns
 * false for non-numbers, negatives, fractions and values >= 2^53. */
bool fp_json_u64(const cJSON *item, uint64_t *out);

/* Checks `format` and `version` of a document root (an object). */
fp_status fp_json_check_header(const cJSON *root, const char *source,
                               const char *format, fp_error *err);

/* A growable output string.  Any allocation failure sets `oom` and makes
 * later appends no-ops, so callers check once at the end. */
typedef struct fp_jbuf {
  char *s;
  size_t len, cap;
  bool oom;
} fp_jbuf;

void fp_jbuf_puts(fp_jbuf *b, const char *s);
void fp_jbuf_printf(fp_jbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends a JSON string literal (quoted, escaped). */
void fp_jbuf_str(fp_jbuf *b, const char *s);
void fp_jbuf_u64(fp_jbuf *b, uint64_t v);
/* Appends a double exactly enough to round-trip (%.17g), or null for
 * non-finite values. */
void fp_jbuf_double(fp_jbuf *b, double v);

#endif /* FP_JSON_UTIL_H */
