"""MXNet 1.9.1's INT8 operators and its fused oneDNN (`_sg_mkldnn_*`) conv and fully-connected
nodes."""
