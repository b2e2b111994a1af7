"""Mixed precision (MXNet's AMP): the casts `contrib.amp` inserts, and which ops run in bfloat16.

`amp_cast` converts a floating tensor to `dtype` and leaves any other tensor as it is;
`amp_multicast` gives its floating inputs one common type (the widest, or with `cast_narrow`
the narrowest). numpy has no bfloat16, so the engines hold a bfloat16 tensor as float32 whose
values are bfloat16 numbers (`base.held_dtype`): a cast to bfloat16 rounds to the nearest
bfloat16 (ties to even) and stays float32, and the ops after it compute in float32 on those
values (as oneDNN's bf16 kernels accumulate in float32). Files still say bfloat16 (flag 12).

The op lists say how `contrib.amp.convert_symbol` treats an operator (MXNet 1.9.1's names;
the lists are this module's, grouped by why an op belongs there):
* `BF16_FUNCS`: compute in bfloat16 (every floating input cast to bfloat16);
* `BF16_FP32_FUNCS`: run in either type, no cast of their own (the type flows through);
* `FP32_FUNCS`: need float32 accuracy or range (inputs cast back to float32);
* `CONDITIONAL_FP32_FUNCS`: float32 only for some attribute values;
* `WIDEST_TYPE_CASTS`: several floating inputs that must agree (an `amp_multicast` first).
"""
from __future__ import annotations

import numpy as np

from ...base import held_dtype, is_bfloat16, round_to_bfloat16
from ..common import is_float
from ..attrs import Bool, DType, Int
from ..lowering import lowers
from ..registry import register

# ONNX TensorProto.BFLOAT16 (onnx.TensorProto is not imported by the op families)
_ONNX_BF16 = 16


def _cast_one(x: np.ndarray, dtype) -> np.ndarray:
    """`x` as `dtype` when `x` is floating (bfloat16: rounded values held in float32)."""
    if not is_float(x.dtype):
        return x
    if is_bfloat16(dtype):
        return round_to_bfloat16(x)
    return x.astype(dtype, copy=False)


def _cast_type(a, d):
    return [held_dtype(a.dtype) if d[0] is not None and is_float(d[0]) else d[0]]


@register("amp_cast", attrs={"dtype": DType()}, infer_shape=lambda a, s: [s[0]],
          infer_type=_cast_type, strict=True, elementwise=True)
def amp_cast(a, x):
    """Cast a floating tensor to `dtype` (bfloat16: round to nearest even); others pass."""
    return _cast_one(x, a.dtype)


def _common_type(a, dts: list):
    """The type every floating input becomes: float32 if any is (held) float32-wide, else the
    first's; `cast_narrow`: float16 if any is, else float32 (bfloat16 is held as float32, so
    a narrowing to it cannot be seen at run time)."""
    floats = [np.dtype(d) for d in dts if d is not None and is_float(d)]
    if not floats:
        return None
    if a.cast_narrow:
        return min(floats, key=lambda d: d.itemsize)
    return max(floats, key=lambda d: d.itemsize)


def _multicast_type(a, d):
    common = _common_type(a, d)
    return [common if t is not None and is_float(t) else t for t in d]


@register("amp_multicast", attrs={"num_outputs": Int(), "cast_narrow": Bool(False)},
          inputs=lambda a: [f"data_{i}" for i in range(a.num_outputs)],
          num_outputs=lambda a: a.num_outputs, infer_shape=lambda a, s: list(s),
          infer_type=_multicast_type, strict=True)
def amp_multicast(a, *xs):
    """Give the floating inputs one type (the widest; `cast_narrow`: the narrowest)."""
    common = _common_type(a, [x.dtype for x in xs])
    return tuple(_cast_one(x, common) if common is not None else x for x in xs)


# -- ONNX lowering ------------------------------------------------------------------------------
def cast_onnx(ctx, name: str, dtype) -> str:
    """ONNX for a cast of tensor `name` to `dtype`; bfloat16 rounds through BFLOAT16 and back,
    held as float32 like the NumPy kernels (ONNX Runtime rounds to nearest even as they do)."""
    if is_bfloat16(dtype):
        return ctx.op("Cast", [ctx.op("Cast", [name], to=_ONNX_BF16)],
                      to=ctx.tensor_type(np.float32))
    return ctx.op("Cast", [name], to=ctx.tensor_type(dtype))


