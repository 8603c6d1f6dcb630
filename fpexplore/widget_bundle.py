"""The JavaScript that renders embedded widgets in a page with no kernel and no network.

Exported pages inline ``@jupyter-widgets/html-manager``'s ``dist/embed.js`` (instead of loading
it from a CDN), so their controls work offline. ``fpexplore setup widgets`` fetches it once
from the npm registry (pinned, checked against its sha512) into ``paths.cache_dir()/widgets``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

from .errors import FpexploreError
from .paths import cache_dir

PACKAGE = "@jupyter-widgets/html-manager"
#: matches ipywidgets 8 (whose embedding asks for html-manager ^1.0.1)
VERSION = "1.0.15"
TARBALL = f"https://registry.npmjs.org/{PACKAGE}/-/html-manager-{VERSION}.tgz"
INTEGRITY = (
    "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi"
    "//SABeNz1yp47bCrJ3CQA=="
)
#: files taken from the tarball (the package is BSD-3-Clause, says its package.json)
MEMBERS = ("package/dist/embed.js", "package/dist/embed.js.LICENSE.txt", "package/package.json")
#: the CDN address ipywidgets uses, for pages made where the bundle cannot be fetched
CDN = f"https://cdn.jsdelivr.net/npm/{PACKAGE}@{VERSION}/dist/embed.js"
FIX = "fpexplore setup widgets"


def folder() -> Path:
    return cache_dir() / "widgets" / f"html-manager-{VERSION}"


def path() -> Path | None:
    """The cached ``embed.js``, or None when it has not been fetched."""
    p = folder() / "embed.js"
    return p if p.is_file() else None


def _check(data: bytes) -> None:
    algo, _, expected = INTEGRITY.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode("ascii")
    if got != expected:
        raise FpexploreError(
            f"{TARBALL} does not match its pinned integrity ({INTEGRITY}, got {algo}-{got})"
        )


def fetch(timeout_s: float = 60) -> Path:
    """Download the pinned bundle from the npm registry into the cache (once); its path."""
    cached = path()
    if cached is not None:
        return cached
    try:
        with urllib.request.urlopen(TARBALL, timeout=timeout_s) as response:
            data = response.read()
    except OSError as exc:
        raise FpexploreError(
            f"could not download {TARBALL} ({exc}); exported pages will load the widget "
            f"manager from {CDN} until `{FIX}` succeeds"
        ) from None
    _check(data)
    out = folder()
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in MEMBERS:
            extracted = tar.extractfile(member)
            if extracted is not None:
                tmp = out / (Path(member).name + ".part")
                tmp.write_bytes(extracted.read())
                tmp.replace(out / Path(member).name)
    found = path()
    assert found is not None
    return found


def script_tags() -> tuple[str, bool]:
    """``<script>`` tags that load the widget manager, and whether they work offline. The
    bundle's webpack runtime throws when every script is inline, so an empty ``data:`` script
    comes first (its assets, icon fonts, are not used here)."""
    try:
        bundle = fetch()
    except FpexploreError as exc:
        print(f"fpexplore: warning: {exc}", file=sys.stderr)
        return f'<script src="{CDN}"></script>', False
    js = bundle.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return f'<script src="data:text/javascript,"></script><script>{js}</script>', True


def command(_: object = None) -> int:
    """``fpexplore setup widgets``: fetch the bundle (or find it cached) and print its path."""
    print(fetch())
    return 0
