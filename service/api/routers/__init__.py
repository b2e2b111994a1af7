"""HTTP routers: each parses/validates and calls the transport-free core."""
