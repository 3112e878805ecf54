/* test_load_policy.c -- what both file formats share (src/files/load_policy.c
 * and the writer of src/files/mapping.c), no Lua:
 * - the load policy: views of a mapping where the bytes allow, read-only
 *   copies elsewhere, writable copies with COPY_ALWAYS, COPY_REQUIRED with
 *   COPY_NEVER, copies on another device; with mapping off (map = 0) every
 *   array is read from the file and nothing is mapped, so a file truncated
 *   after the load cannot fault (with a mapping it kills the process);
 * - opening: a FIFO, a directory or a device fails at once with IO;
 * - the writer: arrays in row-major order through a chunk buffer that never
 *   grows past its limit, in either byte order, for .npy and safetensors. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/cpu/cpu.h"
#include "core/array.h"
#include "core/copy.h"
#include "files/load_policy.h"
#include "files/mapping.h"
#include "files/npy.h"
#include "files/safetensors.h"
#define FIXTURES_CPU
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* Files */

static char scratch[64];

static const char *path_of(const char *name) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  return path;
}

/* The contents of a file (malloc'd; *n its size). */
static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *p;
  long size;
  *n = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  p = malloc(size > 0 ? (size_t)size : 1);
  *n = fread(p, 1, (size_t)size, f);
  fclose(f);
  return p;
}

/* How many mappings of path this process has (/proc/self/maps lines). */
static int mappings_of(const char *path) {
  char line[1024];
  int n = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strstr(line, path)) n++;
  fclose(f);
  return n;
}

/* Plans n tensors named names[i] holding arrays[i] (t and order: room for n). */
static void plan(dlb_safetensors_tensor *t, size_t *order, const char *const *names,
                 const dlb_array *const *arrays, size_t n, uint64_t *header, uint64_t *data) {
  for (size_t i = 0; i < n; i++)
    t[i] = (dlb_safetensors_tensor){.name = names[i],
                                    .name_len = strlen(names[i]),
                                    .index = i,
                                    .dtype = arrays[i]->dtype,
                                    .ndim = arrays[i]->ndim,
                                    .shape = arrays[i]->shape};
  CHECK_EQ_INT(dlb_safetensors_plan(t, n, NULL, 0, order, header, data, &err), DLB_OK);
}

/* Saves the arrays as a safetensors file through a buffer of buffer_bytes. */
static dlb_status save_safetensors(const char *path, const char *const *names,
                                   const dlb_array *const *arrays, size_t n, size_t buffer_bytes) {
  dlb_safetensors_tensor t[8];
  size_t order[8];
  uint64_t header, data;
  plan(t, order, names, arrays, n, &header, &data);
  return dlb_safetensors_save_file(path, t, n, NULL, 0, order, header, arrays, buffer_bytes, &err);
}

/* The bytes of the same file made in memory (dlb_safetensors_write_data). */
static unsigned char *safetensors_bytes(const char *const *names, const dlb_array *const *arrays,
                                        size_t n, size_t *size) {
  dlb_safetensors_tensor t[8];
  size_t order[8];
  uint64_t header, data;
  unsigned char *p;
  plan(t, order, names, arrays, n, &header, &data);
  p = malloc((size_t)(header + data) + 1);
  dlb_safetensors_write_header(t, n, NULL, 0, header, (char *)p);
  for (size_t k = 0; k < n; k++) {
    const dlb_safetensors_tensor *x = &t[order[k]];
    CHECK_EQ_INT(dlb_safetensors_write_data(arrays[x->index], p + header + x->begin, &err), DLB_OK);
  }
  *size = (size_t)(header + data);
  return p;
}

/* Loads every tensor of the safetensors file at path (n of them) into out. */
static dlb_status load_safetensors(const char *path, const dlb_load_options *o, dlb_array *out,
                                   size_t n, int *viewed) {
  dlb_load_source s;
  dlb_safetensors_header h;
  dlb_status st = dlb_load_open_file(&s, cpu, path, o, &err);
  for (size_t i = 0; i < n; i++) out[i].buffer = NULL;
  if (st == DLB_OK && (st = dlb_safetensors_read_header(&s, &h, &err)) == DLB_OK) {
    CHECK_EQ_INT(h.ntensors, n);
    for (size_t i = 0; i < h.ntensors && i < n && st == DLB_OK; i++) {
      dlb_load_item it;
      dlb_safetensors_item(&h, i, &it);
      st = dlb_load_array(&s, &it, &out[i], &err);
    }
    dlb_safetensors_free(&h);
  }
  if (viewed) *viewed = s.viewed;
  dlb_load_close(&s);
  return st;
}

