/* mapping.h -- files and host memory as read-only buffers, byte order,
 * opening, reading and replacing files, arrays streamed into files. No Lua
 * here. */
#ifndef DLB_FILES_MAPPING_H
#define DLB_FILES_MAPPING_H

#include "../core/array.h"
#include "../core/buffer.h"

/*
 * Maps the whole file open at fd (for reading, of size bytes: see
 * dlb_open_file) read-only as a buffer on host (the cpu backend; its nbytes
 * are charged to the backend's budget like an import); fd stays the
 * caller's, path only names the file in messages. The buffer's host pointer
 * is the mapping and it is read-only; the last release unmaps it, exactly
 * once, on any thread, also after lua_close. An empty file gives a buffer of
 * 0 bytes (host NULL). IO (errno) when the file cannot be mapped.
 *
 * The hazard of every mapping: the pages are the file's own. Should another
 * writer (a program, Lua's io library) truncate the file in place while it
 * is mapped, reading a page past the new end raises SIGBUS, which kills the
 * process. dlbridge's own saves never do (they replace the file: see
 * dlb_file_writer). A host whose scripts can write files turns mapping off
 * (dlb_allow_mapping) and loads read the file instead.
 */
dlb_status dlb_buffer_map_fd(dlb_backend *host, int fd, uint64_t size, const char *path,
                             dlb_buffer **out, dlb_error *err);

/*
 * Wraps nbytes of host memory the caller owns as a buffer on host (charged
 * to its budget); release(ctx) (may be NULL) runs once when the last
 * reference goes, on any thread. On failure release has already run.
 */
dlb_status dlb_buffer_wrap_host(dlb_backend *host, void *data, size_t nbytes, int readonly,
                                void (*release)(void *ctx), void *ctx, dlb_buffer **out,
                                dlb_error *err);

/* Reverses the byte order of n elements of itemsize bytes in place; a
 * complex element (complex_parts) swaps its two halves separately. */
void dlb_byteswap(void *data, int64_t n, size_t itemsize, int complex_parts);

/* An IO error: "cannot <what> '<path>': <strerror>", errno as the native
 * status. Returns DLB_E_IO. */
dlb_status dlb_io_failed(const char *what, const char *path, int errnum, dlb_error *err);

/* ARGUMENT unless the len bytes at path hold no zero byte: a path is a C
 * string, and the system would take the name before the first zero for it.
 * Every function taking a path from a script checks it with this. */
dlb_status dlb_check_path(const char *path, size_t len, dlb_error *err);

/*
 * Opens the file at path for reading and tells its size; *fd is the caller's
 * to close. Only a regular file is opened: a directory, a FIFO, a device or
 * a socket is IO at once, with EISDIR (a directory) or EINVAL (the others)
 * as the native status. Never waits: the file is opened with O_NONBLOCK
 * (an open of a FIFO for reading waits for a writer without it), checked
 * with fstat, and only then made blocking again. IO with errno when the
 * system refuses.
 */
dlb_status dlb_open_file(const char *path, int *fd, uint64_t *size, dlb_error *err);

/* Reads exactly n bytes at offset of fd into dst: IO on an error, FORMAT
 * when the file ends first (it changed since its size was read). */
dlb_status dlb_read_at(int fd, void *dst, size_t n, uint64_t offset, const char *path,
                       dlb_error *err);

/*
 * Replacing a file. The bytes go to a new file beside the target; once
 * they are all written, the old file is removed and the new one renamed to
 * its name. So arrays still mapping the old file keep its bytes
 * (dl.save(p, dl.load(p)) is safe: writing into a mapped file in place
 * would fault), no reader sees half a file (between the removal and the
 * rename the path names no file), and a failure while writing leaves the
 * old file as it was. A symbolic link's target is replaced, an existing
 * file keeps its mode. A path that exists but is no regular file (a
 * directory, a FIFO, a device) is never replaced nor opened: IO, with the
 * native status of dlb_open_file.
 *
 * Arrays are written through one chunk buffer of at most chunk_limit bytes
 * (allocated at the first array that needs it, freed by close): whatever
 * the arrays, a save holds no more memory than that.
 */
typedef struct dlb_file_writer {
  int fd;
  const char *path;   /* as the caller named it, for messages */
  char *target;       /* the file to replace (symbolic links resolved) */
  char *temp;         /* the new file, until the rename */
  char *chunk;        /* the buffer arrays are gathered in, or NULL */
  size_t chunk_size;  /* its bytes */
  size_t chunk_limit; /* the most it may hold (it holds one element all the same) */
  int reserved;       /* the new file's blocks are allocated (dlb_file_writer_reserve) */
} dlb_file_writer;

/* The chunk limit of dlbridge's saves (np.save's buffer is 16 MiB too). */
#define DLB_FILE_CHUNK_BYTES ((size_t)16 << 20)

dlb_status dlb_file_writer_open(dlb_file_writer *w, const char *path, size_t chunk_limit,
                                dlb_error *err);
/*
 * Allocates the new file's blocks for size bytes before it is written, where
 * the file system can (Linux fallocate, the file's size unchanged; NumPy's
 * saves do the same): a disk without room fails here, before any writing,
 * and the writes skip delayed allocation. A file system that cannot is not
 * an error: the save goes on without.
 */
dlb_status dlb_file_writer_reserve(dlb_file_writer *w, uint64_t size, dlb_error *err);
/* Appends size bytes (in calls of up to 1 GiB). */
dlb_status dlb_file_writer_write(dlb_file_writer *w, const void *data, size_t size, dlb_error *err);
/*
 * Appends a's elements in row-major order, in this machine's byte order or,
 * with swap, the other one (a complex element swaps its two parts). A
 * contiguous array in host memory that needs no swap is written straight
 * from its memory; anything else is copied into the chunk buffer (a whole
 * array, runs of rows, or row by row when a row is larger) and written
 * from there. Memory the host cannot address is read through its backend.
 */
dlb_status dlb_file_writer_write_array(dlb_file_writer *w, const dlb_array *a, int swap,
                                       dlb_error *err);
/* Ends the write: when st is DLB_OK replaces the target by the new file,
 * else removes it. Returns the final status (st, or the failure of the
 * close or the rename). Frees the chunk buffer. */
dlb_status dlb_file_writer_close(dlb_file_writer *w, dlb_status st, dlb_error *err);

#endif
