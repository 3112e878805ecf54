/* usage.c -- the one source of usage lines: how each public function is
 * called, the hint of an ARGUMENT error that names no hint of its own (an
 * unexpected extra argument, a bad options table above all). dlbL_usage(op)
 * is the one entry point. Most lines are written out below; those of the
 * many and alike operations are derived from the lists that declare them:
 * the element-wise functions from DLB_ELEMENTWISE_OPS (dlbridge.h), the
 * operators from DLBL_OPERATORS (internal.h), the reductions from
 * DLB_REDUCE_OPS (dlbridge.h). */
#include <string.h>
#include "internal.h"

typedef struct usage_line {
  const char *op, *usage;
} usage_line;

#define OPTS_TABLE "{dtype = \"int32\", device = \"cpu\"}"
#define OPTS "opts = " OPTS_TABLE
#define NO_ARGUMENTS(op, call)                                                                     \
  { op, call " takes no arguments" }

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
    {"dl.pairs", "for k, v in dl.pairs(x): x an array, a read-only view (dl.E) or a table"},
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
    NO_ARGUMENTS("Array:ptr", "a:ptr() (LuaJIT)"),
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
    {"dl.scatter_add", "dl.scatter_add(a, idx, values, {dim = 1}): a[idx] += values, repeated "
                       "indices all counting (np.add.at); writes a in place, returns it"},
    {"dl.scatter_mul", "dl.scatter_mul(a, idx, values, {dim = 1}): a[idx] *= values, repeated "
                       "indices all counting (np.multiply.at); writes a in place, returns it"},
    {"dl.scatter_max", "dl.scatter_max(a, idx, values, {dim = 1}): a[idx] = max(a[idx], values), "
                       "repeated indices all counting (np.maximum.at); returns a"},
    {"dl.scatter_min", "dl.scatter_min(a, idx, values, {dim = 1}): a[idx] = min(a[idx], values), "
                       "repeated indices all counting (np.minimum.at); returns a"},
    {"dl.argwhere", "dl.argwhere(a): the (count, ndim) indices of the nonzero elements"},
    {"dl.sort", "a:sort(opts) or dl.sort(a, opts); opts a dim or {dim = -1, descending = "
                "false, stable = false}"},
    {"dl.argsort", "a:argsort(opts) or dl.argsort(a, opts); opts a dim or {dim = -1, "
                   "descending = false, stable = false}"},
    {"dl.topk", "dl.topk(a, k, opts) or a:topk(k, opts) -> values, indices; opts a dim or "
                "{dim = -1, largest = true, sorted = true}"},
    {"dl.unique", "dl.unique(a, {return_index =, return_inverse =, return_counts =, equal_nan "
                  "= true}) -> values[, index][, inverse][, counts]"},
    {"dl.isin", "dl.isin(a, test_values, {invert = false}) -> bool array of a's shape (a "
                "boolean for a number a)"},
    {"dl.lexsort", "dl.lexsort{key1, key2, ...} (the last key primary) or dl.lexsort(rows) -> "
                   "int64 positions"},
    {"dl.searchsorted", "a:searchsorted(v, opts) or dl.searchsorted(a, v, opts); "
                        "opts = {side = \"left\" | \"right\"}"},
    {"dl.median", "dl.median(a, opts): opts a dim or {dim = a dim or a list of dims, "
                  "keepdims = false}"},
    {"dl.nanmedian", "dl.nanmedian(a, opts): NaN left out; opts a dim or {dim =, keepdims =}"},
    {"dl.quantile", "dl.quantile(a, q, opts): q in [0, 1], a number or a list/array of them; "
                    "opts a dim or {dim =, keepdims = false, method = \"linear\" | \"lower\" "
                    "| \"higher\" | \"nearest\" | \"midpoint\"}"},
    {"dl.nanquantile", "dl.nanquantile(a, q, opts): NaN left out; q in [0, 1]; opts a dim or "
                       "{dim =, keepdims =, method =}"},
    {"dl.percentile", "dl.percentile(a, q, opts): q in [0, 100], a number or a list/array of "
                      "them; opts a dim or {dim =, keepdims = false, method = \"linear\"}"},
    {"dl.nanpercentile", "dl.nanpercentile(a, q, opts): NaN left out; q in [0, 100]; opts a dim "
                         "or {dim =, keepdims =, method =}"},
    {"dl.cumsum", "a:cumsum(opts) or dl.cumsum(a, opts); opts a dim or {dim =, dtype =, out =}"},
    {"dl.cumprod", "a:cumprod(opts) or dl.cumprod(a, opts); opts a dim or {dim =, dtype =, "
                   "out =}"},
    {"dl.diff", "dl.diff(a, {n = 1, dim = -1})"},
    {"dl.bincount", "dl.bincount(x, {weights =, minlength = 0}): x 1-D integers >= 0"},
    {"dl.histogram", "dl.histogram(a, {bins = 10 or edges, range = {lo, hi}, weights =}) -> "
                     "counts, edges"},
    /* DLPack (dlpack.c) */
    {"Array:to_dlpack", "a:to_dlpack(opts); opts = {copy =, max_version = {1, 1}, dl_device = "
                        "{type, id}, stream =, fallback = \"cpu\", layout = \"any\", "
                        "\"nonnegative\" or \"contiguous\"}"},
    {"Array:__dlpack", "a:__dlpack(opts); opts = {copy =, max_version = {1, 1}, dl_device = "
                       "{type, id}, stream =, fallback = \"cpu\", layout = \"any\", "
                       "\"nonnegative\" or \"contiguous\"}"},
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
    {"dl.load_safetensors",
     "dl.load_safetensors(path, opts) -> tensors, metadata: path a string "
     "such as \"model.safetensors\"; opts = {copy = true, device = \"cpu\"}"},
    {"dl.tosafetensors", "dl.tosafetensors(tensors, metadata): tensors a table name -> array, "
                         "metadata (optional) a table string -> string; returns the file's bytes"},
    {"dl.fromsafetensors", "dl.fromsafetensors(s, opts) -> tensors, metadata: s the bytes of a "
                           "safetensors file (dl.tosafetensors(t)); opts = {device = \"cpu\"}"},
    /* construction, shape and comparison helpers (construct.c) */
    {"dl.eye", "dl.eye(n, m, opts): an n x m array (m defaults to n) with ones on diagonal "
               "opts.k (0 the main one); opts = {k = 1, dtype = \"int32\", device = \"cpu\"}"},
    {"dl.identity", "dl.identity(n, opts): the n x n identity; " OPTS},
    {"dl.zeros_like", "dl.zeros_like(a, opts): a's shape, dtype and device unless opts = "
                      "{shape =, dtype =, device =} say otherwise"},
    {"dl.ones_like", "dl.ones_like(a, opts): a's shape, dtype and device unless opts = "
                     "{shape =, dtype =, device =} say otherwise"},
    {"dl.empty_like", "dl.empty_like(a, opts): a's shape, dtype and device unless opts = "
                      "{shape =, dtype =, device =} say otherwise"},
    {"dl.full_like", "dl.full_like(a, value, opts): a's shape, dtype and device filled with "
                     "value; opts = {shape =, dtype =, device =}"},
    {"dl.logspace", "dl.logspace(start, stop, num, opts): base^start .. base^stop; "
                    "opts = {base = 10, endpoint = true, dtype =, device =}"},
    {"dl.meshgrid", "dl.meshgrid(x, y, ..., opts): one array per input; opts = "
                    "{indexing = \"xy\" or \"ij\", sparse = false, copy = true}"},
    {"dl.tile", "dl.tile(a, reps): reps an integer or a list of integers >= 0, dl.tile(a, {2, 3})"},
    {"dl.repeat_elements", "dl.repeat_elements(a, repeats, dim): repeats an integer or a list "
                           "(one count per element along dim); no dim: a flattened"},
    {"dl.roll", "dl.roll(a, shift, dims): shift an integer or a list; dims a dim or a list "
                "(nil: a flattened, rolled, reshaped)"},
    {"dl.flip", "dl.flip(a, dims): dims a dim or a list of dims (nil: every dim)"},
    {"dl.pad", "dl.pad(a, widths, opts): widths n, {before, after} or {{b1, a1}, {b2, a2}, ...}; "
               "opts = {mode = \"constant\", \"edge\", \"reflect\", \"symmetric\" or \"wrap\", "
               "value = 0}"},
    {"dl.convolve", "dl.convolve(a, v, opts): 1-D arrays; opts = {mode = \"full\", \"same\" or "
                    "\"valid\"}"},
    {"dl.isclose", "dl.isclose(a, b, opts): opts = {rtol = 1e-5, atol = 1e-8, equal_nan = false}"},
    {"dl.allclose",
     "dl.allclose(a, b, opts): opts = {rtol = 1e-5, atol = 1e-8, equal_nan = false}"},
    {"dl.array_equal", "dl.array_equal(a, b, opts): opts = {equal_nan = false}"},
    {"Array:flatten", "a:flatten() takes no arguments: a 1-D copy"},
    {"Array:ravel", "a:ravel() takes no arguments: 1-D, a view when possible"},
    {"Array:item", "a:item() for a one-element array, a:item(i) for the i-th element in row-major "
                   "order, a:item(i, j, ...) with one index per dimension"},
    /* linear algebra (linalg.c): a is a matrix (M, N) or a stack of them (..., M, N) */
    {"dl.linalg.solve", "dl.linalg.solve(a, b): a (..., M, M); b (..., M) with a's stack dims, "
                        "or (..., M, K); x with a x = b"},
    {"dl.linalg.inv", "dl.linalg.inv(a): a square matrix (..., M, M); no options"},
    {"dl.linalg.det", "dl.linalg.det(a): a square matrix (..., M, M); a number for one matrix"},
    {"dl.linalg.slogdet", "local sign, logabsdet = dl.linalg.slogdet(a): a square matrix "
                          "(..., M, M)"},
    {"dl.linalg.cholesky", "dl.linalg.cholesky(a): a symmetric positive-definite matrix "
                           "(..., M, M); the lower factor"},
    {"dl.linalg.eigh", "local w, v = dl.linalg.eigh(a, opts): a symmetric (..., M, M); "
                       "opts = {UPLO = \"L\"} or \"U\""},
    {"dl.linalg.svd", "local u, s, vh = dl.linalg.svd(a, opts): opts = {full_matrices = true, "
                      "compute_uv = true} (compute_uv = false: s alone)"},
    {"dl.linalg.qr", "local q, r = dl.linalg.qr(a, opts): opts = {mode = \"reduced\"}, "
                     "\"complete\" or \"r\" (r alone)"},
    {"dl.linalg.lstsq", "local x, residuals, rank, s = dl.linalg.lstsq(a, b, opts): a (M, N), b "
                        "(M) or (M, K); opts = {rcond = 1e-10} (default eps * max(M, N))"},
    /* vector math (vecmath.c) */
    {"dl.cross", "dl.cross(a, b): vectors of 3 (or 2) along the last dim, the dims before it "
                 "broadcast"},
    {"dl.outer", "dl.outer(a, b): a and b flattened; the result (a.size, b.size)"},
    {"dl.norm", "dl.norm(a, opts): opts = {ord = 2, dim = 1 or {1, 2}, keepdims = false}; ord a "
                "number (math.huge for inf), \"fro\" or \"nuc\""},
    {"dl.einsum", "dl.einsum(subscripts, a, ...): dl.einsum(\"ij,jk->ik\", a, b), "
                  "dl.einsum(\"ii->i\", a)"},
    {"dl.interp", "dl.interp(x, xp, fp, opts): xp increasing, fp of its length; opts = {left =, "
                  "right =, period =}"},
    /* random numbers (random.c) */
    {"dl.random.default_rng", "dl.random.default_rng(seed): seed an integer >= 0, a hex string "
                              "\"0x...\" or a list of them (NumPy's entropy), or nil (fresh "
                              "entropy); dl.random.default_rng(42)"},
    {"dl.random.from_state", "dl.random.from_state(t): t what rng:state() returns, {bit_generator "
                             "= \"PCG64\", state = {state =, inc =}, has_uint32 =, uinteger =}"},
    {"Generator:state", "rng:state() takes no argument; dl.random.from_state(t) makes a "
                        "generator in state t"},
    {"Generator:spawn", "rng:spawn(n) gives a list of n new generators, 0 <= n <= 1e6"},
    {"Generator:random", "rng:random() is one number; rng:random(shape, opts) an array: "
                         "rng:random{2, 3} or rng:random(2, 3), rng:random(5, {dtype = "
                         "\"float32\"})"},
    {"Generator:standard_normal", "rng:standard_normal() is one number; rng:standard_normal(shape, "
                                  "{dtype = \"float32\"}) an array (the shape a table or "
                                  "integers: rng:standard_normal(2, 3))"},
    {"Generator:uniform", "rng:uniform(low = 0, high = 1, shape): rng:uniform(-1, 1, {2, 3})"},
    {"Generator:normal", "rng:normal(loc = 0, scale = 1, shape): rng:normal(10, 2, 1000)"},
    {"Generator:integers", "rng:integers(high) or rng:integers(low, high, shape, opts): [low, "
                           "high) (opts.endpoint = true: [low, high]), opts.dtype an integer "
                           "dtype (int64 default) or bool: rng:integers(0, 10, {5})"},
    {"Generator:exponential", "rng:exponential(scale = 1, shape): rng:exponential(2, 1000)"},
    {"Generator:gamma", "rng:gamma(shape_k, scale = 1, shape): rng:gamma(2.5, 1, {2, 3})"},
    {"Generator:beta", "rng:beta(a, b, shape), a > 0 and b > 0: rng:beta(2, 5, 1000)"},
    {"Generator:poisson", "rng:poisson(lam = 1, shape) draws int64: rng:poisson(4, 1000)"},
    {"Generator:binomial", "rng:binomial(n, p, shape), n an integer >= 0, 0 <= p <= 1, draws "
                           "int64: rng:binomial(10, 0.5, 1000)"},
    {"Generator:choice", "rng:choice(n or a, size, opts): opts = {replace = true, p = "
                         "probabilities, shuffle = true}; rng:choice(10, 3, {replace = false}), "
                         "rng:choice(a, 5, {p = {0.5, 0.25, 0.25}})"},
    {"Generator:shuffle", "rng:shuffle(a) reorders the rows of the array a (along dim 1) in place"},
    {"Generator:permutation", "rng:permutation(n) is a shuffled dl.arange(n); "
                              "rng:permutation(a) a shuffled copy of a"},
    /* element-wise functions whose line is not the common one (compute.c) */
    {"dl.where", "dl.where(cond, x, y, opts): x where cond is nonzero, else y; "
                 "opts = {out = array}"},
    {"dl.clip", "dl.clip(a, lo, hi, opts) or a:clip(lo, hi, opts): a nil bound leaves that side "
                "open; opts = {out = array}"},
};

