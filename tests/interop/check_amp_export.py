"""hybridserve's bfloat16 exports (`contrib.amp.convert_hybrid_block`, MXNet 1.x format) load in
real MXNet 1.9.1: the graph MXNet reads back equals the one written (amp_cast nodes included) and
the one MXNet's own `amp.convert_symbol` makes of the same float32 export (for the default export,
with MXNet's `remove_amp_cast`), the
parameters MXNet loads have the dtypes written (bfloat16 = flag 12 where the graph stores them
so), `SymbolBlock.imports` takes them, and where this CPU lets MXNet run bf16 its output matches
hybridserve's within the bf16 bound max|Δ| ≤ 1e-2·max(1, max|ref|). On a CPU without
avx512_bf16, MXNet's oneDNN refuses bf16 convolutions; that is reported, not failed.

    PYTHONPATH=. .venv/bin/python tests/interop/check_amp_export.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from tests.interop.interop_util import venv_python  # noqa: E402


def _nodes(graph: dict, dunder: bool = True) -> list:
    ns = graph["nodes"]
    return [(n["op"], n["name"], sorted((k, v) for k, v in (n.get("attrs") or {}).items()
                                        if dunder or not k.startswith("__")),
             [(ns[i[0]]["name"], i[1]) for i in n["inputs"]]) for n in ns]


def _nets():
    import framework as fw
    from framework.gluon import nn

    class Res(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm()

        def forward(self, x):
            return fw.npx.relu(self.bn(self.conv(x)) + x)

    conv = nn.HybridSequential()
    conv.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(),
             nn.Flatten(), nn.Dense(10))
    res = nn.HybridSequential()
    res.add(nn.Conv2D(8, 3, padding=1), nn.Activation("relu"), Res(), nn.GlobalAvgPool2D(),
            nn.Dense(10))
    return {"convnet": conv, "resnet": res}


def main() -> int:
    import framework as fw
    from framework import gluon
    from framework.contrib import amp
    warnings.simplefilter("ignore")
    out = tempfile.mkdtemp(prefix="amp-export-")
    rng = np.random.default_rng(0)
    jobs, ours, refs = [], {}, {}
    for name, net in _nets().items():
        net.initialize(fw.init.Xavier())
        x = rng.normal(size=(2, 3, 8, 8)).astype(np.float32)
        net.hybridize()
        net(fw.np.array(x))
        fp32_sym, _ = net.export(os.path.join(out, name + "_fp32"), format="1.x")
        for cop in (False, True):
            case = f"{name}_castparams" if cop else name
            block = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=cop)
            block.hybridize()
            refs[case] = block(fw.np.array(x)).asnumpy()
            sym, params = block.export(os.path.join(out, case), format="1.x",
                                       remove_amp_cast=False)
            np.savez(os.path.join(out, case + "-io.npz"), data=x)
            with open(sym) as f:
                ours[case] = json.load(f)
            jobs.append({"name": case, "symbol": sym, "params": params,
                         "inputs": os.path.join(out, case + "-io.npz"), "fp32_symbol": fp32_sym,
                         "cast_optional_params": cop})
            if not cop:     # the default export (casts dropped) is float32: MXNet runs it here
                plain = case + "_plain"
                sym, params = block.export(os.path.join(out, plain), format="1.x")
                again = gluon.SymbolBlock.imports(sym, ["data"], params)
                refs[plain] = again(fw.np.array(x)).asnumpy()
                with open(sym) as f:
                    ours[plain] = json.load(f)
                jobs.append({"name": plain, "symbol": sym, "params": params,
                             "inputs": os.path.join(out, case + "-io.npz"), "fp32_symbol": fp32_sym,
                             "cast_optional_params": False, "must_run": True})
    with open(os.path.join(out, "jobs.json"), "w") as f:
        json.dump({"jobs": jobs}, f)
    res = subprocess.run([venv_python("1.9.1"), os.path.join(HERE, "mx_amp_load.py"),
                          os.path.join(out, "jobs.json")], capture_output=True, text=True,
                         timeout=600)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode or not lines:
        print(res.stderr[-3000:])
        return 1
    bad = 0
    for r, job in zip(json.loads(lines[-1])["results"], jobs):
        case = r["name"]
        if "load_error" in r:
            print(f"FAIL {case}: MXNet could not load it: {r['load_error']}")
            bad += 1
            continue
        same = _nodes(r["graph"]) == _nodes(ours[case])
        casts = sum(n["op"].startswith("amp_") for n in ours[case]["nodes"])
        want = {f"arg:{n['name']}" for n in ours[case]["nodes"]
                if n["op"] == "null" and (n.get("attrs") or {}).get("__dtype__") == "12"}
        got = {k for k, v in r["dtypes"].items() if v == "bfloat16"}
        mx_graph = r["mx_converted"] if not case.endswith("_plain") else r["mx_plain"]
        as_mx = _nodes(mx_graph, False) == _nodes(ours[case], False)
        ok = same and as_mx and want == got
        line = (f"{case}: graph {'equal' if same else 'DIFFERS'} ({casts} amp nodes), "
                f"{'same as' if as_mx else 'DIFFERS from'} MXNet's convert_symbol, "
                f"bf16 params {sorted(got)}{'' if want == got else f' (expected {sorted(want)})'}")
        if r["ran"]:
            mx_out = np.load(job["params"] + "-mx.npz")["output"]
            err = float(np.abs(mx_out - refs[case]).max())
            bound = 1e-2 * max(1.0, float(np.abs(mx_out).max()))
            ok = ok and err <= bound
            line += f", MXNet ran it: max|Δ| {err:.2e} (bound {bound:.2e})"
        else:
            ok = ok and not job.get("must_run")
            line += f", MXNet cannot run bf16 here: {r['error']}"
        print(("ok   " if ok else "FAIL ") + line)
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
