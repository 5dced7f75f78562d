/*
 * io.c -- whole-file reads through zlib (plain or gzip) and atomic writes.
 */
#include "model/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int fp_path_has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  return n >= m && strcmp(path + n - m, suffix) == 0;
}

/* Grows buf to at least `need` bytes (+1 for the NUL); 0 or -1. */
static int reserve(char **buf, size_t *cap, size_t need) {
  if (need + 1 <= *cap)
    return 0;
  size_t n = *cap ? *cap : 65536;
  while (n < need + 1)
    n *= 2;
  char *p = realloc(*buf, n);
  if (!p)
    return -1;
  *buf = p;
  *cap = n;
  return 0;
}

fp_status fp_file_read_all(const char *path, char **data, size_t *len,
                           fp_error *err) {
  *data = NULL;
  *len = 0;
  int is_stdin = strcmp(path, "-") == 0;
  /* gzopen reads plain files transparently, so one path serves both. */
  gzFile f = is_stdin ? gzdopen(dup(0), "rb") : gzopen(path, "rb");
  if (!f)
    return fp_error_set(err, FP_EIO, "%s: cannot open: %s", path,
                        errno ? strerror(errno) : "out of memory");
  gzbuffer(f, 1 << 17);
  char *buf = NULL;
  size_t cap = 0, n = 0;
  fp_status st = FP_OK;
  for (;;) {
    if (n >= FP_MAX_FILE_BYTES) {
      st = fp_error_set(err, FP_ELIMIT, "%s: larger than %zu bytes", path,
                        FP_MAX_FILE_BYTES);
      goto fail;
    }
    if (reserve(&buf, &cap, n + (1 << 20)) != 0) {
      st = fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
      goto fail;
    }
    int got = gzread(f, buf + n, 1u << 20);
    int zerr = Z_OK;
    /* End of input is got == 0; a gzip stream cut short also ends with 0
     * and is told apart only by Z_BUF_ERROR from gzerror. */
    gzerror(f, &zerr);
    if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
      st = zerr == Z_ERRNO
               ? fp_error_set(err, FP_EIO, "%s: read error: %s", path,
                              strerror(errno))
               : fp_error_set(err, FP_EINPUT,
                              "%s: corrupt or truncated gzip data (%s)", path,
                              zerr == Z_BUF_ERROR ? "unexpected end of stream"
                                                  : "bad compressed data");
      goto fail;
    }
    if (got == 0)
      break;
    n += (size_t)got;
  }
  gzclose(f);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return FP_OK;
fail:
  gzclose(f);
  free(buf);
  return st;
}

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

fp_status fp_file_write_atomic(const char *path, const void *data, size_t len,
                               fp_error *err) {
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
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  fp_status st = FP_OK;
  int fd;
  if (!tmp) {
    st = fp_error_set(err, FP_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", 12);
  fd = mkstemp(tmp);
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
    goto done;
  }
  if (rename(tmp, path) != 0) {
    st = fp_error_set(err, FP_EIO, "%s: cannot rename into place: %s", path,
                      strerror(errno));
    unlink(tmp);
  }
done:
  free(tmp);
  free(gz);
  return st;
}
