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

/* ---- what cJSON lets through -----------------------------------------------
 * cJSON accepts raw control bytes and any bytes >= 0x80 inside strings, and
 * decodes "\u0000" into a NUL that silently ends the C string ("n5\u0000x"
 * would load as "n5").  Outside strings it takes every byte up to 0x20 as
 * a blank, and numbers as strtod reads them ("01", "1.", "-.5").  None of
 * that is JSON (nor could fuseplan write it back), so the raw text is
 * checked after cJSON has accepted it: every string, values and keys, and
 * everything between them. */

/* Length of the UTF-8 sequence at p (n bytes left), 0 when it is not
 * valid UTF-8 (overlong forms, surrogates and code points past U+10FFFF
 * included, as RFC 3629 says). */
static size_t utf8_len(const unsigned char *p, size_t n) {
  unsigned char c = p[0], lo = 0x80, hi = 0xBF;
  size_t k;
  if (c >= 0xC2 && c <= 0xDF)
    k = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    k = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    k = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (n < k || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < k; i++)
    if (p[i] < 0x80 || p[i] > 0xBF)
      return 0;
  return k;
}

typedef enum { SF_NONE, SF_NUL, SF_CONTROL, SF_UTF8, SF_SYNTAX } text_fault;

static bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

/* The index after the JSON number at p[i] (RFC 8259: -?(0|[1-9][0-9]*)
 * (.[0-9]+)?([eE][+-]?[0-9]+)?), SIZE_MAX when it is not one: cJSON also
 * takes "01", "1." and "-.5" (strtod does).  *frac is set when it has a
 * fraction or an exponent. */
static size_t number_end(const unsigned char *p, size_t i, size_t end,
                         bool *frac) {
  i += i < end && p[i] == '-';
  if (i >= end || !is_digit(p[i]))
    return SIZE_MAX;
  if (p[i++] != '0')
    while (i < end && is_digit(p[i]))
      i++;
  if (i < end && p[i] == '.') {
    *frac = true;
    if (++i >= end || !is_digit(p[i]))
      return SIZE_MAX;
    while (i < end && is_digit(p[i]))
      i++;
  }
  if (i < end && (p[i] == 'e' || p[i] == 'E')) {
    *frac = true;
    i++;
    i += i < end && (p[i] == '+' || p[i] == '-');
    if (i >= end || !is_digit(p[i]))
      return SIZE_MAX;
    while (i < end && is_digit(p[i]))
      i++;
  }
  /* What cJSON read as one number must end here. */
  if (i < end && (is_digit(p[i]) || p[i] == '.' || p[i] == 'e' || p[i] == 'E' ||
                  p[i] == '+' || p[i] == '-'))
    return SIZE_MAX;
  return i;
}

/* Outside strings cJSON takes any byte up to 0x20 as a blank and is loose
 * about numbers; checks the byte at p[*i] there (advancing *i past a
 * number) and says whether it is a fault. */
static bool outside_fault(const unsigned char *p, size_t *i, size_t end,
                          bool *frac) {
  unsigned char c = p[*i];
  if (c < 0x20)
    return !is_ws((char)c);
  if (c != '-' && !is_digit(c))
    return false;
  size_t j = number_end(p, *i, end, frac);
  if (j == SIZE_MAX)
    return true;
  *i = j - 1;
  return false;
}

/* Finds the first fault in d[off, end), JSON text that cJSON accepted,
 * and its offset (*at): in a string, \u0000, a raw control byte or bytes
 * that are not UTF-8; outside, a control byte that is not a JSON blank or
 * a number that is not JSON.  *fractions is set when a number has a
 * fraction or an exponent. */
static text_fault find_text_fault(const char *d, size_t off, size_t end,
                                  size_t *at, bool *fractions) {
  const unsigned char *p = (const unsigned char *)d;
  bool in = false;
  *fractions = false;
  for (size_t i = off; i < end; i++) {
    unsigned char c = p[i];
    text_fault f = SF_NONE;
    if (c == '"') {
      in = !in;
    } else if (!in) {
      size_t start = i;
      if (outside_fault(p, &i, end, fractions)) {
        *at = start;
        return SF_SYNTAX;
      }
    } else if (c == '\\') {
      if (i + 5 < end && p[i + 1] == 'u' && memcmp(p + i + 2, "0000", 4) == 0)
        f = SF_NUL;
      i++; /* cJSON has checked the escape itself */
    } else if (c < 0x20) {
      f = SF_CONTROL;
    } else if (c >= 0x80) {
      size_t k = utf8_len(p + i, end - i);
      if (k == 0)
        f = SF_UTF8;
      else
        i += k - 1;
    }
    if (f != SF_NONE) {
      *at = f == SF_NUL ? i - 1 : i;
      return f;
    }
  }
  return SF_NONE;
}

