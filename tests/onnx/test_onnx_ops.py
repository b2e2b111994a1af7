"""Each op's ONNX lowering equals its NumPy kernel over attribute variants (small shapes)."""
import numpy as np
import pytest

from onnx_util import check_op

R = np.random.default_rng(7)


def f32(*shape, lo=None):
    x = R.standard_normal(shape).astype(np.float32)
    return np.abs(x) + lo if lo is not None else x


CONV = [
    ({"kernel": (3, 3), "num_filter": 4}, (2, 3, 7, 6), (4, 3, 3, 3)),
    ({"kernel": (3, 3), "num_filter": 4, "stride": (2, 1), "pad": (1, 2), "dilate": (1, 2)},
     (2, 3, 7, 8), (4, 3, 3, 3)),
    ({"kernel": (3, 3), "num_filter": 6, "num_group": 3, "pad": (1, 1)}, (2, 3, 5, 5), (6, 1, 3, 3)),
    ({"kernel": (3,), "num_filter": 4, "pad": (1,), "no_bias": True}, (2, 3, 9), (4, 3, 3)),
    ({"kernel": (2, 2, 2), "num_filter": 2, "stride": (2, 2, 2)}, (1, 3, 4, 4, 4), (2, 3, 2, 2, 2)),
    ({"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "layout": "NHWC"}, (2, 5, 6, 3), (4, 3, 3, 3)),
]


@pytest.mark.parametrize("attrs,xs,ws", CONV)
def test_convolution(attrs, xs, ws):
    ins = [f32(*xs), f32(*ws)] + ([] if attrs.get("no_bias") else [f32(ws[0])])
    check_op("Convolution", attrs, ins, params=[f"x{i}" for i in range(1, len(ins))])


DECONV = [
    ({"kernel": (3, 3), "num_filter": 4, "stride": (2, 2), "pad": (1, 1), "adj": (1, 1)},
     (2, 3, 4, 5), (3, 4, 3, 3)),
    ({"kernel": (4, 4), "num_filter": 2, "stride": (2, 2), "target_shape": (9, 9), "no_bias": True},
     (1, 3, 4, 4), (3, 2, 4, 4)),
    ({"kernel": (3,), "num_filter": 4, "num_group": 2, "dilate": (2,)}, (2, 4, 5), (4, 2, 3)),
]


@pytest.mark.parametrize("attrs,xs,ws", DECONV)
def test_deconvolution(attrs, xs, ws):
    ins = [f32(*xs), f32(*ws)] + ([] if attrs.get("no_bias") else [f32(ws[1] * attrs.get("num_group", 1))])
    check_op("Deconvolution", attrs, ins, params=[f"x{i}" for i in range(1, len(ins))])


POOL = [
    {"kernel": (3, 3), "pool_type": "max", "stride": (2, 2)},
    {"kernel": (3, 3), "pool_type": "max", "stride": (2, 2), "pooling_convention": "full"},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1),
     "count_include_pad": False},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1),
     "pooling_convention": "full"},
    {"kernel": (2, 3), "pool_type": "sum", "stride": (2, 2), "pooling_convention": "full"},
    {"kernel": (2, 2), "pool_type": "lp", "p_value": 2, "stride": (1, 1)},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pooling_convention": "same"},
    {"kernel": (1, 1), "pool_type": "max", "global_pool": True},
    {"kernel": (1, 1), "pool_type": "avg", "global_pool": True},
    {"kernel": (1, 1), "pool_type": "sum", "global_pool": True},
    {"kernel": (3, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1), "layout": "NHWC"},
    {"kernel": (1, 1), "pool_type": "avg", "global_pool": True, "layout": "NHWC"},
]


@pytest.mark.parametrize("attrs", POOL)
def test_pooling_2d(attrs):
    check_op("Pooling", attrs, [f32(2, 3, 8, 7)])


@pytest.mark.parametrize("attrs,shape", [
    ({"kernel": (3,), "pool_type": "avg", "stride": (2,), "pooling_convention": "full"}, (2, 3, 8)),
    ({"kernel": (2, 2, 2), "pool_type": "max", "stride": (2, 2, 2)}, (1, 2, 5, 4, 4)),
])
def test_pooling_1d_3d(attrs, shape):
    check_op("Pooling", attrs, [f32(*shape)])


@pytest.mark.parametrize("attrs", [{}, {"fix_gamma": False}, {"axis": -1, "fix_gamma": False},
                                   {"output_mean_var": True, "fix_gamma": False}])
def test_batchnorm(attrs):
    C = 4 if attrs.get("axis", 1) == 1 else 5
    ins = [f32(2, 4, 3, 5), f32(C, lo=0.5), f32(C), f32(C), f32(C, lo=0.5)]
    check_op("BatchNorm", attrs, ins, params=["x1", "x2", "x3", "x4"])


