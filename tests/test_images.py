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


def test_a_recordings_folder_never_hides_the_shipped_images(tmp_path, monkeypatch):
    """``$FPEXPLORE_DATA`` redirects recordings; the sample images stay the shipped ones."""
    from fpexplore.paths import data_dir

    monkeypatch.setenv("FPEXPLORE_DATA", str(tmp_path))
    assert data_dir() == tmp_path  # recordings go there
    for name in images.names():
        assert images.path(name).is_file(), name
        assert not images.path(name).is_relative_to(tmp_path)
