"""MXNet 2.x npz params and single npy arrays: fixtures, MXNet byte layout, no pickle, zip bombs."""
from __future__ import annotations

import base64
import io
import struct
import time
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from framework.io import BFLOAT16, ParamsFormatError, npy_bytes, read_npy, read_npz, write_npz
from framework.io.dtypes import FLAG_TO_DTYPE, float32_to_bfloat16

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet-2.0.0b1"
NPZ_FILES = sorted(FIX.glob("*-0000.params"))


# mx.npx.savez(f, w=nd.array([[0,3],[4,0]]).tostype("csr"), d=nd.array([1.0])) by real MXNet 2.0.0b1
MX2_SPARSE_NPZ = zlib.decompress(base64.b64decode(
    "eNoL8GZmYWDg4GDAAFxAXK6fkliSqJdXUDnZL9Q3IJKRoYyhWj0ltTi5SN1KQd0mzURdR0E9Lb+opCgxLz6/KCUV"
    "JO6WmFOcChQvzkgsSAXyNYx0NHUUahUoAEDHODgwMDQ4BHizc1RbO23rALoOhANwup8H7P7MvJSCkiLcPsi0IMoH"
    "xtTwAQQwQmkmKA3y0XcHoVczgOwZeH3EC/NRZnJqMcVeokKkMKI5EOSVwt+WqycA2RNQvCK7tDYWWSU32CtgtwwG"
    "jzBhiZN/HlcOEPYIJJUB3ZibWILTJzXFxmT4ixxfcSUXF4EcvyPKkakZ6LRmvAmKFYhTKM7dhtTIGw32IGcHmoUX"
    "twAd1QJ2NiM4OmAOR871XBheQZRU6PqQ8xYPip4DaCUEuk7kpMyLonMSI1pORNYKSiLIiYcbRWssE0rKR9eIHHGo"
    "rlVjRk1p6K5FDjtWFJ2PmaHRHODNygYSYAPCYKAXZrGAeADhrRb/"))


def npy(header: str, data: bytes = b"", version: int = 1) -> bytes:
    """A hand-made npy member with an arbitrary header text."""
    h = header.encode("latin1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h)) + h + data


def zip_of(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)
    return buf.getvalue()


def patch_sizes(raw: bytes, file_size: int) -> bytes:
    """Overwrite the uncompressed size in the local and central headers of a 1-member zip."""
    b = bytearray(raw)
    b[22:26] = struct.pack("<I", file_size)
    cd = b.index(b"PK\x01\x02")
    b[cd + 24:cd + 28] = struct.pack("<I", file_size)
    return bytes(b)


def fast_error(fn, match: str) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ParamsFormatError, match=match):
        fn()
    assert time.perf_counter() - t0 < 1.0


# ------------------------------------------------------------------ fixtures

@pytest.mark.parametrize("path", NPZ_FILES, ids=lambda p: p.name)
def test_fixture_matches_numpy_and_mxnet_bytes(path: Path) -> None:
    raw = path.read_bytes()
    d = read_npz(raw, str(path))
    ref = np.load(path, allow_pickle=False)
    assert list(d) == list(ref.files)  # member order = MXNet's write order
    zf = zipfile.ZipFile(path)
    for key, arr in d.items():
        assert key.startswith(("arg:", "aux:")), key
        assert arr.dtype == np.float32 and arr.flags.c_contiguous and arr.flags.writeable
        np.testing.assert_array_equal(arr, ref[key])
        assert npy_bytes(arr) == zf.read(key + ".npy")  # our npy members are MXNet's, byte for byte


def test_fixture_contents() -> None:
    assert len(NPZ_FILES) == 12
    empty = sorted(p.name for p in NPZ_FILES if not read_npz(p.read_bytes()))
    assert empty == ["np_arith-0000.params", "np_reduce_softmax-0000.params", "np_shape-0000.params"]
    d = read_npz((FIX / "nn_layers_2-0000.params").read_bytes())
    assert list(d)[:6] == ["arg:c1.weight", "arg:c1.bias", "arg:bn.gamma", "arg:bn.beta",
                           "aux:bn.running_mean", "aux:bn.running_var"]
    for key, arr in d.items():
        if key.endswith("running_var") or key.endswith("gamma"):
            assert ((arr >= 0.5) & (arr <= 1.5)).all(), key
    lstm = read_npz((FIX / "embedding_lstm-0000.params").read_bytes())
    assert lstm["arg:lstm.rnn_param"].shape == (1056,)  # fused RNN: one flat parameter


# ------------------------------------------------------------------ writer

