"""`gluon.data.vision`: image transforms and the datasets over their standard local files
(hybridserve never downloads them)."""
from . import transforms  # noqa: F401
from .datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset,  # noqa: F401
                       ImageRecordDataset)
