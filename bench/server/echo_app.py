"""The floor for bench/server/run.py: a bare FastAPI app that only parses the MLP JSON body.

`POST /v2/models/{name}/infer` reads the body, parses it with orjson, turns the first input's
`data` into a float32 array of its `shape` (what any server must do before it can compute), and
answers a constant v2 response.  No model, no validation, no metrics: what is left is uvicorn +
FastAPI routing + JSON parsing, i.e. the cost every Python FastAPI server pays per request.

    python -m uvicorn --app-dir bench/server echo_app:app --host 127.0.0.1 --port N \
        --no-access-log --log-level warning [--workers K]
"""
import numpy as np
import orjson
from fastapi import FastAPI, Request, Response

app = FastAPI()
_ANSWER = orjson.dumps({"model_name": "echo", "model_version": "1", "outputs": [
    {"name": "output", "datatype": "FP32", "shape": [1, 2], "data": [0.0, 0.0]}]})


@app.get("/health")
async def health():
    return {"ok": True}


@app.post("/v2/models/{name}/infer")
async def infer(name: str, request: Request):
    doc = orjson.loads(await request.body())
    inp = doc["inputs"][0]
    np.asarray(inp["data"], dtype=np.float32).reshape(inp["shape"])
    return Response(_ANSWER, media_type="application/json")
