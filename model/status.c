/*
 * status.c -- status strings and error-record helpers.
 */
#include "config.h"

#include "model/status.h"

#include <stdio.h>
#include <string.h>

const char *fp_status_str(fp_status s) {
  switch (s) {
#define FP_STATUS_STR_(name, str)                                              \
  case FP_##name:                                                              \
    return str;
    FP_STATUS_MAP(FP_STATUS_STR_)
#undef FP_STATUS_STR_
  default:
    return "unknown status";
  }
}

const char *fp_status_name(fp_status s) {
  switch (s) {
#define FP_STATUS_NAME_(name, str)                                             \
  case FP_##name:                                                              \
    return "FP_" #name;
    FP_STATUS_MAP(FP_STATUS_NAME_)
#undef FP_STATUS_NAME_
  default:
    return "FP_UNKNOWN";
  }
}

/* Rewrites control characters in msg (from names in input files) as
 * visible escapes (\n, \t, \xNN), so a message always stays one line;
 * truncates to fit. */
static void escape_controls(char *msg, size_t cap) {
  char tmp[FP_ERROR_MSG_MAX];
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
    char esc[8];
    if (*p >= 0x20 && *p != 0x7f) {
      esc[0] = (char)*p;
      esc[1] = '\0';
    } else {
      snprintf(esc, sizeof esc,
               *p == '\n'   ? "\\n"
               : *p == '\t' ? "\\t"
               : *p == '\r' ? "\\r"
                            : "\\x%02x",
               *p);
    }
    size_t n = strlen(esc);
    if (o + n >= sizeof tmp || o + n >= cap)
      break;
    memcpy(tmp + o, esc, n);
    o += n;
  }
  tmp[o] = '\0';
  memcpy(msg, tmp, o + 1);
}

fp_status fp_error_set(fp_error *err, fp_status code, const char *fmt, ...) {
  if (err && !fmt) { /* no message given: the status's own string */
    err->code = code;
    snprintf(err->msg, sizeof err->msg, "%s", fp_status_str(code));
  } else if (err) {
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    escape_controls(err->msg, sizeof err->msg);
  }
  return code;
}

void fp_error_prefix(fp_error *err, const char *prefix) {
  if (!err || !prefix)
    return;
  /* Shift the message right and copy the prefix in front, truncating the
   * message's tail if the two do not fit. */
  size_t cap = sizeof err->msg - 1;
  size_t pl = strlen(prefix) + 2; /* "prefix: " */
  if (pl > cap)
    pl = cap;
  size_t ml = strnlen(err->msg, cap);
  if (ml > cap - pl)
    ml = cap - pl;
  memmove(err->msg + pl, err->msg, ml);
  err->msg[pl + ml] = '\0';
  memcpy(err->msg, prefix, pl >= 2 ? pl - 2 : 0);
  if (pl >= 2) {
    err->msg[pl - 2] = ':';
    err->msg[pl - 1] = ' ';
  }
  escape_controls(err->msg, sizeof err->msg);
}

void fp_error_clear(fp_error *err) {
  if (err) {
    err->code = FP_OK;
    err->msg[0] = '\0';
  }
}

const char *fp_version(void) {
  return PACKAGE_VERSION;
}
