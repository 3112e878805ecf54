/* mapping.c -- files and host memory as read-only buffers, byte swapping,
 * opening, reading and replacing files, arrays streamed into files. */
#define _DEFAULT_SOURCE /* realpath, fchmod, pread */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* fallocate */
#endif
#include "../core/event.h"
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

#include "../core/copy.h"
#include "../core/work.h"

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

dlb_status dlb_check_path(const char *path, size_t len, dlb_error *err) {
  if (memchr(path, '\0', len) == NULL) return DLB_OK;
  dlb_fail(err, DLB_E_ARGUMENT, "the path contains a zero byte");
  dlb_error_hint(err, "a path is a string without zero bytes, such as \"data.npy\"");
  return DLB_E_ARGUMENT;
}

/* What a file of mode is, for the message refusing it. */
static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

/* IO for a path that names something other than a regular file. */
static dlb_status not_regular(const char *what, const char *path, mode_t mode, dlb_error *err) {
  dlb_fail(err, DLB_E_IO, "cannot %s '%.120s': it is %s, not a regular file", what, path,
           kind_of(mode));
  dlb_error_hint(err, "give the path of a regular file; the string forms (dl.fromnpy, "
                      "dl.fromsafetensors, dl.tonpy, dl.tosafetensors) read and write bytes "
                      "from anywhere else");
  if (err) {
    err->has_native = 1;
    err->native_status = S_ISDIR(mode) ? EISDIR : EINVAL;
  }
  return DLB_E_IO;
}

dlb_status dlb_open_file(const char *path, int *fd, uint64_t *size, dlb_error *err) {
  struct stat st;
  int e, flags;
  /* O_NONBLOCK: an open of a FIFO for reading would wait for a writer. */
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return dlb_io_failed("open", path, errno, err);
  if (fstat(*fd, &st) != 0) {
    e = errno;
    close(*fd);
    return dlb_io_failed("stat", path, e, err);
  }
  if (!S_ISREG(st.st_mode)) {
    close(*fd);
    return not_regular("open", path, st.st_mode, err);
  }
  if ((flags = fcntl(*fd, F_GETFL)) == -1 || fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
    e = errno;
    close(*fd);
    return dlb_io_failed("open", path, e, err);
  }
  *size = (uint64_t)st.st_size;
  return DLB_OK;
}

dlb_status dlb_buffer_map_fd(dlb_backend *host, int fd, uint64_t size, const char *path,
                             dlb_buffer **out, dlb_error *err) {
  mapping *m;
  if (size > SIZE_MAX)
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "'%.120s' is larger than the address space", path);
  if (!(m = calloc(1, sizeof *m)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a mapping");
  if (size > 0) {
    m->size = (size_t)size;
    m->base = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->base == MAP_FAILED) {
      int e = errno;
      free(m);
      return dlb_io_failed("map", path, e, err);
    }
  }
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
      default: reverse(p, part);
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
      return dlb_fail(err, DLB_E_FORMAT,
                      "'%.120s' ended %zu bytes early (did it change while "
                      "being read?)",
                      path, n);
    p += got;
    n -= (size_t)got;
    offset += (uint64_t)got;
  }
  return DLB_OK;
}

/* Frees the writer's names and chunk buffer. */
static void writer_free(dlb_file_writer *w) {
  free(w->target);
  free(w->temp);
  free(w->chunk);
  w->target = w->temp = w->chunk = NULL;
  w->chunk_size = 0;
}

