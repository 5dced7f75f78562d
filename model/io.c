/*
 * io.c -- whole-file reads (plain or gzip, under the input limit) and
 * output writes (atomic for regular files, in place for devices).
 */
#include "model/io.h"
#include "model/args.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int fp_path_has_suffix(const char *path, const char *suffix) {
  if (!path || !suffix)
    return 0;
  size_t n = strlen(path), m = strlen(suffix);
  return n >= m && strcmp(path + n - m, suffix) == 0;
}

/* ---- the input limit ------------------------------------------------------
 */

static _Atomic uint64_t max_input = FP_MAX_FILE_BYTES;

void fp_set_max_input_bytes(uint64_t bytes) {
  atomic_store_explicit(&max_input, bytes ? bytes : FP_MAX_FILE_BYTES,
                        memory_order_relaxed);
}

uint64_t fp_max_input_bytes(void) {
  return atomic_load_explicit(&max_input, memory_order_relaxed);
}

/* ---- reading --------------------------------------------------------------
 */

#define IN_CHUNK ((size_t)1 << 17) /* compressed bytes read at a time */

/* One read in progress: the output buffer never grows past limit + 1 data
 * bytes (+1 for the NUL), so the limit is checked before it is paid for. */
typedef struct reader {
  const char *path;
  int fd;
  size_t limit;
  char *buf; /* output: n bytes of cap */
  size_t n, cap;
  unsigned char *in; /* input chunk: in_len bytes */
  size_t in_len;
  fp_error *err;
} reader;

static fp_status read_error(reader *r, int e) {
  return fp_error_set(r->err, FP_EIO, "%s: read error: %s", r->path,
                      strerror(e));
}

static fp_status too_large(reader *r) {
  return fp_error_set(r->err, FP_ELIMIT, "%s: larger than %zu bytes", r->path,
                      r->limit);
}

static fp_status gz_corrupt(reader *r, const char *why) {
  return fp_error_set(r->err, FP_EINPUT,
                      "%s: corrupt or truncated gzip data (%s)", r->path, why);
}

/* Makes room for at least one more output byte (and the NUL), doubling the
 * buffer but never past limit + 2 bytes; `hint` is a first size to try.
 * FP_ELIMIT once limit + 1 bytes are held, FP_ENOMEM. */
static fp_status out_room(reader *r, size_t hint) {
  if (r->n > r->limit)
    return too_large(r);
  if (r->cap - r->n >= 2)
    return FP_OK;
  size_t top = r->limit + 2,
         c = r->cap ? r->cap : (hint > 65536 ? hint : 65536);
  if (r->cap)
    c = r->cap > top / 2 ? top : r->cap * 2;
  if (c > top)
    c = top;
  char *p = realloc(r->buf, c);
  if (!p)
    return fp_error_set(r->err, FP_ENOMEM, "%s: out of memory", r->path);
  r->buf = p;
  r->cap = c;
  return FP_OK;
}

/* read(2) that retries on EINTR: bytes read, 0 at the end, -1 on error. */
static ssize_t read_some(int fd, void *p, size_t n) {
  ssize_t k;
  do
    k = read(fd, p, n > (1u << 30) ? (1u << 30) : n);
  while (k < 0 && errno == EINTR);
  return k;
}

/* Tops up the input chunk (keeping its unread tail at `tail`, `avail`
 * bytes) until it holds `want` bytes or the input ends; sets *avail. */
static fp_status fill_in(reader *r, const unsigned char *tail, size_t *avail,
                         size_t want) {
  memmove(r->in, tail, *avail);
  while (*avail < want) {
    ssize_t k = read_some(r->fd, r->in + *avail, IN_CHUNK - *avail);
    if (k < 0)
      return read_error(r, errno);
    if (k == 0)
      break;
    *avail += (size_t)k;
  }
  r->in_len = *avail;
  return FP_OK;
}

/* The plain case: the sniffed bytes, then read(2) straight into buf. */
static fp_status read_plain(reader *r, size_t size_hint) {
  fp_status st;
  for (size_t done = 0; done < r->in_len;) {
    if ((st = out_room(r, size_hint)) != FP_OK)
      return st;
    size_t m = r->cap - 1 - r->n;
    m = m < r->in_len - done ? m : r->in_len - done;
    memcpy(r->buf + r->n, r->in + done, m);
    r->n += m;
    done += m;
  }
  for (;;) {
    if ((st = out_room(r, size_hint)) != FP_OK)
      return st;
    ssize_t k = read_some(r->fd, r->buf + r->n, r->cap - 1 - r->n);
    if (k < 0)
      return read_error(r, errno);
    if (k == 0)
      return FP_OK;
    r->n += (size_t)k;
  }
}

