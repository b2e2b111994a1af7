"""`mxnet.ndarray.ndarray`: storage-type ids (MXNet's public constants) for files importing them."""
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
py_slice = slice   # MXNet's module keeps Python's builtin under this name (its own `slice` is an op)
