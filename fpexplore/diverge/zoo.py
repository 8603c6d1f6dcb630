"""A small model zoo, in torch and Keras with the same weights, with mistakes to plant.

Three models, small enough that every layer's exact result is computed in seconds:

- ``mlp``: Linear 16→32, ReLU, Dropout, Linear 32→32, Tanh, Linear 32→10, Softmax.
- ``cnn``: Conv 3→8 (3x3, stride 1, padding 1), BatchNorm, ReLU, Conv 8→16 (3x3, stride 2,
  padding 1: "same" output size), BatchNorm, ReLU, global mean, Dropout, Linear 16→10.
- ``transformer``: one pre-LayerNorm block, one head, sequence 8, width 16: LayerNorm, q/k/v
  projections, q·kᵀ, scaling by 1/4, softmax, ·v, projection, residual add, LayerNorm,
  Linear 16→64, GELU (erf form), Dropout, Linear 64→16, residual add.

Weights come from a seeded numpy generator and are rounded to float32; every framework gets
the very same bits. Plants (mistakes made on purpose, in the second implementation):

- ``epsilon``: BatchNorm/LayerNorm epsilon 1e-3 (Keras's BatchNormalization default) instead
  of 1e-5;
- ``padding``: the stride-2 convolution padded TensorFlow's way for "same" (0 before, 1 after)
  instead of torch's symmetric padding=1;
- ``gelu``: GELU's tanh approximation instead of the erf form;
- ``dropout``: the dropout layer left in train mode.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from ..errors import InvalidParameter
from .specs import conv_pads

MODELS = ("mlp", "cnn", "transformer")
PLANTS: dict[str, tuple[str, ...]] = {
    "mlp": ("dropout",),
    "cnn": ("epsilon", "padding", "dropout"),
    "transformer": ("epsilon", "gelu", "dropout"),
}
# the layer each plant first changes: what the divergence finder must point at
PLANTED_LAYER: dict[tuple[str, str], str] = {
    ("mlp", "dropout"): "drop",
    ("cnn", "epsilon"): "bn1",
    ("cnn", "padding"): "conv2",
    ("cnn", "dropout"): "drop",
    ("transformer", "epsilon"): "ln1",
    ("transformer", "gelu"): "gelu",
    ("transformer", "dropout"): "drop",
}
DROPOUT_P = 0.25
SEQ, WIDTH = 8, 16


def name_of(value: Any, param: str, where: str) -> Any:
    """``value`` as a plain str when it is a string (numpy's ``str_`` and 0-d string arrays
    too); other arrays are refused with `InvalidParameter`; anything else is returned as is."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0 and value.dtype.kind in "US":
            value = value.item()
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        raise InvalidParameter(param, value, "a name (a str, not an array)", where)
    return str(value) if isinstance(value, str) else value


def check(model: Any, plant: Any = None) -> tuple[str, str | None]:
    """Validate a zoo model name and plant; return them (numpy strings as plain str)."""
    model = name_of(model, "model", "diverge.zoo")
    if not isinstance(model, str) or model not in MODELS:
        raise InvalidParameter("model", model, "one of " + ", ".join(MODELS), "diverge.zoo")
    plant = name_of(plant, "plant", f"zoo model {model!r}")
    if plant is not None and (not isinstance(plant, str) or plant not in PLANTS[model]):
        raise InvalidParameter(
            "plant", plant, "None or one of " + ", ".join(PLANTS[model]), f"zoo model {model!r}"
        )
    return model, plant


# ---------------------------------------------------------------------------------------------
# weights and inputs (numpy, float32, seeded)


def _f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _linear(
    rng: np.random.Generator, n_in: int, n_out: int, kernel: tuple[int, ...] = ()
) -> dict[str, np.ndarray]:
    """A Linear layer's (or with ``kernel``, a convolution's) uniform torch-style init."""
    s = 1 / np.sqrt(n_in * np.prod(kernel))
    return {
        "weight": _f32(rng.uniform(-s, s, (n_out, n_in, *kernel))),
        "bias": _f32(rng.uniform(-s, s, n_out)),
    }