/* The sum of an int32 array's elements, read one by one. */
static int64_t sum_int32(const dlb_array *a) {
  int32_t *p = malloc((size_t)a->numel * 4 + 4);
  int64_t sum = 0;
  CHECK_EQ_INT(dlb_array_read_into(a, p, DLB_INT32, &err), DLB_OK);
  for (int64_t k = 0; k < a->numel; k++) sum += p[k];
  free(p);
  return sum;
}

static dlb_load_options options(dlb_copy_mode copy, int map) {
  return (dlb_load_options){copy, NULL, 0, map, NULL, NULL};
}

/* ------------------------------------------------------------------------ */
/* The policy */

/* One policy for both formats: a view where the bytes allow, read-only
 * copies elsewhere on a default load, writable copies on request. */
static void test_views_and_copies(void) {
  int64_t shape[] = {3, 4};
  dlb_array a = iota(2, shape), got[2];
  const dlb_array *arrays[] = {&a};
  const char *names[] = {"a"};
  int viewed;
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("a.npy"), &err), DLB_OK);
  CHECK_EQ_INT(save_safetensors(path_of("a.st"), names, arrays, 1, DLB_FILE_CHUNK_BYTES), DLB_OK);
  for (int map = 0; map <= 1; map++)
    for (int mode = -1; mode <= 1; mode++) {
      dlb_load_options o = options((dlb_copy_mode)mode, map);
      dlb_load_source s;
      dlb_status st = dlb_load_open_file(&s, cpu, path_of("a.npy"), &o, &err);
      int view = map && mode != DLB_COPY_ALWAYS;
      if (!view && mode == DLB_COPY_NEVER) {
        /* nothing could be a view: refused before the file is opened */
        CHECK_EQ_INT(st, DLB_E_COPY_REQUIRED);
        if (!map) CHECK(strstr(err.message, "dlb_allow_mapping") != NULL);
        CHECK_EQ_INT(load_safetensors(path_of("a.st"), &o, got, 1, NULL), DLB_E_COPY_REQUIRED);
        continue;
      }
      CHECK_EQ_INT(st, DLB_OK);
      CHECK_EQ_INT(mappings_of(path_of("a.npy")), view);
      CHECK_EQ_INT(dlb_npy_load(&s, &got[0], &err), DLB_OK);
      CHECK_EQ_INT(s.viewed, view);
      dlb_load_close(&s);
      CHECK_EQ_INT(got[0].readonly, mode != DLB_COPY_ALWAYS);
      CHECK_EQ_INT(sum_int32(&got[0]), 66);
      dlb_array_release(&got[0]);
      CHECK_EQ_INT(mappings_of(path_of("a.npy")), 0);
      CHECK_EQ_INT(load_safetensors(path_of("a.st"), &o, got, 1, &viewed), DLB_OK);
      CHECK_EQ_INT(viewed, view);
      CHECK_EQ_INT(mappings_of(path_of("a.st")), view);
      CHECK_EQ_INT(got[0].readonly, mode != DLB_COPY_ALWAYS);
      CHECK_EQ_INT(sum_int32(&got[0]), 66);
      dlb_array_release(&got[0]);
    }
  dlb_array_release(&a);
}

/* Bytes that cannot be viewed (misaligned here) are copied, read-only on a
 * default load; COPY_NEVER names the tensor and the reason. */
