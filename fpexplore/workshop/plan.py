"""The series' map (one row per notebook, with its time estimates) and the workshop plans, whose
every slot is timed from the map."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..templates import render


def binder_note() -> str:
    """Where Binder is, in words: the placeholder is said to be one (no public copy yet)."""
    from ..paths import BINDER_PLACEHOLDER, BINDER_URL

    if BINDER_URL == BINDER_PLACEHOLDER:
        return (
            "Binder: not published yet (the link in the README is a placeholder; a course copy "
            "sets its own with FPEXPLORE_BINDER_URL) — use laptops"
        )
    return f"Binder: {BINDER_URL}"


@dataclass(frozen=True)
class Notebook:
    """One notebook of the series: its map row and its workshop facts."""

    file: str
    title: str
    what: str
    needs: str
    minutes: int  # to work it through: read, run, explore, the exercises
    core: int  # the motivating example and its widget only (short sessions)
    lesson: str | None  # the lesson it narrates (`fpexplore run`/`export`), if one
    command: str  # the one command of the terminal that shows the same thing
    backends: tuple[str, ...] = ()  # what it runs live (names of `fpexplore doctor`)
    recorded_gpu: bool = False  # shows recorded GPU runs where no GPU is present

    @property
    def key(self) -> str:
        return self.file[:2]


NOTEBOOKS: tuple[Notebook, ...] = (
    Notebook("00_floating_point_formats.ipynb", "Floating-point formats",
             "bits, rounding, ULPs, subnormals", "nothing", 20, 15, None,
             "fpexplore tolerance sum --fmt bfloat16 --size 1024"),
    Notebook("01_summation_order.ipynb", "Summation order",
             "why np/torch/TF/DJL/Java sums differ; emulators", "Java for DJL", 30, 25,
             "summation_order", "fpexplore run summation_order --n 10000",
             ("numpy", "torch", "tensorflow", "djl")),
    Notebook("02_rng_seeds.ipynb", "Same seed, different numbers",
             "MT19937, Philox, weight init", "Java for DJL", 30, 20, "rng_seeds",
             "fpexplore run rng_seeds", ("numpy", "torch", "tensorflow", "djl"), True),
    Notebook("03_train_vs_eval.ipynb", "Train vs eval mode",
             "dropout, BatchNorm, torch vs Keras", "TensorFlow", 25, 20, "train_vs_eval",
             "fpexplore run train_vs_eval --mode eval", ("torch", "tensorflow")),
    Notebook("04_cudnn_determinism.ipynb", "cuDNN and determinism",
             "run-to-run variation, which flag fixes what", "recorded GPU runs", 25, 15,
             "gpu_determinism", "fpexplore run gpu_determinism", ("torch",), True),
    Notebook("05_djl_vs_pytorch.ipynb", "DJL vs PyTorch",
             "std, decode, resize, crop, normalize", "Java + DJL jars", 35, 20,
             "djl_normalization", "fpexplore run djl_normalization",
             ("numpy", "torch", "torchvision", "tensorflow", "djl")),
    Notebook("06_tensorflow_vs_pytorch.ipynb", "TensorFlow vs PyTorch",
             "operator defaults, autograd, graph mode", "TensorFlow", 30, 20, "tf_vs_torch",
             "fpexplore run tf_vs_torch --op softmax", ("torch", "tensorflow")),
    Notebook("07_tf32.ipynb", "TF32", "reduced-precision matmul and convolution",
             "recorded GPU runs", 20, 15, "tf32", "fpexplore run tf32", ("torch",), True),
    Notebook("08_cpu_vs_accelerator.ipynb", "CPU vs accelerator",
             "the same op on CPU and GPU", "recorded GPU runs", 20, 15, "cpu_vs_accelerator",
             "fpexplore run cpu_vs_accelerator", ("torch",), True),
    Notebook("09_libtorch_vs_pytorch.ipynb", "LibTorch vs PyTorch",
             "C++ and Python, same bits?", "a C++ build", 25, 15, "libtorch_vs_pytorch",
             "fpexplore run libtorch_vs_pytorch", ("torch", "libtorch")),
    Notebook("10_find_the_divergence.ipynb", "Find the divergence",
             "where two implementations first differ", "torch", 25, 15, None,
             "fpexplore diverge cnn --against keras --plant padding", ("torch", "tensorflow")),
    Notebook("11_determinism_and_distributed.ipynb", "Determinism and distributed runs",
             "is my pipeline deterministic; all-reduce order", "torch", 25, 15,
             "distributed_reduction", "fpexplore run distributed_reduction", ("torch",)),
    Notebook("12_same_code_different_machine.ipynb", "Same code, different machine",
             "CPU dispatch switches; fingerprint and compare two machines", "torch, TensorFlow",
             25, 15, "cpu_dispatch", "fpexplore fingerprint --out here.json",
             ("numpy", "torch", "tensorflow")),
    Notebook("13_small_differences_compound.ipynb", "Small differences compound",
             "one bit, another model: training against a truth; the diversity table",
             "torch (TensorFlow for its row)", 30, 15, "training_drift",
             "fpexplore run training_drift --perturbation summation-order",
             ("numpy", "torch", "tensorflow"), True),
)  # fmt: skip

#: the index's own parts: minutes of the opening and of the closing (the myths table)
INDEX_MINUTES = {"intro": 10, "myths": 5}


def narrating(lesson: str) -> str:
    """The file of the notebook that narrates ``lesson`` ("" if none does)."""
    return next((nb.file for nb in NOTEBOOKS if nb.lesson == lesson), "")


def notebook(key: str) -> Notebook:
    """The notebook whose file starts with ``key`` ("00" … "13")."""
    return {nb.key: nb for nb in NOTEBOOKS}[key]


@dataclass(frozen=True)
class Slot:
    """A slot of a plan: notebooks at their core or full time ("pick" takes one of them: the
    slot lasts as long as the longest), the index's parts, or a break."""

    what: str
    notebooks: tuple[str, ...] = ()
    time: str = "core"  # "core" or "full"
    pick: bool = False
    index: tuple[str, ...] = ()
    break_minutes: int = 0
    goal: str = ""  # what the class can do after the slot (the run sheet says it)

    @property
    def minutes(self) -> int:
        times = [getattr(notebook(k), "minutes" if self.time == "full" else "core")
                 for k in self.notebooks]  # fmt: skip
        work = (max(times) if self.pick else sum(times)) if times else 0
        return work + sum(INDEX_MINUTES[p] for p in self.index) + self.break_minutes