def _norm(rng: np.random.Generator, c: int, stats: bool) -> dict[str, np.ndarray]:
    out = {"weight": _f32(rng.uniform(0.5, 1.5, c)), "bias": _f32(rng.uniform(-0.2, 0.2, c))}
    if stats:
        out["mean"] = _f32(rng.uniform(-0.3, 0.3, c))
        out["var"] = _f32(rng.uniform(0.02, 0.3, c))  # small: an epsilon change shows
    return out


def weights(model: str) -> dict[str, dict[str, np.ndarray]]:
    """The model's parameters by layer name (float32 numpy, torch layouts)."""
    return _weights(check(model)[0])


@functools.cache
def _weights(model: str) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng({"mlp": 1, "cnn": 2, "transformer": 3}[model])
    if model == "mlp":
        return {
            "fc1": _linear(rng, 16, 32),
            "fc2": _linear(rng, 32, 32),
            "fc3": _linear(rng, 32, 10),
        }
    if model == "cnn":
        return {
            "conv1": _linear(rng, 3, 8, (3, 3)),
            "bn1": _norm(rng, 8, True),
            "conv2": _linear(rng, 8, 16, (3, 3)),
            "bn2": _norm(rng, 16, True),
            "fc": _linear(rng, 16, 10),
        }
    w = WIDTH
    return {
        "ln1": _norm(rng, w, False),
        "q": _linear(rng, w, w),
        "k": _linear(rng, w, w),
        "v": _linear(rng, w, w),
        "proj": _linear(rng, w, w),
        "ln2": _norm(rng, w, False),
        "fc1": _linear(rng, w, 4 * w),
        "fc2": _linear(rng, 4 * w, w),
    }


def example_input(model: str) -> np.ndarray:
    """The model's input (torch layout), float32, seeded."""
    return _example_input(check(model)[0])


@functools.cache
def _example_input(model: str) -> np.ndarray:
    rng = np.random.default_rng(100 + MODELS.index(model))
    shape = {"mlp": (4, 16), "cnn": (2, 3, 8, 8), "transformer": (1, SEQ, WIDTH)}[model]
    return _f32(rng.standard_normal(shape) * 1.5)


# ---------------------------------------------------------------------------------------------
# torch


class _Parts(NamedTuple):
    """torch and the zoo's models in it."""

    torch: Any
    MLP: Any
    CNN: Any
    Block: Any


def _layers(torch: Any) -> tuple[Any, ...]:
    """The zoo-only layers: MatMul, Add, Scale, MeanPool and Conv2dSame."""
    nn = torch.nn
    functional = torch.nn.functional

    class MatMul(nn.Module):
        fpx_kind = "matmul"

        def __init__(self, transpose_b: bool = False) -> None:
            super().__init__()
            self.transpose_b = transpose_b

        def fpx_params(self) -> dict[str, Any]:
            return {"transpose_b": self.transpose_b}

        def forward(self, a: Any, b: Any) -> Any:
            return a @ (b.transpose(-1, -2) if self.transpose_b else b)

    class Add(nn.Module):
        fpx_kind = "add"

        def forward(self, a: Any, b: Any) -> Any:
            return a + b

    class Scale(nn.Module):
        fpx_kind = "scale"

        def __init__(self, factor: float) -> None:
            super().__init__()
            self.factor = factor

        def fpx_params(self) -> dict[str, Any]:
            return {"factor": self.factor}

        def forward(self, x: Any) -> Any:
            return x * self.factor

    class MeanPool(nn.Module):
        fpx_kind = "mean_pool"

        def forward(self, x: Any) -> Any:
            return x.mean(dim=(2, 3))

    class Conv2dSame(nn.Conv2d):
        """A convolution padded as TensorFlow pads 'same' (the extra row/column at the end)."""

        def forward(self, x: Any) -> Any:
            p = {"padding": "same_tf", "weight": self.weight, "stride": self.stride}
            top, bottom, left, right = conv_pads({**p, "dilation": (1, 1)}, x.shape)
            x = functional.pad(x, [left, right, top, bottom])
            return functional.conv2d(x, self.weight, self.bias, self.stride)

    return MatMul, Add, Scale, MeanPool, Conv2dSame


