/*
 * json_util.c -- strict JSON reads and the exact JSON writer.
 */
/* mmap flags (MAP_ANONYMOUS, MADV_HUGEPAGE) are not in strict POSIX. */
#define _DEFAULT_SOURCE
#include "model/json_util.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* ---- the parse arena -----------------------------------------------------
 * cJSON allocates one block per item and per string; for a million-node
 * graph that is tens of millions of malloc/free calls, which dominated the
 * load time.  fuseplan's hooks (installed once, process-wide, before its
 * first cJSON call) send the allocations of a parse running in this thread
 * to the document's arena, and make free a no-op during a parse; outside a
 * parse they are plain malloc and free.  No block is tagged, so blocks
 * cJSON allocated before the hooks were installed are freed normally.
 * fuseplan never frees an arena tree through cJSON (fp_json_release drops
 * the arena), and cJSON frees inside a parse only what that parse made.
 * Under AddressSanitizer each allocation stays its own malloc'd block
 * (chained for release), so out-of-bounds reads are still caught. */

#if defined(__SANITIZE_ADDRESS__)
#define FP_ARENA_PER_ITEM 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP_ARENA_PER_ITEM 1
#endif
#endif

#define ARENA_BLOCK ((size_t)32 << 20)

struct fp_json_block {
  fp_json_block *next;
  size_t used, cap;
  max_align_t data[];
};

static _Thread_local fp_json_block **tl_arena; /* set during a parse */
static _Thread_local bool tl_oom;              /* an allocation failed */

/* Arena blocks are large, fresh mappings; where the kernel offers
 * transparent huge pages on request, ask for them: page faults (zeroing
 * 4 KiB at a time) were half of the load time of large graphs. */
static void *block_alloc(size_t bytes) {
#if defined(MADV_HUGEPAGE) && !defined(FP_ARENA_PER_ITEM)
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
#else
  return malloc(bytes);
#endif
}

static void block_free(fp_json_block *b) {
#if defined(MADV_HUGEPAGE) && !defined(FP_ARENA_PER_ITEM)
  munmap(b, sizeof *b + b->cap);
#else
  free(b);
#endif
}

static void *arena_alloc(fp_json_block **head, size_t n) {
  n = (n + 15) & ~(size_t)15;
  fp_json_block *b = *head;
#ifdef FP_ARENA_PER_ITEM
  b = NULL; /* one exact-size block per allocation */
#endif
  if (!b || b->cap - b->used < n) {
    size_t cap = n;
#ifndef FP_ARENA_PER_ITEM
    cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
#endif
    b = block_alloc(sizeof *b + cap);
    if (!b)
      return NULL;
    b->next = *head;
    b->used = 0;
    b->cap = cap;
    *head = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  return p;
}

static void *hook_malloc(size_t n) {
  void *p = tl_arena ? arena_alloc(tl_arena, n) : malloc(n);
  if (!p)
    tl_oom = true;
  return p;
}

static void hook_free(void *p) {
  if (!tl_arena) /* inside a parse: freed with the arena */
    free(p);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void install_hooks(void) {
  cJSON_Hooks h = {hook_malloc, hook_free};
  cJSON_InitHooks(&h);
}

void fp_json_release(fp_json_doc *doc) {
  fp_json_block *b = doc->arena;
  while (b) {
    fp_json_block *next = b->next;
    block_free(b);
    b = next;
  }
  doc->arena = NULL;
  doc->root = NULL;
}

/* Drops every arena block but the newest, and empties that one. */
static void arena_reset(fp_json_doc *doc) {
  fp_json_block *b = doc->arena;
  if (!b)
    return;
  fp_json_block *rest = b->next;
  while (rest) {
    fp_json_block *next = rest->next;
    block_free(rest);
    rest = next;
  }
  b->next = NULL;
  b->used = 0;
}

/* FP_EINPUT "source: malformed JSON at line L, column C" for the byte at
 * offset `off` of `whole`. */
static fp_status syntax_error(const char *whole, size_t off, const char *source,
                              fp_error *err) {
  int line, col;
  line_col(whole, off, &line, &col);
  return fp_error_set(err, FP_EINPUT,
                      "%s: malformed JSON at line %d, column %d", source, line,
                      col);
}

static bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

#define MAX_DEPTH 1000 /* as cJSON's compiled-in CJSON_NESTING_LIMIT */

/* skip_value's answer for values nested deeper than MAX_DEPTH. */
#define TOO_DEEP (SIZE_MAX - 1)

/* FP_EINPUT for a document nested deeper than cJSON accepts. */
static fp_status too_deep(const char *source, fp_error *err) {
  return fp_error_set(err, FP_EINPUT,
                      "%s: malformed JSON: nested deeper than %d levels",
                      source, MAX_DEPTH);
}

/* Bracket depth at offset `off` of d (strings skipped): tells a nesting
 * limit apart from other syntax errors. */
static int nesting_at(const char *d, size_t off) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < off; i++) {
    if (in_str) {
      if (d[i] == '\\')
        i++;
      else if (d[i] == '"')
        in_str = false;
    } else if (d[i] == '"') {
      in_str = true;
    } else if (d[i] == '[' || d[i] == '{') {
      depth++;
    } else if (d[i] == ']' || d[i] == '}') {
      depth--;
    }
  }
  return depth;
}

