"""The Kubernetes and KServe manifests of deploy/ against real schemas, offline:

- deploy/k8s/*: `kubernetes-validate --strict` (the Kubernetes OpenAPI schemas it ships; unknown
  fields are errors);
- deploy/kserve/*: KServe's own CRD schemas (tests/fixtures/kserve, source noted there) with
  jsonschema, made strict the way the API server's structural pruning is: an object schema with
  `properties` and without `x-kubernetes-preserve-unknown-fields` accepts no other field;
- every HTTP probe path is a route of the app, on the port the container serves.
"""
from __future__ import annotations

import copy
import json
import lzma
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KSERVE_SCHEMAS = ROOT / "tests" / "fixtures" / "kserve"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _strict(schema):
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _kserve_schema(name: str) -> dict:
    return json.loads(lzma.decompress((KSERVE_SCHEMAS / f"{name}.schema.json.xz").read_bytes()))


def test_k8s_manifests_pass_kubernetes_validate_strict():
    exe = shutil.which("kubernetes-validate", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("kubernetes-validate is in the [test] extra: bash scripts/setup.sh")
    files = sorted(str(p) for p in (DEPLOY / "k8s").glob("*.yaml") if p.name != "kustomization.yaml")
    r = subprocess.run([exe, "--strict", *files], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    passed = r.stdout.count(" passed for resource ")
    assert passed == sum(len(_docs(Path(f))) for f in files), r.stdout


@pytest.mark.parametrize("path,schema", [
    ("kserve/servingruntime.yaml", "servingruntimes-v1alpha1"),
    ("kserve/inferenceservice.yaml", "inferenceservices-v1beta1"),
])
def test_kserve_resources_match_kserve_crd_schemas(path, schema):
    crd = _kserve_schema(schema)
    (doc,) = _docs(DEPLOY / path)
    assert doc["apiVersion"] == f"{crd['group']}/{crd['version']}" and doc["kind"] == crd["kind"]
    validator = jsonschema.Draft7Validator(_strict(crd["openAPIV3Schema"]))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def test_strict_kserve_schema_rejects_a_misspelt_field():
    crd = _kserve_schema("servingruntimes-v1alpha1")
    (doc,) = _docs(DEPLOY / "kserve/servingruntime.yaml")
    bad = copy.deepcopy(doc)
    bad["spec"]["supportedModelFormat"] = bad["spec"].pop("supportedModelFormats")
    assert list(jsonschema.Draft7Validator(_strict(crd["openAPIV3Schema"])).iter_errors(bad))


def _containers() -> list[tuple[str, dict]]:
    out = []
    for path in [*(DEPLOY / "k8s").glob("*.yaml"), *(DEPLOY / "kserve").glob("*.yaml")]:
        for doc in _docs(path):
            spec = doc.get("spec", {})
            pod = spec.get("template", {}).get("spec", spec)           # Deployment or runtime
            for c in pod.get("containers", []) + pod.get("initContainers", []):
                out.append((f"{path.name}:{c['name']}", c))
            pred = spec.get("predictor", {})
            for c in pred.get("containers", []):
                out.append((f"{path.name}:{c['name']}", c))
    return out


def _route_exists(path: str) -> bool:
    from service.api.app import create_app
    from service.settings import Settings
    app = create_app(Settings(model_store=ROOT / "model_store", load_on_startup=False))
    return path in app.openapi()["paths"]


def test_probes_point_at_real_endpoints_on_the_served_port():
    probes = 0
    for where, c in _containers():
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            if kind not in c:
                continue
            get = c[kind]["httpGet"]
            assert _route_exists(get["path"]), (where, kind, get["path"])
            port = ports.get(get["port"], get["port"])
            assert port in ports.values(), (where, kind, port)
            args = c.get("args", []) + c.get("command", [])
            assert str(port) == args[args.index("--port") + 1], (where, kind, port)
            probes += 1
    assert probes >= 5


def test_server_containers_have_resources_security_and_the_store():
    servers = [(w, c) for w, c in _containers() if "service" in (c.get("args", []) + c.get("command", []))]
    assert len(servers) == 3, [w for w, _ in servers]     # k8s (volume), k8s (s3://), KServe
    for where, c in servers:
        assert {"requests", "limits"} <= set(c["resources"]), where
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"], where
        assert sc.get("readOnlyRootFilesystem") is True, where
        args = c.get("args", []) + c.get("command", [])
        store = args[args.index("--model-store") + 1]
        mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
        # the k8s Deployment mounts its PVC; KServe's storage initializer mounts /mnt/models;
        # a bucket store needs a writable read cache instead
        if store.startswith("s3://"):
            cache = args[args.index("--store-cache-dir") + 1]
            assert cache in mounts, (where, "the s3 read cache needs a writable mount", mounts)
        else:
            assert store in mounts or store == "/mnt/models", (where, store, mounts)
        assert "/tmp" in mounts, (where, "a read-only root needs a writable /tmp")
