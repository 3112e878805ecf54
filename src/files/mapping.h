/* mapping.h -- files and host memory as read-only buffers, byte order,
 * reading and replacing files. No Lua here. */
#ifndef DLB_FILES_MAPPING_H
#define DLB_FILES_MAPPING_H

#include "../core/buffer.h"

/*
 * Maps the whole file at path read-only as a buffer on host (the cpu
 * backend; its nbytes are charged to the backend's budget like an import).
 * The buffer's host pointer is the mapping and it is read-only; the last
 * release unmaps it, exactly once, on any thread, also after lua_close. An
 * empty file gives a buffer of 0 bytes (host NULL). IO (err->native_status
 * is errno) when the file cannot be opened, read or mapped; ARGUMENT when
 * path names a directory.
 */
dlb_status dlb_buffer_map_file(dlb_backend *host, const char *path, dlb_buffer **out,
                               dlb_error *err);

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

/* Opens the file at path for reading and tells its size: IO (errno) when
 * the system refuses, ARGUMENT for a directory. *fd is the caller's to close. */
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
 * would fault), no reader sees half a file, and a failure while writing
 * leaves the old file as it was. A symbolic link's target is replaced, an existing
 * file keeps its mode. A path that exists but is no regular file (a
 * directory, a device) is never replaced: ARGUMENT.
 */
typedef struct dlb_file_writer {
  int fd;
  const char *path; /* as the caller named it, for messages */
  char *target;     /* the file to replace (symbolic links resolved) */
  char *temp;       /* the new file, until the rename */
} dlb_file_writer;

dlb_status dlb_file_writer_open(dlb_file_writer *w, const char *path, dlb_error *err);
/* Appends size bytes (in calls of up to 1 GiB). */
dlb_status dlb_file_writer_write(dlb_file_writer *w, const void *data, size_t size,
                                 dlb_error *err);
/* Ends the write: when st is DLB_OK renames the new file over the target,
 * else removes it. Returns the final status (st, or the failure of the
 * close or the rename). */
dlb_status dlb_file_writer_close(dlb_file_writer *w, dlb_status st, dlb_error *err);

/* The whole file from nparts parts, through a dlb_file_writer. */
dlb_status dlb_write_file(const char *path, const void *const *parts, const size_t *sizes,
                          int nparts, dlb_error *err);

#endif