/* After a gzip member: FP_OK with *more set when another member follows,
 * or cleared at the end of the input; FP_EINPUT for anything else. */
static fp_status next_member(reader *r, z_stream *z, int *more) {
  size_t avail = z->avail_in;
  fp_status st = fill_in(r, z->next_in, &avail, 2);
  if (st != FP_OK)
    return st;
  z->next_in = r->in;
  z->avail_in = (uInt)avail;
  *more = avail > 0;
  if (avail > 0 && (avail < 2 || r->in[0] != 0x1f || r->in[1] != 0x8b))
    return gz_corrupt(r, "data after the end of the stream");
  return FP_OK;
}

/* Maps an inflate() result that is neither Z_OK nor Z_STREAM_END. */
static fp_status inflate_failed(reader *r, const z_stream *z, int rc) {
  if (rc == Z_MEM_ERROR)
    return fp_error_set(r->err, FP_ENOMEM, "%s: out of memory", r->path);
  if (rc == Z_BUF_ERROR && z->avail_in == 0) /* input ended mid-stream */
    return gz_corrupt(r, "unexpected end of stream");
  return gz_corrupt(r, "bad compressed data");
}

/* The gzip case: inflate chunk by chunk, one member after another. */
static fp_status read_gzip(reader *r) {
  z_stream z;
  memset(&z, 0, sizeof z);
  /* windowBits 15 + 16: gzip wrapper only, CRC and length checked. */
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    return fp_error_set(r->err, FP_ENOMEM, "%s: out of memory", r->path);
  z.next_in = r->in;
  z.avail_in = (uInt)r->in_len;
  fp_status st = FP_OK;
  for (;;) {
    if (z.avail_in == 0) {
      size_t avail = 0;
      if ((st = fill_in(r, r->in, &avail, 1)) != FP_OK)
        break;
      z.next_in = r->in;
      z.avail_in = (uInt)avail;
    }
    if ((st = out_room(r, 0)) != FP_OK)
      break;
    size_t room = r->cap - 1 - r->n;
    z.next_out = (unsigned char *)r->buf + r->n;
    z.avail_out = (uInt)(room > UINT_MAX ? UINT_MAX : room);
    int rc = inflate(&z, Z_NO_FLUSH);
    r->n = (size_t)((char *)z.next_out - r->buf);
    if (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0))
      continue;
    int more = 0;
    if (rc != Z_STREAM_END)
      st = inflate_failed(r, &z, rc);
    else if ((st = next_member(r, &z, &more)) == FP_OK && more)
      inflateReset(&z);
    if (st != FP_OK || !more)
      break;
  }
  if (st == FP_OK && r->n > r->limit)
    st = too_large(r);
  inflateEnd(&z);
  return st;
}

/* Reads the first bytes (enough to tell gzip by its magic) and the rest. */
static fp_status read_fd(reader *r) {
  struct stat sb;
  int regular = fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode);
  r->in = malloc(IN_CHUNK);
  if (!r->in)
    return fp_error_set(r->err, FP_ENOMEM, "%s: out of memory", r->path);
  size_t avail = 0;
  fp_status st = fill_in(r, r->in, &avail, 2);
  if (st != FP_OK)
    return st;
  if (avail >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b)
    return read_gzip(r);
  /* A plain regular file longer than the limit is refused unread; one
   * within it gets its whole buffer at once. */
  if (regular && (uint64_t)sb.st_size > r->limit)
    return too_large(r);
  return read_plain(r, regular ? (size_t)sb.st_size + 2 : 0);
}

