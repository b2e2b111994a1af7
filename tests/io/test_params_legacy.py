"""Legacy MXNet NDArray-list files (1.x .params): fixtures, documented layouts, round trips."""
from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from framework.io import ParamsFormatError, read_legacy, write_legacy
from framework.io.dtypes import (BFLOAT16, FLAG_TO_DTYPE, bfloat16_to_float32, dtype_flag,
                                 dtype_from_flag, dtype_name, float32_to_bfloat16)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet-1.9.1"
LEGACY_FILES = sorted(FIX.glob("*-0000.params"))

HEADER = struct.pack("<QQ", 0x112, 0)
V2, V3, V1 = 0xF993FAC9, 0xF993FACA, 0xF993FAC8


def lst(n: int, records: bytes, names: list[bytes] | None = None) -> bytes:
    """A whole file: header, N, records, K and names."""
    tail = struct.pack("<Q", len(names or []))
    for nm in names or []:
        tail += struct.pack("<Q", len(nm)) + nm
    return HEADER + struct.pack("<Q", n) + records + tail


def rec(magic: int, dims: tuple[int, ...], flag: int, data: bytes, stype: int | None = 0) -> bytes:
    head = struct.pack("<I", magic) + (struct.pack("<i", stype) if stype is not None else b"")
    return (head + struct.pack("<i", len(dims)) + struct.pack(f"<{len(dims)}q", *dims)
            + struct.pack("<ii", 1, 0) + struct.pack("<i", flag) + data)


def example_170() -> bytes:
    """The annotated example of MXNET_FORMATS.md section 3.5, built field by field."""
    out = struct.pack("<QQQ", 0x112, 0, 2)
    out += bytes.fromhex("C9FA93F9") + struct.pack("<ii", 0, 2) + struct.pack("<qq", 2, 3)
    out += struct.pack("<ii", 1, 0) + struct.pack("<i", 0) + struct.pack("<6f", *range(6))
    out += bytes.fromhex("C9FA93F9") + struct.pack("<ii", 0, 1) + struct.pack("<q", 2)
    out += struct.pack("<ii", 1, 0) + struct.pack("<i", 6) + struct.pack("<2q", 1, 2)
    out += struct.pack("<Q", 2) + struct.pack("<Q", 5) + b"arg:w" + struct.pack("<Q", 5) + b"aux:m"
    return out


# ------------------------------------------------------------------ fixtures

@pytest.mark.parametrize("path", LEGACY_FILES, ids=lambda p: p.name)
def test_fixture_loads_and_rewrites_identically(path: Path) -> None:
    raw = path.read_bytes()
    d = read_legacy(raw, str(path))
    assert isinstance(d, dict)
    for key, arr in d.items():
        assert key.startswith(("arg:", "aux:")), key
        assert arr.dtype == np.float32 and arr.flags.c_contiguous and arr.flags.writeable
        assert np.isfinite(arr).all()
    if d:  # our writer reproduces what MXNet 1.9.1 wrote, byte for byte
        assert write_legacy(d) == raw
    else:
        assert len(raw) == 32


def test_fixture_count_and_parameter_free_models() -> None:
    assert len(LEGACY_FILES) == 43
    empty = [p.name for p in LEGACY_FILES if not read_legacy(p.read_bytes())]
    assert "activations-0000.params" in empty and len(empty) == 16


def test_fixture_values_plausible() -> None:
    seen = {"running_var": 0, "gamma": 0, "running_mean": 0}
    for path in LEGACY_FILES:
        for key, arr in read_legacy(path.read_bytes()).items():
            if key.endswith("running_var"):
                assert key.startswith("aux:") and ((arr >= 0.5) & (arr <= 1.5)).all(), key
                seen["running_var"] += 1
            elif key.endswith("running_mean"):
                assert key.startswith("aux:") and np.abs(arr).max() < 1.0, key
                seen["running_mean"] += 1
            elif key.endswith("gamma"):
                assert key.startswith("arg:") and ((arr >= 0.5) & (arr <= 1.5)).all(), key
                seen["gamma"] += 1
            elif key.endswith("alpha"):
                assert ((arr >= 0.05) & (arr <= 0.3)).all(), key
    assert all(v > 5 for v in seen.values()), seen


