"""Open Inference Protocol v2: datatypes, the typed request/response every transport shares,
tensor codecs, REST request/response framing, schemas."""
from .codec import encode_response, parse_request  # noqa: F401
from .datatypes import V2_TO_NUMPY, numpy_dtype, v2_datatype  # noqa: F401
from .types import (InferInput, InferRequest, InferResponse, OutputTensor,  # noqa: F401
                    RequestedOutput)
