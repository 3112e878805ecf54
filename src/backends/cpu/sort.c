/* sort.c -- the host's sorting kernels (the cpu kernels' sort and search
 * entries): each lane is turned into unsigned keys whose integer order is
 * NumPy's sort order (dlbridge.h), sorted by a radix sort (linear time,
 * stable, digits that all keys share skipped; long lanes split by their top
 * digit first so that each bucket sorts in cache), and written back. Long
 * lanes of values alone go to Highway's vectorised quicksort where it was
 * built in (vqsort.cc). Top-k selections of a few elements keep a heap
 * instead. Complex numbers sort by three keys (NaN class, first part,
 * second part), one stable pass each.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_once */
#endif
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../../core/array.h"
#include "../../core/work.h"
#include "cpu.h"
#include "lanes.h"

/* --- keys ----------------------------------------------------------------- */

/* The key families: real dtypes of 8 or 16 bits, 32, 64, and complex. */
typedef enum family { FAMILY_16, FAMILY_32, FAMILY_64, FAMILY_COMPLEX } family;

static family family_of(dlb_dtype t) {
  switch (dlb_dtype_get(t)->itemsize) {
    case 1:
    case 2: return FAMILY_16;
    case 4: return FAMILY_32;
    case 8: return t == DLB_COMPLEX64 ? FAMILY_COMPLEX : FAMILY_64;
    default: return FAMILY_COMPLEX;
  }
}

/* The raw bits of element i of a lane (unaligned loads are fine). */
static uint64_t load_bits(const char *p, int64_t size) {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  switch (size) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, 8); return u64;
  }
}

static void store_bits(char *p, int64_t size, uint64_t bits) {
  uint8_t u8 = (uint8_t)bits;
  uint16_t u16 = (uint16_t)bits;
  uint32_t u32 = (uint32_t)bits;
  switch (size) {
    case 1: memcpy(p, &u8, 1); break;
    case 2: memcpy(p, &u16, 2); break;
    case 4: memcpy(p, &u32, 4); break;
    default: memcpy(p, &bits, 8); break;
  }
}

/* The sign bit and the bits of a NaN's exponent of a float dtype's bits. */
static uint64_t sign_bit(dlb_dtype t) {
  return UINT64_C(1) << (dlb_dtype_get(t)->itemsize * 8 - 1);
}

static uint64_t inf_bits(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT16: return 0x7C00;
    case DLB_BFLOAT16: return 0x7F80;
    case DLB_FLOAT32: return 0x7F800000;
    default: return UINT64_C(0x7FF0000000000000);
  }
}

static uint64_t all_ones(family f) {
  return f == FAMILY_16 ? 0xFFFF : f == FAMILY_32 ? 0xFFFFFFFF : UINT64_MAX;
}

/* How the bits of one real dtype become keys. */
typedef struct keyer {
  dlb_dtype dtype;
  int64_t size;  /* bytes of an element */
  int fp;        /* a float dtype */
  uint64_t sign; /* the sign bit (signed integers and floats) */
  uint64_t inf;  /* floats: |bits| above it is NaN */
  uint64_t ones; /* the family's largest key: a NaN's (canonical keys) */
  uint64_t flip; /* ones when descending, else 0: keys xor it */
} keyer;

static void keyer_init(keyer *k, dlb_dtype t, int descending) {
  dlb_kind kind = dlb_dtype_get(t)->kind;
  k->dtype = t;
  k->size = (int64_t)dlb_dtype_get(t)->itemsize;
  k->fp = kind == DLB_KIND_FLOAT;
  k->sign = kind == DLB_KIND_INT || k->fp ? sign_bit(t) : 0;
  k->inf = k->fp ? inf_bits(t) : 0;
  k->ones = all_ones(family_of(t));
  k->flip = descending ? k->ones : 0;
}

static int bits_nan(const keyer *k, uint64_t bits) { return k->fp && (bits & ~k->sign) > k->inf; }

/* The key of bits whose order is NumPy's, one to one (NaN excluded): floats
 * flip their magnitude bits when negative, signed integers their sign. */
static uint64_t exact_key(const keyer *k, uint64_t bits) {
  if (k->dtype == DLB_BOOL) return bits != 0;
  if (!k->fp) return bits ^ k->sign;
  return bits & k->sign ? ~bits & k->ones : bits | k->sign;
}

/* The key equal elements share: every NaN the largest, -0 as +0. */
static uint64_t canonical_key(const keyer *k, uint64_t bits) {
  if (k->fp) {
    if ((bits & ~k->sign) > k->inf) return k->ones;
    if ((bits & ~k->sign) == 0) bits = 0;
  }
  return exact_key(k, bits);
}

/* The three keys of a complex number: class (which parts are NaN: 0 none,
 * 1 the imaginary, 2 the real, 3 both), then the parts that order it. */
typedef struct complex_key {
  uint64_t cls, first, second;
} complex_key;

static uint64_t double_key(double x) {
  uint64_t bits;
  if (x == 0) x = 0; /* -0 as +0 */
  memcpy(&bits, &x, 8);
  return bits >> 63 ? ~bits : bits | (UINT64_C(1) << 63);
}

static complex_key complex_key_of(dlb_dtype t, const char *p) {
  double re, im;
  complex_key k;
  if (t == DLB_COMPLEX64) {
    float f[2];
    memcpy(f, p, 8);
    re = f[0], im = f[1];
  } else {
    double d[2];
    memcpy(d, p, 16);
    re = d[0], im = d[1];
  }
  k.cls = (uint64_t)(isnan(re) ? 2 : 0) | (isnan(im) ? 1 : 0);
  k.first = k.cls == 0 || k.cls == 1 ? double_key(re) : k.cls == 2 ? double_key(im) : 0;
  k.second = k.cls == 0 ? double_key(im) : 0;
  return k;
}

/* --- the host's bounds -------------------------------------------------------- */

/* Every loop over a lane runs in stretches of this many elements, counting
 * each with dlb_work_tick, so that a long lane looks at the host's
 * interrupt as often as any other loop does (work.h); once it is raised,
 * each step returns at once and the kernel leaves what it wrote (the call
 * fails INTERRUPTED and frees it). */
#define STRETCH DLB_WORK_CHECK_EVERY

/* Whether the work saw the interrupt (NULL: never). */
static int stopped(const dlb_work *w) { return w && w->interrupted; }

/* The end of the stretch of [i, n) that starts at i. */
static int64_t stretch_end(int64_t i, int64_t n) { return n - i < STRETCH ? n : i + STRETCH; }

/* n elements of size bytes from src to dst, counted as work; 0 when stopped. */
static int copy_counted(void *dst, const void *src, int64_t n, size_t size, dlb_work *w) {
  for (int64_t i = 0; i < n; i = stretch_end(i, n)) {
    int64_t e = stretch_end(i, n);
    memcpy((char *)dst + (size_t)i * size, (const char *)src + (size_t)i * size,
           (size_t)(e - i) * size);
    if (dlb_work_tick(w, e - i)) return 0;
  }
  return 1;
}

/* --- the radix sort --------------------------------------------------------- */