def _cast_onnx(ctx, name: str, dtype) -> str:
    """amp's casts leave non-floating tensors as they are."""
    if not is_float(ctx.dtype(name)):
        return ctx.op("Identity", [name])
    return cast_onnx(ctx, name, dtype)


@lowers(amp_cast)
def _amp_cast_onnx(ctx, node, ins):
    return _cast_onnx(ctx, ins[0], node.parsed.dtype)


@lowers(amp_multicast)
def _amp_multicast_onnx(ctx, node, ins):
    common = _common_type(node.parsed, [ctx.dtype(x) for x in ins])
    return [_cast_onnx(ctx, x, common) if common is not None else ctx.op("Identity", [x])
            for x in ins]


# -- which ops run in bfloat16 (names as MXNet 1.9.1 spells them) --------------------------------
def _names(*groups: str) -> list[str]:
    return [n for g in groups for n in g.split()]


# GEMM-based: where bfloat16 pays (oneDNN computes them in bf16 with float32 accumulation)
BF16_FUNCS = _names("Convolution FullyConnected")

# exact or order-preserving in any precision: the type of their input flows through
BF16_FP32_FUNCS = _names(
    "abs _add clip relu sqrt square tanh",
    "BatchNorm BatchNormWithReLU LRN Pooling",
    "Concat concat shuffle _shuffle",
)

# BatchNorm keeps its statistics and affine parameters in float32 ("" is the data input)
BF16_USE_FP32_PARAMS = {op: ["", "gamma", "beta", "moving_mean", "moving_var"]
                        for op in ("BatchNorm", "BatchNormWithReLU")}

_SCALAR_OPS = ("Plus Minus RMinus Mul Div RDiv Mod RMod Power RPower Maximum Minimum Hypot "
               "Equal NotEqual Greater GreaterEqual Lesser LesserEqual LogicalAnd LogicalOr "
               "LogicalXor").split()
_SNAKE = {"RMinus": "rminus", "RDiv": "rdiv", "RMod": "rmod", "RPower": "rpower",
          "NotEqual": "not_equal", "GreaterEqual": "greater_equal", "LesserEqual": "lesser_equal",
          "LogicalAnd": "logical_and", "LogicalOr": "logical_or", "LogicalXor": "logical_xor"}
_RANDOM = "exponential gamma generalized_negative_binomial negative_binomial normal poisson uniform"

