"""MXNet 2 `np`/`npx` functions with kernels of their own: Array-API extras, window functions and
other NumPy extras, random sampling."""
