"""What the seed-transcript recorder (`seed_recorder.py`, under real MXNet 2.0.0b1) and its port
to hybridserve (`tests/gluon/transcript_capture.py`) record the same way, whatever the
framework: exception descriptions, .npz summaries and the normalisation of run-to-run noise.
NumPy and the standard library only, so that both sides import this one copy."""
from __future__ import annotations

import re
import zipfile

import numpy as onp

MAX_MSG = 6000


def qualname(t) -> str:
    mod = getattr(t, "__module__", "")
    if mod in ("builtins", None, ""):
        return t.__qualname__
    return f"{mod}.{t.__qualname__}"


def error_desc(e: BaseException) -> dict:
    msg = str(e)
    if len(msg) > MAX_MSG:
        msg = msg[:MAX_MSG] + "...<truncated>"
    mro = [qualname(c) for c in type(e).__mro__ if c not in (object, BaseException)]
    return {"type": qualname(type(e)), "message": msg, "mro": mro}


def npz_members(path: str) -> list:
    with zipfile.ZipFile(path) as z:
        return [i.filename for i in z.infolist()]


def npz_summary(path: str) -> list:
    out = []
    with onp.load(path) as f:
        for name in npz_members(path):
            key = name[:-4] if name.endswith(".npy") else name
            a = f[key]
            out.append([name, list(a.shape), str(a.dtype)])
    return out


_ADDR = re.compile(r" at 0x[0-9a-f]+")
_UUID = re.compile(r"[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}")


def normalize(v):
    """Remove run-to-run noise: object addresses and uuid-based variable names."""
    if isinstance(v, str):
        return _UUID.sub("<uuid>", _ADDR.sub(" at 0x...", v))
    if isinstance(v, list):
        return [normalize(i) for i in v]
    if isinstance(v, dict):
        return {k: normalize(i) for k, i in v.items()}
    return v


def timing_filter(text: str) -> str:
    return re.sub(r"\d+\.\d+ sec", "<t> sec", text)
