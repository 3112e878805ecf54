/* usage.c -- one usage line per public function: the hint of an ARGUMENT
 * error that names no hint of its own (an unexpected extra argument above
 * all). Element-wise functions and reductions build theirs (compute.c,
 * reduce.c): they are many, and alike. */
#include <string.h>
#include "internal.h"

typedef struct usage_line {
  const char *op, *usage;
} usage_line;

#define OPTS_TABLE "{dtype = \"int32\", device = \"cpu\"}"
#define OPTS "opts = " OPTS_TABLE
#define NO_ARGUMENTS(op, call) {op, call " takes no arguments"}

static const usage_line usage_lines[] = {
    /* creation (create.c) */
    {"dl.array", "dl.array(data, opts): data is nested tables ({{1, 2}, {3, 4}}), a number, a "
                 "boolean, {re =, im =} or an array; " OPTS},
    {"dl.zeros", "dl.zeros{2, 3} or dl.zeros(2, 3), options last: dl.zeros(2, 3, " OPTS_TABLE ")"},
    {"dl.ones", "dl.ones{2, 3} or dl.ones(2, 3), options last: dl.ones(2, 3, " OPTS_TABLE ")"},
    {"dl.empty", "dl.empty{2, 3} or dl.empty(2, 3), options last: dl.empty(2, 3, " OPTS_TABLE ")"},
    {"dl.full", "dl.full(shape, value, opts): the shape is one table or one integer, e.g. "
                "dl.full({2, 3}, 7, {dtype = \"int32\"})"},
    {"dl.arange", "dl.arange(stop), dl.arange(start, stop) or dl.arange(start, stop, step), "
                  "then optional " OPTS},
    {"dl.linspace", "dl.linspace(start, stop) or dl.linspace(start, stop, num), then "
                    "optional " OPTS},
    {"dl.frombytes", "dl.frombytes(s, dtype, shape, opts): s a string of raw bytes, dtype a name "
                     "such as \"uint8\", shape a table or integers (nil: all of s), "
                     "opts = {device = \"cpu\"}"},
    /* module functions (module.c, backends.c, error.c) */
    {"dl.is_array", "dl.is_array(v) takes one value"},
    {"dl.is_error", "dl.is_error(v) takes one value"},
    NO_ARGUMENTS("dl.dtypes", "dl.dtypes()"),
    NO_ARGUMENTS("dl.memory", "dl.memory()"),
    NO_ARGUMENTS("dl.backends", "dl.backends()"),
    {"dl.readonly", "dl.readonly(t): t a table; returns a read-only view of it"},
    {"dl.device_put", "dl.device_put(a, device, opts): device a string such as \"cpu\" or "
                      "\"cpu:0\"; opts = {copy = true, donate = true}"},
    {"dl.synchronize", "dl.synchronize(device): device a string such as \"cuda:0\""},
    {"Array:to", "a:to(device, opts): device a string such as \"cpu\" or \"cpu:0\"; "
                 "opts = {copy = true, donate = true}"},
    {"Error:is", "err:is(code): code a string such as \"SHAPE\" (dl.E lists them)"},
    /* elements (array.c) */
    {"Array:__index", "a[i] takes an integer (1 the first, -1 the last); a.name reads an "
                      "attribute (a.shape, a.dtype, ...) or a method"},
    {"Array:__newindex", "a[i] = v writes element i (row i of an n-D array); attributes such "
                         "as a.shape are read-only"},
    {"Array:__pairs", "for i, row in pairs(a) (or ipairs(a)) walks the first dimension"},
    {"Array:get", "a:get(i, j, ...): one integer index per dimension (1 the first, -1 the "
                  "last); a:get() reads a 0-d array"},
    {"Array:set", "a:set(i, j, ..., value): one integer index per dimension, then the value"},
    NO_ARGUMENTS("Array:delete", "a:delete()"),
    /* views (views.c) */
    {"Array:view", "a:view{3, 2} or a:view(3, 2): the new shape (one -1 is inferred)"},
    {"Array:reshape", "a:reshape{3, 2} or a:reshape(3, 2): the new shape (one -1 is inferred)"},
    {"Array:expand", "a:expand{4, 3} or a:expand(4, 3): the target shape (-1 keeps a dimension)"},
    {"Array:transpose", "a:transpose() reverses the dimensions; a:transpose(d1, d2) swaps two"},
    {"Array:permute", "a:permute{2, 1, 3}: one table naming every dimension once"},
    {"Array:narrow", "a:narrow(dim, start, length): length elements of dim from start (1-based)"},
    {"Array:select", "a:select(dim, i): the slice at index i of dim, without dim"},
    {"Array:slice", "a:slice(dim, first, last, step): first..last inclusive (nil: the ends; "
                    "negative: from the end); step a non-zero integer (default 1)"},
    {"Array:squeeze", "a:squeeze() drops every extent-1 dimension; a:squeeze(dim) drops that one"},
    {"Array:unsqueeze", "a:unsqueeze(dim): a new extent-1 dimension at dim (1..ndim+1, -1 last)"},
    NO_ARGUMENTS("Array:contiguous", "a:contiguous()"),
    NO_ARGUMENTS("Array:is_contiguous", "a:is_contiguous()"),
    NO_ARGUMENTS("Array:T", "a:T()"),
    /* data (data.c) */
    NO_ARGUMENTS("Array:copy", "a:copy()"),
    NO_ARGUMENTS("Array:totable", "a:totable()"),
    NO_ARGUMENTS("Array:tobytes", "a:tobytes()"),
    {"Array:astype", "a:astype(dtype): a dtype name such as \"float32\" (dl.dtypes() lists them)"},
    {"Array:fill", "a:fill(value): a number, a boolean or {re =, im =}"},
    {"Array:copy_from", "a:copy_from(src): an array, nested tables or a number, broadcast to "
                        "a's shape"},
    /* products and joining (linalg.c) */
    {"dl.matmul", "dl.matmul(a, b, opts) or a:matmul(b, opts); opts = {dtype = \"float32\", "
                  "out = array}"},
    {"Array:matmul", "a:matmul(b, opts) or dl.matmul(a, b, opts); opts = {dtype = \"float32\", "
                     "out = array}"},
    {"dl.dot", "dl.dot(a, b) or a:dot(b): two arrays, no options (dl.matmul takes options)"},
    {"Array:dot", "a:dot(b) or dl.dot(a, b): two arrays, no options (dl.matmul takes options)"},
    {"dl.concat", "dl.concat({a, b, ...}, dim): a list of arrays, then the dimension they are "
                  "joined along (default 1)"},
    {"dl.stack", "dl.stack({a, b, ...}, dim): a list of arrays of one shape, then where the "
                 "new dimension goes (default 1)"},
    /* selecting, sorting, scanning, counting (select.c, sort.c, scan.c) */
    {"dl.take", "a:take(idx, opts) or dl.take(a, idx, opts): idx integer indices (1-based); "
                "opts a dim or {dim =, out = array}"},
    {"dl.take_along_dim", "dl.take_along_dim(a, idx, dim): idx integer indices of a's ndim"},
    {"dl.put_along_dim", "dl.put_along_dim(a, idx, values, dim): writes a in place, returns it"},
    {"dl.nonzero", "a:nonzero() or dl.nonzero(a): one index array per dim"},
    {"dl.argwhere", "dl.argwhere(a): the (count, ndim) indices of the nonzero elements"},
    {"dl.sort", "a:sort(opts) or dl.sort(a, opts); opts a dim or {dim = -1, descending = "
                "false, stable = false}"},
    {"dl.argsort", "a:argsort(opts) or dl.argsort(a, opts); opts a dim or {dim = -1, "
                   "descending = false, stable = false}"},
    {"dl.topk", "dl.topk(a, k, opts) or a:topk(k, opts) -> values, indices; opts a dim or "
                "{dim = -1, largest = true, sorted = true}"},
    {"dl.unique", "dl.unique(a, {return_inverse = true, return_counts = true}) -> values[, "
                  "inverse][, counts]"},
    {"dl.searchsorted", "a:searchsorted(v, opts) or dl.searchsorted(a, v, opts); "
                        "opts = {side = \"left\" | \"right\"}"},
    {"dl.cumsum", "a:cumsum(opts) or dl.cumsum(a, opts); opts a dim or {dim =, dtype =, out =}"},
    {"dl.cumprod", "a:cumprod(opts) or dl.cumprod(a, opts); opts a dim or {dim =, dtype =, "
                   "out =}"},
    {"dl.diff", "dl.diff(a, {n = 1, dim = -1})"},
    {"dl.bincount", "dl.bincount(x, {weights =, minlength = 0}): x 1-D integers >= 0"},
    {"dl.histogram", "dl.histogram(a, {bins = 10 or edges, range = {lo, hi}, weights =}) -> "
                     "counts, edges"},
    /* DLPack (dlpack.c) */
    {"Array:to_dlpack", "a:to_dlpack(opts); opts = {copy =, max_version = {1, 1}, dl_device = "
                        "{type, id}, stream =, fallback = \"cpu\", layout =}"},
    {"Array:__dlpack", "a:__dlpack(opts); opts = {copy =, max_version = {1, 1}, dl_device = "
                       "{type, id}, stream =, fallback = \"cpu\", layout =}"},
    NO_ARGUMENTS("Array:__dlpack_device", "a:__dlpack_device()"),
    {"dl.from_dlpack", "dl.from_dlpack(x, opts): x a capsule, an array or a value with a "
                       "__dlpack method; opts = {device = \"cpu\", copy = true}"},
    /* .npy files (npy.c) */
    {"dl.save", "dl.save(path, a): path a string such as \"data.npy\", a the array to write"},
    {"dl.load", "dl.load(path, opts): path a string such as \"data.npy\"; "
                "opts = {copy = true, device = \"cpu\"}"},
    {"dl.tonpy", "dl.tonpy(a): the bytes of a .npy file holding the array a, as a string"},
    {"dl.fromnpy", "dl.fromnpy(s, opts): s the bytes of a .npy file (dl.tonpy(a)); "
                   "opts = {device = \"cpu\"}"},
    /* safetensors files (safetensors.c) */
    {"dl.save_safetensors", "dl.save_safetensors(path, tensors, metadata): path a string such as "
                            "\"model.safetensors\", tensors a table name -> array, metadata "
                            "(optional) a table string -> string"},
    {"dl.load_safetensors", "dl.load_safetensors(path, opts) -> tensors, metadata: path a string "
                            "such as \"model.safetensors\"; opts = {copy = true, device = \"cpu\"}"},
    {"dl.tosafetensors", "dl.tosafetensors(tensors, metadata): tensors a table name -> array, "
                         "metadata (optional) a table string -> string; returns the file's bytes"},
    {"dl.fromsafetensors", "dl.fromsafetensors(s, opts) -> tensors, metadata: s the bytes of a "
                           "safetensors file (dl.tosafetensors(t)); opts = {device = \"cpu\"}"},
};

const char *dlbL_usage(const char *op) {
  for (size_t k = 0; k < sizeof usage_lines / sizeof usage_lines[0]; k++)
    if (strcmp(usage_lines[k].op, op) == 0) return usage_lines[k].usage;
  return NULL;
}
