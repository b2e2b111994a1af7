"""The console's JavaScript modules, run in Chromium: .npy parsing against NumPy's writer,
the binary tensor codec against the server, and the layered layout's invariants on real
graphs."""
from __future__ import annotations

import base64
import io

import httpx
import numpy as np
import pytest

from .uihelpers import FIXTURES, new_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


@pytest.fixture(scope="module")
def js(browser, ui_server):
    ctx, page, errors = new_page(browser)
    page.goto(ui_server.url + "/ui/#/upload")
    page.wait_for_selector("#dropzone")
    yield page
    errors.check()
    ctx.close()


def _npy(arr) -> str:
    buf = io.BytesIO()
    np.save(buf, arr)
    return base64.b64encode(buf.getvalue()).decode()


PARSE = """async (b64) => {
  const { parseNpy, toNumbers } = await import('./static/js/tensor.js');
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const t = parseNpy(bytes.buffer);
  return { datatype: t.datatype, shape: t.shape, values: Array.from(toNumbers(t)) };
}"""


@pytest.mark.parametrize("arr,datatype", [
    (np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7, "FP32"),
    (np.linspace(-1, 1, 10).reshape(5, 2), "FP64"),
    (np.arange(-6, 6, dtype=np.int64).reshape(3, 4), "INT64"),
    (np.arange(12, dtype=np.int32).reshape(3, 4), "INT32"),
    (np.arange(8, dtype=np.uint8), "UINT8"),
    (np.array([[1.5, -2.25], [np.inf, 0.0]], dtype=np.float16), "FP16"),
    (np.arange(6, dtype=">f4").reshape(2, 3), "FP32"),                     # big-endian
    (np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)), "FP32"),
    (np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)), "FP64"),
    (np.array([True, False, True]), "BOOL"),
    (np.float32(3.5).reshape(()), "FP32"),                                 # 0-d
])
def test_parse_npy_like_numpy(js, arr, datatype):
    got = js.evaluate(PARSE, _npy(arr))
    assert got["datatype"] == datatype
    assert got["shape"] == list(arr.shape)
    want = np.ascontiguousarray(arr).astype(np.float64).ravel()
    np.testing.assert_array_equal(np.array(got["values"], dtype=np.float64), want)


def test_parse_npy_rejects_garbage(js):
    err = js.evaluate("""async () => {
      const { parseNpy } = await import('./static/js/tensor.js');
      const out = [];
      const bad = [new Uint8Array([1, 2, 3]),
                   new TextEncoder().encode('\\x93NUMPY\\x01\\x00\\x10\\x00{"x": 1}      ')];
      for (const bytes of bad) {
        try { parseNpy(bytes.buffer); out.push('parsed'); } catch (e) { out.push(e.message); }
      }
      return out;
    }""")
    assert "bad magic" in err[0]
    assert err[1] != "parsed"


def test_binary_infer_round_trip(js, ui_server):
    """encodeRequest/decodeResponse against the server's binary tensor extension."""
    x = np.random.default_rng(0).standard_normal((3, 512)).astype(np.float32)
    got = js.evaluate("""async (b64) => {
      const { parseNpy, encodeRequest, decodeResponse } = await import('./static/js/tensor.js');
      const t = parseNpy(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer);
      const { body, headers } = encodeRequest([{ name: 'data', ...t }], {}, true);
      const resp = await fetch('../v2/models/mlp/infer', { method: 'POST', body, headers });
      const doc = await decodeResponse(resp);
      return { binary: resp.headers.has('Inference-Header-Content-Length'),
               shape: doc.outputs[0].shape, values: Array.from(doc.outputs[0].data) };
    }""", _npy(x))
    want = httpx.post(ui_server.url + "/v2/models/mlp/infer", json={"inputs": [
        {"name": "data", "shape": [3, 512], "datatype": "FP32",
         "data": x.ravel().tolist()}]}).json()
    assert got["binary"] and got["shape"] == [3, 2]
    np.testing.assert_allclose(got["values"], want["outputs"][0]["data"], rtol=1e-6)