@pytest.mark.parametrize("attrs,xs", [({"num_hidden": 5}, (2, 3, 4)),
                                      ({"num_hidden": 5, "flatten": False}, (2, 3, 4)),
                                      ({"num_hidden": 5, "no_bias": True}, (2, 6))])
def test_fully_connected(attrs, xs):
    k = int(np.prod(xs[1:])) if attrs.get("flatten", True) else xs[-1]
    ins = [f32(*xs), f32(5, k)] + ([] if attrs.get("no_bias") else [f32(5)])
    check_op("FullyConnected", attrs, ins, params=[f"x{i}" for i in range(1, len(ins))])


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softrelu", "softsign",
                                 "log_sigmoid", "mish"])
def test_activation(act):
    check_op("Activation", {"act_type": act}, [f32(3, 4) * 4])


@pytest.mark.parametrize("attrs", [{"act_type": "leaky", "slope": 0.1}, {"act_type": "elu"},
                                   {"act_type": "selu"}, {"act_type": "gelu"},
                                   {"act_type": "gelu_tanh"}, {"act_type": "rrelu"}])
def test_leaky_relu(attrs):
    check_op("LeakyReLU", attrs, [f32(3, 4, 2) * 3])


def test_prelu():
    check_op("LeakyReLU", {"act_type": "prelu"}, [f32(2, 3, 4), f32(3, lo=0.05)], params=["x1"])


RESHAPE = [((2, 3, 4), {"shape": (0, -1)}), ((2, 3, 4), {"shape": (-2,)}),
           ((2, 3, 4), {"shape": (-3, 4)}), ((2, 3, 4), {"shape": (0, -4, 3, 1, 4)}),
           ((2, 6, 4), {"shape": (0, -4, -1, 2, -2)}), ((2, 3, 4), {"shape": (-1, 0), "reverse": True}),
           ((2, 3, 4), {"shape": (4, 0, -1)})]


@pytest.mark.parametrize("shape,attrs", RESHAPE)
def test_reshape_codes(shape, attrs):
    check_op("Reshape", attrs, [f32(*shape)])


@pytest.mark.parametrize("shape,newshape", [((2, 3, 4), (-2, -1)), ((2, 1, 4), (-2, -3, -2)),
                                            ((2, 3, 4), (-5, -2)), ((2, 6), (-2, -6, 2, -1)),
                                            ((2, 3, 4), (-4,))])
def test_npx_reshape_codes(shape, newshape):
    check_op("_npx_reshape", {"newshape": newshape}, [f32(*shape)])


@pytest.mark.parametrize("attrs", [{"num_outputs": 3, "axis": 1},
                                   {"num_outputs": 3, "axis": 1, "squeeze_axis": True},
                                   {"num_outputs": 2, "axis": -1}])
def test_slice_channel(attrs):
    check_op("SliceChannel", attrs, [f32(2, 3, 4)])


@pytest.mark.parametrize("attrs", [{"indices": (0, 1, 3), "axis": 2},
                                   {"sections": 2, "axis": 0, "squeeze_axis": False},
                                   {"indices": (0, 2), "axis": 1, "squeeze_axis": False}])
def test_split_v2(attrs):
    check_op("_split_v2", attrs, [f32(2, 4, 5)])


@pytest.mark.parametrize("op,attrs", [
    ("softmax", {}), ("softmax", {"axis": 1, "temperature": 2.0}), ("log_softmax", {"axis": 0}),
    ("softmin", {}), ("SoftmaxActivation", {}), ("SoftmaxActivation", {"mode": "channel"}),
    ("SoftmaxOutput", {}), ("SoftmaxOutput", {"multi_output": True})])
def test_softmax_family(op, attrs):
    ins = [f32(2, 3, 4) * 3] + ([np.zeros((2, 4), np.float32)] if op == "SoftmaxOutput" and
                                attrs.get("multi_output") else [])
    if op == "SoftmaxOutput" and not attrs:
        ins.append(np.zeros((2, 3), np.float32))
    check_op(op, attrs, ins)


@pytest.mark.parametrize("op,attrs", [
    ("sum", {"axis": (1,)}), ("mean", {"axis": (0, 2), "keepdims": True}), ("max", {}),
    ("min", {"axis": (1,), "exclude": True}), ("prod", {"axis": (2,)}), ("nansum", {"axis": (1,)}),
    ("_npi_sum", {"axis": (0, 1)}), ("_npi_mean", {}), ("_npi_max", {"axis": -1, "keepdims": True}),
    ("argmax", {"axis": 1}), ("argmin", {}), ("_npi_argmax", {"axis": 2}),
    ("norm", {"ord": 1, "axis": (1,)}), ("norm", {}), ("_npi_std", {"axis": 1, "ddof": 1}),
    ("_npi_var", {}), ("moments", {"axes": (0, 2)}), ("_npi_cumsum", {"axis": 1})])
