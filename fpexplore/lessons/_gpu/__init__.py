"""GPU experiments (determinism, TF32, CPU vs accelerator, RNG and sums) shared by the recorder
and the live lessons.

Every module here imports only the standard library, numpy, mpmath, torch (inside functions)
and fpexplore modules that need nothing more (`fpexplore.truth` for exact results,
`fpexplore.metrics`/`formats` for ULPs, `fpexplore.records` for bit patterns), so the recorder
runs on a bare CUDA machine that has nothing else installed.
"""
