"""`mxnet.numpy_op_signature`: MXNet's generated signatures are an MXNet internal; none here."""


def _get_builtin_op(op_name: str):
    return None
