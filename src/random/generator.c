/* generator.c -- draws into arrays and shuffles (generator.h). */
#include "generator.h"
#include <string.h>
#include "../core/work.h"

/* Draws (or swaps) between two looks at the interrupt and work ticks. */
#define CHUNK DLB_WORK_CHECK_EVERY

void dlb_draw_fill(dlb_pcg64 *g, dlb_draw *d, void *p, int64_t n) {
  switch (d->kind) {
    case DLB_DRAW_RANDOM:
      if (d->dtype == DLB_FLOAT32) dlb_random_fill_f(g, p, n);
      else dlb_random_fill(g, p, n);
      break;
    case DLB_DRAW_NORMAL:
      if (d->dtype == DLB_FLOAT32) dlb_standard_normal_fill_f(g, p, n);
      else if (d->standard) dlb_standard_normal_fill(g, p, n);
      else dlb_normal_fill(g, d->a, d->b, p, n);
      break;
    case DLB_DRAW_UNIFORM: dlb_uniform_fill(g, d->a, d->b, p, n); break;
    case DLB_DRAW_INTEGERS:
      switch (dlb_dtype_get(d->dtype)->itemsize) {
        case 8: dlb_bounded64_fill(g, d->off, d->rng, p, n); break;
        case 4: dlb_bounded32_fill(g, (uint32_t)d->off, (uint32_t)d->rng, p, n); break;
        case 2: dlb_bounded16_fill(g, (uint16_t)d->off, (uint16_t)d->rng, p, n, &d->bits); break;
        default:
          if (d->dtype == DLB_BOOL)
            dlb_bounded_bool_fill(g, (uint8_t)d->off, (uint8_t)d->rng, p, n, &d->bits);
          else dlb_bounded8_fill(g, (uint8_t)d->off, (uint8_t)d->rng, p, n, &d->bits);
      }
      break;
    case DLB_DRAW_EXPONENTIAL: dlb_exponential_fill(g, d->a, p, n); break;
    case DLB_DRAW_GAMMA: dlb_gamma_fill(g, d->a, d->b, p, n); break;
    case DLB_DRAW_BETA: dlb_beta_fill(g, d->a, d->b, p, n); break;
    case DLB_DRAW_POISSON: dlb_poisson_fill(g, d->a, p, n); break;
    case DLB_DRAW_BINOMIAL: dlb_binomial_fill(g, d->count, d->a, p, n); break;
  }
}

dlb_status dlb_draw_one(dlb_pcg64 *g, dlb_draw *d, void *out, dlb_budget *budget, const char *op,
                        dlb_error *err) {
  dlb_work w;
  dlb_pcg64 saved = *g;
  dlb_status st = dlb_work_begin(&w, budget, 1, op, err);
  if (st != DLB_OK) return st;
  dlb_draw_fill(g, d, out, 1);
  dlb_work_tick(&w, 1);
  if ((st = dlb_work_end(&w, DLB_OK, op, err)) != DLB_OK) *g = saved;
  return st;
}

dlb_status dlb_draw_into(dlb_pcg64 *g, dlb_draw *d, const dlb_array *a, dlb_budget *budget,
                         const char *op, dlb_error *err) {
  dlb_work w;
  dlb_pcg64 saved = *g;
  char *p = dlb_array_host_data(a);
  int64_t numel = a->numel, item = (int64_t)dlb_dtype_get(d->dtype)->itemsize;
  dlb_status st = dlb_work_begin(&w, budget, numel, op, err);
  if (st != DLB_OK) return st;
  for (int64_t done = 0; done < numel; done += CHUNK) {
    int64_t n = numel - done < CHUNK ? numel - done : CHUNK;
    dlb_draw_fill(g, d, p + done * item, n);
    if (dlb_work_tick(&w, n)) break;
  }
  if ((st = dlb_work_end(&w, DLB_OK, op, err)) != DLB_OK) *g = saved;
  return st;
}

