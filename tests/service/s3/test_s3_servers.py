"""Server processes on one bucket (issue 29): an upload through one replica is served by the
other within one poll interval + 5 s, deletes follow; and (slow) the faults — wrong credentials, an
upload killed mid-way, the S3 server down while serving and at start."""
from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from s3server import SECRET_KEY
from serverproc import ROOT, ServerProc, inproc_server, wait_for

pytestmark = pytest.mark.timeout(300)
MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
MAR = ROOT / "tests" / "fixtures" / "mar"
POLL_S = 0.5


def files() -> dict:
    return {"symbol": ("fc_flatten-symbol.json", (MX1 / "fc_flatten-symbol.json").read_bytes()),
            "params": ("fc_flatten-0000.params", (MX1 / "fc_flatten-0000.params").read_bytes())}


def replica(url: str, seaweed, tmp_path, name: str, **env: str) -> ServerProc:
    return ServerProc(url, tmp_path / f"{name}.log", env={
        **seaweed.env(), "HYBRIDSERVE_STORE_POLL_S": str(POLL_S),
        "HYBRIDSERVE_STORE_CACHE_DIR": str(tmp_path / f"cache-{name}"), **env})


def status(rep: ServerProc, path: str) -> int:
    return httpx.get(rep.url + path, timeout=5).status_code


def infer(rep: ServerProc) -> httpx.Response:
    io = np.load(MX1 / "fc_flatten-io.npz")
    body = {"inputs": [{"name": "data", "shape": list(io["data"].shape), "datatype": "FP32",
                        "data": io["data"].ravel().tolist()}]}
    return httpx.post(f"{rep.url}/v2/models/fc/infer", json=body, timeout=30)


def check_output(r: httpx.Response) -> None:
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    np.testing.assert_allclose(np.asarray(out["data"], np.float32).reshape(out["shape"]),
                               np.load(MX1 / "fc_flatten-io.npz")["output"], rtol=1e-4, atol=1e-5)


def converge(a, b) -> None:
    """Changes through either replica reach the other within one poll interval + 5 s."""
    r = httpx.post(f"{a.url}/v2/repository/models/fc/upload", files=files(), timeout=60)
    assert r.status_code == 201 and r.json()["version"] == "1", r.text
    wait_for(lambda: status(b, "/v2/models/fc/ready") == 200, POLL_S + 5, "upload reaches B")
    check_output(infer(b))
    # an MMS archive (model files, labels, config from its signature) through B, on A
    r = httpx.post(f"{b.url}/v2/repository/models/vision/upload", timeout=60,
                   files={"archive": ("vision.mar", (MAR / "vision.mar").read_bytes())})
    assert r.status_code == 201, r.text
    wait_for(lambda: status(a, "/v2/models/vision/ready") == 200, POLL_S + 5, ".mar on A")
    r = httpx.post(f"{a.url}/v2/models/vision/infer?classification=1", timeout=30,
                   content=(MAR / "image.png").read_bytes(),
                   headers={"Content-Type": "image/png"})
    best = int(np.argmax(np.load(MAR / "reference.npz")["vision_output"][0]))
    assert r.json()["outputs"][0]["data"][0].split(":")[1:] == [
        str(best), f"n0000{best} class {best}"], r.text
    assert httpx.delete(f"{b.url}/v2/models/fc", timeout=30).status_code == 200
    wait_for(lambda: status(a, "/v2/models/fc") == 404, POLL_S + 5, "delete reaches A")


def test_two_replicas_converge_through_the_bucket(bucket, pfx, tmp_path):
    """Two servers (in this process: each its own core, store and cache) share only the
    bucket."""
    url = f"s3://{bucket}/{pfx}"
    with inproc_server(url, store_poll_s=POLL_S, store_cache_dir=str(tmp_path / "a")) as a, \
            inproc_server(url, store_poll_s=POLL_S, store_cache_dir=str(tmp_path / "b")) as b:
        converge(a, b)


@pytest.mark.slow      # two server processes: ~1 min on 2 loaded cores
def test_two_replica_processes_converge(bucket, pfx, seaweed, tmp_path):
    url = f"s3://{bucket}/{pfx}"
    a, b = (replica(url, seaweed, tmp_path, n) for n in "ab")
    try:
        a.start(wait=0), b.start(wait=0)
        a.wait_ready(), b.wait_ready()
        converge(a, b)
    finally:
        a.stop(), b.stop()