def test_round_trip_every_dtype_and_order() -> None:
    rng = np.random.default_rng(0)
    src = {}
    for flag, dt in FLAG_TO_DTYPE.items():
        for i, shape in enumerate([(), (0,), (3, 0, 2), (2, 3), (5,)]):
            if flag == 12:
                a = float32_to_bfloat16(rng.standard_normal(shape).astype(np.float32))
            else:
                a = (rng.standard_normal(shape) * 50).astype(dt)
            src[f"aux:b{flag}.s{i}:x"] = a
    raw = write_npz(src)
    out = read_npz(raw)
    assert list(out) == list(src)
    for k, v in src.items():
        assert out[k].dtype == v.dtype and out[k].shape == v.shape and out[k].tobytes() == v.tobytes()
    ref = np.load(io.BytesIO(raw), allow_pickle=False)  # plain numpy reads our files too
    for k, v in src.items():
        assert ref[k].shape == v.shape and ref[k].tobytes() == v.tobytes()
    zf = zipfile.ZipFile(io.BytesIO(raw))
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
    for info in zf.infolist():
        head = zf.read(info)[:10]
        hlen = struct.unpack("<H", head[8:10])[0]
        assert head[6:8] == b"\x01\x00" and hlen <= 118 and (10 + hlen) % 64 == 0
    assert write_npz(out) == raw  # deterministic


def test_writer_warns_when_mxnet_cannot_read_header() -> None:
    with pytest.warns(UserWarning, match="cannot be read by MXNet"):
        raw = write_npz({"deep": np.zeros((1,) * 32, np.float32)})
    assert read_npz(raw)["deep"].shape == (1,) * 32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_npz({"ok": np.zeros((64, 3, 7, 7, 11), np.float32)})


def test_writer_rejects_bad_input() -> None:
    with pytest.raises(ParamsFormatError, match="object"):
        write_npz({"o": np.array([{}], dtype=object)})
    with pytest.raises(ParamsFormatError, match="str"):
        write_npz({3: np.zeros(1)})
    with pytest.raises(TypeError):
        write_npz([np.zeros(1)])


# ------------------------------------------------------------------ reader features

def test_numpy_written_archives() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for saver in (np.savez, np.savez_compressed):
        buf = io.BytesIO()
        saver(buf, **{"arg:0.weight": a, "f": np.asfortranarray(a), "be": a.astype(">f8"),
                      "flag": np.array([True, False])})
        out = read_npz(buf.getvalue())
        np.testing.assert_array_equal(out["arg:0.weight"], a)
        assert out["f"].flags.c_contiguous and np.array_equal(out["f"], a)
        assert out["be"].dtype == np.dtype("=f8") and np.array_equal(out["be"], a)
        assert out["flag"].tolist() == [True, False]


def test_bfloat16_descr_variants() -> None:
    bits = np.array([0x3F80, 0xC000], "<u2").tobytes()
    hdr = "{'descr': '<b2', 'fortran_order': False, 'shape': (2,), }"
    out = read_npz(zip_of({"b.npy": npy(hdr, bits)}))["b"]
    assert out.dtype == BFLOAT16 and out["bfloat16"].tolist() == [0x3F80, 0xC000]


def test_npy_versions_and_single_file() -> None:
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    buf = io.BytesIO()
    np.save(buf, a)
    np.testing.assert_array_equal(read_npy(buf.getvalue()), a)
    hdr = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }\n"
    for version in (2, 3):
        np.testing.assert_array_equal(read_npy(npy(hdr, a.tobytes(), version)), a)
    assert read_npy(npy_bytes(np.float64(2.5))) == 2.5


def test_folders_sparse_and_other_members() -> None:
    z = np.zeros(1, np.float32)
    csr = {f"arg:w/{n}.npy": npy_bytes(z) for n in ("data", "indices", "indptr", "shape", "format")}
    with pytest.raises(ParamsFormatError, match=r"key 'arg:w'.*'csr'.*not supported"):
        read_npz(zip_of(csr))
    rsp = {f"w/{n}.npy": npy_bytes(z) for n in ("data", "indices", "shape", "format")}
    with pytest.raises(ParamsFormatError, match=r"'row_sparse'"):
        read_npz(zip_of(rsp))
    out = read_npz(zip_of({"blk/weight.npy": npy_bytes(z), "README.txt": b"hi", "dir/": b""}))
    assert list(out) == ["blk/weight"]


def test_real_mxnet_sparse_npz() -> None:
    names = zipfile.ZipFile(io.BytesIO(MX2_SPARSE_NPZ)).namelist()
    assert names == ["w/data.npy", "w/indptr.npy", "w/indices.npy", "w/shape.npy", "w/format.npy", "d.npy"]
    with pytest.raises(ParamsFormatError, match=r"mx2\.npz: key 'w' is stored as a sparse array \(stype 'csr'"):
        read_npz(MX2_SPARSE_NPZ, "mx2.npz")


