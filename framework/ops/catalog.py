"""Imports every operator family module in this package so their `register` calls fill the registry."""
import importlib
import os
import pkgutil

_INFRA = {"registry", "attrs", "catalog", "util", "legacy_forms", "mxnet191", "groups"}

for _m in sorted(m.name for m in pkgutil.iter_modules([os.path.dirname(__file__)])):
    if _m not in _INFRA and not _m.startswith("_"):
        importlib.import_module(f"{__package__}.{_m}")
