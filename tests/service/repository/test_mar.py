"""MMS `.mar` archives (repository/mar.py): real model-archiver 1.0.3 archives become model
versions + configs; hostile zips are refused naming the problem, with nothing written."""
from __future__ import annotations

import io
import json
import stat
import zipfile

import numpy as np
import pytest

from fixture_util import FIXTURES
from service.errors import BadRequest
from service.repository.mar import MarLimits, unpack
from service.repository.store import find_files
from service.runtime.images import ImagePipeline
from service.runtime.runner import Runner

MAR = FIXTURES / "mar"
REF = np.load(MAR / "reference.npz")


def test_mlp_archive_serves_mms_outputs(tmp_path):
    got = unpack(MAR / "mms_mlp.mar", tmp_path, "mms_mlp.mar")
    assert (got.name, got.version, got.notes) == ("mms_mlp", None, [])   # MMS's own tensor handler
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mms_mlp-0000.params", "mms_mlp-symbol.json"]
    spec = got.config.inputs[0]
    assert (spec.name, spec.datatype, spec.shape) == ("data", "FP32", [-1, 16])
    assert got.config.outputs[0].name == "prob"
    r = Runner.load("mlp", "1", find_files(tmp_path), got.config)
    np.testing.assert_allclose(r.run([REF["mlp_input"]])[0], REF["mlp_output"],
                               rtol=1e-4, atol=1e-5)


def test_vision_archive_maps_handler_and_synset(tmp_path):
    got = unpack(MAR / "vision.mar", tmp_path, "vision.mar")
    pre = got.config.inputs[0].preprocess
    assert (pre.color, pre.resize, pre.resample, pre.scale, pre.layout, pre.mean) == (
        "RGB", "exact", "opencv_cubic", 1.0, "NCHW", [])
    out = got.config.outputs[0]
    assert (out.name, out.label_filename) == ("softmax", "labels.txt")
    labels = (tmp_path / "labels.txt").read_text().splitlines()
    assert labels == [f"n0000{i} class {i}" for i in range(5)]
    assert not any(p.suffix == ".py" for p in tmp_path.iterdir())


def test_custom_handler_is_reported_not_run(tmp_path):
    # the fixture's handler raises if imported: unpacking must not touch it
    got = unpack(MAR / "custom.mar", tmp_path, "custom.mar")
    assert got.handler == "my_service:handle"
    assert len(got.notes) == 1 and "my_service:handle" in got.notes[0]
    assert "ignored" in got.config.parameters["mms_handler_ignored"]
    assert "signature.json" in got.config.parameters["mms_inferred"]
    assert not (tmp_path / "my_service.py").exists()


def _zip(entries: list[tuple], manifest: bool = True) -> io.BytesIO:
    """A hand-made archive: (name, bytes[, ZipInfo tweak]) entries + a valid model by default."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if manifest:
            zf.writestr("MAR-INF/MANIFEST.json", json.dumps(
                {"model": {"modelName": "m", "handler": "x:handle"}}))
        for name, data, *tweak in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if tweak:
                tweak[0](info)
            zf.writestr(info, data)
    buf.seek(0)
    return buf


def _model_entries() -> list[tuple]:
    with zipfile.ZipFile(MAR / "mms_mlp.mar") as zf:
        return [(n, zf.read(n)) for n in ("mms_mlp-symbol.json", "mms_mlp-0000.params")]


def _symlink(info: zipfile.ZipInfo) -> None:
    info.external_attr = (stat.S_IFLNK | 0o777) << 16


@pytest.mark.parametrize("entries, limits, needle", [
    ([("/etc/evil", b"x")], MarLimits(), "'/etc/evil' would be written outside"),
    ([("a/../../evil", b"x")], MarLimits(), "would be written outside"),
    ([("..\\evil", b"x")], MarLimits(), "would be written outside"),
    ([("C:/evil", b"x")], MarLimits(), "would be written outside"),
    ([("link", b"/etc/passwd", _symlink)], MarLimits(), "'link' is a symbolic link"),
    ([("synset.txt", b"a"), ("synset.txt", b"b")], MarLimits(), "'synset.txt' appears twice"),
    ([("big.bin", b"\0" * (4 << 20))], MarLimits(), "a zip bomb"),
    ([("big.bin", b"\1" * 5000)], MarLimits(max_member_bytes=4096), "over the limit of 4096"),
    ([("a", b"\2" * 3000), ("b", b"\3" * 3000)], MarLimits(max_total_bytes=5000),
     "inflate to over 5000"),
    ([], MarLimits(max_members=2), "over the limit of 2"),
])
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_hostile_archives_refused(tmp_path, entries, limits, needle):
    src = _zip(_model_entries() + entries)
    with pytest.raises(BadRequest) as e:
        unpack(src, tmp_path, "hostile.mar", limits)
    assert needle in e.value.message and "hostile.mar" in e.value.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("drop, needle", [
    ("mms_mlp-symbol.json", "a <prefix>-symbol.json is missing"),
    ("mms_mlp-0000.params", "'mms_mlp-NNNN.params' is missing"),
])
def test_missing_model_files_refused(tmp_path, drop, needle):
    src = _zip([e for e in _model_entries() if e[0] != drop])
    with pytest.raises(BadRequest, match=needle):
        unpack(src, tmp_path, "part.mar")
    assert list(tmp_path.iterdir()) == []


def test_not_an_archive_and_no_manifest(tmp_path):
    with pytest.raises(BadRequest, match="not a zip file"):
        unpack(io.BytesIO(b"{}"), tmp_path, "x.mar")
    with pytest.raises(BadRequest, match="no MAR-INF/MANIFEST.json"):
        unpack(_zip(_model_entries(), manifest=False), tmp_path, "x.mar")


def test_lying_header_refused(tmp_path):
    """synset.txt's directory entry declares 6 bytes; its data inflates to 6000: reading
    stops at the declared size and the member is refused as corrupt, nothing left behind."""
    src = bytearray(_zip(_model_entries() + [("synset.txt", b"label\n" * 1000)]).getvalue())
    entry = src.find(b"synset.txt", src.find(b"PK\x01\x02")) - 46   # its central-directory entry
    assert src[entry:entry + 4] == b"PK\x01\x02"
    src[entry + 24:entry + 28] = (6).to_bytes(4, "little")          # uncompressed size
    with pytest.raises(BadRequest, match="'synset.txt' is corrupt"):
        unpack(io.BytesIO(bytes(src)), tmp_path, "liar.mar")


def test_vision_preprocess_gives_mms_tensor(tmp_path):
    """The image → tensor step equals MMS's own (mms.utils.mxnet.image read/resize/transform)."""
    got = unpack(MAR / "vision.mar", tmp_path, "vision.mar")
    r = Runner.load("vision", "1", find_files(tmp_path), got.config)
    pipe = ImagePipeline(r.inputs[0], got.config.inputs[0].preprocess, "vision")
    blob = np.array([(MAR / "image.png").read_bytes()], dtype=object)
    x = pipe(blob, 1 << 20)
    np.testing.assert_array_equal(x, REF["vision_tensor"])
    np.testing.assert_allclose(r.run([x])[0], REF["vision_output"], rtol=1e-4, atol=1e-5)