/* Radix sorts of n keys (and their payloads, when pay is given): ascending,
 * stable, BITS bits a digit, through buffers tk and tp of n elements; the
 * result ends in key and pay. count is scratch of RADIX_COUNTS int64; every
 * pass counts its elements as w's work and stops when w does (key and pay
 * then hold no order, only elements they held).
 *
 * NAME_lsd sorts by the low `bits` bits, one pass a digit from the lowest
 * (digits all keys share skipped). NAME sorts by the bits up to the highest
 * one where keys differ: more than RADIX_SPLIT keys are scattered by their
 * top digit first (NAME_msd), each bucket then sorted the same way, so that
 * the passes of each digit run in cache. Few keys (a short array, a small
 * bucket) take an insertion sort instead (NAME_insertion: stable as the
 * passes are): each pass clears and sums all its RADIX digit counts
 * whatever n, about 4 instructions a count, where an insertion sort costs
 * about 8 a move and moves n^2/4 on average, so it is taken while
 * n^2 <= 2 * passes * RADIX (32-bit keys: n <= 110; 16-bit: n <= 32).
 * a:sort() of 10 float32 spent 99,000 instructions in the passes. */
/* Names made of two tokens, in the templates (sort_*.h). */
#define SORT_CAT_(a, b) a##b
#define SORT_CAT(a, b) SORT_CAT_(a, b)

#define RADIX_LSD_LEVELS 6 /* digit counts of the LSD passes (64 bits / 11) */
#define RADIX_MSD_LEVELS 6 /* and of the MSD levels below them */
#define RADIX_COUNTS ((RADIX_LSD_LEVELS + RADIX_MSD_LEVELS) * 2048)
#define RADIX_SPLIT ((int64_t)1 << 16)
#define RADIX_MSD_BITS 8 /* 256 buckets a level: their write streams stay in L1 and the TLB */

#define NAME radix16
#define KT uint16_t
#define PT uint32_t
#define BITS 8
#include "sort_radix.h"
#define NAME radix32
#define KT uint32_t
#define PT uint32_t
#define BITS 11
#include "sort_radix.h"
#define NAME radix64
#define KT uint64_t
#define PT uint32_t
#define BITS 11
#include "sort_radix.h"
#define NAME radix16_wide
#define KT uint16_t
#define PT uint64_t
#define BITS 8
#include "sort_radix.h"
#define NAME radix32_wide
#define KT uint32_t
#define PT uint64_t
#define BITS 11
#include "sort_radix.h"
#define NAME radix64_wide
#define KT uint64_t
#define PT uint64_t
#define BITS 11
#include "sort_radix.h"

/* --- one lane --------------------------------------------------------------- */

/* The scratch of one kernel call, sized for its longest lane. */
typedef struct scratch {
  dlb_array mem;
  uint64_t *keys, *keys_tmp; /* as wide as the family needs */
  uint64_t *pay, *pay_tmp;   /* positions: uint32 or uint64 */
  int64_t *count;            /* the radix sort's digit counts (RADIX_COUNTS) */
} scratch;

/* A lane of n elements at data, stride bytes apart. */
typedef struct lane {
  const char *data;
  int64_t stride, n;
} lane;

typedef struct sort_job {
  const dlb_sort_call *call;
  dlb_dtype dtype;
  family fam;
  keyer k;
  int wide;              /* positions need 64 bits */
  int packed;            /* indices alone, sorted as packed keys in the output (packed_order) */
  int64_t out_stride[3]; /* bytes along dim: values, indices, runs */
  dlb_work *work;        /* the thread's current work (NULL: unbounded) */
} sort_job;

static const char *lane_at(const lane *l, int64_t i) { return l->data + i * l->stride; }

static void key_set(family f, void *keys, int64_t i, uint64_t v) {
  switch (f) {
    case FAMILY_16: ((uint16_t *)keys)[i] = (uint16_t)v; break;
    case FAMILY_32: ((uint32_t *)keys)[i] = (uint32_t)v; break;
    default: ((uint64_t *)keys)[i] = v; break;
  }
}

static uint64_t pay_get(int wide, const void *pay, int64_t i) {
  return wide ? ((const uint64_t *)pay)[i] : ((const uint32_t *)pay)[i];
}

static void pay_set(int wide, void *pay, int64_t i, uint64_t v) {
  if (wide) ((uint64_t *)pay)[i] = v;
  else ((uint32_t *)pay)[i] = (uint32_t)v;
}

/* Radix-sorts n keys of family f, with positions when pay is given. */
static void radix(family f, int wide, void *keys, void *pay, void *tk, void *tp, int64_t n,
                  int64_t *count, dlb_work *w) {
  switch (f) {
    case FAMILY_16:
      if (wide) radix16_wide(keys, pay, tk, tp, n, count, w);
      else radix16(keys, pay, tk, tp, n, count, w);
      break;
    case FAMILY_32:
      if (wide) radix32_wide(keys, pay, tk, tp, n, count, w);
      else radix32(keys, pay, tk, tp, n, count, w);
      break;
    default:
      if (wide) radix64_wide(keys, pay, tk, tp, n, count, w);
      else radix64(keys, pay, tk, tp, n, count, w);
      break;
  }
}

/* The typed loops of one real element type ET with keys KT (FP: a float
 * dtype): gathering keys (exact ones without NaN for the values alone,
 * canonical ones with positions) and writing sorted values back, each in
 * stretches counted as w's work (stopping when w does). */

#define SUFFIX u8
#define ET uint8_t
#define KT uint16_t
#define FP 0
#include "sort_typed.h"
#define SUFFIX u16
#define ET uint16_t
#define KT uint16_t
#define FP 0
#include "sort_typed.h"
#define SUFFIX f16
#define ET uint16_t
#define KT uint16_t
#define FP 1
#include "sort_typed.h"
#define SUFFIX u32
#define ET uint32_t
#define KT uint32_t
#define FP 0
#include "sort_typed.h"
#define SUFFIX f32
#define ET uint32_t
#define KT uint32_t
#define FP 1
#include "sort_typed.h"
#define SUFFIX u64
#define ET uint64_t
#define KT uint64_t
#define FP 0
#include "sort_typed.h"
#define SUFFIX f64
#define ET uint64_t
#define KT uint64_t
#define FP 1
#include "sort_typed.h"

/* Which typed loops a real dtype takes: 0 u8, 1 u16, 2 f16, 3 u32, 4 f32, 5 u64, 6 f64. */
static int typed_of(const keyer *k) {
  switch (k->size) {
    case 1: return 0;
    case 2: return k->fp ? 2 : 1;
    case 4: return k->fp ? 4 : 3;
    default: return k->fp ? 6 : 5;
  }
}

static int64_t exact_keys(const keyer *k, const lane *in, void *keys, int64_t *nans,
                          int64_t zeros[2], int *ordered, dlb_work *w) {
  switch (typed_of(k)) {
    case 0: return exact_keys_u8(k, in, keys, nans, zeros, ordered, w);
    case 1: return exact_keys_u16(k, in, keys, nans, zeros, ordered, w);
    case 2: return exact_keys_f16(k, in, keys, nans, zeros, ordered, w);
    case 3: return exact_keys_u32(k, in, keys, nans, zeros, ordered, w);
    case 4: return exact_keys_f32(k, in, keys, nans, zeros, ordered, w);
    case 5: return exact_keys_u64(k, in, keys, nans, zeros, ordered, w);
    default: return exact_keys_f64(k, in, keys, nans, zeros, ordered, w);
  }
}

