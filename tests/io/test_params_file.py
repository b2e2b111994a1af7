"""load_params / save_params / detection / name helpers, and hostile input end to end."""
from __future__ import annotations

import io
import os
import stat
import struct
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from framework.io import (ParamsFormatError, detect_format, load_params, npy_bytes, save_params,
                          split_arg_aux, strip_prefixes, write_legacy, write_npz)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
V1X, V2X = FIXTURES / "mxnet-1.9.1", FIXTURES / "mxnet-2.0.0b1"
EXAMPLE = {"arg:w": np.arange(6, dtype=np.float32).reshape(2, 3), "aux:m": np.array([1, 2], np.int64)}
BASE = write_legacy(EXAMPLE)  # the 170-byte file of MXNET_FORMATS.md section 3.5


def patched(offset: int, value: bytes, base: bytes = BASE) -> bytes:
    return base[:offset] + value + base[offset + len(value):]


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


def i64(v: int) -> bytes:
    return struct.pack("<q", v)


def zipped(name: str, payload: bytes, method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr(name, payload)
    return buf.getvalue()


def pickled_npz() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array([object(), {"a": 1}], dtype=object), allow_pickle=True)
    return zipped("arg:w.npy", buf.getvalue())


def npy_raw(header: bytes, data: bytes = b"\0" * 16) -> bytes:
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def huge_npz() -> bytes:
    return zipped("arg:w.npy", npy_raw(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"))


def bomb_npz() -> bytes:
    n = 16 << 20
    hdr = b"{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
    return zipped("z.npy", npy_raw(hdr, bytes(n)), zipfile.ZIP_DEFLATED)


# name -> (bytes, expected message fragment, extra kwargs for load_params)
HOSTILE = {
    "empty": (b"", "truncated", {}),
    "wrong list magic": (patched(0, u64(0x113)), "magic 0x113", {}),
    "reserved not zero": (patched(8, u64(7)), "reserved", {}),
    "absurd N": (patched(16, u64(2**40)), "array count 1099511627776 impossible", {}),
    "max N": (patched(16, u64(2**64 - 1)), "impossible", {}),
    "lying dim 2**40": (patched(0x24, i64(2**40)), "needs 13194139533312 bytes", {}),
    "overflowing dims": (patched(0x24, i64(2**62) + i64(2**62)), "too large|needs", {}),
    "ndim 1000": (patched(0x20, i32(1000)), "invalid ndim 1000", {}),
    "ndim 33": (patched(0x20, i32(33)), "invalid ndim 33", {}),
    "negative dim": (patched(0x24, i64(-3)), "negative dimension", {}),
    "negative ndim": (patched(0x20, i32(-5)), "invalid ndim -5", {}),
    "unknown dtype flag": (patched(0x3C, i32(13)), "unknown dtype flag 13", {}),
    "bad stype": (patched(0x1C, i32(3)), "invalid storage type 3", {}),
    "undefined stype": (patched(0x1C, i32(-1)), "invalid storage type -1", {}),
    "v0 implausible ndim": (patched(0x18, struct.pack("<I", 0x12345678)), "0x12345678", {}),
    "K mismatch": (patched(0x88, u64(1)), "name count 1 must be 0 or equal", {}),
    "K huge": (patched(0x88, u64(2**63)), "name count", {}),
    "lying name length": (patched(0x90, u64(2**63)), "name needs 9223372036854775808 bytes", {}),
    "non-utf8 name": (patched(0x98, b"\xff\xfe\xfd\xfc\xfb"), "not valid UTF-8", {}),
    "trailing bytes": (BASE + b"\0", "1 trailing bytes", {}),
    "duplicate names": (patched(0xA5, b"arg:w"), "duplicate array name 'arg:w'", {}),
    "pickled npz member": (pickled_npz(), "object dtype", {}),
    "npz shape 10**12": (huge_npz(), "needs 4000000000000 data bytes", {}),
    "npz zip bomb": (bomb_npz(), "exceeds the limit", {"max_bytes": 1 << 20}),
    "bad zip": (b"PK\x03\x04" + b"\0" * 60, "not a readable ZIP", {}),
    "npy huge shape": (npy_raw(b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }"),
                       "needs", {}),
    "npy truncated": (npy_bytes(np.zeros(8, np.float32))[:100], "npy header length|truncated", {}),
    "file over max_bytes": (BASE, "limit is 100", {"max_bytes": 100}),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_fail_fast(name: str) -> None:
    raw, fragment, kwargs = HOSTILE[name]
    t0 = time.perf_counter()
    with pytest.raises(ParamsFormatError) as info:
        load_params(raw, **kwargs)
    assert time.perf_counter() - t0 < 1.0
    assert any(f in str(info.value) for f in fragment.split("|")), str(info.value)
    assert str(info.value).startswith("<bytes>")


def test_hostile_case_sanity() -> None:
    assert load_params(BASE).keys() == EXAMPLE.keys()
    assert len(HOSTILE) >= 20


@pytest.mark.parametrize("path", [V1X / "norm_layers-0000.params", V2X / "np_matmul-0000.params"],
                         ids=lambda p: p.parent.name)
def test_truncation_at_every_offset(path: Path) -> None:
    raw = path.read_bytes()
    t0 = time.perf_counter()
    for cut in range(len(raw)):
        with pytest.raises(ParamsFormatError):
            load_params(raw[:cut])
    assert (time.perf_counter() - t0) / len(raw) < 0.05


def test_errors_name_the_file(tmp_path: Path) -> None:
    p = tmp_path / "broken.params"
    p.write_bytes(BASE[:100])
    with pytest.raises(ParamsFormatError, match=r"broken\.params: record 1 at offset \d+"):
        load_params(p)
    from framework.base import MXNetError
    assert issubclass(ParamsFormatError, MXNetError) and issubclass(ParamsFormatError, ValueError)


# ------------------------------------------------------------------ property tests

SEEDS = [BASE, write_legacy([np.float32(1), np.zeros((2, 0))], version=3),
         (V1X / "leakyrelu_variants-0000.params").read_bytes(),
         (V2X / "np_matmul-0000.params").read_bytes(),
         write_npz({"a": np.arange(5, dtype=np.int16), "aux:b.c": np.float64(2)}),
         zipped("x.npy", npy_bytes(np.arange(40.0)), zipfile.ZIP_DEFLATED),
         npy_bytes(np.ones((2, 2), np.uint8))]
PREFIXES = [b"", BASE[:16], BASE[:24], b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY\x01\x00"]


def _only_format_errors(raw: bytes) -> None:
    t0 = time.perf_counter()
    try:
        load_params(raw)
    except ParamsFormatError:
        pass
    assert time.perf_counter() - t0 < 1.0


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PREFIXES), st.binary(max_size=400))
def test_random_bytes_only_raise_format_errors(prefix: bytes, tail: bytes) -> None:
    _only_format_errors(prefix + tail)


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS),
       st.lists(st.tuples(st.integers(0, 1 << 16), st.binary(min_size=1, max_size=8)), max_size=6),
       st.one_of(st.none(), st.integers(0, 1 << 16)))