@functools.cache
def _torch_parts() -> _Parts:
    """The zoo's torch models (defined on first use: importing this module needs no torch)."""
    from .. import backends

    torch = backends.load("torch")
    nn = torch.nn
    MatMul, Add, Scale, MeanPool, Conv2dSame = _layers(torch)

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.relu1 = nn.Linear(16, 32), nn.ReLU()
            self.drop = nn.Dropout(DROPOUT_P)
            self.fc2, self.tanh = nn.Linear(32, 32), nn.Tanh()
            self.fc3, self.softmax = nn.Linear(32, 10), nn.Softmax(dim=-1)

        def forward(self, x: Any) -> Any:
            x = self.drop(self.relu1(self.fc1(x)))
            return self.softmax(self.fc3(self.tanh(self.fc2(x))))

    class CNN(nn.Module):
        def __init__(self, eps: float, same_tf: bool) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, stride=1, padding=1)
            self.bn1, self.relu1 = nn.BatchNorm2d(8, eps=eps), nn.ReLU()
            self.conv2 = (
                Conv2dSame(8, 16, 3, stride=2)
                if same_tf
                else nn.Conv2d(8, 16, 3, stride=2, padding=1)
            )
            self.bn2, self.relu2 = nn.BatchNorm2d(16, eps=eps), nn.ReLU()
            self.pool, self.drop, self.fc = MeanPool(), nn.Dropout(DROPOUT_P), nn.Linear(16, 10)

        def forward(self, x: Any) -> Any:
            x = self.relu1(self.bn1(self.conv1(x)))
            x = self.relu2(self.bn2(self.conv2(x)))
            return self.fc(self.drop(self.pool(x)))

    class Block(nn.Module):
        def __init__(self, eps: float, gelu: str) -> None:
            super().__init__()
            w = WIDTH
            self.ln1 = nn.LayerNorm(w, eps=eps)
            self.q, self.k, self.v = nn.Linear(w, w), nn.Linear(w, w), nn.Linear(w, w)
            self.scores, self.scale = MatMul(transpose_b=True), Scale(0.25)
            self.attn, self.ctx = nn.Softmax(dim=-1), MatMul()
            self.proj, self.res1 = nn.Linear(w, w), Add()
            self.ln2, self.fc1 = nn.LayerNorm(w, eps=eps), nn.Linear(w, 4 * w)
            self.gelu, self.drop = nn.GELU(approximate=gelu), nn.Dropout(DROPOUT_P)
            self.fc2, self.res2 = nn.Linear(4 * w, w), Add()

        def forward(self, x: Any) -> Any:
            h = self.ln1(x)
            a = self.attn(self.scale(self.scores(self.q(h), self.k(h))))
            x = self.res1(x, self.proj(self.ctx(a, self.v(h))))
            return self.res2(x, self.fc2(self.drop(self.gelu(self.fc1(self.ln2(x))))))

    return _Parts(torch, MLP, CNN, Block)


def torch_model(model: str, plant: str | None = None) -> Any:
    """The zoo model in torch with the zoo's weights, in eval mode (but for a dropout plant)."""
    model, plant = check(model, plant)
    parts = _torch_parts()
    torch = parts.torch
    eps = 1e-3 if plant == "epsilon" else 1e-5
    if model == "mlp":
        m = parts.MLP()
    elif model == "cnn":
        m = parts.CNN(eps, plant == "padding")
    else:
        m = parts.Block(eps, "tanh" if plant == "gelu" else "none")
    state = {}
    for layer, ps in weights(model).items():
        for key, arr in ps.items():
            name = {"mean": "running_mean", "var": "running_var"}.get(key, key)
            state[f"{layer}.{name}"] = torch.from_numpy(arr.copy())
    missing, _ = m.load_state_dict(state, strict=False)
    if any(not k.endswith("num_batches_tracked") for k in missing):
        raise RuntimeError(f"zoo weights do not cover {missing}")  # a bug in the zoo itself
    m.eval()
    if plant == "dropout":
        m.drop.train()
    return m


# ---------------------------------------------------------------------------------------------
# Keras