static void write_values(const keyer *k, const void *keys, int64_t m, char *out, int64_t step,
                         int64_t at, dlb_work *w) {
  switch (typed_of(k)) {
    case 0: write_values_u8(k, keys, m, out, step, at, w); break;
    case 1: write_values_u16(k, keys, m, out, step, at, w); break;
    case 2: write_values_f16(k, keys, m, out, step, at, w); break;
    case 3: write_values_u32(k, keys, m, out, step, at, w); break;
    case 4: write_values_f32(k, keys, m, out, step, at, w); break;
    case 5: write_values_u64(k, keys, m, out, step, at, w); break;
    default: write_values_f64(k, keys, m, out, step, at, w); break;
  }
}

static int canonical_keys(const keyer *k, const lane *in, void *keys, void *pay, int wide,
                          uint64_t *word, dlb_work *w) {
  switch (typed_of(k)) {
    case 0: return canonical_keys_u8(k, in, keys, pay, wide, word, w);
    case 1: return canonical_keys_u16(k, in, keys, pay, wide, word, w);
    case 2: return canonical_keys_f16(k, in, keys, pay, wide, word, w);
    case 3: return canonical_keys_u32(k, in, keys, pay, wide, word, w);
    case 4: return canonical_keys_f32(k, in, keys, pay, wide, word, w);
    case 5: return canonical_keys_u64(k, in, keys, pay, wide, word, w);
    default: return canonical_keys_f64(k, in, keys, pay, wide, word, w);
  }
}

/* Runs over sorted values (step bytes apart): each element that starts a
 * run of equal ones (-0 as +0; the NaN, all last, one run). */
static void runs_of_values(const keyer *k, const char *values, int64_t step, int64_t n, char *runs,
                           int64_t rstep, dlb_work *w) {
  uint64_t prev = 0;
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      uint64_t key = canonical_key(k, load_bits(values + i * step, k->size));
      runs[i * rstep] = (char)(i == 0 || key != prev);
      prev = key;
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
}

#ifdef DLB_HAVE_VQSORT
int dlb_vqsort_keys(void *keys, int64_t n, int bytes); /* vqsort.cc */
#endif

/* Lanes from this long on sort their values by Highway's vectorised
 * quicksort where it was built in (not stable, so only for keys whose
 * equals are equal), unless the measurement below picks the radix sort.
 * vqsort's own pieces run at 2.5 ns a key in L2 here; sorting 1e7 random
 * 32-bit keys whole, Highway 1.0.3's AVX-512 code takes 34-44 ms and its
 * AVX2 code 47-57 ms (hwy::DisableTargets, a test program). */
#define VQSORT_MIN 4096
/* The most keys one vqsort call sorts: about 3 ms here (they fit the L2
 * cache: vqsort is at its fastest per key there), so that the host's
 * interrupt is seen soon (vqsort itself cannot look at it). Longer runs are
 * first split by their top digit through the scratch (sort_quick.h's
 * SPLIT), or without scratch partitioned by our own quicksort steps, each
 * pass counting its keys as work. The split's few passes cost less than
 * the partitions' log2(n / piece): x:sort() of 1e7 keys, medians of 3
 * alternated runs, split against partitions: random float32 in [0, 1) 73
 * vs 89 ms, standard normal float32 109 vs 129, int32 63 vs 81, int64 121
 * vs 180, float64 137 vs 186; float32 of 1e5 values 73 vs 80. */
#define VQSORT_PIECE_BYTES ((int64_t)1 << 20)
/* 16-bit keys (the 1- and 2-byte dtypes) of lanes longer than this sort by
 * counting them (65,536 counts; vqsort's 16-bit sort is slow here). */
#define COUNTING_MIN ((int64_t)1 << 16)
#define COUNTING_KEYS 65536

/* 16-bit keys by counting, in stretches counted as work. */
static void counting_sort16(uint16_t *key, int64_t n, int64_t *count, dlb_work *w) {
  int64_t at = 0;
  memset(count, 0, sizeof(int64_t) * COUNTING_KEYS);
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) count[key[i]]++;
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  for (int64_t v = 0; v < COUNTING_KEYS; v++) {
    for (int64_t c = count[v]; c > 0;) { /* runs of one key, a stretch at a time */
      int64_t m = c < STRETCH ? c : STRETCH;
      for (int64_t i = 0; i < m; i++) key[at + i] = (uint16_t)v;
      at += m, c -= m;
      if (dlb_work_tick(w, m + 1)) return;
    }
  }
}

#ifdef DLB_HAVE_VQSORT
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define PARTITION_AVX2 1
#include <immintrin.h>
#endif

/* Partitions of n keys in place around pivot: the keys before it (le: not
 * after it) first; returns how many. Hoare's, for hosts without AVX2 (and
 * the short runs the vector ones leave). Stops (leaving the keys mixed up:
 * some may be lost) when w does. */
#define NAME partition32_scalar
#define KT uint32_t
#include "sort_partition_scalar.h"
#define NAME partition64_scalar
#define KT uint64_t
#include "sort_partition_scalar.h"

#ifdef PARTITION_AVX2
/* The vector partitions (AVX2): a vector's keys before the pivot are packed
 * to its low lanes and stored at the front, the others packed to its high
 * lanes and stored at the back, by two permutations a lookup table gives
 * for each comparison mask. In place: the first and last vectors are read
 * ahead, so that the side read next (the one with less room) always has a
 * vector's room to be written; they go last, with the few keys left. */
static int32_t lut32[256][2][8] __attribute__((aligned(32)));
static int32_t lut64[16][2][8] __attribute__((aligned(32)));
static int have_avx2;
static pthread_once_t luts_once = PTHREAD_ONCE_INIT;

static void make_luts(void) {
  for (int m = 0; m < 256; m++) { /* the rights from lane (lefts) up */
    int l = 0, r = __builtin_popcount((unsigned)m);
    memset(lut32[m], 0, sizeof lut32[m]);
    for (int j = 0; j < 8; j++) {
      if (m >> j & 1) lut32[m][0][l++] = j;
      else lut32[m][1][r++] = j;
    }
  }
  for (int m = 0; m < 16; m++) {
    int l = 0, r = __builtin_popcount((unsigned)m);
    memset(lut64[m], 0, sizeof lut64[m]);
    for (int j = 0; j < 4; j++) {
      int32_t *to = (m >> j & 1) ? &lut64[m][0][2 * l++] : &lut64[m][1][2 * r++];
      to[0] = 2 * j, to[1] = 2 * j + 1;
    }
  }
  __builtin_cpu_init();
  have_avx2 = __builtin_cpu_supports("avx2");
}

/* NAME: the partition of KT keys, LANES a vector, compared as signed after
 * flipping the sign bit (CMPGT, SET1), the mask of a comparison by MASK. */
