# Convenience targets; each maps to a script so machines without make work the same way.
.PHONY: setup serve test interop bench bench-server demo-models lock base-image image

setup:
	bash scripts/setup.sh

serve:
	bash scripts/serve.sh

test:
	bash scripts/test.sh

interop:            ## real-MXNet cross-checks (builds the MXNet venvs on first use)
	bash tests/interop/run_all.sh

bench:              ## framework benchmarks side by side with MXNet 1.9.1 (when its venv exists)
	.venv/bin/python bench/mlp_bench.py
	.venv/bin/python bench/zoo_bench.py --models resnet18_v1,resnet50_v1
	.venv/bin/python bench/gluoncv_bench.py
	.venv/bin/python bench/detection_ops_bench.py

demo-models:        ## rebuild the demo models of model_store/ with hybridserve itself
	.venv/bin/python -m service.cli.demo model_store

bench-server:       ## server load benchmark (wrk) vs MMS, loopback only
	.venv/bin/python bench/server/run.py

lock:               ## regenerate requirements.lock + requirements-test.lock from pyproject.toml
	bash scripts/lock.sh

base-image:         ## no registry here: a python:3.11-slim-bookworm stand-in made by mmdebstrap
	bash scripts/build_base_image.sh

image:              ## the server image (needs a running Docker engine; docs/container.md)
	docker build -t hybridserve:0.1.0 \
	  --build-arg REVISION=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown) \
	  --build-arg CREATED=$$(date -u +%Y-%m-%dT%H:%M:%SZ) .
