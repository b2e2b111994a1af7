"""MXNet's contrib detection operators: NMS, box coding and matching, MultiBox, proposals,
(PS/R)ROI pooling and align, with their box geometry and FLOP estimates."""
