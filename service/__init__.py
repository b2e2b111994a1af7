"""hybridserve's model server: MXNet exports served over the Open Inference Protocol v2.

The web layer (`app.py`, `routers/`) is thin; the core (`store`, `registry`, `runner`,
`batching`, `protocol`) has no HTTP in it so the CLI and tests can drive it directly.
"""
__version__ = "0.1.0"
