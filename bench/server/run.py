#!/usr/bin/env python
"""Load benchmark of the model server, side by side with MXNet Model Server, in one run.

    python bench/server/run.py [--duration 10s] [--quick] [--repeat N] [--profile] [--no-mms]

What it does (everything on 127.0.0.1, every process it starts is stopped by PID at the end):

1. Exports the models once with real MXNet 1.9.1 (``bench/server/mx_export.py`` in
   ``.mxnet-venvs/mxnet-1.9.1``): the demo MLP (512-256-128-2, the demo model's own weights,
   re-exported in the 1.x format) and ResNet-18 v1.  Both servers load these SAME files.
2. Starts the servers, each on a free loopback port: hybridserve with 1 and 2 uvicorn workers
   (store: ``mlp`` with dynamic batching as in model_store/mlp/config.json, ``mlp_nobatch``
   without, ``resnet18``), the FastAPI echo floor (``echo_app.py``) with 1 and 2 workers, and
   MXNet Model Server (multi-model-server 1.1.11, Java frontend, 2 Python workers per model;
   ``.mxnet-venvs/mms-1.1.11``) serving the same exports through model archives made with
   ``model-archiver`` and ``mms_handler.py``; ``mlp_b`` is the MLP registered with MMS batching.
3. Checks one answer of every (server, workload) against MXNet's own output, warms each, then
   runs ``wrk --latency`` with ``post.lua`` (``-t2 -cC``; ``-t1`` at C=1) for every case, all
   cases interleaved per pass so drift of the machine's load hits every server alike; repeats
   (``--repeat``) and re-runs cases whose repeats disagree by more than 25 %.
4. Prints a table and writes ``RESULTS.md`` (+ ``results.json``) next to this file: median
   req/s, p50/p99 per case, the 1-minute load average and the CPU that other processes used
   during each run, and the issue's targets (reported, not asserted).

``--profile`` additionally samples the 1-worker hybridserve process with py-spy under a few of
the loads (separate runs, not in the table) and writes stack summaries to ``profile/``.

Needs: ``wrk`` (``bash scripts/install_system_deps.sh``), the project venv (``.venv``), the
MXNet venv (``make interop`` builds it), and for the MMS columns Java 11+ and
``.mxnet-venvs/mms-1.1.11`` (``bash bench/server/setup_mms.sh``).  Without
MMS the issue's MMS figures are shown, labelled as not measured here.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from pyspy import profile
from report import print_table, render, rerender, targets
from servers import (HERE, ROOT, Server, echo, hybridserve, loadavg, log, mms_available,
                     mms_register, mms_server, source_dir, stop_all, use_source)
from workload import build_store, check_answer, export_models, group, make_cases, write_bodies
from wrk import run_wrk


def parse_duration(s: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", s.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"bad duration {s!r} (e.g. 10s)")
    v = float(m[1])
    return v / 1000 if m[2] == "ms" else v * 60 if m[2] == "m" else v


# -- main ----------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=parse_duration, default=None, help="per wrk run (10s)")
    ap.add_argument("--quick", action="store_true", help="3 s runs, 1 repeat, no re-runs")
    ap.add_argument("--repeat", type=int, default=None, help="passes over all cases (2)")
    ap.add_argument("--no-mms", action="store_true", help="skip MMS (show the issue's figures)")
    ap.add_argument("--servers", default="hs1,hs2,mms,echo1,echo2",
                    help="subset of hs1,hs2,mms,echo1,echo2")
    ap.add_argument("--only", default="", help="run only cases whose id contains this")
    ap.add_argument("--profile", action="store_true", help="py-spy the 1-worker hybridserve")
    ap.add_argument("--mms-omp-threads", type=int, default=1,
                    help="OMP_NUM_THREADS of MMS's workers (2 workers x 1 = the 2 cores)")
    ap.add_argument("--mms-batch-size", type=int, default=16)
    ap.add_argument("--mms-batch-delay-ms", type=int, default=1)
    ap.add_argument("--hs-env", action="append", default=[], metavar="K=V",
                    help="extra HYBRIDSERVE_* environment for the hybridserve servers")
    ap.add_argument("--variant", action="append", default=[], metavar="WORKERS:K=V[,K=V]",
                    help="one more hybridserve server (same cases) with this environment, e.g. "
                         "1:HYBRIDSERVE_BLAS_THREADS=1 (repeatable)")
    ap.add_argument("--git-ref", default=None,
                    help="run service/ and framework/ from `git archive REF` (e.g. HEAD) instead "
                         "of the working tree, so edits in progress cannot change the numbers")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="only re-write --out from a results JSON of an earlier run")
    args = ap.parse_args()
    if args.render:
        return rerender(args.render, args.out)
    seconds = args.duration or (3.0 if args.quick else 10.0)
    repeat = args.repeat or (1 if args.quick else 2)
    wanted = [s.strip() for s in args.servers.split(",") if s.strip()]
    if args.no_mms and "mms" in wanted:
        wanted.remove("mms")

    if shutil.which("wrk") is None:
        print("wrk not found: install it with `bash scripts/install_system_deps.sh` "
              "(Debian package `wrk`)", file=sys.stderr)
        return 2
    def _interrupt(*_):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)

    tmp = Path(tempfile.mkdtemp(prefix="hsb-", dir="/tmp"))   # short: MMS unix socket paths
    if args.git_ref:
        use_source(tmp / "src")
        source_dir().mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.git_ref, "service",
                               "framework", "model_store"], capture_output=True, check=True,
                              timeout=120).stdout
        subprocess.run(["tar", "-x", "-C", str(source_dir())], input=arch, check=True, timeout=120)
    servers: dict[str, Server] = {}
    mms_note = None
    meta = {"date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "duration": seconds,
            "repeat": repeat, "python": platform.python_version(), "cpus": os.cpu_count(),
            "cpu": _cpu_name(), "commit": _commit(args.git_ref), "load_start": loadavg(),
            "mms_omp": args.mms_omp_threads, "mms_batch": args.mms_batch_size,
            "mms_delay": args.mms_batch_delay_ms, "profiled": args.profile,
            "argv": " ".join(sys.argv[1:])}
    profiles: dict[str, str] = {}
    try:
        log(f"exporting the models with MXNet 1.9.1 into {tmp}")
        export_models(tmp)
        demo_cfg = json.loads((source_dir() / "model_store/mlp/config.json").read_text())
        store = build_store(tmp, demo_cfg)
        bodies, refs = write_bodies(tmp)
        hs_env = dict(kv.split("=", 1) for kv in args.hs_env)

        if "mms" in wanted:
            why = mms_available()
            if why:
                mms_note = why
                wanted.remove("mms")
        makers = {"hs1": lambda: hybridserve("hs1", 1, store, tmp, hs_env),
                  "hs2": lambda: hybridserve("hs2", 2, store, tmp, hs_env),
                  "echo1": lambda: echo("echo1", 1, tmp), "echo2": lambda: echo("echo2", 2, tmp),
                  "mms": lambda: mms_server(tmp, args.mms_omp_threads)}
        for k, v in enumerate(args.variant):
            w, _, kvs = v.partition(":")
            venv = dict(hs_env, **dict(kv.split("=", 1) for kv in kvs.split(",") if kv))
            key = f"hsv{k}"
            makers[key] = (lambda key=key, w=int(w), venv=venv, kvs=kvs:
                           hybridserve(key, w, store, tmp, venv, f" ({kvs})"))
            wanted.append(key)
        for key in wanted:
            srv = makers[key]()
            log(f"starting {srv.label} on port {srv.port}")
            srv.start()
            servers[key] = srv
        for key, srv in list(servers.items()):
            try:
                srv.wait_ready(240)
                if key == "mms":
                    mms_register(srv, args.mms_batch_size, args.mms_batch_delay_ms)
                log(f"{srv.label} ready (pids {srv.pids()})")
            except Exception as e:  # noqa: BLE001
                if key != "mms":
                    raise
                mms_note = f"MMS did not start: {e}"[:3000]
                log(mms_note)
                srv.stop()
                del servers[key]

        cases = [c for c in make_cases(list(servers), args.quick) if args.only in c.id]
        # correctness first, then warm every case at its own concurrency: hybridserve's compiled
        # specialisations are per thread and per batch size, so a batching server keeps
        # compiling until it has seen the batch sizes of that load on each of its threads
        for c in cases:
            srv = servers[c.server]
            log(f"check {c.id}: {check_answer(srv, c, bodies, refs)}")
            r = run_wrk(srv, c, bodies, min(seconds, 2.0) if c.model == "MLP" else 8.0)
            log(f"warm  {c.id}: {r['rps']:.0f} req/s")
        for rep in range(repeat):
            for c in cases:
                c.results.append(run_wrk(servers[c.server], c, bodies, seconds))
                r = c.results[-1]
                log(f"pass {rep + 1}/{repeat} {c.id}: {r['rps']:.0f} req/s p50 {r['p50_ms']:.2f} "
                    f"p99 {r['p99_ms']:.2f} ms, errors {r['errors']}, load {r['loadavg']:.1f}, "
                    f"other {r['other_cores']:.2f} cores")
        if repeat >= 2 and not args.quick:
            for extra in range(2):
                # a noisy case re-runs with its whole group, so paired ratios stay paired
                noisy = {group(c) for c in cases
                         if max(r["rps"] for r in c.results) > 1.25 * min(r["rps"] for r in c.results)}
                if not noisy:
                    break
                rerun = [c for c in cases if group(c) in noisy]
                log(f"re-running {len(rerun)} case(s) of {len(noisy)} noisy group(s)")
                for c in rerun:
                    c.results.append(run_wrk(servers[c.server], c, bodies, seconds))
                    r = c.results[-1]
                    runs = ", ".join(f"{x['rps']:.0f}" for x in c.results)
                    log(f"re-run {c.id}: {r['rps']:.0f} req/s (runs: {runs})")
        if args.profile:
            profiles = profile(servers, cases, bodies, min(seconds, 8.0), HERE / "profile",
                               tmp if not args.keep_tmp else tmp)
        meta["load_end"] = loadavg()
        mms_ok = "mms" in servers
        tgts = targets(cases, mms_ok, {k: v.label for k, v in servers.items()})
        print_table(cases, servers)
        print()
        for t in tgts:
            met = "info" if t["met"] is None else ("MET " if t["met"] else "MISS")
            print(f"[{met}] {t['target']}: {t['value']}")
        md = render(cases, servers, meta, tgts, mms_note, profiles)
        args.out.write_text(md)
        jpath = args.out.with_name(args.out.stem.lower() + ".json")
        jpath.write_text(json.dumps(
            {"meta": meta, "mms_note": mms_note, "targets": tgts,
             "cases": [{"id": c.id, "server": servers[c.server].label, "model": c.model,
                        "body": c.body, "batching": c.batching, "conns": c.conns,
                        "runs": c.results} for c in cases]}, indent=1))
        log(f"wrote {args.out} and {jpath.name}")
        return 0
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        stop_all()
        if args.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _commit(ref: str | None) -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref or "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        if ref:
            return out
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "service",
                                "framework"], capture_output=True, text=True, timeout=10).stdout
        return out + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