def keras_model(model: str, plant: str | None = None) -> tuple[Any, dict[str, tuple[str, str]]]:
    """The zoo model as a functional Keras model with the same weights, and its layer groups
    (for `capture_keras`): image models take NHWC input."""
    from .. import backends

    model, plant = check(model, plant)
    tf = backends.load("tensorflow")
    keras = tf.keras
    layers = keras.layers
    ops = keras.ops
    w = weights(model)
    eps = 1e-3 if plant == "epsilon" else 1e-5
    groups: dict[str, tuple[str, str]] = {}
    built: list[tuple[Any, dict[str, np.ndarray]]] = []

    def dense(name: str, units: int) -> Any:
        la = layers.Dense(units, name=name)
        built.append((la, w[name]))
        return la

    def drop(h: Any) -> Any:
        la = layers.Dropout(DROPOUT_P, name="drop", seed=0)
        return la(h, training=True) if plant == "dropout" else la(h)

    if model == "mlp":
        x = keras.Input((16,), name="x")
        h = drop(layers.ReLU(name="relu1")(dense("fc1", 32)(x)))
        h = layers.Activation("tanh", name="tanh")(dense("fc2", 32)(h))
        out = layers.Softmax(axis=-1, name="softmax")(dense("fc3", 10)(h))
    elif model == "cnn":
        x = keras.Input((8, 8, 3), name="x")
        h = layers.ZeroPadding2D(1, name="conv1_pad")(x)
        c1 = layers.Conv2D(8, 3, strides=1, padding="valid", name="conv1")
        h = c1(h)
        groups["conv1"] = ("conv1_pad", "conv1")
        bn1 = layers.BatchNormalization(epsilon=eps, name="bn1")
        h = layers.ReLU(name="relu1")(bn1(h))
        c2 = layers.Conv2D(
            16, 3, strides=2, padding="same" if plant == "padding" else "valid", name="conv2"
        )
        if plant != "padding":
            h = layers.ZeroPadding2D(1, name="conv2_pad")(h)
            groups["conv2"] = ("conv2_pad", "conv2")
        h = c2(h)
        bn2 = layers.BatchNormalization(epsilon=eps, name="bn2")
        h = layers.ReLU(name="relu2")(bn2(h))
        h = drop(layers.GlobalAveragePooling2D(name="pool")(h))
        out = dense("fc", 10)(h)
        built += [(c1, w["conv1"]), (c2, w["conv2"]), (bn1, w["bn1"]), (bn2, w["bn2"])]
    else:
        d = WIDTH

        class MatMul(layers.Layer):
            def __init__(self, transpose_b: bool = False, **kw: Any) -> None:
                super().__init__(**kw)
                self.transpose_b = transpose_b

            def call(self, a: Any, b: Any) -> Any:
                return ops.matmul(a, ops.swapaxes(b, -1, -2) if self.transpose_b else b)

        x = keras.Input((SEQ, d), name="x")
        ln1 = layers.LayerNormalization(epsilon=eps, name="ln1")
        h = ln1(x)
        q, k, v = dense("q", d)(h), dense("k", d)(h), dense("v", d)(h)
        s = layers.Rescaling(0.25, name="scale")(MatMul(True, name="scores")(q, k))
        a = layers.Softmax(axis=-1, name="attn")(s)
        r1 = layers.Add(name="res1")([x, dense("proj", d)(MatMul(name="ctx")(a, v))])
        ln2 = layers.LayerNormalization(epsilon=eps, name="ln2")
        g = layers.Activation(
            lambda t: keras.activations.gelu(t, approximate=plant == "gelu"), name="gelu"
        )(dense("fc1", 4 * d)(ln2(r1)))
        out = layers.Add(name="res2")([r1, dense("fc2", d)(drop(g))])
        built += [(ln1, w["ln1"]), (ln2, w["ln2"])]
    m = keras.Model(x, out, name=f"zoo_{model}")
    layouts = {"Dense": (1, 0), "Conv2D": (2, 3, 1, 0)}  # torch's weight axes in Keras's order
    for la, ps in built:
        axes = layouts.get(type(la).__name__)
        weight = ps["weight"].transpose(axes).copy() if axes else ps["weight"]
        la.set_weights([weight, *(ps[k] for k in ("bias", "mean", "var") if k in ps)])
    return m, groups
