"""mx.recordio: the RecordIO layout (magic, length word, padding, multi-part records), image
records, and gluon's RecordFileDataset / ImageRecordDataset over a .rec/.idx pair."""
import struct

import numpy as onp

from framework import recordio
from framework.gluon.data import RecordFileDataset
from framework.gluon.data.vision import ImageRecordDataset

MAGIC = struct.pack("<I", 0xCED7230A)


def test_layout_and_roundtrip(tmp_path):
    f = str(tmp_path / "a.rec")
    w = recordio.MXRecordIO(f, "w")
    payloads = [b"abc", b"", b"12345678", b"abcd" + MAGIC + b"xy" + MAGIC]
    for p in payloads:
        w.write(p)
    w.close()
    raw = open(f, "rb").read()
    assert raw[:11] == MAGIC + struct.pack("<I", 3) + b"abc" and raw[11] == 0   # padded to 4
    second = raw[raw.index(MAGIC, 4):]
    assert second[:8] == MAGIC + struct.pack("<I", 0)
    assert struct.pack("<I", (1 << 29) | 4) in raw       # the magic inside splits the record
    r = recordio.MXRecordIO(f, "r")
    assert [r.read() for _ in payloads] + [r.read()] == payloads + [None]


def test_indexed_image_records(tmp_path):
    rec, idx = str(tmp_path / "imgs.rec"), str(tmp_path / "imgs.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    imgs = [onp.full((4, 5, 3), (10 * i, 20, 30), onp.uint8) for i in range(3)]
    for i, img in enumerate(imgs):
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), img, img_fmt=".png"))
    w.close()
    header, back = recordio.unpack_img(open(rec, "rb").read()[8:])   # first record's payload
    assert header.label == 0.0 and (back == imgs[0]).all()
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == [0, 1, 2] and recordio.unpack(r.read_idx(2))[0].id == 2
    packed = recordio.pack(recordio.IRHeader(0, [1.0, 2.0], 7, 0), b"xyz")
    h, s = recordio.unpack(packed)
    assert h.flag == 2 and h.label.tolist() == [1.0, 2.0] and s == b"xyz"
    assert len(RecordFileDataset(rec)) == 3
    ds = ImageRecordDataset(rec)
    img, label = ds[1]
    assert label == 1.0 and img.shape == (4, 5, 3)
    assert img.asnumpy()[0, 0].tolist() == [30, 20, 10]      # stored BGR, decoded RGB
