"""Run-to-run variation of GPU ops under cuDNN and determinism flags.

Every op runs ``n_runs`` times on the same inputs under each flag configuration (`CONFIGS`);
`raise_probe` lists the ops that raise under ``use_deterministic_algorithms(True)``, and fresh
processes show what ``cudnn.benchmark``'s autotuner picks from one program start to the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ... import metrics
from ... import truth as exact_truth
from ...backends.torch_device import flags, synchronize, torch_module
from ...truth import Truth
from .._gpu.common import digest, first_line, normal32, rng, run_spread, to_numpy
from . import raise_probe

FLAGS = ("benchmark", "cudnn_deterministic", "deterministic_algorithms")
CONFIGS: dict[str, dict[str, bool]] = {
    "default": {},
    "benchmark": {"benchmark": True},
    "cudnn.deterministic": {"cudnn_deterministic": True},
    "benchmark + cudnn.deterministic": {"benchmark": True, "cudnn_deterministic": True},
    "use_deterministic_algorithms": {"deterministic_algorithms": True},
}

CONV_CASE_FIELDS = ("N", "C_in", "C_out", "H", "W", "kernel", "stride", "padding", "groups")
CONV_CASES: dict[str, tuple[int, ...]] = {
    "3x3, 3->16 ch, 32x32, batch 8": (8, 3, 16, 32, 32, 3, 1, 1, 1),
    "3x3, 64->64 ch, 56x56, batch 32": (32, 64, 64, 56, 56, 3, 1, 1, 1),
    "1x1, 256->256 ch, 14x14, batch 64": (64, 256, 256, 14, 14, 1, 1, 0, 1),
    "7x7 stride 2, 3->64 ch, 112x112, batch 16": (16, 3, 64, 112, 112, 7, 2, 3, 1),
    "depthwise 3x3, 128 ch, 28x28, batch 32": (32, 128, 128, 28, 28, 3, 1, 1, 128),
    "5x5, 8->8 ch, 256x256, batch 4": (4, 8, 8, 256, 256, 5, 1, 2, 1),
    "3x3, 512->512 ch, 7x7, batch 128": (128, 512, 512, 7, 7, 3, 1, 1, 1),
}
QUICK_CONV_CASES: dict[str, tuple[int, ...]] = {
    "3x3, 3->4 ch, 8x8, batch 2": (2, 3, 4, 8, 8, 3, 1, 1, 1),
    "depthwise 3x3, 4 ch, 6x6, batch 2": (2, 4, 4, 6, 6, 3, 2, 1, 4),
}

N_SAMPLES = 16
#: a row's errors against the exact values, per run (None where nothing is sampled)
ULP_FIELDS = ("ulp_vs_truth_max", "ulp_vs_truth_median", "ulp_vs_truth_first")
#: values scattered by the atomic ops, by ``quick``
ATOMIC_VALUES = {False: 10**6, True: 10**4}


def _exact_sums(label: str, rows: list[np.ndarray]) -> Truth:
    """One exact Truth holding the exact sum of each array in ``rows``."""
    vals = np.empty(len(rows), dtype=object)
    vals[:] = [exact_truth.sum(r).exact for r in rows]
    return Truth(label, exact=vals)


def _conv_inputs(case: tuple[int, ...], seed: int) -> tuple[np.ndarray, ...]:
    n, cin, cout, h, w, k, s, p, g = case
    gen = rng(seed)
    x = normal32(gen, n, cin, h, w)
    wt = normal32(gen, cout, cin // g, k, k)
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    go = normal32(gen, n, cout, ho, wo)
    return x, wt, go


def conv_truth(
    case: tuple[int, ...],
    x: np.ndarray,
    wt: np.ndarray,
    go: np.ndarray,
    seed: int,
) -> dict[str, Any]:
    """Exact forward, input-gradient and weight-gradient values at sampled entries."""
    n, cin, cout, h, w, k, s, p, g = case
    cpg, opg = cin // g, cout // g
    ho, wo = go.shape[2], go.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p))).astype(np.float64)
    w64, go64 = wt.astype(np.float64), go.astype(np.float64)
    gen = rng(seed + 7)
    out: dict[str, Any] = {}

    idx = [tuple(int(gen.integers(d)) for d in (n, cout, ho, wo)) for _ in range(N_SAMPLES)]
    vals = []
    for b, o, y, xx in idx:
        grp = o // opg
        patch = xp[b, grp * cpg : (grp + 1) * cpg, y * s : y * s + k, xx * s : xx * s + k]
        vals.append(patch * w64[o])
    out["forward"] = (idx, _exact_sums("exact conv2d forward", vals))

    idx = [tuple(int(gen.integers(d)) for d in (cout, cpg, k, k)) for _ in range(N_SAMPLES)]
    vals = []
    for o, ci, ky, kx in idx:
        c = (o // opg) * cpg + ci
        sl = xp[:, c, ky : ky + s * (ho - 1) + 1 : s, kx : kx + s * (wo - 1) + 1 : s]
        vals.append(go64[:, o] * sl)
    out["grad_weight"] = (idx, _exact_sums("exact conv2d weight gradient", vals))

    idx = [tuple(int(gen.integers(d)) for d in (n, cin, h, w)) for _ in range(N_SAMPLES)]
    vals = []
    for b, c, iy, ix in idx:
        grp = c // cpg
        terms = []
        for ky in range(k):
            ty = iy + p - ky
            if ty % s or not 0 <= ty // s < ho:
                continue
            for kx in range(k):
                tx = ix + p - kx
                if tx % s or not 0 <= tx // s < wo:
                    continue
                os_ = slice(grp * opg, (grp + 1) * opg)
                terms.append(go64[b, os_, ty // s, tx // s] * w64[os_, c - grp * cpg, ky, kx])
        vals.append(np.concatenate(terms) if terms else np.zeros(0))
    out["grad_input"] = (idx, _exact_sums("exact conv2d input gradient", vals))
    return out


def _conv_op(
    torch: Any, dev: Any, case: tuple[int, ...], x: np.ndarray, wt: np.ndarray, go: np.ndarray
) -> Callable[[], dict[str, np.ndarray]]:
    F = torch.nn.functional
    _, _, _, _, _, _, s, p, g = case
    xt = torch.from_numpy(x).to(dev)
    wt_ = torch.from_numpy(wt).to(dev)
    got = torch.from_numpy(go).to(dev)

    def once() -> dict[str, np.ndarray]:
        xi = xt.clone().requires_grad_(True)
        wi = wt_.clone().requires_grad_(True)
        y = F.conv2d(xi, wi, stride=s, padding=p, groups=g)
        y.backward(got)
        synchronize(dev)
        return {
            "forward": to_numpy(y),
            "grad_input": to_numpy(xi.grad),
            "grad_weight": to_numpy(wi.grad),
        }

    return once


def _atomic_cases(n_values: int, seed: int) -> dict[str, Any]:
    """Inputs and exact truths for the scatter-style ops (sums into few bins)."""
    gen = rng(seed)
    bins = 100
    src = normal32(gen, n_values)
    idx = gen.integers(0, bins, n_values)
    order = np.argsort(idx, kind="stable")
    bounds = np.searchsorted(idx[order], np.arange(1, bins))
    truth = _exact_sums("exact sums per bin", np.split(src[order], bounds))
    # embedding_bag: bags of 10 indices into 100 rows, dim 32; grad rows are sums of go rows
    n_bags, dim = max(n_values // 100, 4), 32
    e_idx = gen.integers(0, bins, n_bags * 10)
    e_go = normal32(gen, n_bags, dim)
    bag_of = np.repeat(np.arange(n_bags), 10)
    rows = sorted({int(r) for r in gen.integers(0, bins, 4)})
    e_truth = {r: exact_truth.sum(e_go[bag_of[e_idx == r]], axis=0).exact for r in rows}
    # interpolate: bilinear upsampling by a non-integer factor, so windows overlap unevenly
    side = 64 if n_values >= 10**5 else 8
    ix = normal32(gen, 8, 16, side, side)
    out_side = int(side * 2.5)
    igo = normal32(gen, 8, 16, out_side, out_side)
    return {
        "bins": bins,
        "src": src,
        "idx": idx,
        "truth": truth,
        "e_idx": e_idx,
        "e_go": e_go,
        "e_rows": rows,
        "e_truth": e_truth,
        "n_bags": n_bags,
        "dim": dim,
        "ix": ix,
        "igo": igo,
        "out_side": out_side,
    }


def _atomic_ops(torch: Any, dev: Any, a: dict[str, Any]) -> dict[str, tuple[Callable, Any]]:
    """op name -> (run once -> array, (sample index, truth) or None)."""
    F = torch.nn.functional
    src = torch.from_numpy(a["src"]).to(dev)
    idx = torch.from_numpy(a["idx"]).to(dev)
    bins = a["bins"]

    def into_bins(add: Callable[[Any], Any]) -> Callable[[], np.ndarray]:
        return lambda: to_numpy(add(torch.zeros(bins, device=dev)))

    e_idx = torch.from_numpy(a["e_idx"]).to(dev)
    offsets = torch.arange(0, a["n_bags"] * 10, 10, device=dev)
    e_go = torch.from_numpy(a["e_go"]).to(dev)
    e_w = torch.zeros(bins, a["dim"], device=dev)

    def embedding_bag() -> np.ndarray:
        w = e_w.clone().requires_grad_(True)
        F.embedding_bag(e_idx, w, offsets, mode="sum").backward(e_go)
        return to_numpy(w.grad)

    ix = torch.from_numpy(a["ix"]).to(dev)
    igo = torch.from_numpy(a["igo"]).to(dev)

    def interp() -> np.ndarray:
        xi = ix.clone().requires_grad_(True)
        y = F.interpolate(
            xi, size=(a["out_side"], a["out_side"]), mode="bilinear", align_corners=False
        )
        y.backward(igo)
        return to_numpy(xi.grad)

    samples = atomic_samples(a)
    runs = {
        "index_add_": into_bins(lambda z: z.index_add_(0, idx, src)),
        "scatter_add_": into_bins(lambda z: z.scatter_add_(0, idx, src)),
        "index_put_(accumulate=True)": into_bins(
            lambda z: z.index_put_((idx,), src, accumulate=True)
        ),
        "embedding_bag backward (sum)": embedding_bag,
        "interpolate backward (bilinear)": interp,
        "sum (control)": lambda: to_numpy(src.sum().reshape(1)),
    }
    return {op: (once, samples[op]) for op, once in runs.items()}


Sample = tuple[list[tuple[int, ...]], Truth] | None


def atomic_samples(a: dict[str, Any]) -> dict[str, Sample]:
    """op name -> (sampled entries, their exact values), or None where nothing is sampled."""
    rows = a["e_rows"]
    e_sample = (
        [(r, j) for r in rows for j in range(a["dim"])],
        Truth(
            "exact embedding_bag gradient rows",
            exact=np.concatenate([a["e_truth"][r] for r in rows]),
        ),
    )
    bin_sample = ([(i,) for i in range(a["bins"])], a["truth"])
    return {
        "index_add_": bin_sample,
        "scatter_add_": bin_sample,
        "index_put_(accumulate=True)": bin_sample,
        "embedding_bag backward (sum)": e_sample,
        "interpolate backward (bilinear)": None,
        "sum (control)": ([(0,)], _exact_sums("exact sum", [a["src"]])),
    }


def sampled_truths(*, quick: bool, seed: int = 0) -> dict[tuple[str, str, str], Truth]:
    """(op, case, output) -> the exact values of the entries `run_determinism` samples, made
    from the same seeded inputs with no device: what a record's ULP fields can be checked
    against offline."""
    cases = QUICK_CONV_CASES if quick else CONV_CASES
    out: dict[tuple[str, str, str], Truth] = {}
    for ci, (name, case) in enumerate(cases.items()):
        x, wt, go = _conv_inputs(case, seed + ci)
        for output, (_, t) in conv_truth(case, x, wt, go, seed + ci).items():
            out[("conv2d", name, output)] = t
    a = _atomic_cases(ATOMIC_VALUES[quick], seed + 100)
    for op, sample in atomic_samples(a).items():
        if sample is not None:
            out[(op, _atomic_case_text(op, a), "result")] = sample[1]
    return out


def _measure(results: list[np.ndarray], sample: Sample) -> dict[str, Any]:
    """Run-to-run spread of ``results`` and, at the sampled entries, their ULPs vs the truth."""
    row = run_spread(results)
    if sample is None:
        return row | dict.fromkeys(ULP_FIELDS) | {"samples": 0}
    where, truth = sample
    pos = tuple(np.array(where).T)
    errs = [metrics.measure(r[pos], truth).ulp for r in results]
    row["ulp_vs_truth_max"] = [float(np.max(np.abs(e))) for e in errs]
    row["ulp_vs_truth_median"] = [float(np.median(np.abs(e))) for e in errs]
    row["ulp_vs_truth_first"] = [float(e[0]) for e in errs]
    row["samples"] = len(where)
    return row


def _repeat(
    once: Callable[[], Any], n_runs: int, cflags: dict[str, bool]
) -> tuple[list[Any], str | None]:
    """``once`` run ``n_runs`` times under ``cflags``, or what it raised."""
    with flags(**cflags):
        try:
            return [once() for _ in range(n_runs)], None
        except RuntimeError as exc:
            return [], first_line(exc)


def _row(
    op: str, case: str, output: str, config: str, shape: Any, raised: str | None, *run: Any
) -> dict[str, Any]:
    """A row: what ran where, and `_measure` of ``run`` (results, sample) unless it raised."""
    row = {"op": op, "case": case, "output": output, "config": config, "shape": shape}
    return row | {"raised": raised} | (_measure(*run) if raised is None else {})


def run_determinism(
    dev: Any,
    *,
    n_runs: int = 10,
    quick: bool = False,
    seed: int = 0,
    processes: int = 4,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """All determinism rows, the raise probe and the fresh-process benchmark probe."""
    torch = torch_module()
    say = progress or (lambda _m: None)
    cases = QUICK_CONV_CASES if quick else CONV_CASES
    rows: list[dict[str, Any]] = []
    for ci, (name, case) in enumerate(cases.items()):
        say(f"determinism: conv2d {name}")
        x, wt, go = _conv_inputs(case, seed + ci)
        truth = conv_truth(case, x, wt, go, seed + ci)
        once = _conv_op(torch, dev, case, x, wt, go)
        for cname, cflags in CONFIGS.items():
            results, err = _repeat(
                once, n_runs, {"conv_tf32": False, "matmul_tf32": False, **cflags}
            )
            for out_name in ("forward", "grad_input", "grad_weight"):
                head = ("conv2d", name, out_name, cname, list(case))
                outs = [r[out_name] for r in results]
                rows.append(_row(*head, err, outs, truth[out_name]))

    a = _atomic_cases(ATOMIC_VALUES[quick], seed + 100)
    for op, (once, sample) in _atomic_ops(torch, dev, a).items():
        say(f"determinism: {op}")
        for cname, cflags in CONFIGS.items():
            results, err = _repeat(once, n_runs, cflags)
            head = (op, _atomic_case_text(op, a), "result", cname, None)
            rows.append(_row(*head, err, results, sample))

    say("determinism: which ops raise under use_deterministic_algorithms(True)")
    raises = raise_probe.probe_raises(dev)
    say("determinism: cudnn.benchmark in fresh processes")
    fresh = fresh_process_probe(str(dev), quick=quick, seed=seed, processes=processes)
    return {
        "configs": {k: dict.fromkeys(FLAGS, False) | v for k, v in CONFIGS.items()},
        "n_runs": n_runs,
        "seed": seed,
        "tf32": "off (conv and matmul) for these runs",
        "conv_cases": {k: list(v) for k, v in cases.items()},
        "conv_case_fields": list(CONV_CASE_FIELDS),
        "rows": rows,
        "raises": raises,
        "fresh_processes": fresh,
    }


def _atomic_case_text(op: str, a: dict[str, Any]) -> str:
    n = a["src"].size
    if op.startswith("embedding_bag"):
        return f"{a['n_bags']} bags of 10 rows of a {a['bins']}x{a['dim']} table"
    if op.startswith("interpolate"):
        side = a["ix"].shape[-1]
        return f"8x16x{side}x{side} -> {a['out_side']}x{a['out_side']}"
    if op.startswith("sum"):
        return f"{n} float32 values"
    return f"{n} float32 values into {a['bins']} bins"


def _worker(device: str, quick: bool, seed: int) -> dict[str, Any]:
    """In a fresh process: every conv case once under benchmark on and off; digests only."""
    torch = torch_module()
    dev = torch.device(device)
    cases = QUICK_CONV_CASES if quick else CONV_CASES
    out: dict[str, Any] = {}
    for ci, (name, case) in enumerate(cases.items()):
        x, wt, go = _conv_inputs(case, seed + ci)
        once = _conv_op(torch, dev, case, x, wt, go)
        for bench in (False, True):
            with flags(benchmark=bench, conv_tf32=False, matmul_tf32=False):
                res = once()
            for k, v in res.items():
                out[f"{name}|{k}|{'benchmark' if bench else 'default'}"] = digest(v)
    return out


def worker_main() -> None:  # pragma: no cover - runs in a subprocess
    args = json.loads(sys.argv[1])
    print("FPEXPLORE-RESULT " + json.dumps(_worker(**args)))


def fresh_process_probe(device: str, *, quick: bool, seed: int, processes: int) -> dict[str, Any]:
    """Start ``processes`` fresh Python processes at once (they compete for the device, as
    jobs on a shared machine do) and compare their conv results bit for bit."""
    root = str(Path(__file__).resolve().parents[3])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    arg = json.dumps({"device": device, "quick": quick, "seed": seed})
    code = "from fpexplore.lessons.gpu_determinism.experiment import worker_main; worker_main()"
    cmd, pipe = [sys.executable, "-c", code, arg], subprocess.PIPE
    procs = [
        subprocess.Popen(cmd, stdout=pipe, stderr=pipe, text=True, env=env, cwd=root)
        for _ in range(processes)
    ]
    runs, errors = [], []
    for p in procs:
        so, se = p.communicate(timeout=600)
        line = [ln for ln in so.splitlines() if ln.startswith("FPEXPLORE-RESULT ")]
        if p.returncode == 0 and line:
            runs.append(json.loads(line[-1].split(" ", 1)[1]))
        else:
            errors.append(((se or so).strip().splitlines() or [f"exit {p.returncode}"])[-1])
    rows = []
    for key in runs[0] if runs else ():
        row = dict(zip(("case", "output", "config"), key.split("|"), strict=True))
        rows.append(row | {"processes": len(runs), "distinct": len({r[key] for r in runs})})
    return {"processes": processes, "completed": len(runs), "errors": errors, "rows": rows}
