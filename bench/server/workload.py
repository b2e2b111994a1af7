"""What bench/server/run.py sends: the MXNet exports, the hybridserve store built from them,
the request bodies, the cases (server x model x body x batching x concurrency), and the check
of one answer against MXNet's output."""
from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from servers import HERE, MX_PY, Server, project_python, source_dir

MLP_CONFIG = {
    "description": "demo MLP 512-256-128-2 re-exported by MXNet 1.9.1 (bench/server)",
    "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}],
    "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 2]}],
    "max_batch_size": 64,
}
RESNET_CONFIG = {
    "description": "ResNet-18 v1 exported by MXNet 1.9.1 (bench/server)",
    "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 224, 224]}],
    "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 1000]}],
    "max_batch_size": 8,
}


def export_models(tmp: Path, mx_python: Path = MX_PY, only: str | None = None) -> dict:
    """MXNet 1.9.1 exports of the demo MLP (its own weights), ResNet-18 and MobileNet (or only
    the one named) into tmp/export, by `mx_python` (a Python with mxnet==1.9.1)."""
    if not mx_python.exists():
        raise SystemExit(f"no MXNet 1.9.1 venv at {mx_python.parent.parent}: build it with "
                         "`make interop` (tests/interop) first")
    weights = tmp / "mlp-weights.npz"
    code = ("import sys, numpy as np\n"
            "from framework.io import load_params, strip_prefixes\n"
            "p = strip_prefixes(load_params(sys.argv[1]))\n"
            "np.savez(sys.argv[2], **{('w' if k.endswith('weight') else 'b') + k.split('.')[0]: v"
            " for k, v in p.items()})\n")
    subprocess.run([project_python(), "-c", code, str(source_dir() / "model_store/mlp/1/mlp-0000.params"),
                    str(weights)], cwd=source_dir(), check=True, timeout=120)
    out = subprocess.run([str(mx_python), str(HERE / "mx_export.py"), str(tmp / "export"),
                          "--mlp-weights", str(weights)] + (["--only", only] if only else []),
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def build_store(tmp: Path, demo_cfg: dict) -> Path:
    store = tmp / "store"
    batching = demo_cfg.get("dynamic_batching") or {
        "max_queue_delay_microseconds": 1000, "preferred_batch_size": [8, 16, 32]}
    entries = {
        "mlp": ("mlp", {**MLP_CONFIG, "max_batch_size": demo_cfg.get("max_batch_size", 64),
                        "dynamic_batching": batching}),
        "mlp_nobatch": ("mlp", dict(MLP_CONFIG, max_batch_size=demo_cfg.get("max_batch_size", 64))),
        "resnet18": ("resnet18_v1", RESNET_CONFIG),
        "mobilenet": ("mobilenetv2_1.0", dict(RESNET_CONFIG, description="MobileNet v2 1.0 "
                                              "exported by MXNet 1.9.1 (bench/server)")),
        # not in MMS's set: shows what dynamic batching does for a conv net (extra row)
        "resnet18_batch": ("resnet18_v1", {**RESNET_CONFIG, "dynamic_batching": {
            "max_queue_delay_microseconds": 5000, "preferred_batch_size": [4, 8]}}),
        # issue 19: the same float32 export served INT8 (quantized at load on calib.npz)
        "resnet18_int8": ("resnet18_v1", {**RESNET_CONFIG, "quantize": {
            "dtype": "auto", "calib_mode": "naive", "calib_file": "calib.npz"}}),
    }
    # issue 31: the same exports uploaded without a config (input signature [-1, 3, -1, -1]):
    # served on sessions specialized on the size requests bring
    configless = {"resnet18_nocfg": "resnet18_v1", "mobilenet_nocfg": "mobilenetv2_1.0"}
    for name, (src, cfg) in [*entries.items(), *((n, (s, None)) for n, s in configless.items())]:
        vdir = store / name / "1"
        vdir.mkdir(parents=True)
        for f in (tmp / "export" / src).iterdir():
            shutil.copy(f, vdir / f.name)
        if cfg is not None:
            (store / name / "config.json").write_text(json.dumps({"name": name, **cfg}, indent=2))
        if cfg is not None and "quantize" in cfg:
            write_calibration(tmp / "export" / f"{src}-io.npz", vdir / "calib.npz")
    return store


def write_calibration(io_npz: Path, out: Path, n: int = 32) -> None:
    """n calibration inputs drawn like the request's input (its mean and spread), not the
    request itself: the served INT8 model is calibrated as a user would, on other data."""
    x = np.load(io_npz)["data"].astype(np.float32)
    rng = np.random.default_rng(19)
    calib = x.mean() + x.std() * rng.standard_normal((n,) + x.shape[1:], dtype=np.float32)
    np.savez(out, data=calib)


@dataclass
class Body:
    path: Path
    ctype: str
    hlen: int | None = None


def v2_json(x: np.ndarray) -> bytes:
    return json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()


def v2_binary(x: np.ndarray) -> tuple[bytes, int]:
    raw = x.astype("<f4").tobytes()
    head = json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "parameters": {"binary_data_size": len(raw)}}],
                       # every output, binary: the same body fits a config-less model, whose
                       # output keeps its graph name
                       "parameters": {"binary_data_output": True}},
                      separators=(",", ":")).encode()
    return head + raw, len(head)


