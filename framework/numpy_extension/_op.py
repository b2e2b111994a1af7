"""`npx` operators (MXNet's `mxnet.numpy_extension` functions), all through the op registry.

Each function passes the attrs real MXNet 2.x records for the same call, so a traced call writes
the same node (op name and attrs) as MXNet's exports: `npx.convolution` → `Convolution` with
stride/dilate/pad/layout filled in, `npx.softmax` → `softmax`, … Functions that only call their
op (`npx.relu`, `npx.erf`, …) are generated from the names the op families expose.

Inference only: there is no autograd/training mode, so `dropout` (mode='training') is the
identity and `batch_norm` always normalises with the running statistics.
"""
from __future__ import annotations

from typing import Any

import numpy as _onp

from .. import frontend
from ..frontend import op as _op
from ..dispatch import invoke
from ..ops.registry import OpDef
from ..ndarray import ndarray
from ..symbol.graph import Symbol

__all__ = ["softmax", "log_softmax", "leaky_relu", "fully_connected", "convolution",
           "deconvolution", "pooling", "batch_norm", "layer_norm", "group_norm",
           "instance_norm", "dropout", "embedding", "one_hot", "topk", "reshape",
           "reshape_like", "rnn", "arange_like", "broadcast_like", "sequence_mask",
           "sequence_last", "sequence_reverse", "slice_channel", "digamma", "norm", "cast", "pad",
           "index_add", "index_update", "slice", "slice_like", "round_ste", "sign_ste"]


def _in(x):
    """Array-like → something `invoke` takes (framework array, NumPy array or Symbol)."""
    if x is None or isinstance(x, (ndarray, _onp.ndarray)):
        return x
    try:
        if isinstance(x, Symbol):
            return x
    except ImportError:  # pragma: no cover
        pass
    return _onp.asarray(x, dtype=_onp.float32 if isinstance(x, float) else None)


def _call(op: OpDef | str, inputs: list, attrs: dict[str, Any], as_list: bool = False):
    out = invoke(op, [_in(x) for x in inputs], attrs)
    if as_list and isinstance(out, tuple):
        return list(out)
    return out


def _dtype_name(dtype):
    if dtype is None or isinstance(dtype, str):
        return dtype
    return _onp.dtype(dtype).name


def _tup(v):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return tuple(int(i) for i in v)
    return (int(v),)


_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


# -- activations --------------------------------------------------------------------------------




def leaky_relu(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334, **kwargs):
    """LeakyReLU; act_type 'prelu' takes `gamma`; 'rrelu' returns (output, mask) at inference."""
    attrs = {"act_type": act_type, "slope": slope, "lower_bound": lower_bound,
             "upper_bound": upper_bound}
    if act_type == "prelu":
        if gamma is None:
            raise ValueError("If activation function is prelu, please provide input gamma")
        return _call("LeakyReLU", [data, gamma], attrs, as_list=True)
    return _call("LeakyReLU", [data], attrs)


# -- softmax family -----------------------------------------------------------------------------
def _softmax(op, data, axis, length, temperature, use_length, dtype):
    attrs = {"axis": axis, "temperature": temperature, "use_length": bool(use_length),
             "dtype": _dtype_name(dtype)}
    if use_length:
        if length is None:
            raise ValueError("Missing length input")
        return _call(op, [data, length], attrs)
    if length is not None:
        raise ValueError("Length input is not used")
    return _call(op, [data], attrs)


def softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None):
    """exp(x / t) / Σ exp(x / t) along `axis`; with `use_length`, positions ≥ length give 0."""
    return _softmax("softmax", data, axis, length, temperature, use_length, dtype)


def log_softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None):
    return _softmax("log_softmax", data, axis, length, temperature, use_length, dtype)






# -- dense / conv / pool ------------------------------------------------------------------------
def fully_connected(x, weight, bias=None, num_hidden=None, no_bias=True, flatten=True,
                    **kwargs):
    if num_hidden is None:
        raise ValueError("Please provide number of hidden nodes")
    attrs = {"num_hidden": num_hidden, "no_bias": bool(no_bias), "flatten": bool(flatten)}
    if no_bias:
        return _call("FullyConnected", [x, weight], attrs)
    if bias is None:
        raise ValueError("Missing bias parameter")
    return _call("FullyConnected", [x, weight, bias], attrs)


