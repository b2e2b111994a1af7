"""Embedding: index → dense vector lookup (`Embedding(10 -> 4, float32)`)."""
from __future__ import annotations

from ...dispatch import invoke
from ..hybrid_block import HybridBlock
from ..parameter import Parameter

__all__ = ["Embedding"]


class Embedding(HybridBlock):
    """Maps integer (or integer-valued float) indices to rows of a `(input_dim, output_dim)` weight."""

    def __init__(self, input_dim: int, output_dim: int, dtype="float32", weight_initializer=None,
                 sparse_grad: bool = False, **kwargs):
        super().__init__(**kwargs)
        assert not sparse_grad, "Currently, sparse feature is not supported in Gluon2.0"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = Parameter("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                dtype=dtype, allow_deferred_init=True)

    def forward(self, x):
        return invoke("Embedding", [x, self.weight.data()], self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"
