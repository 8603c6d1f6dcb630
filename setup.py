"""Build hook: ship what the lessons read (``data/gpu`` records, ``data/images`` samples, the
fingerprints and the real machines' records) inside the package as ``fpexplore/data``, so an
installed wheel finds them with `importlib.resources`.

Everything else is configured in ``pyproject.toml``. The checkout keeps ``data/`` as the one
source: new recordings go there, and editable installs read it directly (``fpexplore.paths``).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: folder under data/ -> the files of it that are shipped (gpu: every record, subfolders too)
PACKAGE_DATA = {
    "gpu": ("**/*.json",),
    "images": ("*.png", "*.jpg", "README.md"),
    "fingerprints": ("*.json",),
    "machines": ("*/*.json", "README.md"),
}


def data_files() -> list[Path]:
    """The checkout's data files that go into the package, relative to ``data/``."""
    found = []
    for folder, patterns in PACKAGE_DATA.items():
        for pattern in patterns:
            found += (ROOT / "data" / folder).glob(pattern)
    return sorted(p.relative_to(ROOT / "data") for p in found)


class BuildWithData(build_py):
    """`build_py` that also copies ``data/`` into ``<build>/fpexplore/data``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's data/ itself
            return
        for rel in data_files():
            target = Path(self.build_lib, "fpexplore", "data", rel)
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / "data" / rel), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        extra = [str(Path(self.build_lib, "fpexplore", "data", rel)) for rel in data_files()]
        return [*super().get_outputs(include_bytecode), *extra]


if __name__ == "__main__":  # as the build backend runs it; importing it builds nothing
    setup(cmdclass={"build_py": BuildWithData})