def test_reductions(op, attrs):
    x = f32(2, 3, 4)
    if op == "nansum":
        x[0, 1, 2] = np.nan
    check_op(op, attrs, [x])


@pytest.mark.parametrize("op,attrs", [
    ("transpose", {"axes": (2, 0, 1)}), ("transpose", {}), ("SwapAxis", {"dim1": 0, "dim2": 2}),
    ("expand_dims", {"axis": -1}), ("squeeze", {"axis": (1,)}), ("_npi_squeeze", {}),
    ("tile", {"reps": (2, 1, 1, 2)}), ("repeat", {"repeats": 2, "axis": 1}), ("repeat", {"repeats": 3}),
    ("reverse", {"axis": (0, 2)}), ("broadcast_to", {"shape": (2, 0, 3, 4)}),
    ("broadcast_axis", {"axis": (1,), "size": (3,)}), ("Flatten", {}), ("clip", {"a_min": -0.5, "a_max": 0.5}),
    ("slice", {"begin": (None, 1), "end": (None, 3)}), ("slice", {"begin": (1, None, -1), "end": (None, 0, -5), "step": (1, 2, -1)}),
    ("slice_axis", {"axis": 2, "begin": -3, "end": None}), ("Dropout", {"p": 0.3}),
    ("_npi_moveaxis", {"source": (0,), "destination": (2,)}), ("Pad", {"mode": "constant", "pad_width": (0, 0, 1, 2, 2, 1), "constant_value": 1.5}),
    ("Pad", {"mode": "reflect", "pad_width": (0, 0, 1, 1, 2, 1)}), ("Pad", {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 2)}),
    ("topk", {"k": 2, "ret_typ": "both"}), ("topk", {"k": 2, "axis": 1, "ret_typ": "mask"}),
    ("sort", {"axis": 1, "is_ascend": False}), ("argsort", {}), ("L2Normalization", {}),
    ("L2Normalization", {"mode": "channel"}), ("smooth_l1", {"scalar": 2.0}), ("round", {}), ("rint", {}),
    ("fix", {}), ("cbrt", {}), ("_plus_scalar", {"scalar": 2.5}), ("_rminus_scalar", {"scalar": 1}),
    ("_power_scalar", {"scalar": 2}), ("_mod_scalar", {"scalar": 0.7}), ("_greater_scalar", {"scalar": 0.1})])
def test_unary_and_shape_ops(op, attrs):
    x = f32(2, 3, 4) if op not in ("squeeze", "_npi_squeeze", "broadcast_to", "broadcast_axis") \
        else f32(2, 1, 4) if op != "broadcast_to" else f32(1, 4)
    if op == "broadcast_to":
        x = f32(3, 1)
        attrs = {"shape": (2, 0, 4)}
    check_op(op, attrs, [x])


@pytest.mark.parametrize("op", ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                                "broadcast_maximum", "broadcast_power", "broadcast_greater",
                                "_npi_equal", "_npi_true_divide", "broadcast_mod"])
def test_broadcast_binary(op):
    x, y = f32(2, 3, 4), f32(3, 1, lo=0.5)
    if op == "broadcast_power":
        x = np.abs(x)
    check_op(op, {}, [x, y])