def test_fixture_key_names_are_1x_full_names() -> None:
    d = read_legacy((FIX / "batchnorm_variants-0000.params").read_bytes())
    assert list(d)[:4] == ["arg:model0_batchnorm0_gamma", "arg:model0_batchnorm0_beta",
                           "aux:model0_batchnorm0_running_mean", "aux:model0_batchnorm0_running_var"]
    d = read_legacy((FIX / "leakyrelu_variants-0000.params").read_bytes())
    assert {k: v.shape for k, v in d.items()} == {"arg:model0_prelu0_alpha": (1,),
                                                 "arg:model0_prelu1_alpha": (3,)}


# ------------------------------------------------------------------ documented layouts

def test_annotated_170_byte_example() -> None:
    raw = example_170()
    assert len(raw) == 170 and raw[0x58:0x5C] == bytes.fromhex("C9FA93F9") and raw[0x88] == 2
    d = read_legacy(raw)
    assert list(d) == ["arg:w", "aux:m"]
    assert d["arg:w"].dtype == np.float32 and d["arg:w"].shape == (2, 3)
    np.testing.assert_array_equal(d["arg:w"], np.arange(6, dtype=np.float32).reshape(2, 3))
    assert d["aux:m"].dtype == np.int64 and d["aux:m"].tolist() == [1, 2]
    src = {"arg:w": np.arange(6, dtype=np.float32).reshape(2, 3), "aux:m": np.array([1, 2], np.int64)}
    assert write_legacy(src) == raw


def test_v3_scalar_and_empty_examples() -> None:
    scalar = struct.pack("<Iii", V3, 0, 0) + struct.pack("<iii", 1, 0, 0) + bytes.fromhex("00004040")
    out = read_legacy(lst(1, scalar))
    assert isinstance(out, list) and out[0].shape == () and out[0] == 3.0
    assert write_legacy([np.array(3.0, np.float32)], version=3) == lst(1, scalar)
    empty = rec(V3, (0, 3), 0, b"")
    out = read_legacy(lst(1, empty, [b"e"]))
    assert out["e"].shape == (0, 3) and out["e"].dtype == np.float32


def test_v1_and_v0_records() -> None:
    v1 = struct.pack("<Ii", V1, 2) + struct.pack("<2q", 1, 2) + struct.pack("<iii", 1, 0, 4) + \
        struct.pack("<2i", 7, -8)
    v0 = struct.pack("<I", 2) + struct.pack("<2I", 2, 1) + struct.pack("<iii", 2, 1, 1) + \
        struct.pack("<2d", 0.5, 1.5)
    a, b = read_legacy(lst(2, v1 + v0))
    assert a.dtype == np.int32 and a.tolist() == [[7, -8]]
    assert b.dtype == np.float64 and b.tolist() == [[0.5], [1.5]]


def test_none_records_load_as_none() -> None:
    v2_none = struct.pack("<Iii", V2, 0, 0)
    v3_none = struct.pack("<Iii", V3, 0, -1)
    assert read_legacy(lst(2, v2_none + v3_none, [b"a", b"b"])) == {"a": None, "b": None}


