"""`gluon.data`: datasets, samplers, batchify functions and the DataLoader (MXNet 2.0's API)."""
from . import batchify, vision  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset  # noqa: F401
from .sampler import (BatchSampler, FilterSampler, IntervalSampler, RandomSampler,  # noqa: F401
                      Sampler, SequentialSampler)
