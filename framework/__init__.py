"""hybridserve's framework: MXNet Gluon 2.0 on NumPy (`import framework as mx`)."""
from . import base  # noqa: F401
from .base import MXNetError  # noqa: F401
from .device import Context, Device, cpu, cpu_pinned, current_context, current_device, gpu, num_gpus  # noqa: F401
from . import random  # noqa: F401
from . import initializer  # noqa: F401
from . import initializer as init  # noqa: F401
from . import numpy as np  # noqa: F401
from . import numpy_extension as npx  # noqa: F401
from . import numpy_dispatch_protocol  # noqa: F401  (NumPy functions on framework arrays)
from . import symbol  # noqa: F401
from . import symbol as sym  # noqa: F401
from . import compiler  # noqa: F401  (its optimize_for backends register themselves)
from . import onnx  # noqa: F401  (so does `onnxruntime`; the onnx packages load only when used)
from . import gluon  # noqa: F401
from . import autograd  # noqa: F401
from . import util  # noqa: F401
from . import contrib  # noqa: F401
from . import image  # noqa: F401
from . import recordio  # noqa: F401
from . import _sym_namespaces  # noqa: F401  (mx.sym.np, mx.sym.npx)

context = device = __import__("framework.device", fromlist=["device"])
__version__ = "2.0.0"
