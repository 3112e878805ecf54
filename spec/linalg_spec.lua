-- Linear algebra: dl.linalg, NumPy 1.24's numpy.linalg through LAPACK.
--
-- This file documents:
--   dl.linalg.solve(a, b)        x with a x = b; b (..., M) when it has one dim
--                                fewer than a (NumPy 1.24's rule), else (..., M, K)
--   dl.linalg.inv(a)             the inverses
--   dl.linalg.det(a)             determinants (a number for one matrix)
--   dl.linalg.slogdet(a)         sign, log|det| (numbers for one matrix)
--   dl.linalg.cholesky(a)        the lower factor L, a = L L^T
--   dl.linalg.eigh(a, opts)      w ascending, v (columns); opts {UPLO = "L" | "U"}
--   dl.linalg.svd(a, opts)       u, s, vh; opts {full_matrices = true, compute_uv = true}
--   dl.linalg.qr(a, opts)        q, r; opts {mode = "reduced" | "complete" | "r"}
--   dl.linalg.lstsq(a, b, opts)  x, residuals, rank, s; opts {rcond = number}
--
-- a is a matrix (M, N) or a stack of them (..., M, N): each function works
-- matrix by matrix over the leading dims (lstsq takes one matrix, as NumPy
-- 1.24's). As NumPy, everything is computed in float64: float32 operands give
-- float32 results, integer and bool operands float64. Failures of the
-- mathematics raise LINALG (NumPy's LinAlgError).
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code
local L = dl.linalg

local function near(expected, actual, tol)
  assert.is_true(math.abs(expected - actual) <= (tol or 1e-12),
    string.format("expected %.17g, got %.17g", expected, actual))
end

describe("dl.linalg", function()
  it("is a read-only table of functions", function()
    assert.is_function(L.solve)
    expect_code("READ_ONLY", function() L.solve = nil end)
  end)

  describe("solve", function()
    it("solves a x = b for one right-hand side", function()
      local x = L.solve(dl.array{{3, 1}, {1, 2}}, dl.array{9, 8})
      assert.same({2, 3}, x:totable())
      assert.equal("float64", x.dtype)
    end)

    it("solves for several right-hand sides (b is (M, K)) and takes nested tables", function()
      local x = L.solve({{2, 0}, {0, 4}}, {{2, 4}, {8, 12}})
      assert.same({{1, 2}, {2, 3}}, x:totable())
    end)

    it("works through a stack of matrices, broadcasting b's stack dims", function()
      local a = dl.stack({dl.eye(2) * 2, dl.eye(2) * 4}, 1)  -- (2, 2, 2)
      local x = L.solve(a, dl.array{{{4}, {8}}})             -- b (1, 2, 1) broadcasts
      assert.same({2, 2, 1}, x.shape)
      assert.same({{{2}, {4}}, {{1}, {2}}}, x:totable())
    end)

    it("keeps float32 as float32 (computed in float64, then rounded, as NumPy)", function()
      local a = dl.array({{1, 0}, {0, 3}}, {dtype = "float32"})
      local x = L.solve(a, dl.array({1, 1}, {dtype = "float32"}))
      assert.equal("float32", x.dtype)
    end)

    it("raises LINALG for a singular matrix", function()
      local err = support.error_of(L.solve, dl.array{{1, 2}, {2, 4}}, dl.array{1, 1})
      assert.equal("LINALG", err.code)
      assert.truthy(err.message:find("singular"))
    end)

    it("raises SHAPE when b's rows are not a's", function()
      expect_code("SHAPE", L.solve, dl.eye(3), dl.ones(2))
      -- b (2, 3) against a (2, 3, 3) is a stack of vectors (one dim fewer): fine
      assert.same({2, 3}, L.solve(dl.ones(2, 3, 3) + dl.eye(3), dl.ones(2, 3)).shape)
      -- b (3,) against a (2, 3, 3) is neither rule: SHAPE, as NumPy's ValueError
      expect_code("SHAPE", L.solve, dl.ones(2, 3, 3) + dl.eye(3), dl.ones(3))
    end)
  end)

  describe("inv, det and slogdet", function()
    it("inverts each matrix", function()
      local r = L.inv(dl.array{{4, 7}, {2, 6}}):totable()
      near(0.6, r[1][1]); near(-0.7, r[1][2]); near(-0.2, r[2][1]); near(0.4, r[2][2])
    end)

    it("raises LINALG for a singular matrix", function()
      expect_code("LINALG", L.inv, dl.array{{1, 2}, {2, 4}})
    end)

    it("returns a number for one matrix, an array for a stack", function()
      near(-2, L.det(dl.array{{1, 2}, {3, 4}}))
      local d = L.det(dl.stack({dl.eye(3), dl.eye(3) * 2}, 1))
      assert.same({2}, d.shape)
      near(8, d:totable()[2])
    end)

    it("gives 0 for a singular matrix and 1 for a 0x0 one", function()
      assert.equal(0, L.det(dl.array{{1, 2}, {2, 4}}))
      assert.equal(1, L.det(dl.zeros(0, 0)))
      local sign, logdet = L.slogdet(dl.array{{1, 2}, {2, 4}})
      assert.equal(0, sign)
      assert.equal(-math.huge, logdet)
    end)

    it("slogdet gives the sign and log|det| (no overflow for large determinants)", function()
      local sign, logdet = L.slogdet(dl.eye(400) * 10)  -- det 1e400 overflows float64
      assert.equal(1, sign)
      near(400 * math.log(10), logdet, 1e-9)
      assert.equal(math.huge, L.det(dl.eye(400) * 10))
    end)

    it("raises SHAPE for a matrix that is not square or not a matrix", function()
      expect_code("SHAPE", L.det, dl.zeros(2, 3))
      expect_code("SHAPE", L.inv, dl.zeros(3))
    end)
  end)

  describe("cholesky", function()
    it("gives the lower factor, its upper triangle zero", function()
      local l = L.cholesky(dl.array{{4, 2}, {2, 3}})
      local t = l:totable()
      assert.equal(2, t[1][1]); assert.equal(0, t[1][2]); assert.equal(1, t[2][1])
      near(math.sqrt(2), t[2][2])
    end)

    it("raises LINALG for a matrix that is not positive definite", function()
      local err = support.error_of(L.cholesky, dl.array{{1, 2}, {2, 1}})
      assert.equal("LINALG", err.code)
      assert.truthy(err.message:find("positive definite"))
    end)
  end)

  describe("eigh", function()
    it("gives the eigenvalues ascending and the eigenvectors as columns", function()
      local w, v = L.eigh(dl.array{{2, 1}, {1, 2}})
      local ws = w:totable()
      near(1, ws[1]); near(3, ws[2])
      -- a v = v diag(w), whatever the signs of the columns
      local av = dl.matmul(dl.array{{2, 1}, {1, 2}}, v)
      assert.is_true(dl.allclose(av, v * w))
    end)

    it("reads only the lower triangle (UPLO = \"L\") or the upper one", function()
      local a = dl.array{{2, 99}, {1, 2}}
      near(3, L.eigh(a):totable()[2])
      near(101, L.eigh(a, {UPLO = "U"}):totable()[2])
      expect_code("ARGUMENT", L.eigh, a, {UPLO = "X"})
    end)
  end)

  describe("svd", function()
    it("decomposes a = u diag(s) vh, s descending", function()
      local a = dl.array{{1, 2, 3}, {4, 5, 6}}
      local u, s, vh = L.svd(a)
      assert.same({2, 2}, u.shape); assert.same({2}, s.shape); assert.same({3, 3}, vh.shape)
      local rebuilt = dl.matmul(u * s, vh:narrow(1, 1, 2))
      assert.is_true(dl.allclose(rebuilt, a))
    end)

    it("gives the reduced factors, or the singular values alone", function()
      local u, s, vh = L.svd(dl.ones(4, 2), {full_matrices = false})
      assert.same({4, 2}, u.shape); assert.same({2}, s.shape); assert.same({2, 2}, vh.shape)
      local only = L.svd(dl.array{{3, 0}, {0, 4}}, {compute_uv = false})
      assert.same({4, 3}, only:totable())
    end)

    it("raises LINALG for a matrix holding NaN or inf (NumPy's LinAlgError for NaN)", function()
      -- NumPy's answer for inf is NaN or an error by the matrix's layout; dlbridge refuses both
      expect_code("LINALG", L.svd, dl.array{{0 / 0, 1}, {2, 3}})
      expect_code("LINALG", L.svd, dl.array{{math.huge, 1}, {2, 3}}, {compute_uv = false})
      local ok, err = pcall(L.svd, dl.stack{dl.eye(2), dl.array{{1, -math.huge}, {0, 1}}})
      assert.is_false(ok)
      assert.matches("matrix 2 of the stack", err.message)
    end)
  end)

  describe("qr", function()
    it("gives q with orthonormal columns and upper-triangular r", function()
      local a = dl.array{{1, 2}, {3, 4}, {5, 6}}
      local q, r = L.qr(a)
      assert.same({3, 2}, q.shape); assert.same({2, 2}, r.shape)
      assert.equal(0, r:get(2, 1))
      assert.is_true(dl.allclose(dl.matmul(q, r), a))
    end)

    it("takes mode \"complete\" and \"r\"", function()
      local q, r = L.qr(dl.ones(3, 2), {mode = "complete"})
      assert.same({3, 3}, q.shape); assert.same({3, 2}, r.shape)
      assert.same({2, 2}, L.qr(dl.ones(3, 2), {mode = "r"}).shape)
      expect_code("ARGUMENT", L.qr, dl.ones(2, 2), {mode = "raw"})
    end)
  end)

  describe("lstsq", function()
    it("returns x, the residuals, the rank and the singular values", function()
      local x, res, rank, s = L.lstsq(dl.array{{1, 0}, {0, 1}, {0, 0}}, dl.array{1, 2, 3})
      assert.same({1, 2}, x:totable())
      assert.same({9}, res:totable())  -- |b - a x|^2
      assert.equal(2, rank)
      assert.same({1, 1}, s:totable())
    end)

    it("gives no residuals when the rank is below N (NumPy's rule)", function()
      local _, res, rank = L.lstsq(dl.array{{1, 1}, {1, 1}, {1, 1}}, dl.array{1, 2, 3})
      assert.equal(1, rank)
      assert.same({0}, res.shape)
    end)

    it("takes rcond; raises SHAPE for a stack (NumPy 1.24 takes one matrix)", function()
      local _, _, rank = L.lstsq(dl.array{{1, 0}, {0, 1e-6}}, dl.array{1, 1}, {rcond = 1e-3})
      assert.equal(1, rank)
      expect_code("SHAPE", L.lstsq, dl.ones(2, 3, 3), dl.ones(2, 3))
    end)

    it("raises LINALG when a or b holds NaN or inf (its SVD cannot take them)", function()
      expect_code("LINALG", L.lstsq, dl.array{{1, 0}, {0, 0 / 0}}, dl.array{1, 1})
      expect_code("LINALG", L.lstsq, dl.eye(2), dl.array{1, math.huge})
    end)
  end)

  describe("arguments", function()
    it("raises DTYPE for float16 and complex, as NumPy refuses the first", function()
      expect_code("DTYPE", L.inv, dl.eye(2, {dtype = "float16"}))
      expect_code("DTYPE", L.det, dl.eye(2, {dtype = "complex128"}))
    end)

    it("promotes integers and bool to float64", function()
      assert.equal("float64", L.inv(dl.eye(2, {dtype = "int32"})).dtype)
      assert.equal("float64", L.cholesky(dl.eye(2, {dtype = "bool"})).dtype)
    end)

    it("works on empty stacks and 0x0 matrices", function()
      assert.same({0, 3, 3}, L.inv(dl.zeros(0, 3, 3)).shape)
      assert.same({0, 0}, L.cholesky(dl.zeros(0, 0)).shape)
      local w, v = L.eigh(dl.zeros(2, 0, 0))
      assert.same({2, 0}, w.shape); assert.same({2, 0, 0}, v.shape)
    end)

    it("raises ARGUMENT for a missing operand, an unknown option or an extra argument", function()
      expect_code("ARGUMENT", L.inv)
      expect_code("ARGUMENT", L.inv, "x")
      expect_code("ARGUMENT", L.svd, dl.eye(2), {full = true})
      expect_code("ARGUMENT", L.det, dl.eye(2), 1)
    end)

    it("raises DELETED for a deleted operand", function()
      local a = dl.eye(2)
      a:delete()
      expect_code("DELETED", L.inv, a)
    end)
  end)
end)