/* One open bracket on the way to a fault: an array with the index of the
 * current element, or an object with its current key (raw text). */
typedef struct path_level {
  bool array, expect_key;
  int32_t index;
  size_t key, key_len;
} path_level;

/* Writes to `out` (cap bytes) the JSON path of offset `at` inside the
 * value at d[off] (up to `end`): "groups[1][0]", "op.index[2]"; *in_key is
 * set when `at` lies in a key.  Only on failure, so it may walk again. */
static void path_to(const char *d, size_t off, size_t end, size_t at, char *out,
                    size_t cap, bool *in_key) {
  path_level st[MAX_DEPTH + 1];
  int top = -1;
  *in_key = false;
  for (size_t i = off; i < at; i++) {
    char c = d[i];
    if (c == '"') {
      size_t e = skip_string(d, i, end);
      if (top >= 0 && !st[top].array && st[top].expect_key) {
        st[top].key = i + 1;
        st[top].key_len = e - i - 2;
        *in_key = at < e;
      }
      if (at < e)
        break;
      i = e - 1;
    } else if ((c == '{' || c == '[') && top < MAX_DEPTH) {
      st[++top] = (path_level){c == '[', c == '{', 0, 0, 0};
    } else if ((c == '}' || c == ']') && top >= 0) {
      top--;
    } else if (c == ':' && top >= 0) {
      st[top].expect_key = false;
    } else if (c == ',' && top >= 0) {
      st[top].index++;
      st[top].expect_key = !st[top].array;
    }
  }
  size_t n = 0;
  int last = *in_key ? top - 1 : top; /* a key's path is its object's */
  for (int l = 0; l <= last && n < cap; l++) {
    int k = st[l].array
                ? snprintf(out + n, cap - n, "[%d]", (int)st[l].index)
                : snprintf(out + n, cap - n, "%s%.*s", n ? "." : "",
                           (int)(st[l].key_len > 64 ? 64 : st[l].key_len),
                           d + st[l].key);
    n += k > 0 ? (size_t)k : 0;
  }
}

/* FP_EINPUT when a string of the value at whole[base, base + len) holds a
 * NUL, a raw control byte or bytes that are not UTF-8: "SOURCE: LABEL:
 * PATH: string holds ..., at line L, column C" ("a key" for a key, or
 * when `key` says the value is one), or "malformed JSON at line L,
 * column C" for what cJSON let through outside strings.  *fractions: see
 * find_text_fault. */
static fp_status check_text(const char *whole, size_t base, size_t len,
                            const char *source, const char *label, bool key,
                            bool *fractions, fp_error *err) {
  size_t at;
  text_fault f = find_text_fault(whole, base, base + len, &at, fractions);
  if (f == SF_NONE)
    return FP_OK;
  if (f == SF_SYNTAX)
    return syntax_error(whole, at, source, err);
  char path[256] = "", where[480];
  bool in_key;
  path_to(whole, base, base + len, at, path, sizeof path, &in_key);
  /* "nodes[3]" + "name" -> "nodes[3]: name"; "extra" + "[1]" -> "extra[1]" */
  snprintf(where, sizeof where, "%.200s%s%s", label ? label : "",
           label && path[0] && path[0] != '[' ? ": " : "", path);
  int line, col;
  line_col(whole, at, &line, &col);
  const char *what = key || in_key ? "a key" : "string";
  if (f == SF_CONTROL)
    return fp_error_set(err, FP_EINPUT,
                        "%s: %s: %s holds a raw control character (0x%02x), "
                        "at line %d, column %d",
                        source, where[0] ? where : "top level", what,
                        (unsigned)(unsigned char)whole[at], line, col);
  return fp_error_set(err, FP_EINPUT, "%s: %s: %s %s, at line %d, column %d",
                      source, where[0] ? where : "top level", what,
                      f == SF_NUL ? "holds a NUL character (\\u0000)"
                                  : "is not valid UTF-8",
                      line, col);
}

