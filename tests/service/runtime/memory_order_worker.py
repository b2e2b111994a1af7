"""Run as a script by test_memory_figures.py: in this fresh process, load the named models of
the store (argv[1]) in the given order the way the registry does (memory.measured with the
process warm-up) and print {model: bytes} as JSON."""
from __future__ import annotations

import json
import sys

from service.repository.store import ModelStore
from service.runtime import memory
from service.runtime.registry import load_limits
from service.runtime.runner import Runner
from service.runtime.warmup import warm_runner
from service.settings import Settings


def main(store_dir: str, names: list[str]) -> dict[str, int]:
    store = ModelStore(store_dir, create=False)
    limits = load_limits(Settings(model_store=store_dir, inference_threads=2))
    keep, out = [], {}
    for name in names:
        files, cfg = store.files(name, "1"), store.read_config(name)
        runner, cost = memory.measured(lambda: Runner.load(name, "1", files, cfg, **limits),
                                       warm=lambda: warm_runner(limits))
        keep.append(runner)
        out[name] = cost
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
