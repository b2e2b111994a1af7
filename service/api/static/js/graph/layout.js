// Layered (Sugiyama-style) layout of a model graph, computed once per graph:
//   1. layering by longest path from the sources (sources that are not data inputs are pulled
//      down next to their first consumer),
//   2. edges spanning several layers are split by dummy vertices,
//   3. vertex order in each layer by barycentre sweeps (down and up), keeping the order with
//      the fewest crossings (counted exactly with a Fenwick tree),
//   4. x coordinates by weighted isotonic regression (pool-adjacent-violators) towards the mean
//      of each vertex's neighbours under minimum-separation constraints, so chains and long
//      edges come out straight,
//   5. edges as polylines through their dummies.
// Pure functions, no DOM: `layoutGraph(doc, measure)`.

/**
 * @param {object} doc  the server's graph document ({nodes, heads})
 * @param {(v: object) => {w: number, h: number}} measure  box size of a real vertex
 * @param {object} [opt]
 * @returns {{vertices: object[], edges: object[], width: number, height: number,
 *            layers: number[][], crossings: number, stats: object}}
 */
export function layoutGraph(doc, measure, opt = {}) {
  const t0 = performance.now();
  const rowGap = opt.rowGap ?? 46;
  const margin = opt.margin ?? 40;
  const nodes = doc.nodes;
  const heads = doc.heads || [];

  // -- vertices and edges of the real graph --------------------------------------------------
  const V = [];                                   // real vertices: graph nodes, then outputs
  for (const n of nodes) V.push({ id: V.length, kind: n.kind, node: n, dummy: false });
  for (const hd of heads) V.push({ id: V.length, kind: "output", node: hd, dummy: false });
  const nReal = V.length;
  const preds = Array.from({ length: nReal }, () => []);
  const succs = Array.from({ length: nReal }, () => []);
  const edgeSet = new Set();
  const realEdges = [];
  const addEdge = (u, v) => {
    const key = u * 1048576 + v;
    if (u === v || edgeSet.has(key)) return;
    edgeSet.add(key);
    preds[v].push(u);
    succs[u].push(v);
    realEdges.push([u, v]);
  };
  for (const n of nodes) for (const [src] of n.inputs) addEdge(src, n.id);
  heads.forEach((hd, k) => addEdge(hd.node, nodes.length + k));

  // -- 1. layering -------------------------------------------------------------------------------
  // nodes arrive in topological order (the server's topo sort), outputs after them
  const layer = new Int32Array(nReal);
  for (let v = 0; v < nReal; v++) {
    let l = 0;
    for (const p of preds[v]) l = Math.max(l, layer[p] + 1);
    layer[v] = l;
  }
  for (let v = nReal - 1; v >= 0; v--) {           // pull non-input sources down
    if (preds[v].length || !succs[v].length || V[v].kind === "input") continue;
    let m = Infinity;
    for (const s of succs[v]) m = Math.min(m, layer[s]);
    layer[v] = Math.max(0, m - 1);
  }
  let nLayers = 0;
  for (let v = 0; v < nReal; v++) nLayers = Math.max(nLayers, layer[v] + 1);

  // -- 2. dummies --------------------------------------------------------------------------------
  const up = [], down = [];                       // adjacency of the proper layered graph
  const layerOf = Array.from(layer);
  for (let v = 0; v < nReal; v++) { up.push([]); down.push([]); }
  const routed = [];                              // {from, to, chain: [vertex ids]}
  for (const [u, v] of realEdges) {
    const chain = [];
    let prev = u;
    for (let l = layer[u] + 1; l < layer[v]; l++) {
      const d = V.length;
      V.push({ id: d, kind: "dummy", dummy: true });
      layerOf.push(l);
      up.push([prev]); down.push([]);
      down[prev].push(d);
      chain.push(d);
      prev = d;
    }
    down[prev].push(v);
    up[v].push(prev);
    routed.push({ from: u, to: v, chain });
  }
  const nAll = V.length;

  // -- 3. ordering -------------------------------------------------------------------------------
  const layers = Array.from({ length: nLayers }, () => []);
  // initial order: depth-first from the sources along `down`, so branches stay together
  const seen = new Uint8Array(nAll);
  const visit = (start) => {
    const stack = [start];
    while (stack.length) {
      const v = stack.pop();
      if (seen[v]) continue;
      seen[v] = 1;
      layers[layerOf[v]].push(v);
      const ds = down[v];
      for (let i = ds.length - 1; i >= 0; i--) if (!seen[ds[i]]) stack.push(ds[i]);
    }
  };
  for (let v = 0; v < nAll; v++) if (!up[v].length) visit(v);
  for (let v = 0; v < nAll; v++) if (!seen[v]) visit(v);
  const pos = new Float64Array(nAll);
  const setPos = () => { for (const L of layers) L.forEach((v, i) => { pos[v] = i; }); };
  setPos();

  const crossings = () => {
    let total = 0;
    for (let l = 0; l + 1 < nLayers; l++) total += crossingsBetween(layers[l], layers[l + 1].length, down, pos);
    return total;
  };
  const sweep = (dir) => {
    const range = dir > 0 ? [1, nLayers, 1] : [nLayers - 2, -1, -1];
    for (let l = range[0]; l !== range[1]; l += range[2]) {
      const L = layers[l];
      const key = new Map();
      for (const v of L) {
        const nb = dir > 0 ? up[v] : down[v];
        if (!nb.length) { key.set(v, pos[v]); continue; }
        let s = 0;
        for (const u of nb) s += pos[u];
        key.set(v, s / nb.length);
      }
      L.sort((a, b) => (key.get(a) - key.get(b)) || (pos[a] - pos[b]));
      L.forEach((v, i) => { pos[v] = i; });
    }
  };
  let best = crossings();
  let bestOrder = layers.map((L) => L.slice());
  const iters = opt.iterations ?? (nAll > 4000 ? 4 : nAll > 1500 ? 8 : 16);
  for (let it = 0; it < iters && best > 0; it++) {
    sweep(+1);
    let c = crossings();
    if (c < best) { best = c; bestOrder = layers.map((L) => L.slice()); }
    sweep(-1);
    c = crossings();
    if (c < best) { best = c; bestOrder = layers.map((L) => L.slice()); }
  }
  for (let l = 0; l < nLayers; l++) layers[l] = bestOrder[l];
  setPos();

  // -- 4. coordinates ----------------------------------------------------------------------------
  const w = new Float64Array(nAll), hgt = new Float64Array(nAll);
  let rowH = 0;
  for (let v = 0; v < nReal; v++) {
    const m = measure(V[v]);
    w[v] = m.w; hgt[v] = m.h;
    rowH = Math.max(rowH, m.h);
  }
  const sep = (a, b) => {
    const da = V[a].dummy, db = V[b].dummy;
    return w[a] / 2 + w[b] / 2 + (da && db ? 10 : da || db ? 18 : 26);
  };
  const x = new Float64Array(nAll);
  for (const L of layers) {
    let cur = 0;
    L.forEach((v, i) => { if (i) cur += sep(L[i - 1], v); x[v] = cur; });
    const shift = cur / 2;
    for (const v of L) x[v] -= shift;
  }
  const edgeWeight = (a, b) => (V[a].dummy && V[b].dummy ? 8 : V[a].dummy || V[b].dummy ? 2 : 1);
  const place = (L, dirs) => {
    const n = L.length;
    const target = new Float64Array(n), weight = new Float64Array(n), off = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = L[i];
      let s = 0, ws = 0;
      for (const nb of dirs(v)) { const ew = edgeWeight(v, nb); s += ew * x[nb]; ws += ew; }
      if (ws) { target[i] = s / ws; weight[i] = ws; } else { target[i] = x[v]; weight[i] = 0.05; }
      off[i] = i ? off[i - 1] + sep(L[i - 1], v) : 0;
    }
    // isotonic regression of (target - off), weighted: pool adjacent violators
    const bv = [], bw = [], bn = [];
    for (let i = 0; i < n; i++) {
      bv.push(target[i] - off[i]); bw.push(weight[i]); bn.push(1);
      while (bv.length > 1 && bv[bv.length - 2] > bv[bv.length - 1]) {
        const v2 = bv.pop(), w2 = bw.pop(), n2 = bn.pop();
        const k = bv.length - 1;
        const ww = bw[k] + w2;
        bv[k] = (bv[k] * bw[k] + v2 * w2) / ww;
        bw[k] = ww; bn[k] += n2;
      }
    }
    let i = 0;
    for (let b = 0; b < bv.length; b++) for (let j = 0; j < bn[b]; j++, i++) x[L[i]] = bv[b] + off[i];
  };
  const rounds = opt.rounds ?? 12;
  for (let r = 0; r < rounds; r++) {
    const both = r >= rounds - 3;
    if (r % 2 === 0) {
      for (let l = 1; l < nLayers; l++) place(layers[l], both ? (v) => up[v].concat(down[v]) : (v) => up[v]);
    } else {
      for (let l = nLayers - 2; l >= 0; l--) place(layers[l], both ? (v) => up[v].concat(down[v]) : (v) => down[v]);
    }
  }

  // -- 5. output ---------------------------------------------------------------------------------
  let minX = Infinity, maxX = -Infinity;
  for (let v = 0; v < nAll; v++) { minX = Math.min(minX, x[v] - w[v] / 2); maxX = Math.max(maxX, x[v] + w[v] / 2); }
  const dx = margin - minX;
  const yOf = (l) => margin + l * (rowH + rowGap) + rowH / 2;
  const vertices = [];
  for (let v = 0; v < nReal; v++) {
    vertices.push({ id: v, kind: V[v].kind, node: V[v].node, x: x[v] + dx, y: yOf(layerOf[v]),
      w: w[v], h: hgt[v], layer: layerOf[v], order: pos[v], preds: preds[v], succs: succs[v] });
  }
  const edges = routed.map(({ from, to, chain }) => {
    const pts = [[x[from] + dx, yOf(layerOf[from]) + hgt[from] / 2]];
    for (const d of chain) pts.push([x[d] + dx, yOf(layerOf[d])]);
    pts.push([x[to] + dx, yOf(layerOf[to]) - hgt[to] / 2]);
    return { from, to, points: pts };
  });
  return {
    vertices, edges, layers: layers.map((L) => L.filter((v) => v < nReal)),
    width: maxX - minX + 2 * margin, height: nLayers ? yOf(nLayers - 1) + rowH / 2 + margin : 2 * margin,
    crossings: best, rowPitch: rowH + rowGap, margin,
    stats: { real: nReal, dummies: nAll - nReal, layers: nLayers, ms: performance.now() - t0 },
  };
}