def _conv_attrs(kernel, stride, dilate, pad, layout):
    k = _tup(kernel)
    nd = len(k)
    return {"kernel": k,
            "stride": _tup(stride) if stride else (1,) * nd,
            "dilate": _tup(dilate) if dilate else (1,) * nd,
            "pad": _tup(pad) if pad else (0,) * nd,
            "layout": layout if layout is not None else _LAYOUT.get(nd)}


def convolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None,
                pad=None, num_filter=1, num_group=1, workspace=1024, no_bias=False,
                cudnn_tune=None, cudnn_off=False, layout=None):
    """N-D convolution (MXNet `Convolution`)."""
    if data is None or weight is None or kernel is None:
        raise ValueError("Missing input data, weight or kernel")
    attrs = _conv_attrs(kernel, stride, dilate, pad, layout)
    attrs.update(num_filter=num_filter, num_group=num_group, workspace=workspace,
                 no_bias=bool(no_bias), cudnn_tune=cudnn_tune, cudnn_off=bool(cudnn_off))
    if no_bias:
        if bias is not None:
            raise ValueError("Using no bias")
        return _call("Convolution", [data, weight], attrs)
    if bias is None:
        raise ValueError("Using bias")
    return _call("Convolution", [data, weight, bias], attrs)


def deconvolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None,
                  pad=None, adj=None, target_shape=None, num_filter=1, num_group=1,
                  workspace=1024, no_bias=False, cudnn_tune=None, cudnn_off=False, layout=None):
    """Transposed convolution (MXNet `Deconvolution`)."""
    if data is None or weight is None or kernel is None:
        raise ValueError("Missing input data, weight or kernel")
    attrs = _conv_attrs(kernel, stride, dilate, pad, layout)
    nd = len(attrs["kernel"])
    attrs.update(adj=_tup(adj) if adj else (0,) * nd,
                 target_shape=_tup(target_shape) if target_shape else None,
                 num_filter=num_filter, num_group=num_group, workspace=workspace,
                 no_bias=bool(no_bias), cudnn_tune=cudnn_tune, cudnn_off=bool(cudnn_off))
    if no_bias:
        if bias is not None:
            raise ValueError("Using no bias")
        return _call("Deconvolution", [data, weight], attrs)
    if bias is None:
        raise ValueError("Using bias")
    return _call("Deconvolution", [data, weight, bias], attrs)


def pooling(data=None, kernel=None, stride=None, pad=None, pool_type="max",
            pooling_convention="valid", global_pool=False, cudnn_off=False, p_value=None,
            count_include_pad=None, layout=None, **kwargs):
    """Pooling: max / avg / sum / lp, global_pool, valid / full conventions."""
    if data is None or (kernel is None and not global_pool):
        raise ValueError("Missing input data or kernel")
    if kernel is None:
        kernel = (1,) * (len(data.shape) - 2)
    k = _tup(kernel)
    nd = len(k)
    attrs = {"kernel": k, "stride": _tup(stride) if stride else (1,) * nd,
             "pad": _tup(pad) if pad else (0,) * nd, "pool_type": pool_type,
             "pooling_convention": pooling_convention, "global_pool": bool(global_pool),
             "cudnn_off": bool(cudnn_off), "p_value": p_value,
             "count_include_pad": count_include_pad, "layout": layout}
    return _call("Pooling", [data], attrs, as_list=True)


# -- normalisation ------------------------------------------------------------------------------
def batch_norm(x, gamma, beta, running_mean, running_var, eps=1e-3, momentum=0.9,
               fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
               cudnn_off=False, min_calib_range=None, max_calib_range=None, **kwargs):
    """BatchNorm with the running statistics (inference)."""
    attrs = {"eps": eps, "momentum": momentum, "fix_gamma": bool(fix_gamma),
             "use_global_stats": bool(use_global_stats),
             "output_mean_var": bool(output_mean_var), "axis": axis,
             "cudnn_off": bool(cudnn_off), "min_calib_range": min_calib_range,
             "max_calib_range": max_calib_range}
    return _call("BatchNorm", [x, gamma, beta, running_mean, running_var], attrs, as_list=True)


