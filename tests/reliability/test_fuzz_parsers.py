"""Property/fuzz tests of the two parsers that read uploaded files: the symbol-JSON reader
(`framework.symbol.load_json`) and the params reader (`framework.io.load_params`).

For any input — random bytes, real files truncated, bit-flipped, spliced, or with header
fields overwritten by extreme values, JSON documents mutated field by field — the parser
either returns or raises one of the framework's own exceptions (MXNetError subclasses), and
does so within bounded time and memory (tracemalloc peak, checked per example, in a separate
single-threaded process under an address-space limit: parse_worker.py).

Default run: FUZZ_EXAMPLES (100) examples per property; `-m slow`: 2000.
"""
from __future__ import annotations

import json
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serverproc import STORE

from .parse_worker import ParseWorker
from .relutil import MX1, record

FAST = int(os.environ.get("FUZZ_EXAMPLES", "100"))
SLOW = 2000
MAX_S = 5.0        # per example (generous: the machine is shared; typical is < 0.05 s)
SYMBOLS = [(MX1 / f"{n}-symbol.json").read_bytes() for n in ("fc_flatten", "mini_resnet_v1",
                                                              "lstm_2layer")]
SYMBOLS.append((STORE / "mlp" / "1" / "mlp-symbol.json").read_bytes())
PARAMS = [(MX1 / "fc_flatten-0000.params").read_bytes(),            # legacy NDArray list
          (MX1 / "batchnorm_variants-0000.params").read_bytes(),
          (STORE / "mlp" / "1" / "mlp-0000.params").read_bytes()]   # npz (2.x)
# examples, parsed, max s, max B, non-framework exceptions
STATS = {"symbol": [0, 0, 0.0, 0, 0], "params": [0, 0, 0.0, 0, 0]}
EXTREME = [0, 1, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, 0x112, 0xF993FAC9, 0xF993FACA]
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                      st.floats(allow_nan=True), st.text(max_size=20))
JSON = st.recursive(JSON_LEAF, lambda c: st.one_of(
    st.lists(c, max_size=5), st.dictionaries(st.text(max_size=10), c, max_size=5)),
    max_leaves=30)


_worker: ParseWorker | None = None


@pytest.fixture(scope="module", autouse=True)
def worker():
    global _worker
    _worker = ParseWorker()
    yield _worker
    _worker.close()
    _worker = None
    _record_figures()


def _record_figures() -> None:
    """The reliability figures of this module's run (after its tests, whatever their order)."""
    for kind, (n, ok, dt, peak, crashes) in STATS.items():
        if n:
            record("fuzz", f"{kind} parser (hypothesis)", inputs=n, parsed=ok, refused=n - ok,
                   other_exceptions=crashes, max_seconds=round(dt, 3), max_traced_bytes=peak)


def bounded(kind: str, data: bytes) -> None:
    """Parse in the worker process: framework exceptions only, time and memory bounded."""
    outcome, detail, dt, peak = _worker.parse(kind, data, timeout=3 * MAX_S)
    s = STATS[kind]
    s[0] += 1
    s[1] += outcome == "parsed"
    s[2] = max(s[2], dt)
    s[3] = max(s[3], peak)
    s[4] += outcome == "crash"
    assert outcome != "crash", f"{kind} parser raised a non-framework exception:\n{detail}"
    assert dt < MAX_S, f"{kind} parse took {dt:.2f}s"
    # a parser may hold the input a few times over (copies, arrays), never much more
    assert peak < 16 * len(data) + (32 << 20), f"{kind} parse peaked at {peak} bytes"


