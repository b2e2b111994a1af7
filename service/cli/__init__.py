"""`hybridserve` commands: `serve` (`main`), the offline model tools (`offline`) and the demo
model builder (`demo`)."""
from .main import add_serve_args, main, serve

__all__ = ["add_serve_args", "main", "serve"]
