"""This machine, probed: the CPU's model and flags (`cpu`), the path each library takes
(`paths`) and what the BLAS and DNN libraries report of theirs (`libpaths`). Below the lessons
and `fpexplore.dispatch`, which both read it."""