static void test_unviewable_bytes(void) {
  int64_t one[] = {1}, three[] = {3};
  dlb_array b = alloc(DLB_UINT8, 1, one), f = alloc(DLB_FLOAT32, 1, three), got[2];
  const dlb_array *arrays[] = {&b, &f};
  const char *names[] = {"b", "f"};
  size_t size;
  unsigned char *bytes = safetensors_bytes(names, arrays, 2, &size), *shifted = malloc(size + 1);
  dlb_buffer *buf;
  dlb_load_options o = options(DLB_COPY_IF_NEEDED, 1);
  dlb_load_source s;
  dlb_safetensors_header h;
  memcpy(shifted + 1, bytes, size); /* every tensor one byte off its alignment */
  CHECK_EQ_INT(dlb_buffer_wrap_host(cpu, shifted + 1, size, 1, free, shifted, &buf, &err), DLB_OK);
  for (int mode = -1; mode <= 0; mode++) {
    o.copy = (dlb_copy_mode)mode;
    CHECK_EQ_INT(dlb_load_open_memory(&s, cpu, buf->host, size, buf, &o, &err), DLB_OK);
    CHECK_EQ_INT(dlb_safetensors_read_header(&s, &h, &err), DLB_OK);
    for (size_t i = 0; i < 2; i++) {
      dlb_load_item it;
      dlb_safetensors_item(&h, i, &it);
      if (it.dtype == DLB_FLOAT32 && mode == DLB_COPY_NEVER) {
        CHECK_EQ_INT(dlb_load_array(&s, &it, &got[i], &err), DLB_E_COPY_REQUIRED);
        CHECK(strstr(err.message, "tensor 'f'") && strstr(err.message, "aligned"));
        CHECK(got[i].buffer == NULL);
        continue;
      }
      CHECK_EQ_INT(dlb_load_array(&s, &it, &got[i], &err), DLB_OK);
      CHECK_EQ_INT(got[i].readonly, 1);
      CHECK_EQ_INT(got[i].buffer == buf, it.dtype == DLB_UINT8); /* the byte is a view */
      dlb_array_release(&got[i]);
    }
    dlb_safetensors_free(&h);
    dlb_load_close(&s);
  }
  dlb_buffer_release(buf);
  free(bytes);
  dlb_array_release(&b);
  dlb_array_release(&f);
}

/* Another device: writable copies there (Fortran order kept in the values). */
static void test_other_device(void) {
  dlb_backend *opaque;
  dlb_backend_ops ops = opaque_ops("policyopaque");
  int64_t shape[] = {2, 3};
  dlb_array a = iota(2, shape), t = view_of(&a), got, back;
  int perm[] = {1, 0};
  dlb_load_options o = options(DLB_COPY_IF_NEEDED, 1);
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &opaque, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_save_file(&t, path_of("t.npy"), &err), DLB_OK);
  o.backend = opaque;
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("t.npy"), DLB_COPY_IF_NEEDED, &got, &err), DLB_OK);
  dlb_array_release(&got);
  {
    dlb_load_source s;
    CHECK_EQ_INT(dlb_load_open_file(&s, cpu, path_of("t.npy"), &o, &err), DLB_OK);
    CHECK_EQ_INT(mappings_of(path_of("t.npy")), 0); /* read, not mapped: no view can come */
    CHECK_EQ_INT(dlb_npy_load(&s, &got, &err), DLB_OK);
    dlb_load_close(&s);
  }
  CHECK(got.buffer && got.buffer->backend == opaque && !got.readonly);
  CHECK_EQ_INT(got.shape[0], 3);
  CHECK_EQ_INT(dlb_array_clone_to(&back, &got, cpu, 0, &err), DLB_OK);
  {
    const int32_t *p = (const int32_t *)dlb_array_host_data(&back);
    for (int k = 0; k < 6; k++) CHECK_EQ_INT(p[k], (k % 2) * 3 + k / 2);
  }
  dlb_array_release(&back);
  dlb_array_release(&got);
  o.copy = DLB_COPY_NEVER;
  {
    dlb_load_source s;
    CHECK_EQ_INT(dlb_load_open_file(&s, cpu, path_of("t.npy"), &o, &err), DLB_E_COPY_REQUIRED);
  }
  dlb_array_release(&t);
  dlb_array_release(&a);
  dlb_backend_release(opaque);
}

/* ------------------------------------------------------------------------ */
/* Mapping off: a file truncated after the load cannot fault */

enum { BIG = 1 << 20 }; /* int32 elements: 4 MiB, many pages */

/* Loads big.npy and big.st (map as given), truncates both files to 0 bytes
 * as another writer could, then reads every element. */
static void load_truncate_read(int map) {
  dlb_load_options o = options(DLB_COPY_IF_NEEDED, map);
  dlb_load_source s;
  dlb_array npy, st;
  int64_t expected = (int64_t)BIG * (BIG - 1) / 2;
  CHECK_EQ_INT(dlb_load_open_file(&s, cpu, path_of("big.npy"), &o, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_load(&s, &npy, &err), DLB_OK);
  dlb_load_close(&s);
  CHECK_EQ_INT(load_safetensors(path_of("big.st"), &o, &st, 1, NULL), DLB_OK);
  CHECK_EQ_INT(npy.readonly && st.readonly, 1);
  CHECK_EQ_INT(truncate(path_of("big.npy"), 0), 0);
  CHECK_EQ_INT(truncate(path_of("big.st"), 0), 0);
  CHECK_EQ_INT(sum_int32(&npy), expected); /* with a mapping: SIGBUS here */
  CHECK_EQ_INT(sum_int32(&st), expected);
  dlb_array_release(&npy);
  dlb_array_release(&st);
}

static void truncated_mapped(void) { load_truncate_read(1); }

static void write_big_files(void) {
  int64_t shape[] = {BIG};
  dlb_array a = iota(1, shape);
  const dlb_array *arrays[] = {&a};
  const char *names[] = {"w"};
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("big.npy"), &err), DLB_OK);
  CHECK_EQ_INT(save_safetensors(path_of("big.st"), names, arrays, 1, DLB_FILE_CHUNK_BYTES), DLB_OK);
  dlb_array_release(&a);
}

