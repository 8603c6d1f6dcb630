"""The project's own sample images (``data/images``): smooth gradients, textures and edges,
as PNG and as JPEG at a few qualities, at odd sizes so centre crops have half-pixel offsets.

``python -m fpexplore.images`` writes them again (deterministic: fixed formulas and seeds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .errors import InvalidParameter
from .paths import shipped_data_dir

#: name -> (height, width)
SIZES = {"gradient": (97, 131), "texture": (75, 101), "edges": (121, 160)}
JPEG_QUALITIES = (50, 75, 95)


def images_dir() -> Path:
    return shipped_data_dir() / "images"


def gradient(h: int, w: int) -> np.ndarray:
    """Smooth diagonal ramps in each channel plus a soft radial bump."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    u, v = x / (w - 1), y / (h - 1)
    r = np.exp(-(((u - 0.6) ** 2 + (v - 0.4) ** 2) / 0.08))
    rgb = np.stack([0.9 * u + 0.1 * r, 0.5 * (u + v) * (1 - 0.3 * r), 1 - 0.8 * v + 0.2 * r], -1)
    return np.clip(np.rint(255 * rgb), 0, 255).astype(np.uint8)


def texture(h: int, w: int, seed: int = 6) -> np.ndarray:
    """Band-limited noise over fine stripes: lots of high-frequency content."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    noise = rng.standard_normal((h, w, 3))
    k = np.array([1, 4, 6, 4, 1], dtype=np.float64) / 16
    for axis in (0, 1):
        noise = np.apply_along_axis(lambda s: np.convolve(s, k, mode="same"), axis, noise)
    stripes = 0.5 + 0.5 * np.sin(2 * np.pi * (x / 3.7 + y / 9.1))
    rgb = 0.5 + 0.9 * noise + 0.25 * (stripes[..., None] - 0.5) * np.array([1.0, -1.0, 0.5])
    return np.clip(np.rint(255 * rgb), 0, 255).astype(np.uint8)


def edges(h: int, w: int) -> np.ndarray:
    """Hard edges: a disk, a slanted bar and a checkerboard on flat colours."""
    y, x = np.mgrid[0:h, 0:w]
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = (30, 60, 200)
    disk = (x - 0.35 * w) ** 2 + (y - 0.45 * h) ** 2 < (0.25 * h) ** 2
    img[disk] = (250, 220, 20)
    bar = np.abs((x - 0.7 * w) * 0.8 - (y - 0.5 * h) * 0.6) < 4
    img[bar] = (240, 240, 240)
    checker = ((x // 5 + y // 5) % 2 == 0) & (y > 0.8 * h)
    img[checker] = (10, 10, 10)
    return img


MAKERS = {"gradient": gradient, "texture": texture, "edges": edges}


def names() -> tuple[str, ...]:
    """The sample image file names, PNG first, then the JPEGs by quality."""
    out = []
    for kind in MAKERS:
        out.append(f"{kind}.png")
        out += [f"{kind}_q{q}.jpg" for q in JPEG_QUALITIES]
    return tuple(out)


def path(name: str) -> Path:
    """The path of sample image ``name`` (one of `names`)."""
    if name not in names():
        raise InvalidParameter("image", name, "one of " + ", ".join(names()))
    return images_dir() / name


def source(name: str) -> np.ndarray:
    """The exact pixels an image file was made from (HWC uint8), before any compression."""
    kind = name.split(".")[0].split("_q")[0]
    if kind not in MAKERS:
        raise InvalidParameter("image", name, "one of " + ", ".join(names()))
    return MAKERS[kind](*SIZES[kind])


def write(out: Path | None = None) -> list[Path]:
    """Write every sample image (PNG lossless, JPEG with PIL at each quality, 4:2:0)."""
    from PIL import Image

    out = out or images_dir()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, make in MAKERS.items():
        img = Image.fromarray(make(*SIZES[kind]), "RGB")
        p = out / f"{kind}.png"
        img.save(p, optimize=True)
        written.append(p)
        for q in JPEG_QUALITIES:
            p = out / f"{kind}_q{q}.jpg"
            img.save(p, quality=q, subsampling=2)
            written.append(p)
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(p, p.stat().st_size, "bytes")
