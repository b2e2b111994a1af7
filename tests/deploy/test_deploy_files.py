"""Static checks of the container and cluster files (Docker cannot run on the build machines).

Dockerfile and .dockerignore are checked as text; docker-compose.yml, deploy/prometheus.yml and
the Kubernetes/KServe manifests are parsed and cross-checked (replicas, shared volume, balancer
upstreams, scrape targets, probes, KServe schema fields); deploy/nginx.conf is validated for
real with `nginx -t`; `docker compose config`, `kubectl kustomize` and `promtool` run where
those clients exist and are skipped otherwise.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is in the [test] extra: pip install -e .[test]")

from nginx_util import DEPLOY_NGINX, NGINX, SKIP_REASON, nginx_test, site_for, \
    upstream_servers, write_main_conf  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
IMAGE = "hybridserve:0.1.0"
SERVE_CMD = ["python", "-m", "service", "--model-store", "/models", "--host", "0.0.0.0",
             "--port", "8000"]
TEST_ONLY = ("pytest", "tritonclient", "hypothesis", "pyyaml", "schemathesis")


# -- helpers -----------------------------------------------------------------------------------
def _no_duplicate_keys(node, where: str) -> None:
    """PyYAML silently keeps the last of two equal keys; a manifest with one is a bug."""
    if isinstance(node, yaml.MappingNode):
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        dup = {k for k in keys if keys.count(k) > 1 and k != "<<"}
        assert not dup, f"{where}: duplicate keys {dup} near line {node.start_mark.line + 1}"
        for _, v in node.value:
            _no_duplicate_keys(v, where)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _no_duplicate_keys(v, where)


def load_yaml_all(path: Path) -> list:
    text = path.read_text()
    for node in yaml.compose_all(text):
        _no_duplicate_keys(node, path.name)
    return [d for d in yaml.safe_load_all(text) if d is not None]


def load_yaml(path: Path):
    (doc,) = load_yaml_all(path)
    return doc


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ins, _, args = line.partition(" ")
            out.append((ins.upper(), args.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    ins = dockerfile_instructions()
    last_from = max(i for i, (k, _) in enumerate(ins) if k == "FROM")
    return ins[last_from:]


def compose() -> dict:
    return load_yaml(ROOT / "docker-compose.yml")


def replicas(c: dict) -> list[str]:
    return sorted(n for n, s in c["services"].items() if s.get("image") == IMAGE)


# -- Dockerfile ----------------------------------------------------------------------------------
def test_dockerfile_base_is_slim_python_311():
    ins = dockerfile_instructions()
    args = dict(a.split("=", 1) for k, a in ins if k == "ARG" and "=" in a)
    for k, a in ins:
        if k == "FROM":
            image = a.split()[0]
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
            # (or, without a registry, scripts/build_base_image.sh's stand-in under this name)
            assert re.fullmatch(r"python:3\.11-slim(-\w+)?", image), image


def test_dockerfile_runs_as_non_root_user():
    users = [a for k, a in final_stage() if k == "USER"]
    assert users, "the final stage needs a USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0"), user
    # numeric, so Kubernetes' runAsNonRoot can verify it; the manifests use the same uid
    assert user.isdigit(), "use a numeric uid"
    pod = load_yaml_all(DEPLOY / "k8s" / "hybridserve.yaml")[1]["spec"]["template"]["spec"]
    assert str(pod["securityContext"]["runAsUser"]) == user


def test_dockerfile_installs_runtime_deps_only():
    code = "\n".join(a for _, a in dockerfile_instructions())
    runs = [a for k, a in dockerfile_instructions() if k == "RUN" and "pip install" in a]
    # exactly the runtime lock, hash-checked, then the package alone (nothing re-resolved)
    assert any(re.search(r"pip install --require-hashes -r requirements\.lock(\s|$)", r) for r in runs), runs
    assert any(re.search(r"pip install --no-deps \.(\s|$)", r) for r in runs), runs
    for r in runs:
        assert "[test" not in r and "-e " not in r and "requirements-test" not in r, r
    for dep in TEST_ONLY:
        assert dep not in code.lower(), f"test dependency {dep} in the image"
    # and the runtime dependency list of the package itself carries no test tool
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"]:
        name = re.split(r"[\s<>=!\[;~]", dep)[0].lower()
        assert name not in TEST_ONLY, dep
    # the test extra exists, but the image never names it
    assert "test" in project["optional-dependencies"]


def test_dockerfile_builds_offline_with_either_builder():
    # a `# syntax=` line makes BuildKit pull a frontend image: fails without a registry
    assert not re.search(r"^#\s*syntax\s*=", (ROOT / "Dockerfile").read_text(), re.M | re.I)


def test_dockerfile_store_volume_port_healthcheck_cmd():
    final = final_stage()
    kinds = {k for k, _ in final}
    assert {"VOLUME", "EXPOSE", "HEALTHCHECK", "CMD", "USER"} <= kinds
    copies = [a for k, a in final if k == "COPY"]
    assert any(re.search(r"(^|\s)model_store/?\s+/models/?$", a) for a in copies), copies
    assert any("--chown=" in a for a in copies if "model_store" in a), \
        "the store must belong to the server user (uploads write there)"
    vol = next(a for k, a in final if k == "VOLUME")
    assert "/models" in (json.loads(vol) if vol.startswith("[") else vol.split())
    assert next(a for k, a in final if k == "EXPOSE").split() == ["8000", "8001"]   # HTTP, gRPC
    hc = next(a for k, a in final if k == "HEALTHCHECK")
    assert "/v2/health/ready" in hc and "urllib" in hc and "curl" not in hc
    assert "127.0.0.1:8000" in hc
    cmd = next(a for k, a in final if k == "CMD")
    assert json.loads(cmd) == SERVE_CMD  # exec form; --host 0.0.0.0: loopback is the default
    assert not any(k == "ENTRYPOINT" for k, _ in final)  # manifests override the command


def test_dockerignore_keeps_context_to_what_is_copied():
    lines = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert lines[0] == "*", "allow-list: ignore everything, then re-include"
    allowed = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    sources = set()
    for k, a in dockerfile_instructions():
        if k == "COPY" and "--from=" not in a:
            parts = [p for p in a.split() if not p.startswith("--")]
            sources |= {p.rstrip("/") for p in parts[:-1]}
    assert sources <= allowed, f"COPY sources not in the build context: {sources - allowed}"
    for never in ("tests", "bench", ".git", ".venv", ".mxnet-venvs", "deploy"):
        assert never not in allowed
    for src in sources:
        assert (ROOT / src).exists(), src


# -- docker-compose.yml --------------------------------------------------------------------------
def test_compose_replicas_share_one_store_volume():
    c = compose()
    reps = replicas(c)
    assert len(reps) >= 2, reps
    vols = set()
    for r in reps:
        svc = c["services"][r]
        mounts = [v for v in svc["volumes"] if str(v).split(":")[1:2] == ["/models"]]
        assert len(mounts) == 1, (r, svc["volumes"])
        vols.add(mounts[0].split(":")[0])
        assert svc.get("command") in (None, SERVE_CMD)  # the image's CMD binds 0.0.0.0:8000
        hc = " ".join(svc["healthcheck"]["test"])
        assert "/v2/health/ready" in hc
    assert len(vols) == 1, f"replicas must share ONE volume, got {vols}"
    (vol,) = vols
    assert not vol.startswith((".", "/")), "a named volume, not a bind mount"
    assert vol in c["volumes"]


def test_compose_nginx_and_prometheus_cover_every_replica():
    c = compose()
    reps = replicas(c)
    expected = {f"{r}:8000" for r in reps}
    nginx = c["services"]["nginx"]
    assert any(v.startswith("./deploy/nginx.conf:") for v in nginx["volumes"])
    assert set(nginx["depends_on"]) == set(reps)
    assert set(upstream_servers(DEPLOY_NGINX.read_text())) == expected
    prom = c["services"]["prometheus"]
    assert any(v.startswith("./deploy/prometheus.yml:") for v in prom["volumes"])
    cfg = load_yaml(DEPLOY / "prometheus.yml")
    jobs = [j for j in cfg["scrape_configs"] if j.get("metrics_path", "/metrics") == "/metrics"]
    targets = {t for j in jobs for sc in j["static_configs"] for t in sc["targets"]}
    assert targets == expected


def test_docker_compose_config_where_the_client_has_compose():
    docker = shutil.which("docker")
    if not docker:
        pytest.skip("no docker client on this machine")
    v = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=60)
    if v.returncode != 0:
        pytest.skip("this docker client has no compose plugin (`docker compose version` fails)")
    r = subprocess.run([docker, "compose", "-f", str(ROOT / "docker-compose.yml"), "config",
                        "--quiet"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr


# -- nginx ---------------------------------------------------------------------------------------
def test_nginx_conf_retries_next_upstream_idempotent_safely():
    conf = DEPLOY_NGINX.read_text()
    code = "\n".join(ln.split("#", 1)[0] for ln in conf.splitlines())
    server_level = re.search(r"^\s*proxy_next_upstream\s+([^;]+);", code, re.M).group(1).split()
    assert {"error", "timeout", "http_502", "http_503"} <= set(server_level)
    assert "non_idempotent" not in server_level  # an upload must never be replayed
    # only the pure endpoints (infer, inspect) may be replayed after reaching a replica
    for loc, body in re.findall(r"location\s+([^{]+)\{([^}]*)\}", code):
        if "non_idempotent" in body:
            assert "infer" in loc and "repository" not in loc, loc
    assert re.search(r"proxy_next_upstream_tries\s+[2-9];", code)
    assert re.search(r"proxy_request_buffering\s+on;", code)  # a buffered body can be replayed
    size = re.search(r"client_max_body_size\s+(\d+)([kmg]?);", code)
    mib = int(size.group(1)) * {"": 1 / 2**20, "k": 1 / 1024, "m": 1, "g": 1024}[size.group(2)]
    assert mib >= 1024, "uploads up to the server's 1 GiB max_upload_bytes must pass"


@pytest.mark.skipif(NGINX is None, reason=SKIP_REASON)
def test_nginx_t_accepts_the_config(tmp_path):
    # compose service names only resolve inside the compose network: point them at loopback
    n = len(upstream_servers(DEPLOY_NGINX.read_text()))
    site = site_for([f"127.0.0.1:{18000 + i}" for i in range(n)], "127.0.0.1:18080")
    r = nginx_test(write_main_conf(tmp_path, site))
    assert r.returncode == 0, r.stderr
    assert "test is successful" in r.stderr


# -- Prometheus ----------------------------------------------------------------------------------
def test_promtool_where_installed():
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    r = subprocess.run([promtool, "check", "config", "--syntax-only",
                        str(DEPLOY / "prometheus.yml")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# -- KServe --------------------------------------------------------------------------------------
# Field names from KServe's API reference (serving.kserve.io/v1alpha1 ServingRuntimeSpec,
# SupportedModelFormat; v1beta1 PredictorSpec/ModelSpec, ModelFormat); a typo here would be
# silently pruned by the API server, so unknown fields fail the test.
SR_SPEC = {"supportedModelFormats", "protocolVersions", "containers", "multiModel", "disabled",
           "annotations", "labels", "nodeSelector", "affinity", "tolerations", "volumes",
           "imagePullSecrets", "replicas", "builtInAdapter", "storageHelper", "grpcEndpoint",
           "grpcDataEndpoint", "httpDataEndpoint", "workerSpec", "hostIPC"}
SR_FORMAT = {"name", "version", "autoSelect", "priority"}
PROTOCOLS = {"v1", "v2", "grpc-v1", "grpc-v2"}
MODEL_SPEC = {"modelFormat", "runtime", "protocolVersion", "storageUri", "storage", "args",
              "command", "env", "envFrom", "image", "resources", "ports", "readinessProbe",
              "livenessProbe", "startupProbe", "securityContext", "volumeMounts", "name",
              "runtimeVersion", "imagePullPolicy", "workingDir", "lifecycle"}
STORAGE_SCHEMES = ("s3://", "gs://", "pvc://", "https://", "http://", "hdfs://", "webhdfs://",
                   "oci://", "hf://", "abfs://", "azure://")


def _flag(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_kserve_serving_runtime_schema():
    sr = load_yaml(DEPLOY / "kserve" / "servingruntime.yaml")
    assert sr["apiVersion"] == "serving.kserve.io/v1alpha1"
    assert sr["kind"] in ("ServingRuntime", "ClusterServingRuntime")
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", sr["metadata"]["name"])
    spec = sr["spec"]
    assert set(spec) <= SR_SPEC, set(spec) - SR_SPEC
    assert spec["protocolVersions"] == ["v2", "grpc-v2"]
    fmts = spec["supportedModelFormats"]
    assert {f["name"] for f in fmts} == {"mxnet"}
    for f in fmts:
        assert set(f) <= SR_FORMAT and isinstance(f["name"], str)
        assert isinstance(f.get("version", ""), str)  # "1", not 1
        assert isinstance(f.get("autoSelect", False), bool)
    (c,) = spec["containers"]
    assert c["name"] == "kserve-container" and c["image"] == IMAGE
    cmd = c.get("command", []) + c["args"]
    assert cmd[:3] == ["python", "-m", "service"]
    assert _flag(cmd, "--model-store") == "/mnt/models"  # where KServe puts storageUri
    assert _flag(cmd, "--host") == "0.0.0.0"
    port = int(_flag(cmd, "--port"))
    assert int(_flag(cmd, "--grpc-port")) not in (0, port)
    assert [p["containerPort"] for p in c["ports"]] == [port]
    assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": port}
    assert c["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert c["securityContext"]["runAsNonRoot"] is True
    assert spec["annotations"]["prometheus.kserve.io/path"] == "/metrics"


def test_kserve_inference_service_uses_the_runtime():
    sr = load_yaml(DEPLOY / "kserve" / "servingruntime.yaml")
    isvc = load_yaml(DEPLOY / "kserve" / "inferenceservice.yaml")
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1"
    assert isvc["kind"] == "InferenceService"
    model = isvc["spec"]["predictor"]["model"]
    assert set(model) <= MODEL_SPEC, set(model) - MODEL_SPEC
    assert model["runtime"] == sr["metadata"]["name"]
    assert model["protocolVersion"] in PROTOCOLS & set(sr["spec"]["protocolVersions"])
    fmt = model["modelFormat"]
    assert set(fmt) <= {"name", "version"}
    assert (fmt["name"], fmt.get("version")) in {
        (f["name"], f.get("version")) for f in sr["spec"]["supportedModelFormats"]}
    assert model["storageUri"].startswith(STORAGE_SCHEMES), model["storageUri"]
    pred = isvc["spec"]["predictor"]
    assert pred.get("minReplicas", 1) <= pred.get("maxReplicas", pred.get("minReplicas", 1))


# -- plain Kubernetes ----------------------------------------------------------------------------
def test_k8s_deployment_service_and_shared_store():
    docs = {d["kind"]: d for d in load_yaml_all(DEPLOY / "k8s" / "hybridserve.yaml")}
    assert set(docs) == {"PersistentVolumeClaim", "Deployment", "Service"}
    pvc, dep, svc = docs["PersistentVolumeClaim"], docs["Deployment"], docs["Service"]
    assert pvc["apiVersion"] == "v1" and pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert dep["apiVersion"] == "apps/v1" and dep["spec"]["replicas"] >= 2
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    vols = {v["name"]: v for v in pod["volumes"]}
    (c,) = pod["containers"]
    assert c["image"] == IMAGE
    assert (c.get("command", []) + c["args"]) == SERVE_CMD
    store_mounts = [m for m in c["volumeMounts"] if m["mountPath"] == "/models"]
    assert len(store_mounts) == 1
    claim = vols[store_mounts[0]["name"]]["persistentVolumeClaim"]["claimName"]
    assert claim == pvc["metadata"]["name"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"http": 8000, "grpc": 8001}
    assert c["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert c["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    for init in pod.get("initContainers", []):  # the seeding container writes the same claim
        assert {vols[m["name"]]["persistentVolumeClaim"]["claimName"]
                for m in init["volumeMounts"]} == {claim}
    assert svc["spec"]["selector"].items() <= labels.items()
    assert {p["targetPort"] for p in svc["spec"]["ports"]} <= set(ports) | set(ports.values())


def test_kubectl_kustomize_builds_the_manifests():
    kubectl = shutil.which("kubectl")
    if not kubectl:
        pytest.skip("kubectl not installed (offline `kubectl kustomize` needs no cluster)")
    for d, kinds in (("k8s", {"PersistentVolumeClaim", "Deployment", "Service"}),
                     ("kserve", {"ServingRuntime", "InferenceService"})):
        r = subprocess.run([kubectl, "kustomize", str(DEPLOY / d)], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert {doc["kind"] for doc in yaml.safe_load_all(r.stdout) if doc} == kinds


# -- scripts -------------------------------------------------------------------------------------
def test_install_system_deps_script_is_valid_bash():
    script = ROOT / "scripts" / "install_system_deps.sh"
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    text = script.read_text()
    assert "nginx" in text and "wrk" in text and "apt-get install" in text


def test_readme_documents_each_way_to_run():
    text = (DEPLOY / "README.md").read_text()
    for needle in ("docker compose up", "docker build", "kubectl apply", "nginx",
                   "tests/cluster", "install_system_deps.sh", "What was run where"):
        assert needle in text, needle
    # every command quoted in the README that names a file names one that exists
    for path in set(re.findall(r"\b(deploy/[\w./-]+\.(?:ya?ml|conf))\b", text)):
        assert (ROOT / path).is_file(), path