def test_topk_and_histogram(js):
    got = js.evaluate("""async () => {
      const { topK, histogram } = await import('./static/js/tensor.js');
      const tk = topK(Float32Array.from([0.1, 3, -1, 2, 2,   5, 4, 3, 2, 1]), [2, 5], 3);
      const hs = histogram([0, 1, 2, 3, NaN, Infinity, 4], 4);
      return { tk: tk.map((r) => r.items.map((i) => i.index)),
               probs: tk[0].items.map((i) => i.prob), hs };
    }""")
    assert got["tk"] == [[1, 3, 4], [0, 1, 2]]
    assert got["probs"][0] > got["probs"][1] == pytest.approx(got["probs"][2])
    assert got["hs"]["bins"] == [1, 1, 1, 2] and got["hs"]["n"] == 5


LAYOUT = """async (doc) => {
  const { layoutGraph } = await import('./static/js/graph/layout.js');
  const L = layoutGraph(doc, () => ({ w: 140, h: 54 }));
  const problems = [];
  // boxes in a layer never overlap, and the layer order is the x order
  for (const row of L.layers) {
    const vs = row.map((id) => L.vertices[id]).sort((a, b) => a.x - b.x);
    for (let i = 1; i < vs.length; i++) {
      const room = (vs[i].w + vs[i - 1].w) / 2 - 0.01;
      if (vs[i].x - vs[i - 1].x < room) problems.push('overlap ' + vs[i].id);
    }
  }
  // every edge goes strictly downwards, from its source's box to its target's
  for (const e of L.edges) {
    const p = e.points;
    for (let i = 1; i < p.length; i++) {
      if (!(p[i][1] > p[i - 1][1])) problems.push('edge up ' + e.from + '->' + e.to);
    }
    const a = L.vertices[e.from], b = L.vertices[e.to];
    const off = Math.abs(p[0][0] - a.x) + Math.abs(p[p.length - 1][0] - b.x);
    if (off > 0.02) problems.push('edge ends ' + e.from);
    if (b.layer <= a.layer) problems.push('layering ' + e.from + '->' + e.to);
  }
  // the barycentre ordering never ends worse than the initial depth-first order
  const noSweep = layoutGraph(doc, () => ({ w: 140, h: 54 }), { iterations: 0 });
  return { problems, crossings: L.crossings, initial: noSweep.crossings, stats: L.stats,
           vertices: L.vertices.length, width: L.width, height: L.height };
}"""


@pytest.mark.parametrize("fixture", ["mini_inception", "mini_densenet",
                                     "mini_resnet_v2_bottleneck"])
def test_layout_invariants_on_real_graphs(js, ui_server, fixture):
    name = "layout_" + fixture
    files = {"symbol": ("s.json", (FIXTURES / f"{fixture}-symbol.json").read_bytes()),
             "params": ("p.params", (FIXTURES / f"{fixture}-0000.params").read_bytes())}
    r = httpx.post(ui_server.url + f"/v2/repository/models/{name}/upload", files=files, timeout=60)
    assert r.status_code == 201, r.text
    doc = httpx.get(ui_server.url + f"/v2/models/{name}/graph").json()
    got = js.evaluate(LAYOUT, doc)
    assert got["problems"] == []
    assert got["crossings"] <= got["initial"]
    assert got["vertices"] == len(doc["nodes"]) + len(doc["heads"])
    assert got["stats"]["ms"] < 2000


def test_layout_reduces_crossings(js):
    """A graph built so that the first-seen order crosses: the sweeps must untangle it."""
    nodes = [{"id": 0, "name": "in", "op": "input", "kind": "input", "inputs": []}]
    # two chains a0→a1, b0→b1 whose second layer is wired crosswise to a merge
    for i, (name, src) in enumerate([("a0", 0), ("b0", 0), ("b1", 2), ("a1", 1)], start=1):
        nodes.append({"id": i, "name": name, "op": "relu", "kind": "op", "inputs": [[src, 0]]})
    nodes.append({"id": 5, "name": "m", "op": "add", "kind": "op", "inputs": [[4, 0], [3, 0]]})
    doc = {"nodes": nodes, "heads": [{"name": "out", "node": 5, "index": 0}]}
    got = js.evaluate(LAYOUT, doc)
    assert got["problems"] == [] and got["crossings"] == 0