def layer_norm(data=None, gamma=None, beta=None, axis=None, eps=None, output_mean_var=None):
    attrs = {"axis": -1 if axis is None else axis, "eps": 1e-5 if eps is None else eps,
             "output_mean_var": bool(output_mean_var)}
    return _call("LayerNorm", [data, gamma, beta], attrs, as_list=True)


def group_norm(data, gamma, beta, num_groups=1, eps=1e-3, output_mean_var=False):
    attrs = {"num_groups": num_groups, "eps": eps, "output_mean_var": bool(output_mean_var)}
    return _call("GroupNorm", [data, gamma, beta], attrs, as_list=True)


def instance_norm(data=None, gamma=None, beta=None, eps=1e-3, **kwargs):
    return _call("InstanceNorm", [data, gamma, beta], {"eps": eps})


def dropout(data, p=0.5, mode="training", axes=None, cudnn_off=False, **kwargs):
    """Identity at inference (mode='training'); mode='always' drops with `mx.random`."""
    return _call("Dropout", [data], {"p": p, "mode": mode, "axes": _tup(axes) or (),
                                     "cudnn_off": bool(cudnn_off)})


# -- embedding / indexing -----------------------------------------------------------------------
def embedding(data, weight, input_dim=None, output_dim=None, dtype="float32", sparse_grad=False,
              **kwargs):
    """weight[data] (float indices truncate; out-of-range indices clip to the last row)."""
    if input_dim is None or output_dim is None:
        input_dim, output_dim = weight.shape
    if sparse_grad:
        raise ValueError("Currently row sparse gradient is not supported in npx.embedding")
    return _call("Embedding", [data, weight], {"input_dim": input_dim, "output_dim": output_dim,
                                               "dtype": _dtype_name(dtype),
                                               "sparse_grad": False})


def one_hot(data, depth=None, on_value=1.0, off_value=0.0, dtype="float32"):
    if depth is None:
        raise ValueError("Please provide the depth of one hot dimension.")
    return _call("one_hot", [data], {"depth": depth, "on_value": on_value,
                                     "off_value": off_value, "dtype": _dtype_name(dtype)})




def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    return _call("topk", [data], {"axis": axis, "k": k, "ret_typ": ret_typ,
                                  "is_ascend": is_ascend, "dtype": _dtype_name(dtype)},
                 as_list=True)


def reshape(a, newshape, reverse=False, order="C"):
    """npx.reshape with the 2.x special codes (-1 infer, -2 copy, -3 drop 1, -4 copy rest,
    -5 merge two, -6 split one)."""
    return _call(_op("npx.reshape"), [a], {"newshape": _tup(newshape), "reverse": reverse,
                                           "order": order})


def reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    attrs = {k: v for k, v in (("lhs_begin", lhs_begin), ("lhs_end", lhs_end),
                               ("rhs_begin", rhs_begin), ("rhs_end", rhs_end)) if v is not None}
    return _call("reshape_like", [lhs, rhs], attrs)




def arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None):
    return _call(_op("npx.arange_like"), [data], {"start": start, "step": step,
                                                  "repeat": repeat, "axis": axis})




def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    attrs = {}
    if lhs_axes is not None:
        attrs["lhs_axes"] = _tup(lhs_axes)
    if rhs_axes is not None:
        attrs["rhs_axes"] = _tup(rhs_axes)
    return _call("broadcast_like", [lhs, rhs], attrs)


def _seq(op, data, sequence_length, use_sequence_length, axis, **extra):
    attrs = {"use_sequence_length": bool(use_sequence_length), "axis": axis, **extra}
    ins = [data, sequence_length] if use_sequence_length else [data]
    return _call(op, ins, attrs)


def sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    return _seq("SequenceMask", data, sequence_length, use_sequence_length, axis, value=value)


