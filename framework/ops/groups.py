"""Named groups of operators: the facts that hold for a handful of ops, declared once here rather
than as `OpDef` fields every other entry carries unset (an idea taken from tinygrad's `GroupOp`).

A pass asks `n.op.name in OpGroup.ADDS`; groups hold canonical names (the registry maps every
alias to its entry, whose `name` is canonical). Facts that vary with an op's attrs, or that are
rules or names of the op's own (its dtype pair, epilogue, 1.x form…), stay on the `OpDef`.
tests/ops/test_op_groups.py checks that every name here is a registered canonical name.
"""
from __future__ import annotations


class OpGroup:
    # every output is input 0 when not training (compiler/passes/simplify.py drops them)
    IDENTITY_AT_INFERENCE = frozenset({"Dropout", "BlockGrad", "_npi_copy"})
    # MXNet 1.x creation ops: a 0 in `shape` means "unknown", filled per input signature
    UNKNOWN_ZERO_DIMS = frozenset({"_zeros", "_ones", "_full", "_empty"})
    # computes lhs + rhs: a residual add the GEMM epilogues can absorb (passes/fuse.py)
    ADDS = frozenset({"_npi_add", "elemwise_add"})
    # 1.x elemwise_*: both operands have one shape (no broadcasting to rule out)
    SAME_SHAPE_OPERANDS = frozenset({"elemwise_add"})
    # fused GEMMs that absorb, in place, a following activation / a residual sum
    FUSES_ACT = frozenset({"_hs_conv2d", "_hs_affine"})
    FUSES_SUM = frozenset({"_hs_conv2d"})
    # the kernel runs the node's `subgraphs[0]` (a region partitioned by compiler/passes/
    # partition.py): plans accept such nodes and export expands them back
    RUNS_SUBGRAPH = frozenset({"_sg_onnxruntime"})
    # output 0 has input 0's shape (quantize, a bf16 cast): a served model's signature is read through it
    PASSES_SHAPE = frozenset({"_contrib_quantize", "_contrib_quantize_v2", "amp_cast"})
    # inserted by mixed precision: export may drop it
    AMP = frozenset({"amp_cast", "amp_multicast"})

    @classmethod
    def all(cls) -> dict[str, frozenset[str]]:
        """Every group by name."""
        return {k: v for k, v in vars(cls).items() if isinstance(v, frozenset)}