# float32 for accuracy or range: transcendental functions, reductions, normalisations and
# losses, linear algebra; data movement and indexing ops, whose inputs MXNet widens first;
# random sampling, creation, and the INT8 / fused operators (they choose their own types)
FP32_FUNCS = _names(
    # transcendental and rounding
    "exp expm1 log log10 log2 log1p sin cos tan arcsin arccos arctan sinh cosh "
    "arcsinh arccosh arctanh erf erfinv gamma gammaln reciprocal rsqrt cbrt rcbrt sigmoid "
    "hard_sigmoid softsign sign negative ceil floor round rint fix trunc degrees radians "
    "logical_not",
    "_Power _power broadcast_power _Hypot _hypot broadcast_hypot broadcast_mul",
    # reductions, sorting
    "sum sum_axis nansum prod nanprod mean max max_axis min min_axis norm moments _square_sum "
    "argmax argmin argmax_channel argsort sort topk pick",
    # normalisations, softmax family, losses, outputs
    "softmax Softmax log_softmax softmin SoftmaxActivation SoftmaxOutput LayerNorm GroupNorm "
    "InstanceNorm L2Normalization _contrib_SyncBatchNorm BatchNorm_v1 "
    "LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput SVMOutput "
    "softmax_cross_entropy smooth_l1 MakeLoss make_loss CTCLoss ctc_loss _contrib_CTCLoss "
    "_contrib_ctc_loss Custom _contrib_hawkesll",
    # linear algebra
    "khatri_rao _contrib_count_sketch _contrib_fft _contrib_ifft "
    + " ".join(f"{p}linalg_{f}" for p in ("", "_") for f in
               "gemm gemm2 potrf potri sumlogdiag syrk trmm trsm gelqf syevd makediag "
               "extractdiag maketrian extracttrian inverse det slogdet".split()),
    # layers kept in float32
    "Deconvolution RNN Embedding Dropout UpSampling BilinearSampler GridGenerator "
    "SpatialTransformer ROIPooling Pooling_v1 Convolution_v1 "
    "IdentityAttachKLSparseReg _contrib_AdaptiveAvgPooling2D _contrib_BilinearResize2D "
    "_contrib_DeformableConvolution _contrib_DeformablePSROIPooling",
    # data movement and indexing
    "Flatten flatten Reshape reshape reshape_like expand_dims squeeze transpose SwapAxis "
    "swapaxes SliceChannel split _split_v2 slice slice_axis slice_like crop Crop Pad pad tile "
    "repeat flip reverse depth_to_space space_to_depth broadcast_axes broadcast_axis "
    "broadcast_like broadcast_to diag take batch_take gather_nd scatter_nd one_hot "
    "_onehot_encode SequenceLast SequenceMask SequenceReverse _contrib_boolean_mask "
    "_contrib_index_array _contrib_index_copy ravel_multi_index unravel_index "
    "_ravel_multi_index _unravel_index _histogram _contrib_div_sqrt_dim _contrib_quadratic "
    "_contrib_gradientmultiplier _contrib_bipartite_matching",
    # casts, copies and identities
    "Cast cast cast_storage BlockGrad stop_gradient identity _copy _copyto _NoGradient "
    "_identity_with_attr_like_rhs shape_array size_array zeros_like ones_like",
    # creation and sampling
    "_arange _linspace _eye _full _ones _zeros _zeros_without_dtype _random_randint "
    "random_randint normal uniform _sample_multinomial sample_multinomial "
    "_sample_unique_zipfian "
    + " ".join(f"{p}{k}_{d}{s}" for d in _RANDOM.split() for p, k, s in
               (("_", "random", ""), ("", "random", ""), ("_", "random", "_like"),
                ("_", "sample", ""), ("", "sample", ""))),
    # scalar arithmetic and comparison (both spellings)
    " ".join(f"_{op}Scalar _{_SNAKE.get(op, op.lower())}_scalar" for op in _SCALAR_OPS),
    # quantized and fused operators
    "_contrib_quantize _contrib_quantize_v2 _contrib_dequantize _contrib_requantize "
    "_contrib_quantized_concat _contrib_quantized_conv _contrib_quantized_flatten "
    "_contrib_quantized_fully_connected _contrib_quantized_pooling "
    "_contrib_quantized_elemwise_add _contrib_quantized_act _sg_mkldnn_conv "
    "_sg_mkldnn_fully_connected",
)
# (op, attribute, values that make it float32): exponentials that overflow bfloat16's range
CONDITIONAL_FP32_FUNCS = [
    ("Activation", "act_type", ["softrelu"]),
    ("LeakyReLU", "act_type", ["elu", "selu"]),
]

_BINARY = "add plus sub minus mul div mod maximum minimum equal not_equal greater greater_equal " \
          "lesser lesser_equal logical_and logical_or logical_xor"

# several floating inputs combined element by element: they must share one type
WIDEST_TYPE_CASTS = _names(
    "_Plus _plus _Minus _minus _sub _Mul _mul _Div _div _Mod _mod _Maximum _Minimum "
    "_maximum _minimum _Equal _equal _Not_Equal _not_equal _Greater _greater _Greater_Equal "
    "_greater_equal _Lesser _lesser _Lesser_Equal _lesser_equal _Logical_And _logical_and "
    "_Logical_Or _logical_or _Logical_Xor _logical_xor _scatter_elemwise_div",
    " ".join(f"elemwise_{op}" for op in "add sub mul div".split()),
    " ".join(f"broadcast_{op}" for op in _BINARY.split() if op != "mul"),
    "ElementWiseSum add_n dot batch_dot stack where Correlation",
    "_contrib_MultiBoxDetection _contrib_MultiBoxPrior _contrib_MultiBoxTarget "
    "_contrib_MultiProposal _contrib_Proposal _contrib_PSROIPooling _contrib_ROIAlign "
    "_contrib_box_iou _contrib_box_nms _contrib_box_non_maximum_suppression",
    " ".join(f"{p}random_pdf_{d}" for p in ("", "_") for d in
             (_RANDOM.replace("normal poisson uniform", "normal poisson uniform dirichlet"))
             .split()),
)
