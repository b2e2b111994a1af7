"""Open Inference Protocol v2: datatypes, tensor codecs, request/response framing, schemas."""
from .codec import InferRequest, OutputTensor, encode_response, parse_request  # noqa: F401
from .datatypes import V2_TO_NUMPY, numpy_dtype, v2_datatype  # noqa: F401
