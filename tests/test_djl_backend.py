"""The DJL backend run for real (marker ``java``): bits in and out, statistics, transforms,
random streams, the Java loop; and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fpexplore import images
from fpexplore.backends import djl
from fpexplore.errors import InvalidInput, InvalidParameter

java = pytest.mark.java
RNG = np.random.default_rng(6)


@java
@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8"])
def test_roundtrip_keeps_every_bit(dtype):
    if dtype == "uint8":
        x = RNG.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    else:
        x = RNG.standard_normal(37).astype(dtype)
        x[:6] = [np.nan, -0.0, np.inf, -np.inf, np.finfo(dtype).smallest_subnormal, 0.0]
    y = djl.roundtrip(x)
    assert y.dtype == x.dtype and y.shape == x.shape and y.tobytes() == x.tobytes()


@java
def test_sum_mean_std_of_the_classic_example():
    x = np.array([10, 20, 30, 40, 50], dtype=np.float32)
    assert djl.ndsum(x) == np.float32(150) and djl.mean(x) == np.float32(30)
    assert djl.std(x) == np.float32(np.sqrt(200.0))  # population std: sqrt(200)
    z = djl.normalize_by_stats(x)
    assert np.max(np.abs(z - (x - 30) / np.float32(np.sqrt(200.0)))) < 1e-6


@java
def test_to_tensor_and_normalize_are_float32_division():
    img = RNG.integers(0, 256, size=(7, 9, 3), dtype=np.uint8)
    t = djl.to_tensor(img)
    assert t.shape == (3, 7, 9)
    assert np.array_equal(t, img.transpose(2, 0, 1).astype(np.float32) / np.float32(255))
    mean, std = [0.5, 0.25, 0.125], [0.3, 0.2, 0.1]
    n = djl.normalize(t, mean, std)
    m = np.float32(mean)[:, None, None]
    s = np.float32(std)[:, None, None]
    assert np.array_equal(n, (t - m) / s)


@java
def test_resize_semantics_and_center_crop_offset():
    img = RNG.integers(0, 256, size=(9, 14, 3), dtype=np.uint8)
    assert djl.resize(img, 6).shape == (6, 6, 3)
    assert djl.resize(img, (5, 7), "nearest").shape == (5, 7, 3)
    assert djl.resize_short(img, 6).shape == (6, 9, 3)
    crop = djl.center_crop(img, 5, 4)  # offsets (14 - 5) // 2 = 4, (9 - 4) // 2 = 2
    assert np.array_equal(crop, img[2:6, 4:9])
    assert np.array_equal(djl.crop(img, 1, 2, 3, 4), img[2:6, 1:4])


@java
@pytest.mark.parametrize("name", ["edges.png", "gradient_q75.jpg"])
def test_decode_with_imageio(name):
    path = images.path(name)
    got = djl.decode(path)
    with Image.open(path) as im:
        assert got.shape == (im.height, im.width, 3)
    if name.endswith(".png"):
        assert np.array_equal(got, images.source(name))


@java
def test_java_float_loop_is_sequential_float32():
    x = RNG.standard_normal(1001).astype(np.float32) * np.float32(1e4)
    s = np.float32(0)
    for v in x:
        s = np.float32(s + v)
    assert djl.java_loop_sum(x) == float(s)
    x64 = x.astype(np.float64)
    assert djl.java_loop_sum(x64) == float(sum(x64.tolist()))


@java
def test_java_random_matches_the_java_util_random_algorithm():
    seed, n = 42, 5
    state = (seed ^ 0x5DEECE66D) & ((1 << 48) - 1)
    want = []
    for _ in range(n):
        state = (state * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        want.append((state >> (48 - 24)) / float(1 << 24))
    assert djl.java_random_floats(seed, n).tolist() == want


@java
def test_engine_seed_reproduces_torch_streams():
    got = djl.seed_streams(3, 1000)
    assert got["uniform_equal"] and got["normal_equal"], got


@java
def test_threads_are_set_explicitly():
    assert djl.info()["threads"] == djl.threads()
    assert djl.set_threads(2) == 2 and djl.info()["threads"] == 2
    assert djl.set_threads(1) == 1


@java
def test_a_failed_set_threads_keeps_the_count(monkeypatch):
    from fpexplore.errors import WorkerError
    from fpexplore.jvm import client

    djl.info()  # a live worker
    before = djl.threads()

    def fail(*_a, **_k):
        raise WorkerError("refused")

    monkeypatch.setattr(client, "call", fail)
    with pytest.raises(WorkerError):
        djl.set_threads(before + 1)
    assert djl.threads() == before
    monkeypatch.undo()
    assert djl.info()["threads"] == djl.threads()


@java
def test_bad_inputs_name_the_argument(tmp_path):
    with pytest.raises(InvalidInput, match="float32, float64 or uint8"):
        djl.ndsum(np.arange(3, dtype=np.int32))
    with pytest.raises(InvalidInput, match="HWC image"):
        djl.to_tensor(np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(InvalidParameter, match="interpolation"):
        djl.resize(np.zeros((4, 4, 3), np.uint8), 2, "lanczos")
    with pytest.raises(InvalidInput, match="does not exist"):
        djl.decode(tmp_path / "nope.png")
    with pytest.raises(InvalidParameter, match="seed"):
        djl.random_uniform(-1, 3)