def write_bodies(tmp: Path) -> tuple[dict[str, Body], dict[str, np.ndarray]]:
    d = tmp / "bodies"
    d.mkdir()
    bodies, refs = {}, {}
    for model, npz in (("mlp", "mlp-io.npz"), ("resnet", "resnet18_v1-io.npz"),
                       ("mobilenet", "mobilenetv2_1.0-io.npz")):
        io = np.load(tmp / "export" / npz)
        x, refs[model] = io["data"].astype(np.float32), io["output"]
        (d / f"{model}.json").write_bytes(v2_json(x))
        bodies[f"{model}.json"] = Body(d / f"{model}.json", "application/json")
        blob, hlen = v2_binary(x)
        (d / f"{model}.bin").write_bytes(blob)
        bodies[f"{model}.bin"] = Body(d / f"{model}.bin", "application/octet-stream", hlen)
        (d / f"{model}.raw").write_bytes(x.astype("<f4").tobytes())
        bodies[f"{model}.raw"] = Body(d / f"{model}.raw", "application/octet-stream")
    return bodies, refs


# -- cases ---------------------------------------------------------------------------------------
@dataclass
class Case:
    server: str
    model: str          # "MLP" / "ResNet-18" / "ResNet-18 INT8" / "MobileNet v2" (… no config)
    body: str           # "JSON" / "binary" / "raw f32"
    batching: str       # "on" / "off"
    conns: int
    path: str
    body_key: str
    ref: str            # "mlp" / "resnet" / "mobilenet" / "" (no check); ":top1" = class only
    results: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.server}|{self.model}|{self.body}|{self.batching}|c{self.conns}"