/* ---- number literals -------------------------------------------------------
 * cJSON keeps a number only as a double, so 4096.0000000000001 would read
 * as 4096.  Where the text has a fraction or an exponent, each number item
 * gets its literal text in `valuestring` (which cJSON leaves NULL for
 * numbers and never reads for them), and the integer readers below check
 * the literal's exact decimal value instead of the double. */

static bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' ||
         c == 'e' || c == 'E';
}

/* attach_literals' answers besides an index. */
#define ATTACH_OOM SIZE_MAX
#define ATTACH_LOST (SIZE_MAX - 1) /* the text does not follow the tree */

/* The index after d[i] == `want` (blanks first), or ATTACH_LOST. */
static size_t expect_char(const char *d, size_t i, size_t end, char want) {
  i = skip_ws(d, i, end);
  return i < end && d[i] == want ? i + 1 : ATTACH_LOST;
}

/* Walks the text of `item` (at d[i], accepted by cJSON) along the tree,
 * copying every number's literal into the arena; the index after the
 * value, ATTACH_OOM, or ATTACH_LOST should text and tree ever disagree
 * (every step is checked: a wrong literal must never be attached). */
static size_t attach_literals(fp_json_block **arena, cJSON *item, const char *d,
                              size_t i, size_t end) {
  i = skip_ws(d, i, end);
  if (i >= end)
    return ATTACH_LOST;
  if (cJSON_IsNumber(item)) {
    size_t j = i;
    while (j < end && is_number_char(d[j]))
      j++;
    char *lit = j > i ? arena_alloc(arena, j - i + 1) : NULL;
    if (!lit)
      return j > i ? ATTACH_OOM : ATTACH_LOST;
    memcpy(lit, d + i, j - i);
    lit[j - i] = '\0';
    item->valuestring = lit;
    return j;
  }
  if (cJSON_IsString(item))
    return d[i] == '"' && (i = skip_string(d, i, end)) != SIZE_MAX
               ? i
               : ATTACH_LOST;
  bool obj = cJSON_IsObject(item);
  if (!obj && !cJSON_IsArray(item)) {
    size_t j = i;
    while (j < end && d[j] >= 'a' && d[j] <= 'z') /* true, false, null */
      j++;
    return j > i ? j : ATTACH_LOST;
  }
  if (d[i] != (obj ? '{' : '['))
    return ATTACH_LOST;
  i++;
  for (cJSON *c = item->child; c; c = c->next) {
    if (c != item->child && (i = expect_char(d, i, end, ',')) == ATTACH_LOST)
      return i;
    if (obj) { /* the key, then ':' */
      i = skip_ws(d, i, end);
      if (i >= end || d[i] != '"' || (i = skip_string(d, i, end)) == SIZE_MAX ||
          (i = expect_char(d, i, end, ':')) == ATTACH_LOST)
        return ATTACH_LOST;
    }
    if ((i = attach_literals(arena, c, d, i, end)) >= ATTACH_LOST)
      return i;
  }
  return expect_char(d, i, end, obj ? '}' : ']');
}

/* The exact value of literal s as digits (no leading or trailing zeros)
 * times 10^*exp10; false when the literal is too long to hold. */
static bool literal_digits(const char *s, bool *neg, char *dig, size_t cap,
                           size_t *nd, long *exp10) {
  size_t n = 0;
  long frac = 0, e = 0;
  bool in_frac = false;
  *neg = *s == '-';
  s += *neg;
  for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
    if (*s == '.') {
      in_frac = true;
      continue;
    }
    frac += in_frac;
    if (n == 0 && *s == '0')
      continue; /* leading zero */
    if (n == cap)
      return false;
    dig[n++] = *s;
  }
  if (*s == 'e' || *s == 'E') {
    int sign = *++s == '-' ? -1 : 1;
    s += *s == '-' || *s == '+';
    for (; *s >= '0' && *s <= '9'; s++)
      e = e < 100000 ? e * 10 + (*s - '0') : e; /* saturates: 1e999999 */
    e *= sign;
  }
  *exp10 = e - frac;
  while (n > 0 && dig[n - 1] == '0') {
    n--;
    ++*exp10;
  }
  *nd = n;
  return true;
}

