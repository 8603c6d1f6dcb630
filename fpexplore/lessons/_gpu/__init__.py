"""GPU experiments shared by the recorder and the live lessons.

Modules here import only the standard library, numpy, mpmath, torch (inside functions) and
fpexplore modules that need nothing more, so the recorder runs on a bare CUDA machine.
"""