def test_sparse_records_rejected_with_key_and_stype() -> None:
    # csr [[0,3],[4,0]] as MXNet 1.9.1 wrote it (section 3.3): storage shape placeholder (0,)
    csr = (struct.pack("<Iii", V2, 2, 1) + struct.pack("<q", 0) + struct.pack("<i", 2)
           + struct.pack("<2q", 2, 2) + struct.pack("<iii", 1, 0, 0)
           + struct.pack("<ii", 6, 1) + struct.pack("<q", 3) + struct.pack("<ii", 6, 1)
           + struct.pack("<q", 2) + struct.pack("<2f", 3, 4) + struct.pack("<3q", 0, 1, 2)
           + struct.pack("<2q", 1, 0))
    raw = lst(1, csr)
    assert len(raw) == 164
    with pytest.raises(ParamsFormatError, match=r"array 0.*'csr'.*not supported"):
        read_legacy(raw)
    with pytest.raises(ParamsFormatError, match=r"key 'arg:emb'.*'csr'"):
        read_legacy(lst(1, csr, [b"arg:emb"]))
    rsp = (struct.pack("<Iii", V2, 1, 2) + struct.pack("<2q", 1, 3) + struct.pack("<i", 2)
           + struct.pack("<2q", 4, 3) + struct.pack("<iii", 1, 0, 0) + struct.pack("<ii", 6, 1)
           + struct.pack("<q", 1) + struct.pack("<3f", 1, 2, 3) + struct.pack("<q", 2))
    with pytest.raises(ParamsFormatError, match=r"key 'w'.*'row_sparse'"):
        read_legacy(lst(2, rsp + rec(V2, (1,), 0, b"\0" * 4), [b"w", b"x"]))
    with pytest.raises(ParamsFormatError, match="V3 record with non-dense"):
        read_legacy(lst(1, struct.pack("<Iii", V3, 2, 1) + csr[12:]))


# ------------------------------------------------------------------ files written by real MXNet 1.9.1

# nd.save({'arg:csr': <csr [[0,3],[4,0]]>, 'aux:rsp': <row_sparse 3x3, row 1 = 1 2 3>, 'arg:dense': [1, 2]})
MX1_SPARSE = bytes.fromhex(
    "120100000000000000000000000000000300000000000000c9fa93f902000000010000000200000000000000"
    "0200000002000000000000000200000000000000010000000000000000000000060000000100000003000000"
    "0000000006000000010000000200000000000000000040400000804000000000000000000100000000000000"
    "020000000000000001000000000000000000000000000000c9fa93f901000000020000000100000000000000"
    "0300000000000000020000000300000000000000030000000000000001000000000000000000000006000000"
    "0100000001000000000000000000803f00000040000040400100000000000000c9fa93f90000000001000000"
    "02000000000000000100000000000000000000000000803f0000004003000000000000000700000000000000"
    "6172673a63737207000000000000006175783a72737009000000000000006172673a64656e7365")
# npx.save({'s': np.array(3.0), 'e': np.zeros((0, 3)), 'b': np.array([True, False])}) -> V3 records
MX1_V3 = bytes.fromhex(
    "120100000000000000000000000000000300000000000000cafa93f900000000000000000100000000000000"
    "0000000000004040cafa93f90000000002000000000000000000000003000000000000000100000000000000"
    "00000000cafa93f9000000000100000002000000000000000100000000000000000000000000803f00000000"
    "0300000000000000010000000000000073010000000000000065010000000000000062")
# nd.save of an undefined NDArray: MXNet wrote the header and a V2 magic with stype -1, then failed
MX1_NONE_PARTIAL = bytes.fromhex("120100000000000000000000000000000200000000000000c9fa93f9ffffffff")


def test_real_mxnet_sparse_file() -> None:
    assert len(MX1_SPARSE) == 347
    with pytest.raises(ParamsFormatError, match=r"record 0 \(key 'arg:csr'\) has sparse storage type 'csr'"):
        read_legacy(MX1_SPARSE, "mx1_sparse.params")
    # both sparse layouts were walked correctly: the dense third record is intact and the
    # name table parses; a truncated copy fails on structure instead
    with pytest.raises(ParamsFormatError, match="truncated"):
        read_legacy(MX1_SPARSE[:-40])


def test_real_mxnet_v3_file_and_partial_file() -> None:
    out = read_legacy(MX1_V3)
    assert out["s"].shape == () and out["s"] == 3.0 and out["e"].shape == (0, 3)
    assert out["b"].tolist() == [1.0, 0.0]  # 1.9.1's np.array([True, False]) is float32
    with pytest.raises(ParamsFormatError, match="array count 2 impossible"):
        read_legacy(MX1_NONE_PARTIAL)