def sequence_last(data, sequence_length=None, use_sequence_length=False, axis=0):
    return _seq("SequenceLast", data, sequence_length, use_sequence_length, axis)


def sequence_reverse(data, sequence_length=None, use_sequence_length=False, axis=0):
    return _seq("SequenceReverse", data, sequence_length, use_sequence_length, axis)


def slice_channel(data, num_outputs, axis=1, squeeze_axis=False):
    return _call("SliceChannel", [data], {"num_outputs": num_outputs, "axis": axis,
                                          "squeeze_axis": squeeze_axis}, as_list=True)


# -- RNN ----------------------------------------------------------------------------------------
def rnn(data=None, parameters=None, state=None, state_cell=None, sequence_length=None,
        mode=None, state_size=None, num_layers=None, bidirectional=False,
        state_outputs=False, p=0.0, use_sequence_length=False, projection_size=None,
        lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=None):
    """Fused RNN (rnn_relu, rnn_tanh, lstm, gru) over TNC data; see `framework.ops.nn.rnn`."""
    if mode is None:
        raise ValueError("Please provide rnn type to compute. e.g. rnn_relu, rnn_tanh, lstm, gru")
    if data is None or parameters is None or state is None:
        raise ValueError("Missing input data/parameters/state.")
    if state_size is None or num_layers is None:
        raise ValueError("Please provide state_size and num_layers")
    attrs = {"state_size": state_size, "num_layers": num_layers,
             "bidirectional": bool(bidirectional), "state_outputs": bool(state_outputs),
             "mode": mode, "p": p, "use_sequence_length": bool(use_sequence_length),
             "projection_size": projection_size, "lstm_state_clip_min": lstm_state_clip_min,
             "lstm_state_clip_max": lstm_state_clip_max,
             "lstm_state_clip_nan": bool(lstm_state_clip_nan)}
    ins = [data, parameters, state]
    if mode == "lstm":
        if state_cell is None:
            raise ValueError("RNN computing mode is lstm, but no state_cell is provided")
        ins.append(state_cell)
    if use_sequence_length:
        if sequence_length is None:
            raise ValueError("use_sequence_length is set True, but no sequence_length provided.")
        ins.append(sequence_length)
    return _call("RNN", ins, attrs, as_list=True)


# -- wrappers that convert their arguments --------------------------------------------------------
def norm(data, ord=2, axis=None, keepdims=False, **kwargs):
    attrs = {"ord": ord, "keepdims": keepdims}
    if axis is not None:
        attrs["axis"] = _tup(axis)
    return _call("norm", [data], attrs)


def cast(data, dtype="float32"):
    return _call("Cast", [data], {"dtype": _dtype_name(dtype)})


def pad(data, mode="constant", pad_width=None, constant_value=0.0):
    return _call("Pad", [data], {"mode": mode, "pad_width": _tup(pad_width),
                                 "constant_value": constant_value})


def slice(data, begin, end, step=None):  # noqa: A001 - MXNet's name
    attrs = {"begin": tuple(begin), "end": tuple(end)}
    if step is not None:
        attrs["step"] = tuple(step)
    return _call("slice", [data], attrs)


def slice_like(data, shape_like, axes=None):
    attrs = {} if axes is None else {"axes": _tup(axes)}
    return _call("slice_like", [data, shape_like], attrs)


# -- MXNet functions over operators hybridserve does not implement: calling one raises the
# registry's unsupported-operator error (so no front-end name is exposed for them) -------------
def _unary(op):
    def f(data, **kwargs):
        return _call(op, [data], {})
    f.__name__ = op
    return f


digamma = _unary("digamma")
round_ste = _unary("_contrib_round_ste")
sign_ste = _unary("_contrib_sign_ste")


def index_add(a, ind, val):
    return _call("_npx_index_add", [a, ind, val], {})


def index_update(a, ind, val):
    return _call("_npx_index_update", [a, ind, val], {})


# functions that only call their op (relu, erf, pick, constraint_check, …): generated from the
# signatures their op families declare
__all__ += frontend.install("npx", globals(), _in)