@pytest.mark.parametrize("op,attrs,shapes", [
    ("Concat", {"num_args": 3, "dim": 1}, [(2, 1, 3), (2, 2, 3), (2, 3, 3)]),
    ("stack", {"num_args": 2, "axis": 1}, [(2, 3), (2, 3)]), ("add_n", {"num_args": 3}, [(2, 3)] * 3),
    ("dot", {"transpose_b": True}, [(2, 3), (4, 3)]), ("dot", {"transpose_a": True}, [(3, 2, 2), (3, 5)]),
    ("batch_dot", {"transpose_a": True}, [(2, 3, 4), (2, 3, 5)]), ("_npi_dot", {}, [(2, 3), (4, 3, 5)]),
    ("_npi_matmul", {}, [(2, 2, 3), (3, 4)]), ("_linalg_gemm2", {"alpha": 0.5, "transpose_b": True}, [(2, 3, 4), (2, 5, 4)]),
    ("_npi_tensordot_int_axes", {"axes": 2}, [(2, 3, 4), (3, 4, 5)]),
    ("_npi_einsum", {"num_args": 2, "subscripts": "ij,jk->ik"}, [(2, 3), (3, 4)]),
    ("slice_like", {"axes": (0, 2)}, [(3, 4, 5), (2, 4, 3)]), ("broadcast_like", {}, [(1, 3), (2, 3)]),
    ("LayerNorm", {"axis": 1}, [(2, 3, 4), (3,), (3,)]), ("LayerNorm", {}, [(2, 3, 4), (4,), (4,)]),
    ("GroupNorm", {"num_groups": 2}, [(2, 4, 3), (4,), (4,)]), ("GroupNorm", {"num_groups": 2}, [(2, 4, 3), (2,), (2,)]),
    ("InstanceNorm", {}, [(2, 3, 4, 2), (3,), (3,)]),
    ("_contrib_BilinearResize2D", {"height": 5, "width": 7}, [(1, 2, 3, 4)]),
    ("_contrib_BilinearResize2D", {"height": 5, "width": 3, "align_corners": False}, [(1, 2, 3, 4)]),
    ("_contrib_AdaptiveAvgPooling2D", {"output_size": (2, 3)}, [(1, 2, 5, 7)]),
    ("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 1}, [(1, 2, 3, 3)]),
    ("LRN", {"nsize": 4}, [(1, 6, 2, 2)]), ("LRN", {"nsize": 3, "alpha": 0.01}, [(1, 5, 2, 2)]),
    ("depth_to_space", {"block_size": 2}, [(1, 8, 2, 3)]), ("space_to_depth", {"block_size": 2}, [(1, 2, 4, 6)])])
def test_multi_input_ops(op, attrs, shapes):
    check_op(op, attrs, [f32(*s) + (1.5 if op == "GroupNorm" and i else 0) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("op,attrs", [("take", {"axis": 1}), ("take", {"mode": "wrap"}),
                                      ("pick", {"axis": 1}), ("Embedding", {"input_dim": 5, "output_dim": 3}),
                                      ("one_hot", {"depth": 4})])
def test_index_ops(op, attrs):
    idx = np.array([[0, 3], [-1, 7]], np.float32)
    if op == "pick":
        check_op(op, attrs, [f32(2, 4), np.array([1, 3], np.float32)])
    elif op == "Embedding":
        check_op(op, attrs, [idx, f32(5, 3)], params=["x1"])
    elif op == "one_hot":
        check_op(op, attrs, [idx])
    else:
        check_op(op, attrs, [f32(4, 4), idx])


@pytest.mark.parametrize("op,attrs", [("SequenceMask", {"use_sequence_length": True, "value": -1}),
                                      ("SequenceLast", {"use_sequence_length": True}),
                                      ("SequenceLast", {"use_sequence_length": True, "axis": 1}),
                                      ("SequenceReverse", {"use_sequence_length": True})])
def test_sequence_ops(op, attrs):
    check_op(op, attrs, [f32(4, 3, 2), np.array([1, 4, 2], np.float32)] if attrs.get("axis", 0) == 0
             else [f32(3, 4, 2), np.array([1, 4, 2], np.float32)])


def test_where_variants():
    c = (f32(2, 3) > 0).astype(np.float32)
    check_op("where", {}, [c, f32(2, 3), f32(2, 3)])
    check_op("where", {}, [np.array([1, 0], np.float32), f32(2, 3), f32(2, 3)])
    check_op("_npi_where", {}, [c, f32(2, 3), f32(1, 3)])


def _special_values():
    x = f32(2, 3) * 3
    x[0, 0], x[0, 1], x[1, 2] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("op,attrs,ins", [
    ("_npi_around", {"decimals": 1}, lambda: [f32(2, 3) * 5]),
    ("_npi_isnan", {}, lambda: [_special_values()]), ("_npi_isinf", {}, lambda: [_special_values()]),
    ("_npi_isfinite", {}, lambda: [_special_values()]),
    ("_npi_isposinf", {}, lambda: [_special_values()]),
    ("_npi_fmod", {}, lambda: [f32(2, 3) * 4, f32(1, 3, lo=0.5)]),
    ("_npi_floor_divide", {}, lambda: [f32(2, 3) * 4, f32(1, 3, lo=0.5)]),
    ("_npi_rfmod_scalar", {"scalar": 2.5, "is_int": False}, lambda: [f32(2, 3, lo=0.5)]),
    ("_npi_bitwise_and", {}, lambda: [np.arange(6, dtype=np.int32).reshape(2, 3),
                                      np.full((2, 3), 5, np.int32)]),
    ("_npi_concatenate", {"num_args": 2, "axis": "None"}, lambda: [f32(2, 3), f32(4)]),
    ("_npi_tril", {"k": 1}, lambda: [f32(2, 3, 4)]), ("_npi_triu", {"k": -1}, lambda: [f32(3, 4)])])
def test_numpy_extras(op, attrs, ins):
    check_op(op, attrs, ins())
