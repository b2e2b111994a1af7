"""`gluon.data.vision` datasets over their standard local files (MXNet 2's classes and layouts).

MNIST / FashionMNIST read the idx files (gzip-compressed as published, or already unpacked),
CIFAR10 / CIFAR100 the binary batches, ImageFolderDataset a folder per class,
ImageRecordDataset a RecordIO `.rec`/`.idx` pair of image records (`mx.recordio`). hybridserve never
downloads: a missing file is a FileNotFoundError naming it and where it was looked for.
"""
from __future__ import annotations

import gzip
import os
import struct
import warnings

import numpy as _onp

from .... import image, recordio
from ....ndarray import ndarray
from ..dataset import Dataset, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageFolderDataset",
           "ImageRecordDataset"]


def _find(root: str, name: str, dataset: str) -> str:
    for cand in (name, name[:-3] if name.endswith(".gz") else name + ".gz"):
        path = os.path.join(root, cand)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{dataset}: {name} not found in {root} (hybridserve does not "
                            "download datasets; place the published files there)")


def _read(path: str) -> bytes:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


class _LocalDataset(Dataset):
    """Data and labels held in memory; `transform(data, label)` is refused as in MXNet 2."""

    def __init__(self, root: str, transform):
        if transform is not None:
            raise DeprecationWarning(
                "Directly apply transform to dataset is deprecated. Please use "
                "dataset.transform() or dataset.transform_first() instead...")
        self._root = os.path.expanduser(root)
        self._data, self._label = self._get_data()

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


class MNIST(_LocalDataset):
    """Handwritten digits: uint8 images (N, 28, 28, 1), int32 labels."""

    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "mnist"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        data_name, label_name = self._files[self._train]
        name = type(self).__name__
        labels = _read(_find(self._root, label_name, name))
        magic, n = struct.unpack(">II", labels[:8])
        if magic != 2049 or len(labels) != 8 + n:
            raise ValueError(f"{name}: {label_name} is not an idx1 label file of {n} items")
        images = _read(_find(self._root, data_name, name))
        magic, m, rows, cols = struct.unpack(">IIII", images[:16])
        if magic != 2051 or m != n or len(images) != 16 + n * rows * cols:
            raise ValueError(f"{name}: {data_name} is not an idx3 image file matching the labels")
        label = _onp.frombuffer(labels, _onp.uint8, offset=8).astype(_onp.int32)
        data = _onp.frombuffer(images, _onp.uint8, offset=16).reshape(n, rows, cols, 1)
        return ndarray(data.copy()), ndarray(label)


class FashionMNIST(MNIST):
    """Zalando's article images in MNIST's format."""

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(_LocalDataset):
    """Tiny images: uint8 (N, 32, 32, 3), int32 labels, from the binary batches."""

    _train_files = [f"data_batch_{i}.bin" for i in range(1, 6)]
    _test_files = ["test_batch.bin"]
    _label_bytes = 1

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar10"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self) -> int:
        return 0

    def _get_data(self):
        datas, labels = [], []
        for f in self._train_files if self._train else self._test_files:
            raw = _onp.frombuffer(_read(_find(self._root, f, type(self).__name__)), _onp.uint8)
            rec = 3072 + self._label_bytes
            if raw.size % rec:
                raise ValueError(f"{type(self).__name__}: {f} is not a CIFAR binary batch")
            raw = raw.reshape(-1, rec)
            datas.append(raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(raw[:, self._label_column()].astype(_onp.int32))
        return (ndarray(_onp.ascontiguousarray(_onp.concatenate(datas))),
                ndarray(_onp.concatenate(labels)))


class CIFAR100(CIFAR10):
    """CIFAR-100: `fine_label` picks the 100 fine classes over the 20 coarse ones."""

    _train_files = ["train.bin"]
    _test_files = ["test.bin"]
    _label_bytes = 2

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return int(self._fine_label)


class ImageFolderDataset(Dataset):
    """Images in `root/<class name>/<file>`: labels number the sorted class folders."""

    _exts = (".jpg", ".jpeg", ".png")

    def __init__(self, root: str, flag: int = 1, transform=None):
        if transform is not None:
            raise DeprecationWarning(
                "Directly apply transform to dataset is deprecated. Please use "
                "dataset.transform() or dataset.transform_first() instead...")
        self._root = os.path.expanduser(root)
        self._flag = flag
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for f in sorted(os.listdir(path)):
                ext = os.path.splitext(f)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {os.path.join(path, f)} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}", stacklevel=2)
                    continue
                self.items.append((os.path.join(path, f), label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        return image.imread(path, self._flag), label

    def __len__(self) -> int:
        return len(self.items)


class ImageRecordDataset(RecordFileDataset):
    """Image records of a RecordIO file: (decoded image, header label)."""

    def __init__(self, filename: str, flag: int = 1, transform=None):
        super().__init__(filename)
        if transform is not None:
            raise DeprecationWarning(
                "Directly apply transform to dataset is deprecated. Please use "
                "dataset.transform() or dataset.transform_first() instead...")
        self._flag = flag

    def __getitem__(self, idx):
        header, img = recordio.unpack(super().__getitem__(idx))
        return image.imdecode(img, self._flag), header.label
