"""`mxnet.ndarray._internal.NDArrayBase`: tests/python/conftest.py's leak check looks for
arrays still held by MXNet's C++ engine; hybridserve's arrays are plain Python objects, so no
array is an instance of this class and the check finds nothing to report."""


class NDArrayBase:
    _alive = False
