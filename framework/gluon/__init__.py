"""Gluon: Blocks, HybridBlocks, Parameters and layers."""
from . import nn  # noqa: F401
from .block import Block, HookHandle  # noqa: F401
from .hybrid_block import HybridBlock  # noqa: F401
from ..base import DeferredInitializationError  # noqa: F401
from .parameter import Constant, Parameter  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from .compile import compile_model  # noqa: F401
from . import rnn  # noqa: F401,E402
from . import model_zoo  # noqa: F401,E402
from . import utils  # noqa: F401,E402
from . import loss  # noqa: F401,E402
from . import data  # noqa: F401,E402
from . import contrib  # noqa: F401,E402
