/*
 * status.h -- status codes and the error record every fuseplan call fills.
 *
 * Codes and their strings come from one list (FP_STATUS_MAP), in the manner of
 * libuv's error X-macro, so they can never drift apart.  Library code never
 * prints: a failing call returns a code and, when given an fp_error, a
 * one-line message naming the file and the offending item.
 */
#ifndef FP_STATUS_H
#define FP_STATUS_H

#include <stdarg.h>
#include <stddef.h>

/* X(name, string).  The order is part of the ABI: append only. */
#define FP_STATUS_MAP(X)                                                       \
  X(OK, "ok")                                                                  \
  X(ENOMEM, "out of memory")                                                   \
  X(EIO, "input/output error")                                                 \
  X(EINPUT, "invalid input")                                                   \
  X(EILLEGAL, "illegal plan")                                                  \
  X(EINFEASIBLE, "infeasible request")                                         \
  X(EARG, "invalid argument")                                                  \
  X(ELIMIT, "size limit exceeded")                                             \
  X(EINTERNAL, "internal error")                                               \
  X(ENOTBUILT, "not built with CUDA")                                          \
  X(ENODEVICE, "no CUDA device")

typedef enum fp_status {
#define FP_STATUS_ENUM_(name, str) FP_##name,
  FP_STATUS_MAP(FP_STATUS_ENUM_)
#undef FP_STATUS_ENUM_
      FP_STATUS_COUNT_
} fp_status;

#define FP_ERROR_MSG_MAX 512

/* The error record: `code` mirrors the returned status, `msg` says why in
 * one line (no trailing newline).  Callers may pass NULL where they only
 * care about the code. */
typedef struct fp_error {
  fp_status code;
  char msg[FP_ERROR_MSG_MAX];
} fp_error;

/* Bad arguments, in every public function of fuseplan: a NULL pointer the
 * function needs, a graph that is not finalized where it needs one, an
 * index or size out of range, or a NaN or negative time is answered, never
 * a crash: a function returning fp_status returns FP_EARG (and fills err,
 * when given, with a one-line message naming the function and the
 * argument); an accessor returns NULL, 0, -1 or false; a void function
 * does nothing; *_destroy(NULL) is a no-op.  tests/model/test_api_contract.c
 * holds every exported function to this. */

/* Returns the fixed string for a status ("out of memory"); never NULL,
 * "unknown status" for values outside the list. */
const char *fp_status_str(fp_status s);

/* Returns the symbolic name of a status ("FP_ENOMEM"); never NULL. */
const char *fp_status_name(fp_status s);

/* Fills `err` (if non-NULL) with `code` and a printf-formatted message,
 * truncated to fit (fmt NULL: the status's own string).  Returns `code` so
 * callers can write `return fp_error_set(err, FP_EINPUT, "...")`. */
fp_status fp_error_set(fp_error *err, fp_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prepends "prefix: " to err->msg (used to add the file name to a message
 * produced deeper down).  No-op when err is NULL. */
void fp_error_prefix(fp_error *err, const char *prefix);

/* Resets `err` to FP_OK with an empty message.  No-op on NULL. */
void fp_error_clear(fp_error *err);

/* The library's version as "MAJOR.MINOR.PATCH" (the release it was built
 * from); never NULL.  A program compiled against fuseplan.h can compare
 * it with FP_VERSION to see that the library it runs with is the one it
 * was compiled for. */
const char *fp_version(void);

#endif /* FP_STATUS_H */