/* True when the literal is exactly an integer >= 0 (-0 included); its
 * value in *out when it is also below 2^53, else *out = UINT64_MAX. */
static bool literal_integer(const char *s, uint64_t *out) {
  char dig[64];
  size_t nd;
  long exp10;
  bool neg;
  if (!literal_digits(s, &neg, dig, sizeof dig, &nd, &exp10))
    return false;
  *out = 0;
  if (nd == 0)
    return true; /* 0, 0.0, -0e5 */
  if (neg || exp10 < 0)
    return false;
  if ((long)nd + exp10 > 16) { /* >= 10^16 > 2^53 */
    *out = UINT64_MAX;
    return true;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < nd; i++)
    v = v * 10 + (uint64_t)(dig[i] - '0');
  for (long i = 0; i < exp10; i++)
    v *= 10;
  *out = v < ((uint64_t)1 << 53) ? v : UINT64_MAX;
  return true;
}

fp_status fp_json_parse_at(const char *whole, size_t base, size_t len,
                           const char *source, const char *label,
                           fp_json_doc *doc, fp_error *err) {
  const char *data = whole + base, *end = NULL;
  doc->root = NULL;
  arena_reset(doc);
  size_t first = 0;
  while (first < len && is_ws(data[first]))
    first++;
  if (first == len)
    return fp_error_set(err, FP_EINPUT, "%s: malformed JSON: empty document",
                        source);
  /* cJSON skips a UTF-8 byte order mark where it starts to parse, which
   * here may be any value of the document; JSON text has none. */
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
    return syntax_error(whole, base, source, err);
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
  bool fractions;
  fp_status st =
      check_text(whole, base, len, source, label, false, &fractions, err);
  if (st != FP_OK)
    return st;
  size_t walked =
      fractions ? attach_literals(&doc->arena, root, data, 0, len) : 0;
  if (walked == ATTACH_OOM)
    return fp_error_set(err, FP_ENOMEM, "%s: out of memory parsing JSON",
                        source);
  if (walked == ATTACH_LOST) /* cannot happen: cJSON accepted the text */
    return fp_error_set(err, FP_EINTERNAL, "%s: number literals not found",
                        source);
  doc->root = root;
  return FP_OK;
}

fp_status fp_json_parse(const char *data, size_t len, const char *source,
                        fp_json_doc *doc, fp_error *err) {
  doc->root = NULL;
  doc->arena = NULL;
  return fp_json_parse_at(data, 0, len, source, NULL, doc, err);
}

/* ---- the top-level scanner ---------------------------------------------- */

/* Index after the value starting at d[i] (no leading blanks), SIZE_MAX
 * when it is cut short or a bracket closes with the wrong kind ("[}"),
 * TOO_DEEP when it nests deeper than MAX_DEPTH.  Balances brackets (a bit
 * per level says '{' or '[') and skips strings; the value's own syntax is
 * left to cJSON. */
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
  unsigned char braces[MAX_DEPTH / 8 + 1]; /* bit set: that level is '{' */
  int level = 0;
  for (; i < end; i++) {
    char c = d[i];
    if (c == '"') {
      if ((i = skip_string(d, i, end)) == SIZE_MAX)
        return SIZE_MAX;
      i--;
    } else if (c == '{' || c == '[') {
      if (level + 1 + depth > MAX_DEPTH)
        return TOO_DEEP;
      unsigned char bit = (unsigned char)(1u << (level % 8));
      braces[level / 8] = (unsigned char)(c == '{' ? braces[level / 8] | bit
                                                   : braces[level / 8] & ~bit);
      level++;
    } else if (c == '}' || c == ']') {
      level--;
      if (((braces[level / 8] >> (level % 8)) & 1u) != (c == '}'))
        return SIZE_MAX;
      if (level == 0)
        return i + 1;
    }
  }
  return SIZE_MAX;
}

/* Says where the value at d[v] goes wrong, for a value the scanner could
 * not skip (cut short, "[}"): cJSON's own error position. */
