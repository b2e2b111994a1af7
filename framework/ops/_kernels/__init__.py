"""Engine internals, private to framework/ops: channels-last helpers, Winograd, GEMM epilogues,
oneDNN-style INT8 arithmetic and its ONNX blocks, special functions, image resampling. Imported
only by modules of framework/ops."""