# ------------------------------------------------------------------ round trips

ALL_FLAGS = sorted(FLAG_TO_DTYPE)


def sample(flag: int, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(flag)
    if flag == 12:
        return float32_to_bfloat16(rng.standard_normal(shape).astype(np.float32))
    dt = FLAG_TO_DTYPE[flag]
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("flag", ALL_FLAGS, ids=lambda f: FLAG_TO_DTYPE[f].name if f != 12 else "bf16")
def test_round_trip_every_dtype(flag: int, version: int) -> None:
    shapes = [(3,), (2, 3, 4), (0,), (2, 0, 5), (1, 1, 1, 1, 1, 2)] + ([()] if version == 3 else [])
    src = {f"arg:p{i}": sample(flag, s) for i, s in enumerate(shapes)}
    if version == 2 and 8 <= flag <= 11:  # MXNet 1.9.1 itself fails with 'Unknown type enum'
        with pytest.warns(UserWarning, match="MXNet 1.x cannot load"):
            raw = write_legacy(src, version=version)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            raw = write_legacy(src, version=version)
    out = read_legacy(raw)
    assert list(out) == list(src)
    for k, v in src.items():
        assert out[k].shape == v.shape and out[k].dtype == v.dtype, k
        assert out[k].tobytes() == v.tobytes(), k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert write_legacy(out, version=version) == raw


def test_v2_rejects_scalars_but_v3_keeps_them() -> None:
    with pytest.raises(ParamsFormatError, match="version=3"):
        write_legacy({"s": np.int64(5)})
    assert read_legacy(write_legacy({"s": np.int64(5)}, version=3))["s"].shape == ()


def test_writer_normalises_inputs() -> None:
    big = np.arange(4, dtype=">f4").reshape(2, 2).T  # big-endian and non-contiguous
    out = read_legacy(write_legacy([big, [1, 2], True], version=3))
    np.testing.assert_array_equal(out[0], big)
    assert out[0].dtype == np.dtype("<f4") and out[1].dtype == np.int64 and out[2].dtype == bool
    with pytest.raises(ParamsFormatError, match="object"):
        write_legacy({"o": np.array([None])})
    with pytest.raises(ParamsFormatError, match="complex"):
        write_legacy({"c": np.zeros(2, np.complex64)})
    with pytest.raises(ParamsFormatError, match="names must be str"):
        write_legacy({1: np.zeros(2)})
    with pytest.raises(ValueError):
        write_legacy({}, version=1)


def test_bool_bytes_normalised_and_unicode_names() -> None:
    raw = lst(1, rec(V2, (3,), 7, b"\x00\x01\x07"), ["arg:ß.µ".encode()])
    out = read_legacy(raw)
    assert out["arg:ß.µ"].tolist() == [False, True, True]


def test_memoryview_input_and_list_output() -> None:
    raw = write_legacy([np.ones(2, np.float16)])
    out = read_legacy(memoryview(bytearray(raw)))
    assert isinstance(out, list) and out[0].dtype == np.float16


def test_dtype_table() -> None:
    assert [dtype_name(f) for f in range(13)] == [
        "float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool",
        "int16", "uint16", "uint32", "uint64", "bfloat16"]
    for f in range(13):
        assert dtype_flag(dtype_from_flag(f)) == f and dtype_flag(dtype_name(f)) == f
    assert dtype_from_flag("6") == np.int64 and dtype_flag(">f8") == 1 and dtype_flag(np.float32) == 0
    assert dtype_from_flag(12) == BFLOAT16
    for bad in (13, -1, "x", True, "1.0"):
        with pytest.raises(ParamsFormatError):
            dtype_from_flag(bad)
    with pytest.raises(ParamsFormatError):
        dtype_flag(np.complex128)
    x = np.array([1.0, -2.5, 3.140625, np.inf], np.float32)
    np.testing.assert_array_equal(bfloat16_to_float32(float32_to_bfloat16(x)), x)