/* Swaps the elements at p and q of size item (1, 2, 4, 8 or 16 bytes). */
static inline void swap_items(char *p, char *q, size_t item) {
  char tmp[16];
  memcpy(tmp, p, item);
  memcpy(p, q, item);
  memcpy(q, tmp, item);
}

/* Swaps rows i and j (along dim 0) of the host array a, element by element
 * over the other dims (any strides). */
static void swap_rows(const dlb_array *a, char *base, int64_t i, int64_t j, size_t item) {
  int64_t idx[DLB_MAX_NDIM];
  int64_t rest = a->numel / a->shape[0];
  char *pi = base + i * a->strides[0] * (int64_t)item;
  char *pj = base + j * a->strides[0] * (int64_t)item;
  for (int k = 1; k < a->ndim; k++) idx[k] = 0;
  for (int64_t e = 0; e < rest; e++) {
    int64_t off = 0;
    for (int k = 1; k < a->ndim; k++) off += idx[k] * a->strides[k];
    swap_items(pi + off * (int64_t)item, pj + off * (int64_t)item, item);
    for (int k = a->ndim - 1; k >= 1; k--) {
      if (++idx[k] < a->shape[k]) break;
      idx[k] = 0;
    }
  }
}

/* The 1-d loop of shuffle, one element type at a time (the swap inlined):
 * i from n-1 down to stop (and 1); returns the next i. */
#define SHUFFLE_1D(T)                                                                              \
  static int64_t shuffle_1d_##T(dlb_pcg64 *g, char *base, int64_t stride, int64_t n,               \
                                int64_t stop) {                                                    \
    int64_t i = n - 1;                                                                             \
    for (; i >= stop && i >= 1; i--) {                                                             \
      int64_t j = (int64_t)dlb_random_interval(g, (uint64_t)i);                                    \
      T *pi = (T *)(void *)(base + i * stride), *pj = (T *)(void *)(base + j * stride);            \
      T t = *pi;                                                                                   \
      *pi = *pj;                                                                                   \
      *pj = t;                                                                                     \
    }                                                                                              \
    return i;                                                                                      \
  }
SHUFFLE_1D(uint8_t)
SHUFFLE_1D(uint16_t)
SHUFFLE_1D(uint32_t)
SHUFFLE_1D(uint64_t)
#undef SHUFFLE_1D

dlb_status dlb_shuffle(dlb_pcg64 *g, const dlb_array *a, dlb_budget *budget, const char *op,
                       dlb_error *err) {
  dlb_work w;
  dlb_status st;
  dlb_pcg64 saved = *g;
  size_t item = dlb_array_itemsize(a);
  char *base = dlb_array_host_data(a);
  int64_t n = a->shape[0], row = n ? a->numel / n : 0, stride = a->strides[0] * (int64_t)item;
  if (a->numel == 0) return DLB_OK;
  if ((st = dlb_work_begin(&w, budget, a->numel, op, err)) != DLB_OK) return st;
  if (a->ndim == 1 && item <= 8) { /* the common case, in chunks between looks at the interrupt */
    for (int64_t i = n - 1; i >= 1;) {
      int64_t stop = i - CHUNK > 1 ? i - CHUNK : 1;
      switch (item) {
        case 1: i = shuffle_1d_uint8_t(g, base, stride, i + 1, stop); break;
        case 2: i = shuffle_1d_uint16_t(g, base, stride, i + 1, stop); break;
        case 4: i = shuffle_1d_uint32_t(g, base, stride, i + 1, stop); break;
        default: i = shuffle_1d_uint64_t(g, base, stride, i + 1, stop); break;
      }
      if (dlb_work_tick(&w, CHUNK)) break;
    }
  } else {
    for (int64_t i = n - 1; i >= 1; i--) {
      int64_t j = (int64_t)dlb_random_interval(g, (uint64_t)i);
      if (i != j) {
        if (a->ndim == 1) swap_items(base + i * stride, base + j * stride, item);
        else swap_rows(a, base, i, j, item);
      }
      if (dlb_work_tick(&w, row)) break;
    }
  }
  if ((st = dlb_work_end(&w, DLB_OK, op, err)) != DLB_OK) *g = saved;
  return st;
}
