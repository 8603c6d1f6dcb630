"""Which ops raise under ``torch.use_deterministic_algorithms(True)``, and whether cuBLAS
needs ``CUBLAS_WORKSPACE_CONFIG`` to run deterministically."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ...backends.torch_device import flags, synchronize, torch_module
from .._gpu.common import first_line


def _probe_ops(torch: Any, dev: Any) -> dict[str, Callable[[], Any]]:
    F = torch.nn.functional
    gen = torch.Generator(device="cpu").manual_seed(0)

    def r(*shape: int, grad: bool = False) -> Any:
        return torch.randn(*shape, generator=gen).to(dev).requires_grad_(grad)

    def z() -> Any:
        return torch.zeros(10, device=dev)

    idx = torch.randint(0, 10, (1000,), generator=gen).to(dev)
    offsets = torch.arange(0, 1000, 10, device=dev)

    def grid() -> Any:  # sampling points in [-1, 1)
        return torch.rand(1, 4, 4, 2, device=dev) * 2 - 1

    def back(fn: Callable[[Any], Any], *shape: int) -> Callable[[], Any]:
        def go() -> Any:
            x = r(*shape, grad=True)
            fn(x).sum().backward()
            return x.grad

        return go

    return {
        "matmul (cuBLAS)": lambda: r(64, 64) @ r(64, 64),
        "conv2d forward+backward": back(lambda x: F.conv2d(x, r(4, 3, 3, 3)), 2, 3, 16, 16),
        "index_add_": lambda: z().index_add_(0, idx, r(1000)),
        "scatter_add_": lambda: z().scatter_add_(0, idx, r(1000)),
        "scatter_reduce_(sum)": lambda: z().scatter_reduce_(0, idx, r(1000), "sum"),
        "index_put_(accumulate=True)": lambda: z().index_put_((idx,), r(1000), accumulate=True),
        "put_(accumulate=True)": lambda: z().put_(idx, r(1000), True),
        "index_copy_": lambda: z().index_copy_(0, torch.arange(10, device=dev), r(10)),
        **{
            f"interpolate backward ({mode})": back(
                lambda x, mode=mode: F.interpolate(x, scale_factor=2.5, mode=mode), 1, 2, 8, 8
            )
            for mode in ("bilinear", "bicubic", "nearest")
        },
        **{
            f"embedding_bag backward ({mode})": back(
                lambda w, mode=mode: F.embedding_bag(idx, w, offsets, mode=mode), 10, 4
            )
            for mode in ("sum", "max")
        },
        "embedding backward": back(lambda w: F.embedding(idx, w), 10, 4),
        "adaptive_avg_pool2d backward": back(lambda x: F.adaptive_avg_pool2d(x, 3), 1, 2, 8, 8),
        "adaptive_max_pool2d backward": back(lambda x: F.adaptive_max_pool2d(x, 3), 1, 2, 8, 8),
        "max_pool3d backward": back(lambda x: F.max_pool3d(x, 2), 1, 2, 4, 4, 4),
        "avg_pool3d backward": back(lambda x: F.avg_pool3d(x, 2), 1, 2, 4, 4, 4),
        "grid_sample backward": back(
            lambda x: F.grid_sample(x, grid(), align_corners=False), 1, 2, 8, 8
        ),
        **{
            f"{name}_pad2d backward": back(
                lambda x, mode=mode: F.pad(x, (2, 2, 2, 2), mode=mode), 1, 2, 8, 8
            )
            for name, mode in (("reflection", "reflect"), ("replication", "replicate"))
        },
        "nll_loss2d": lambda: F.nll_loss(
            F.log_softmax(r(2, 3, 4, 4), 1), torch.zeros(2, 4, 4, dtype=torch.long, device=dev)
        ),
        "ctc_loss backward": _ctc(torch, dev, r),
        "histc": lambda: torch.histc(r(1000), bins=10),
        "bincount(weights)": lambda: torch.bincount(idx, weights=r(1000)),
        "kthvalue": lambda: torch.kthvalue(r(100), 5),
        "median(dim)": lambda: torch.median(r(10, 10), dim=1),
        "cumsum": lambda: torch.cumsum(r(1000), 0),
        "sort (stable=False)": lambda: torch.sort(r(1000)),
    }


def _ctc(torch: Any, dev: Any, r: Callable[..., Any]) -> Callable[[], Any]:
    def go() -> Any:
        logits = r(20, 2, 5, grad=True)
        lp = logits.log_softmax(2)
        targets = torch.tensor([[1, 2, 3], [2, 3, 4]], device=dev)
        loss = torch.nn.functional.ctc_loss(
            lp, targets, torch.tensor([20, 20]), torch.tensor([3, 3])
        )
        loss.backward()
        return logits.grad

    return go


def _attempt(fn: Callable[[], Any], dev: Any, errors: Any = Exception) -> tuple[bool, str]:
    """``fn()`` once under use_deterministic_algorithms(True): (did it raise, why)."""
    with flags(deterministic_algorithms=True):
        try:
            fn()
            synchronize(dev)
        except errors as exc:
            return True, first_line(exc)
    return False, ""


def probe_raises(dev: Any) -> list[dict[str, Any]]:
    """Each op once under use_deterministic_algorithms(True): did it raise, and why (with
    CUBLAS_WORKSPACE_CONFIG, on which the cuBLAS check depends)."""
    torch = torch_module()
    out = []
    for name, fn in _probe_ops(torch, dev).items():
        raised, msg = _attempt(fn, dev)  # whatever the op raises is recorded
        row = {"op": name, "raised": raised, "message": msg}
        out.append(row | {"CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG")})
    return out


def probe_cublas(dev: Any) -> list[dict[str, Any]]:
    """A cuBLAS matmul under use_deterministic_algorithms(True), with CUBLAS_WORKSPACE_CONFIG
    unset and then set to :4096:8 (torch documents that cuBLAS needs it to be deterministic)."""
    torch = torch_module()
    saved = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    out = []
    try:
        for value in (None, ":4096:8"):
            set_workspace(value)
            a = torch.ones(64, 64, device=dev)
            raised, msg = _attempt(lambda a=a: (a @ a).sum().item(), dev, RuntimeError)
            out.append({"CUBLAS_WORKSPACE_CONFIG": value, "raised": raised, "message": msg})
    finally:
        set_workspace(saved)
    return out


def set_workspace(value: str | None) -> None:
    """Set ``CUBLAS_WORKSPACE_CONFIG`` to ``value``, or unset it (None)."""
    if value is None:
        os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
    else:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = value
