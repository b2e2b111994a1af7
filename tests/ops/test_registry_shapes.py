"""Every registered operator's shape and dtype facts against its NumPy kernel, on sample inputs.

Each op runs three times, its float inputs in float32, in float16 and in int32 (generated int32
inputs are ones, so that index- and probability-like inputs stay valid): by default on inputs of
shape (2, 3, 4, 5) with its default attrs (its parameters shaped by its `infer_param_shapes`);
ops that need other inputs or attrs have a row in CASES. An op whose output shapes depend on the input
values must say so (`shape_depends_on_data`) and then refuse to guess. Nothing is left out
silently: an op without a runnable sample is named in SKIP with its reason. An op MXNet computes
for floating-point data only (FLOAT_ONLY) must refuse int32 data with an OperatorError, from its
kernel and from its dtype rule alike.
"""
from __future__ import annotations

import numpy as np
import pytest

from framework.base import OperatorError
from framework.ops.registry import DataDependentShape, unique_ops

_OPS = {op.name: op for op in unique_ops()}


def i64(*shape, high=3):
    return np.random.RandomState(1).randint(0, high, shape).astype(np.int64)


def i32(*shape, high=3):
    return i64(*shape, high=high).astype(np.int32)


def u8(*shape):
    return i64(*shape, high=255).astype(np.uint8)


def i8(*shape):
    return (i64(*shape, high=255) - 127).astype(np.int8)


def arr(*values, dtype=np.float32):
    """arr(1, 2) or arr([[1, 2]]): a float32 array."""
    return np.array(values[0] if len(values) == 1 else values, dtype)