static void test_mapping_off(void) {
  write_big_files();
  load_truncate_read(0);
  CHECK_EQ_INT(mappings_of(path_of("big")), 0);
  /* The hazard itself: a mapped file truncated under the views faults (in
   * a child: SIGBUS kills it, or the sanitizer reports it and exits). */
  write_big_files();
  fprintf(stderr, "(a child is expected to die of SIGBUS now)\n");
  CHECK(!run_isolated(truncated_mapped));
  unlink(path_of("big.npy"));
  unlink(path_of("big.st"));
}

/* ------------------------------------------------------------------------ */
/* Opening */

/* In a child ended by an alarm after 5 s: a FIFO, a directory and a device
 * fail at once with IO, whatever the mode and the mapping switch. */
static void special_files_child(void) {
  const char *paths[] = {path_of("fifo"), scratch, "/dev/null"};
  const int errnos[] = {EINVAL, EISDIR, EINVAL};
  alarm(5);
  for (size_t k = 0; k < 3; k++)
    for (int mode = -1; mode <= 1; mode++)
      for (int map = 0; map <= 1; map++) {
        dlb_load_options o = options((dlb_copy_mode)mode, map);
        dlb_load_source s;
        dlb_status st = dlb_load_open_file(&s, cpu, paths[k], &o, &err);
        if (mode == DLB_COPY_NEVER && !map) {
          CHECK_EQ_INT(st, DLB_E_COPY_REQUIRED);
          continue;
        }
        CHECK_EQ_INT(st, DLB_E_IO);
        CHECK_EQ_INT(err.native_status, errnos[k]);
        CHECK(strstr(err.message, "not a regular file") != NULL);
      }
}

static void test_special_files(void) {
  dlb_error e;
  CHECK_EQ_INT(mkfifo(path_of("fifo"), 0600), 0);
  CHECK(run_isolated(special_files_child));
  unlink(path_of("fifo"));
  CHECK_EQ_INT(dlb_check_path("x.npy", 5, &e), DLB_OK);
  CHECK_EQ_INT(dlb_check_path("x.npy\0junk", 10, &e), DLB_E_ARGUMENT);
  CHECK(strstr(e.message, "zero byte") != NULL);
}

/* ------------------------------------------------------------------------ */
/* The writer */

/* A transposed, a reversed and a strided view through chunk limits from one
 * element up: the same bytes as copies make, the chunk never past its limit. */
static void test_writer_streams(void) {
  int64_t shape[] = {6, 5};
  dlb_array a = iota(2, shape), t = view_of(&a), r = view_of(&a), c = view_of(&a);
  int perm[] = {1, 0};
  const dlb_array *arrays[] = {&t, &r, &c};
  const char *names[] = {"t", "r", "c"};
  size_t expected_size, size;
  unsigned char *expected, *got;
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&r, 1, 4, 5, -1, &err), DLB_OK); /* columns reversed */
  CHECK_EQ_INT(dlb_view_slice(&c, 0, 0, 3, 2, &err), DLB_OK);  /* every other row */
  expected = safetensors_bytes(names, arrays, 3, &expected_size);
  for (size_t cap = 1; cap <= 256; cap *= 2) {
    CHECK_EQ_INT(save_safetensors(path_of("w.st"), names, arrays, 3, cap), DLB_OK);
    got = read_bytes(path_of("w.st"), &size);
    CHECK(got && size == expected_size && memcmp(got, expected, size) == 0);
    free(got);
  }
  /* the writer itself: its chunk is at most the limit (one element at least) */
  for (size_t cap = 1; cap <= 64; cap *= 4) {
    dlb_file_writer w;
    CHECK_EQ_INT(dlb_file_writer_open(&w, path_of("w.bin"), cap, &err), DLB_OK);
    for (size_t i = 0; i < 3; i++)
      CHECK_EQ_INT(dlb_file_writer_write_array(&w, arrays[i], 0, &err), DLB_OK);
    CHECK(w.chunk_size <= (cap < 4 ? 4 : cap));
    CHECK_EQ_INT(dlb_file_writer_close(&w, DLB_OK, &err), DLB_OK);
  }
  free(expected);
  dlb_array_release(&t);
  dlb_array_release(&r);
  dlb_array_release(&c);
  dlb_array_release(&a);
}

