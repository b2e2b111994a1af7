"""The report of bench/server/run.py: medians, the issue's targets from paired runs, the
terminal table and RESULTS.md (also re-rendered from a results JSON)."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from servers import HERE, Server
from workload import Case

# the issue's reference figures (2-core machine, wrk) -- shown when MMS cannot run here
ISSUE_REF = {
    "mms_mlp_json_c8": 1220.0, "mms_mlp_json_batched_c32": 2417.0, "mms_resnet_raw_c8": 51.0,
    "mlserver_mlp_c8": 1161.0, "fastapi_parse_only": 3300.0,
}


def med(case: Case, k: str) -> float | None:
    vals = [r[k] for r in case.results if r.get(k) is not None]
    return statistics.median(vals) if vals else None


def fmt(v: float | None, nd: int = 0) -> str:
    return "—" if v is None else f"{v:,.{nd}f}".replace(",", " ")


def find(cases: list[Case], server: str, model: str, body: str, batching: str, c: int):
    for x in cases:
        if (x.server, x.model, x.body, x.batching, x.conns) == (server, model, body, batching, c) \
                and x.results:
            return x
    return None


def paired(a: Case | None, b: Case | None, key: str = "rps", op=lambda x, y: x / y):
    """op(a_i, b_i) over the runs of a and b made in the same round (a few seconds apart):
    (median, min, max), or None."""
    if a is None or b is None:
        return None
    vals = [op(x[key], y[key]) for x, y in zip(a.results, b.results) if y[key]]
    return (statistics.median(vals), min(vals), max(vals)) if vals else None


def targets(cases: list[Case], mms_ok: bool, labels: dict[str, str] | None = None) -> list[dict]:
    """The issue's targets, each from paired runs (same round, back to back)."""
    out = []
    labels = labels or {}
    src = "MMS in this run" if mms_ok else "issue's reference figure, not measured here"

    def ratio_row(name, a, b, need, ref=None):
        if a is None:
            return
        if ref is not None:                       # no MMS here: the issue's figure
            v = med(a, "rps")
            out.append({"target": name, "value": f"{v:.0f} / {ref:.0f} = {v / ref:.2f}×",
                        "met": v >= need * ref})
            return
        pr = paired(a, b)
        if pr is None:
            return
        m, lo, hi = pr
        out.append({"target": name,
                    "value": f"{med(a, 'rps'):.0f} / {med(b, 'rps'):.0f} req/s; paired ratio "
                             f"{m:.2f}× (runs {lo:.2f}–{hi:.2f})",
                    "met": m >= need})

    for key in sorted({c.server for c in cases if c.server.startswith("hs")}):
        hs, w = labels.get(key, key), key[2:]
        mms_json8 = find(cases, "mms", "MLP", "JSON", "off", 8)
        for body in ("JSON", "binary"):
            ratio_row(f"MLP c=8 ≥ 2× MMS ({hs}, {body} body, batching on; vs MMS JSON, {src})",
                      find(cases, key, "MLP", body, "on", 8), mms_json8, 2.0,
                      None if mms_ok else ISSUE_REF["mms_mlp_json_c8"])
        ratio_row(f"ResNet-18 binary c=8 ≥ 1.2× MMS raw float32 ({hs}; {src})",
                  find(cases, key, "ResNet-18", "binary", "off", 8),
                  find(cases, "mms", "ResNet-18", "raw f32", "off", 8), 1.2,
                  None if mms_ok else ISSUE_REF["mms_resnet_raw_c8"])
        for model in ("ResNet-18", "MobileNet v2"):
            ratio_row(f"{model} uploaded without a config ≥ 0.95× the same with a config "
                      f"({hs}, binary, c=8)",
                      find(cases, key, f"{model} no config", "binary", "off", 8),
                      find(cases, key, model, "binary", "off", 8), 0.95)
        if mms_ok:
            for model, base, need in (("MobileNet v2", "MobileNet v2", 3.0),
                                      ("ResNet-18 INT8", "ResNet-18", 3.0),
                                      ("ResNet-18 no config", "ResNet-18", 1.2),
                                      ("MobileNet v2 no config", "MobileNet v2", 3.0)):
                ratio_row(f"{model} binary c=8 ≥ {need:g}× MMS raw float32 ({hs}; {src})",
                          find(cases, key, model, "binary", "off", 8),
                          find(cases, "mms", base, "raw f32", "off", 8), need)
        for model, c in (("MLP", 8), ("MLP", 32), ("ResNet-18", 8)):
            body = "JSON" if model == "MLP" else "binary"
            ratio_row(f"dynamic batching on costs ≤ 5 % vs off, {model} c={c} ({hs}, {body})",
                      find(cases, key, model, body, "on", c),
                      find(cases, key, model, body, "off", c), 0.95)
        echo = "echo1" if w == "1" else "echo2" if w == "2" else None
        a, e = find(cases, key, "MLP", "JSON", "on", 1), find(cases, echo or "", "MLP", "JSON", "-", 1)
        pr = paired(a, e, "p99_ms", lambda x, y: x - y)
        if pr is not None:
            m, lo, hi = pr
            out.append({"target": f"MLP p99 at c=1 within 2 ms of the echo floor ({hs} vs "
                                  f"{labels.get(echo, echo)}, JSON)",
                        "value": f"{med(a, 'p99_ms'):.2f} ms vs {med(e, 'p99_ms'):.2f} ms; paired "
                                 f"difference {m:+.2f} ms (runs {lo:+.2f} … {hi:+.2f})",
                        "met": m <= 2.0})
    if mms_ok:
        pr = paired(find(cases, "hs1", "MLP", "JSON", "on", 32), find(cases, "mms", "MLP", "JSON", "on", 32))
        if pr:
            out.append({"target": "(info) batched MLP c=32, hybridserve 1w vs MMS with its batching",
                        "value": f"paired ratio {pr[0]:.2f}× (runs {pr[1]:.2f}–{pr[2]:.2f})",
                        "met": None})
        pr = paired(find(cases, "hs1", "MLP", "JSON", "on", 8), find(cases, "echo1", "MLP", "JSON", "-", 8))
        if pr:
            out.append({"target": "(info) MLP JSON c=8, hybridserve 1w vs the FastAPI echo floor (1w)",
                        "value": f"paired ratio {pr[0]:.2f}× (runs {pr[1]:.2f}–{pr[2]:.2f})",
                        "met": None})
    return out


