"""Flush to zero and fallback kernels (`cpu_vs_accelerator.cpu_modes`): the checks fail on
fake results, and the flag is restored whatever happens."""

from dataclasses import replace

import numpy as np
import pytest

from fpexplore.lessons.cpu_vs_accelerator import cpu_modes as m

torch = pytest.importorskip("torch")
SEEDS = (0, 5, 11)


def _flush(seed: int) -> m.Flush:
    """A battery with the results FTZ/DAZ would give and the correctly rounded default."""
    a, b, op = m._battery(seed)
    exact = m.exact(a, b, op)
    rounded = exact.astype(np.float32)
    tiny = np.float32(m.TINY)
    sub = lambda v: (np.abs(v) < tiny) & (v != 0)  # noqa: E731
    da = np.where(sub(a), np.copysign(np.float32(0), a), a).astype(np.float32)
    db = np.where(sub(b), np.copysign(np.float32(0), b), b).astype(np.float32)
    dazed = m.exact(da, db, op).astype(np.float32)
    flushed = np.where(sub(dazed), np.copysign(np.float32(0), dazed), dazed)
    return m.Flush(a, b, op, exact, rounded, flushed.astype(np.float32), 0, 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_right_flush_passes_and_a_kept_subnormal_fails(seed):
    f = _flush(seed)
    assert m.check_flush(f)[:2] == (True, True)
    kept = f.flushed.copy()
    i = int(np.flatnonzero((np.abs(f.default) < m.TINY) & (f.default != 0))[0])
    kept[i] = f.default[i]  # one subnormal result not flushed
    assert m.check_flush(replace(f, flushed=kept))[0] is False
    wrong = f.default.copy()
    wrong[i] = np.nextafter(wrong[i], np.float32(1))  # the default off by one ULP
    assert m.check_flush(replace(f, default=wrong))[1] is False


@pytest.mark.parametrize("seed", SEEDS)
def test_signed_zero_and_nan_are_kept_and_a_sign_flip_fails(seed):
    f = _flush(seed)
    neg = int(np.flatnonzero((f.a == 0) & np.signbit(f.a))[0])  # the −0.0 edge
    assert np.signbit(f.flushed[neg]) and np.isnan(f.flushed[np.isnan(f.exact)]).all()
    flipped = f.flushed.copy()
    flipped[neg] = 0.0
    assert m.check_flush(replace(f, flushed=flipped))[0] is False


def test_the_live_flag_flushes_and_is_restored():
    f = m.flush_run(torch, (2,))
    assert m.check_flush(f)[:2] == (True, True)
    assert not m._flag_now(torch)


def test_the_flag_is_restored_when_an_op_raises(monkeypatch):
    def boom(*_):
        if m._flag_now(torch):
            raise RuntimeError("inside the flag")
        return np.zeros(1, np.float32)

    monkeypatch.setattr(m, "_torch_ops", boom)
    with pytest.raises(RuntimeError):
        m.flush_run(torch, (0,))
    assert not m._flag_now(torch)


@pytest.mark.parametrize("bits", [8, 11])
def test_round_to_is_ties_to_even(bits):
    one = 1.0
    half_step = 2.0**-bits  # halfway between 1 and its successor
    assert m.round_to(one + half_step, bits) == one
    assert m.round_to(one + 3 * half_step, bits) == one + 4 * half_step
    assert m.half_loop(np.full(4, 0.25), bits) == 1.0


def test_half_sums_that_leave_the_float32_route_fail():
    good = m.Fallback({"float16": [(8.0, 8.0, 0.2, 300.0)]}, [True], [(0.5, -0.5)])
    assert m.check_half(good)
    assert not m.check_half(replace(good, half={"float16": [(8.0, 12.0, 0.2, 300.0)]}))
    assert not m.check_half(replace(good, half={"float16": [(8.0, 8.0, 1.5, 300.0)]}))


def test_the_live_fallbacks_on_two_seeds():
    fb = m.fallback_run(torch, (0, 1))
    assert m.check_half(fb)
    assert all(abs(e) < 1 for pair in fb.strided_err for e in pair)


def _record(f: m.Flush, seeds) -> dict:
    builds = {
        "default": {"bits": m._bits(f.default).tolist()},
        "ftz": {"bits": m._bits(f.flushed).tolist()},
    }
    return {"experiments": {"ftz": {"seeds": list(seeds), "n": int(f.a.size), "builds": builds}}}


def test_a_recorded_cuda_ftz_build_is_read_and_checked():
    seeds = (0, 1)
    parts = [_flush(s) for s in seeds]
    f = m.Flush(
        *(np.concatenate([getattr(p, k) for p in parts]) for k in ("a", "b", "op", "exact")),
        np.concatenate([p.default for p in parts]),
        np.concatenate([p.flushed for p in parts]),
        0,
        1,
    )
    back = m.cuda_from_record(_record(f, seeds))
    assert m.check_flush(back)[:2] == (True, True)
    unflushed = _record(replace(f, flushed=f.default), seeds)  # -ftz=true that did nothing
    assert m.check_flush(m.cuda_from_record(unflushed))[0] is False