def test_duplicate_members_rejected() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        raw = zip_of({"a.npy": npy_bytes(np.zeros(1))})
        buf = io.BytesIO(raw)
        with zipfile.ZipFile(buf, "a") as zf:
            zf.writestr("a.npy", npy_bytes(np.ones(1)))
    with pytest.raises(ParamsFormatError, match="duplicate key 'a'"):
        read_npz(buf.getvalue())


# ------------------------------------------------------------------ hostile members

def pickled_member() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}, None], dtype=object), allow_pickle=True)
    return buf.getvalue()


BAD_HEADERS = [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", "needs"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "non-negative"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': [1], }", "tuple"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)*40, }", "literal"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': " + repr((1,) * 33) + ", }", "ndim 33"),
    ("{'descr': '<f4', 'fortran_order': 'no', 'shape': (1,), }", "bool"),
    ("{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", "no MXNet"),
    ("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "no MXNet"),
    ("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "structured"),
    ("{'descr': 'zz', 'fortran_order': False, 'shape': (1,), }", "invalid dtype"),
    ("{'descr': '<f4', 'shape': (1,), }", "exactly"),
    ("__import__('os').system('true')", "literal"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "exactly"),
    ("(" * 500 + ")" * 500, "literal"),
]


@pytest.mark.parametrize("header,match", BAD_HEADERS)
def test_bad_npy_headers(header: str, match: str) -> None:
    raw = zip_of({"k.npy": npy(header, b"\0" * 4)})
    fast_error(lambda: read_npz(raw, "bad.params"), rf"bad.params: member 'k.npy': .*{match}")


def test_pickled_member_rejected() -> None:
    raw = zip_of({"arg:w.npy": pickled_member()}, zipfile.ZIP_DEFLATED)
    fast_error(lambda: read_npz(raw), r"object dtype .*pickled")
    fast_error(lambda: read_npy(pickled_member()), "object dtype")


def test_zip_bombs() -> None:
    n = 32 << 20
    hdr = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    honest = zip_of({"z.npy": npy(hdr, bytes(n))}, zipfile.ZIP_DEFLATED)
    assert len(honest) < n // 500
    # declared size above the caller's limit: refused before inflating anything
    fast_error(lambda: read_npz(honest, max_bytes=1 << 20), "exceeds the limit")
    # sizes patched to look small: the header's shape no longer fits the declared size
    fast_error(lambda: read_npz(patch_sizes(honest, 4096)), "needs .* data bytes")
    # sizes patched to ~4 GiB: impossible for deflate given the compressed size
    fast_error(lambda: read_npz(patch_sizes(honest, 0xFFFFFFF0)), "compression ratio")
    # consistent small header, but the stream inflates to far more than declared
    small = npy("{'descr': '|u1', 'fortran_order': False, 'shape': (64,), }", bytes(64))
    stream = comp.compress(small + bytes(n)) + comp.flush()
    raw = zip_of({"s.npy": small}, zipfile.ZIP_DEFLATED)
    b = bytearray(raw)  # splice the big stream in and fix the sizes/offsets via a rebuild
    info = zipfile.ZipFile(io.BytesIO(raw)).infolist()[0]
    start = 30 + len(info.filename)
    b[start:start + info.compress_size] = stream
    b[18:22] = struct.pack("<I", len(stream))
    cd = b.index(b"PK\x01\x02", start + len(stream))
    b[cd + 20:cd + 24] = struct.pack("<I", len(stream))
    eocd = b.index(b"PK\x05\x06", cd)
    b[eocd + 16:eocd + 20] = struct.pack("<I", cd)
    fast_error(lambda: read_npz(bytes(b)), "inflates beyond the declared size")


def test_truncated_and_garbage_archives() -> None:
    raw = (FIX / "mlp3_sequential-0000.params").read_bytes()
    for cut in range(0, len(raw), 7):
        fast_error(lambda: read_npz(raw[:cut]), ".")
    fast_error(lambda: read_npz(b"PK\x03\x04" + b"\xff" * 100), "not a readable ZIP")
    stored = zip_of({"a.npy": npy_bytes(np.arange(4.0))})
    b = bytearray(stored)
    b[stored.index(b"PK\x01\x02")] ^= 0xFF  # central directory signature
    fast_error(lambda: read_npz(bytes(b)), "not a readable ZIP")
    b = bytearray(stored)
    b[35 + 128 + 3] ^= 0xFF  # local header, npy header, then data: CRC mismatch
    fast_error(lambda: read_npz(bytes(b)), "CRC")