fp_status fp_file_read_all(const char *path, char **data, size_t *len,
                           fp_error *err) {
  if (fp_arg_ptr(data, "read", "data", err) != FP_OK ||
      fp_arg_ptr(len, "read", "len", err) != FP_OK)
    return FP_EARG;
  *data = NULL;
  *len = 0;
  if (fp_arg_ptr(path, "read", "the path", err) != FP_OK)
    return FP_EARG;
  uint64_t lim = fp_max_input_bytes();
  reader r = {.path = path, .fd = 0, .err = err};
  r.limit = lim > SIZE_MAX - 2 ? SIZE_MAX - 2 : (size_t)lim;
  int is_stdin = strcmp(path, "-") == 0;
  if (!is_stdin && (r.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return fp_error_set(err, FP_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
  fp_status st = read_fd(&r);
  if (st == FP_OK && (st = out_room(&r, 1)) == FP_OK) {
    r.buf[r.n] = '\0';
    *data = r.buf;
    *len = r.n;
    r.buf = NULL;
  }
  if (!is_stdin)
    close(r.fd);
  free(r.in);
  free(r.buf);
  return st;
}

/* ---- writing --------------------------------------------------------------
 */

/* gzip-compresses data into a fresh buffer; 0 or -1 (out of memory). */
static int gzip_buffer(const void *data, size_t len, unsigned char **out,
                       size_t *out_len) {
  z_stream z;
  memset(&z, 0, sizeof z);
  /* windowBits 15 + 16 selects the gzip wrapper. */
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return -1;
  size_t cap = deflateBound(&z, (uLong)len) + 64;
  unsigned char *buf = malloc(cap);
  if (!buf) {
    deflateEnd(&z);
    return -1;
  }
  const unsigned char *src = data;
  size_t done = 0;
  int rc = Z_OK;
  z.next_out = buf;
  z.avail_out = (uInt)(cap > 0xFFFFFFFFu ? 0xFFFFFFFFu : cap);
  while (rc == Z_OK) {
    /* Feed at most 1 GiB at a time: avail_in is 32-bit. */
    if (z.avail_in == 0 && done < len) {
      size_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
      z.next_in = (unsigned char *)(src + done);
      z.avail_in = (uInt)chunk;
      done += chunk;
    }
    rc = deflate(&z, done == len ? Z_FINISH : Z_NO_FLUSH);
  }
  *out_len = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    free(buf);
    return -1;
  }
  *out = buf;
  return 0;
}

static int write_fully(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* ---- temporary files in progress -----------------------------------------
 * A fixed table of the temporary names being written, so that a signal
 * handler can remove them without allocating or locking: a slot holds
 * its name from mkstemp to the rename (or unlink) and is cleared before
 * the name is freed.  More writes at once than slots are written all the
 * same, only without that cleanup. */

#define TEMP_SLOTS 16
static char *_Atomic temp_names[TEMP_SLOTS];

void fp_file_remove_temps(void) {
  for (int i = 0; i < TEMP_SLOTS; i++) {
    char *name = atomic_exchange(&temp_names[i], NULL);
    if (name)
      unlink(name);
  }
}

/* Creates the temporary file of template `tmp` (mkstemp) and enters its
 * name in the table, with the signals blocked in between so that a
 * handler never misses a file that exists.  The fd, or -1 with errno. */
static int temp_create(char *tmp, int *slot) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int fd = mkstemp(tmp), saved = errno;
  *slot = -1;
  for (int i = 0; fd >= 0 && i < TEMP_SLOTS && *slot < 0; i++) {
    char *none = NULL;
    if (atomic_compare_exchange_strong(&temp_names[i], &none, tmp))
      *slot = i;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return fd;
}

/* Takes the name of slot `slot` (-1: none) out of the table. */
static void temp_forget(int slot) {
  if (slot >= 0)
    atomic_store(&temp_names[slot], NULL);
}

#define MAX_LINKS 40 /* as Linux's own limit on a path's symbolic links */

/* The target of the symbolic link `link` (st_size bytes long by lstat)
 * in a fresh string; NULL with errno set. */
static char *read_link(const char *link, off_t st_size) {
  size_t cap = st_size > 0 ? (size_t)st_size + 1 : 256;
  for (;;) {
    char *t = malloc(cap);
    if (!t)
      return NULL;
    ssize_t k = readlink(link, t, cap);
    if (k >= 0 && (size_t)k < cap) {
      t[k] = '\0';
      return t;
    }
    free(t);
    if (k < 0)
      return NULL;
    cap *= 2; /* the link grew, or lstat gave no size (procfs) */
  }
}

/* Follows symbolic links from `path` to the name they finally lead to
 * (which need not exist yet: a new file is created there) and sets *out
 * to it, a fresh string.  A relative link target counts from the link's
 * own directory.  FP_EIO (a loop, an unreadable link) or FP_ENOMEM. */
static fp_status resolve_links(const char *path, char **out, fp_error *err) {
  char *cur = strdup(path);
  *out = NULL;
  for (int hops = 0; cur; hops++) {
    struct stat sb;
    if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode)) {
      *out = cur; /* other lstat errors show when the file is written */
      return FP_OK;
    }
    char *t = hops < MAX_LINKS ? read_link(cur, sb.st_size) : NULL;
    if (!t) {
      int e = hops < MAX_LINKS ? errno : ELOOP;
      free(cur);
      return fp_error_set(err, e == ENOMEM ? FP_ENOMEM : FP_EIO,
                          "%s: cannot write: %s", path, strerror(e));
    }
    const char *slash = strrchr(cur, '/');
    size_t dir = t[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
    char *next = malloc(dir + strlen(t) + 1);
    if (next) {
      memcpy(next, cur, dir);
      strcpy(next + dir, t);
    }
    free(t);
    free(cur);
    cur = next;
  }
  return fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
}

/* Writes into an existing file that is not a regular one (a device, a
 * FIFO): replacing it would swap the device for a plain file. */
static fp_status write_in_place(const char *path, const char *target,
                                const void *data, size_t len, fp_error *err) {
  int fd = open(target, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fp_error_set(err, FP_EIO, "%s: cannot write: %s", path,
                        strerror(errno));
  int ok = write_fully(fd, data, len) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = 0;
    saved = errno;
  }
  if (!ok)
    return fp_error_set(err, FP_EIO, "%s: cannot write: %s", path,
                        strerror(saved));
  return FP_OK;
}

/* Writes a temporary file next to `target`, then renames it over target. */
static fp_status write_replace(const char *path, const char *target,
                               const void *data, size_t len, fp_error *err) {
  size_t plen = strlen(target);
  char *tmp = malloc(plen + 16);
  if (!tmp)
    return fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
  memcpy(tmp, target, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", 12);
  fp_status st = FP_OK;
  int slot;
  int fd = temp_create(tmp, &slot);
  if (fd < 0) {
    st = fp_error_set(err, FP_EIO, "%s: cannot create: %s", path,
                      strerror(errno));
    goto done;
  }
  /* mkstemp creates mode 0600; give the file the usual umask-based mode. */
  mode_t um = umask(0);
  umask(um);
  int ok = fchmod(fd, 0666 & ~um) == 0 && write_fully(fd, data, len) == 0 &&
           fsync(fd) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = 0;
    saved = errno;
  }
  if (!ok) {
    st = fp_error_set(err, FP_EIO, "%s: cannot write: %s", path,
                      strerror(saved));
    unlink(tmp);
  } else if (rename(tmp, target) != 0) {
    st = fp_error_set(err, FP_EIO, "%s: cannot rename into place: %s", path,
                      strerror(errno));
    unlink(tmp);
  }
  temp_forget(slot);
done:
  free(tmp);
  return st;
}

fp_status fp_file_write_atomic(const char *path, const void *data, size_t len,
                               fp_error *err) {
  if (fp_arg_ptr(path, "write", "the path", err) != FP_OK ||
      (!data && len > 0 && fp_arg_ptr(data, path, "data", err) != FP_OK))
    return FP_EARG;
  if (strcmp(path, "-") == 0) {
    if (write_fully(1, data, len) != 0)
      return fp_error_set(err, FP_EIO, "standard output: %s", strerror(errno));
    return FP_OK;
  }
  unsigned char *gz = NULL;
  size_t gz_len = 0;
  if (fp_path_has_suffix(path, ".gz")) {
    if (gzip_buffer(data, len, &gz, &gz_len) != 0)
      return fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
    data = gz;
    len = gz_len;
  }
  char *target;
  struct stat sb;
  fp_status st = resolve_links(path, &target, err);
  if (st == FP_OK && stat(target, &sb) == 0 && !S_ISREG(sb.st_mode))
    st = write_in_place(path, target, data, len, err);
  else if (st == FP_OK)
    st = write_replace(path, target, data, len, err);
  free(target);
  free(gz);
  return st;
}
