"""HTTP: the FastAPI application (`app`), the plain-ASGI infer path (`fastpath`), the rules
both share (`rules`: auth, body limits, error bodies), body-size `middleware`, the `openapi`
document, the `routers` and the web console's `static` files."""
