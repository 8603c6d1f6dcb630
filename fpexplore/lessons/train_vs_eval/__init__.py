"""Lesson: dropout and batch normalization behave differently in train and eval mode.

Dropout zeroes activations at random and scales the kept ones by 1/(1-p) while training, and
is the identity in eval mode. BatchNorm normalizes with the batch's own statistics (biased
variance) while training and with the running statistics in eval mode; torch stores the
unbiased variance in running_var, Keras the biased one, and the two libraries use different
momentum conventions and epsilons. Every statement is checked on the run's own numbers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import backends, metrics
from ...memo import Memo
from ...params import Interval, Options
from ...result import Claim, Comparison, Outcome
from ...truth import reference
from .._base import Lesson, declare_texts, torch_threads
from . import modes as _train_modes
from .data import BnRuns, TrainEvalData
from .figures import C, figure
from .figures import figure_svg as figure_svg  # the explorer's SVG face

BOUND_OPS = 8  # rounding steps budgeted: mean, variance, +eps, sqrt, divide, scale, shift, store
RUNS_AGAIN = 2  # train-mode BatchNorm calls after the first, on the same batch


def rounding_bound(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    mean: Any,
    var: Any,
    eps: float,
    unit: np.ndarray,
) -> np.ndarray:
    """Per-element error bound, in ULPs of the exact result (``unit``, `metrics.truth_ulp`,
    the unit the errors are measured in), for batch norm computed in float32:
    BOUND_OPS * u * (|x| |a| + |mean| |a| + |beta|) with a = gamma / sqrt(var + eps), plus the
    final rounding. Both frameworks fold the layer into x * a + (beta - mean * a)."""
    a = np.abs(gamma.astype(np.float64)) / np.sqrt(np.asarray(var, dtype=np.float64) + eps)
    size = (np.abs(x) + np.abs(np.asarray(mean, dtype=np.float64))) * a + np.abs(beta)
    return BOUND_OPS * 2.0**-24 * size / unit + 1


def _s(n: int) -> str:
    """The plural ending for a count of ``n``."""
    return "" if n == 1 else "s"


def _one_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, ...)`` run with torch on one intra-op thread (the lesson's tiny tensors are
    far below torch's grain size, so the results are the same): right after TensorFlow ran,
    torch's second thread waits for a core that TensorFlow's threads still hold, and one
    BatchNorm call on 8 x 6 values took 300-500 ms instead of 0.3 ms on a busy 2-core machine."""

    @functools.wraps(fn)
    def run(torch: Any, *args: Any) -> Any:
        with torch_threads(torch, 1):
            return fn(torch, *args)

    return run


