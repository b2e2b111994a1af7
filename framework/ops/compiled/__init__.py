"""Operators only the compiler writes into graphs: channels-last `_hs_*` kernels, folded constants,
partitioned subgraphs."""
