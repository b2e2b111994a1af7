"""An MLServer 1.7.1 custom runtime serving an MXNet 1.9.1 symbol/params export with MXNet
itself (runs inside .venv-mlserver, made by bench/grpc/setup_mlserver.sh).

model-settings.json: {"implementation": "mxnet_runtime.MXNetRuntime",
                      "parameters": {"uri": "<folder with NAME-symbol.json, NAME-0000.params>"}}
The input is the model's first input tensor (any datatype MLServer's NumpyCodec reads: typed
contents or raw_input_contents); the answer is one FP32 tensor "output". This is the plain
runtime an MLServer user would write: decode with NumpyCodec, forward, encode.
"""
from __future__ import annotations

import glob
import os

import mxnet as mx
import numpy as np
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse
from mlserver.utils import get_model_uri


class MXNetRuntime(MLModel):
    async def load(self) -> bool:
        folder = await get_model_uri(self._settings)
        symbol = sorted(glob.glob(os.path.join(folder, "*-symbol.json")))[0]
        params = sorted(glob.glob(os.path.join(folder, "*-[0-9][0-9][0-9][0-9].params")))[-1]
        inputs = [i.name for i in self._settings.inputs] or ["data"]
        self._net = mx.gluon.SymbolBlock.imports(symbol, inputs, params, ctx=mx.cpu())
        self._net.hybridize(static_alloc=True, static_shape=True)
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        x = NumpyCodec.decode_input(payload.inputs[0]).astype(np.float32, copy=False)
        y = self._net(mx.nd.array(x, dtype=np.float32))
        if isinstance(y, (list, tuple)):
            y = y[0]
        out = y.asnumpy()
        return InferenceResponse(model_name=self.name, model_version=self.version,
                                 id=payload.id,
                                 outputs=[NumpyCodec.encode_output("output", out)])