@dataclass(frozen=True)
class Plan:
    title: str
    minutes: int  # the length the plan promises; `check` holds the slots to it
    slots: tuple[Slot, ...]
    after: tuple[str, ...] = ()  # notebooks for afterwards (not timed)

    def check(self) -> None:
        total = sum(s.minutes for s in self.slots)
        if total != self.minutes:
            raise ValueError(f"{self.title}: slots sum to {total} min, not {self.minutes}")


PLANS: tuple[Plan, ...] = (
    Plan(
        "2 hours (one 10-minute break, laptops or Binder)",
        120,
        (
            Slot("the question, the shape of a Comparison, the myths table", index=("intro",),
                 goal="say what a result is measured against, and in which unit"),
            Slot("bits, rounding, ULPs: type numbers into the float-bits widget", ("00",),
                 goal="read a float's bits and count an error in ULPs"),
            Slot("summation order: 10,000 × 0.0001, emulators, error growth", ("01",),
                 goal="explain why np, torch and a Java loop give different sums"),
            Slot("seeds across stacks, or train vs eval (pick one by audience)", ("02", "03"),
                 pick=True, goal="tell a different algorithm from a different seed or mode"),
            Slot("break", break_minutes=10),
            Slot("TensorFlow vs PyTorch: operator defaults", ("06",),
                 goal="find the default that makes two frameworks differ"),
            Slot("GPU effects from the recorded runs: TF32, or CPU vs accelerator (pick one)",
                 ("07", "08"), pick=True, goal="say which GPU differences a flag removes"),
            Slot("which myths held; the tools for your own models", index=("myths",),
                 goal="name the tool to run on their own model tomorrow"),
        ),
        after=("04", "05", "09", "10", "11", "12", "13"),
    ),
    Plan(
        "90 minutes (one framework at a time, laptops or Binder)",
        90,
        (
            Slot("the question, the shape of a Comparison, this page's myths table",
                 index=("intro",)),
            Slot("bits, rounding, ULPs: type numbers into the float-bits widget", ("00",)),
            Slot("summation order: the classic 10,000 × 0.0001, emulators, error growth",
                 ("01",)),
            Slot("seeds across stacks, or train vs eval (pick one by audience)", ("02", "03"),
                 pick=True),
            Slot("GPU effects from the recorded runs: TF32, or CPU vs accelerator (pick one)",
                 ("07", "08"), pick=True),
            Slot('"in practice" summaries; which myths held', index=("myths",)),
        ),
        after=("04", "05", "06", "09", "10", "11", "12", "13"),
    ),
    Plan(
        "Half a day (3.5 hours with two 15-minute breaks)",
        210,
        (
            Slot("floats and sums: the question, formats, rounding, summation order",
                 ("00", "01"), index=("intro",)),
            Slot("randomness and modes: seeds, weight init, dropout, BatchNorm", ("02", "03")),
            Slot("break", break_minutes=15),
            Slot("porting between stacks: DJL preprocessing, TensorFlow vs PyTorch",
                 ("05", "06")),
            Slot("break", break_minutes=15),
            Slot("accelerators: determinism flags, TF32, then CPU vs GPU or LibTorch (pick)",
                 ("04", "07")),
            Slot("", ("08", "09"), pick=True),
            Slot("wrap-up: which myths held; the tools for your own models", index=("myths",)),
        ),
        after=("10", "11", "12", "13"),
    ),
)  # fmt: skip


def map_html(here: Path | None = None) -> str:
    """The index's map: every notebook, what it teaches, what it needs, how long it takes."""
    here = Path.cwd() if here is None else here
    notebooks = [(nb, (here / nb.file).exists()) for nb in NOTEBOOKS]
    return render("workshop_map.html", notebooks=notebooks)


def plan_html(plan: Plan) -> str:
    """One plan as a table whose times run from the map's estimates."""
    plan.check()
    slots, start = [], 0
    for s in plan.slots:
        slots.append((s, start, start + s.minutes, [notebook(k) for k in s.notebooks]))
        start += s.minutes
    after = [notebook(k) for k in plan.after]
    return render("workshop_plan.html", plan=plan, slots=slots, after=after)
