"""`serve` flags generated from the settings model: every `Settings` field is a `--kebab-name`
flag (and stays the `HYBRIDSERVE_<NAME>` variable), typed from its annotation, its help the
field's `Field(description=...)`. A setting added without a description fails
tests/service/cli (no silent flag).
"""
from __future__ import annotations

import argparse
import typing
from pathlib import Path

from pydantic import ByteSize, SecretStr

from ..settings import Settings

_METAVAR = {int: "N", float: "X", str: "TEXT"}


def _scalar(annotation):
    """(type, choices) of a field annotation, Optional unwrapped."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return str, list(typing.get_args(annotation))
    if annotation is Path:
        return Path, None
    if annotation in (SecretStr, ByteSize):     # validated by the settings model ("4GiB")
        return str, None
    return annotation, None


def add_settings_flags(p: argparse.ArgumentParser) -> None:
    defaults = Settings.model_construct()
    for name, field in Settings.model_fields.items():
        typ, choices = _scalar(field.annotation)
        default = getattr(defaults, name, None) if field.default_factory is None else "computed"
        env = f"HYBRIDSERVE_{name.upper()}"
        shown = "" if isinstance(default, SecretStr) or default is None else f"; default {default}"
        kw: dict = {"dest": name, "default": None,
                    "help": f"{field.description} ({env}{shown})".replace("%", "%%")}
        if typ is bool:
            kw["action"] = argparse.BooleanOptionalAction
        else:
            kw["type"], kw["metavar"] = typ, _METAVAR.get(typ, "PATH")
            if choices:
                kw["choices"], kw["metavar"] = choices, None
        p.add_argument("--" + name.replace("_", "-"), **kw)


def overrides(args: argparse.Namespace) -> dict:
    """The settings given as flags (the rest come from the environment or defaults)."""
    return {k: getattr(args, k) for k in Settings.model_fields if getattr(args, k, None) is not None}
