"""Capture every layer's inputs and output of a model without editing it.

torch: forward hooks on the leaf modules. Keras: a functional sub-model whose outputs are every
layer's input and output tensors. Both give a `Capture`: layer name -> `Tap` (inputs, output)
as float numpy arrays in torch's layout (channels first), so two implementations line up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import FpexploreError, InvalidInput, InvalidParameter, ModelRaised


@dataclass(frozen=True)
class Tap:
    """One layer call: its input arrays and its output array (torch layout)."""

    inputs: tuple[np.ndarray, ...]
    output: np.ndarray


@dataclass(frozen=True)
class Capture:
    """What one implementation computed, layer by layer, in call order."""

    implementation: str
    version: str
    taps: dict[str, Tap]
    modules: dict[str, Any] = field(default_factory=dict)  # torch only: name -> module

    def tap(self, layer: str) -> Tap:
        """Layer ``layer``'s call; KeyError names the layers there are."""
        if layer not in self.taps:
            raise KeyError(f"no layer {layer!r} in {self.implementation}: {', '.join(self.taps)}")
        return self.taps[layer]


def _to_numpy(t: Any) -> np.ndarray:
    if hasattr(t, "detach"):
        t = t.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy().copy()
    return np.asarray(t)


def capture_torch(model: Any, *inputs: Any, seed: int | None = 0, name: str = "torch") -> Capture:
    """Run ``model(*inputs)`` (tensors or numpy arrays) once, recording every leaf module.

    The model is not put in eval mode: what it does is what gets measured. ``seed`` seeds
    torch's RNG first (None: left alone). An error it raises becomes `ModelRaised`, naming the
    module that raised.
    """
    from .. import backends

    torch = backends.load("torch")
    if not isinstance(model, torch.nn.Module):
        raise InvalidParameter("model", model, "a torch.nn.Module", "capture_torch")
    taps: dict[str, Tap] = {}
    modules: dict[str, Any] = {}
    handles = []
    running: list[str] = []  # the modules entered and not yet left: the last one raised

    def enter(layer: str) -> Callable[[Any, Any], None]:
        return lambda module, args: running.append(layer)

    def leave(module: Any, args: tuple[Any, ...], output: Any) -> None:
        if running:
            running.pop()

    def hook_for(layer: str):
        def hook(module: Any, args: tuple[Any, ...], output: Any) -> None:
            calls = sum(k == layer or k.startswith(layer + "#") for k in taps)
            key = layer if not calls else f"{layer}#{calls + 1}"
            if not hasattr(output, "detach"):
                return  # tuple outputs (e.g. MultiheadAttention) are not layers we can check
            ins = tuple(_to_numpy(a) for a in args if hasattr(a, "detach"))
            taps[key] = Tap(ins, _to_numpy(output))
            modules[key] = module

        return hook

    for layer, module in model.named_modules():
        if layer and not any(True for _ in module.children()):
            handles.append(module.register_forward_hook(hook_for(layer)))
        handles.append(module.register_forward_pre_hook(enter(layer)))
        handles.append(module.register_forward_hook(leave))
    xs = [
        torch.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x
        for x in inputs
    ]
    try:
        if seed is not None:
            torch.manual_seed(seed)
        with torch.no_grad():
            model(*xs)
    except FpexploreError:
        raise
    except Exception as exc:
        layer = running[-1] if running else ""
        kind = type(dict(model.named_modules()).get(layer, model)).__name__
        raise ModelRaised(layer, exc, "capture_torch", kind) from exc
    finally:
        for h in handles:
            h.remove()
    if not taps:
        raise InvalidInput(
            "capture_torch: the model has no leaf modules to hook; nothing was seen."
        )
    return Capture(name, f"torch {torch.__version__}", taps, modules)


def capture_keras(
    model: Any,
    *inputs: Any,
    groups: Mapping[str, tuple[str, str]] | None = None,
    channels_last: bool = True,
    name: str = "keras",
) -> Capture:
    """Every layer's input and output of a functional Keras model, in torch's layout.

    ``inputs`` are given in torch's layout (NCHW for images): with ``channels_last`` they are
    transposed to NHWC for Keras and 4-D results are transposed back. ``groups`` names layers
    that implement one reference layer together: ``{"conv2": ("conv2_pad", "conv2")}`` takes
    the input of ``conv2_pad`` and the output of ``conv2`` (their own taps are then dropped).
    """
    from .. import backends

    tf = backends.load("tensorflow")
    keras = tf.keras
    groups = dict(groups or {})
    if not isinstance(getattr(model, "layers", None), list | tuple):
        raise InvalidParameter("model", model, "a Keras model (with .layers)", "capture_keras")
    layers = [la for la in model.layers if type(la).__name__ != "InputLayer"]
    by_name = {la.name: la for la in layers}
    known = f"layer names of the model ({', '.join(by_name)})"
    for key, (first, last) in groups.items():
        if first not in by_name or last not in by_name:
            raise InvalidParameter("groups", {key: (first, last)}, known, "capture_keras")
    inside = {n for f, la in groups.values() for n in (f, la)}
    plan: list[tuple[str, Any, Any]] = []  # (name, layer giving inputs, layer giving output)
    for la in layers:
        if la.name in inside:
            for key, (first, last) in groups.items():
                if la.name == last:
                    plan.append((key, by_name[first], la))
            continue
        plan.append((la.name, la, la))
    tensors: list[Any] = []
    index: list[tuple[str, list[int], int]] = []
    for key, src, dst in plan:
        ins = src.input if isinstance(src.input, list | tuple) else [src.input]
        ii = list(range(len(tensors), len(tensors) + len(ins)))
        tensors += ins
        index.append((key, ii, len(tensors)))
        tensors.append(dst.output)
    probe = keras.Model(model.inputs, tensors)

    def to_keras(x: Any) -> np.ndarray:
        a = np.asarray(x)
        return np.transpose(a, (0, 2, 3, 1)) if channels_last and a.ndim == 4 else a

    def from_keras(a: Any) -> np.ndarray:
        a = np.asarray(a)
        return np.transpose(a, (0, 3, 1, 2)).copy() if channels_last and a.ndim == 4 else a

    # no training= argument: it would override a layer called with training=True on purpose
    outs = probe([to_keras(x) for x in inputs])
    arrays = [from_keras(o.numpy() if hasattr(o, "numpy") else o) for o in outs]
    taps = {key: Tap(tuple(arrays[i] for i in ii), arrays[o]) for key, ii, o in index}
    return Capture(name, f"keras {keras.__version__} (TensorFlow {tf.__version__})", taps)