def make_cases(servers: list[str], quick: bool) -> list[Case]:
    cs: list[Case] = []
    hs_infer = "/v2/models/{}/infer"
    for s in servers:
        if not s.startswith("hs"):
            continue
        for c in (1, 8, 32):
            cs.append(Case(s, "MLP", "JSON", "on", c, hs_infer.format("mlp"), "mlp.json", "mlp"))
            cs.append(Case(s, "MLP", "binary", "on", c, hs_infer.format("mlp"), "mlp.bin", "mlp"))
            cs.append(Case(s, "MLP", "JSON", "off", c, hs_infer.format("mlp_nobatch"), "mlp.json",
                           "mlp"))
        cs.append(Case(s, "MLP", "binary", "off", 32, hs_infer.format("mlp_nobatch"), "mlp.bin",
                       "mlp"))
        for c in (1, 8):
            cs.append(Case(s, "ResNet-18", "binary", "off", c, hs_infer.format("resnet18"),
                           "resnet.bin", "resnet"))
        cs.append(Case(s, "ResNet-18", "binary", "on", 8, hs_infer.format("resnet18_batch"),
                       "resnet.bin", "resnet"))
        cs.append(Case(s, "MobileNet v2", "binary", "off", 8, hs_infer.format("mobilenet"),
                       "mobilenet.bin", "mobilenet"))
        cs.append(Case(s, "ResNet-18 no config", "binary", "off", 8,
                       hs_infer.format("resnet18_nocfg"), "resnet.bin", "resnet"))
        cs.append(Case(s, "MobileNet v2 no config", "binary", "off", 8,
                       hs_infer.format("mobilenet_nocfg"), "mobilenet.bin", "mobilenet"))
        cs.append(Case(s, "ResNet-18 INT8", "binary", "off", 8, hs_infer.format("resnet18_int8"),
                       "resnet.bin", "resnet:top1"))
    if "mms" in servers:
        for c in (1, 8, 32):
            cs.append(Case("mms", "MLP", "JSON", "off", c, "/predictions/mlp", "mlp.json", "mlp"))
        cs.append(Case("mms", "MLP", "JSON", "on", 32, "/predictions/mlp_b", "mlp.json", "mlp"))
        cs.append(Case("mms", "MLP", "raw f32", "off", 8, "/predictions/mlp", "mlp.raw", "mlp"))
        for c in (1, 8):
            cs.append(Case("mms", "ResNet-18", "raw f32", "off", c, "/predictions/resnet18",
                           "resnet.raw", "resnet"))
        cs.append(Case("mms", "MobileNet v2", "raw f32", "off", 8, "/predictions/mobilenet",
                       "mobilenet.raw", "mobilenet"))
    for s in ("echo1", "echo2"):
        if s in servers:
            for c in (1, 8, 32):
                cs.append(Case(s, "MLP", "JSON", "-", c, "/v2/models/mlp/infer", "mlp.json", ""))
    # comparable cases (same model and concurrency) run back to back, so that the ratios the
    # targets need are taken from runs a few seconds apart (paired), not minutes apart
    cs.sort(key=group)
    return cs


def group(c: Case) -> tuple:
    return (c.model != "MLP", c.model.replace(" INT8", ""), c.conns)   # INT8 pairs with float


def check_answer(srv: Server, case: Case, bodies: dict[str, Body],
                 refs: dict[str, np.ndarray]) -> str:
    """One request outside wrk: the answer must be 200 and (for models) match MXNet's output."""
    b = bodies[case.body_key]
    headers = {"Content-Type": b.ctype}
    if b.hlen is not None:
        headers["Inference-Header-Content-Length"] = str(b.hlen)
    req = urllib.request.Request(srv.base + case.path, data=b.path.read_bytes(), headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            data, hl = r.read(), r.headers.get("Inference-Header-Content-Length")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{case.id}: HTTP {e.code}: {e.read()[:300]!r}") from None
    if not case.ref:
        return "200"
    want = refs[case.ref.split(":")[0]]
    if hl is not None:
        head = json.loads(data[:int(hl)])
        got = np.frombuffer(data[int(hl):], "<f4").reshape(head["outputs"][0]["shape"])
    elif data[:1] == b"{":
        out = json.loads(data)["outputs"][0]
        got = np.asarray(out["data"], np.float32).reshape(out["shape"])
    else:
        got = np.frombuffer(data, "<f4").reshape(want.shape)
    if case.ref.endswith(":top1"):           # INT8 vs MXNet's float32: the same class
        if got.shape != want.shape or not np.array_equal(got.argmax(-1), want.argmax(-1)):
            raise RuntimeError(f"{case.id}: top-1 differs from MXNet's float32 output")
        return f"top-1 = MXNet float32, max|diff| {float(np.max(np.abs(got - want))):.2g}"
    err = float(np.max(np.abs(got - want)))
    tol = 1e-4 + 1e-3 * float(np.max(np.abs(want)))
    if got.shape != want.shape or not err <= tol:
        raise RuntimeError(f"{case.id}: answer differs from MXNet's (max |diff| {err:.3g})")
    return f"max|diff| {err:.1e}"
