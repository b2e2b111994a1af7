"""`gluon.utils`: batch splitting, global-norm clipping, SHA-1 checks and file download.

`download` fetches with `requests` as MXNet does (an optional dependency, imported when called;
MXNet's own tests mock it), else with `httpx`; it writes through a temporary file renamed into
place, so concurrent downloads of one file leave exactly one copy.
"""
from __future__ import annotations

import hashlib
import os
import time
import uuid
import warnings
from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as _onp

from .. import numpy as _np
from ..ndarray import ndarray


def split_data(data: ndarray, num_slice: int, batch_axis: int = 0,
               even_split: bool = True) -> list[ndarray]:
    """`num_slice` slices along `batch_axis`; uneven sizes differ by one (the first are longer)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along "
            f"axis {batch_axis}; use a batch size that is a multiple of {num_slice} or "
            f"even_split=False")
    each, extra = divmod(size, num_slice)
    bounds = _onp.cumsum([0] + [each + 1] * extra + [each] * (num_slice - extra))
    return _np.split(data, [int(b) for b in bounds[1:-1]], axis=batch_axis)


def split_and_load(data, ctx_list: Sequence, batch_axis: int = 0,
                   even_split: bool = True) -> list[ndarray]:
    """Split a batch over devices (all CPU here: the slices are the result)."""
    if not isinstance(data, ndarray):
        data = _np.array(data)
    if len(ctx_list) == 1:
        return [data]
    return split_data(data, len(ctx_list), batch_axis, even_split)


def clip_global_norm(arrays: Sequence[ndarray], max_norm: float, check_isfinite: bool = True):
    """Scale `arrays` in place so that their joint 2-norm is at most `max_norm`; returns the norm."""
    total = float(_onp.sqrt(sum(float(_onp.sum(_onp.square(a.asnumpy(), dtype=_onp.float64)))
                                for a in arrays)))
    if check_isfinite and not _onp.isfinite(total):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total + 1e-8)
    if scale < 1.0:
        for a in arrays:
            a[:] = a * scale
    return total


def split_rnn_params(param: ndarray, mode: str, num_layers: int, input_size: int,
                     hidden_size: int, bidirectional: bool = False,
                     projection_size: int | None = None) -> dict[str, ndarray]:
    """The flat fused-RNN vector as named pieces `{l|r}{layer}_{i2h|h2h|h2r}_{weight|bias}`.

    Packing (MXNet/cuDNN, as `rnn.RNNFused`): all weights layer by layer, direction by direction
    (i2h, h2h, then h2r with a projection), then all biases in the same order."""
    gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
    dirs = ["l", "r"][:2 if bidirectional else 1]
    rows, out_size = gates * hidden_size, projection_size or hidden_size
    shapes: list[tuple[str, tuple]] = []
    for layer in range(num_layers):
        n_in = input_size if layer == 0 else out_size * len(dirs)
        for d in dirs:
            shapes += [(f"{d}{layer}_i2h_weight", (rows, n_in)),
                       (f"{d}{layer}_h2h_weight", (rows, out_size))]
            if projection_size:
                shapes.append((f"{d}{layer}_h2r_weight", (projection_size, hidden_size)))
    shapes += [(f"{d}{layer}_{g}_bias", (rows,)) for layer in range(num_layers) for d in dirs
               for g in ("i2h", "h2h")]
    pieces, off = {}, 0
    for name, shape in shapes:
        n = int(_onp.prod(shape))
        pieces[name] = param[off:off + n].reshape(shape)
        off += n
    return pieces


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the file's SHA-1 matches `sha1_hash` (a full or leading hex digest)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    digest = sha1.hexdigest()
    return digest == sha1_hash if len(sha1_hash) == 40 else digest.startswith(sha1_hash)


def _target(url: str, path: str | None) -> str:
    name = url.split("/")[-1]
    if path is None:
        return name
    path = os.path.expanduser(path)
    return os.path.join(path, name) if os.path.isdir(path) else path


def download(url: str, path: str | None = None, overwrite: bool = False,
             sha1_hash: str | None = None, retries: int = 5, verify_ssl: bool = True) -> str:
    """Download `url` to `path` (a file or a folder); returns the file name.

    Raises the last error after `retries` attempts (no network → the HTTP client's connection
    error)."""
    if not verify_ssl:   # said on every call, even when the file is already there
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). "
                      "Adding certificate verification is strongly advised.", stacklevel=2)
    fname = _target(url, path)
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    for attempt in range(max(1, retries)):
        try:
            _fetch(url, fname, verify_ssl, sha1_hash)
            return fname
        except Exception:
            if attempt + 1 >= max(1, retries):
                raise
            time.sleep(min(2 ** attempt * 0.1, 2.0))
    return fname


@contextmanager
def _get(url: str, verify_ssl: bool) -> Iterator[tuple[int, Iterator[bytes]]]:
    """(HTTP status, body chunks) of a streamed GET."""
    try:
        import requests   # MXNet's client (optional)
    except ImportError:
        requests = None
    if requests is not None:
        r = requests.get(url, stream=True, verify=verify_ssl)
        yield r.status_code, r.iter_content(chunk_size=1 << 16)
        return
    import httpx
    with httpx.stream("GET", url, verify=verify_ssl, follow_redirects=True) as r:
        yield r.status_code, r.iter_bytes(1 << 16)


def _fetch(url: str, fname: str, verify_ssl: bool, sha1_hash: str | None) -> None:
    with _get(url, verify_ssl) as (status, chunks):
        if status != 200:
            raise RuntimeError(f"Failed downloading url {url}: HTTP {status}")
        tmp = f"{fname}.{uuid.uuid4().hex}.part"
        try:
            with open(tmp, "wb") as f:
                for chunk in chunks:
                    if chunk:
                        f.write(chunk)
            if sha1_hash and not check_sha1(tmp, sha1_hash):
                raise UserWarning(f"File {fname} is downloaded but the content hash does not "
                                  "match.")
            os.replace(tmp, fname)   # atomic: concurrent downloads leave one complete file
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