#define SET1_32(v) _mm256_set1_epi32((int)(v))
#define SET1_64(v) _mm256_set1_epi64x((long long)(v))
#define MASK_32(c) _mm256_movemask_ps(_mm256_castsi256_ps(c))
#define MASK_64(c) _mm256_movemask_pd(_mm256_castsi256_pd(c))
#define NAME partition32_avx2
#define KT uint32_t
#define LANES 8
#define LUT lut32
#define CMPGT _mm256_cmpgt_epi32
#define SET1 SET1_32
#define MASK MASK_32
#define SCALAR partition32_scalar
#include "sort_partition_avx2.h"
#define NAME partition64_avx2
#define KT uint64_t
#define LANES 4
#define LUT lut64
#define CMPGT _mm256_cmpgt_epi64
#define SET1 SET1_64
#define MASK MASK_64
#define SCALAR partition64_scalar
#include "sort_partition_avx2.h"
#endif

/* NAME: vqsort of n keys KT in place, in pieces of at most
 * VQSORT_PIECE_BYTES: longer runs with scratch are split into buckets of
 * key ranges through it (NAME_split: up to SPLIT_BUCKETS, each sorted the
 * same way), without scratch partitioned around the median of 63 of their
 * keys (PARTITION, or the scalar one without AVX2), the smaller side
 * sorted first and the larger one next (no deeper than log2 n levels on
 * the stack). lo and hi bound the keys: a run whose bounds meet is all one
 * key. Too many levels (pivots that keep missing the middle): the radix
 * sort RADIX_OF, through tmp, as where vqsort has no memory. */
/* NAME_split's digits (the top SPLIT_BITS differing bits), at most
 * SPLIT_BUCKETS buckets of them (256 coarse digits, each cut further after
 * SPLIT_CROWD of the SPLIT_SAMPLE sampled keys), and the bytes of count its
 * tables borrow. */
#define SPLIT_BITS 14
#define SPLIT_DIGITS (1 << SPLIT_BITS)
#define SPLIT_BUCKETS 512
#define SPLIT_SAMPLE 4096
#define SPLIT_CROWD (SPLIT_SAMPLE / 256)
#define SPLIT_SCRATCH (SPLIT_DIGITS * (4 + 2) + SPLIT_BUCKETS * 8)
_Static_assert(SPLIT_SCRATCH <= RADIX_COUNTS * 8, "count holds the split's tables");
_Static_assert((int64_t)VQSORT_PIECE_BYTES / 8 >= 8 * SPLIT_SAMPLE,
               "a split run is sampled sparsely");
#ifdef PARTITION_AVX2
static int64_t partition32(uint32_t *a, int64_t n, uint32_t p, int le, dlb_work *w) {
  return have_avx2 ? partition32_avx2(a, n, p, le, w) : partition32_scalar(a, n, p, le, w);
}
static int64_t partition64(uint64_t *a, int64_t n, uint64_t p, int le, dlb_work *w) {
  return have_avx2 ? partition64_avx2(a, n, p, le, w) : partition64_scalar(a, n, p, le, w);
}
#else
#define partition32 partition32_scalar
#define partition64 partition64_scalar
#endif
#define NAME quick32
#define KT uint32_t
#define RADIX_OF radix32
#define PARTITION partition32
#define SCALAR partition32_scalar
#include "sort_quick.h"
#define NAME quick64
#define KT uint64_t
#define RADIX_OF radix64
#define PARTITION partition64
#define SCALAR partition64_scalar
#include "sort_quick.h"

/* The levels of partitioning a sort of n > 0 keys allows before it falls
 * back on the radix sort: vqsort's own bound, 2 log2 n + 4. */
static int vqsort_levels(int64_t n) { return 2 * (64 - __builtin_clzll((uint64_t)n)) + 4; }

void dlb_cpu_sort_in_place64(uint64_t *keys, int64_t n, int levels, dlb_work *w) {
  if (n < 2) return;
  if (levels < 0) levels = vqsort_levels(n);
#ifdef PARTITION_AVX2
  pthread_once(&luts_once, make_luts);
#endif
  quick64(keys, NULL, n, 0, UINT64_MAX, levels, NULL, w);
}
#endif

/* Which sorts the long lanes of 32- and 64-bit keys: vqsort (1) or the
 * radix sort (0), measured on the running CPU once a process for each key
 * width, at its first sort of CHOICE_MIN keys or more (shorter lanes take
 * vqsort unmeasured: both sort them in cache): each sorts the same 16,384
 * random keys twice, the faster time counts (1-2 ms here, once, mostly
 * the first touch of its scratch; a sort of 2^18 keys takes about 1.5 ms).
 * Here (AMD EPYC, AVX-512; the radix sort forced by hand) vqsort wins at
 * every length measured (1e6: 5.2 vs 6.7 ms float32, 4.3 vs 7.2 ms int32;
 * 1e7 with the split: float32 73 vs 81, int32 63 vs 80, int64 121 vs 135,
 * float64 137 vs 170); a CPU whose vector sort is slow picks the radix
 * sort. Both give the same keys: the choice moves only time. */
#ifdef DLB_HAVE_VQSORT
#define CHOICE_KEYS 16384
#define CHOICE_MIN ((int64_t)1 << 18)
static int vqsort_chosen[2];                 /* [0] 32-bit keys, [1] 64-bit */
static pthread_once_t choice_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The better of two times of one sort (vq: vqsort, else radix) of the
 * sample's keys of family f, in a copy at keys. */
static double time_sort(family f, int vq, const uint64_t *sample, uint64_t *keys, uint64_t *tmp,
                        int64_t *count) {
  const int64_t n = CHOICE_KEYS;
  const int levels = vqsort_levels(n);
  double best = 1e30;
  for (int r = 0; r < 2; r++) {
    double t0;
    memcpy(keys, sample, (size_t)n * (f == FAMILY_32 ? 4 : 8));
    t0 = seconds_now();
    if (!vq) radix(f, 0, keys, NULL, tmp, NULL, n, count, NULL);
    else if (f == FAMILY_32)
      quick32((uint32_t *)keys, (uint32_t *)tmp, n, 0, UINT32_MAX, levels, count, NULL);
    else quick64(keys, tmp, n, 0, UINT64_MAX, levels, count, NULL);
    t0 = seconds_now() - t0;
    if (t0 < best) best = t0;
  }
  return best;
}

static void measure_choice(family f) {
  uint64_t *sample = malloc(sizeof(uint64_t) * CHOICE_KEYS * 3);
  int64_t *count = malloc(sizeof(int64_t) * RADIX_COUNTS);
  uint64_t x = UINT64_C(0x9E3779B97F4A7C15);
  int b = f == FAMILY_64;
  vqsort_chosen[b] = 1; /* without memory to measure: vqsort, as measured here */
#ifdef PARTITION_AVX2
  pthread_once(&luts_once, make_luts);
#endif
  if (sample && count) {
    for (int64_t i = 0; i < CHOICE_KEYS; i++) { /* xorshift64: keys of every digit */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      sample[i] = x;
    }
    vqsort_chosen[b] = time_sort(f, 1, sample, sample + CHOICE_KEYS, sample + 2 * CHOICE_KEYS,
                                 count) <= time_sort(f, 0, sample, sample + CHOICE_KEYS,
                                                     sample + 2 * CHOICE_KEYS, count);
  }
  free(sample);
  free(count);
}

