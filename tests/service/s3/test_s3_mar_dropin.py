"""`.mar` archives dropped into a bucket (issue 29: same semantics as the directory store):
imported once by one of the replicas polling it, served by both, recorded in the bucket's
`.mar-imported.json`; a broken archive is refused once with the reason and nothing else."""
from __future__ import annotations

import json

import httpx
import pytest

from serverproc import ROOT, inproc_server, wait_for
from service.repository.drops import RECORD

pytestmark = pytest.mark.timeout(300)
MAR = ROOT / "tests" / "fixtures" / "mar"
POLL_S = 0.5


def _record(client, bucket: str, pfx: str) -> dict:
    try:
        body = client.get_object(Bucket=bucket, Key=f"{pfx}/{RECORD}")["Body"].read()
    except client.exceptions.NoSuchKey:
        return {}
    return json.loads(body)


def test_archive_dropped_into_the_bucket_is_imported_once(bucket, pfx, seaweed, tmp_path):
    c = seaweed.client()
    url = f"s3://{bucket}/{pfx}"
    with inproc_server(url, store_poll_s=POLL_S, store_cache_dir=str(tmp_path / "a")) as a, \
            inproc_server(url, store_poll_s=POLL_S, store_cache_dir=str(tmp_path / "b")) as b:
        c.put_object(Bucket=bucket, Key=f"{pfx}/vision.mar", Body=(MAR / "vision.mar").read_bytes())
        c.put_object(Bucket=bucket, Key=f"{pfx}/broken.mar", Body=b"PK\x03\x04 not a zip")
        for srv in (a, b):
            wait_for(lambda: httpx.get(f"{srv.url}/v2/models/vision/ready",
                                       timeout=5).status_code == 200, POLL_S + 10, "imported")
        wait_for(lambda: (_record(c, bucket, pfx).get("broken.mar") or {}).get("state")
                 == "refused", POLL_S + 10, "broken archive refused")
        record = _record(c, bucket, pfx)
        assert record["vision.mar"]["state"] == "imported"
        assert record["vision.mar"]["model"] == "vision"
        assert "zip" in record["broken.mar"]["error"]
        # one replica imported it: one version, the same on both, whatever polls follow
        wait_for(lambda: a.core.store.versions("vision") == ["1"], 5, "version listed")
        for srv in (a, b):
            assert srv.core.store.versions("vision") == ["1"]
        r = httpx.post(f"{b.url}/v2/models/vision/infer?classification=1", timeout=30,
                       content=(MAR / "image.png").read_bytes(),
                       headers={"Content-Type": "image/png"})
        assert r.status_code == 200, r.text
        # the archive stays where it was put; the failing one made no model
        keys = {o["Key"] for o in c.list_objects_v2(Bucket=bucket, Prefix=pfx + "/")["Contents"]}
        assert f"{pfx}/vision.mar" in keys and f"{pfx}/vision/1/" not in keys
        assert not any(k.startswith(f"{pfx}/broken/") for k in keys)
        assert httpx.get(f"{a.url}/v2/models/broken", timeout=5).status_code == 404
