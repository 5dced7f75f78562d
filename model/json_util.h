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

/* A parsed document.  Its cJSON tree lives in an arena: millions of
 * small items are freed at once by fp_json_release, never one by one
 * (cJSON_Delete must not be called on `root`). */
typedef struct fp_json_block fp_json_block;
typedef struct fp_json_doc {
  cJSON *root;
  fp_json_block *arena;
} fp_json_doc;

/* Parses `len` bytes of JSON into doc.  On failure doc->root is NULL and
 * err holds FP_EINPUT "source: malformed JSON at line L, column C" (or
 * FP_ENOMEM).  Stricter than cJSON, which is lenient: a string (value or
 * key) holding \u0000, a raw control byte or bytes that are not UTF-8 is
 * FP_EINPUT "source: PATH: string holds a NUL character (\u0000), at line
 * L, column C" (PATH as "groups[1][0]"); a control byte that is not a
 * JSON blank, or a number that is not JSON ("01", "1."), is malformed.
 * Number items whose text has a fraction or an exponent keep their
 * literal in valuestring, for the exact integer readers below.  Always
 * call fp_json_release afterwards. */
fp_status fp_json_parse(const char *data, size_t len, const char *source,
                        fp_json_doc *doc, fp_error *err);

/* Frees the document's tree.  Safe on a zeroed or failed doc. */
void fp_json_release(fp_json_doc *doc);

/* Like fp_json_parse for the bytes [data, data + len) that sit at offset
 * `base` of a larger document (for error positions).  `label` (may be
 * NULL) names the value in a string error ("nodes[3]", "meta").  Reuses
 * doc's arena: the previous tree of doc is gone after this call. */
fp_status fp_json_parse_at(const char *whole, size_t base, size_t len,
                           const char *source, const char *label,
                           fp_json_doc *doc, fp_error *err);

/* ---- streaming the top level ---------------------------------------------
 * A million-node graph as one cJSON tree takes ~7x the file in memory.  The
 * graph loader instead splits the top-level object into members and the
 * big arrays into elements with a small scanner, and lets cJSON parse one
 * element at a time: memory stays ~1x the file, cJSON still does all value
 * parsing.  The scanner checks the structure it walks ({ } [ ] , : and
 * strings); everything inside an element is checked by cJSON. */

typedef struct fp_json_span {
  size_t off, len; /* value text at data + off */
} fp_json_span;

/* Finds the values of the top-level members named keys[0..n) in one pass
 * (the first occurrence of each, as cJSON's lookup does): spans[i].len is
 * 0 when keys[i] is absent.  FP_EINPUT on malformed structure or when
 * the document is not an object (the message says which). */
fp_status fp_json_members(const char *data, size_t len, const char *source,
                          const char *const *keys, int n, fp_json_span *spans,
                          fp_error *err);

/* FP_OK when the document's first non-blank byte is '{' and the object is
 * well formed at the top level (members separated properly, nothing after
 * it); otherwise FP_EINPUT with the position, or "top level: expected an
 * object" for valid JSON that is not an object. */
fp_status fp_json_top_check(const char *data, size_t len, const char *source,
                            fp_error *err);

/* Iterates the elements of an array value. */
typedef struct fp_json_iter {
  const char *data;
  size_t pos, end; /* next byte to scan, end of the array text */
  int count;
} fp_json_iter;

/* Starts iterating `span`; 1 when it is an array, 0 otherwise. */
int fp_json_iter_begin(const char *data, fp_json_span span, fp_json_iter *it);

/* Next element: 1 with *elem set, 0 at the end, -1 on malformed JSON. */
int fp_json_iter_next(fp_json_iter *it, const char *source, fp_json_span *elem,
                      fp_error *err);

/* Reads a non-negative integer below 2^53 from a JSON number.  Returns
 * false for non-numbers, negatives, fractions and values >= 2^53.  The
 * literal's exact decimal value counts, not its double: 4096.0 and
 * 4.096e3 are 4096, 4096.0000000000001 is a fraction. */
bool fp_json_u64(const cJSON *item, uint64_t *out);

/* True when item is a JSON number whose literal is exactly an integer
 * >= 0 (of any size: its double may be rounded above 2^53) and whose
 * double is finite. */
bool fp_json_integral(const cJSON *item);

/* Checks `format` and `version` of a document root (an object). */
fp_status fp_json_check_header(const cJSON *root, const char *source,
                               const char *format, fp_error *err);

/* The same, given the two member values (either may be NULL: missing). */
fp_status fp_json_check_format(const cJSON *format_item,
                               const cJSON *version_item, const char *source,
                               const char *format, fp_error *err);

/* The same for a format with versions 1..max_version: *version gets the
 * document's.  FP_EINPUT (naming the source) for any other version. */
fp_status fp_json_check_format_upto(const cJSON *format_item,
                                    const cJSON *version_item,
                                    const char *source, const char *format,
                                    uint64_t max_version, uint64_t *version,
                                    fp_error *err);

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
