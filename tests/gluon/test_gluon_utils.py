"""gluon.utils: batch splitting, fused-RNN parameter splitting, SHA-1 checks, download."""
from __future__ import annotations

import hashlib
import socket
import sys
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import httpx
import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import rnn, utils


@pytest.mark.parametrize("n,k,even", [(8, 4, True), (10, 3, False), (5, 5, True), (4, 6, False)])
def test_split_data_matches_array_split(n, k, even):
    x = onp.arange(n * 3, dtype=onp.float32).reshape(n, 3)
    parts = utils.split_data(np.array(x), k, 0, even_split=even)
    want = onp.array_split(x, k, axis=0)     # same rule: the first n % k slices are one longer
    assert [p.shape for p in parts] == [w.shape for w in want]
    for p, w in zip(parts, want):
        onp.testing.assert_array_equal(p.asnumpy(), w)


def test_split_data_uneven_refused_by_default():
    with pytest.raises(ValueError, match="evenly split"):
        utils.split_data(np.zeros((10, 2)), 3)


def test_split_and_load_one_slice_per_device():
    parts = utils.split_and_load(onp.ones((6, 2), onp.float32), [mx.cpu(0), mx.cpu(1)])
    assert [p.shape for p in parts] == [(3, 2), (3, 2)]
    assert isinstance(parts[0], np.ndarray)


def test_split_rnn_params_recovers_the_packed_pieces():
    layer = rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=3)
    layer.initialize()
    layer(np.zeros((4, 1, 3)))
    flat = layer.rnn_param.data()
    pieces = utils.split_rnn_params(flat, "lstm", 2, 3, 5, bidirectional=True)
    assert pieces["l0_i2h_weight"].shape == (20, 3)
    assert pieces["r1_i2h_weight"].shape == (20, 10)
    assert pieces["l0_h2h_bias"].shape == (20,)
    assert sum(p.size for p in pieces.values()) == flat.size
    # packing order: every weight (layer, direction, i2h then h2h), then every bias
    onp.testing.assert_array_equal(pieces["l0_i2h_weight"].asnumpy().ravel(), flat.asnumpy()[:60])
    onp.testing.assert_array_equal(pieces["r1_h2h_bias"].asnumpy(), flat.asnumpy()[-20:])


def test_clip_global_norm_scales_jointly():
    a, b = np.array([3.0, 0.0]), np.array([0.0, 4.0])
    norm = utils.clip_global_norm([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    onp.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-5)
    onp.testing.assert_allclose(b.asnumpy(), [0.0, 0.8], rtol=1e-5)


def test_check_sha1(tmp_path):
    f = tmp_path / "f.bin"
    f.write_bytes(b"hybridserve")
    digest = hashlib.sha1(b"hybridserve").hexdigest()
    assert utils.check_sha1(str(f), digest)
    assert utils.check_sha1(str(f), digest[:8])
    assert not utils.check_sha1(str(f), "0" * 40)


@pytest.fixture
def site(monkeypatch):
    """A real HTTP server on a free loopback port serving `files` (path → bytes; anything
    else is 404), and `download` on the project's own client (httpx): `requests`, MXNet's
    optional one, is made unimportable."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    monkeypatch.setitem(sys.modules, "requests", None)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{server.server_port}", files=files)
    finally:
        server.shutdown()
        server.server_close()


def test_download_writes_one_complete_file(tmp_path, site):
    site.files["/data.bin"] = b"x" * 200_000
    path = utils.download(f"{site.url}/data.bin", path=str(tmp_path))
    assert path == str(tmp_path / "data.bin")
    assert (tmp_path / "data.bin").read_bytes() == b"x" * 200_000
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]    # no temporary left over


def test_download_http_error_and_offline_raise_after_retries(tmp_path, site):
    with pytest.raises(RuntimeError, match="HTTP 404"):
        utils.download(f"{site.url}/missing", path=str(tmp_path), retries=2)
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        utils.download(f"http://127.0.0.1:{port}/x", path=str(tmp_path), retries=2)
    assert list(tmp_path.iterdir()) == []


def test_download_sha1_mismatch_keeps_nothing(tmp_path, site):
    site.files["/y"] = b"abc"
    with pytest.raises(UserWarning, match="hash does not match"):
        utils.download(f"{site.url}/y", path=str(tmp_path), sha1_hash="0" * 40, retries=1)
    assert list(tmp_path.iterdir()) == []
    good = hashlib.sha1(b"abc").hexdigest()
    assert utils.download(f"{site.url}/y", path=str(tmp_path), sha1_hash=good) == \
        str(tmp_path / "y")


def test_download_warns_when_ssl_unverified(tmp_path, site):
    site.files["/z"] = b"a"
    for _ in range(2):        # the second call finds the file there and still warns
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            utils.download(f"{site.url}/z", path=str(tmp_path), verify_ssl=False)
        assert any(str(w.message).startswith("Unverified HTTPS request") for w in seen)