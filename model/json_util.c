/*
 * json_util.c -- strict JSON reads and the exact JSON writer.
 */
#include "model/json_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Line and column (1-based) of byte offset `off` in data. */
static void line_col(const char *data, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (data[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

cJSON *fp_json_parse(const char *data, size_t len, const char *source,
                     fp_error *err) {
  const char *end = NULL;
  int line, col;
  if (len == 0) {
    fp_error_set(err, FP_EINPUT, "%s: malformed JSON: empty document", source);
    return NULL;
  }
  /* require_null_terminated = 0: data need not end in a NUL; trailing
   * garbage is checked by hand below. */
  cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
  if (root && end) {
    const char *p = end;
    while (p < data + len &&
           (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p < data + len) {
      cJSON_Delete(root);
      root = NULL;
      end = p;
    }
  }
  if (!root) {
    size_t off =
        end && end >= data && end <= data + len ? (size_t)(end - data) : len;
    line_col(data, off, &line, &col);
    fp_error_set(err, FP_EINPUT, "%s: malformed JSON at line %d, column %d",
                 source, line, col);
  }
  return root;
}

bool fp_json_u64(const cJSON *item, uint64_t *out) {
  if (!cJSON_IsNumber(item))
    return false;
  double d = item->valuedouble;
  /* `<` 2^53: 2^53 + 1 parses to 2^53, so 2^53 itself is ambiguous. */
  if (!(d >= 0 && d < 9007199254740992.0) || d != floor(d))
    return false;
  *out = (uint64_t)d;
  return true;
}

fp_status fp_json_check_header(const cJSON *root, const char *source,
                               const char *format, fp_error *err) {
  if (!cJSON_IsObject(root))
    return fp_error_set(err, FP_EINPUT, "%s: top level: expected an object",
                        source);
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
  if (!cJSON_IsString(f))
    return fp_error_set(err, FP_EINPUT, "%s: format: missing (expected \"%s\")",
                        source, format);
  if (strcmp(f->valuestring, format) != 0)
    return fp_error_set(err, FP_EINPUT,
                        "%s: format: expected \"%s\", got \"%.64s\"", source,
                        format, f->valuestring);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
  uint64_t ver;
  if (!fp_json_u64(v, &ver))
    return fp_error_set(err, FP_EINPUT,
                        "%s: version: missing or not an integer", source);
  if (ver != 1)
    return fp_error_set(err, FP_EINPUT,
                        "%s: version: %llu is not supported (expected 1)",
                        source, (unsigned long long)ver);
  return FP_OK;
}

/* ---- writer ------------------------------------------------------------- */

static bool reserve(fp_jbuf *b, size_t extra) {
  if (b->oom)
    return false;
  if (b->len + extra + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void fp_jbuf_puts(fp_jbuf *b, const char *s) {
  size_t n = strlen(s);
  if (!reserve(b, n))
    return;
  memcpy(b->s + b->len, s, n + 1);
  b->len += n;
}

void fp_jbuf_printf(fp_jbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(b, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void fp_jbuf_str(fp_jbuf *b, const char *s) {
  if (!reserve(b, strlen(s) * 6 + 2))
    return;
  char *o = b->s + b->len;
  *o++ = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    /* The same escapes as cJSON's printer, so that text we write and text
     * cJSON re-prints (the kept "meta" object) compare equal. */
    char esc = *p == '\b'                ? 'b'
               : *p == '\f'              ? 'f'
               : *p == '\n'              ? 'n'
               : *p == '\r'              ? 'r'
               : *p == '\t'              ? 't'
               : *p == '"' || *p == '\\' ? (char)*p
                                         : 0;
    if (esc) {
      *o++ = '\\';
      *o++ = esc;
    } else if (*p < 0x20) {
      o += sprintf(o, "\\u%04x", *p);
    } else {
      *o++ = (char)*p;
    }
  }
  *o++ = '"';
  *o = '\0';
  b->len = (size_t)(o - b->s);
}

void fp_jbuf_u64(fp_jbuf *b, uint64_t v) {
  char tmp[24];
  snprintf(tmp, sizeof tmp, "%" PRIu64, v);
  fp_jbuf_puts(b, tmp);
}

void fp_jbuf_double(fp_jbuf *b, double v) {
  if (!isfinite(v))
    fp_jbuf_puts(b, "null");
  else {
    /* The shortest of %.15g / %.17g that reads back as the same double. */
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
      snprintf(tmp, sizeof tmp, "%.17g", v);
    fp_jbuf_puts(b, tmp);
  }
}
