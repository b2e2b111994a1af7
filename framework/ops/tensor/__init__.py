"""Tensor operators (1.x names and `_npi_*`): element-wise maths, binary and scalar ops,
broadcasting, reductions, shapes and reshapes, indexing, creation, sorting, products and linear
algebra."""