# -- mutations ---------------------------------------------------------------------------------
@st.composite
def byte_mutants(draw, seeds: list[bytes]) -> bytes:
    b = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "splice", "u64", "u32", "insert"]))
        pos = draw(st.integers(0, max(0, len(b) - 1)))
        if op == "flip" and b:
            b[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del b[pos:]
        elif op == "splice":
            b[pos:pos + draw(st.integers(0, 64))] = draw(st.binary(max_size=64))
        elif op in ("u64", "u32"):
            fmt = "<Q" if op == "u64" else "<I"
            v = draw(st.sampled_from(EXTREME)) & (2**64 - 1 if op == "u64" else 2**32 - 1)
            b[pos:pos + struct.calcsize(fmt)] = struct.pack(fmt, v)
        else:
            b[pos:pos] = draw(st.binary(max_size=32))
    return bytes(b)


@st.composite
def json_mutants(draw) -> bytes:
    doc = json.loads(draw(st.sampled_from(SYMBOLS)))
    for _ in range(draw(st.integers(1, 3))):
        nodes = doc.get("nodes") if isinstance(doc, dict) else None
        where = draw(st.sampled_from(["node_field", "input", "head", "top", "node_count"]))
        if where == "node_field" and isinstance(nodes, list) and nodes:
            n = draw(st.sampled_from(nodes))
            if isinstance(n, dict):
                key = draw(st.sampled_from(["op", "name", "attrs", "inputs", "param", "x"]))
                n[key] = draw(JSON)
        elif where == "input" and isinstance(nodes, list) and nodes:
            n = draw(st.sampled_from(nodes))
            if isinstance(n, dict):
                n["inputs"] = [[draw(st.integers(-3, len(nodes) + 3)), draw(st.integers(-1, 3)),
                                0] for _ in range(draw(st.integers(0, 3)))]
        elif where == "head" and isinstance(doc, dict):
            doc["heads"] = draw(st.lists(st.lists(st.integers(-2, 10**6), max_size=3),
                                         max_size=3))
        elif where == "top" and isinstance(doc, dict):
            doc[draw(st.sampled_from(["nodes", "heads", "arg_nodes", "attrs", "extra"]))] = \
                draw(JSON)
        elif isinstance(nodes, list):
            doc["nodes"] = nodes * draw(st.integers(0, 3))
    return json.dumps(doc).encode()


SYMBOL_INPUTS = st.one_of(st.binary(max_size=2048), byte_mutants(SYMBOLS), json_mutants(),
                          JSON.map(lambda d: json.dumps(d).encode()))
PARAMS_INPUTS = st.one_of(
    st.binary(max_size=2048), byte_mutants(PARAMS),
    st.tuples(st.sampled_from([b"PK\x03\x04", b"\x93NUMPY", struct.pack("<QQ", 0x112, 0)]),
              st.binary(max_size=512)).map(b"".join))
COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@settings(max_examples=FAST, **COMMON)
@given(SYMBOL_INPUTS)
def test_symbol_json_parser(raw):
    bounded("symbol", raw)


@settings(max_examples=FAST, **COMMON)
@given(PARAMS_INPUTS)
def test_params_parser(raw):
    bounded("params", raw)


@pytest.mark.slow
@settings(max_examples=SLOW, deadline=None, suppress_health_check=list(HealthCheck))
@given(SYMBOL_INPUTS)
def test_symbol_json_parser_long(raw):
    bounded("symbol", raw)


@pytest.mark.slow
@settings(max_examples=SLOW, deadline=None, suppress_health_check=list(HealthCheck))
@given(PARAMS_INPUTS)
def test_params_parser_long(raw):
    bounded("params", raw)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["symbol", "params"])
def test_atheris_coverage_guided(kind):
    """libFuzzer (atheris) for 60 s per parser, seeded with the real exports: no crash, no
    input over 10 s or 2 GiB RSS (fuzz_atheris.py)."""
    pytest.importorskip("atheris", reason="atheris has no wheel here: pip install atheris")
    import re
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("fuzz_atheris.py")),
                          kind, "-max_total_time=60", "-print_final_stats=1"],
                         capture_output=True, text=True, timeout=240)
    tail = out.stderr[-3000:]
    assert out.returncode == 0, tail
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", out.stderr)
    rss = re.search(r"stat::peak_rss_mb:\s*(\d+)", out.stderr)
    record("fuzz", f"{kind} parser, atheris 60 s", executions=int(runs[1]) if runs else "?",
           crashes=0, peak_rss_mb=int(rss[1]) if rss else "?")