@_one_thread
def _dropout_part(
    torch: Any, seed: int, batch: int, p: float, runs: int
) -> tuple[list[Outcome], dict[str, Claim], dict[str, Any]]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, C), torch.nn.Dropout(p), torch.nn.Linear(C, 2))
    x = torch.from_numpy(
        np.random.Generator(np.random.PCG64(seed)).standard_normal((batch, 8)).astype(np.float32)
    )
    with torch.no_grad():
        model.train()
        train_runs = np.stack([model(x).numpy() for _ in range(runs)])
        model.eval()
        eval_runs = np.stack([model(x).numpy() for _ in range(runs)])
        plain = torch.nn.Sequential(torch.nn.Linear(8, C), torch.nn.Linear(C, 2))
        plain[0].load_state_dict(model[0].state_dict())
        plain[1].load_state_dict(model[2].state_dict())
        y_plain = plain(x).numpy()
        drop = torch.nn.Dropout(p).train()
        ones = drop(torch.ones(10_000)).numpy()
    kept = ones[ones != 0]
    # torch's CPU dropout divides the mask by the scalar 1 - p in the tensor's float32:
    # 1 / float32(1 - p), rounded once in float32 (not float32 of the double quotient)
    scale = np.float32(1) / np.float32(1 - p)
    frac, spread = kept.size / ones.size, 5 * np.sqrt(p * (1 - p) / ones.size)
    modes = {"train": train_runs, "eval": eval_runs}
    distinct = {mode: len({r.tobytes() for r in rs}) for mode, rs in modes.items()}
    outcomes = [
        *(
            Outcome(
                f"torch MLP with Dropout, {mode}()",
                "torch",
                value=rs[0],
                version=torch.__version__,
                settings={"p": p},
                note=f"{distinct[mode]} distinct output{_s(distinct[mode])} in {runs} runs",
            )
            for mode, rs in modes.items()
        ),
        Outcome(
            "torch MLP without Dropout, copied weights",
            "torch",
            value=y_plain,
            version=torch.__version__,
        ),
    ]
    claims = {
        "dropout_train_varies": C_["dropout_train_varies"].claim(
            distinct["train"] > 1
            if p > 0
            else bool((train_runs.view(np.uint32) == eval_runs[0].view(np.uint32)).all()),
            distinct=distinct["train"],
            runs=runs,
            p=p,
        ),
        "dropout_eval_fixed": C_["dropout_eval_fixed"].claim(
            distinct["eval"] == 1, f" ({runs} runs)"
        ),
        "dropout_scaling": C_["dropout_scaling"].claim(
            bool(kept.size > 0 and (kept == scale).all() and abs(frac - (1 - p)) <= spread),
            f" = {float(scale):.8g} (float32 division by float32(1 - p)); the kept fraction "
            f"was {frac:.4f} (expected {1 - p:.4f} ± {spread:.4f}, 5 sigma)",
        ),
        "dropout_removed_equals_eval": C_["dropout_removed_equals_eval"].claim(
            bool((y_plain.view(np.uint32) == eval_runs[0].view(np.uint32)).all())
        ),
    }
    data = {
        "train_runs": train_runs,
        "eval_runs": eval_runs,
        "kept_fraction": frac,
        "dropout_scale": float(scale),
    }
    return outcomes, claims, data


def _bn_inputs(seed: int, batch: int) -> dict[str, np.ndarray]:
    """The BatchNorm layer's input (at least 2 samples), weights and running statistics."""
    g = np.random.Generator(np.random.PCG64(seed + 1))
    x = (g.standard_normal((max(batch, 2), C)) * 3 + 1).astype(np.float32)
    gamma = (1 + 0.5 * g.standard_normal(C)).astype(np.float32)
    beta = (0.5 * g.standard_normal(C)).astype(np.float32)
    run_mean = (0.3 * g.standard_normal(C)).astype(np.float32)
    run_var = (1 + g.random(C)).astype(np.float32)
    return {"x": x, "gamma": gamma, "beta": beta, "run_mean": run_mean, "run_var": run_var}


def _bn_truth(seed: int, batch: int, eps: float, training: bool) -> Any:
    """The certified BatchNorm output (mpmath), kept per input, epsilon and mode: moving the
    momentum, p or runs does not recompute it."""

    def make() -> Any:
        v = _bn_inputs(seed, batch)
        stats = {} if training else {"running_mean": v["run_mean"], "running_var": v["run_var"]}
        return reference.batch_norm(
            v["x"], weight=v["gamma"], bias=v["beta"], training=training, eps=eps, **stats
        )

    return _PARTS.get(("truth", seed, batch, eps, training), lambda: _split_once(make()))


def _split_once(truth: Any) -> Any:
    """``truth`` with its float64 split computed once (each measurement against it asks for
    it again, and it converts every element from mpmath); the arrays are made read-only."""
    parts = truth.split_known()
    for a in parts:
        a.setflags(write=False)
    truth.split_known = lambda: parts
    return truth