/* Under a state's memory limit the chunk takes at most half the room left:
 * a save never pushes the process past what the host allows. */
static void test_writer_respects_the_limit(void) {
  dlb_budget *budget = dlb_budget_new();
  dlb_backend *capped;
  dlb_array a = {0}, t;
  int64_t shape[] = {1024, 1024}; /* 8 MiB of float64 */
  int perm[] = {1, 0};
  dlb_file_writer w;
  CHECK_EQ_INT(dlb_cpu_backend_create(&capped, &err), DLB_OK);
  dlb_backend_set_budget(capped, budget);
  atomic_store(&budget->limit, (size_t)12 << 20);
  CHECK_EQ_INT(dlb_array_allocate(&a, capped, 0, DLB_FLOAT64, 2, shape, 1, &err), DLB_OK);
  t = view_of(&a);
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK); /* not contiguous: through the chunk */
  CHECK_EQ_INT(dlb_file_writer_open(&w, path_of("capped.bin"), (size_t)16 << 20, &err), DLB_OK);
  CHECK_EQ_INT(dlb_file_writer_write_array(&w, &t, 0, &err), DLB_OK);
  CHECK(w.chunk_size > 0 && w.chunk_size <= (size_t)2 << 20); /* (12 - 8) / 2 MiB */
  CHECK_EQ_INT(dlb_file_writer_close(&w, DLB_OK, &err), DLB_OK);
  dlb_array_release(&t);
  dlb_array_release(&a);
  dlb_backend_release(capped);
  dlb_budget_release(budget);
}

/* swap = 1 writes the other byte order (a big-endian machine's safetensors
 * saves): every element's bytes reversed, complex parts one by one. */
static void test_writer_swaps(void) {
  int64_t shape[] = {2, 3}, two[] = {2};
  dlb_array a = iota(2, shape), t = view_of(&a), z = alloc(DLB_COMPLEX64, 1, two);
  const float parts[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  int perm[] = {1, 0};
  unsigned char *got;
  size_t size;
  memcpy(dlb_array_host_data(&z), parts, sizeof parts);
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  for (int k = 0; k < 2; k++) {
    dlb_file_writer w;
    CHECK_EQ_INT(dlb_file_writer_open(&w, path_of("s.bin"), 8, &err), DLB_OK);
    CHECK_EQ_INT(dlb_file_writer_write_array(&w, k ? &t : &a, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_file_writer_write_array(&w, &z, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_file_writer_close(&w, DLB_OK, &err), DLB_OK);
    got = read_bytes(path_of("s.bin"), &size);
    CHECK_EQ_INT(size, 24 + 16);
    for (int e = 0; got && e < 6; e++) { /* element e of the logical order, big-endian */
      int32_t v = k ? (e % 2) * 3 + e / 2 : e;
      CHECK_EQ_INT(got[4 * e] << 24 | got[4 * e + 1] << 16 | got[4 * e + 2] << 8 | got[4 * e + 3],
                   v);
    }
    for (int p = 0; got && p < 4; p++) {
      unsigned char le[4];
      memcpy(le, &parts[p], 4);
      CHECK(got[24 + 4 * p] == le[3] && got[24 + 4 * p + 3] == le[0]);
    }
    free(got);
  }
  unlink(path_of("s.bin"));
  dlb_array_release(&t);
  dlb_array_release(&a);
  dlb_array_release(&z);
}

static void remove_scratch(void) {
  const char *names[] = {"a.npy", "a.st", "t.npy", "w.st", "w.bin"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) unlink(path_of(names[k]));
  rmdir(scratch);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  if (!cpu_open()) return 1;
  snprintf(scratch, sizeof scratch, "%s/dlb-policy-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(scratch)) {
    perror("mkdtemp");
    return 1;
  }
  test_views_and_copies();
  test_unviewable_bytes();
  test_other_device();
  test_mapping_off();
  test_special_files();
  test_writer_streams();
  test_writer_swaps();
  test_writer_respects_the_limit();
  remove_scratch();
  cpu_close();
  return check_done("test_load_policy");
}
