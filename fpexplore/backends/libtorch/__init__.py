"""The LibTorch (C++) comparison program: its sources, and `build` behind ``make libtorch``."""
