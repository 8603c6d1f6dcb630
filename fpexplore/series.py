"""The series' map: one row per notebook, in order, with what it narrates and its time
estimates (data only: lessons, myths and the workshop pages read it)."""

from __future__ import annotations

from dataclasses import dataclass


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
             "why np/torch/TF/DJL/Java sums differ; emulators", "TensorFlow, Java for DJL", 30, 25,
             "summation_order", "fpexplore run summation_order --n 10000",
             ("numpy", "torch", "tensorflow", "djl")),
    Notebook("02_rng_seeds.ipynb", "Same seed, different numbers",
             "MT19937, Philox, weight init", "TensorFlow, Java for DJL", 30, 20, "rng_seeds",
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
