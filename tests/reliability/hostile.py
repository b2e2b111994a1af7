"""A corpus of hostile model files, built from real exports (MXNet 1.9.1's fc_flatten, legacy
params; the demo MLP, npz params) by breaking one thing at a time.

`corpus(marker)` → list of `Hostile(name, files, why)`: `files` are the multipart fields of an
upload (`symbol`, `params`, optional `config`), `why` a word the refusal must contain. Limits
assumed (tests/reliability/conftest.py `rserver`): upload 8 MiB, params 16 MiB, symbol 1 MiB,
2000 graph nodes, default JSON depth 64 and tensor elements 64 Mi.
"""
from __future__ import annotations

import io
import json
import pickle
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from serverproc import STORE

from .relutil import MX1

FC_SYM = (MX1 / "fc_flatten-symbol.json").read_bytes()
FC_PARAMS = (MX1 / "fc_flatten-0000.params").read_bytes()       # legacy NDArray list
MLP_SYM = (STORE / "mlp" / "1" / "mlp-symbol.json").read_bytes()
MLP_PARAMS = (STORE / "mlp" / "1" / "mlp-0000.params").read_bytes()   # npz


@dataclass
class Hostile:
    name: str
    files: dict
    why: str                     # a word the error message must contain (lower case)
    codes: tuple = (400,)


def fc(sym: bytes = FC_SYM, params: bytes | None = FC_PARAMS, config=None) -> dict:
    out = {"symbol": ("m-symbol.json", sym)}
    if params is not None:
        out["params"] = ("m-0000.params", params)
    if config is not None:
        out["config"] = ("config.json", config if isinstance(config, bytes)
                         else json.dumps(config).encode())
    return out


def sym_doc() -> dict:
    return json.loads(FC_SYM)


def sym_bytes(doc) -> bytes:
    return json.dumps(doc).encode()


def legacy_one(shape: tuple[int, ...], payload: bytes, name: str = "arg:w",
               count: int = 1) -> bytes:
    """A legacy NDArray list whose single V2 record declares `shape` over `payload`."""
    rec = struct.pack("<IiI", 0xF993FAC9, 0, len(shape)) + b"".join(
        struct.pack("<q", d) for d in shape) + struct.pack("<iii", 1, 0, 0) + payload
    nm = name.encode()
    return (struct.pack("<QQQ", 0x112, 0, count) + rec + struct.pack("<Q", 1)
            + struct.pack("<Q", len(nm)) + nm)