static void measure_choice32(void) { measure_choice(FAMILY_32); }
static void measure_choice64(void) { measure_choice(FAMILY_64); }

int dlb_cpu_sort_uses_vqsort(int key_bits) {
  int b = key_bits == 64;
  pthread_once(&choice_once[b], b ? measure_choice64 : measure_choice32);
  return vqsort_chosen[b];
}
#endif

/* Sorts n keys of family f: by counting (16-bit keys of a long lane), by
 * vqsort in pieces where it was built in and measured faster (above),
 * else (or short) by the radix sort; through tmp (n keys), count as the
 * radix sort's (COUNTING_KEYS for counting). */
static void sort_keys(family f, void *keys, void *tmp, int64_t n, int64_t *count, dlb_work *w) {
  if (f == FAMILY_16 && n > COUNTING_MIN) {
    counting_sort16(keys, n, count, w);
    return;
  }
#ifdef DLB_HAVE_VQSORT
  if (n >= VQSORT_MIN &&
      (f == FAMILY_16 || n < CHOICE_MIN || dlb_cpu_sort_uses_vqsort(f == FAMILY_32 ? 32 : 64))) {
    int levels = vqsort_levels(n);
#ifdef PARTITION_AVX2
    pthread_once(&luts_once, make_luts);
#endif
    switch (f) {
      case FAMILY_16: /* (at most COUNTING_MIN: one piece) */
        if (dlb_vqsort_keys(keys, n, 2)) {
          dlb_work_tick(w, n);
          return;
        }
        break;
      case FAMILY_32: quick32(keys, tmp, n, 0, UINT32_MAX, levels, count, w); return;
      default: quick64(keys, tmp, n, 0, UINT64_MAX, levels, count, w); return;
    }
  }
#endif
  radix(f, 0, keys, NULL, tmp, NULL, n, count, w);
}

/* The bits of the i-th NaN of a lane of n, kept at the back of keys. */
static uint64_t nan_at(family f, const void *keys, int64_t n, int64_t i) {
  switch (f) {
    case FAMILY_16: return ((const uint16_t *)keys)[n - 1 - i];
    case FAMILY_32: return ((const uint32_t *)keys)[n - 1 - i];
    default: return ((const uint64_t *)keys)[n - 1 - i];
  }
}

/* Sorts the values of a real lane alone: NaN set aside in order, the rest
 * by exact keys (so the bits come back as they were), then -0 and +0 put
 * back in their order where stable and both occur. */
static void sort_values(const sort_job *j, const lane *in, char *out, char *runs, scratch *s) {
  const keyer *k = &j->k;
  dlb_work *w = j->work;
  int64_t n = in->n, m, nans, zeros[2], size = k->size, step = j->out_stride[0];
  int ordered;
  /* Keys as wide as the elements go straight into a contiguous out. */
  void *keys = s->keys ? (void *)s->keys : out;
  void *nan_bits = s->keys_tmp; /* free again once the keys are sorted (as wide as keys) */
  m = exact_keys(k, in, keys, &nans, zeros, &ordered, w);
  if (stopped(w)) return;
  if (!ordered) sort_keys(j->fam, keys, s->keys_tmp, m, s->count, w);
  if (stopped(w)) return;
  for (int64_t i0 = 0, i1; i0 < nans; i0 = i1) {
    i1 = stretch_end(i0, nans);
    for (int64_t i = i0; i < i1; i++) key_set(j->fam, nan_bits, i, nan_at(j->fam, keys, n, i));
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  write_values(k, keys, m, out, step, k->flip ? nans : 0, w); /* descending: NaN first */
  if (stopped(w)) return;
  for (int64_t i0 = 0, i1; i0 < nans; i0 = i1) {
    i1 = stretch_end(i0, nans);
    for (int64_t i = i0; i < i1; i++)
      store_bits(out + (k->flip ? i : m + i) * step, size,
                 nan_at(j->fam, nan_bits, nans, nans - 1 - i));
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  if (j->call->stable && zeros[0] && zeros[1]) {
    /* The zeros lie together: give them the signs they had, in order. */
    int64_t first = 0, z = 0;
    while ((load_bits(out + first * step, size) & ~k->sign) != 0)
      if ((++first & (STRETCH - 1)) == 0 && dlb_work_tick(w, STRETCH)) return;
    for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
      i1 = stretch_end(i0, n);
      for (int64_t i = i0; i < i1; i++) {
        uint64_t bits = load_bits(lane_at(in, i), size);
        if ((bits & ~k->sign) == 0) store_bits(out + (first + z++) * step, size, bits);
      }
      if (dlb_work_tick(w, i1 - i0)) return;
    }
  }
  if (runs) runs_of_values(k, out, step, n, runs, j->out_stride[2], w);
}

/* A max-heap entry of the top-k selection: the worst kept element at the top. */
typedef struct pick {
  uint64_t key;
  int64_t pos;
} pick;

static int pick_before(pick a, pick b) {
  return a.key < b.key || (a.key == b.key && a.pos < b.pos);
}

static void sift_down(pick *h, int64_t k, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, worst = i;
    if (l < k && pick_before(h[worst], h[l])) worst = l;
    if (r < k && pick_before(h[worst], h[r])) worst = r;
    if (worst == i) return;
    pick t = h[i];
    h[i] = h[worst], h[worst] = t;
    i = worst;
  }
}

static int pick_compare(const void *a, const void *b) {
  pick x = *(const pick *)a, y = *(const pick *)b;
  return pick_before(x, y) ? -1 : pick_before(y, x) ? 1 : 0;
}

/* The first k of a lane by (key, position), in order, into keys and pay:
 * one pass keeping the k best in a heap, then the heap in order (qsort;
 * past a stretch, the heap sorted in place). A sift through the heap is
 * counted as 4 elements a level: each level is a load that depends on the
 * one before, across a heap that may be far larger than the caches. */
/* Whether a selection of k of each lane of n takes select_few's heap. */
static int takes_few(family f, int64_t k, int64_t n) {
  return f != FAMILY_COMPLEX && k < n && k <= n / 8;
}

