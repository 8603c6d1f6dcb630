"""torch's CUDA stream rebuilt (Philox4x32-10) against known answers and the recorded GPU run;
the recording machine's CPU stream against this machine's MT19937."""

from __future__ import annotations

import numpy as np
import pytest

from fpexplore import records
from fpexplore.errors import InvalidParameter
from fpexplore.rng import TorchCPURandom
from fpexplore.rng.philox import curand_uniform, grid_threads, philox4x32_10, torch_cuda_rand

# Random123's published known-answer vectors for philox4x32_10 (kat_vectors).
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def _rng_record() -> tuple[records.Record, dict]:
    rec = records.load()
    return rec, rec.experiments["rng"]


def test_philox_known_answers():
    ctr = np.array([c for c, _, _ in KAT], dtype=np.uint32)
    for i, (c, key, expected) in enumerate(KAT):
        assert tuple(int(v) for v in philox4x32_10(ctr[i : i + 1], key)[0]) == expected, c


def test_recorded_cuda_rand_reproduced_bit_for_bit():
    rec, exp = _rng_record()
    sm = rec.provenance["sm_count"]
    assert len(exp["seeds"]) >= 4
    for s in exp["seeds"]:
        got = torch_cuda_rand(s, exp["n"], sm).view(np.uint32)
        assert (got == np.asarray(exp["cuda_rand_bits"][str(s)], dtype=np.uint32)).all(), s
        # prefixes: torch.rand(k) for k <= n takes the same per-thread words
        assert (torch_cuda_rand(s, 5, sm).view(np.uint32) == got[:5]).all()


def test_recorded_cpu_stream_equals_mt19937_emulator_here():
    """The GPU machine's torch CPU rand/randn, recorded there, equal fpexplore's MT19937 here."""
    _, exp = _rng_record()
    n = exp["n"]
    for s in exp["seeds"]:
        rand = np.asarray(exp["cpu_rand_bits"][str(s)], dtype=np.uint32)
        randn = np.asarray(exp["cpu_randn_bits"][str(s)], dtype=np.uint32)
        assert (TorchCPURandom(s).rand(n).view(np.uint32) == rand).all(), s
        assert (TorchCPURandom(s).randn(n).view(np.uint32) == randn).all(), s
        assert (rand != np.asarray(exp["cuda_rand_bits"][str(s)], dtype=np.uint32)).any()


def test_curand_uniform_is_in_zero_one_closed_at_one():
    u = curand_uniform(np.array([0, 1, 2**24, 2**32 - 1], dtype=np.uint32))
    assert u[0] == np.float32(2.0**-33) and u[-1] == np.float32(1.0)
    assert u.dtype == np.float32 and (u > 0).all()


def test_grid_layout_and_values_in_range():
    assert grid_threads(64, 132) == 256
    assert grid_threads(10**7, 132) == 132 * 8 * 256
    big = torch_cuda_rand(3, 132 * 8 * 256 * 4 + 7, 132)
    assert big.dtype == np.float32 and (big >= 0).all() and (big < 1).all()
    # the grid-stride layout depends on the SM count once n exceeds one wave of threads
    assert (torch_cuda_rand(3, 600_000, 132) != torch_cuda_rand(3, 600_000, 114)).any()


def test_bad_input_is_named():
    with pytest.raises(InvalidParameter, match="'n'"):
        torch_cuda_rand(0, 0, 132)
    with pytest.raises(InvalidParameter, match="'sm_count'"):
        torch_cuda_rand(0, 4, 0)
