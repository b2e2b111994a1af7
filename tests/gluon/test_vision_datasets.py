"""gluon.data.vision datasets over small files written here in the published formats."""
import gzip
import struct

import numpy as onp
import pytest
from PIL import Image

from framework.gluon.data import DataLoader
from framework.gluon.data.vision import (CIFAR10, CIFAR100, MNIST, FashionMNIST,
                                         ImageFolderDataset)

R = onp.random.RandomState(0)


def _write_idx(root, prefix, images, labels, gz=True):
    n, h, w = images.shape
    lab = struct.pack(">II", 2049, n) + labels.astype(onp.uint8).tobytes()
    img = struct.pack(">IIII", 2051, n, h, w) + images.astype(onp.uint8).tobytes()
    for name, blob in ((f"{prefix}-labels-idx1-ubyte", lab), (f"{prefix}-images-idx3-ubyte", img)):
        if gz:
            with gzip.open(root / (name + ".gz"), "wb") as f:
                f.write(blob)
        else:
            (root / name).write_bytes(blob)


@pytest.mark.parametrize("cls,gz", [(MNIST, True), (FashionMNIST, False)])
def test_mnist_idx(tmp_path, cls, gz):
    imgs, labels = R.randint(0, 256, (5, 28, 28)), R.randint(0, 10, 5)
    _write_idx(tmp_path, "train", imgs, labels, gz)
    _write_idx(tmp_path, "t10k", imgs[:2], labels[:2], gz)
    ds = cls(root=str(tmp_path))
    assert len(ds) == 5 and len(cls(root=str(tmp_path), train=False)) == 2
    x, y = ds[3]
    assert x.shape == (28, 28, 1) and x.dtype == onp.uint8 and y.dtype == onp.int32
    assert (x.asnumpy()[:, :, 0] == imgs[3]).all() and int(y) == labels[3]
    batch = next(iter(DataLoader(ds, batch_size=4)))
    assert batch[0].shape == (4, 28, 28, 1)


def test_missing_files_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-labels-idx1-ubyte"):
        MNIST(root=str(tmp_path))


def _cifar_batch(n, label_bytes):
    recs = R.randint(0, 256, (n, label_bytes + 3072)).astype(onp.uint8)
    recs[:, :label_bytes] %= 10
    return recs


def test_cifar10_and_100(tmp_path):
    batches = [_cifar_batch(3, 1) for _ in range(5)]
    for i, b in enumerate(batches, 1):
        (tmp_path / f"data_batch_{i}.bin").write_bytes(b.tobytes())
    (tmp_path / "test_batch.bin").write_bytes(_cifar_batch(2, 1).tobytes())
    ds = CIFAR10(root=str(tmp_path))
    assert len(ds) == 15
    x, y = ds[4]
    rec = batches[1][1]
    assert x.shape == (32, 32, 3) and int(y) == rec[0]
    assert (x.asnumpy() == rec[1:].reshape(3, 32, 32).transpose(1, 2, 0)).all()
    recs = _cifar_batch(4, 2)
    (tmp_path / "train.bin").write_bytes(recs.tobytes())
    (tmp_path / "test.bin").write_bytes(recs.tobytes())
    assert int(CIFAR100(root=str(tmp_path), fine_label=True)[2][1]) == recs[2, 1]
    assert int(CIFAR100(root=str(tmp_path))[2][1]) == recs[2, 0]


def test_image_folder(tmp_path):
    for cls, color in (("cat", (255, 0, 0)), ("dog", (0, 0, 255))):
        (tmp_path / cls).mkdir()
        Image.new("RGB", (4, 3), color).save(tmp_path / cls / "a.png")
    (tmp_path / "dog" / "notes.txt").write_text("x")
    with pytest.warns(UserWarning, match="Ignoring"):
        ds = ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 2
    img, label = ds[1]
    assert label == 1 and img.shape == (3, 4, 3) and img.asnumpy()[0, 0].tolist() == [0, 0, 255]
    gray, _ = ImageFolderDataset(str(tmp_path), flag=0)[0]
    assert gray.shape == (3, 4, 1)