/* The element-wise functions (compute.c): one line per row of
 * DLB_ELEMENTWISE_OPS, by its operand count (dl.where and dl.clip have
 * their own above, found first). */
#define OPERANDS_1 "x"
#define OPERANDS_2 "x, y"
#define OPERANDS_3 "x, y, z"
#define METHOD_ARGS_1 "opts"
#define METHOD_ARGS_2 "y, opts"
#define METHOD_ARGS_3 "y, z, opts"
#define ELEMENTWISE_LINE(ID, name, nin, cls, loops, lua, form)                                     \
  {"dl." #lua, "dl." #lua "(" OPERANDS_##nin ", opts) or x:" #lua "(" METHOD_ARGS_##nin            \
   "); opts = {out = array}"},
/* Array's operators (compute.c): DLBL_OPERATORS. */
#define OPERATOR_LINE(mm, ID, nin)                                                                 \
  {"Array:__" #mm, "an operator takes arrays, numbers or booleans: a + 1, a * b, -a"},
/* The reductions (reduce.c): DLB_REDUCE_OPS, with the options each takes. */
#define DTYPE_OPTION_1 ", dtype = \"float64\""
#define DTYPE_OPTION_0 ""
#define DDOF_OPTION_1 ", ddof = 1"
#define DDOF_OPTION_0 ""
#define REDUCTION_LINE(ID, name, rule, identity, loops, dtype, ddof, nan)                          \
  {"dl." #name, "dl." #name "(a, opts) or a:" #name "(opts); opts is a dim or {dim =, "            \
                "keepdims = true" DTYPE_OPTION_##dtype DDOF_OPTION_##ddof ", out = array}"},

static const usage_line derived_lines[] = {DLB_ELEMENTWISE_OPS(ELEMENTWISE_LINE) DLBL_OPERATORS(
    OPERATOR_LINE) DLB_REDUCE_OPS(REDUCTION_LINE)};

const char *dlbL_usage(const char *op) {
  for (size_t k = 0; k < sizeof usage_lines / sizeof usage_lines[0]; k++)
    if (strcmp(usage_lines[k].op, op) == 0) return usage_lines[k].usage;
  for (size_t k = 0; k < sizeof derived_lines / sizeof derived_lines[0]; k++)
    if (strcmp(derived_lines[k].op, op) == 0) return derived_lines[k].usage;
  return NULL;
}
