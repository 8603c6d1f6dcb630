"""train_vs_eval's other modes: autograd on/off, noise-injecting activations (RReLU, Keras
GaussianNoise), and the dropout-removal example's ``load_state_dict`` as the articles write it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...result import Claim, Outcome
from ...result.spec import ClaimSpec, declare_texts
from .data import AutogradModes

MODE_SEEDS = 3  # the autograd-mode claim is judged on this many seeds of weights and inputs
LOWER, UPPER = 1 / 8, 1 / 3  # torch's RReLU defaults

#: the claims of this part, as stated before measuring (declared in `train_vs_eval.CLAIMS`)
MODES_TEXTS = {
    "autograd_modes_same_bits": "the same forward gives the same bits with autograd on, under "
    "no_grad and under inference_mode",
    "transformer_grad_changes_bits": "nn.TransformerEncoderLayer in eval() gives other bits "
    "with autograd on than under no_grad (its fused fast path runs only when no grad is "
    "needed), and the same bits under no_grad and inference_mode",
    "transformer_grad_changes_bits_cuda": "on a CUDA GPU too, nn.TransformerEncoderLayer in "
    "eval() gives other bits with autograd on than under no_grad, and the same bits under "
    "no_grad and inference_mode",
    "state_dict_example_raises": "the article's model.load_state_dict into the model without "
    "Dropout raises (its keys no longer match)",
    "rrelu_train_varies": "RReLU in train mode draws a new negative slope per element each call",
    "rrelu_eval_fixed": "RReLU in eval mode is leaky_relu with slope (lower + upper) / 2, bit "
    "for bit, every call",
}
KERAS_NOISE_TEXTS = {
    "keras_noise_eval_identity": "Keras GaussianNoise varies with training=True and is the "
    "identity with training=False",
}


def _digest(a: Any) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _three_modes(torch: Any, model: Any, x: Any) -> list[np.ndarray]:
    """``model(x)`` under enable_grad, no_grad and inference_mode, as numpy arrays."""
    out = []
    for mode in (torch.enable_grad, torch.no_grad, torch.inference_mode):
        with mode():
            out.append(model(x).detach().cpu().numpy().copy())
    return out


def _autograd_modes(torch: Any, seed: int) -> tuple[int, int]:
    """(seeds whose three forwards agree bit for bit, seeds tried)."""
    same = 0
    for s in range(seed, seed + MODE_SEEDS):
        torch.manual_seed(s)
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3),
            torch.nn.GELU(),
            torch.nn.Flatten(),
            torch.nn.LayerNorm(4 * 6 * 6),
            torch.nn.Linear(4 * 6 * 6, 5),
            torch.nn.Softmax(-1),
        ).eval()
        a, b, c = _three_modes(torch, model, torch.randn(4, 3, 8, 8))
        same += _digest(a) == _digest(b) == _digest(c)
    return same, MODE_SEEDS


#: nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward), batch_first, in eval(); its
#: fused fast path (torch._transformer_encoder_layer_fwd) runs only when no grad is needed
TRANSFORMER = (64, 4, 128)


def transformer_modes(torch: Any, seed: int, device: str = "cpu") -> list[dict[str, Any]]:
    """A transformer encoder layer in eval() under grad, no_grad and inference_mode, on
    ``device``, for `MODE_SEEDS` seeds: per seed, the float32 outputs whose bits differ between
    grad and no_grad and between no_grad and inference_mode, and the largest |grad − no_grad|."""
    rows = []
    d, heads, ff = TRANSFORMER
    for s in range(seed, seed + MODE_SEEDS):
        torch.manual_seed(s)
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, batch_first=True)
        layer = layer.eval().to(device)
        a, b, c = _three_modes(torch, layer, torch.randn(4, 16, d).to(device))
        rows.append(
            {
                "seed": s,
                "values": int(a.size),
                "grad_vs_no_grad": int((a.view(np.uint32) != b.view(np.uint32)).sum()),
                "no_grad_vs_inference": int((b.view(np.uint32) != c.view(np.uint32)).sum()),
                "max_abs_diff": float(np.abs(a.astype(np.float64) - b).max()),
            }
        )
    return rows


def transformer_changes(rows: list[dict[str, Any]]) -> bool:
    """Whether grad mode gave other bits in every seed, no_grad and inference_mode the same."""
    return bool(rows) and all(
        r["grad_vs_no_grad"] > 0 and r["no_grad_vs_inference"] == 0 for r in rows
    )


def transformer_text(rows: list[dict[str, Any]], where: str) -> str:
    """What ``rows`` measured, in words, for a claim's text."""
    moved = sum(r["grad_vs_no_grad"] > 0 for r in rows)
    same = sum(r["no_grad_vs_inference"] == 0 for r in rows)
    worst = max((r["max_abs_diff"] for r in rows), default=0.0)
    per = ", ".join(f"{r['grad_vs_no_grad']} of {r['values']}" for r in rows)
    return (
        f" ({where}: grad vs no_grad differ in {moved} of {len(rows)} seeds ({per} outputs, "
        f"max |diff| {worst:.2g}); no_grad and inference_mode identical in {same} of "
        f"{len(rows)})"
    )


