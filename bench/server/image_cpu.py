"""Server CPU of an image classification request vs the same request as a preprocessed tensor.

    python bench/server/image_cpu.py [--rounds 3] [--per-round 20] [--out FILE.md]

Builds ResNet-18 v1 with hybridserve's model zoo (seeded; 1000 labels), declares ImageNet
preprocessing in its config (shorter side 256, centre crop 224, mean/std, NCHW), serves it
with `python -m service` (1 worker) and sends, alternating in rounds, one client at a time:
- `jpeg`: a 500x375 JPEG as a binary BYTES tensor, top-5 classification with labels;
- `raw`: the same JPEG as the whole body (`Content-Type: image/jpeg`, `?classification=5`);
- `tensor`: the same image already preprocessed, FP32 1x3x224x224 binary, top-5.
Reports the server process's CPU (utime+stime, /proc) per request for each and the ratio
(issue 18's target: jpeg ≤ 1.15 × tensor). The machine's load average is recorded with it.
"""
from __future__ import annotations

import argparse
import io
import json
import struct
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import framework as mx                                               # noqa: E402
from framework.gluon.model_zoo.vision import resnet18_v1              # noqa: E402
from servers import cpu_ticks, hybridserve, loadavg, stop_all        # noqa: E402

PRE = {"type": "image", "color": "RGB", "resize": "shorter", "shorter_side": 256,
       "size": [224, 224], "scale": 1 / 255, "mean": [0.485, 0.456, 0.406],
       "std": [0.229, 0.224, 0.225], "layout": "NCHW"}


def build_store(root: Path) -> Path:
    mx.random.seed(0)
    net = resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.np.zeros((1, 3, 224, 224)))
    vdir = root / "resnet18" / "1"
    vdir.mkdir(parents=True)
    net.export(str(vdir / "resnet18"))
    (root / "resnet18" / "labels.txt").write_text("".join(f"class_{k}\n" for k in range(1000)))
    (root / "resnet18" / "config.json").write_text(json.dumps({
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 224, 224],
                    "preprocess": PRE}],
        "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 1000],
                     "label_filename": "labels.txt"}],
        "max_batch_size": 1}))
    return root


def photo() -> bytes:
    """A 500x375 JPEG with photo-like content (smooth shapes plus grain)."""
    y, x = np.mgrid[0:375, 0:500].astype(np.float32)
    rgb = np.stack([128 + 100 * np.sin(x / 40), 128 + 100 * np.cos(y / 30),
                    128 + 60 * np.sin((x + y) / 25)], -1)
    rgb += np.random.default_rng(0).normal(0, 12, rgb.shape)
    buf = io.BytesIO()
    Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def framed(head: dict, tail: bytes) -> tuple[bytes, dict]:
    h = json.dumps(head).encode()
    return h + tail, {"Inference-Header-Content-Length": str(len(h))}


def requests_for(jpeg: bytes, tensor: np.ndarray) -> dict[str, tuple[str, bytes, dict]]:
    top5 = [{"name": "output", "parameters": {"classification": 5}}]
    blob = struct.pack("<I", len(jpeg)) + jpeg
    jb, jh = framed({"inputs": [{"name": "data", "datatype": "BYTES", "shape": [1],
                                 "parameters": {"binary_data_size": len(blob)}}],
                     "outputs": top5}, blob)
    tb, th = framed({"inputs": [{"name": "data", "datatype": "FP32", "shape": [1, 3, 224, 224],
                                 "parameters": {"binary_data_size": tensor.nbytes}}],
                     "outputs": top5}, tensor.tobytes())
    path = "/v2/models/resnet18/infer"
    return {"jpeg": (path, jb, jh),
            "raw": (path + "?classification=5", jpeg, {"Content-Type": "image/jpeg"}),
            "tensor": (path, tb, th)}


def measure(base: str, pids, reqs: dict, rounds: int, per_round: int) -> dict[str, float]:
    ticks = {k: 0 for k in reqs}
    hz = 100.0
    with httpx.Client(base_url=base, timeout=60) as c:
        answers = {k: c.post(p, content=b, headers=h).json()["outputs"][0]["data"][0]
                   for k, (p, b, h) in reqs.items()}                       # warm, and agree
        assert len({a.split(":")[1] for a in answers.values()}) == 1, answers
        for _ in range(rounds):
            for k, (p, b, h) in reqs.items():
                t0 = cpu_ticks(pids)
                for _ in range(per_round):
                    r = c.post(p, content=b, headers=h)
                    assert r.status_code == 200, r.text
                ticks[k] += cpu_ticks(pids) - t0
    n = rounds * per_round
    return {k: ticks[k] / hz / n * 1000 for k in reqs}           # ms of server CPU per request


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-round", type=int, default=20)
    ap.add_argument("--out", help="write the result as markdown here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hs-image-bench-"))
    store = build_store(tmp / "store")
    jpeg = photo()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from service.repository.config import ImagePreprocess
    from service.runtime.images import ImagePipeline
    from service.runtime.signature import IOSpec
    pipe = ImagePipeline(IOSpec("data", "FP32", (-1, 3, 224, 224)), ImagePreprocess(**PRE), "b")
    tensor = pipe.one(jpeg, 10 ** 8)[None]
    c0 = time.process_time()
    for _ in range(50):
        pipe.one(jpeg, 10 ** 8)
    pre_ms = (time.process_time() - c0) / 50 * 1000      # decode + resize + normalise, alone
    srv = hybridserve("hs1", 1, store, tmp, {"HYBRIDSERVE_INFERENCE_THREADS": "1"})
    try:
        srv.start()
        srv.wait_ready(300)
        load0 = loadavg()
        t0 = time.time()
        ms = measure(srv.base, srv.pids(), requests_for(jpeg, tensor), args.rounds,
                     args.per_round)
        took, load1 = time.time() - t0, loadavg()
    finally:
        stop_all()
    lines = ["| request | server CPU per request (ms) | vs tensor |", "|---|---|---|"]
    lines += [f"| {k} | {v:.1f} | {v / ms['tensor']:.3f} |" for k, v in ms.items()]
    text = (f"ResNet-18 v1, 1 worker, 1 inference thread, one client at a time; "
            f"{args.rounds}×{args.per_round} requests per kind in alternating rounds "
            f"({took:.0f} s); JPEG 500×375 ({len(jpeg)} bytes) → top-5 with labels; "
            f"load average {load0:.1f} → {load1:.1f} (the machine is shared)\n\n"
            + "\n".join(lines) + "\n\n"
            f"The image path alone (decode, resize, crop, normalise; in this process): "
            f"{pre_ms:.1f} ms of CPU per image = {pre_ms / ms['tensor'] * 100:.1f} % of the "
            f"tensor request's server CPU.\n")
    print(text)
    if args.out:
        Path(args.out).write_text("# Images in, labels out: server CPU (issue 18)\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
