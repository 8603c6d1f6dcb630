"""torch.distributed ranks: ``python -m ...worker FOLDER all WORLD PORT`` (or one ``RANK``).

With ``all``, one process imports torch once and forks the ``WORLD`` ranks, which share its
memory copy on write (about 0.3 GB a rank saved); each rank logs to ``FOLDER/rank<R>.log``,
and the process exits with 1 if any rank failed. The job is ``FOLDER/job.json``; rank 0
writes ``FOLDER/result.json``. Jobs:

- ``gradients``: the per-sample gradients split over the first ``w`` ranks for each ``w`` in
  ``groups``, all-reduced plainly, in float64, in a fixed (tree-aligned) order and with
  Neumaier compensation; plus the rank-ordered sum of the partial sums.
- ``sizes``: one seeded float32 vector per rank (`sums.rank_data`) all-reduced at each message
  size, compared by rank 0 with other orders and the exact sum (`sums.compare`).

Needs torch, numpy and `sums` only, so it runs on a bare machine with torch.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from . import sums


def _bits(t: Any) -> list[int]:
    return t.detach().cpu().numpy().astype(np.float32).view(np.uint32).astype(np.int64).tolist()


def _tree(rows: Any) -> Any:
    """Pairwise sum of the rows, adjacent pairs first: the same tree for any aligned split."""
    while rows.shape[0] > 1:
        if rows.shape[0] % 2:
            raise ValueError("the fixed-order reduction needs a power-of-two number of rows")
        rows = rows[0::2] + rows[1::2]
    return rows[0]


def _neumaier(torch: Any, rows: Any) -> tuple[Any, Any]:
    """Neumaier-compensated sum of the rows in the rows' dtype: (sum, compensation)."""
    s = rows[0].clone()
    c = torch.zeros_like(s)
    for x in rows[1:]:
        t = s + x
        c += torch.where(s.abs() >= x.abs(), (s - t) + x, (x - t) + s)
        s = t
    return s, c


def _gather(dist: Any, torch: Any, t: Any, w: int, group: Any) -> list[Any]:
    parts = [torch.empty_like(t) for _ in range(w)]
    dist.all_gather(parts, t.contiguous(), group=group)
    return parts


def gradients(job: dict[str, Any], folder: Path, rank: int, world: int, dev: Any) -> Any:
    import torch
    import torch.distributed as dist

    g = np.load(folder / "grads.npy")
    b = g.shape[0]
    out: dict[str, Any] = {}
    for w in job["groups"]:
        group = dist.new_group(list(range(w))) if w < world else dist.group.WORLD
        if rank >= w:
            continue
        k = b // w
        blk = torch.from_numpy(g[rank * k : (rank + 1) * k]).to(dev)
        local = blk.sum(0)
        plain = local.clone()
        t0 = time.perf_counter()
        dist.all_reduce(plain, group=group)
        t_plain = time.perf_counter() - t0
        parts = _gather(dist, torch, local, w, group)
        ordered = sum(parts[1:], parts[0])  # ((p0 + p1) + p2) + ...
        p64 = blk.double().sum(0)
        dist.all_reduce(p64, group=group)
        roots = _gather(dist, torch, _tree(blk), w, group)
        tree = _tree(torch.stack(roots))
        s, c = _neumaier(torch, blk)
        ss = torch.stack(_gather(dist, torch, s, w, group))
        cs = torch.stack(_gather(dist, torch, c, w, group))
        tot, comp = _neumaier(torch, ss)
        kahan = tot + (comp + cs.sum(0))
        if rank == 0:
            out[str(w)] = {
                "plain": _bits(plain),
                "rank_ordered": _bits(ordered),
                "float64": _bits(p64.float()),
                "fixed_order": _bits(tree),
                "kahan": _bits(kahan),
                "all_reduce_s": t_plain,
            }
    return out


