"""GPU experiments (determinism, TF32, CPU vs accelerator, RNG and sums) shared by the recorder
and the live lessons.

Every module here imports only the standard library, numpy, mpmath and torch (torch inside
functions), so the recorder runs on a bare CUDA machine that has nothing else installed.
"""
