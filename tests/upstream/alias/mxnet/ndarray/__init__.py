"""`mxnet.ndarray`: the legacy array API is not part of hybridserve (its tests are out of scope);
this package exists so that test files importing its internals load."""
