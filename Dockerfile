# hybridserve model server image.
#   make image            (here: also makes the base without a registry; see docs/container.md)
#   docker build -t hybridserve:0.1.0 .        (a machine that can pull python:3.11-slim-bookworm)
#   docker run -p 127.0.0.1:8000:8000 -v hybridserve-models:/models hybridserve:0.1.0
# No `# syntax=` line: it makes BuildKit pull a frontend image, which fails offline; this file
# builds the same with BuildKit and with the legacy builder.
# Two stages: the build stage makes a venv holding exactly requirements.lock (hash-checked) plus
# hybridserve itself, never the test extras; the final stage gets that venv and the default
# model store, and nothing else (no source tree, no tests, no build cache).
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python3 -m venv /opt/venv
WORKDIR /src
# the dependencies first: this layer is reused until the lock changes
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --require-hashes -r requirements.lock
# README.md is the package's `readme` in pyproject.toml, so the build needs it
COPY pyproject.toml README.md ./
COPY framework ./framework
COPY service ./service
RUN /opt/venv/bin/pip install --no-deps . \
 && /opt/venv/bin/python -c "import service, framework" \
 && /opt/venv/bin/pip check

FROM ${BASE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="hybridserve" \
      org.opencontainers.image.description="MXNet Gluon models served over the Open Inference Protocol v2 (HTTP :8000, gRPC :8001)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
# A fixed numeric uid/gid: Kubernetes' runAsNonRoot can only verify a numeric USER.
RUN groupadd --system --gid 10001 hybridserve \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
            --shell /usr/sbin/nologin hybridserve
COPY --from=build /opt/venv /opt/venv
# The default store, owned by the server user: uploads write into it, and some exported files
# are mode 0600, which the non-root user could not read if they stayed root's.
COPY --chown=10001:10001 model_store/ /models/
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HYBRIDSERVE_MODEL_STORE=/models \
    HYBRIDSERVE_GRPC_PORT=8001
WORKDIR /tmp
USER 10001:10001
# An empty named volume mounted here is seeded by Docker with the demo store above;
# docker-compose.yml shares one such volume between all replicas.
VOLUME ["/models"]
# HTTP/REST, and gRPC (HYBRIDSERVE_GRPC_PORT; a server without gRPC ignores it)
EXPOSE 8000 8001
# urllib raises on a non-2xx answer or a refused connection, so the exit code is the verdict
# (no curl in a slim image). The port matches CMD; Kubernetes ignores HEALTHCHECK and uses
# the probes in deploy/k8s and deploy/kserve instead.
HEALTHCHECK --interval=10s --timeout=4s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/v2/health/ready', timeout=3)"]
# The server binds to loopback unless told otherwise (issue 7): a container must say 0.0.0.0.
CMD ["python", "-m", "service", "--model-store", "/models", "--host", "0.0.0.0", "--port", "8000"]