def sizes(job: dict[str, Any], folder: Path, rank: int, world: int, dev: Any) -> Any:
    import torch
    import torch.distributed as dist

    rows = []
    keep = job.get("keep_bits_upto", 0)
    sync = torch.cuda.synchronize if dev.type == "cuda" else lambda _dev: None
    for m in job["sizes"]:
        x = sums.rank_data(job["seed"], rank, m)
        t = torch.from_numpy(x).to(dev)
        out = t.clone()
        dist.all_reduce(out)
        sync(dev)
        t0 = time.perf_counter()
        again = t.clone()
        dist.all_reduce(again)
        sync(dev)
        seconds = time.perf_counter() - t0
        repeat_same = bool(torch.equal(out, again))
        # every rank's result the same? Only all_reduce is used in this job (an NCCL_ALGO
        # setting may offer no algorithm for other collectives): the max and min of the
        # ranks' checksums agree exactly when the checksums do.
        check = torch.tensor([sums.checksum(out.cpu().numpy())], dtype=torch.int64, device=dev)
        hi, lo = check.clone(), check.clone()
        dist.all_reduce(hi, op=dist.ReduceOp.MAX)
        dist.all_reduce(lo, op=dist.ReduceOp.MIN)
        same_all = bool(hi.item() == lo.item())
        if rank == 0:
            data = np.stack([sums.rank_data(job["seed"], r, m) for r in range(world)])
            got = out.cpu().numpy()
            row = {
                "size": m,
                "seconds": seconds,
                "repeat_identical": repeat_same,
                "same_on_all_ranks": same_all,
                **sums.compare(got, data),
            }
            if m <= keep:
                row["bits"] = _bits(out)
            rows.append(row)
    return rows


JOBS = {"gradients": gradients, "sizes": sizes}


def nccl_version(torch: Any) -> str | None:
    """NCCL's version as torch reports it (a tuple in recent releases, an int in old ones)."""
    try:
        v = torch.cuda.nccl.version()
    except Exception:
        return None
    return ".".join(map(str, v)) if isinstance(v, tuple | list) else str(v)


def main(argv: list[str]) -> int:
    folder, rank, world, port = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    import torch
    import torch.distributed as dist

    result: dict[str, Any] = {"ok": False}
    try:
        dev = torch.device("cpu")
        if job.get("device", "cpu") == "cuda":
            torch.cuda.set_device(rank)
            dev = torch.device("cuda", rank)
        dist.init_process_group(
            job.get("backend", "gloo"),
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world,
            timeout=datetime.timedelta(seconds=job.get("timeout_s", 120)),
        )
        out = JOBS[job["mode"]](job, folder, rank, world, dev)
        result = {"ok": True, "out": out, "torch": torch.__version__, "world": world}
        if job.get("backend") == "nccl":
            result["nccl"] = nccl_version(torch)
    except Exception as exc:
        result = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-3000:],
        }
    finally:
        if dist.is_initialized():
            with contextlib.suppress(Exception):
                dist.destroy_process_group()
    if rank == 0:
        (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")
    return 0 if result.get("ok") else 1


def fork_ranks(argv: list[str]) -> int:
    """Import torch once, fork one child per rank, wait for them all (see the module doc)."""
    import os

    folder, world = Path(argv[0]), int(argv[2])
    # imported before the fork, so that the ranks share it
    import torch.distributed  # noqa: F401

    sys.stdout.flush()
    sys.stderr.flush()
    pids = []
    for rank in range(world):
        pid = os.fork()
        if pid == 0:  # the rank: its own log, then its part of the job
            code = 1
            try:
                fd = os.open(folder / f"rank{rank}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                code = main([argv[0], str(rank), argv[2], argv[3]])
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    print("exit codes of the ranks:", codes, flush=True)
    return 1 if any(codes) else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "all":
        sys.exit(fork_ranks(sys.argv[1:]))
    sys.exit(main(sys.argv[1:]))