/** Crossings between layer L (ordered) and the next layer (size m) along `down` edges. */
export function crossingsBetween(L, m, down, pos) {
  const seq = [];
  for (const u of L) {
    const targets = down[u].map((v) => pos[v]).sort((a, b) => a - b);
    for (const t of targets) seq.push(t);
  }
  // count inversions in seq (pairs i<j with seq[i] > seq[j]) with a Fenwick tree
  const tree = new Int32Array(m + 1);
  let inv = 0, seenCount = 0;
  for (const t of seq) {
    // number seen so far with value > t = seenCount - (seen with value <= t)
    let i = t + 1, le = 0;
    while (i > 0) { le += tree[i]; i -= i & -i; }
    inv += seenCount - le;
    for (i = t + 1; i <= m; i += i & -i) tree[i]++;
    seenCount++;
  }
  return inv;
}

/** SVG path through the points with vertical tangents (smooth layered edges). */
export function edgePath(points) {
  let d = `M${points[0][0].toFixed(1)},${points[0][1].toFixed(1)}`;
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1], [x1, y1] = points[i];
    const my = (y1 - y0) / 2;
    d += `C${x0.toFixed(1)},${(y0 + my).toFixed(1)} ${x1.toFixed(1)},${(y1 - my).toFixed(1)} ${x1.toFixed(1)},${y1.toFixed(1)}`;
  }
  return d;
}
