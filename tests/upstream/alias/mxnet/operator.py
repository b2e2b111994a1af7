"""`mxnet.operator`: the registered operator names."""
from framework.ops.registry import all_ops


def get_all_registered_operators() -> list:
    return sorted(all_ops())
