"""What a `--model-store` value names: a directory (a path, or file:///PATH) or an object
store (s3://BUCKET/PREFIX). Anything else with a scheme is refused, never taken as a path.
No imports beyond the standard library: settings validation uses it."""
from __future__ import annotations

import re

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*):(?P<rest>.*)$")
SCHEMES = ("file", "s3")


class UnsupportedStore(ValueError):
    """A `--model-store` that names no store this server can open."""


def split_url(spec: str) -> tuple[str, str]:
    """(scheme, rest) of a store spec; a plain path has scheme "" (Windows drive letters
    are not a concern: the server runs on POSIX)."""
    m = _SCHEME.match(spec)
    if m is None:
        return "", spec
    return m["scheme"].lower(), m["rest"]


def check_store_url(spec: str) -> str:
    """The spec if its scheme is one we serve; else UnsupportedStore naming it."""
    scheme, rest = split_url(str(spec))
    if scheme and scheme not in SCHEMES:
        raise UnsupportedStore(
            f"model store {spec!r}: unsupported scheme '{scheme}:' (supported: a directory "
            f"path, file://PATH, s3://BUCKET/PREFIX)")
    if scheme == "s3":
        bucket = rest[2:].split("/", 1)[0] if rest.startswith("//") else ""
        if not 3 <= len(bucket) <= 63:
            raise UnsupportedStore(f"model store {spec!r}: write s3://BUCKET/PREFIX "
                                   "(a bucket name of 3 to 63 characters)")
    return str(spec)
