"""Devices. Everything runs on the CPU; the type exists so Gluon code passing devices keeps working."""
from __future__ import annotations

import threading


class Device:
    _local = threading.local()

    def __init__(self, device_type: str = "cpu", device_id: int = 0):
        if isinstance(device_type, Device):
            device_type, device_id = device_type.device_type, device_type.device_id
        self.device_type = device_type
        self.device_id = device_id
        self._old = None

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.device_type, self.device_id) == \
            (other.device_type, other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Device":
        self._old = getattr(Device._local, "value", None)
        Device._local.value = self
        return self

    def __exit__(self, *exc) -> None:
        Device._local.value = self._old

    def empty_cache(self) -> None:
        """No device memory pool to release on the CPU."""


Context = Device


def cpu(device_id: int = 0) -> Device:
    return Device("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Device:
    return Device("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Device:
    return Device("gpu", device_id)


def num_gpus() -> int:
    return 0


def current_device() -> Device:
    d = getattr(Device._local, "value", None)
    return d if d is not None else Device("cpu", 0)


current_context = current_device
