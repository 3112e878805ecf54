/* test_status_codes.c -- the list of status codes (DLB_STATUS_CODES,
 * dlbridge.h) against what is derived from it: the values in the order of
 * the rows after DLB_OK, and that order frozen (it is the ABI); the names
 * (dlb_status_name, which the Lua `dl.E` table and error codes use); and a
 * default hint for every failure. */
#include <string.h>
#include "core/error.h"
#include "check.h"

/* The codes as first published, from DLB_OK: rows are only ever appended. */
static const char *const abi_order[] = {"OK",
                                        "BACKEND_INCOMPATIBLE",
                                        "DELETED",
                                        "CAPSULE_CONSUMED",
                                        "UNKNOWN_DEVICE",
                                        "DEVICE_UNAVAILABLE",
                                        "DTYPE",
                                        "SHAPE",
                                        "INDEX",
                                        "VALUE",
                                        "COPY_REQUIRED",
                                        "READ_ONLY",
                                        "DLPACK_VERSION",
                                        "DLPACK_INVALID",
                                        "UNSUPPORTED",
                                        "OUT_OF_MEMORY",
                                        "BACKEND_FAILURE",
                                        "ARGUMENT",
                                        "IO",
                                        "FORMAT",
                                        "INTERRUPTED",
                                        "LINALG"};

/* One row of the list, as the test reads it. */
typedef struct row {
  dlb_status code;
  const char *name;
} row;

#define ROW(NAME) {DLB_E_##NAME, #NAME},
static const row rows[] = {DLB_STATUS_CODES(ROW)};
#undef ROW
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static void test_codes_follow_the_rows(void) {
  CHECK_EQ_INT(DLB_OK, 0);
  CHECK_EQ_INT(ROW_COUNT + 1, DLB_STATUS_COUNT);
  for (int k = 0; k < ROW_COUNT; k++) CHECK_EQ_INT(rows[k].code, k + 1);
}

static void test_abi_order_is_kept(void) {
  const int published = (int)(sizeof abi_order / sizeof abi_order[0]);
  CHECK(DLB_STATUS_COUNT >= published);
  for (int s = 0; s < published && s < DLB_STATUS_COUNT; s++)
    CHECK_EQ_STR(dlb_status_name((dlb_status)s), abi_order[s]);
}

static void test_names_and_hints(void) {
  CHECK_EQ_STR(dlb_status_name(DLB_OK), "OK");
  CHECK(dlb_default_hint(DLB_OK) == NULL);
  for (int k = 0; k < ROW_COUNT; k++) {
    const char *hint = dlb_default_hint(rows[k].code);
    CHECK_EQ_STR(dlb_status_name(rows[k].code), rows[k].name);
    if (!hint || !*hint) fprintf(stderr, "  %s has no default hint\n", rows[k].name);
    CHECK(hint != NULL && *hint != '\0');
    for (int j = k + 1; j < ROW_COUNT; j++) CHECK(strcmp(rows[j].name, rows[k].name) != 0);
  }
  CHECK_EQ_STR(dlb_status_name(DLB_STATUS_COUNT), "UNKNOWN");
  CHECK_EQ_STR(dlb_status_name((dlb_status)-1), "UNKNOWN");
  CHECK(dlb_default_hint(DLB_STATUS_COUNT) == NULL);
}

int main(void) {
  test_codes_follow_the_rows();
  test_abi_order_is_kept();
  test_names_and_hints();
  return check_done("test_status_codes");
}