fp_status fp_json_parse_at(const char *whole, size_t base, size_t len,
                           const char *source, fp_json_doc *doc,
                           fp_error *err) {
  const char *data = whole + base, *end = NULL;
  doc->root = NULL;
  arena_reset(doc);
  size_t first = 0;
  while (first < len && is_ws(data[first]))
    first++;
  if (first == len)
    return fp_error_set(err, FP_EINPUT, "%s: malformed JSON: empty document",
                        source);
  pthread_once(&hooks_once, install_hooks);
  /* require_null_terminated = 0: data need not end in a NUL; trailing
   * garbage is checked by hand below. */
  tl_arena = &doc->arena;
  tl_oom = false;
  cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
  tl_arena = NULL;
  if (tl_oom)
    return fp_error_set(err, FP_ENOMEM, "%s: out of memory parsing JSON",
                        source);
  if (root && end) {
    const char *p = end;
    while (p < data + len && is_ws(*p))
      p++;
    if (p < data + len) {
      int line, col;
      line_col(whole, base + (size_t)(p - data), &line, &col);
      return fp_error_set(err, FP_EINPUT,
                          "%s: malformed JSON: unexpected data after the "
                          "document at line %d, column %d",
                          source, line, col);
    }
  }
  if (!root) {
    size_t off =
        end && end >= data && end <= data + len ? (size_t)(end - data) : len;
    if (nesting_at(data, off) >= MAX_DEPTH) /* cJSON's CJSON_NESTING_LIMIT */
      return too_deep(source, err);
    return syntax_error(whole, base + off, source, err);
  }
  doc->root = root;
  return FP_OK;
}

fp_status fp_json_parse(const char *data, size_t len, const char *source,
                        fp_json_doc *doc, fp_error *err) {
  doc->root = NULL;
  doc->arena = NULL;
  return fp_json_parse_at(data, 0, len, source, doc, err);
}

/* ---- the top-level scanner ---------------------------------------------- */

static size_t skip_ws(const char *d, size_t i, size_t end) {
  while (i < end && is_ws(d[i]))
    i++;
  return i;
}

/* Index after the string starting at d[i] == '"', or SIZE_MAX. */
static size_t skip_string(const char *d, size_t i, size_t end) {
  for (i++; i < end; i++) {
    if (d[i] == '\\')
      i++;
    else if (d[i] == '"')
      return i + 1;
  }
  return SIZE_MAX;
}

/* Index after the value starting at d[i] (no leading blanks), SIZE_MAX
 * when it is cut short, TOO_DEEP when it nests deeper than MAX_DEPTH.  Balances
 * brackets and skips strings; the value's own syntax is left to cJSON. */
