/* strided.c -- copy_strided: one n-d copy between host memory and device
 * memory, or between two allocations (of any devices), all on one stream
 * (dlbridge's queue of the destination's device, or of the source's when
 * the destination is host memory). A copy that touches host memory is
 * complete on return; one between allocations stays queued unless it went
 * through host memory.
 *
 * The plan: strides in bytes, extent-1 dims dropped, the destination's
 * strides made positive (both sides walk a flipped dim backwards) and
 * sorted outermost first, then dims that are contiguous on both sides
 * merged (staged pieces re-sort by the device side's strides, so each
 * piece is a dense run of device memory where the layout has one). Then, in order of preference:
 *  - one linear copy (cuMemcpy*Async) when both sides are contiguous;
 *  - one cuMemcpy2DAsync/3DAsync when the rest is rows of a pitch (a row
 *    being the contiguous inner run, or one element) no wider than the
 *    device's MAX_PITCH. The reference allows a copy within device memory
 *    to refuse pitches not from cuMemAllocPitch (CUDA_ERROR_INVALID_VALUE,
 *    before anything is queued): that copy takes the staged path instead;
 *  - pieces through two pinned staging buffers (DLB_CUDA_STAGE_BYTES each,
 *    double-buffered: the host gathers or scatters one while the other is
 *    in flight). A device side is moved as its whole byte span; a
 *    destination whose elements do not tile their span is read first
 *    (read-modify-write, in stream order), so the gaps keep their bytes.
 *    Device to device this way goes through host memory, piece by piece. */
#include <stdlib.h>
#include <string.h>
#include "cuda.h"

typedef struct side {
  int on_device;
  CUdeviceptr dev;               /* on_device: the address of element 0...0 */
  char *host;                    /* else: the host address of element 0...0 */
  int64_t strides[DLB_MAX_NDIM]; /* bytes */
} side;

typedef struct plan {
  size_t item;
  int ndim;
  int64_t shape[DLB_MAX_NDIM];
  side dst, src;
} plan;

/* The stream and context a copy runs in. */
typedef struct run {
  dlb_cuda *c;
  CUstream stream;
  int device_id;
} run;

static void advance(side *s, int64_t delta) {
  if (s->on_device) s->dev += (uint64_t)delta;
  else s->host += delta;
}

/* --- the plan ------------------------------------------------------------ */

static int side_of(const dlb_copy_side *in, size_t item, int ndim, side *out) {
  out->on_device = in->handle != NULL;
  out->dev = out->on_device ? (CUdeviceptr)(uintptr_t)in->handle + in->offset : 0;
  out->host = out->on_device ? NULL : in->host;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(in->strides[d], (int64_t)item, &out->strides[d])) return 0;
  return 1;
}

static void remove_dim(plan *p, int d) {
  for (int k = d; k + 1 < p->ndim; k++) {
    p->shape[k] = p->shape[k + 1];
    p->dst.strides[k] = p->dst.strides[k + 1];
    p->src.strides[k] = p->src.strides[k + 1];
  }
  p->ndim--;
}

static void swap_dims(plan *p, int a, int b) {
  int64_t t = p->shape[a];
  p->shape[a] = p->shape[b], p->shape[b] = t;
  t = p->dst.strides[a], p->dst.strides[a] = p->dst.strides[b], p->dst.strides[b] = t;
  t = p->src.strides[a], p->src.strides[a] = p->src.strides[b], p->src.strides[b] = t;
}

/* Extent-1 dims dropped, the strides of one side (by: the destination, or
 * the source) made >= 0 and sorted descending, contiguous dims merged. */