static void select_few(const sort_job *j, const lane *in, int64_t k, scratch *s) {
  dlb_work *w = j->work;
  pick *h = (pick *)s->pay_tmp; /* 16 bytes a pick (the scratch is sized for k) */
  const int64_t sift = 4 * (64 - __builtin_clzll((uint64_t)k));
  int64_t done = 0; /* counted since the last tick */
  for (int64_t i = 0; i < in->n; i++) {
    pick p = {canonical_key(&j->k, load_bits(lane_at(in, i), j->k.size)) ^ j->k.flip, i};
    if (i < k) {
      h[i] = p;
      if (i == k - 1) /* the heap, built bottom-up (a sift there is short on average) */
        for (int64_t r = k / 2; r-- > 0;) {
          sift_down(h, k, r);
          if ((r & 1023) == 0 && dlb_work_tick(w, 4 * 1024)) return;
        }
    } else if (p.key < h[0].key) { /* a tie keeps the earlier */
      h[0] = p;
      sift_down(h, k, 0);
      done += sift;
    }
    if (++done >= STRETCH) {
      if (dlb_work_tick(w, done)) return;
      done = 0;
    }
  }
  if (dlb_work_tick(w, done)) return;
  if (k <= STRETCH) {
    qsort(h, (size_t)k, sizeof *h, pick_compare);
  } else { /* the worst kept to the back, one at a time */
    for (int64_t e = k - 1; e > 0; e--) {
      pick t = h[0];
      h[0] = h[e], h[e] = t;
      sift_down(h, e, 0);
      if (dlb_work_tick(w, sift)) return;
    }
  }
  for (int64_t i0 = 0, i1; i0 < k; i0 = i1) {
    i1 = stretch_end(i0, k);
    for (int64_t i = i0; i < i1; i++) {
      key_set(FAMILY_64, s->keys, i, h[i].key);
      pay_set(1, s->pay, i, (uint64_t)h[i].pos);
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
}

/* Gathers key of family f from complex keys by position (for the next pass). */
static void complex_pass(const sort_job *j, const lane *in, int which, int64_t n, scratch *s) {
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      complex_key ck = complex_key_of(j->dtype, lane_at(in, (int64_t)pay_get(j->wide, s->pay, i)));
      uint64_t v = which == 0 ? ck.second : which == 1 ? ck.first : ck.cls;
      ((uint64_t *)s->keys)[i] = j->call->descending ? ~v : v;
    }
    if (dlb_work_tick(j->work, i1 - i0)) return;
  }
  radix(FAMILY_64, j->wide, s->keys, s->pay, s->keys_tmp, s->pay_tmp, n, s->count, j->work);
}

/* Whether sorted elements a and b (positions in the lane) have equal keys,
 * and whether the one at a holds a NaN. */
static int keys_equal(const sort_job *j, const lane *in, uint64_t a, uint64_t b) {
  if (j->fam == FAMILY_COMPLEX) {
    complex_key x = complex_key_of(j->dtype, lane_at(in, (int64_t)a));
    complex_key y = complex_key_of(j->dtype, lane_at(in, (int64_t)b));
    return x.cls == y.cls && x.first == y.first && x.second == y.second;
  }
  return canonical_key(&j->k, load_bits(lane_at(in, (int64_t)a), j->k.size)) ==
         canonical_key(&j->k, load_bits(lane_at(in, (int64_t)b), j->k.size));
}

static int has_nan(const sort_job *j, const lane *in, uint64_t a) {
  if (j->fam == FAMILY_COMPLEX) return complex_key_of(j->dtype, lane_at(in, (int64_t)a)).cls != 0;
  return bits_nan(&j->k, load_bits(lane_at(in, (int64_t)a), j->k.size));
}

/* NumPy's unique runs over the sorted positions of a lane (see dlbridge.h). */
static void write_runs(const sort_job *j, const lane *in, const scratch *s, int wide, char *out) {
  dlb_work *w = j->work;
  int64_t n = in->n, step = j->out_stride[2], first_last;
  uint64_t last;
  if (n == 0) return;
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      uint64_t here = pay_get(wide, s->pay, i);
      int starts = i == 0;
      if (!starts) {
        uint64_t before = pay_get(wide, s->pay, i - 1);
        starts = !keys_equal(j, in, here, before) || has_nan(j, in, here) || has_nan(j, in, before);
      }
      out[i * step] = (char)starts;
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  last = pay_get(wide, s->pay, n - 1);
  if (!has_nan(j, in, last)) return;
  first_last = n - 1; /* the first element with a NaN: they sort together, last */
  while (first_last > 0 && has_nan(j, in, pay_get(wide, s->pay, first_last - 1)))
    if (((n - --first_last) & (STRETCH - 1)) == 0 && dlb_work_tick(w, STRETCH)) return;
  out[first_last * step] = 1;
  for (int64_t i0 = first_last + 1, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) out[i * step] = 0;
    if (dlb_work_tick(w, i1 - i0)) return;
  }
}

/* Sorts (or selects from) one lane by position: keys and positions end in
 * s->keys and s->pay (the first k at least); returns whether positions are
 * 64-bit there. */
static int order_lane(const sort_job *j, const lane *in, int64_t k, scratch *s) {
  int64_t n = in->n;
  if (takes_few(j->fam, k, n)) {
    select_few(j, in, k, s);
    return 1;
  }
  if (j->fam == FAMILY_COMPLEX) {
    for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
      i1 = stretch_end(i0, n);
      for (int64_t i = i0; i < i1; i++) pay_set(j->wide, s->pay, i, (uint64_t)i);
      if (dlb_work_tick(j->work, i1 - i0)) return j->wide;
    }
    for (int which = 0; which < 3 && !stopped(j->work); which++) complex_pass(j, in, which, n, s);
    return j->wide;
  }
  if (!canonical_keys(&j->k, in, s->keys, s->pay, j->wide, NULL, j->work) && !stopped(j->work))
    radix(j->fam, j->wide, s->keys, s->pay, s->keys_tmp, s->pay_tmp, n, s->count, j->work);
  return j->wide;
}

#ifdef DLB_HAVE_VQSORT
/* The indices alone of a whole lane of keys of 32 bits or fewer, into a
 * contiguous int64 out: each key and its position packed into one word of
 * out itself (canonical_keys with word), sorted there (the position breaks ties, so the
 * order is stable) without scratch, then the positions unpacked in place.
 * 8 bytes an element in all, as NumPy's argsort. */
static void packed_order(const sort_job *j, const lane *in, char *out) {
  uint64_t *word = (uint64_t *)(void *)out;
  int64_t n = in->n, base = j->call->index_base;
  if (!canonical_keys(&j->k, in, NULL, NULL, 0, word, j->work) && !stopped(j->work))
    dlb_cpu_sort_in_place64(word, n, -1, j->work);
  for (int64_t i0 = 0, i1; i0 < n && !stopped(j->work); i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      int64_t index = (int64_t)(word[i] & UINT32_MAX) + base;
      memcpy(out + 8 * i, &index, 8);
    }
    dlb_work_tick(j->work, i1 - i0);
  }
}
#endif

static void sort_lane(const sort_job *j, const lane *in, char **out, scratch *s) {
  const dlb_sort_call *c = j->call;
  int64_t k = c->k, size = (int64_t)dlb_dtype_get(j->dtype)->itemsize;
  int wide;
#ifdef DLB_HAVE_VQSORT
  if (j->packed) {
    packed_order(j, in, out[1]);
    return;
  }
#endif
  if ((c->want & ~DLB_SORT_RUNS) == DLB_SORT_VALUES && k == in->n && j->fam != FAMILY_COMPLEX) {
    sort_values(j, in, out[0], c->want & DLB_SORT_RUNS ? out[2] : NULL, s);
    return;
  }
  wide = order_lane(j, in, k, s);
  if (stopped(j->work)) return; /* the order is not there: nothing more to write */
  for (int64_t i0 = 0, i1; i0 < k; i0 = i1) {
    i1 = stretch_end(i0, k);
    for (int64_t i = i0; i < i1; i++) {
      uint64_t pos = pay_get(wide, s->pay, i);
      if (c->want & DLB_SORT_VALUES)
        memcpy(out[0] + i * j->out_stride[0], lane_at(in, (int64_t)pos), (size_t)size);
      if (c->want & DLB_SORT_INDICES) {
        int64_t index = (int64_t)pos + c->index_base;
        memcpy(out[1] + i * j->out_stride[1], &index, 8);
      }
    }
    if (dlb_work_tick(j->work, i1 - i0)) return;
  }
  if (!(c->want & DLB_SORT_RUNS)) return;
  if ((c->want & DLB_SORT_VALUES) && j->fam != FAMILY_COMPLEX) /* in order in memory */
    runs_of_values(&j->k, out[0], j->out_stride[0], k, out[2], j->out_stride[2], j->work);
  else write_runs(j, in, s, wide, out[2]);
}