dlb_status dlb_file_writer_open(dlb_file_writer *w, const char *path, size_t chunk_limit,
                                dlb_error *err) {
  static atomic_uint serial;
  struct stat old;
  char *real = realpath(path, NULL); /* a symbolic link: replace its target, not the link */
  int exists;
  size_t len;
  w->fd = -1;
  w->path = path;
  w->chunk = NULL;
  w->chunk_size = 0;
  w->chunk_limit = chunk_limit;
  w->reserved = 0;
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
    return not_regular("replace", path, old.st_mode, err);
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

dlb_status dlb_file_writer_reserve(dlb_file_writer *w, uint64_t size, dlb_error *err) {
#if defined(__linux__) && defined(FALLOC_FL_KEEP_SIZE)
  if (size == 0 || size > (uint64_t)INT64_MAX) return DLB_OK;
  while (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) != 0) {
    if (errno == EINTR) continue;
    if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
      return dlb_io_failed("write", w->path, errno, err);
    return DLB_OK; /* not supported here (EOPNOTSUPP, ENOSYS, ...): written without */
  }
  w->reserved = 1;
#else
  (void)w;
  (void)size;
  (void)err;
#endif
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

/* Copies the elements of a into the chunk buffer (they fit), swaps them if
 * asked, and writes them. */
static dlb_status write_chunk(dlb_file_writer *w, const dlb_array *a, int swap, dlb_error *err) {
  const dlb_dtype_info *info = dlb_dtype_get(a->dtype);
  size_t nbytes = (size_t)a->numel * info->itemsize;
  dlb_status st = dlb_array_read_into(a, w->chunk, a->dtype, err);
  if (st != DLB_OK) return st;
  if (swap) dlb_byteswap(w->chunk, a->numel, info->itemsize, info->kind == DLB_KIND_COMPLEX);
  return dlb_file_writer_write(w, w->chunk, nbytes, err);
}

/* Writes a (numel > 0) through the chunk buffer: the whole array, runs of
 * rows, or (a row larger than the buffer) one row at a time, recursively. */
static dlb_status write_rows(dlb_file_writer *w, const dlb_array *a, int swap, dlb_error *err) {
  size_t total = (size_t)a->numel * dlb_array_itemsize(a), row;
  dlb_status st;
  if (total <= w->chunk_size) return write_chunk(w, a, swap, err);
  row = total / (size_t)a->shape[0]; /* total > chunk_size >= itemsize: ndim >= 1 */
  if (row <= w->chunk_size) {
    int64_t rows = (int64_t)(w->chunk_size / row);
    for (int64_t i = 0; i < a->shape[0]; i += rows) {
      dlb_array v = *a; /* a view for the duration of the call: a holds the buffer */
      int64_t n = a->shape[0] - i < rows ? a->shape[0] - i : rows;
      if ((st = dlb_view_slice(&v, 0, i, n, 1, err)) != DLB_OK ||
          (st = write_chunk(w, &v, swap, err)) != DLB_OK)
        return st;
    }
    return DLB_OK;
  }
  for (int64_t i = 0; i < a->shape[0]; i++) {
    dlb_array v = *a;
    if ((st = dlb_view_select(&v, 0, i, err)) != DLB_OK ||
        (st = write_rows(w, &v, swap, err)) != DLB_OK)
      return st;
  }
  return DLB_OK;
}

/* Makes the chunk buffer hold min(limit, total) bytes, at least one item;
 * under a state's memory limit (budget), at most half the room it leaves,
 * so that a save never pushes the process past what the host allows. */
static dlb_status grow_chunk(dlb_file_writer *w, size_t item, size_t total, dlb_budget *budget,
                             dlb_error *err) {
  size_t want = w->chunk_limit < total ? w->chunk_limit : total;
  size_t limit = budget ? atomic_load_explicit(&budget->limit, memory_order_relaxed) : 0;
  if (limit) {
    size_t used = dlb_budget_in_use(budget);
    size_t room = used < limit ? (limit - used) / 2 : 0;
    if (want > room) want = room;
  }
  if (want < item) want = item;
  if (w->chunk_size >= want) return DLB_OK;
  free(w->chunk);
  w->chunk_size = 0;
  if (!(w->chunk = malloc(want)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a %zu-byte write buffer", want);
  w->chunk_size = want;
  return DLB_OK;
}

/* Contiguous data goes to the file straight from the array in parts of this. */
#define DIRECT_PART ((size_t)64 << 20)

dlb_status dlb_file_writer_write_array(dlb_file_writer *w, const dlb_array *a, int swap,
                                       dlb_error *err) {
  size_t item = dlb_array_itemsize(a), total = (size_t)a->numel * item;
  const char *data = dlb_array_host_data(a);
  dlb_status st;
  if (a->numel == 0) return DLB_OK;
  if ((st = dlb_work_admit(dlb_array_budget(a), a->numel, "save", err)) != DLB_OK) return st;
  if (swap && dlb_dtype_get(a->dtype)->itemsize == 1) swap = 0; /* nothing to swap */
  if (data && (st = dlb_buffer_sync_host(a->buffer, err)) != DLB_OK) return st; /* queued work */
  if (!swap && data && dlb_array_is_contiguous(a)) {
    /* In parts, with a look at the host's interrupt between them (work.h). */
    for (size_t done = 0; done < total; done += DIRECT_PART) {
      size_t n = total - done < DIRECT_PART ? total - done : DIRECT_PART;
      if ((st = dlb_file_writer_write(w, data + done, n, err)) != DLB_OK) return st;
      if (dlb_work_raised(dlb_array_budget(a))) return dlb_work_interrupted("save", err);
    }
    return DLB_OK;
  }
  if ((st = grow_chunk(w, item, total, dlb_array_budget(a), err)) != DLB_OK) return st;
  return write_rows(w, a, swap, err);
}

dlb_status dlb_file_writer_close(dlb_file_writer *w, dlb_status st, dlb_error *err) {
  if (close(w->fd) != 0 && st == DLB_OK) st = dlb_io_failed("write", w->path, errno, err);
  /* The rename replaces the old file in one step: the path always names a
   * whole file. Without reserved blocks the old file goes first: renaming
   * over an existing file makes ext4 (its replace-by-rename heuristic,
   * auto_da_alloc) flush data still waiting for delayed allocation at once,
   * which costs a save of 256 MiB more than all its writing; between that
   * unlink and the rename the path names no file, never half a file. */
  if (st == DLB_OK && !w->reserved && unlink(w->target) != 0 && errno != ENOENT)
    st = dlb_io_failed("replace", w->path, errno, err);
  if (st == DLB_OK && rename(w->temp, w->target) != 0)
    st = dlb_io_failed("replace", w->path, errno, err);
  if (st != DLB_OK) unlink(w->temp); /* no half-written file left behind */
  writer_free(w);
  w->fd = -1;
  return st;
}
