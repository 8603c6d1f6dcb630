"""The LibTorch (C++) comparison program: its sources, and the CMake build behind `make libtorch`.

`build` builds it against the installed torch wheel's libtorch; `fpexplore.backends.
libtorch_program` finds the built program and runs jobs on it. Nothing here imports torch.
"""
