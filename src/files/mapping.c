/* mapping.c -- files and host memory as read-only buffers, byte swapping,
 * reading and replacing files. */
#define _DEFAULT_SOURCE /* realpath, fchmod, pread */
#include "mapping.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <unistd.h>

dlb_status dlb_io_failed(const char *what, const char *path, int errnum, dlb_error *err) {
  dlb_fail(err, DLB_E_IO, "cannot %s '%.120s': %s", what, path, strerror(errnum));
  if (err) {
    err->has_native = 1;
    err->native_status = errnum;
  }
  return DLB_E_IO;
}

/* The owner of a mapping: what munmap needs. */
typedef struct mapping {
  void *base;
  size_t size;
} mapping;

static void unmap(void *owner) {
  mapping *m = owner;
  if (m->base) munmap(m->base, m->size);
  free(m);
}

/* Wraps an owner's memory in a buffer charged to host; on failure release runs. */
static dlb_status wrap(dlb_backend *host, void *data, size_t nbytes, int readonly,
                       void (*release)(void *), void *owner, dlb_buffer **out, dlb_error *err) {
  dlb_buffer *buf = calloc(1, sizeof *buf);
  dlb_status st;
  if (!buf) {
    if (release) release(owner);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a buffer header");
  }
  if ((st = dlb_backend_charge(host, nbytes, err)) != DLB_OK) {
    free(buf);
    if (release) release(owner);
    return st;
  }
  atomic_init(&buf->refs, 1);
  dlb_backend_retain(host);
  buf->backend = host;
  buf->device_id = 0;
  buf->host = nbytes ? data : NULL;
  buf->nbytes = nbytes;
  buf->readonly = readonly;
  buf->external_release = release;
  buf->owner = owner;
  *out = buf;
  return DLB_OK;
}

/* external_release of wrapped memory: the caller's release(ctx). */
typedef struct wrapped {
  void (*release)(void *ctx);
  void *ctx;
} wrapped;

static void release_wrapped(void *owner) {
  wrapped *w = owner;
  if (w->release) w->release(w->ctx);
  free(w);
}

dlb_status dlb_buffer_wrap_host(dlb_backend *host, void *data, size_t nbytes, int readonly,
                                void (*release)(void *ctx), void *ctx, dlb_buffer **out,
                                dlb_error *err) {
  wrapped *w = malloc(sizeof *w);
  if (!w) {
    if (release) release(ctx);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a buffer header");
  }
  w->release = release;
  w->ctx = ctx;
  return wrap(host, data, nbytes, readonly, release_wrapped, w, out, err);
}

dlb_status dlb_open_file(const char *path, int *fd, uint64_t *size, dlb_error *err) {
  struct stat st;
  int e;
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return dlb_io_failed("open", path, errno, err);
  if (fstat(*fd, &st) != 0) {
    e = errno;
    close(*fd);
    return dlb_io_failed("stat", path, e, err);
  }
  if (S_ISDIR(st.st_mode)) {
    close(*fd);
    dlb_fail(err, DLB_E_ARGUMENT, "'%.120s' is a directory", path);
    dlb_error_hint(err, "give the path of a file");
    return DLB_E_ARGUMENT;
  }
  *size = (uint64_t)st.st_size;
  return DLB_OK;
}

dlb_status dlb_buffer_map_file(dlb_backend *host, const char *path, dlb_buffer **out,
                               dlb_error *err) {
  uint64_t size;
  mapping *m;
  int fd;
  dlb_status st = dlb_open_file(path, &fd, &size, err);
  if (st != DLB_OK) return st;
  if (size > SIZE_MAX) {
    close(fd);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "'%.120s' is larger than the address space", path);
  }
  if (!(m = calloc(1, sizeof *m))) {
    close(fd);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a mapping");
  }
  if (size > 0) {
    m->size = (size_t)size;
    m->base = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->base == MAP_FAILED) {
      int e = errno;
      close(fd);
      free(m);
      return dlb_io_failed("map", path, e, err);
    }
  }
  close(fd); /* the mapping stays valid without the descriptor */
  return wrap(host, m->base, m->size, 1, unmap, m, out, err);
}

