"""Imports every operator module so their `register` calls fill the registry: the top-level
modules that are not infrastructure, and every module of the public subpackages (tensor, nn, …).
`_kernels` (engine internals) is not walked: the operator modules import what they use of it."""
import importlib
import os
import pkgutil

_INFRA = {"attrs", "catalog", "common", "groups", "legacy_forms", "mxnet191", "nnutil", "parallel", "registry", "util"}


def _walk(path: str, prefix: str, top: bool) -> list[str]:
    out = []
    for m in sorted(pkgutil.iter_modules([path]), key=lambda m: m.name):
        if m.name.startswith("_") or (top and m.name in _INFRA):
            continue
        if m.ispkg:
            out += _walk(os.path.join(path, m.name), f"{prefix}{m.name}.", False)
        else:
            out.append(prefix + m.name)
    return out


for _m in _walk(os.path.dirname(__file__), f"{__package__}.", True):
    importlib.import_module(_m)
