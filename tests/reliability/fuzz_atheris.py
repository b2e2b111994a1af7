"""Coverage-guided fuzzing of the two upload parsers with atheris (libFuzzer), where it installs.

    python tests/reliability/fuzz_atheris.py symbol|params [libFuzzer flags, e.g. -runs=20000]

Any exception other than the framework's own (MXNetError and subclasses) is a crash that
libFuzzer reports with the input that caused it; -rss_limit_mb and -timeout bound memory and
time per input. Seeds are the committed real exports (tests/fixtures, model_store).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["framework.symbol", "framework.io"]):
    from framework.base import MXNetError
    from framework.io import load_params
    from framework.symbol.json_io import load_json


def seeds(kind: str) -> list[bytes]:
    pats = ["*-symbol.json"] if kind == "symbol" else ["*.params"]
    files = [p for d in (ROOT / "tests/fixtures/mxnet-1.9.1", ROOT / "tests/fixtures/mxnet-2.0.0b1",
                         ROOT / "model_store") for pat in pats for p in sorted(d.rglob(pat))]
    return [p.read_bytes() for p in files if p.stat().st_size < 256 << 10][:40]


def main() -> None:
    kind = sys.argv[1]
    parse = (lambda b: load_json(b, max_nodes=5000, max_bytes=1 << 20)) if kind == "symbol" \
        else (lambda b: load_params(b, max_bytes=4 << 20))
    from framework.ops.registry import all_ops
    all_ops()

    def one(data: bytes) -> None:
        try:
            parse(data)
        except MXNetError:
            pass

    corpus = Path(tempfile.mkdtemp(prefix=f"fuzz-{kind}-"))
    for i, s in enumerate(seeds(kind)):
        (corpus / f"seed{i}").write_bytes(s)
    atheris.Setup([sys.argv[0], *sys.argv[2:], "-rss_limit_mb=2048", "-timeout=10",
                   "-max_len=65536", str(corpus)], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