def _torch_bn_runs(
    torch: Any, v: dict[str, np.ndarray], momentum: float, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, BnRuns]:
    """BatchNorm1d on ``v``'s batch in eval, then train mode: both outputs, the running mean
    and variance after that train step, and the repeated runs (`BnRuns`)."""
    x = v["x"]
    bn = torch.nn.BatchNorm1d(C, eps=eps, momentum=momentum)
    with torch.no_grad():
        bn.weight.copy_(torch.from_numpy(v["gamma"]))
        bn.bias.copy_(torch.from_numpy(v["beta"]))
        bn.running_mean.copy_(torch.from_numpy(v["run_mean"]))
        bn.running_var.copy_(torch.from_numpy(v["run_var"]))
        bn.eval()
        y_eval = bn(torch.from_numpy(x)).numpy()
        bn.train()
        y_train = bn(torch.from_numpy(x)).numpy()
    new_mean, new_var = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    n = x.shape[0]
    # "across runs" with eval() forgotten: the same batch run again in train mode, the first
    # half of it run as a batch of its own, and eval() after those train-mode calls
    with torch.no_grad():
        again = [bn(torch.from_numpy(x)).numpy() for _ in range(RUNS_AGAIN)]
        half = bn(torch.from_numpy(x[: n // 2])).numpy() if n >= 4 else None
        bn.eval()
        y_eval_after = bn(torch.from_numpy(x)).numpy()
    runs = BnRuns(
        len({a.tobytes() for a in [y_train, *again]}),
        1 + RUNS_AGAIN,
        float(np.abs(half - y_train[: n // 2]).max()) if half is not None else None,
        float(np.abs(y_eval_after - y_eval).max()),
    )
    return y_eval, y_train, new_mean, new_var, runs


def _batch1(torch: Any, x: np.ndarray) -> str:
    """torch's error for a train-mode BatchNorm1d on one sample, or "accepted"."""
    try:
        with torch.no_grad():
            torch.nn.BatchNorm1d(C).train()(torch.from_numpy(x[:1]))
    except ValueError as exc:
        return str(exc)
    return "accepted"


def _torch_rows(
    version: str, settings: dict[str, float], key: tuple[int, int, float], *ys: np.ndarray
) -> list[Outcome]:
    """torch's eval() and train() rows (``ys`` in that order), each against its mode's truth
    and rounding bound (``key``: seed, batch, eps)."""
    bounds = _abs_bounds(*key)
    return [
        Outcome.measured(
            f"torch BatchNorm1d {mode}()",
            "torch",
            y,
            _bn_truth(*key, mode == "train"),
            version=version,
            settings=settings,
            bound=bound,
            note=_AGAINST[mode],
        )
        for mode, y, bound in zip(("eval", "train"), ys, bounds, strict=True)
    ]


@_one_thread
def _torch_bn(
    torch: Any, seed: int, batch: int, momentum: float, eps: float
) -> tuple[list[Outcome], dict[str, Claim], dict[str, Any]]:
    """torch's BatchNorm1d in both modes and its running-statistics update (needs torch only)."""
    v = _bn_inputs(seed, batch)
    x, run_mean, run_var = v["x"], v["run_mean"], v["run_var"]
    y_eval, y_train, new_mean, new_var, runs = _torch_bn_runs(torch, v, momentum, eps)
    n = x.shape[0]
    bm = x.mean(0, dtype=np.float64)
    bv_b, bv_u = x.var(0, dtype=np.float64), x.var(0, ddof=1, dtype=np.float64)
    exp_u = (1 - momentum) * run_var.astype(np.float64) + momentum * bv_u
    exp_b = (1 - momentum) * run_var.astype(np.float64) + momentum * bv_b
    batch1 = _batch1(torch, x)
    truth_eval = _bn_truth(seed, batch, eps, False)
    truth_train = _bn_truth(seed, batch, eps, True)
    ref_scale = np.abs(truth_eval.split()[0]).max()
    settings = {"eps": eps, "momentum": momentum}
    outcomes = _torch_rows(torch.__version__, settings, (seed, batch, eps), y_eval, y_train)
    e_eval, e_train = (np.abs(o.error.ulp) for o in outcomes)
    claims = {
        "bn_train_uses_batch_stats": C_["bn_train_uses_batch_stats"].claim(
            bool(np.abs(y_train - truth_train.split()[0]).max() < 1e-5 * ref_scale),
            f": torch is within {e_train.max():.3g} ULP of that reference",
        ),
        "bn_eval_uses_running_stats": C_["bn_eval_uses_running_stats"].claim(
            bool(
                np.abs(y_eval - truth_eval.split()[0]).max() < 1e-5 * ref_scale
                and (y_eval != y_train).any()
            ),
            f": torch within {e_eval.max():.3g} ULP of that reference, and train/eval outputs "
            "differ",
        ),
        "bn_running_var_unbiased": C_["bn_running_var_unbiased"].claim(
            bool(
                np.abs(new_var - exp_u).max() < np.abs(new_var - exp_b).max() * 1e-3 + 1e-6
                and np.allclose(new_var, exp_u, rtol=1e-6)
            ),
            f" (x n/(n-1), n={n}): (1-m)*old + m*var_unbiased, with m = momentum = {momentum:g}",
        ),
        "bn_running_mean": C_["bn_running_mean"].claim(
            bool(
                np.allclose(
                    new_mean, (1 - momentum) * run_mean + momentum * bm, rtol=1e-6, atol=1e-7
                )
            ),
        ),
        "bn_batch1_torch": C_["bn_batch1_torch"].claim(batch1 != "accepted", f": {batch1!r}"),
        "bn_train_repeats": C_["bn_train_repeats"].claim(
            runs.train_same_batch_distinct == 1,
            f" ({runs.train_runs} runs): it is not random, it depends on the batch",
        ),
        "bn_forgotten_eval_moves_stats": C_["bn_forgotten_eval_moves_stats"].claim(
            runs.eval_before_after_max_gap > 0,
            ": eval() afterwards gives other outputs (up to "
            f"{runs.eval_before_after_max_gap:.3g} apart)",
        ),
    }
    data = {
        "bn_runs": runs,
        "e_eval": e_eval,
        "e_train": e_train,
        "running_mean": new_mean,
        "running_var": new_var,
        "expected_var_biased": exp_b,
    }
    return outcomes, claims, data


#: Keras layers built once per process (building creates four TensorFlow variables, the
#: slowest step of a widget update): "default" keeps Keras's own epsilon and momentum,
#: "configured" gets them set before each use (its constructor only stores them; call()
#: reads them). Both get the lesson's weights and statistics before each use.
_LAYERS: dict[str, Any] = {}


def _keras_layer(keras: Any, v: dict[str, np.ndarray], **kw: Any) -> Any:
    """A built BatchNormalization layer holding ``v``'s weights and statistics: Keras's
    defaults without ``kw``, else ``epsilon`` and ``momentum`` as given."""
    role = "configured" if kw else "default"
    layer = _LAYERS.get(role)
    if layer is None:
        layer = _LAYERS[role] = keras.layers.BatchNormalization()
        layer.build((None, C))
    if kw:
        layer.epsilon = float(kw.get("epsilon", 1e-3))
        layer.momentum = float(kw.get("momentum", 0.99))
    layer.set_weights([v["gamma"], v["beta"], v["run_mean"], v["run_var"]])
    return layer


def _keras_default(seed: int, batch: int) -> tuple[np.ndarray, Any]:
    """Keras's BatchNormalization with its own defaults, inference (kept per input: it does
    not depend on any BatchNorm control)."""

    def make() -> tuple[np.ndarray, Any]:
        v = _bn_inputs(seed, batch)
        y = np.asarray(_keras_layer(backends.load("keras"), v)(v["x"], training=False))
        own = metrics.measure(y, _bn_truth(seed, batch, 1e-3, False))
        return y, own

    return _PARTS.get(("keras default", seed, batch), make)


def _keras_bn(
    seed: int, batch: int, momentum: float, eps: float
) -> tuple[list[Outcome], dict[str, Claim], dict[str, Any]]:
    """Keras's BatchNormalization with its defaults and with torch's settings matched, and
    what needs only Keras and the reference (needs TensorFlow only)."""
    keras = backends.load("keras")
    v = _bn_inputs(seed, batch)
    x, gamma, beta = v["x"], v["gamma"], v["beta"]
    truth_eval = _bn_truth(seed, batch, eps, False)
    truth_train = _bn_truth(seed, batch, eps, True)
    yk_default, own = _keras_default(seed, batch)
    k_matched = _keras_layer(keras, v, epsilon=eps, momentum=1 - momentum)
    yk_eval = np.asarray(k_matched(x, training=False))
    yk_train = np.asarray(k_matched(x, training=True))
    km, kv = (np.asarray(w) for w in k_matched.get_weights()[2:])
    yk_batch1 = np.asarray(_keras_layer(keras, v, epsilon=eps, momentum=0.99)(x[:1], training=True))
    b_eval, _b_train = _bounds(seed, batch, eps)
    b_own = rounding_bound(
        x, gamma, beta, v["run_mean"], v["run_var"], 1e-3, _unit(seed, batch, 1e-3, False)
    )
    batch1_dev = float(np.abs(yk_batch1[0].astype(np.float64) - beta).max())
    # Keras folds the statistics into x * inv + (beta - mean * inv), inv = gamma / sqrt(eps):
    # the two terms cancel, leaving rounding of size ulp(|x| * inv).
    batch1_ulp = float((np.abs(x[0]) * np.abs(gamma) / np.sqrt(eps)).max()) * 2.0**-23
    matched = {"epsilon": eps, "momentum": 1 - momentum}
    a_eval, a_train = _abs_bounds(seed, batch, eps)
    rows = (
        ("defaults, inference", yk_default, truth_eval, {"epsilon": 1e-3, "momentum": 0.99}, None),
        ("matched, inference", yk_eval, truth_eval, matched, a_eval),
        ("matched, training=True", yk_train, truth_train, matched, a_train),
    )
    outcomes = [
        Outcome.measured(
            f"Keras BatchNormalization {what}",
            "tensorflow",
            y,
            truth,
            version=keras.__version__,
            settings=settings,
            note=_AGAINST["train" if "training" in what else "eval"]
            + (", with torch's eps" if what.startswith("defaults") else ""),
            bound=bound,
        )
        for what, y, truth, settings, bound in rows
    ]
    e_default, e_k_eval, e_k_train = (np.abs(o.error.ulp) for o in outcomes)
    e_default_own = np.abs(own.ulp)
    claims = {
        "bn_batch1_keras": C_["bn_batch1_keras"].claim(
            bool(batch1_dev <= 4 * batch1_ulp),
            f" whatever the input (x - mean is 0): it deviates from beta by {batch1_dev:.3g}, "
            "the rounding of its folded formula (one ULP of x * gamma / sqrt(eps) is "
            f"{batch1_ulp:.3g})",
        ),
        "keras_defaults_disagree": C_["keras_defaults_disagree"].claim(
            bool((e_default > b_eval).mean() > 0.5)
            if eps != 1e-3
            else bool((e_default <= b_eval).all()),
            eps=eps,
            ulp=e_default.max(),
            outside=int((e_default > b_eval).sum()),
            size=e_default.size,
        ),
        "keras_defaults_own_convention": C_["keras_defaults_own_convention"].claim(
            bool((e_default_own <= b_own).all()),
            f": within {e_default_own.max():.3g} ULP of the epsilon=1e-3 reference",
        ),
    }
    data = {
        "e_default": e_default,
        "e_eval": e_k_eval,
        "e_train": e_k_train,
        "moving_mean": km,
        "moving_var": kv,
    }
    return outcomes, claims, data


def _unit(seed: int, batch: int, eps: float, training: bool) -> np.ndarray:
    """The float32 ULP of the exact reference: the unit the bound and the errors count in."""
    return metrics.truth_ulp(_bn_truth(seed, batch, eps, training), "float32")


def _bounds(seed: int, batch: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """`rounding_bound` of the layer in eval and train mode, element by element."""
    v = _bn_inputs(seed, batch)
    x = v["x"]
    mean, var = x.mean(0, dtype=np.float64), x.var(0, dtype=np.float64)
    args = (x, v["gamma"], v["beta"])
    return (
        rounding_bound(*args, v["run_mean"], v["run_var"], eps, _unit(seed, batch, eps, False)),
        rounding_bound(*args, mean, var, eps, _unit(seed, batch, eps, True)),
    )


#: the truth each BatchNorm row is measured against, by mode (the table's head shows one)
_AGAINST = {
    "eval": "measured against the eval-mode truth (running statistics)",
    "train": "measured against the train-mode truth (this batch's statistics)",
}


def _abs_bounds(seed: int, batch: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """`_bounds` as absolute errors (the unit each counts in), eval then train."""
    b_eval, b_train = _bounds(seed, batch, eps)
    return (
        b_eval * _unit(seed, batch, eps, False),
        b_train * _unit(seed, batch, eps, True),
    )


def _both_claims(
    momentum: float, eps: float, t: dict[str, Any], k: dict[str, Any], bounds: Any
) -> dict[str, Claim]:
    """The claims that compare torch with Keras (need both)."""
    b_eval, b_train = bounds
    bound = float(max(b_eval.max(), b_train.max()))
    e_t = max(t["e_eval"].max(), t["e_train"].max())
    e_k = max(k["e_eval"].max(), k["e_train"].max())
    return {
        "keras_matched_agrees": C_["keras_matched_agrees"].claim(
            bool(
                (k["e_eval"] <= b_eval).all()
                and (k["e_train"] <= b_train).all()
                and (t["e_eval"] <= b_eval).all()
                and (t["e_train"] <= b_train).all()
            ),
            f" (epsilon={eps:g}, momentum={1 - momentum:g} = 1 - torch's): Keras within "
            f"{e_k:.3g} ULP, torch {e_t:.3g}, element by element inside the float32 rounding "
            f"bound of the layer (up to {bound:.3g} ULP)",
        ),
        "keras_moving_mean_matches": C_["keras_moving_mean_matches"].claim(
            bool(np.allclose(k["moving_mean"], t["running_mean"], rtol=1e-6, atol=1e-7)),
        ),
        "keras_moving_var_biased": C_["keras_moving_var_biased"].claim(
            bool(
                np.allclose(k["moving_var"], t["expected_var_biased"], rtol=1e-6)
                and not np.allclose(k["moving_var"], t["running_var"], rtol=1e-6)
            ),
            ": it still differs from torch's running_var",
        ),
    }


#: parts a momentum of 0 lacks (no update: the statistics keep their initial values), with why
NO_UPDATE = {
    "a momentum above 0": "not meaningful at momentum=0: torch's update (1-m)*old + m*batch "
    "keeps the running statistics as they are, so a train-mode call cannot move them",
    "a moving-statistics update": "momentum 0 leaves the moving statistics at their initial "
    "values, so no update shows which variance is used; pick a momentum above 0",
}


#: The claims, as stated before measuring (each decided claim appends what it measured); each
#: needs torch, Keras's TensorFlow, or both (the BatchNorm comparison runs them side by side).
_T, _K, _TEST = ("torch",), ("tensorflow",), "tests/test_train_vs_eval.py"
DROPOUT_CLAIMS = declare_texts(
    {
        "dropout_train_varies": (
            "in train mode the output changes from run to run (with p=0 train mode drops "
            "nothing: every run equals eval()'s output bit for bit)",
            " ({distinct} distinct outputs in {runs} runs, p={p:g})",
        ),
        "dropout_eval_fixed": "in eval mode all runs give the same output, bit for bit",
        "dropout_scaling": "kept activations are scaled by 1/(1-p)",
        "dropout_removed_equals_eval": "removing the Dropout layer and copying the weights "
        "gives eval()'s output bit for bit",
    },
    _T,
    test=_TEST,
)
TORCH_BN_CLAIMS = declare_texts(
    {
        "bn_train_uses_batch_stats": "train mode normalizes with the batch's mean and biased "
        "variance",
        "bn_eval_uses_running_stats": "eval mode uses the running statistics",
        "bn_running_var_unbiased": "torch's running_var update uses the unbiased batch variance",
        "bn_running_mean": "torch's running_mean is (1-momentum)*old + momentum*batch_mean",
        "bn_batch1_torch": "torch refuses batch size 1 in train mode",
        "bn_train_repeats": "train mode gives the same bits for the same batch, run after run",
        "bn_forgotten_eval_moves_stats": "forgotten train-mode calls move the running statistics",
    },
    _T,
    {"bn_forgotten_eval_moves_stats": (*_T, "a momentum above 0")},
    test=_TEST,
)
KERAS_BN_CLAIMS = declare_texts(
    {
        "bn_batch1_keras": "Keras accepts batch size 1 with training=True and returns beta",
        "keras_defaults_disagree": (
            "with Keras's defaults (epsilon 1e-3) the same weights give other outputs than "
            "torch's reference (unless torch's eps is 1e-3 too: then the two default epsilons "
            "coincide and Keras's defaults stay inside the rounding bound of torch's reference)",
            " (eps {eps:g}): up to {ulp:.3g} ULP from it, {outside} of {size} outside the "
            "rounding bound",
        ),
        "keras_defaults_own_convention": "Keras's defaults are right for their own convention",
    },
    _K,
    test=_TEST,
)
BOTH_BN_CLAIMS = declare_texts(
    {
        "keras_matched_agrees": "with epsilon and momentum matched, Keras is within the "
        "rounding bound of the reference in both modes",
        "keras_moving_mean_matches": "with momentum matched, Keras's moving_mean update equals "
        "torch's running_mean",
        "keras_moving_var_biased": "Keras's moving_variance uses the biased batch variance",
    },
    (*_T, *_K),
    {"keras_moving_var_biased": (*_T, *_K, "a moving-statistics update")},
    test=_TEST,
)
#: every BatchNorm claim: torch's alone, Keras's alone (against the reference), and the
#: comparisons of the two
BATCHNORM_CLAIMS = {**TORCH_BN_CLAIMS, **KERAS_BN_CLAIMS, **BOTH_BN_CLAIMS}
MODES_CLAIMS = _train_modes.MODES_CLAIMS
KERAS_NOISE_CLAIMS = _train_modes.KERAS_NOISE_CLAIMS
CLAIMS = {**DROPOUT_CLAIMS, **MODES_CLAIMS, **KERAS_NOISE_CLAIMS, **BATCHNORM_CLAIMS}
C_ = CLAIMS

#: results of the lesson's parts, by what each depends on: moving one control recomputes only
#: the parts that depend on it (the dropout MLP for p and runs, the BatchNorm layers for
#: momentum and eps, the figure alone for the mode)
_PARTS = Memo(keep=128)


def _part(
    missing: tuple[str, str, Any], key: tuple, make: Callable[[], Any]
) -> tuple[list[Outcome], dict[str, Claim], Any]:
    """A part's (outcomes, claims, data), kept in `_PARTS` by ``key``; where ``missing`` (its
    row's name, backend and why) says its framework is missing, that row alone and no data."""
    if missing[2]:
        return [Outcome.missing(*missing)], {}, None
    return _PARTS.get(key, make)


def _batchnorm_part(
    seed: int, batch: int, momentum: float, eps: float, torch_missing: Any, tf_missing: Any
) -> tuple[list[Outcome], dict[str, Claim], dict[str, Any]]:
    """torch's layer where torch is, Keras's where TensorFlow is, their comparison where both
    are: each claim is checked when what it needs is present."""
    t_out, t_claims, t = _part(
        ("torch BatchNorm1d", "torch", torch_missing),
        ("torch bn", seed, batch, momentum, eps),
        lambda: _torch_bn(backends.load("torch"), seed, batch, momentum, eps),
    )
    k_out, k_claims, k = _part(
        ("Keras BatchNormalization", "tensorflow", tf_missing),
        ("keras bn", seed, batch, momentum, eps),
        lambda: _keras_bn(seed, batch, momentum, eps),
    )
    outcomes, claims = t_out + k_out, {**t_claims, **k_claims}
    fields: dict[str, Any] = {}  # its `TrainEvalData` fields, by name
    if t is not None or k is not None:
        b_eval, b_train = _bounds(seed, batch, eps)
        fields = {
            "bn_x": _bn_inputs(seed, batch)["x"],
            "bn_ulp": {},
            "bn_bound_by_mode": {"eval": float(b_eval.max()), "train": float(b_train.max())},
        }
    if t is not None:
        fields["bn_ulp"].update(
            {"torch eval": float(t["e_eval"].max()), "torch train": float(t["e_train"].max())}
        )
        fields["torch_running_var"] = t["running_var"]
        fields["bn_runs"] = t["bn_runs"]
    if k is not None:
        fields["bn_ulp"].update(
            {
                "keras default": float(k["e_default"].max()),
                "keras matched eval": float(k["e_eval"].max()),
                "keras matched train": float(k["e_train"].max()),
            }
        )
        fields["keras_moving_var"] = k["moving_var"]
    if t is not None and k is not None:
        claims.update(_both_claims(momentum, eps, t, k, (b_eval, b_train)))
    return outcomes, claims, fields


def _modes_part(
    seed: int, runs: int, torch_missing: str | None, tf_missing: str | None
) -> tuple[list[Outcome], dict[str, Claim], dict[str, Any]]:
    """Autograd modes, RReLU and the state-dict example (torch), GaussianNoise (Keras)."""
    data: dict[str, Any] = {}
    claims: dict[str, Claim] = {}
    if torch_missing:
        outcomes = [Outcome.missing("torch F.rrelu", "torch", torch_missing)]
        claims = _train_modes.gpu_modes()[0]  # read from the record: no live torch needed
    else:
        torch_part = _one_thread(_train_modes.torch_part)
        outcomes, claims, data = torch_part(backends.load("torch"), seed, runs)
    if tf_missing:
        outcomes.append(Outcome.missing("Keras GaussianNoise", "tensorflow", tf_missing))
    else:
        k_out, k_claims = _train_modes.keras_part(backends.load("keras"), seed, runs)
        outcomes, claims = outcomes + k_out, {**claims, **k_claims}
    return outcomes, claims, data


def compute(
    mode: str, batch: int, momentum: float, eps: float, p: float, runs: int, seed: int
) -> Comparison:
    torch_missing = backends.missing("torch")
    tf_missing = backends.missing("tensorflow")
    d_out, d_claims, d_data = _part(
        ("torch dropout MLP", "torch", torch_missing),
        ("dropout", seed, batch, p, runs),
        lambda: _dropout_part(backends.load("torch"), seed, batch, p, runs),
    )
    b_out, b_claims, b_data = _batchnorm_part(seed, batch, momentum, eps, torch_missing, tf_missing)
    m_out, m_claims, m_data = _PARTS.get(
        ("modes", seed, runs, torch_missing, tf_missing),
        lambda: _modes_part(seed, runs, torch_missing, tf_missing),
    )
    d_out, d_claims, d_data = d_out + m_out, {**d_claims, **m_claims}, {**(d_data or {}), **m_data}
    # the reference of the mode in front
    truth = _bn_truth(seed, batch, eps, mode == "train") if b_data else None
    missing = {_train_modes.GPU_PART: _train_modes.gpu_missing() or ""}
    if momentum == 0:
        missing |= NO_UPDATE
    return Comparison(
        truth=truth,
        outcomes=tuple(d_out + b_out),
        claims={**d_claims, **b_claims},
        data=TrainEvalData(**d_data, **b_data),
        explanation=EXPLANATION,
        missing=missing,
    )


EXPLANATION = (
    "Train mode is a different function. Dropout multiplies by a fresh random mask scaled by "
    "1/(1-p) on every call, so outputs vary; eval() makes it the identity, exactly as if the "
    "layer were removed. BatchNorm in train mode normalizes with the batch's own mean and "
    "biased variance (so batch size 1 is meaningless: torch refuses, Keras returns beta) and "
    "updates running statistics; eval() uses those running statistics. torch's momentum m "
    "weighs the new batch (new = (1-m) old + m batch) and stores the unbiased variance; Keras's "
    "momentum weighs the old value and stores the biased variance, and its epsilon is 1e-3 "
    "instead of 1e-5. Match epsilon and momentum and the two agree within a few float32 ULPs "
    "of the exact layer, except for the stored variance."
)

LESSON = Lesson(
    name="train_vs_eval",
    title="Train vs eval mode: dropout and batch normalization",
    summary="Dropout and BatchNorm in train and eval mode, torch vs Keras conventions",
    params=(
        Options(
            "mode",
            "train",
            "which mode the truth and the figure focus on",
            choices=("train", "eval"),
        ),
        Interval("batch", 8, "batch size", 1, 256, integer=True),
        Interval("momentum", 0.1, "torch-convention momentum (Keras gets 1 - momentum)", 0.0, 1.0),
        Interval("eps", 1e-5, "BatchNorm epsilon", 1e-8, 0.1, log=True),
        Interval("p", 0.5, "dropout probability", 0.0, 0.95),
        Interval("runs", 50, "forward passes per mode", 2, 500, integer=True),
        Interval("seed", 0, "seed for the weights and inputs", 0, 2**31 - 1, integer=True),
    ),
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    quick={"runs": 5, "batch": 4},
    claims=CLAIMS,
    data=TrainEvalData,
)