def test_mutated_files_only_raise_format_errors(seed: bytes, edits, cut) -> None:
    raw = bytearray(seed)
    for pos, value in edits:
        pos %= len(raw)
        raw[pos:pos + len(value)] = value
    if cut is not None:
        del raw[cut % (len(raw) + 1):]
    _only_format_errors(bytes(raw))


# ------------------------------------------------------------------ detection and loading

def test_detect_format() -> None:
    assert detect_format(b"PK\x03\x04rest") == "npz"
    assert detect_format(b"PK\x05\x06" + b"\0" * 18) == "npz"
    assert detect_format(b"\x93NUMPY\x01\x00") == "npy"
    assert detect_format(BASE[:8]) == "legacy"
    assert detect_format(b"") == "legacy" and detect_format(b"PK") == "legacy"
    for p in V1X.glob("*-0000.params"):
        assert detect_format(p.read_bytes()[:4]) == "legacy"
    for p in V2X.glob("*-0000.params"):
        assert detect_format(p.read_bytes()[:4]) == "npz"


def test_every_fixture_loads_from_path_and_bytes() -> None:
    files = sorted(V1X.glob("*-0000.params")) + sorted(V2X.glob("*-0000.params"))
    assert len(files) == 55
    for p in files:
        a, b = load_params(p), load_params(p.read_bytes())
        c = load_params(str(p))
        assert isinstance(a, dict) and a.keys() == b.keys() == c.keys()
        assert all(k.startswith(("arg:", "aux:")) for k in a)
        assert all(np.array_equal(a[k], b[k]) for k in a)


def test_single_npy_is_one_element_list(tmp_path: Path) -> None:
    p = tmp_path / "x.params"  # extension means nothing
    np.save(p.with_suffix(".npy"), np.eye(2, dtype=np.float32))
    p.with_suffix(".npy").rename(p)
    out = load_params(p)
    assert isinstance(out, list) and len(out) == 1 and np.array_equal(out[0], np.eye(2))


