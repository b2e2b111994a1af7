"""The transport-free core that joins the repository and the runtime: `Core` (the data plane:
inference, inspection, start/stop), `sync` (each replica converges to the shared store) and
`management` (upload, load, unload, delete). The API and the CLI call it."""
from .dataplane import Core

__all__ = ["Core"]
