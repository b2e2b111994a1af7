"""hybridserve's model server: MXNet exports served over the Open Inference Protocol v2.

Packages by concern, each importing only those before it (README.md draws them): `protocol`
(the wire format), `repository` (the on-disk store), `runtime` (models in memory), `core`
(the transport-free core: inference, store sync, management), `api` (HTTP) and `cli`.
"""
__version__ = "0.1.0"
