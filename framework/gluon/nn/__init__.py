"""Neural network layers (`gluon.nn`)."""
from ..block import Block  # noqa: F401
from ..hybrid_block import HybridBlock  # noqa: F401
from ..symbol_block import SymbolBlock  # noqa: F401
from .activations import *  # noqa: F401,F403
from .activations import Activation  # noqa: F401
from .basic_layers import (Dense, Dropout, Flatten, HybridLambda, HybridSequential,  # noqa: F401
                           Identity, Lambda, Sequential)
from .conv_layers import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403,E402
from .embedding import *  # noqa: F401,F403,E402
from .advanced_activations import *  # noqa: F401,F403,E402
from .containers import *  # noqa: F401,F403,E402
from .pixel_shuffle import *  # noqa: F401,F403,E402
from .deformable_conv import *  # noqa: F401,F403,E402
