"""Run exported models in a REAL MXNet (1.9.1 or 2.0.0b1 venv) and save their outputs.

    <venv>/bin/python tests/interop/mx_run.py JOBS.json

JOBS.json: {"jobs": [{"name", "symbol", "params", "inputs": "<npz with data / data0..>",
"out": "<npz to write: output / output0..>", "zoo": "<optional get_model name>"}]}.
Each model is loaded with `gluon.SymbolBlock.imports` and run on the inputs (numpy semantics in
2.x). With "zoo", MXNet's own model-zoo network is also built and its parameter count and output
shape are recorded. A summary JSON (errors included) is printed on the last stdout line.
"""
import json
import sys
import traceback
import warnings

warnings.simplefilter("ignore")
import numpy as onp  # noqa: E402
import mxnet as mx  # noqa: E402

MX2 = mx.__version__.startswith("2")
if MX2:
    mx.npx.set_np()


def _array(a):
    return mx.np.array(a) if MX2 else mx.nd.array(a, dtype=a.dtype)


def _sorted_keys(keys, prefix):
    return sorted((k for k in keys if k.startswith(prefix)), key=lambda k: int(k[len(prefix):] or 0))


def run_job(job):
    io = onp.load(job["inputs"])
    names = _sorted_keys(io.files, "data")
    net = mx.gluon.SymbolBlock.imports(job["symbol"], names, job["params"])
    outs = net(*[_array(io[k]) for k in names])
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    arrays = {("output" if len(outs) == 1 else f"output{i}"): o.asnumpy() for i, o in enumerate(outs)}
    onp.savez(job["out"], **arrays)
    res = {"ok": True, "shapes": [list(a.shape) for a in arrays.values()]}
    if job.get("zoo"):
        from mxnet.gluon.model_zoo import vision
        zoo = vision.get_model(job["zoo"])
        zoo.initialize(mx.init.Zero())
        x = io[names[0]]
        y = zoo(_array(onp.zeros(x.shape, x.dtype)))
        if MX2:
            params = zoo.collect_params().values()
        else:
            params = zoo._collect_params_with_prefix().values()
        res["zoo_params"] = int(sum(p.data().size for p in params))
        res["zoo_output_shape"] = list(y.shape)
    return res


def main():
    jobs = json.load(open(sys.argv[1]))["jobs"]
    summary = {}
    for job in jobs:
        try:
            summary[job["name"]] = run_job(job)
        except Exception as e:  # report, keep going
            summary[job["name"]] = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:2000]}",
                                    "trace": traceback.format_exc()[-3000:]}
        print(job["name"], "ok" if summary[job["name"]]["ok"] else "FAILED", file=sys.stderr,
              flush=True)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