static size_t skip_value(const char *d, size_t i, size_t end, int depth) {
  if (i >= end)
    return SIZE_MAX;
  if (d[i] == '"')
    return skip_string(d, i, end);
  if (d[i] != '{' && d[i] != '[') {
    while (i < end && !is_ws(d[i]) && d[i] != ',' && d[i] != ']' && d[i] != '}')
      i++;
    return i;
  }
  int level = 0;
  for (; i < end; i++) {
    char c = d[i];
    if (c == '"') {
      if ((i = skip_string(d, i, end)) == SIZE_MAX)
        return SIZE_MAX;
      i--;
    } else if (c == '{' || c == '[') {
      if (++level + depth > MAX_DEPTH)
        return TOO_DEEP;
    } else if ((c == '}' || c == ']') && --level == 0) {
      return i + 1;
    }
  }
  return SIZE_MAX;
}

/* Walks the top-level object.  For each member calls visit(key span,
 * value span) until it returns nonzero (then returns that).  Returns 0
 * after the last member, -1 on malformed structure (err filled). */
typedef int (*member_fn)(const char *d, size_t key, size_t key_len,
                         fp_json_span val, void *ctx);

static int walk_members(const char *d, size_t len, const char *source,
                        member_fn visit, void *ctx, fp_error *err) {
  size_t i = skip_ws(d, 0, len);
  if (i >= len || d[i] != '{')
    goto bad;
  i = skip_ws(d, i + 1, len);
  if (i < len && d[i] == '}') { /* {} */
    if ((i = skip_ws(d, i + 1, len)) == len)
      return 0;
    goto bad;
  }
  for (;;) {
    size_t k = i, kend;
    if (i >= len || d[i] != '"' || (kend = skip_string(d, i, len)) == SIZE_MAX)
      goto bad;
    i = skip_ws(d, kend, len);
    if (i >= len || d[i] != ':')
      goto bad;
    i = skip_ws(d, i + 1, len);
    size_t v = i, vend = skip_value(d, i, len, 1);
    if (vend == TOO_DEEP) {
      too_deep(source, err);
      return -1;
    }
    if (vend == SIZE_MAX || vend == v)
      goto bad;
    if (visit) {
      int r = visit(d, k + 1, kend - k - 2, (fp_json_span){v, vend - v}, ctx);
      if (r)
        return r;
    }
    i = skip_ws(d, vend, len);
    if (i < len && d[i] == ',') {
      i = skip_ws(d, i + 1, len);
      continue;
    }
    if (i < len && d[i] == '}') {
      if ((i = skip_ws(d, i + 1, len)) == len)
        return 0; /* nothing may follow the object */
    }
    goto bad;
  }
bad:
  syntax_error(d, i < len ? i : len, source, err);
  return -1;
}

fp_status fp_json_top_check(const char *data, size_t len, const char *source,
                            fp_error *err) {
  size_t i = skip_ws(data, 0, len);
  if (i == len)
    return fp_error_set(err, FP_EINPUT, "%s: malformed JSON: empty document",
                        source);
  if (data[i] != '{') {
    /* Not an object: let cJSON say whether it is valid JSON at all. */
    fp_json_doc doc;
    fp_status st = fp_json_parse(data, len, source, &doc, err);
    fp_json_release(&doc);
    if (st != FP_OK)
      return st;
    return fp_error_set(err, FP_EINPUT, "%s: top level: expected an object",
                        source);
  }
  return walk_members(data, len, source, NULL, NULL, err) == 0 ? FP_OK
                                                               : FP_EINPUT;
}

typedef struct find_ctx {
  const char *const *keys;
  int n;
  fp_json_span *spans;
  const char *source;
  fp_json_doc scratch; /* for validating what is not kept */
  fp_error *err;
} find_ctx;

/* Parses bytes [off, off + len) of d with cJSON only to validate them;
 * false with err set when they are not valid JSON. */
static bool valid_json(find_ctx *f, const char *d, size_t off, size_t len) {
  return fp_json_parse_at(d, off, len, f->source, &f->scratch, f->err) == FP_OK;
}

/* A key is valid JSON text unless it holds raw control bytes or bad
 * escapes; plain keys (no backslash) need no parse. */
