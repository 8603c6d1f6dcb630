"""DJL's seeded layers against torch's: Dropout masks and the default initializers of Linear and
Conv2d blocks (PyTorch engine, same seed). Judged on several seeds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...result import Claim, Outcome
from ...result.spec import declare_texts
from .data import DjlLayers
from .devices import u32

SEEDS = 3  # seeds each claim is judged on: seed, seed + 1, ...
DROP_SIZES = (20, 1000)  # below and above libtorch's vectorized width
P = 0.5
LIN = (64, 64)  # inputs, units
CONV = (8, 16)  # input channels, filters (3x3 kernels)

#: each needs DJL and torch, and seeds that fit a Java int ("java int seed")
CLAIMS = declare_texts(
    {
        "djl_dropout_matches_torch": "DJL's Dropout (PyTorch engine) draws the same mask as "
        "torch.nn.functional.dropout for the same seed, bit for bit",
        "djl_init_gaussian_fan_in": "DJL's default initializer for Linear and Conv2d is Xavier "
        "Gaussian, fan-in, magnitude 2: weights = torch.normal(0, sqrt(2/fan_in)) for the "
        "seed, bias 0",
        "djl_init_not_torch": "DJL's default-initialized Linear/Conv2d weights are not torch's: "
        "torch draws kaiming_uniform(a=sqrt(5)) = U(±1/sqrt(fan_in)) and a uniform bias",
    },
    ("djl", "torch", "java int seed"),
    test="tests/test_rng_seeds.py",
)


def _djl_run(client: Any, protocol: Any, torch: Any, seed: int) -> dict[str, Any]:
    seeds = range(seed, seed + SEEDS)
    drop_same = drop_total = 0
    for s in seeds:
        for n in DROP_SIZES:
            d = protocol.unpack(client.call("dropout", seed=s, n=n, rate=P))
            torch.manual_seed(s)
            t = torch.nn.functional.dropout(torch.ones(n), P, training=True).numpy()
            drop_same += int((u32(d) == u32(t)).sum())
            drop_total += n
    gauss_ok, outside, weights, equal_torch, first = True, [], 0, 0, {}
    for block, (cin, units), fan_in in (
        ("linear", LIN, LIN[0]),
        ("conv", CONV, CONV[0] * 9),
    ):
        sigma = math.sqrt(2 / fan_in)
        bound = 1 / math.sqrt(fan_in)
        for s in seeds:
            got = client.call("default_init", seed=s, block=block, inputs=cin, units=units)
            w, b = protocol.unpack(got["weight"]), protocol.unpack(got["bias"])
            torch.manual_seed(s)
            expect = torch.normal(0.0, sigma, tuple(w.shape)).numpy()
            gauss_ok &= bool((u32(w) == u32(expect)).all() and not b.any())
            torch.manual_seed(s)
            mod = (
                torch.nn.Linear(cin, units) if block == "linear" else torch.nn.Conv2d(cin, units, 3)
            )
            tw, tb = mod.weight.detach().numpy(), mod.bias.detach().numpy()
            torch_in_bound = bool((np.abs(tw) <= bound).all() and (np.abs(tb) <= bound).all())
            outside.append(int((np.abs(w) > bound).sum()) if torch_in_bound else -1)
            weights += w.size
            equal_torch += int((u32(w) == u32(tw)).sum())
            if s == seed:
                first[block] = {
                    "djl_std": float(w.std()),
                    "sigma": sigma,
                    "torch_bound": bound,
                    "torch_bias_nonzero": int(np.count_nonzero(tb)),
                    "djl_weight": w.ravel()[:4],
                    "torch_weight": tw.ravel()[:4],
                }
    return {
        "drop_same": drop_same,
        "drop_total": drop_total,
        "gauss_ok": gauss_ok,
        "outside": outside,
        "weights": weights,
        "equal_torch": equal_torch,
        "first": first,
    }


def djl_layers(
    seed: int, reason: str | None, torch: Any
) -> tuple[list[Outcome], dict[str, Claim], DjlLayers | None]:
    """The DJL layer claims (not checked with ``reason`` when DJL or torch is missing)."""
    from ...errors import BackendUnavailable, WorkerError

    if reason is None and seed + SEEDS > 2**31:
        reason = f"DJL's Engine.setRandomSeed takes a Java int; seed {seed} + {SEEDS} is too big"
    r: dict[str, Any] = {}
    if reason is None:
        try:
            from ...jvm import client, protocol

            r = _djl_run(client, protocol, torch, seed)
        except (BackendUnavailable, WorkerError) as exc:
            reason = str(exc)
    if reason is not None:
        rows = [Outcome.missing("DJL Linear default init", "djl", reason)]
        return rows, {k: spec.not_checked(reason) for k, spec in CLAIMS.items()}, None
    lin = r["first"]["linear"]
    seeds = f"seeds {seed}..{seed + SEEDS - 1}"
    n_out = sum(max(o, 0) for o in r["outside"])
    claims = {
        "djl_dropout_matches_torch": CLAIMS["djl_dropout_matches_torch"].claim(
            r["drop_same"] == r["drop_total"],
            f" (p = {P}): {r['drop_same']} of {r['drop_total']} values bit-identical ({seeds}, "
            f"sizes {', '.join(map(str, DROP_SIZES))}): both are libtorch's bernoulli_ on the "
            "default generator",
        ),
        "djl_init_gaussian_fan_in": CLAIMS["djl_init_gaussian_fan_in"].claim(
            bool(r["gauss_ok"]),
            f" (Linear({LIN[0]}→{LIN[1]}), Conv2d({CONV[0]}→{CONV[1]}, 3×3), every weight bit "
            f"for bit; {seeds}; Linear σ = {lin['sigma']:.4g}, sample std "
            f"{lin['djl_std']:.4g})",
        ),
        "djl_init_not_torch": CLAIMS["djl_init_not_torch"].claim(
            r["equal_torch"] == 0 and min(r["outside"]) > 0 and lin["torch_bias_nonzero"] > 0,
            f": {r['equal_torch']} of {r['weights']} weights equal; torch's stay inside "
            f"±{lin['torch_bound']:.4g} with {lin['torch_bias_nonzero']} of {LIN[1]} biases "
            f"nonzero, DJL's Gaussian puts {n_out} weights outside that bound and starts the "
            "bias at 0",
        ),
    }
    rows = [
        Outcome(
            "DJL Linear default init",
            "djl",
            value=lin["djl_weight"],
            note=f"XavierInitializer(GAUSSIAN, IN, 2): σ = {lin['sigma']:.4g}; bias 0",
        ),
        Outcome(
            "torch nn.Linear default init",
            "torch",
            value=lin["torch_weight"],
            version=torch.__version__,
            note=f"kaiming_uniform(a=√5): U(±{lin['torch_bound']:.4g}); bias uniform",
        ),
    ]
    counts = (r["drop_same"], r["drop_total"], r["weights"], r["equal_torch"], n_out)
    return rows, claims, DjlLayers(*counts, lin["sigma"], lin["torch_bound"])