static void normalize(plan *p, int by_src) {
  for (int d = p->ndim - 1; d >= 0; d--)
    if (p->shape[d] == 1) remove_dim(p, d);
  for (int d = 0; d < p->ndim; d++)
    if ((by_src ? p->src.strides[d] : p->dst.strides[d]) < 0) {
      advance(&p->dst, p->dst.strides[d] * (p->shape[d] - 1));
      advance(&p->src, p->src.strides[d] * (p->shape[d] - 1));
      p->dst.strides[d] = -p->dst.strides[d];
      p->src.strides[d] = -p->src.strides[d];
    }
  for (int d = 1; d < p->ndim; d++)
    for (int k = d; k > 0; k--) {
      const int64_t *st = by_src ? p->src.strides : p->dst.strides;
      if (st[k] <= st[k - 1]) break;
      swap_dims(p, k, k - 1);
    }
  for (int d = p->ndim - 2; d >= 0; d--)
    if (p->dst.strides[d] == p->dst.strides[d + 1] * p->shape[d + 1] &&
        p->src.strides[d] == p->src.strides[d + 1] * p->shape[d + 1]) {
      p->shape[d] *= p->shape[d + 1];
      p->dst.strides[d] = p->dst.strides[d + 1];
      p->src.strides[d] = p->src.strides[d + 1];
      remove_dim(p, d + 1);
    }
}

static int64_t numel(const plan *p) {
  int64_t n = 1;
  for (int d = 0; d < p->ndim; d++) n *= p->shape[d];
  return n;
}

/* The bytes a side reaches, relative to element 0...0: [*lo, *hi). */
static void span(const plan *p, const side *s, int64_t *lo, int64_t *hi) {
  *lo = 0;
  *hi = (int64_t)p->item;
  for (int d = 0; d < p->ndim; d++) {
    int64_t reach = s->strides[d] * (p->shape[d] - 1);
    if (reach < 0) *lo += reach;
    else *hi += reach;
  }
}

static int64_t span_bytes(const plan *p, const side *s) {
  int64_t lo, hi;
  span(p, s, &lo, &hi);
  return hi - lo;
}

/* --- host gather and scatter ---------------------------------------------------- */

static void move_item(char *dst, const char *src, size_t item) {
  switch (item) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, item);
  }
}

