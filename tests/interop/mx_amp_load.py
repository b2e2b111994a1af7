"""MXNet 1.9.1 side of check_amp_export.py: load hybridserve's bf16 exports and report.

    <venv>/bin/python tests/interop/mx_amp_load.py JOBS.json

For each job {"name", "symbol", "params", "inputs", "fp32_symbol", "cast_optional_params"}:
MXNet's own `amp.convert_symbol` of the float32 graph, `mx.sym.load` (the graph as MXNet re-serialises
it), `mx.nd.load` (each parameter's dtype), `gluon.SymbolBlock.imports`, then a forward on the
inputs (a CPU without avx512_bf16 makes oneDNN refuse bf16 convolutions: the error is reported).
Prints one summary JSON line; outputs go to "<name>-mx.npz" beside the params.
"""
import json
import sys
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.contrib import amp  # noqa: E402


def one(job):
    res = {"name": job["name"]}
    sym = mx.sym.load(job["symbol"])
    res["graph"] = json.loads(sym.tojson(remove_amp_cast=False))
    if job.get("fp32_symbol"):          # MXNet's own conversion of the same float32 graph
        conv = amp.convert_symbol(mx.sym.load(job["fp32_symbol"]), target_dtype="bfloat16",
                                  data_names=["data"],
                                  cast_optional_params=job["cast_optional_params"])
        res["mx_converted"] = json.loads(conv.tojson(remove_amp_cast=False))
        res["mx_plain"] = json.loads(conv.tojson())
    params = mx.nd.load(job["params"])
    res["dtypes"] = {k: ("bfloat16" if v.dtype == amp.amp.bfloat16 else np.dtype(v.dtype).name)
                     for k, v in params.items()}
    net = mx.gluon.SymbolBlock.imports(job["symbol"], ["data"], job["params"])
    res["imported"] = sorted(net.collect_params().keys())
    data = mx.nd.array(np.load(job["inputs"])["data"])
    try:
        out = net(data).asnumpy()
        np.savez(job["params"] + "-mx.npz", output=out)
        res["ran"] = True
    except mx.base.MXNetError as e:
        res["ran"], res["error"] = False, str(e).splitlines()[0][:200]
    return res


def main():
    jobs = json.load(open(sys.argv[1]))["jobs"]
    out = []
    for job in jobs:
        try:
            out.append(one(job))
        except Exception as e:  # noqa: BLE001 - reported to the caller
            out.append({"name": job["name"], "load_error": repr(e)[:500]})
    print(json.dumps({"results": out}))


if __name__ == "__main__":
    main()