static void value_error(const char *d, size_t v, size_t len, const char *source,
                        fp_error *err) {
  fp_json_doc tmp = {0};
  if (fp_json_parse_at(d, v, len - v, source, NULL, &tmp, err) == FP_OK)
    syntax_error(d, v, source, err); /* not reached: cJSON agrees */
  fp_json_release(&tmp);
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
    if (vend == SIZE_MAX || vend == v) {
      value_error(d, v, len, source, err);
      return -1;
    }
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
static bool valid_json(find_ctx *f, const char *d, size_t off, size_t len,
                       const char *label) {
  return fp_json_parse_at(d, off, len, f->source, label, &f->scratch, f->err) ==
         FP_OK;
}

/* A key is valid JSON text unless it holds raw control bytes or bad
 * escapes (plain keys, without a backslash, need no parse), and it must
 * pass the string checks as every string does. */
static bool valid_key(find_ctx *f, const char *d, size_t k, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)d[k + i] < 0x20) {
      syntax_error(d, k + i, f->source, f->err);
      return false;
    }
  bool fractions;
  if (check_text(d, k - 1, n + 2, f->source, NULL, true, &fractions, f->err) !=
      FP_OK)
    return false;
  return !memchr(d + k, '\\', n) || valid_json(f, d, k - 1, n + 2, NULL);
}

/* Compares a raw key (between the quotes) with `key`; keys with escapes
 * are decoded by cJSON. */
static bool key_equals(const char *d, size_t k, size_t n, const char *key,
                       const char *source) {
  if (!memchr(d + k, '\\', n))
    return strlen(key) == n && memcmp(d + k, key, n) == 0;
  fp_json_doc doc = {0};
  bool eq =
      fp_json_parse_at(d, k - 1, n + 2, source, NULL, &doc, NULL) == FP_OK &&
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
  char label[80]; /* the key: valid by now, and shown raw */
  snprintf(label, sizeof label, "%.*s", (int)(n > 64 ? 64 : n), d + k);
  return valid_json(f, d, val.off, val.len, label) ? 0 : -1;
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
  if (span.len < 2 || data[span.off] != '[' ||
      data[span.off + span.len - 1] != ']')
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
  if (item->valuestring) { /* the literal, where it may be a fraction */
    uint64_t v;
    if (!literal_integer(item->valuestring, &v) || v == UINT64_MAX)
      return false;
    *out = v;
    return true;
  }
  /* A plain digit string: its double is exact below 2^53, and `<` 2^53
   * since 2^53 + 1 parses to 2^53. */
  double d = item->valuedouble;
  if (!(d >= 0 && d < 9007199254740992.0) || d != floor(d))
    return false;
  *out = (uint64_t)d;
  return true;
}

bool fp_json_integral(const cJSON *item) {
  uint64_t v;
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
    return false;
  if (item->valuestring)
    return literal_integer(item->valuestring, &v);
  return item->valuedouble >= 0 &&
         item->valuedouble == floor(item->valuedouble);
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
  uint64_t ver;
  return fp_json_check_format_upto(f, v, source, format, 1, &ver, err);
}

fp_status fp_json_check_format_upto(const cJSON *f, const cJSON *v,
                                    const char *source, const char *format,
                                    uint64_t max_version, uint64_t *version,
                                    fp_error *err) {
  if (!cJSON_IsString(f))
    return fp_error_set(err, FP_EINPUT, "%s: format: %s (expected \"%s\")",
                        source, f ? "not a string" : "missing", format);
  if (strcmp(f->valuestring, format) != 0)
    return fp_error_set(err, FP_EINPUT,
                        "%s: format: expected \"%s\", got \"%.64s\"", source,
                        format, f->valuestring);
  if (!fp_json_u64(v, version))
    return fp_error_set(err, FP_EINPUT,
                        "%s: version: missing or not an integer", source);
  if (*version < 1 || *version > max_version) {
    if (max_version == 1)
      return fp_error_set(err, FP_EINPUT,
                          "%s: version: %llu is not supported (expected 1)",
                          source, (unsigned long long)*version);
    return fp_error_set(err, FP_EINPUT,
                        "%s: version: %llu is not supported (expected 1 to "
                        "%llu)",
                        source, (unsigned long long)*version,
                        (unsigned long long)max_version);
  }
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
