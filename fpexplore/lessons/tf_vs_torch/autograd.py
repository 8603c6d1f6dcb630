"""Autograd vs GradientTape: the seed's z = (x**2)**3 at x = 2, then a long chain."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from ...truth.certify import certified
from . import custom_op
from .claims import AUTOGRAD
from .data import AutogradData, SeedGradients
from .frameworks import ROUND_ONCE_BOUND, Frameworks, Section, on_grid, rng, rounded_once, shown

C = 0.25  # y <- y + C*sin(y + phi_k): each factor of the derivative lies in [1 - C, 1 + C]
SEED_CLAIM = 24.0  # what the seed article prints for the gradient


def lengths_up_to(n: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to and including ``n``."""
    out, d = [], 1
    while d <= n:
        out += [m * d for m in (1, 2, 5) if m * d <= n]
        d *= 10
    return sorted(set(out) | {n})


def chain_reference(x: float, phi: np.ndarray, lengths: list[int]) -> Any:
    """d y_L / d x of y <- y + C·sin(y + phi_k), exactly in the real numbers (forward mode in
    mpmath, certified by two precisions), at each L in ``lengths``."""

    def compute(_: int) -> Any:
        y, d, c = mpmath.mpf(x), mpmath.mpf(1), mpmath.mpf(C)
        out, want = [], set(lengths)
        for k, p in enumerate(phi.tolist(), start=1):
            s = y + mpmath.mpf(p)
            d = d * (1 + c * mpmath.cos(s))
            y = y + c * mpmath.sin(s)
            if k in want:
                out.append(d)
        return np.array(out, dtype=object)

    return certified(f"d/dx of a {max(lengths)}-step chain", compute, 64, "float32")


def _torch_chain(fw: Frameworks, x: float, phi: np.ndarray, lengths: list[int], dt: Any):
    torch = fw.torch
    xt = torch.tensor(x, dtype=dt, requires_grad=True)
    ph = torch.from_numpy(phi).to(dt)
    y, ys = xt, {}
    for k in range(1, len(phi) + 1):
        y = y + C * torch.sin(y + ph[k - 1])
        ys[k] = y
    grads = [torch.autograd.grad(ys[n], xt, retain_graph=True)[0] for n in lengths]
    return np.array([float(g.float()) for g in grads], dtype=np.float32)


def _tf_chain(fw: Frameworks, x: float, phi: np.ndarray, lengths: list[int], dt: Any):
    tf = fw.tf
    xt = tf.Variable(x, dtype=dt)
    ph = tf.cast(tf.constant(phi), dt)
    with tf.GradientTape(persistent=True) as tape:
        y, ys = xt + 0, {}
        for k in range(1, len(phi) + 1):
            y = y + C * tf.sin(y + ph[k - 1])
            ys[k] = y
    grads = [tape.gradient(ys[n], xt) for n in lengths]
    del tape
    return np.array([float(tf.cast(g, tf.float32)) for g in grads], dtype=np.float32)


def run_autograd(fw: Frameworks, length: int, seed: int, agree: bool, **_: Any) -> Section:
    torch, tf = fw.torch, fw.tf
    # the seed example
    xt = torch.tensor(2.0, requires_grad=True)
    ((xt**2) ** 3).backward()
    g_torch = float(xt.grad)
    xv = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        z = (xv**2) ** 3
    g_tf = float(tape.gradient(z, xv))
    exact = Fraction(6) * Fraction(2) ** 5
    # the long chain
    phi = on_grid(rng(seed, 7).uniform(-np.pi, np.pi, length), "float32")
    x0 = float(on_grid(np.array([0.3]), "float32")[0])
    lengths = lengths_up_to(length)
    truth = chain_reference(x0, phi, lengths)
    got = {
        "torch": _torch_chain(fw, x0, phi, lengths, torch.float32),
        "tf": _tf_chain(fw, x0, phi, lengths, tf.float32),
        "torch wide": _torch_chain(fw, x0, phi, lengths, torch.float64),
        "tf wide": _tf_chain(fw, x0, phi, lengths, tf.float64),
    }
    names = {
        "torch": ("torch", "torch autograd, float32"),
        "tf": ("tensorflow", "tf.GradientTape, float32"),
        "torch wide": ("torch", "torch autograd in float64, rounded once"),
        "tf wide": ("tensorflow", "tf.GradientTape in float64, rounded once"),
    }
    note = f"d y_L/dx at L = {', '.join(map(str, lengths))}"
    outcomes = {k: fw.measured(lib, n, got[k], truth, note=note) for k, (lib, n) in names.items()}
    err = {k: np.abs(o.error.ulp) for k, o in outcomes.items()}
    rel = {k: o.error.rel for k, o in outcomes.items()}
    u = 2.0**-24
    # each step rounds the factor 1 + C·cos(s) and the product (a few u), and the forward value
    # y carries an absolute error that grows like the step count: 8·L·u relative is generous
    # for first-order growth and fails on anything worse
    bounds = np.array([8.0 * n * u for n in lengths])
    drift_ok = all(bool((rel[k] <= bounds).all()) for k in ("torch", "tf"))
    size = np.abs(np.asarray(truth.split()[0], dtype=np.float64))
    outcomes = {k: o.with_bound(bounds * size) for k, o in outcomes.items()}
    claims = {
        "seed_192": AUTOGRAD["seed_192"].claim(
            g_torch == float(exact) == g_tf and float(exact) != SEED_CLAIM,
            g_torch=g_torch,
            g_tf=g_tf,
            exact=exact,
            seed_claim=SEED_CLAIM,
        ),
        "chain_drift": AUTOGRAD["chain_drift"].claim(
            drift_ok,
            length=length,
            c=C,
            err_torch_1=err["torch"][-1],
            err_tf_1=err["tf"][-1],
            err_torch_0=err["torch"][0],
            err_tf_0=err["tf"][0],
        ),
        "fix_agrees": AUTOGRAD["fix_agrees"].claim(
            rounded_once(
                [got["torch wide"], got["tf wide"]], [err["torch wide"].max(), err["tf wide"].max()]
            ),
            round_once_bound=ROUND_ONCE_BOUND,
            err_torch_wide_max=err["torch wide"].max(),
            err_tf_wide_max=err["tf wide"].max(),
        ),
    }
    custom_claims, custom_seen, custom = custom_op.run(fw)
    claims.update(custom_claims)
    data = AutogradData(
        SeedGradients(g_torch, g_tf, exact),
        lengths,
        {k: v.tolist() for k, v in rel.items()},
        custom,
    )
    rows = shown(outcomes, agree, ["torch wide", "tf wide"], ["torch", "tf"])
    return Section(rows, claims, truth, data, custom_seen)
