"""The README's Python example runs and shows its result; the exported model's output is served
as `output` (the traced graph calls it `node_2_output`), and the README's tritonclient snippet
reads it from the metadata."""
from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys

from serverproc import ROOT


def _blocks(after: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text[text.index(after):], re.S)


def test_python_example_then_tritonclient_snippet(tmp_path, http, server):
    example = _blocks("The Python API")[0]
    r = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Warning" not in r.stderr, r.stderr     # nothing for the user to act on (issue 18)
    m = re.search(r"outputs: \(1, 2\) max \|difference\| after the round trip: (\S+)", r.stdout)
    assert m and float(m[1]) < 1e-5, r.stdout
    files = {"symbol": ("mymlp-symbol.json", (tmp_path / "mymlp-symbol.json").read_bytes()),
             "params": ("mymlp-0000.params", (tmp_path / "mymlp-0000.params").read_bytes())}
    assert http.post("/v2/repository/models/mymlp/upload", files=files).status_code == 201
    # the traced head `node_2_output` is served under a name a user can guess
    assert [o["name"] for o in http.get("/v2/models/mymlp").json()["outputs"]] == ["output"]
    try:
        snippet = _blocks("the server calls such outputs")[0]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(snippet.replace("localhost:8000", server.hostport), {})   # noqa: S102 - README
        printed = out.getvalue()
        assert "None" not in printed and re.search(r"\[\[\s*-?\d", printed), printed
    finally:
        assert http.delete("/v2/models/mymlp").status_code == 200
