"""The transport-free core that joins the repository and the runtime: `Core` (server.py: one
serving node, started and stopped as one), its data plane (dataplane.py: the one `infer` every
transport calls), `sync` (each replica converges to the shared store) and `management`
(upload, load, unload, delete). The API, the CLI and gRPC call it."""
from .dataplane import DataPlane
from .server import Core

__all__ = ["Core", "DataPlane"]