def test_crossing_count_is_exact(js):
    got = js.evaluate("""async () => {
      const { crossingsBetween } = await import('./static/js/graph/layout.js');
      // layer A = [0, 1, 2], layer B = [3, 4, 5]; edges 0→5, 1→4, 2→3 all cross pairwise
      const down = [[5], [4], [3], [], [], []];
      const pos = [0, 1, 2, 0, 1, 2];
      const full = crossingsBetween([0, 1, 2], 3, down, pos);
      const none = crossingsBetween([0, 1, 2], 3, [[3], [4], [5], [], [], []], pos);
      const shared = crossingsBetween([0, 1], 3, [[3, 5], [4], [], [], [], []], pos);
      return [full, none, shared];
    }""")
    assert got == [3, 0, 1]


def densenet121_like() -> dict:
    """The op graph of DenseNet-121 (blocks of 6/12/24/16 layers, growth by Concat), as the
    /graph endpoint would describe it: 427 ops."""
    nodes = [{"id": 0, "name": "data", "op": "input", "kind": "input", "inputs": [],
              "outputs": ["data"], "output_shapes": [[-1, 3, 224, 224]], "params": 0}]

    def op(op_name, src, extra=()):
        i = len(nodes)
        nodes.append({"id": i, "name": f"node_{i}", "op": op_name, "kind": "op",
                      "inputs": [[s, 0] for s in (src, *extra)], "outputs": [f"node_{i}_output"],
                      "output_shapes": [[-1, 64, -1, -1]], "attrs": {},
                      "params": 100 * (op_name == "Convolution")})
        return i

    x = op("Pooling", op("Activation", op("BatchNorm", op("Convolution", 0))))
    for b, n in enumerate((6, 12, 24, 16)):
        for _ in range(n):
            y = x
            for o in ("BatchNorm", "Activation", "Convolution") * 2:
                y = op(o, y)
            x = op("Concat", x, (y,))
        if b < 3:
            x = op("Pooling", op("Convolution", op("Activation", op("BatchNorm", x))))
    x = op("FullyConnected", op("Flatten", op("Pooling", op("Activation", op("BatchNorm", x)))))
    return {"name": "densenet121_like", "version": "1", "nodes": nodes, "op_count": len(nodes) - 1,
            "heads": [{"name": f"node_{x}_output", "node": x, "index": 0, "shape": [-1, 1000]}]}


def test_large_graph_stays_usable(js):
    """DenseNet-121's size: laid out once, quickly; zooming never re-lays out; the wrapped
    overview makes the whole graph visible at a usable scale; search finds a deep node."""
    doc = densenet121_like()
    assert doc["op_count"] == 427
    got = js.evaluate("""async (doc) => {
      const { GraphView } = await import('./static/js/graph/view.js');
      const host = document.createElement('div');
      host.style.width = '1200px';
      document.body.append(host);
      const t0 = performance.now();
      const view = new GraphView(host, doc, {});
      view.canvas.style.height = '800px';
      view.home();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const built = performance.now() - t0;
      const g = view.nodeEls[200];
      const before = g.getAttribute('transform');
      const t1 = performance.now();
      for (let i = 0; i < 30; i++) {
        view.zoomBy(i < 15 ? 0.85 : 1.15);
        await new Promise((r) => requestAnimationFrame(r));
      }
      const zoomMs = (performance.now() - t1) / 30;
      const unchanged = g.getAttribute('transform') === before;
      view.fit();
      const plainFitK = view.k;
      const cols = view.setWrap(true);
      const wrappedFitK = view.k;
      const found = view.search('node_399');
      view.nextMatch(1);
      const selected = view.selected;
      view.destroy();
      host.remove();
      return { built, layoutMs: view.layout.stats.ms, zoomMs, unchanged, plainFitK, cols,
               wrappedFitK, found, selected, boxes: view.nodeEls.length };
    }""", doc)
    assert got["boxes"] == 429
    assert got["layoutMs"] < 1500, got
    assert got["built"] < 5000, got
    assert got["unchanged"]                         # zoom touched only the viewport transform
    assert got["zoomMs"] < 200, got
    assert got["cols"] >= 5 and got["wrappedFitK"] > 4 * got["plainFitK"], got
    assert got["found"] == 1 and got["selected"] == 399