def npy(header: str, payload: bytes) -> bytes:
    h = header.encode("latin1")
    h += b" " * (-(10 + len(h) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload


def npz(members: dict[str, bytes], deflate: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        for k, v in members.items():
            z.writestr(k + ".npy", v)
    return buf.getvalue()


def lying_zip_size(data: bytes, claimed: int) -> bytes:
    """Rewrite every uncompressed-size field (local header and central directory) to `claimed`."""
    b = bytearray(data)
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        i = b.find(sig)
        while i >= 0:
            struct.pack_into("<I", b, i + off, claimed)
            i = b.find(sig, i + 4)
    return bytes(b)


class _Touch:
    """Unpickling this creates a file: proof that something unpickled the upload."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def pickled_npz(marker: Path) -> bytes:
    payload = pickle.dumps(np.array([_Touch(str(marker))], dtype=object), protocol=2)
    return npz({"arg:model0_dense0_weight": npy(
        "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", payload)})


def cycle() -> bytes:
    d = sym_doc()
    d["nodes"][3]["inputs"][0] = [4, 0, 0]          # FC reads a later node: a cycle
    return sym_bytes(d)


def self_loop() -> bytes:
    d = sym_doc()
    d["nodes"][4]["inputs"] = [[4, 0, 0]]
    return sym_bytes(d)


def dangling_input() -> bytes:
    d = sym_doc()
    d["nodes"][3]["inputs"][1] = [10_000, 0, 0]
    return sym_bytes(d)


def dangling_head() -> bytes:
    d = sym_doc()
    d["heads"] = [[99, 0, 0]]
    return sym_bytes(d)


def huge_constant(as_head: bool = False) -> bytes:
    """A graph with a (100000 x 100000) zeros tensor (tiny file, 40 GB at run time), added to
    its output (shapes do not even agree) or as a second output."""
    d = sym_doc()
    n = len(d["nodes"])
    d["nodes"].append({"op": "_zeros", "name": "big", "attrs": {"shape": "(100000, 100000)"},
                       "inputs": []})
    d["nodes"].append({"op": "broadcast_add", "name": "out2",
                       "inputs": [d["heads"][0], [n, 0, 0]]})
    d["heads"] = [d["heads"][0], [n, 0, 0]] if as_head else [[n + 1, 0, 0]]
    d["arg_nodes"] = [i for i, x in enumerate(d["nodes"]) if x["op"] == "null"]
    d["node_row_ptr"] = list(range(len(d["nodes"]) + 1))
    return sym_bytes(d)


def many_nodes(k: int = 3000) -> bytes:
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    nodes += [{"op": "relu", "name": f"r{i}", "inputs": [[i, 0, 0]]} for i in range(k)]
    return sym_bytes({"nodes": nodes, "arg_nodes": [0], "heads": [[k, 0, 0]]})


def deep(n: int, open_: str = "[", close: str = "]", inner: str = "1") -> bytes:
    return (open_ * n + inner + close * n).encode()


def zip_bomb() -> bytes:
    """200 MB of zeros deflated to ~200 KB, declared honestly (over the 16 MiB params limit)."""
    return npz({"arg:w": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (52428800,), }",
                             bytes(200 << 20))}, deflate=True)


def lying_zip_bomb() -> bytes:
    """The same kind of bomb, but its headers claim 1 MB: inflating must stop at the claim."""
    raw = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (262144,), }", bytes(64 << 20))
    return lying_zip_size(npz({"arg:w": raw}, deflate=True), 1 << 20)


def corpus(marker: Path) -> list[Hostile]:
    d = sym_doc()
    unknown_op = sym_doc()
    unknown_op["nodes"][4]["op"] = "Exec_Shell_Command"
    bad_attr = sym_doc()
    bad_attr["nodes"][3]["attrs"]["num_hidden"] = "sixteen"
    cfg_in = {"name": "data", "datatype": "FP32"}
    return [
        # oversized declared shapes
        Hostile("config-declares-huge-input", fc(config={"inputs": [
            {**cfg_in, "shape": [-1, 3, 65536, 65536]}]}), "limit"),
        Hostile("config-huge-warmup-batch", fc(MLP_SYM, MLP_PARAMS, config={
            "max_batch_size": 1_000_000, "inputs": [{**cfg_in, "shape": [-1, 512]}],
            "dynamic_batching": {"preferred_batch_size": [1_000_000]}}), "limit"),
        Hostile("graph-huge-constant", fc(huge_constant()), "limit"),
        Hostile("graph-huge-constant-output", fc(huge_constant(as_head=True)), "limit"),
        Hostile("legacy-params-huge-shape", fc(params=legacy_one((1 << 20, 1 << 20), b"\0" * 64)),
                "shape"),
        Hostile("legacy-params-ndim-2^31", fc(params=struct.pack("<QQQIiI", 0x112, 0, 1,
                                                                  0xF993FAC9, 0, 2**31 - 1)),
                "params"),
        Hostile("legacy-params-count-2^40", fc(params=struct.pack("<QQQ", 0x112, 0, 1 << 40)),
                "params"),
        Hostile("npz-huge-shape", fc(params=npz({"arg:w": npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
            b"\0" * 64)})), "params"),
        # graph structure
        Hostile("cycle", fc(cycle()), "cycle"),
        Hostile("self-loop", fc(self_loop()), "cycle"),
        Hostile("dangling-input", fc(dangling_input()), "dangling"),
        Hostile("dangling-head", fc(dangling_head()), "symbol"),
        Hostile("too-many-nodes", fc(many_nodes(), params=None), "limit"),
        Hostile("unknown-op", fc(sym_bytes(unknown_op)), "exec_shell_command"),
        Hostile("bad-attribute", fc(sym_bytes(bad_attr)), "num_hidden"),
        # truncated and lying files
        Hostile("truncated-symbol", fc(FC_SYM[: len(FC_SYM) // 2]), "json"),
        Hostile("truncated-legacy-params", fc(params=FC_PARAMS[: len(FC_PARAMS) // 2]),
                "params"),
        Hostile("truncated-npz-params", fc(MLP_SYM, MLP_PARAMS[: len(MLP_PARAMS) // 2]),
                "params"),
        Hostile("npz-lying-sizes", fc(MLP_SYM, lying_zip_size(MLP_PARAMS, 7)), "params"),
        Hostile("params-of-another-model",
                fc(params=(MX1 / "activations-0000.params").read_bytes()), "params"),
        Hostile("symbol-not-json", fc(b"\xff\xfe\x00garbage{"), "json"),
        Hostile("symbol-is-a-list", fc(b"[]"), "object"),
        Hostile("empty-files", fc(b"", b""), "symbol"),
        # pickles, bombs, enormous and deep documents
        Hostile("pickled-npz", fc(params=pickled_npz(marker)), "params"),
        Hostile("zip-bomb", fc(params=zip_bomb()), "limit"),
        Hostile("lying-zip-bomb", fc(params=lying_zip_bomb()), "params"),
        Hostile("enormous-symbol-json", fc(b'{"nodes": [' + b" " * (2 << 20) + b"]}"), "limit"),
        Hostile("enormous-upload", fc(params=b"\0" * (9 << 20)), "exceeds", (413,)),
        Hostile("deep-symbol-json", fc(b'{"nodes": ' + deep(100_000) + b', "heads": []}'),
                "nest"),
        Hostile("deep-config-json", fc(config=b'{"description": ' + deep(100_000) + b"}"),
                "nest"),
        Hostile("enormous-config", fc(config=b'{"description": "' + b"x" * (2 << 20) + b'"}'),
                "config", (413,)),
        Hostile("config-wrong-input-name", fc(config={"inputs": [{**cfg_in, "name": "x"}]}),
                "inputs"),
    ] + [Hostile(f"symbol-{k}", fc(sym_bytes({**d, k: v})), "symbol")
         for k, v in (("heads", "x"), ("nodes", {}), ("arg_nodes", [99]))]