def test_load_params_misc(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_params(tmp_path / "missing.params")
    with pytest.raises(TypeError):
        load_params(123)  # type: ignore[arg-type]
    assert load_params(memoryview(BASE)).keys() == EXAMPLE.keys()
    assert load_params(bytearray(write_legacy([np.zeros(1)]))).__class__ is list
    big = tmp_path / "big.params"
    big.write_bytes(BASE)
    with pytest.raises(ParamsFormatError, match="big.params: file is 170 bytes, limit is 169"):
        load_params(big, max_bytes=169)
    assert load_params(big, max_bytes=170).keys() == EXAMPLE.keys()


# ------------------------------------------------------------------ saving

@pytest.mark.parametrize("fmt,version", [("npz", 2), ("legacy", 2), ("legacy", 3)])
def test_save_params_round_trip(tmp_path: Path, fmt: str, version: int) -> None:
    src = {"arg:0.weight": np.ones((3, 2), np.float16), "aux:bn.running_var": np.arange(3, dtype=np.uint8),
           "arg:empty": np.zeros((0, 4), np.int32)}
    if version == 3 or fmt == "npz":
        src["arg:scalar"] = np.array(True)
    target = tmp_path / "model-0000.params"
    save_params(target, src, format=fmt, legacy_version=version)  # type: ignore[arg-type]
    out = load_params(target)
    assert list(out) == list(src)
    for k, v in src.items():
        assert out[k].dtype == v.dtype and np.array_equal(out[k], v)
    assert detect_format(target.read_bytes()[:4]) == ("npz" if fmt == "npz" else "legacy")
    assert sorted(os.listdir(tmp_path)) == ["model-0000.params"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_save_params_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "p.params"
    save_params(str(target), EXAMPLE, format="legacy")
    assert target.read_bytes() == BASE
    target.chmod(0o600)
    save_params(target, {"arg:w": np.zeros(2, np.float32)})  # replaces, keeps the mode
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_bytes()[:2] == b"PK"
    before = target.read_bytes()
    with pytest.raises(ParamsFormatError):
        save_params(target, {"bad": np.array([None])})  # fails while serialising
    with pytest.raises(ParamsFormatError, match="version=3"):
        save_params(target, {"s": np.float32(1)}, format="legacy")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        save_params(target, EXAMPLE)
    monkeypatch.undo()
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["p.params"]
    with pytest.raises(ValueError, match="format"):
        save_params(target, EXAMPLE, format="json")  # type: ignore[arg-type]


# ------------------------------------------------------------------ names

def test_split_arg_aux_and_strip_prefixes() -> None:
    d = load_params(V1X / "batchnorm_variants-0000.params")
    arg, aux = split_arg_aux(d)
    assert len(arg) + len(aux) == len(d) and len(aux) == 16
    assert "model0_batchnorm0_gamma" in arg and "model0_batchnorm0_running_var" in aux
    stripped = strip_prefixes(d)
    assert list(stripped) == [k[4:] for k in d]
    d2 = load_params(V2X / "nn_layers_2-0000.params")
    arg, aux = split_arg_aux(d2)
    assert sorted(aux) == ["bn.running_mean", "bn.running_var", "bn2.running_mean", "bn2.running_var"]
    assert "c1.weight" in arg and "c1.weight" in strip_prefixes(d2)
    assert split_arg_aux({"0.weight": 1, "aux:x": 2}) == ({"0.weight": 1}, {"x": 2})
    assert strip_prefixes({"a:b": 1, "arg:c": 2}) == {"a:b": 1, "c": 2}
    with pytest.raises(ParamsFormatError, match="'w' appears twice"):
        strip_prefixes({"arg:w": 1, "aux:w": 2})
    with pytest.raises(ParamsFormatError, match="'w' appears twice"):
        split_arg_aux({"arg:w": 1, "w": 2})
    assert split_arg_aux({"arg:w": 1, "aux:w": 2}) == ({"w": 1}, {"w": 2})
    with pytest.raises(ParamsFormatError, match="named arrays"):
        strip_prefixes([np.zeros(1)])  # type: ignore[arg-type]
    assert split_arg_aux({}) == ({}, {}) and strip_prefixes(load_params(V1X / "rounding-0000.params")) == {}


def test_deflate_helper_sanity() -> None:
    # the npz zip-bomb fixture above really is small on disk and large when inflated
    raw = bomb_npz()
    assert len(raw) < 64 << 10 and zipfile.ZipFile(io.BytesIO(raw)).infolist()[0].file_size > 16 << 20
    assert zlib.crc32(b"") == 0
