"""The sample images: made by the generator, deterministic, and the PNGs lossless."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fpexplore import images
from fpexplore.errors import InvalidParameter


@pytest.mark.parametrize("name", [n for n in images.names() if n.endswith(".png")])
def test_png_holds_the_generators_pixels(name):
    with Image.open(images.path(name)) as im:
        assert np.array_equal(np.asarray(im.convert("RGB")), images.source(name))


def test_generator_is_deterministic_and_every_file_is_committed(tmp_path):
    written = images.write(tmp_path)
    assert sorted(p.name for p in written) == sorted(images.names())
    for p in written:
        with Image.open(p) as a, Image.open(images.path(p.name)) as b:
            assert a.size == b.size
            if p.suffix == ".png":  # lossless: the same pixels whatever the zlib version
                assert np.array_equal(np.asarray(a), np.asarray(b))


def test_unknown_image_names_the_choices():
    with pytest.raises(InvalidParameter, match=r"edges\.png"):
        images.path("cat.png")
