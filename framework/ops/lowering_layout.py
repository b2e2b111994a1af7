"""Small lowering helpers shared by op families: channel-last layouts, broadcast shapes."""
from __future__ import annotations


def to_channel_first(ctx, x: str, rank: int) -> str:
    """N…C → NC… (ONNX's conv/pool kernels take channel-first data)."""
    return ctx.op("Transpose", [x], perm=[0, rank - 1] + list(range(1, rank - 1)))


def to_channel_last(ctx, y: str, rank: int) -> str:
    return ctx.op("Transpose", [y], perm=[0] + list(range(2, rank)) + [1])


def channel_first_weight(ctx, w: str, rank: int) -> str:
    """(F, *k, C) → (F, C, *k): MXNet's channel-last conv weights."""
    return ctx.op("Transpose", [w], perm=[0, rank - 1] + list(range(1, rank - 1)))


def per_axis(ctx, v: str, rank: int, axis: int) -> str:
    """A 1-D per-channel vector reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return ctx.op("Reshape", [v, ctx.ints(shape)])


def channel_wrapped(ctx, x: str, last: bool, fn) -> str:
    """Run `fn(x_channel_first)` and restore a channel-last layout around it when `last`."""
    if not last:
        return fn(x)
    r = ctx.rank(x)
    return to_channel_last(ctx, fn(to_channel_first(ctx, x, r)), r)