/* The scratch for lanes of up to n elements: keys (key_bytes each) and
 * positions (pay_bytes each; 0: none) twice, but keys once where they go
 * into the output (keys_in_out: s->keys NULL), and `counts` int64 counts;
 * on the call's cpu backend (the budget counts it). */
static dlb_status scratch_open(scratch *s, dlb_backend *cpu, int64_t n, int64_t key_bytes,
                               int64_t pay_bytes, int keys_in_out, int64_t counts, dlb_error *err) {
  int64_t each = n < 1 ? 1 : n, kb, pb, bytes;
  dlb_status st;
  if (each > INT64_MAX / 64)
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "sort: a lane of %lld elements is too long",
                    (long long)n);
  kb = (each * key_bytes + 63) / 64 * 64; /* 64-byte aligned parts */
  pb = (each * pay_bytes + 63) / 64 * 64;
  bytes = (keys_in_out ? 1 : 2) * kb + 2 * pb + counts * 8;
  if ((st = dlb_array_allocate(&s->mem, cpu, 0, DLB_UINT8, 1, &bytes, 0, err)) != DLB_OK) return st;
  s->keys_tmp = (uint64_t *)dlb_array_host_data(&s->mem);
  s->keys = keys_in_out ? NULL : (uint64_t *)((char *)s->keys_tmp + kb);
  s->pay = (uint64_t *)((char *)s->keys_tmp + (keys_in_out ? 1 : 2) * kb);
  s->pay_tmp = (uint64_t *)((char *)s->pay + pb);
  s->count = (int64_t *)((char *)s->pay_tmp + pb);
  return DLB_OK;
}

dlb_status dlb_cpu_sort(void *ctx, dlb_sort_call *c) {
  sort_job j;
  scratch s;
  dlb_error err;
  dlb_lanes lanes;
  const dlb_tensor *t[4] = {&c->in, &c->values, &c->indices, &c->runs};
  char *at[4];
  int64_t n = c->in.shape[c->dim];
  dlb_work *work = dlb_work_current();
  dlb_status st;
  dlb_backend *on = ctx ? (dlb_backend *)ctx : dlb_cpu_scratch_backend(); /* the scratch's */
  j.call = c;
  j.work = work;
  j.dtype = dlb_dtype_of_dl(c->in.dtype);
  j.fam = family_of(j.dtype);
  j.wide = n > (int64_t)UINT32_MAX;
  if (j.fam != FAMILY_COMPLEX) keyer_init(&j.k, j.dtype, c->descending);
  /* Tensors not wanted are walked as the input (nothing is written to them). */
  for (int w = 0; w < 3; w++)
    if (!(c->want & (1 << w))) t[w + 1] = &c->in;
  for (int w = 0; w < 3; w++)
    j.out_stride[w] = t[w + 1]->shape[c->dim] == 1 ? 0 : dlb_tensor_stride(t[w + 1], c->dim);
  if (c->k == 0) return DLB_OK;
  j.packed = 0;
#ifdef DLB_HAVE_VQSORT
  j.packed = c->want == DLB_SORT_INDICES && c->k == n && n >= VQSORT_MIN && !j.wide &&
             (j.fam == FAMILY_16 || j.fam == FAMILY_32) && j.out_stride[1] == 8 &&
             ((uintptr_t)c->indices.data & 7) == 0;
#endif
  if (j.packed) { /* no scratch (one count, for a uniform release) */
    st = scratch_open(&s, on, n, 0, 0, 1, 1, &err);
  } else if (takes_few(j.fam, c->k, n)) { /* the heap of k picks, the k kept: O(k), not O(n) */
    st = scratch_open(&s, on, c->k, 8, 16, 0, 1, &err);
  } else {
    /* Keys as wide as the elements (complex: 8 bytes; 1-byte elements: 2),
     * positions when the lanes are sorted by them (a top-k heap: 8). */
    int64_t size = (int64_t)dlb_dtype_get(j.dtype)->itemsize;
    int64_t key_bytes = j.fam == FAMILY_COMPLEX ? 8 : size < 2 ? 2 : size;
    int values_only =
        (c->want & ~DLB_SORT_RUNS) == DLB_SORT_VALUES && c->k == n && j.fam != FAMILY_COMPLEX;
    int64_t pay_bytes = values_only ? 0 : j.wide || c->k < n ? 8 : 4;
    if (c->k < n && key_bytes < 8) key_bytes = 8; /* (the heap's picks hold 64-bit keys) */
    int in_out = values_only && size >= 2 && j.out_stride[0] == size &&
                 ((uintptr_t)c->values.data & (uintptr_t)(size - 1)) == 0;
    /* Counts: the radix sort's, or one per key for 16-bit keys sorted by counting. */
    int64_t counts =
        values_only && j.fam == FAMILY_16 && n > COUNTING_MIN ? COUNTING_KEYS : RADIX_COUNTS;
    st = scratch_open(&s, on, n, key_bytes, pay_bytes, in_out, counts, &err);
  }
  if (st != DLB_OK) return dlb_kernel_error_from(&c->error, &err);
  dlb_lanes_init(&lanes, 4, t, c->dim);
  while (dlb_lanes_next(&lanes, at)) {
    lane in = {at[0], dlb_tensor_stride(&c->in, c->dim), n};
    sort_lane(&j, &in, at + 1, &s); /* (its loops count their work) */
    if (stopped(work)) break;
  }
  dlb_array_release(&s.mem);
  return DLB_OK;
}

/* --- searchsorted ------------------------------------------------------------ */

/* A key of any dtype as three words, compared in order. */
static complex_key any_key(dlb_dtype t, const keyer *k, const char *p) {
  complex_key r = {0, 0, 0};
  if (family_of(t) == FAMILY_COMPLEX) return complex_key_of(t, p);
  r.first = canonical_key(k, load_bits(p, k->size));
  return r;
}

static int key_less(complex_key a, complex_key b) {
  if (a.cls != b.cls) return a.cls < b.cls;
  if (a.first != b.first) return a.first < b.first;
  return a.second < b.second;
}

typedef struct search_job {
  const dlb_search_call *call;
  dlb_dtype dtype;
  keyer k;
  int64_t n, stride;
} search_job;

