"""Locating pretrained parameter files on disk (MXNet's model store layout, no network access)."""
from __future__ import annotations

import glob
import os


def default_root() -> str:
    """`$MXNET_HOME/models`, MXNet's default (`~/.mxnet/models`)."""
    home = os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))
    return os.path.join(home, "models")


def get_model_file(name: str, root: str | None = None) -> str:
    """Path of `<root>/<name>.params` or `<root>/<name>-<hash>.params` (MXNet's naming).

    hybridserve never downloads: a missing file raises FileNotFoundError naming where it looked.
    """
    root = os.path.expanduser(root if root is not None else default_root())
    exact = os.path.join(root, f"{name}.params")
    if os.path.isfile(exact):
        return exact
    hits = sorted(glob.glob(os.path.join(glob.escape(root), f"{glob.escape(name)}-*.params")))
    # `resnet18_v1-*` must not pick up e.g. a `resnet18_v1b-…` file: the part after '-' is a hash
    hits = [h for h in hits if "-" not in os.path.basename(h)[len(name) + 1:-len(".params")]]
    if hits:
        return hits[-1]
    raise FileNotFoundError(
        f"Pretrained parameters for model '{name}' not found: expected {exact} or "
        f"{os.path.join(root, name + '-<hash>.params')}. hybridserve does not download model "
        "files; copy the MXNet model-zoo .params file there or pass root=<directory>.")


def load_pretrained(net, name: str, pretrained: bool, root: str | None, device=None):
    """Load `<root>/<name>[-hash].params` into `net` when `pretrained`; returns `net`."""
    if pretrained:
        net.load_parameters(get_model_file(name, root=root), device=device)
    return net
