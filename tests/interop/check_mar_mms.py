"""The `.mar` fixtures served by real MXNet Model Server 1.1.11 and by hybridserve (the archives
dropped into its store as they are) answer the same requests alike.

  bash bench/server/setup_mms.sh      # once: the MMS venv (needs java 11+)
  .venv/bin/python tests/interop/check_mar_mms.py

mms_mlp.mar: a JSON tensor → MMS's output vs hybridserve's `/infer` (rtol 1e-4, atol 1e-5).
vision.mar: the same PNG posted to both → MMS's top-5 {probability, class} vs hybridserve's
classification strings `score:index:label` (same classes in the same order, scores within
the bound). resnet.mar (ResNet-18, 1000 labels; built on the fly by
`make_mar_fixtures.py --resnet`): a 300×260 PNG and the same as a JPEG, likewise. Exits non-zero on any mismatch; skips (exit 0, says why) without java or the venv.
"""
from __future__ import annotations

import json
import shutil
import subprocess
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
ARCHIVES = ("mms_mlp.mar", "vision.mar", "resnet.mar")


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
    want = np.array(json.loads(post(f"{mms.base}/predictions/mms_mlp",
                                     json.dumps({"data": x.tolist()}).encode(),
                                     "application/json")), np.float32)
    doc = json.loads(post(f"{hs.base}/v2/models/mms_mlp/infer", json.dumps({"inputs": [
        {"name": "data", "datatype": "FP32", "shape": list(x.shape),
         "data": x.ravel().tolist()}]}).encode(), "application/json"))
    got = np.array(doc["outputs"][0]["data"], np.float32).reshape(doc["outputs"][0]["shape"])
    bad = []
    if not np.allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-5):
        bad.append(f"mlp: max |Δ| {np.abs(got - want.reshape(got.shape)).max():.3g}")
    bad += top5(mms, hs, "vision", (MAR / "image.png").read_bytes(), "image/png")
    print("mlp  MMS", want.ravel()[:4], "hybridserve", got.ravel()[:4])
    return bad


def top5(mms: servers.Server, hs: servers.Server, name: str, img: bytes, ctype: str
         ) -> list[str]:
    """The same image to both: MMS's top 5 vs hybridserve's classification strings."""
    top = json.loads(post(f"{mms.base}/predictions/{name}", img, ctype))
    doc = json.loads(post(f"{hs.base}/v2/models/{name}/infer?classification=5", img, ctype))
    ours = [s.split(":", 2) for s in doc["outputs"][0]["data"]]
    print(f"{name} {ctype}: MMS", [(round(c["probability"], 6), c["class"]) for c in top[:3]],
          "hybridserve", ours[:3])
    if [c["class"] for c in top] != [lab for _, _, lab in ours]:
        return [f"{name} {ctype}: classes {[c['class'] for c in top]} vs {ours}"]
    if not np.allclose([float(s) for s, _, _ in ours], [c["probability"] for c in top],
                       rtol=1e-4, atol=1e-5):
        return [f"{name} {ctype}: scores {top} vs {ours}"]
    return []


def build_resnet(out: Path) -> None:
    py = servers.MMS_VENV / "bin" / "python"
    subprocess.run([str(py), str(ROOT / "tests/interop/make_mar_fixtures.py"), "--resnet",
                    str(out)], check=True, capture_output=True, timeout=600)


def main() -> int:
    why = servers.mms_available()
    if why:
        print(f"check_mar_mms: skipped: {why}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for d in ("mms/store", "hs"):
            (tmp / d).mkdir(parents=True)
        build_resnet(tmp)
        for a in ARCHIVES:
            src = tmp / a if a == "resnet.mar" else MAR / a
            shutil.copy(src, tmp / "mms" / "store" / a)
            shutil.copy(src, tmp / "hs" / a)          # dropped in hybridserve's store
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
            for photo, ctype in (("photo.png", "image/png"), ("photo.jpg", "image/jpeg")):
                bad += top5(mms, hs, "resnet", (tmp / photo).read_bytes(), ctype)
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
