"""Export a torch model as TorchScript that returns every layer's inputs and output, for
another runtime (DJL, the C++ LibTorch program) whose flat tuple is cut back into a `Capture`.

The model is not edited: a wrapper hooks its leaf modules while ``torch.jit.trace`` records one
call, so the hooks' tensors become outputs of the graph. Python control flow is frozen at the
traced input (the zoo models have none).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidInput, InvalidParameter
from .capture import Tap


@dataclass(frozen=True)
class Export:
    """A TorchScript file and which tuple elements belong to which layer."""

    path: Path
    layout: tuple[tuple[str, int], ...]  # (layer, number of inputs): inputs, then its output
    torch_version: str

    def size(self) -> int:
        return sum(n + 1 for _, n in self.layout)

    def taps(self, arrays: Sequence[np.ndarray]) -> dict[str, Tap]:
        """Cut the runtime's flat list of arrays back into layer taps."""
        if len(arrays) != self.size():
            raise InvalidInput(
                f"the exported model returned {len(arrays)} arrays; its layout expects "
                f"{self.size()} ({len(self.layout)} layers)."
            )
        out: dict[str, Tap] = {}
        i = 0
        for key, n in self.layout:
            out[key] = Tap(tuple(np.asarray(a) for a in arrays[i : i + n]), arrays[i + n])
            i += n + 1
        return out


def export_taps(model: Any, inputs: Sequence[np.ndarray], path: str | Path) -> Export:
    """Trace ``model(*inputs)`` returning every leaf module's tensor inputs and output; save it
    to ``path`` (``.pt``) with its layout beside it (``path`` + ``.json``)."""
    from .. import backends

    torch = backends.load("torch")
    if not isinstance(model, torch.nn.Module):
        raise InvalidParameter("model", model, "a torch.nn.Module", "export_taps")
    layers = [(name, m) for name, m in model.named_modules() if name and not any(m.children())]
    if not layers:
        raise InvalidInput("export_taps: the model has no leaf modules to hook; nothing to export.")
    layout: list[tuple[str, int]] = []

    class Taps(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *xs: Any) -> tuple[Any, ...]:
            got: list[Any] = []
            layout.clear()

            def hook_for(layer: str) -> Any:
                def hook(module: Any, args: tuple[Any, ...], output: Any) -> None:
                    if not torch.is_tensor(output):
                        return  # tuple outputs are not layers we can check (as capture_torch)
                    calls = sum(k == layer or k.startswith(layer + "#") for k, _ in layout)
                    key = layer if not calls else f"{layer}#{calls + 1}"
                    ins = [a for a in args if torch.is_tensor(a)]
                    layout.append((key, len(ins)))
                    got.extend([*ins, output])

                return hook

            handles = [m.register_forward_hook(hook_for(n)) for n, m in layers]
            try:
                self.model(*xs)
            finally:
                for h in handles:
                    h.remove()
            return tuple(got)

    xs = tuple(torch.from_numpy(np.ascontiguousarray(x)) for x in inputs)
    with warnings.catch_warnings():
        # torch.jit.trace is deprecated in favour of torch.export, but TorchScript is what DJL
        # and a LibTorch program load; the tracer's own warnings are about frozen control flow
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", getattr(torch.jit, "TracerWarning", UserWarning))
        with torch.no_grad():
            traced = torch.jit.trace(Taps(), xs, check_trace=False)
    path = Path(path)
    traced.save(str(path))
    path.with_suffix(path.suffix + ".json").write_text(json.dumps(layout), encoding="utf-8")
    return Export(path, tuple(layout), str(torch.__version__))


def file_format_version(path: str | Path) -> int:
    """The TorchScript file format version in the archive (the reader's must support it)."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("/version") or n == "version")
        return int(z.read(name).decode().strip())