/* dst[i...] = src[i...] in host memory over p's shape, with these strides. */
static void host_copy(const plan *p, char *dst, const int64_t *ds, const char *src,
                      const int64_t *ss) {
  int64_t idx[DLB_MAX_NDIM] = {0}, od = 0, os = 0;
  int inner = p->ndim - 1, k;
  if (p->ndim == 0) {
    move_item(dst, src, p->item);
    return;
  }
  for (;;) {
    for (int64_t i = 0; i < p->shape[inner]; i++)
      move_item(dst + od + i * ds[inner], src + os + i * ss[inner], p->item);
    for (k = inner - 1; k >= 0; k--) {
      od += ds[k], os += ss[k];
      if (++idx[k] < p->shape[k]) break;
      od -= ds[k] * p->shape[k], os -= ss[k] * p->shape[k], idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* --- one call ------------------------------------------------------------------- */

static CUresult linear_copy(const run *r, const plan *p) {
  const dlb_cu *cu = r->c->cu;
  size_t n = (size_t)numel(p) * p->item;
  if (p->dst.on_device && p->src.on_device) return cu->dtod(p->dst.dev, p->src.dev, n, r->stream);
  if (p->dst.on_device) return cu->htod(p->dst.dev, p->src.host, n, r->stream);
  return cu->dtoh(p->dst.host, p->src.dev, n, r->stream);
}

static int is_linear(const plan *p) {
  return p->ndim == 0 || (p->ndim == 1 && p->dst.strides[0] == (int64_t)p->item &&
                          p->src.strides[0] == (int64_t)p->item);
}

static void describe_side(const side *s, CUmemorytype *type, const void **host, void **dhost,
                          CUdeviceptr *dev) {
  *type = s->on_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (host) *host = s->host;
  if (dhost) *dhost = s->host;
  *dev = s->dev;
}

/* The pitched form: width bytes per row, the outer dims (1 or 2) in outer[]. */
typedef struct pitched {
  size_t width;
  int outer; /* 1: 2D, 2: 3D */
  int64_t dims[2];
} pitched;

static int side_pitches(const plan *p, const side *s, const pitched *q, int64_t *pitch,
                        int64_t *height) {
  int64_t inner = s->strides[q->dims[q->outer - 1]];
  if (inner <= 0 || (uint64_t)inner < q->width) return 0;
  *pitch = inner;
  *height = 1;
  if (q->outer == 2) {
    int64_t outer = s->strides[q->dims[0]];
    if (outer <= 0 || outer % inner != 0 || outer / inner < p->shape[q->dims[1]]) return 0;
    *height = outer / inner;
  }
  return 1;
}

/* Whether p is rows of a pitch on both sides (fills q). */
static int pitch_form(const plan *p, pitched *q) {
  int rows_contiguous = p->ndim >= 1 && p->dst.strides[p->ndim - 1] == (int64_t)p->item &&
                        p->src.strides[p->ndim - 1] == (int64_t)p->item;
  int m = rows_contiguous ? p->ndim - 1 : p->ndim;
  int64_t pitch = 0, height = 0;
  if (m < 1 || m > 2) return 0;
  q->width = rows_contiguous ? (size_t)p->shape[p->ndim - 1] * p->item : p->item;
  q->outer = m;
  for (int k = 0; k < m; k++) q->dims[k] = k;
  return side_pitches(p, &p->dst, q, &pitch, &height) &&
         side_pitches(p, &p->src, q, &pitch, &height);
}

static CUresult copy_2d(const run *r, const plan *p, const pitched *q) {
  CUDA_MEMCPY2D m;
  int64_t pitch = 0, height = 0;
  memset(&m, 0, sizeof m);
  describe_side(&p->src, &m.srcMemoryType, &m.srcHost, NULL, &m.srcDevice);
  describe_side(&p->dst, &m.dstMemoryType, NULL, &m.dstHost, &m.dstDevice);
  side_pitches(p, &p->src, q, &pitch, &height);
  m.srcPitch = (size_t)pitch;
  side_pitches(p, &p->dst, q, &pitch, &height);
  m.dstPitch = (size_t)pitch;
  m.WidthInBytes = q->width;
  m.Height = (size_t)p->shape[q->dims[0]];
  return r->c->cu->copy2d(&m, r->stream);
}

static CUresult copy_3d(const run *r, const plan *p, const pitched *q) {
  CUDA_MEMCPY3D m;
  int64_t pitch = 0, height = 0;
  memset(&m, 0, sizeof m);
  describe_side(&p->src, &m.srcMemoryType, &m.srcHost, NULL, &m.srcDevice);
  describe_side(&p->dst, &m.dstMemoryType, NULL, &m.dstHost, &m.dstDevice);
  side_pitches(p, &p->src, q, &pitch, &height);
  m.srcPitch = (size_t)pitch, m.srcHeight = (size_t)height;
  side_pitches(p, &p->dst, q, &pitch, &height);
  m.dstPitch = (size_t)pitch, m.dstHeight = (size_t)height;
  m.WidthInBytes = q->width;
  m.Height = (size_t)p->shape[q->dims[1]];
  m.Depth = (size_t)p->shape[q->dims[0]];
  return r->c->cu->copy3d(&m, r->stream);
}

/* --- pieces ------------------------------------------------------------------------ */

typedef CUresult (*piece_fn)(const run *r, const plan *piece, void *aux);

/* What a piece costs in staging bytes: the spans of its device sides, or
 * its elements' bytes (device to device, through host memory). */
static int64_t cost(const plan *p) {
  int64_t c = 0, s;
  if (p->dst.on_device && p->src.on_device) return numel(p) * (int64_t)p->item;
  if (p->dst.on_device && (s = span_bytes(p, &p->dst)) > c) c = s;
  if (p->src.on_device && (s = span_bytes(p, &p->src)) > c) c = s;
  return c;
}

/* Calls fn on pieces covering p in row-major order, each costing at most
 * limit (a single element always fits). */
static CUresult each_piece(const run *r, const plan *p, int64_t limit, piece_fn fn, void *aux) {
  plan sub = *p;
  int64_t k, n0;
  CUresult res;
  if (p->ndim == 0 || cost(p) <= limit) return fn(r, p, aux);
  n0 = p->shape[0];
  sub.shape[0] = 1;
  if (cost(&sub) > limit) { /* one index of dim 0 is too much: split the next dims */
    remove_dim(&sub, 0);
    for (int64_t i = 0; i < n0; i++) {
      plan at = sub;
      advance(&at.dst, i * p->dst.strides[0]);
      advance(&at.src, i * p->src.strides[0]);
      if ((res = each_piece(r, &at, limit, fn, aux)) != CUDA_SUCCESS) return res;
    }
    return CUDA_SUCCESS;
  }
  for (k = limit / cost(&sub); k > 1; k /= 2) {
    sub.shape[0] = k < n0 ? k : n0;
    if (cost(&sub) <= limit) break;
  }
  if (k < 1) k = 1;
  for (int64_t i = 0; i < n0; i += k) {
    plan at = *p;
    at.shape[0] = n0 - i < k ? n0 - i : k;
    advance(&at.dst, i * p->dst.strides[0]);
    advance(&at.src, i * p->src.strides[0]);
    if ((res = fn(r, &at, aux)) != CUDA_SUCCESS) return res;
  }
  return CUDA_SUCCESS;
}

/* The pinned staging buffers and their events, for one staged copy. */
typedef struct stage {
  char *buf[2];
  CUevent done[2]; /* the last transfer through buf[k] */
  int used[2];
  int next;
  plan pending; /* a gather: the piece in buf[pending_buf] still to unpack */
  int64_t pending_lo;
  int pending_buf;
  int has_pending;
} stage;

static CUresult stage_open(const run *r, stage *s) {
  dlb_cuda *c = r->c;
  CUresult res = CUDA_SUCCESS;
  memset(s, 0, sizeof *s);
  for (int k = 0; k < 2 && res == CUDA_SUCCESS; k++)
    if (!c->stage[k]) {
      res = c->cu->host_alloc(&c->stage[k], DLB_CUDA_STAGE_BYTES, CU_MEMHOSTALLOC_PORTABLE);
      if (res == CUDA_SUCCESS) c->stage_device = r->device_id;
      else c->stage[k] = NULL;
    }
  for (int k = 0; k < 2 && res == CUDA_SUCCESS; k++) {
    s->buf[k] = c->stage[k];
    res = c->cu->event_create(&s->done[k], CU_EVENT_DISABLE_TIMING);
  }
  return res;
}

static void stage_close(const run *r, stage *s) {
  for (int k = 0; k < 2; k++)
    if (s->done[k]) r->c->cu->event_destroy(s->done[k]);
}

/* The buffer the next piece uses, once the transfer it last held is done. */
static CUresult take_buffer(const run *r, stage *s, int *k) {
  *k = s->next;
  s->next = 1 - s->next;
  return s->used[*k] ? r->c->cu->event_sync(s->done[*k]) : CUDA_SUCCESS;
}

static CUresult mark(const run *r, stage *s, int k) {
  s->used[k] = 1;
  return r->c->cu->event_record(s->done[k], r->stream);
}

/* Unpacks the pending gathered piece into host memory. */
static CUresult unpack_pending(const run *r, stage *s) {
  int k = s->pending_buf;
  CUresult res;
  if (!s->has_pending) return CUDA_SUCCESS;
  s->has_pending = 0;
  if ((res = r->c->cu->event_sync(s->done[k])) != CUDA_SUCCESS) return res;
  host_copy(&s->pending, s->pending.dst.host, s->pending.dst.strides, s->buf[k] - s->pending_lo,
            s->pending.src.strides);
  return CUDA_SUCCESS;
}

/* Device to host: the span in flight into one buffer while the host
 * unpacks the previous piece from the other. */
static CUresult gather_piece(const run *r, const plan *piece, void *aux) {
  stage *s = aux;
  int64_t lo, hi;
  int k;
  CUresult res;
  span(piece, &piece->src, &lo, &hi);
  if ((res = take_buffer(r, s, &k)) != CUDA_SUCCESS ||
      (res = r->c->cu->dtoh(s->buf[k], piece->src.dev + (uint64_t)lo, (size_t)(hi - lo),
                            r->stream)) != CUDA_SUCCESS ||
      (res = mark(r, s, k)) != CUDA_SUCCESS)
    return res;
  if ((res = unpack_pending(r, s)) != CUDA_SUCCESS) return res;
  s->pending = *piece;
  s->pending_lo = lo;
  s->pending_buf = k;
  s->has_pending = 1;
  return CUDA_SUCCESS;
}

/* Host to device: packs one buffer while the other is in flight; a
 * destination that does not tile its span is read into the buffer first. */
static CUresult scatter_piece(const run *r, const plan *piece, void *aux) {
  stage *s = aux;
  int64_t lo, hi;
  int k;
  CUresult res;
  CUdeviceptr at;
  span(piece, &piece->dst, &lo, &hi);
  at = piece->dst.dev + (uint64_t)lo;
  if ((res = take_buffer(r, s, &k)) != CUDA_SUCCESS) return res;
  if (numel(piece) * (int64_t)piece->item != hi - lo &&
      ((res = r->c->cu->dtoh(s->buf[k], at, (size_t)(hi - lo), r->stream)) != CUDA_SUCCESS ||
       (res = mark(r, s, k)) != CUDA_SUCCESS ||
       (res = r->c->cu->event_sync(s->done[k])) != CUDA_SUCCESS))
    return res;
  host_copy(piece, s->buf[k] - lo, piece->dst.strides, piece->src.host, piece->src.strides);
  if ((res = r->c->cu->htod(at, s->buf[k], (size_t)(hi - lo), r->stream)) != CUDA_SUCCESS)
    return res;
  return mark(r, s, k);
}

static CUresult copy_plan(const run *r, const plan *p);

/* Device to device through host memory: each piece out to tmp and back in. */
static CUresult bounce_piece(const run *r, const plan *piece, void *aux) {
  char *tmp = aux;
  plan out = *piece, in = *piece;
  int64_t packed = (int64_t)piece->item;
  CUresult res;
  for (int d = piece->ndim - 1; d >= 0; d--) {
    out.dst.strides[d] = in.src.strides[d] = packed;
    packed *= piece->shape[d];
  }
  out.dst.on_device = in.src.on_device = 0;
  out.dst.host = in.src.host = tmp;
  if ((res = copy_plan(r, &out)) != CUDA_SUCCESS || (res = copy_plan(r, &in)) != CUDA_SUCCESS)
    return res;
  return r->c->cu->stream_sync(r->stream); /* tmp is free for the next piece */
}

static CUresult staged(const run *r, const plan *p) {
  stage s;
  CUresult res;
  if (p->dst.on_device && p->src.on_device) {
    char *tmp = malloc(DLB_CUDA_STAGE_BYTES);
    if (!tmp) return CUDA_ERROR_OUT_OF_MEMORY;
    res = each_piece(r, p, (int64_t)DLB_CUDA_STAGE_BYTES, bounce_piece, tmp);
    free(tmp);
    return res;
  }
  if ((res = stage_open(r, &s)) == CUDA_SUCCESS) {
    plan q = *p;
    normalize(&q, !p->dst.on_device); /* pieces walk the device side in its own order */
    res = each_piece(r, &q, (int64_t)DLB_CUDA_STAGE_BYTES,
                     q.dst.on_device ? scatter_piece : gather_piece, &s);
    if (res == CUDA_SUCCESS) res = unpack_pending(r, &s);
    if (res == CUDA_SUCCESS)
      res = r->c->cu->stream_sync(r->stream); /* the buffers are free again */
  }
  stage_close(r, &s);
  return res;
}

/* Whether two device sides are of different devices (peer or bounce). */
static int crosses(const plan *p, const dlb_strided_copy *copy) {
  return p->dst.on_device && p->src.on_device && copy->dst.device_id != copy->src.device_id;
}

/* Whether both sides' pitches are within the device's MAX_PITCH (asked
 * each time: one attribute read beside a 2D copy; unknown: the copy says). */
static int pitches_allowed(const run *r, const plan *p, const pitched *q) {
  int max_pitch = 0;
  uint64_t most = UINT64_MAX;
  int64_t pitch = 0, height = 0;
  if (r->c->cu->device_attribute(&max_pitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH,
                                 r->c->devices[r->device_id].device) == CUDA_SUCCESS &&
      max_pitch > 0)
    most = (uint64_t)max_pitch;
  side_pitches(p, &p->src, q, &pitch, &height);
  if ((uint64_t)pitch > most) return 0;
  side_pitches(p, &p->dst, q, &pitch, &height);
  return (uint64_t)pitch <= most;
}

static CUresult copy_plan(const run *r, const plan *p) {
  pitched q;
  CUresult res;
  if (is_linear(p)) return linear_copy(r, p);
  if (pitch_form(p, &q) && pitches_allowed(r, p, &q)) {
    res = q.outer == 1 ? copy_2d(r, p, &q) : copy_3d(r, p, &q);
    if (res != CUDA_ERROR_INVALID_VALUE) return res;
  }
  return staged(r, p);
}

/* Across devices: one peer copy when contiguous, else through host memory. */
static CUresult copy_across(const run *r, const plan *p, const dlb_strided_copy *copy) {
  CUcontext dst, src;
  CUresult res;
  if (!is_linear(p)) return staged(r, p);
  if (!(dst = dlb_cuda_context(r->c, copy->dst.device_id, &res)) ||
      !(src = dlb_cuda_context(r->c, copy->src.device_id, &res)))
    return res;
  return r->c->cu->peer(p->dst.dev, dst, p->src.dev, src, (size_t)numel(p) * p->item, r->stream);
}

/* 1: p holds the copy; 0: nothing to copy (an empty shape); -1: strides
 * in bytes overflow. */
static int build(const dlb_strided_copy *copy, plan *p) {
  p->item = copy->itemsize;
  p->ndim = copy->ndim;
  for (int d = 0; d < copy->ndim; d++) {
    if (copy->shape[d] == 0) return 0;
    p->shape[d] = copy->shape[d];
  }
  return side_of(&copy->dst, copy->itemsize, copy->ndim, &p->dst) &&
                 side_of(&copy->src, copy->itemsize, copy->ndim, &p->src)
             ? 1
             : -1;
}

dlb_status dlb_cuda_copy_strided(void *ctx, const dlb_strided_copy *copy) {
  dlb_cuda *c = ctx;
  plan p;
  run r = {c, (CUstream)copy->queue, copy->dst.handle ? copy->dst.device_id : copy->src.device_id};
  CUresult res;
  int built = build(copy, &p);
  if (built <= 0) return built == 0 ? DLB_OK : DLB_E_SHAPE;
  normalize(&p, 0);
  if (!p.dst.on_device && !p.src.on_device) {
    host_copy(&p, p.dst.host, p.dst.strides, p.src.host, p.src.strides);
    return DLB_OK;
  }
  if ((res = dlb_cuda_enter(c, r.device_id)) != CUDA_SUCCESS) return dlb_cuda_status(res);
  if (!r.stream) res = dlb_cuda_stream(c, r.device_id, &r.stream);
  if (res == CUDA_SUCCESS) res = crosses(&p, copy) ? copy_across(&r, &p, copy) : copy_plan(&r, &p);
  if (res == CUDA_SUCCESS && !(p.dst.on_device && p.src.on_device))
    res = c->cu->stream_sync(r.stream); /* host memory: complete on return */
  dlb_cuda_leave(c);
  return dlb_cuda_status(res);
}
