"""MXNet Model Server (multi-model-server 1.1.11) handler for bench/server/run.py.

Packed into each model archive next to the MXNet 1.x export.  It serves the export the way a
careful MMS user would: ``SymbolBlock.imports`` + ``hybridize(static_alloc=True)``, warmed at
load, one forward per MMS batch (MMS's own batching hands ``handle`` a list of requests).

Bodies:
* ``application/json``: the same Open Inference Protocol v2 JSON body hybridserve gets
  (``{"inputs": [{"name", "shape", "datatype", "data"}]}``); MMS itself decodes the JSON
  (``decode_input_request`` defaults to true), the answer is v2-style JSON.
* anything else: raw little-endian float32 bytes of one or more items, answered with the raw
  float32 output bytes (``application/octet-stream``).

The archive's ``bench.json`` names the per-item input shape, e.g. ``{"item_shape": [512]}``.
"""
import glob
import json
import os

import numpy as np


class _Service:
    def __init__(self):
        self.initialized = False

    def initialize(self, context):
        import mxnet as mx
        self.mx = mx
        model_dir = context.system_properties.get("model_dir")
        with open(os.path.join(model_dir, "bench.json")) as f:
            meta = json.load(f)
        self.item_shape = tuple(meta["item_shape"])
        sym = glob.glob(os.path.join(model_dir, "*-symbol.json"))[0]
        params = glob.glob(os.path.join(model_dir, "*.params"))[0]
        self.net = mx.gluon.SymbolBlock.imports(sym, ["data"], params, ctx=mx.cpu())
        self.net.hybridize(static_alloc=True)
        for b in sorted({1, int(meta.get("warm_batch", 1))}):
            self.net(mx.nd.zeros((b,) + self.item_shape)).wait_to_read()
        self.initialized = True

    def handle(self, data, context):
        arrays, is_json = [], []
        for req in data:
            v = req.get("body")
            if v is None:
                v = req.get("data")
            if isinstance(v, (bytes, bytearray)) and v[:1] == b"{":
                v = json.loads(v)
            if isinstance(v, dict):
                inp = v["inputs"][0]
                arrays.append(np.asarray(inp["data"], dtype=np.float32).reshape(inp["shape"]))
                is_json.append(True)
            else:
                arrays.append(np.frombuffer(v, dtype=np.float32).reshape((-1,) + self.item_shape))
                is_json.append(False)
        x = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
        y = self.net(self.mx.nd.array(x)).asnumpy()
        out, pos = [], 0
        for idx, (a, js) in enumerate(zip(arrays, is_json)):
            rows = y[pos:pos + a.shape[0]]
            pos += a.shape[0]
            if js:
                out.append(json.dumps({"model_name": context.model_name, "outputs": [
                    {"name": "output", "datatype": "FP32", "shape": list(rows.shape),
                     "data": rows.ravel().tolist()}]}))
                context.set_response_content_type(idx, "application/json")
            else:
                out.append(rows.astype("<f4").tobytes())
                context.set_response_content_type(idx, "application/octet-stream")
        return out


_service = _Service()


def handle(data, context):
    if not _service.initialized:
        _service.initialize(context)
    if data is None:
        return None
    return _service.handle(data, context)