@pytest.mark.slow      # five server starts and an S3 restart: ~2 min on 2 loaded cores
def test_faults(bucket, pfx, seaweed, tmp_path):
    url = f"s3://{bucket}/{pfx}"
    a = replica(url, seaweed, tmp_path, "a")
    procs = [a]
    try:
        a.start()
        assert httpx.post(f"{a.url}/v2/repository/models/fc/upload", files=files(),
                          timeout=60).status_code == 201
        # wrong credentials: not ready, the reason names bucket and endpoint, no secret
        bad = replica(url, seaweed, tmp_path, "bad", AWS_SECRET_ACCESS_KEY="wrong-" + SECRET_KEY)
        procs.append(bad)
        bad.start(wait=0)
        r = wait_for(lambda: (x := httpx.get(bad.url + "/v2/health/ready", timeout=5))
                     .status_code == 503 and x, 60, "not ready with wrong credentials")
        msg = r.json()["error"]
        assert bucket in msg and seaweed.endpoint in msg and "credentials" in msg, msg
        assert status(bad, "/v2/health/live") == 200
        bad.stop()
        assert SECRET_KEY not in bad.tail(1 << 20)
        # an upload killed after its objects were written, before the manifest said so
        crash = replica(url, seaweed, tmp_path, "crash", HYBRIDSERVE_CRASH_AT="commit.uploaded")
        procs.append(crash)
        crash.start()
        with pytest.raises(httpx.HTTPError):
            httpx.post(f"{crash.url}/v2/repository/models/fc/upload", files=files(), timeout=60)
        crash.proc.wait(10)
        keys = [o["Key"] for o in seaweed.client().list_objects_v2(
            Bucket=bucket, Prefix=f"{pfx}/fc/2/").get("Contents", [])]
        assert keys, "the killed upload had written its objects"
        wait_for(lambda: status(a, "/v2/models/fc/versions/2") == 404, POLL_S * 4, "A polls")
        assert httpx.get(f"{a.url}/v2/models/fc", timeout=5).json()["versions"] == ["1"]
        crash.start(HYBRIDSERVE_CRASH_AT="")       # its restart clears the dead claim
        man = json.loads(seaweed.client().get_object(
            Bucket=bucket, Key=f"{pfx}/.manifest.json")["Body"].read())
        assert not man.get("pending") and man["models"]["fc"]["versions"] == ["1"]
        assert not seaweed.client().list_objects_v2(Bucket=bucket,
                                                    Prefix=f"{pfx}/fc/2/").get("Contents")
        crash.stop()
        # S3 down while serving: loaded models serve, live, not ready (store unreachable)
        seaweed.stop()
        check_output(infer(a))
        assert status(a, "/v2/health/live") == 200
        r = wait_for(lambda: (x := httpx.get(a.url + "/v2/health/ready", timeout=5))
                     .status_code == 503 and x, 30, "A reports the store unreachable")
        assert "unreachable" in r.json()["error"], r.text
        # ... and down at start: not ready, retried with backoff
        c = replica(url, seaweed, tmp_path, "c")
        procs.append(c)
        c.start(wait=0)
        wait_for(lambda: status(c, "/v2/health/ready") == 503, 60, "C starts unready")
        assert status(c, "/v2/health/live") == 200
        seaweed.start()
        wait_for(lambda: status(a, "/v2/health/ready") == 200, 30, "A ready again")
        wait_for(lambda: status(c, "/v2/health/ready") == 200, 60, "C ready once S3 is up")
        check_output(infer(c))
    finally:
        if seaweed.proc is None:
            seaweed.start()
        for p in procs:
            p.stop()


def test_policy_and_reloads_from_a_bucket_filled_by_hand(bucket, pfx, seaweed, tmp_path):
    """A bucket written by hand (as `aws s3 sync` would): its config's version policy is
    applied; a config change reloads every version without downloading any again."""
    c = seaweed.client()
    for v in ("1", "2", "3"):
        for f in ("fc_flatten-symbol.json", "fc_flatten-0000.params"):
            c.put_object(Bucket=bucket, Key=f"{pfx}/fc/{v}/{f}", Body=(MX1 / f).read_bytes())
    c.put_object(Bucket=bucket, Key=f"{pfx}/fc/config.json",
                 Body=json.dumps({"version_policy": {"latest": {"num_versions": 2}}}).encode())
    with inproc_server(f"s3://{bucket}/{pfx}", store_poll_s=POLL_S,
                       store_cache_dir=str(tmp_path / "cache")) as srv:
        assert srv.core.registry.ready_versions("fc") == ["2", "3"]
        downloads = srv.core.store.cache.downloads
        assert downloads == 4                           # two files of each served version
        cfg = {"description": "reloaded", "version_policy": {"latest": {"num_versions": 2}}}
        r = httpx.post(f"{srv.url}/v2/repository/models/fc/load", timeout=60,
                       json={"parameters": {"config": json.dumps(cfg), "persist_config": True}})
        assert r.status_code == 200, r.text
        assert httpx.get(f"{srv.url}/v2/models/fc/config", timeout=5).json()[
            "description"] == "reloaded"
        check_output(infer(srv))
        assert srv.core.store.cache.downloads == downloads   # unchanged versions: cached