def spd(n=3, batch=()):
    """Symmetric positive definite matrices (linalg ops need square, well-conditioned ones)."""
    m = np.random.RandomState(2).uniform(0, 1, batch + (n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(np.float32)


MM = [arr([-1.0]), arr([1.0])]                 # a quantized op's float range inputs
R = arr([1.0])                                 # a one-element range tensor
ROIS = arr([0, 0, 0, 3, 3], [0, 1, 1, 4, 4])   # (batch index, x1, y1, x2, y2)
CONV = dict(kernel=(3, 3), num_filter=4)
NHWC = (1, 6, 6, 3)

# op → (attrs, inputs): an input is a shape (float32 in [0.1, 1)), an array, or None (a parameter
# shaped by the op's `infer_param_shapes`); inputs not given are None too
CASES: dict[str, tuple[dict, list]] = {
    "Activation": (dict(act_type="relu"), []),
    "BilinearSampler": ({}, [(1, 2, 4, 4), np.zeros((1, 2, 3, 3), np.float32)]),
    "Cast": (dict(dtype="int32"), []),
    "Concat": (dict(num_args=2, dim=1), [(2, 3), (2, 4)]),
    "Convolution": (CONV, [(1, 2, 6, 6)]),
    "Crop": (dict(num_args=1, h_w=(2, 3)), [(1, 2, 5, 5)]),
    "Deconvolution": (CONV, [(1, 2, 4, 4)]),
    "Embedding": (dict(input_dim=5, output_dim=3), [arr(0, 4, 2)]),
    "FullyConnected": (dict(num_hidden=4), [(2, 3, 5)]),
    "LRN": (dict(nsize=3), []),
    "Pad": (dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), []),
    "Pooling": (dict(kernel=(2, 2)), []),
    "RNN": (dict(state_size=4, num_layers=1, mode="lstm"), [(3, 2, 5)]),
    "ROIPooling": (dict(pooled_size=(2, 2), spatial_scale=1.0), [(1, 2, 6, 6), ROIS]),
    "Reshape": (dict(shape=(6, -1)), []),
    "SliceChannel": (dict(num_outputs=3), []),
    "UpSampling": (dict(scale=2, sample_type="nearest", num_args=1), [(1, 2, 3, 3)]),
    "_contrib_DeformableConvolution": (CONV, [(1, 2, 6, 6), (1, 18, 4, 4)]),
    "_contrib_DeformablePSROIPooling": (dict(spatial_scale=1.0, output_dim=2, group_size=2,
                                             pooled_size=2, no_trans=True),
                                        [(1, 8, 6, 6), ROIS]),
    "_contrib_ModulatedDeformableConvolution": (CONV, [(1, 2, 6, 6), (1, 18, 4, 4),
                                                       (1, 9, 4, 4)]),
    "_contrib_MultiBoxDetection": ({}, [(1, 3, 4), (1, 16), arr([[.1, .1, .4, .4]] * 4)[None]]),
    "_contrib_MultiBoxTarget": ({}, [arr([[.1, .1, .4, .4]] * 4)[None],
                                     arr([[1, .1, .1, .4, .4]]).reshape(1, 1, 5), (1, 3, 4)]),
    "_contrib_MultiProposal": (dict(rpn_pre_nms_top_n=8, rpn_post_nms_top_n=4, rpn_min_size=1),
                               [(1, 24, 3, 3), (1, 48, 3, 3), arr([48, 48, 1])[None]]),
    "_contrib_PSROIPooling": (dict(spatial_scale=1.0, output_dim=2, pooled_size=2),
                              [(1, 8, 6, 6), ROIS]),
    "_contrib_Proposal": (dict(rpn_pre_nms_top_n=8, rpn_post_nms_top_n=4, rpn_min_size=1),
                          [(1, 24, 3, 3), (1, 48, 3, 3), arr([48, 48, 1])[None]]),
    "_contrib_ROIAlign": (dict(pooled_size=(2, 2), spatial_scale=1.0), [(1, 2, 6, 6), ROIS]),
    "_contrib_RROIAlign": (dict(pooled_size=(2, 2), spatial_scale=1.0),
                           [(1, 2, 6, 6), arr([0, 3, 3, 2, 2, 30])[None]]),
    "_contrib_bipartite_matching": (dict(threshold=0.1), [(2, 3, 4)]),
    "_contrib_box_decode": ({}, [(2, 3, 4), (1, 3, 4)]),
    "_contrib_box_encode": ({}, [arr([[1, 0, -1]]), i32(1, 3, high=2).astype(np.float32),
                                 arr([[[.1, .1, .4, .4]] * 3]), arr([[[.2, .2, .5, .5]] * 2]),
                                 arr(0, 0, 0, 0), arr(.1, .1, .2, .2)]),
    "_contrib_box_iou": ({}, [(3, 4), (2, 4)]),
    "_contrib_box_nms": ({}, [(2, 5, 6)]),
    "_contrib_dequantize": ({}, [i8(2, 3), *MM]),
    "_contrib_quantized_act": (dict(act_type="relu"), [i8(2, 3), *MM]),
    "_contrib_quantized_concat": (dict(num_args=2, dim=1), [i8(2, 3), i8(2, 2), *MM, *MM]),
    "_contrib_quantized_conv": (dict(CONV, no_bias=True), [u8(1, 2, 6, 6), i8(4, 2, 3, 3),
                                                            *MM, *MM]),
    "_contrib_quantized_flatten": ({}, [i8(2, 3, 4), *MM]),
    "_contrib_quantized_fully_connected": (dict(num_hidden=4, no_bias=True),
                                           [i8(2, 5), i8(4, 5), *MM, *MM]),
    "_contrib_quantized_pooling": (dict(kernel=(2, 2)), [u8(1, 2, 4, 4), *MM]),
    "_contrib_requantize": ({}, [i32(2, 3, high=1000), R * -4, R * 4]),
    "_contrib_quantized_npi_add": ({}, [i8(2, 3), u8(1, 3), *MM, *MM]),
    "_contrib_quantized_elemwise_mul": ({}, [i8(2, 3), i8(2, 3), *MM, *MM]),
    "_contrib_quantized_transpose": (dict(axes=(1, 0)), [i8(2, 3), *MM]),
    "_npx_quantized_reshape": (dict(newshape=(3, 2)), [i8(2, 3), *MM]),
    "_contrib_quantized_embedding": (dict(input_dim=4, output_dim=3),
                                     [arr([2.0, 0.0]), i8(4, 3), *MM]),
    "_full": (dict(shape=(2, 3), value=2.0), []),
    "_hs_affine": ({}, [(2, 3, 4, 5), (5,), (5,)]),
    "_hs_chmax": ({}, [(2, 3, 4, 5), (5,)]),
    "_hs_concat": (dict(num_args=2, dim=1), [(2, 3), (2, 4)]),
    "_hs_conv2d": (dict(CONV, no_bias=True), [NHWC, (27, 4)]),
    "_hs_dense": (dict(num_hidden=4, no_bias=True), [(2, 5), (4, 5)]),
    "_image_adjust_lighting": (dict(alpha=(.1, .2, .3)), [(4, 4, 3)]),
    "_image_crop": (dict(x=1, y=1, width=2, height=2), [(4, 4, 3)]),
    "_image_flip_left_right": ({}, [(4, 5, 3)]),
    "_image_flip_top_bottom": ({}, [(2, 4, 5, 3)]),
    "_image_random_brightness": (dict(min_factor=.5, max_factor=1.5), [(4, 4, 3)]),
    "_image_random_color_jitter": (dict(brightness=.1, contrast=.1, saturation=.1, hue=.1),
                                   [(4, 4, 3)]),
    "_image_random_contrast": (dict(min_factor=.5, max_factor=1.5), [(4, 4, 3)]),
    "_image_random_crop": (dict(width=2, height=3), [(4, 4, 3)]),
    "_image_random_flip_left_right": ({}, [(4, 5, 3)]),
    "_image_random_flip_top_bottom": ({}, [(4, 5, 3)]),
    "_image_random_hue": (dict(min_factor=.5, max_factor=1.5), [(4, 4, 3)]),
    "_image_random_lighting": ({}, [(4, 4, 3)]),
    "_image_random_resized_crop": (dict(width=2, height=3), [(4, 4, 3)]),
    "_image_random_saturation": (dict(min_factor=.5, max_factor=1.5), [(4, 4, 3)]),
    "_image_resize": (dict(size=(3, 2)), [(4, 5, 3)]),
    "_image_to_tensor": ({}, [(4, 5, 3)]),
    "_linalg_gemm": ({}, [(2, 3), (3, 4), (2, 4)]),
    "_linalg_gemm2": ({}, [(2, 3), (3, 4)]),
    "_np_reshape": (dict(newshape=(6, -1)), []),
    "_npi_arange": (dict(start=1, stop=7, step=2), []),
    "_npi_bitwise_and": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_bitwise_and_scalar": (dict(scalar=3), [i32(2, 3)]),
    "_npi_bitwise_not": ({}, [i32(2, 3)]),
    "_npi_bitwise_or": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_bitwise_or_scalar": (dict(scalar=3), [i32(2, 3)]),
    "_npi_bitwise_xor": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_bitwise_xor_scalar": (dict(scalar=3), [i32(2, 3)]),
    "_npi_blackman": (dict(M=5), []),
    "_npi_boolean_mask": ({}, [(4, 3), arr(1, 0, 1, 1)]),
    "_npi_broadcast_to": (dict(shape=(2, 3, 4)), [(3, 1)]),
    "_npi_cholesky": ({}, [spd()]),
    "_npi_concatenate": (dict(num_args=2, axis=0), [(2, 3), (1, 3)]),
    "_npi_cross": ({}, [(4, 3), (4, 3)]),
    "_npi_delete": (dict(start=1, stop=4, step=2, axis=1), [(2, 5)]),
    "_npi_det": ({}, [spd(3, (2,))]),
    "_npi_diag": (dict(k=1), [(4, 3)]),
    "_npi_diag_indices_from": ({}, [(3, 3)]),
    "_npi_dot": ({}, [(2, 3), (3, 4)]),
    "_npi_eig": ({}, [spd()]),
    "_npi_eigh": ({}, [spd(3, (2,))]),
    "_npi_eigvals": ({}, [spd()]),
    "_npi_eigvalsh": ({}, [spd()]),
    "_npi_einsum": (dict(num_args=2, subscripts="...ij,jk"), [(2, 3, 4), (4, 5)]),
    "_npi_ediff1d": (dict(to_begin_scalar=1.0, to_end_arr_given=True), [(2, 3), (2,)]),
    "_npi_eye": (dict(N=3, M=4, k=1), []),
    "_npi_fill_diagonal": (dict(val=(1.0,)), [(3, 3)]),
    "_npi_full": (dict(shape=(2, 3), value=2.0), []),
    "_npi_full_like": (dict(fill_value=2.0), []),
    "_npi_gcd": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_gcd_scalar": (dict(scalar=2), [i32(2, 3)]),
    "_npi_hamming": (dict(M=5), []),
    "_npi_hanning": (dict(M=5), []),
    "_npi_indices": (dict(dimensions=(2, 3)), []),
    "_npi_insert_scalar": (dict(int_ind=1, axis=0), [(3, 4), (2, 4)]),
    "_npi_insert_slice": (dict(start=0, stop=3, val=7.0, axis=1), [(3, 4)]),
    "_npi_insert_tensor": (dict(axis=1), [(3, 4), (3, 2), i64(2)]),
    "_npi_interp": ({}, [arr(0, 1, 2), arr(5, 6, 7), (2, 3)]),
    "_npi_inv": ({}, [spd()]),
    "_npi_lcm": ({}, [i32(2, 3) + 1, i32(2, 3) + 1]),
    "_npi_lcm_scalar": (dict(scalar=2), [i32(2, 3)]),
    "_npi_left_shift": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_left_shift_scalar": (dict(scalar=2), [i32(2, 3)]),
    "_npi_linspace": (dict(start=0, stop=1, num=5), []),
    "_npi_logspace": (dict(start=0, stop=1, num=5), []),
    "_npi_lstsq": ({}, [(4, 3), (4, 2)]),
    "_npi_matmul": ({}, [(2, 3, 4), (4, 5)]),
    "_npi_matrix_rank": ({}, [(2, 3, 4), arr(0.1, 0.2)]),
    "_npi_moveaxis": (dict(source=(0,), destination=(2,)), []),
    "_npi_nonzero": ({}, [np.eye(4, 5, dtype=np.float32)]),
    "_npi_pad": (dict(pad_width=((1, 0), (0, 2), (0, 0), (1, 1))), []),
    "_npi_percentile": (dict(axis=(1, 2)), [(2, 3, 4, 5), arr(10, 50, 90)]),
    "_npi_pinv": ({}, [(2, 3, 4), arr(0.1, 0.2)]),
    "_npi_polyval": ({}, [arr(1, 2, 3), (2, 3)]),
    "_npi_repeats": (dict(repeats=2, axis=1), []),
    "_npi_resize_fallback": (dict(new_shape=(7, 3)), []),
    "_npi_right_shift": ({}, [i32(2, 3), i32(2, 3)]),
    "_npi_right_shift_scalar": (dict(scalar=1), [i32(2, 3)]),
    "_npi_rleft_shift_scalar": (dict(scalar=2), [i32(2, 3)]),
    "_npi_rright_shift_scalar": (dict(scalar=8), [i32(2, 3)]),
    "_npi_slogdet": ({}, [spd(3, (2,))]),
    "_npi_solve": ({}, [spd(), (3, 2)]),
    "_npi_tensordot": (dict(a_axes_summed=(1, 2), b_axes_summed=(0, 1)), [(2, 3, 4), (3, 4, 5)]),
    "_npi_tensordot_int_axes": (dict(axes=1), [(2, 3), (3, 4)]),
    "_npi_tensorinv": (dict(ind=1), [spd(4).reshape(4, 2, 2)]),
    "_npi_tensorsolve": ({}, [spd(6).reshape(6, 2, 3), (6,)]),
    "_npi_tri": (dict(N=3, M=4), []),
    "_npi_tril_indices": (dict(n=4, k=-1, m=3), []),
    "_npi_unique": (dict(return_counts=True, return_inverse=True), [i32(10)]),
    "_npi_unravel_index_fallback": (dict(shape=(3, 4)), [arr(1, 5, 11)]),
    "_npx_reshape": (dict(newshape=(6, -1)), []),
    "_ones": (dict(shape=(2, 3)), []),
    "_random_randint": (dict(low=0, high=5, shape=(2, 3)), []),
    "_rnn_param_concat": (dict(num_args=2, dim=0), [(6,), (4,)]),
    "_zeros": (dict(shape=(2, 3)), []),
    "_empty": (dict(shape=(2, 3)), []),
    "_npi_empty": (dict(shape=(2, 3)), []),
    "_npi_identity": (dict(shape=(3, 3)), []),
    "_npi_ones": (dict(shape=(2, 3)), []),
    "_npi_zeros": (dict(shape=(2, 3)), []),
    "add_n": (dict(num_args=3), [(2, 3)] * 3),
    "amp_multicast": (dict(num_outputs=2), [(2, 3), (4,)]),
    "amp_cast": (dict(dtype="float16"), []),
    "batch_dot": ({}, [(2, 3, 4), (2, 4, 5)]),
    "broadcast_to": (dict(shape=(2, 3, 4)), [(3, 1)]),
    "depth_to_space": (dict(block_size=2), [(1, 8, 2, 3)]),
    "dot": ({}, [(2, 3), (3, 4)]),
    "expand_dims": (dict(axis=1), []),
    "one_hot": (dict(depth=4), [arr(0, 3, 1)]),
    "pick": ({}, [(2, 3), arr(0, 2)]),
    "repeat": (dict(repeats=2, axis=0), []),
    "slice": (dict(begin=(0, 1), end=(2, 3)), []),
    "slice_axis": (dict(axis=1, begin=0, end=2), []),
    "space_to_depth": (dict(block_size=2), [(1, 2, 4, 6)]),
    "stack": (dict(num_args=2, axis=1), [(2, 3), (2, 3)]),
    "tile": (dict(reps=(2, 1)), []),
}

# ops no sample can run on its own, each with the reason
SKIP: dict[str, str] = {
    "_hs_const": "holds a value folded at build time; its kernel never runs (the plan binds the "
                 "value): tests/compiler/test_op_facts.py checks its shape and dtype attrs",
    "_sg_onnxruntime": "runs a region partitioned by optimize_for, with a warm session: "
                       "tests/compiler/test_partition.py checks it against the ops it replaces",
    "_sg_mkldnn_conv": "reads its configuration from the node's subgraph (a real MXNet INT8 "
                       "export): tests/int8/test_mxnet_int8_exports.py runs those files",
    "_contrib_quantized_rnn": "its fused parameter vector and per-gate scales come from a "
                              "calibrated LSTM: tests/int8/test_quantized_ops_v2.py runs it "
                              "against the float LSTM",
    "_sg_mkldnn_fully_connected": "reads its configuration from the node's subgraph (a real MXNet "
                                  "INT8 export): tests/int8/test_mxnet_int8_exports.py runs them",
}

# NumPy's linalg refuses float16 (so does MXNet's): these ops take float32 and float64 only
NO_FLOAT16 = {"_npi_cholesky", "_npi_det", "_npi_eig", "_npi_eigh", "_npi_eigvals",
              "_npi_eigvalsh", "_npi_inv", "_npi_matrix_rank", "_npi_matrix_rank_none_tol",
              "_npi_pinv", "_npi_pinv_scalar_rcond", "_npi_qr", "_npi_slogdet", "_npi_solve",
              "_npi_svd", "_npi_tensorinv", "_npi_tensorsolve"}

# MXNet's REAL type switch: these take float data only (integer data is an OperatorError)
FLOAT_ONLY = {"BatchNorm", "BatchNorm_v1", "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm",
              "RNN", "_contrib_AdaptiveAvgPooling2D", "LinearRegressionOutput",
              "LogisticRegressionOutput", "MAERegressionOutput", "_contrib_box_decode",
              "_contrib_box_encode", "_contrib_box_iou", "_contrib_box_nms", "masked_softmax",
              "masked_log_softmax"}


def _inputs(op, a, given: list, dtype: str = "float32") -> list[np.ndarray]:
    """The op's sample inputs: float32 ones (generated, or given as float32 arrays) in `dtype`."""
    names = op.input_names(a)
    specs = list(given) + [None] * (len(names) - len(given))
    shapes = [tuple(np.shape(s)) if isinstance(s, (np.ndarray, np.generic)) else s for s in specs]
    if shapes and shapes[0] is None:
        shapes[0] = (2, 3, 4, 5)
    if None in shapes and op.infer_param_shapes is not None:
        shapes = [s if s is not None else (tuple(f) if f is not None else None)
                  for s, f in zip(shapes, op.infer_param_shapes(a, shapes))]
    default = shapes[0] if shapes else None
    rng = np.random.RandomState(0)
    out = []
    for spec, shp in zip(specs, shapes):
        if isinstance(spec, (np.ndarray, np.generic)):
            x = np.asarray(spec)
        elif np.dtype(dtype).kind == "i":
            x = np.ones(shp if shp is not None else default, np.float32)
        else:
            x = rng.uniform(0.1, 1.0, shp if shp is not None else default).astype(np.float32)
        out.append(x.astype(dtype) if x.dtype == np.float32 else x)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("name", sorted(set(_OPS) - set(SKIP)))
def test_declared_shapes_and_dtypes_match_the_kernel(name, dtype):
    op = _OPS[name]
    attrs, given = CASES.get(name, ({}, []))
    a = op.parse_attrs(attrs)
    ins = _inputs(op, a, given, dtype)
    if dtype == "float16" and name in NO_FLOAT16:
        with pytest.raises(TypeError, match="float16"):
            op.kernel(a, *ins)
        return
    if dtype == "int32" and name in FLOAT_ONLY:
        with pytest.raises(OperatorError, match=f"{name}: takes floating-point data only"):
            op.kernel(a, *ins)
        with pytest.raises(OperatorError, match=name):
            op.dtypes(a, [x.dtype for x in ins])
        return
    with np.errstate(all="ignore"):
        res = op.kernel(a, *ins)
    outs = [np.asarray(o) for o in (res if isinstance(res, tuple) else (res,))]
    assert len(outs) == op.n_outputs(a), f"{name}: {len(outs)} outputs, declares {op.n_outputs(a)}"
    in_shapes = [x.shape for x in ins]
    if op.depends_on_data(a):
        with pytest.raises(DataDependentShape, match=name):
            op.shapes(a, in_shapes)
    else:
        assert op.shapes(a, in_shapes) == [o.shape for o in outs], name
    declared = op.dtypes(a, [x.dtype for x in ins])
    assert [np.dtype(d) for d in declared] == [o.dtype for o in outs], name


def test_every_op_declares_a_shape_rule_or_data_dependence():
    missing = [op.name for op in _OPS.values()
               if op.infer_shape is None and op.shape_depends_on_data is False]
    assert missing == []


def test_the_sample_and_skip_tables_name_live_ops_and_give_reasons():
    assert set(CASES) <= set(_OPS), sorted(set(CASES) - set(_OPS))
    assert set(SKIP) <= set(_OPS), sorted(set(SKIP) - set(_OPS))
    assert NO_FLOAT16 <= set(_OPS) - set(SKIP), sorted(NO_FLOAT16 - set(_OPS))
    assert FLOAT_ONLY == {op.name for op in _OPS.values() if op.float_only}
    assert not set(SKIP) & set(CASES)
    assert all(reason.strip() for reason in SKIP.values())