def _state_dict_example(torch: Any) -> str:
    """The article's code: copy a Dropout model's state dict into the model without it. Returns
    the first line of the error ('' if it loaded)."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.Dropout(0.5), torch.nn.Linear(6, 2))
    plain = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.Linear(6, 2))
    try:
        plain.load_state_dict(model.state_dict())
    except RuntimeError as exc:
        return " ".join(str(exc).split())[:200]
    return ""


#: the CUDA transformer claim, and the part it needs: the GPU myths record
GPU_KEY = "transformer_grad_changes_bits_cuda"
GPU_PART = "the GPU myths record"

_T, _K, _TEST = ("torch",), ("tensorflow",), "tests/test_train_vs_eval.py"
MODES_CLAIMS = {
    **declare_texts({k: t for k, t in MODES_TEXTS.items() if k != GPU_KEY}, _T, test=_TEST),
    # stated where the GPU myths record is (read from it, torch or not); until then the
    # myth's row names the command
    GPU_KEY: ClaimSpec(
        GPU_KEY,
        MODES_TEXTS[GPU_KEY],
        (GPU_PART,),
        applies="a CUDA GPU (recorded)",
        test=_TEST,
        occasional=True,
    ),
}
KERAS_NOISE_CLAIMS = declare_texts(KERAS_NOISE_TEXTS, _K, test=_TEST)


def _said(key: str, holds: bool, measured: str) -> Claim:
    """Claim ``key`` decided: its declared text, then what this run measured."""
    return {**MODES_CLAIMS, **KERAS_NOISE_CLAIMS}[key].claim(holds, measured)


def gpu_missing() -> str | None:
    """Why the CUDA transformer claim cannot be checked (None: the record is here)."""
    from .._gpu import myth_record

    return None if myth_record.recorded() is not None else myth_record.NO_RECORD


def gpu_modes() -> tuple[dict[str, Claim], Any]:
    """The CUDA transformer claim and its rows, from the GPU myths record ({} and None
    without one: `settle` then says how to make it)."""
    from .._gpu import myth_record

    rec = myth_record.recorded()
    if rec is None:
        return {}, None
    rows = rec["autograd_modes"]
    claim = _said(
        "transformer_grad_changes_bits_cuda",
        transformer_changes(rows),
        transformer_text(rows, myth_record.where(rec)),
    )
    return {"transformer_grad_changes_bits_cuda": claim}, (myth_record.where(rec), rows)


def torch_part(torch: Any, seed: int, runs: int) -> tuple[list[Outcome], dict[str, Claim], dict]:
    same, tried = _autograd_modes(torch, seed)
    layer_rows = transformer_modes(torch, seed)
    gpu_claims, gpu = gpu_modes()
    raised = _state_dict_example(torch)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, generator=g)
    x[x > 0] *= -1  # negative inputs: the ones RReLU scales
    x[0] = -1.0
    torch.manual_seed(seed)
    train = np.stack(
        [torch.nn.functional.rrelu(x, LOWER, UPPER, training=True).numpy() for _ in range(runs)]
    )
    evals = np.stack(
        [torch.nn.functional.rrelu(x, LOWER, UPPER, training=False).numpy() for _ in range(runs)]
    )
    leaky = torch.nn.functional.leaky_relu(x, (LOWER + UPPER) / 2).numpy()
    slopes = train[:, 0] / -1.0
    distinct = len({_digest(r) for r in train})
    claims = {
        "autograd_modes_same_bits": _said(
            "autograd_modes_same_bits",
            same == tried,
            f" (a Conv-GELU-LayerNorm-Linear-softmax model, {same} of {tried} seeds)",
        ),
        "transformer_grad_changes_bits": _said(
            "transformer_grad_changes_bits",
            transformer_changes(layer_rows),
            transformer_text(layer_rows, f"this CPU, torch {torch.__version__}"),
        ),
        **gpu_claims,
        "state_dict_example_raises": _said(
            "state_dict_example_raises",
            bool(raised) and "Missing key" in raised,
            f": {raised or 'it loaded'} (the Linear after Dropout is '2.' in one model and '1.' "
            "in the other; copying layer by layer works)",
        ),
        "rrelu_train_varies": _said(
            "rrelu_train_varies",
            distinct == runs
            and bool(((slopes >= np.float32(LOWER)) & (slopes <= np.float32(UPPER))).all()),
            f", in [{LOWER:.4g}, {UPPER:.4g}]: {distinct} distinct outputs in {runs} calls",
        ),
        "rrelu_eval_fixed": _said(
            "rrelu_eval_fixed",
            len({_digest(r) for r in evals}) == 1 and _digest(evals[0]) == _digest(leaky),
            f" (slope {(LOWER + UPPER) / 2:.6g}, {runs} calls)",
        ),
    }
    outcomes = [
        Outcome(f"torch F.rrelu, training={t}", "torch", value=v[0], version=torch.__version__)
        for t, v in ((True, train), (False, evals))
    ]
    data = {
        "autograd_modes": AutogradModes(
            same,
            tried,
            transformer=layer_rows,
            gpu_rows=None if gpu is None else gpu[1],
            gpu_where=(gpu_missing() or "") if gpu is None else gpu[0],
        ),
        "rrelu_train_distinct": distinct,
    }
    return outcomes, claims, data


def keras_part(keras: Any, seed: int, runs: int) -> tuple[list[Outcome], dict[str, Claim]]:
    x = np.random.Generator(np.random.PCG64(seed)).standard_normal((4, 8)).astype(np.float32)
    keras.utils.set_random_seed(seed)
    layer = keras.layers.GaussianNoise(0.1, seed=seed)
    train = [np.asarray(layer(x, training=True)) for _ in range(runs)]
    evals = [np.asarray(layer(x, training=False)) for _ in range(runs)]
    distinct = len({_digest(r) for r in train})
    claims = {
        "keras_noise_eval_identity": _said(
            "keras_noise_eval_identity",
            distinct == runs and all(_digest(e) == _digest(x) for e in evals),
            f" (Keras has no RReLU): {distinct} distinct outputs in {runs} calls with "
            "training=True, its input bit for bit with training=False",
        )
    }
    outcomes = [
        Outcome(
            "Keras GaussianNoise, training=True",
            "tensorflow",
            value=train[0],
            version=keras.__version__,
        )
    ]
    return outcomes, claims
