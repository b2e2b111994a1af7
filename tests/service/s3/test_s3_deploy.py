"""The S3 deploy files (deploy/k8s/hybridserve-s3.yaml, deploy/kserve/inferenceservice-s3.yaml)
parse, name a store the server opens, and take credentials from the Secret they define."""
from __future__ import annotations

import yaml

from serverproc import ROOT
from service.repository.url import split_url

DEPLOY = ROOT / "deploy"


def docs(path) -> dict[str, dict]:
    return {d["kind"]: d for d in yaml.safe_load_all(path.read_text()) if d}


def test_k8s_s3_deployment():
    d = docs(DEPLOY / "k8s" / "hybridserve-s3.yaml")
    pod = d["Deployment"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    store = c["args"][c["args"].index("--model-store") + 1]
    assert split_url(store)[0] == "s3"
    refs = {e["valueFrom"]["secretKeyRef"]["key"] for e in c["env"] if "valueFrom" in e
            and e["valueFrom"]["secretKeyRef"]["name"] == d["Secret"]["metadata"]["name"]}
    assert refs == set(d["Secret"]["stringData"]) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    assert pod["serviceAccountName"] == d["ServiceAccount"]["metadata"]["name"]
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert c["args"][c["args"].index("--store-cache-dir") + 1] in mounts


def test_kserve_s3_service_account_form():
    d = docs(DEPLOY / "kserve" / "inferenceservice-s3.yaml")
    pred = d["InferenceService"]["spec"]["predictor"]
    assert pred["serviceAccountName"] == d["ServiceAccount"]["metadata"]["name"]
    assert {"name": d["Secret"]["metadata"]["name"]} in d["ServiceAccount"]["secrets"]
    assert pred["model"]["storageUri"].startswith("s3://")
    assert "serving.kserve.io/s3-endpoint" in d["Secret"]["metadata"]["annotations"]