/* The insertion point of v in the sorted array (binary search). */
static int64_t search_one(const search_job *s, complex_key v) {
  const char *base = s->call->sorted.data;
  int64_t lo = 0, hi = s->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    complex_key m = any_key(s->dtype, &s->k, base + mid * s->stride);
    int go_right = s->call->right ? !key_less(v, m) : key_less(m, v);
    if (go_right) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Real dtypes search the sorted keys, made once (canonical_key: the
 * order's integers), in groups of values whose binary searches step in
 * lockstep: branch-free (each step a conditional move), and the groups'
 * loads independent, so that their cache misses overlap. */
#define SEARCH_GROUP 8

/* The insertion points (from 0) of the SEARCH_GROUP keys v among the n > 0
 * keys (a fixed count: the group's positions stay in registers). */
static inline void search_group(const uint64_t *keys, int64_t n, const uint64_t *v, int right,
                                int64_t *at) {
  int64_t b[SEARCH_GROUP] = {0};
  for (int64_t len = n; len > 1;) {
    int64_t half = len / 2;
    if (right)
      for (int i = 0; i < SEARCH_GROUP; i++) b[i] += keys[b[i] + half] <= v[i] ? half : 0;
    else
      for (int i = 0; i < SEARCH_GROUP; i++) b[i] += keys[b[i] + half] < v[i] ? half : 0;
    len -= half;
  }
  for (int i = 0; i < SEARCH_GROUP; i++)
    at[i] = b[i] + (right ? keys[b[i]] <= v[i] : keys[b[i]] < v[i]);
}

static void search_left(const uint64_t *keys, int64_t n, const uint64_t *v, int64_t *at) {
  search_group(keys, n, v, 0, at);
}

static void search_right(const uint64_t *keys, int64_t n, const uint64_t *v, int64_t *at) {
  search_group(keys, n, v, 1, at);
}

/* The keys of the n sorted elements into keys; 0 when the work stopped. */
static int sorted_keys(const search_job *s, uint64_t *keys, dlb_work *w) {
  const char *base = s->call->sorted.data;
  for (int64_t i0 = 0, i1; i0 < s->n; i0 = i1) {
    i1 = stretch_end(i0, s->n);
    for (int64_t i = i0; i < i1; i++)
      keys[i] = canonical_key(&s->k, load_bits(base + i * s->stride, s->k.size));
    if (dlb_work_tick(w, i1 - i0)) return 0;
  }
  return 1;
}

/* The values of lane (m of them, vstep bytes apart) searched among keys,
 * results (plus index_base) to out (ostep bytes apart); blocks of values
 * counted as their visits. 0 when the work stopped. */
static int search_lane(const search_job *s, const uint64_t *keys, const char *values, int64_t vstep,
                       int64_t m, char *out, int64_t ostep, int64_t visits, dlb_work *w) {
  int64_t block = STRETCH / visits + 1, base = s->call->index_base;
  for (int64_t i0 = 0, i1; i0 < m; i0 = i1) {
    i1 = m - i0 < block ? m : i0 + block;
    for (int64_t i = i0; i < i1; i += SEARCH_GROUP) {
      uint64_t v[SEARCH_GROUP] = {0}; /* (a short last group searches zeros too) */
      int64_t at[SEARCH_GROUP];
      int g = i1 - i < SEARCH_GROUP ? (int)(i1 - i) : SEARCH_GROUP;
      for (int j = 0; j < g; j++)
        v[j] = canonical_key(&s->k, load_bits(values + (i + j) * vstep, s->k.size));
      if (s->call->right) search_right(keys, s->n, v, at);
      else search_left(keys, s->n, v, at);
      for (int j = 0; j < g; j++) {
        int64_t r = at[j] + base;
        memcpy(out + (i + j) * ostep, &r, 8);
      }
    }
    if (dlb_work_tick(w, (i1 - i0) * visits)) return 0;
  }
  return 1;
}

/* The real dtypes' search (n > 0, values of 1 dim or more). */
static dlb_status search_real(void *ctx, const search_job *s, dlb_work *work) {
  const dlb_search_call *c = s->call;
  const dlb_tensor *t[2] = {&c->values, &c->out};
  int last = c->values.ndim - 1;
  int64_t bytes = s->n * 8, visits = 65 - __builtin_clzll((uint64_t)s->n | 1);
  int64_t vstep = dlb_tensor_stride(&c->values, last), ostep = dlb_tensor_stride(&c->out, last);
  dlb_array mem = {0};
  dlb_error err;
  dlb_lanes lanes;
  uint64_t *keys;
  char *at[2];
  if (dlb_array_allocate(&mem, ctx ? (dlb_backend *)ctx : dlb_cpu_scratch_backend(), 0, DLB_UINT8,
                         1, &bytes, 0, &err) != DLB_OK)
    return dlb_kernel_error_from(&((dlb_search_call *)c)->error, &err);
  keys = (uint64_t *)dlb_array_host_data(&mem);
  if (sorted_keys(s, keys, work)) {
    dlb_lanes_init(&lanes, 2, t, last);
    while (dlb_lanes_next(&lanes, at))
      if (!search_lane(s, keys, at[0], vstep, c->values.shape[last], at[1], ostep, visits, work))
        break;
  }
  dlb_array_release(&mem);
  return DLB_OK;
}

dlb_status dlb_cpu_search(void *ctx, dlb_search_call *c) {
  search_job s;
  dlb_lanes lanes;
  const dlb_tensor *t[2] = {&c->values, &c->out};
  char *at[2];
  int last = c->values.ndim - 1;
  int64_t vstep, ostep, m, visits, block;
  dlb_work *work = dlb_work_current();
  s.call = c;
  s.dtype = dlb_dtype_of_dl(c->sorted.dtype);
  if (family_of(s.dtype) != FAMILY_COMPLEX) keyer_init(&s.k, s.dtype, 0);
  s.n = c->sorted.shape[0];
  s.stride = dlb_tensor_stride(&c->sorted, 0);
  if (c->values.ndim == 0) { /* one value */
    int64_t at0 = search_one(&s, any_key(s.dtype, &s.k, c->values.data)) + c->index_base;
    memcpy(c->out.data, &at0, 8);
    return DLB_OK;
  }
  if (family_of(s.dtype) != FAMILY_COMPLEX && s.n > 0) return search_real(ctx, &s, work);
  vstep = dlb_tensor_stride(&c->values, last);
  ostep = dlb_tensor_stride(&c->out, last);
  m = c->values.shape[last];
  /* A search visits about log2(n) + 1 elements of sorted: values go in
   * blocks of about a stretch of visits, each block counted as them. */
  visits = 65 - __builtin_clzll((uint64_t)s.n | 1);
  block = STRETCH / visits;
  dlb_lanes_init(&lanes, 2, t, last);
  while (dlb_lanes_next(&lanes, at)) {
    for (int64_t i0 = 0, i1; i0 < m; i0 = i1) {
      i1 = m - i0 < block ? m : i0 + block;
      for (int64_t i = i0; i < i1; i++) {
        int64_t r = search_one(&s, any_key(s.dtype, &s.k, at[0] + i * vstep)) + c->index_base;
        memcpy(at[1] + i * ostep, &r, 8);
      }
      if (dlb_work_tick(work, (i1 - i0) * visits)) return DLB_OK;
    }
  }
  return DLB_OK;
}
