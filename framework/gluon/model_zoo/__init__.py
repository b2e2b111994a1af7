"""Pre-defined models (`gluon.model_zoo`); weights come only from local files, never downloaded."""
from . import vision  # noqa: F401
from .model_store import get_model_file  # noqa: F401