def render(cases: list[Case], servers: dict[str, Server], meta: dict, tgts: list[dict],
           mms_note: str | None, profiles: dict[str, str]) -> str:
    L = ["## Load benchmark (bench/server)", "",
         f"`python bench/server/run.py {meta.get('argv') or ''}`".replace(" `", "`") + " — "
         f"{meta['date']}, commit `{meta['commit']}`, {meta['cpu']} ({meta['cpus']} cores), "
         f"Python {meta['python']}, wrk `-t2 -cC --latency` (`-t1` at C=1), "
         f"{meta['duration']:g} s per run, loopback. Every server loads the same MXNet 1.9.1 "
         "export (the demo MLP 512-256-128-2 with its own weights; ResNet-18 v1, batch 1, "
         "FP32 1×3×224×224); every answer was checked against MXNet's output before timing.",
         "",
         f"Load average (1 min) at start: {meta['load_start']}, at end: {meta['load_end']}. "
         "The machine is shared: *other cores* is the CPU (in cores, of 2) that processes other "
         "than the server under test, wrk and this script used during the run; runs with "
         "more than ~0.3 there are disturbed; *server cores* is what the server under test "
         "itself used (wrk needs most of the rest: on 2 cores the load generator and the "
         "server share the machine). req/s, p50 and p99 are medians over the repeats "
         "(`runs` = repeats, all values in results.json).", ""]
    L += ["| server | model | body | batching | c | req/s | p50 ms | p99 ms | errors | runs (req/s) | load avg | other cores | server cores |",
          "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for c in cases:
        if not c.results:
            continue
        runs = ", ".join(f"{r['rps']:.0f}" for r in c.results)
        L.append(f"| {servers[c.server].label} | {c.model} | {c.body} | {c.batching} | {c.conns} | "
                 f"{fmt(med(c, 'rps'))} | {fmt(med(c, 'p50_ms'), 2)} | {fmt(med(c, 'p99_ms'), 2)} | "
                 f"{sum(r['errors'] for r in c.results)} | {runs} | "
                 f"{fmt(med(c, 'loadavg'), 1)} | {fmt(med(c, 'other_cores'), 2)} | "
                 f"{fmt(med(c, 'server_cores'), 2)} |")
    L += ["", "hybridserve: `mlp` has dynamic batching as in model_store/mlp/config.json "
          "(max_batch_size 64, 1 000 µs, preferred 8/16/32), `mlp_nobatch` none; binary = "
          "Triton binary tensor extension both ways. MMS (multi-model-server 1.1.11, the PyPI "
          "name of MXNet Model Server since 1.1): 2 Python workers per model, handler "
          "`bench/server/mms_handler.py` (SymbolBlock.imports + hybridize(static_alloc), v2 "
          f"JSON decoded by MMS, or raw float32 bytes), OMP_NUM_THREADS={meta['mms_omp']}; "
          f"batching = `batch_size={meta['mms_batch']}&max_batch_delay={meta['mms_delay']}` (ms) "
          "at registration. Echo = `bench/server/echo_app.py` (FastAPI route, orjson parse of "
          "the MLP JSON body into a float32 array, constant answer).", ""]
    if mms_note:
        L += [f"**MMS was not measured here**: {mms_note}", ""]
    L += ["### Targets (issue 5; reported, not asserted)", "",
          "Each ratio pairs runs of the same round (the cases of one model and concurrency run "
          "back to back), then takes the median, so slow drift of the machine's load cancels.", "",
          "| target | measured | met |", "|---|---|---|"]
    for t in tgts:
        met = "—" if t["met"] is None else ("yes" if t["met"] else "**no**")
        L.append(f"| {t['target']} | {t['value']} | {met} |")
    L += ["", "Issue's reference figures (2-core machine, wrk; **not measured here**): MMS 1.1.11 "
          "2 workers — MLP JSON 1 220 req/s at c=8, 2 417 at c=32 with batching, ResNet-18 raw "
          "float32 51 req/s at c=8; MLServer 1.7.1 — MLP 1 161 req/s at c=8; bare FastAPI "
          "parse-only — 3 300 req/s.", ""]
    if profiles:
        L += ["### Profiles (py-spy, hybridserve 1 worker; separate runs)", ""]
        for k, v in profiles.items():
            head = "\n".join(v.splitlines()[:22])
            L += [f"`{k}`", "", "```", head, "```", ""]
    return "\n".join(L) + "\n"


def print_table(cases: list[Case], servers: dict[str, Server]) -> None:
    w = max([len(s.label) for s in servers.values()] + [6]) + 2
    print(f"\n{'server':<{w}}{'model':<11}{'body':<9}{'batch':<6}{'c':>4}{'req/s':>10}"
          f"{'p50 ms':>9}{'p99 ms':>9}{'err':>5}{'load':>6}{'other':>7}  runs")
    for c in cases:
        if not c.results:
            continue
        print(f"{servers[c.server].label:<{w}}{c.model:<11}{c.body:<9}{c.batching:<6}{c.conns:>4}"
              f"{fmt(med(c, 'rps')):>10}{fmt(med(c, 'p50_ms'), 2):>9}{fmt(med(c, 'p99_ms'), 2):>9}"
              f"{sum(r['errors'] for r in c.results):>5}{fmt(med(c, 'loadavg'), 1):>6}"
              f"{fmt(med(c, 'other_cores'), 2):>7}  "
              + ", ".join(f"{r['rps']:.0f}" for r in c.results))


def rerender(jpath: Path, out: Path) -> int:
    """RESULTS.md again from a results JSON (e.g. after changing the report's wording)."""
    d = json.loads(jpath.read_text())
    cases, labels = [], {}
    for c in d["cases"]:
        key = c["id"].split("|")[0]
        labels[key] = c["server"]
        x = Case(key, c["model"], c["body"], c["batching"], c["conns"], "", "", "")
        x.results = c["runs"]
        cases.append(x)
    servers = {k: Server(k, v, [], 0) for k, v in labels.items()}
    meta = {"mms_omp": 1, "mms_batch": 16, "mms_delay": 1, "load_end": "?", **d["meta"]}
    profiles = {}
    for f in sorted((HERE / "profile").glob("*.summary.txt")) if d["meta"].get("profiled") else []:
        text = f.read_text()
        profiles[text.split(":", 1)[0]] = text
    tgts = targets(cases, "mms" in labels, labels)
    out.write_text(render(cases, servers, meta, tgts, d.get("mms_note"), profiles))
    print(f"wrote {out}")
    return 0
