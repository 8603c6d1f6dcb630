"""fpexplore.orders: numpy's sum bit for bit, textbook orders against plain Python loops,
the symbolic addition trees, and the refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_orders_inputs import (
    BOUNDARY_SIZES,
    DISTRIBUTIONS,
    RERUN,
    numpy_dtype,
    same_bits,
    sample,
)

from fpexplore import InvalidInput, InvalidParameter, NotEmulated, orders
from fpexplore.orders import Node


def test_names_lists_every_order():
    assert orders.names()[:4] == ["numpy", "torch", "tensorflow", "java"]
    assert set(orders.names()) >= {
        "sequential",
        "reversed",
        "sorted",
        "sorted_desc",
        "pairwise",
        "kahan",
        "neumaier",
        "float64",
    }
    for name in orders.names():
        assert orders.describe(name)


# --- numpy ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_numpy_bit_exact_at_every_boundary(distribution, dtype):
    for n in BOUNDARY_SIZES:
        for seed in range(4):
            x = sample(distribution, n, dtype, seed)
            got = orders.emulate(x, "numpy")
            assert same_bits(got, np.sum(x)), (distribution, n, seed, RERUN)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_numpy_16_bit_formats(dtype):
    for n in (0, 1, 7, 8, 9, 129, 257, 8191, 8192, 8193, 20_000, 100_003):
        for distribution, seed in itertools.product(("normal", "cancelling"), (5, 6)):
            x = sample(distribution, n, dtype, seed)
            got = orders.emulate(x, "numpy")
            assert got.dtype == numpy_dtype(dtype)
            assert same_bits(got, np.sum(x)), (distribution, n, seed, RERUN)


def test_numpy_float16_rounds_once_not_per_addition():
    x = np.full(4096, 1.0, np.float16)  # half steps above 2048 are 2: 2048 + 1 = 2048
    assert orders.emulate(x, "numpy") == np.float16(4096) == np.sum(x)
    assert orders.emulate(x, "sequential") == np.float16(2048)


def test_numpy_layouts():
    x = sample("normal", 300 * 701, "float32", 7)
    strided = x[::3]
    assert same_bits(orders.emulate(strided, "numpy"), np.sum(strided)), RERUN
    matrix = x.reshape(300, 701)
    assert same_bits(orders.emulate(matrix, "numpy"), np.sum(matrix))
    fortran = np.asfortranarray(matrix)
    assert same_bits(orders.emulate(fortran, "numpy"), np.sum(fortran))
    with pytest.raises(NotEmulated, match="non-contiguous"):
        orders.emulate(matrix[:, ::2], "numpy")
    with pytest.raises(NotEmulated, match="non-contiguous"):
        orders.emulate(matrix[::2, :], "numpy")


def test_signed_zeros_and_empty():
    for n in (0, 1, 5, 8, 200, 40_000):
        x = np.full(n, -0.0, np.float32)
        assert same_bits(orders.emulate(x, "numpy"), np.sum(x))
        assert same_bits(orders.emulate(x, "java"), np.float32(0.0))
    assert same_bits(orders.emulate(np.array([-0.0], np.float32), "sequential"), np.float32(-0.0))
    for name in orders.names():
        if name != "tensorflow":
            assert same_bits(orders.emulate(np.zeros(0, np.float32), name), np.float32(0.0))


# --- textbook orders against plain Python loops ---------------------------------------------


def _loop(values, scalar):
    total = scalar(0.0)
    for v in values:
        total = scalar(total + v)
    return total


def _pairwise(values, scalar):
    if len(values) == 0:
        return scalar(0.0)
    if len(values) == 1:
        return values[0]
    half = len(values) // 2
    return scalar(_pairwise(values[:half], scalar) + _pairwise(values[half:], scalar))


def _kahan(values, scalar):
    s = c = scalar(0.0)
    for v in values:
        y = scalar(v - c)
        t = scalar(s + y)
        c = scalar(scalar(t - s) - y)
        s = t
    return s


def _neumaier(values, scalar):
    s = c = scalar(0.0)
    for v in values:
        t = scalar(s + v)
        if abs(s) >= abs(v):
            c = scalar(c + scalar(scalar(s - t) + v))
        else:
            c = scalar(c + scalar(scalar(v - t) + s))
        s = t
    return scalar(s + c)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("distribution", ["normal", "loguniform", "cancelling"])
def test_textbook_orders_match_python_loops(distribution, dtype):
    scalar = np.dtype(dtype).type
    for n in (1, 2, 3, 7, 8, 9, 31, 100, 257, 1000):
        x = sample(distribution, n, dtype, 11)
        values = list(x)  # numpy scalars: each operation rounds to the format
        by_magnitude = sorted(values, key=abs)
        expected = {
            "java": _loop(values, scalar) if dtype != "float16" else None,
            "reversed": None,
            "sorted": _loop(by_magnitude, scalar),
            "sorted_desc": _loop(sorted(values, key=abs, reverse=True), scalar),
            "pairwise": _pairwise(values, scalar),
            "kahan": _kahan(values, scalar),
            "neumaier": _neumaier(values, scalar),
            "float64": scalar(_loop([float(v) for v in values], float)),
        }
        sequential = values[0]
        for v in values[1:]:
            sequential = scalar(sequential + v)
        expected["sequential"] = sequential
        reverse = values[-1]
        for v in values[-2::-1]:
            reverse = scalar(reverse + v)
        expected["reversed"] = reverse
        for name, want in expected.items():
            if want is None:
                continue
            got = orders.emulate(x, name)
            assert same_bits(got, scalar(want)), (name, n, got, want, RERUN)


def test_sorted_orders_keep_ties_in_place():
    rng = np.random.default_rng(14)
    x = (rng.choice([-1.0, 1.0], 5000) * rng.choice([1e-3, 1.0, 3.0, 1e4], 5000)).astype(np.float32)
    for name, reverse in (("sorted", False), ("sorted_desc", True)):
        ordered = sorted(x, key=abs, reverse=reverse)  # Python's sort is stable
        want = ordered[0]
        for v in ordered[1:]:
            want = want + v
        assert same_bits(orders.emulate(x, name), want)


def test_sequential_is_cumsum_and_equals_the_loop_on_a_million():
    x = sample("loguniform", 1_000_000, "float32", 12)
    total = np.float32(0.0)
    for v in x[:200_000]:
        total = total + v
    assert same_bits(orders.emulate(x[:200_000], "java"), total)
    assert same_bits(np.cumsum(x)[-1], np.add.accumulate(x)[-1])


def test_float64_accumulation_is_more_accurate_than_float32_sequential():
    x = np.full(10_000, 0.0001, np.float32)
    exact = 10_000 * float(np.float32(0.0001))
    assert abs(float(orders.emulate(x, "float64")) - exact) <= abs(
        float(orders.emulate(x, "sequential")) - exact
    )
    assert orders.emulate(x, "float64") == np.float32(exact)
    assert orders.emulate(x, "float64").dtype == np.float32


def test_kahan_fixes_the_classic_example():
    x = np.full(10_000, 0.0001, np.float32)
    exact = 10_000 * float(np.float32(0.0001))
    assert orders.emulate(x, "sequential") != np.float32(exact)
    assert orders.emulate(x, "kahan") == np.float32(exact)
    assert orders.emulate(x, "neumaier") == np.float32(exact)


def test_results_have_the_input_format():
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        x = sample("normal", 1000, dtype, 13)
        for name in orders.names():
            if name in ("tensorflow", "torch"):
                continue  # checked against the frameworks in their own test files
            try:
                value = orders.emulate(x, name)
            except NotEmulated:
                assert name == "java" and dtype in ("float16", "bfloat16")
                continue
            assert isinstance(value, np.generic) and value.dtype == numpy_dtype(dtype)


# --- refusals and bad input ------------------------------------------------------------------


def test_bad_arguments_are_named():
    x = np.ones(10, np.float32)
    with pytest.raises(InvalidParameter, match=r"'order'.*'numpy'.*Got 'fortran'"):
        orders.emulate(x, "fortran")
    with pytest.raises(InvalidParameter, match=r"'threads'.*\[1, 1024\]"):
        orders.emulate(x, "torch", threads=0)
    with pytest.raises(InvalidParameter, match=r"'threads'.*\[1, 1024\]"):
        orders.emulate(x, "torch", threads=10**12)  # refused, not a MemoryError
    with pytest.raises(InvalidParameter, match="'threads'"):
        orders.emulate(x, "torch", threads=1.5)
    with pytest.raises(InvalidInput, match=r"'x'.*int64"):
        orders.emulate(np.arange(10), "numpy")
    with pytest.raises(InvalidInput, match=r"'x'.*complex"):
        orders.emulate(np.ones(3, np.complex64), "sequential")
    with pytest.raises(InvalidParameter, match="'n'"):
        orders.tree(-1, "numpy")
    with pytest.raises(InvalidParameter, match="'dtype'"):
        orders.tree(4, "numpy", dtype="int8")


def test_refusals_say_why():
    with pytest.raises(NotEmulated, match="Java has no float16"):
        orders.emulate(np.ones(4, np.float16), "java")
    with pytest.raises(NotEmulated, match="subtracts"):
        orders.tree(8, "kahan")
    with pytest.raises(NotEmulated, match="subtracts"):
        orders.tree(8, "neumaier")
    with pytest.raises(InvalidParameter, match="'values'"):
        orders.tree(8, "sorted")


def test_python_lists_are_float64():
    assert same_bits(orders.emulate([0.1, 0.2, 0.3], "numpy"), np.sum([0.1, 0.2, 0.3]))


# --- symbolic trees ------------------------------------------------------------------------


def _evaluate(node: Node, x: np.ndarray):
    if node.is_leaf:
        return x[node.index]
    if node.is_const:
        return x.dtype.type(node.const)
    return _evaluate(node.left, x) + _evaluate(node.right, x)


@pytest.mark.parametrize(
    "order",
    ["numpy", "torch", "tensorflow", "java", "sequential", "reversed", "pairwise", "float64"],
)
def test_trees_use_every_leaf_once_and_reproduce_the_value(order):
    for n in (1, 2, 3, 7, 8, 9, 16, 31, 33, 64, 129, 300):
        for dtype in ("float32", "float64"):
            root = orders.tree(n, order, dtype=dtype, simplify=False)
            assert sorted(root.leaves()) == list(range(n))
            x = sample("loguniform", n, dtype, 17)
            if order != "float64":
                want = orders.emulate(x, order)
                assert same_bits(_evaluate(root, x), want), (order, n, RERUN)
            simple = orders.tree(n, order, dtype=dtype)
            assert sorted(simple.leaves()) == list(range(n))
            assert simple.additions() == n - 1
            assert not any(node.is_const for node in simple.walk()) or n == 0


def test_tree_shapes():
    assert orders.tree(4, "sequential").expression() == "(((x0 + x1) + x2) + x3)"
    assert orders.tree(4, "reversed").expression() == "(((x3 + x2) + x1) + x0)"
    assert orders.tree(4, "pairwise").expression() == "((x0 + x1) + (x2 + x3))"
    assert orders.tree(10, "numpy").expression() == (
        "(((((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))) + x8) + x9)"
    )
    assert orders.tree(256, "pairwise").depth() == 8
    assert orders.tree(64, "sequential").depth() == 63
    assert orders.tree(64, "numpy").depth() < 16
    values = np.array([3.0, -1.0, 2.0, 0.5, -4.0])
    assert orders.tree(5, "sorted", values=values).leaves() == [3, 1, 2, 0, 4]
    assert orders.tree(5, "sorted_desc", values=values).leaves() == [4, 0, 2, 1, 3]
    torch_threads = orders.tree(33_000, "torch", threads=2)
    assert sorted(torch_threads.leaves()) == list(range(33_000))
    assert orders.tree(1, "torch").expression() == "x0"
    assert orders.tree(0, "numpy").is_const


def test_tree_depends_on_threads_and_format():
    one = orders.tree(33_000, "torch", threads=1).expression()
    two = orders.tree(33_000, "torch", threads=2).expression()
    assert one != two
    assert (
        orders.tree(64, "torch", dtype="float32").expression()
        != orders.tree(64, "torch", dtype="float64").expression()
    )


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_large_sizes(dtype):
    rng = np.random.default_rng(22)
    sizes = [999_999, 1_000_000, 1_048_577, 2_000_000, *rng.integers(100_000, 2_000_000, 4)]
    for n in sizes:
        for distribution in ("loguniform", "cancelling"):
            x = sample(distribution, int(n), dtype, 23)
            assert same_bits(orders.emulate(x, "numpy"), np.sum(x)), (n, RERUN)
