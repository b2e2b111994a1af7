"""The `.mar` fixtures served by real MXNet Model Server 1.1.11 and by hybridserve (the archives
dropped into its store as they are) answer the same requests alike.

  bash bench/server/setup_mms.sh      # once: the MMS venv (needs java 11+)
  .venv/bin/python tests/interop/check_mar_mms.py

mlp.mar: a JSON tensor → MMS's output vs hybridserve's `/infer` (rtol 1e-4, atol 1e-5).
vision.mar: the same PNG posted to both → MMS's top-5 {probability, class} vs hybridserve's
classification strings `score:index:label` (same classes in the same order, scores within
the bound). Exits non-zero on any mismatch; skips (exit 0, says why) without java or the venv.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "server"))
import servers  # noqa: E402  (bench/server/servers.py: the MMS and hybridserve launchers)

MAR = ROOT / "tests" / "fixtures" / "mar"
ARCHIVES = ("mlp.mar", "vision.mar")


def post(url: str, body: bytes, ctype: str) -> bytes:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{url}: HTTP {e.code} {e.read()[:500]!r}") from None


def register(mms: servers.Server, name: str) -> None:
    q = f"url={name}.mar&model_name={name}&initial_workers=1&synchronous=true"
    req = urllib.request.Request(f"http://127.0.0.1:{mms.mgmt}/models?{q}", method="POST")
    with urllib.request.urlopen(req, timeout=300) as r:
        r.read()


def compare(mms: servers.Server, hs: servers.Server) -> list[str]:
    ref = np.load(MAR / "reference.npz")
    x = ref["mlp_input"]
    want = np.array(json.loads(post(f"{mms.base}/predictions/mlp",
                                     json.dumps({"data": x.tolist()}).encode(),
                                     "application/json")), np.float32)
    doc = json.loads(post(f"{hs.base}/v2/models/mlp/infer", json.dumps({"inputs": [
        {"name": "data", "datatype": "FP32", "shape": list(x.shape),
         "data": x.ravel().tolist()}]}).encode(), "application/json"))
    got = np.array(doc["outputs"][0]["data"], np.float32).reshape(doc["outputs"][0]["shape"])
    bad = []
    if not np.allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-5):
        bad.append(f"mlp: max |Δ| {np.abs(got - want.reshape(got.shape)).max():.3g}")
    png = (MAR / "image.png").read_bytes()
    top = json.loads(post(f"{mms.base}/predictions/vision", png, "image/png"))
    doc = json.loads(post(f"{hs.base}/v2/models/vision/infer?classification=5", png,
                          "image/png"))
    ours = [s.split(":", 2) for s in doc["outputs"][0]["data"]]
    if [c["class"] for c in top] != [lab for _, _, lab in ours]:
        bad.append(f"vision: classes {[c['class'] for c in top]} vs {ours}")
    elif not np.allclose([float(s) for s, _, _ in ours], [c["probability"] for c in top],
                         rtol=1e-4, atol=1e-5):
        bad.append(f"vision: scores {top} vs {ours}")
    print("mlp  MMS", want.ravel()[:4], "hybridserve", got.ravel()[:4])
    print("vision MMS", top[:2], "hybridserve", ours[:2])
    return bad


def main() -> int:
    why = servers.mms_available()
    if why:
        print(f"check_mar_mms: skipped: {why}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for d in ("mms/store", "hs"):
            (tmp / d).mkdir(parents=True)
        for a in ARCHIVES:
            shutil.copy(MAR / a, tmp / "mms" / "store" / a)
            shutil.copy(MAR / a, tmp / "hs" / a)          # dropped in hybridserve's store
        mms = servers.mms_process(tmp / "mms", tmp / "mms" / "store", omp_threads=1)
        hs = servers.hybridserve("hs", 1, tmp / "hs", tmp, {})
        try:
            for s in (mms, hs):
                s.start()
            for s in (mms, hs):
                s.wait_ready(180)
            for a in ARCHIVES:
                register(mms, a[:-4])
            bad = compare(mms, hs)
        except Exception:
            print("MMS log:", mms.tail_log(4000))
            raise
        finally:
            servers.stop_all()
    for b in bad:
        print("MISMATCH", b)
    print("check_mar_mms:", "FAILED" if bad else "MMS and hybridserve agree on every archive")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