/* Reverses size bytes at p. */
static void reverse(unsigned char *p, size_t size) {
  for (size_t i = 0, j = size - 1; i < j; i++, j--) {
    unsigned char t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

void dlb_byteswap(void *data, int64_t n, size_t itemsize, int complex_parts) {
  unsigned char *p = data;
  size_t part = complex_parts ? itemsize / 2 : itemsize;
  if (part < 2) return;
  for (int64_t i = 0; i < n * (int64_t)(itemsize / part); i++) {
    switch (part) {
      case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        v = __builtin_bswap16(v);
        memcpy(p, &v, 2);
        break;
      }
      case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        v = __builtin_bswap32(v);
        memcpy(p, &v, 4);
        break;
      }
      case 8: {
        uint64_t v;
        memcpy(&v, p, 8);
        v = __builtin_bswap64(v);
        memcpy(p, &v, 8);
        break;
      }
      default:
        reverse(p, part);
    }
    p += part;
  }
}

dlb_status dlb_read_at(int fd, void *dst, size_t n, uint64_t offset, const char *path,
                       dlb_error *err) {
  char *p = dst;
  while (n > 0) {
    ssize_t got = pread(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n, (off_t)offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return dlb_io_failed("read", path, errno, err);
    }
    if (got == 0)
      return dlb_fail(err, DLB_E_FORMAT, "'%.120s' ended %zu bytes early (did it change while "
                      "being read?)", path, n);
    p += got;
    n -= (size_t)got;
    offset += (uint64_t)got;
  }
  return DLB_OK;
}

/* Frees the writer's names. */
static void writer_free(dlb_file_writer *w) {
  free(w->target);
  free(w->temp);
  w->target = w->temp = NULL;
}

dlb_status dlb_file_writer_open(dlb_file_writer *w, const char *path, dlb_error *err) {
  static atomic_uint serial;
  struct stat old;
  char *real = realpath(path, NULL); /* a symbolic link: replace its target, not the link */
  int exists;
  size_t len;
  w->fd = -1;
  w->path = path;
  w->target = real ? real : strdup(path);
  len = w->target ? strlen(w->target) + 64 : 0;
  w->temp = w->target ? malloc(len) : NULL;
  if (!w->temp) {
    writer_free(w);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a file name");
  }
  exists = stat(w->target, &old) == 0;
  if (exists && !S_ISREG(old.st_mode)) { /* a directory, a device, a pipe: never replaced */
    writer_free(w);
    dlb_fail(err, DLB_E_ARGUMENT, "'%.120s' is not a regular file", path);
    dlb_error_hint(err, "give the path of a file (new or to be replaced); to write elsewhere, "
                        "make the bytes as a string (dl.tonpy, dl.tosafetensors) and write "
                        "them yourself");
    return DLB_E_ARGUMENT;
  }
  snprintf(w->temp, len, "%s.dlbridge-%ld-%u.tmp", w->target, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  w->fd = open(w->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (w->fd < 0) {
    int e = errno;
    writer_free(w);
    return dlb_io_failed("create", path, e, err);
  }
  if (exists) fchmod(w->fd, old.st_mode & 07777); /* keep the file's mode */
  return DLB_OK;
}

dlb_status dlb_file_writer_write(dlb_file_writer *w, const void *data, size_t size,
                                 dlb_error *err) {
  const char *p = data;
  while (size > 0) {
    ssize_t n = write(w->fd, p, size > ((size_t)1 << 30) ? ((size_t)1 << 30) : size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return dlb_io_failed("write", w->path, errno, err);
    }
    p += n;
    size -= (size_t)n;
  }
  return DLB_OK;
}

dlb_status dlb_file_writer_close(dlb_file_writer *w, dlb_status st, dlb_error *err) {
  if (close(w->fd) != 0 && st == DLB_OK) st = dlb_io_failed("write", w->path, errno, err);
  /* The old file goes first: renaming over an existing file makes ext4 (its
   * replace-by-rename heuristic, auto_da_alloc) flush the new data at once,
   * which costs a save of 256 MiB more than all its writing. Between the
   * unlink and the rename the path names no file, never half a file. */
  if (st == DLB_OK && unlink(w->target) != 0 && errno != ENOENT)
    st = dlb_io_failed("replace", w->path, errno, err);
  if (st == DLB_OK && rename(w->temp, w->target) != 0)
    st = dlb_io_failed("replace", w->path, errno, err);
  if (st != DLB_OK) unlink(w->temp); /* no half-written file left behind */
  writer_free(w);
  w->fd = -1;
  return st;
}

dlb_status dlb_write_file(const char *path, const void *const *parts, const size_t *sizes,
                          int nparts, dlb_error *err) {
  dlb_file_writer w;
  dlb_status st = dlb_file_writer_open(&w, path, err);
  if (st != DLB_OK) return st;
  for (int i = 0; i < nparts && st == DLB_OK; i++)
    st = dlb_file_writer_write(&w, parts[i], sizes[i], err);
  return dlb_file_writer_close(&w, st, err);
}