static bool valid_key(find_ctx *f, const char *d, size_t k, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)d[k + i] < 0x20) {
      syntax_error(d, k + i, f->source, f->err);
      return false;
    }
  return !memchr(d + k, '\\', n) || valid_json(f, d, k - 1, n + 2);
}

/* Compares a raw key (between the quotes) with `key`; keys with escapes
 * are decoded by cJSON. */
static bool key_equals(const char *d, size_t k, size_t n, const char *key,
                       const char *source) {
  if (!memchr(d + k, '\\', n))
    return strlen(key) == n && memcmp(d + k, key, n) == 0;
  fp_json_doc doc = {0};
  bool eq = fp_json_parse_at(d, k - 1, n + 2, source, &doc, NULL) == FP_OK &&
            cJSON_IsString(doc.root) && strcmp(doc.root->valuestring, key) == 0;
  fp_json_release(&doc);
  return eq;
}

/* Records the first occurrence of each wanted key (as cJSON's lookup);
 * every other member's value is validated here, since nobody parses it
 * later: the document as a whole must be JSON, as cJSON would demand. */
static int find_members(const char *d, size_t k, size_t n, fp_json_span val,
                        void *ctx) {
  find_ctx *f = ctx;
  if (!valid_key(f, d, k, n))
    return -1;
  for (int i = 0; i < f->n; i++)
    if (f->spans[i].len == 0 && key_equals(d, k, n, f->keys[i], f->source)) {
      f->spans[i] = val;
      return 0;
    }
  return valid_json(f, d, val.off, val.len) ? 0 : -1;
}

fp_status fp_json_members(const char *data, size_t len, const char *source,
                          const char *const *keys, int n, fp_json_span *spans,
                          fp_error *err) {
  find_ctx f = {keys, n, spans, source, {0}, err};
  for (int i = 0; i < n; i++)
    spans[i] = (fp_json_span){0, 0};
  size_t i = skip_ws(data, 0, len);
  if (i == len || data[i] != '{')
    return fp_json_top_check(data, len, source, err); /* says why */
  int r = walk_members(data, len, source, find_members, &f, err);
  fp_json_release(&f.scratch);
  return r == 0 ? FP_OK : err && err->code == FP_ENOMEM ? FP_ENOMEM : FP_EINPUT;
}

int fp_json_iter_begin(const char *data, fp_json_span span, fp_json_iter *it) {
  if (span.len < 2 || data[span.off] != '[')
    return 0;
  it->data = data;
  it->pos = span.off + 1;
  it->end = span.off + span.len - 1; /* the closing ']' */
  it->count = 0;
  return 1;
}

int fp_json_iter_next(fp_json_iter *it, const char *source, fp_json_span *elem,
                      fp_error *err) {
  const char *d = it->data;
  size_t i = skip_ws(d, it->pos, it->end);
  if (it->count > 0) {
    if (i == it->end)
      return 0;
    if (d[i] != ',')
      goto bad;
    i = skip_ws(d, i + 1, it->end);
  }
  if (i == it->end) {
    if (it->count > 0) /* "[1,]" */
      goto bad;
    return 0;
  }
  size_t j = skip_value(d, i, it->end, 2);
  if (j == TOO_DEEP) {
    too_deep(source, err);
    return -1;
  }
  if (j == SIZE_MAX || j == i)
    goto bad;
  *elem = (fp_json_span){i, j - i};
  it->pos = j;
  it->count++;
  return 1;
bad:
  syntax_error(d, i, source, err);
  return -1;
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
  return fp_json_check_format(cJSON_GetObjectItemCaseSensitive(root, "format"),
                              cJSON_GetObjectItemCaseSensitive(root, "version"),
                              source, format, err);
}

fp_status fp_json_check_format(const cJSON *f, const cJSON *v,
                               const char *source, const char *format,
                               fp_error *err) {
  if (!cJSON_IsString(f))
    return fp_error_set(err, FP_EINPUT, "%s: format: %s (expected \"%s\")",
                        source, f ? "not a string" : "missing", format);
  if (strcmp(f->valuestring, format) != 0)
    return fp_error_set(err, FP_EINPUT,
                        "%s: format: expected \"%s\", got \"%.64s\"", source,
                        format, f->valuestring);
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
