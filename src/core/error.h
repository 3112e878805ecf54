/* error.h -- how the core reports a failure: a status, a message, a hint. */
#ifndef DLB_CORE_ERROR_H
#define DLB_CORE_ERROR_H

#include "../dlbridge.h"

/* Filled by a failing core call; the binding turns it into a dlbridge.Error. */
typedef struct dlb_error {
  dlb_status code;
  int has_native;        /* native_status is meaningful */
  int64_t native_status; /* a backend's own error number */
  const char *hint;      /* static text, or NULL for the code's default hint */
  char backend[32];      /* backend name where known, else "" */
  char device[48];       /* "engine:0" where known, else "" */
  char message[256];
} dlb_error;

/* err as a kernel's error (message and hint; the message cut to fit):
 * how a kernel that failed in core code reports it. Returns err->code. */
dlb_status dlb_kernel_error_from(dlb_kernel_error *ke, const dlb_error *err);

/* Records code and a printf-style message in err (which may be NULL); returns code. */
dlb_status dlb_fail(dlb_error *err, dlb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the hint of an error already recorded; hint must be static text. */
void dlb_error_hint(dlb_error *err, const char *hint);

/* A 0-based index or dim as messages show it (1-based), without overflow. */
static inline long long dlb_one_based(int64_t i) {
  return i < INT64_MAX ? (long long)i + 1 : (long long)i;
}

/* The hint used when a failure names none. */
const char *dlb_default_hint(dlb_status code);

#endif
