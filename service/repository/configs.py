"""How any store turns its `config.json` and manifest into the config a model is served with
(shared by the directory and object stores: each provides `config_bytes` and `manifest`)."""
from __future__ import annotations

from .config import ModelConfig, parse_config
from .manifest import Manifest


class ConfigReading:
    def config_bytes(self, name: str) -> bytes | None:
        raise NotImplementedError

    def manifest(self) -> Manifest | None:
        raise NotImplementedError

    def read_config(self, name: str) -> ModelConfig | None:
        raw = self.config_bytes(name)
        return None if raw is None else parse_config(raw, f"config of model '{name}'")

    def override(self, name: str) -> str | None:
        """The config a `load` gave this model for that load (manifest), if one is active."""
        man = self.manifest()
        entry = man.models.get(name) if man is not None else None
        return entry.override if entry is not None else None

    def effective_config(self, name: str) -> ModelConfig | None:
        """What the model is served with: an active load override, else config.json."""
        raw = self.override(name)
        if raw is None:
            return self.read_config(name)
        return parse_config(raw, f"config override of model '{name}'")
