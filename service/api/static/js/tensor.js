// Tensors in the browser: .npy and JSON input files, random inputs, the protocol's binary
// tensor extension (both directions), top-k, histograms.

/** V2 datatype → typed-array constructor (little-endian on the wire). */
export const DTYPES = {
  BOOL: Uint8Array, UINT8: Uint8Array, UINT16: Uint16Array, UINT32: Uint32Array,
  UINT64: BigUint64Array, INT8: Int8Array, INT16: Int16Array, INT32: Int32Array,
  INT64: BigInt64Array, FP16: Uint16Array, FP32: Float32Array, FP64: Float64Array,
};
const ITEMSIZE = { BOOL: 1, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, INT8: 1, INT16: 2,
  INT32: 4, INT64: 8, FP16: 2, FP32: 4, FP64: 8 };

export const isFloat = (dt) => dt === "FP16" || dt === "FP32" || dt === "FP64";
export const numel = (shape) => shape.reduce((a, b) => a * b, 1);

// -- float16 <-> float32 ----------------------------------------------------------------------
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
export function halfToFloat(h) {
  const s = (h & 0x8000) >> 15, e = (h & 0x7c00) >> 10, f = h & 0x03ff;
  if (e === 0) return (s ? -1 : 1) * Math.pow(2, -14) * (f / 1024);
  if (e === 0x1f) return f ? NaN : (s ? -Infinity : Infinity);
  return (s ? -1 : 1) * Math.pow(2, e - 15) * (1 + f / 1024);
}
export function floatToHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >> 16) & 0x8000;
  let e = ((x >> 23) & 0xff) - 127 + 15;
  const m = x & 0x7fffff;
  if (((x >> 23) & 0xff) === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const mm = (m | 0x800000) >> (1 - e);
    return sign | ((mm + 0x1000) >> 13);
  }
  return sign | (e << 10) | ((m + 0x1000) >> 13);
}

/** A plain-number view of any tensor's data (BigInt and FP16 converted). */
export function toNumbers(t) {
  const d = t.data;
  if (t.datatype === "FP16") return Float32Array.from(d, halfToFloat);
  if (d instanceof BigInt64Array || d instanceof BigUint64Array) return Float64Array.from(d, Number);
  return d;
}

/** Copy plain numbers into a tensor of `datatype`. */
export function fromNumbers(values, datatype, shape) {
  const C = DTYPES[datatype];
  if (!C) throw new Error(`datatype ${datatype} is not supported by the console`);
  const n = values.length;
  const out = new C(n);
  if (datatype === "FP16") for (let i = 0; i < n; i++) out[i] = floatToHalf(values[i]);
  else if (C === BigInt64Array || C === BigUint64Array) for (let i = 0; i < n; i++) out[i] = BigInt(Math.trunc(Number(values[i])));
  else if (datatype === "BOOL") for (let i = 0; i < n; i++) out[i] = values[i] ? 1 : 0;
  else out.set(values);
  return { datatype, shape: shape.slice(), data: out };
}

// -- .npy ---------------------------------------------------------------------------------------
const NPY_KINDS = {
  f2: "FP16", f4: "FP32", f8: "FP64", i1: "INT8", i2: "INT16", i4: "INT32", i8: "INT64",
  u1: "UINT8", u2: "UINT16", u4: "UINT32", u8: "UINT64", b1: "BOOL",
};

/** Parse a NumPy .npy file (versions 1–3; little- or big-endian; C or Fortran order). */
export function parseNpy(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (bytes.length < 10 || magic.some((b, i) => bytes[i] !== b)) {
    throw new Error("not a .npy file (bad magic number)");
  }
  const major = bytes[6];
  const dv = new DataView(buffer);
  let hlen, off;
  if (major === 1) { hlen = dv.getUint16(8, true); off = 10; }
  else if (major === 2 || major === 3) { hlen = dv.getUint32(8, true); off = 12; }
  else throw new Error(`unsupported .npy version ${major}`);
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(bytes.subarray(off, off + hlen));
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeM = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeM) throw new Error("malformed .npy header: " + header.trim());
  const shape = shapeM[1].split(",").map((x) => x.trim()).filter((x) => x.length).map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new Error("bad shape in .npy header");
  let d = descr[1];
  const order = "<>|=".includes(d[0]) ? d[0] : "|";
  if ("<>|=".includes(d[0])) d = d.slice(1);
  const datatype = NPY_KINDS[d === "?" ? "b1" : d];
  if (!datatype) throw new Error(`.npy dtype '${descr[1]}' is not supported (float, int, uint, bool only)`);
  const itemsize = ITEMSIZE[datatype];
  const n = numel(shape);
  const start = off + hlen;
  if (buffer.byteLength - start < n * itemsize) {
    throw new Error(`.npy data is truncated: need ${n * itemsize} bytes, have ${buffer.byteLength - start}`);
  }
  const C = DTYPES[datatype];
  let data;
  const bigEndian = order === ">";
  if (!bigEndian && start % itemsize === 0) {
    data = new C(buffer.slice(start, start + n * itemsize));
  } else {
    data = new C(n);
    const get = {
      1: (o) => (datatype === "INT8" ? dv.getInt8(o) : dv.getUint8(o)),
      2: (o) => (datatype === "INT16" ? dv.getInt16(o, !bigEndian) : dv.getUint16(o, !bigEndian)),
      4: (o) => (datatype === "FP32" ? dv.getFloat32(o, !bigEndian)
        : datatype === "INT32" ? dv.getInt32(o, !bigEndian) : dv.getUint32(o, !bigEndian)),
      8: (o) => (datatype === "FP64" ? dv.getFloat64(o, !bigEndian)
        : datatype === "INT64" ? dv.getBigInt64(o, !bigEndian) : dv.getBigUint64(o, !bigEndian)),
    }[itemsize];
    for (let i = 0; i < n; i++) data[i] = get(start + i * itemsize);
  }
  if (fortran[1] === "True" && shape.length > 1) data = fortranToC(data, shape);
  return { datatype, shape, data };
}

function fortranToC(data, shape) {
  const n = data.length;
  const out = new data.constructor(n);
  const r = shape.length;
  const fstride = new Array(r);
  fstride[0] = 1;
  for (let k = 1; k < r; k++) fstride[k] = fstride[k - 1] * shape[k - 1];
  const idx = new Array(r).fill(0);
  for (let i = 0; i < n; i++) {          // i walks C order
    let f = 0;
    for (let k = 0; k < r; k++) f += idx[k] * fstride[k];
    out[i] = data[f];
    for (let k = r - 1; k >= 0; k--) { if (++idx[k] < shape[k]) break; idx[k] = 0; }
  }
  return out;
}

/** Write a .npy (v1, little-endian, C order) — used by tests and for downloads. */
export function toNpy(t) {
  const code = Object.entries(NPY_KINDS).find(([, v]) => v === t.datatype)[0];
  const descr = code === "b1" ? "|b1" : (code.endsWith("1") ? "|" : "<") + code;
  const shape = t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += " ".repeat(pad % 64) + "\n";
  const out = new Uint8Array(10 + header.length + t.data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), 10 + header.length);
  return out.buffer;
}

// -- JSON input files ---------------------------------------------------------------------------
/** A JSON file: a nested array, {"shape": [...], "data": [...]}, or an infer request body
 * (then the input called `name`, or the first). Returns {shape, values}. */
export function parseJsonTensor(text, name) {
  let doc;
  try { doc = JSON.parse(text); } catch (e) { throw new Error("not valid JSON: " + e.message); }
  if (doc && Array.isArray(doc.inputs)) {
    doc = doc.inputs.find((i) => i.name === name) || doc.inputs[0];
    if (!doc) throw new Error("the request body has no inputs");
  }
  if (Array.isArray(doc)) {
    const shape = [];
    let cur = doc;
    while (Array.isArray(cur)) { shape.push(cur.length); cur = cur[0]; }
    const values = doc.flat(Infinity);
    if (values.length !== numel(shape)) throw new Error("nested array is ragged");
    return { shape, values: values.map(Number) };
  }
  if (doc && Array.isArray(doc.data)) {
    const values = doc.data.flat(Infinity).map(Number);
    const shape = Array.isArray(doc.shape) ? doc.shape.map(Number) : [values.length];
    if (numel(shape) !== values.length) {
      throw new Error(`shape ${JSON.stringify(shape)} needs ${numel(shape)} values, file has ${values.length}`);
    }
    return { shape, values };
  }
  throw new Error('expected a nested array, {"shape": [...], "data": [...]}, or an infer request');
}

// -- random inputs ------------------------------------------------------------------------------
/** Deterministic PRNG (mulberry32) so "random" inputs can be repeated with a seed. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeInput(datatype, shape, kind = "uniform", seed = 1) {
  const n = numel(shape);
  const r = rng(seed);
  const vals = new Float64Array(n);
  if (kind === "normal") {
    for (let i = 0; i < n; i += 2) {
      const u = Math.max(r(), 1e-12), v = r();
      const m = Math.sqrt(-2 * Math.log(u));
      vals[i] = m * Math.cos(2 * Math.PI * v);
      if (i + 1 < n) vals[i + 1] = m * Math.sin(2 * Math.PI * v);
    }
  } else if (kind === "uniform") {
    const ints = !isFloat(datatype);
    for (let i = 0; i < n; i++) vals[i] = ints ? Math.floor(r() * (datatype === "BOOL" ? 2 : 10)) : r();
  } // zeros: already 0
  return fromNumbers(vals, datatype, shape);
}

/** Convert a parsed tensor to `datatype` (e.g. an f8 .npy for an FP32 input). */
export function castTo(t, datatype) {
  if (t.datatype === datatype) return t;
  return fromNumbers(toNumbers(t), datatype, t.shape);
}

// -- the binary tensor extension ---------------------------------------------------------------
function bytesOf(t) {
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/** Body and headers of an infer/inspect request with binary inputs and binary outputs. */
export function encodeRequest(inputs, parameters = {}, binaryOutput = true) {
  const head = {
    inputs: inputs.map((t) => ({ name: t.name, shape: t.shape, datatype: t.datatype,
      parameters: { binary_data_size: t.data.byteLength } })),
    parameters: { ...parameters },
  };
  if (binaryOutput) head.parameters.binary_data_output = true;
  const headBytes = new TextEncoder().encode(JSON.stringify(head));
  const total = headBytes.length + inputs.reduce((a, t) => a + t.data.byteLength, 0);
  const body = new Uint8Array(total);
  body.set(headBytes, 0);
  let off = headBytes.length;
  for (const t of inputs) { body.set(bytesOf(t), off); off += t.data.byteLength; }
  return { body, headers: { "Content-Type": "application/octet-stream",
    "Inference-Header-Content-Length": String(headBytes.length) } };
}

/** Parse an infer response (JSON, or JSON header + binary tail); outputs get typed `data`. */
export async function decodeResponse(resp) {
  const buf = await resp.arrayBuffer();
  const hl = resp.headers.get("Inference-Header-Content-Length");
  const n = hl !== null ? parseInt(hl, 10) : buf.byteLength;
  const doc = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 0, n)));
  let off = n;
  for (const o of doc.outputs || []) {
    const size = o.parameters && o.parameters.binary_data_size;
    if (size !== undefined && size !== null) {
      const C = DTYPES[o.datatype];
      const slice = buf.slice(off, off + size);
      off += size;
      o.data = C ? new C(slice) : new Uint8Array(slice);
    } else if (Array.isArray(o.data)) {
      const flat = o.data.flat(Infinity).map((v) => (v === null ? NaN : v));
      o.data = o.datatype in DTYPES && o.datatype !== "FP16" ? fromNumbers(flat, o.datatype, o.shape).data
        : Float64Array.from(flat);
      if (o.datatype === "FP16") o.datatype = "FP64";
    }
  }
  return doc;
}

// -- analysis -----------------------------------------------------------------------------------
export function summarize(values) {
  let min = Infinity, max = -Infinity, sum = 0, sq = 0, n = 0, nan = 0, inf = 0;
  for (let i = 0; i < values.length; i++) {
    const v = Number(values[i]);
    if (Number.isNaN(v)) { nan++; continue; }
    if (!Number.isFinite(v)) { inf++; continue; }
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v; sq += v * v; n++;
  }
  const mean = n ? sum / n : NaN;
  return { min: n ? min : NaN, max: n ? max : NaN, mean, std: n ? Math.sqrt(Math.max(0, sq / n - mean * mean)) : NaN, nan, inf, count: values.length };
}

export function histogram(values, nbins = 16, lo, hi) {
  const finite = [];
  for (let i = 0; i < values.length; i++) { const v = Number(values[i]); if (Number.isFinite(v)) finite.push(v); }
  const bins = new Array(nbins).fill(0);
  if (!finite.length) return { bins, lo: NaN, hi: NaN, n: 0 };
  if (lo === undefined || hi === undefined) {
    lo = Infinity; hi = -Infinity;
    for (const v of finite) { if (v < lo) lo = v; if (v > hi) hi = v; }
  }
  const span = hi - lo;
  for (const v of finite) {
    let k = span > 0 ? Math.floor(((v - lo) / span) * nbins) : Math.floor(nbins / 2);
    if (k >= nbins) k = nbins - 1;
    if (k < 0) k = 0;
    bins[k]++;
  }
  return { bins, lo, hi, n: finite.length };
}

export function softmax(row) {
  let m = -Infinity;
  for (const v of row) if (v > m) m = v;
  const e = row.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

/** Top-k of each row of an (N, C) output: [{row, items: [{index, score, prob}]}]. */
export function topK(values, shape, k = 5, maxRows = 8) {
  let rows, cols;
  if (shape.length === 2) { [rows, cols] = shape; }
  else if (shape.length === 1) { rows = 1; cols = shape[0]; }
  else return null;
  if (cols < 2) return null;
  const out = [];
  for (let r = 0; r < Math.min(rows, maxRows); r++) {
    const row = Array.from(values.slice(r * cols, (r + 1) * cols), Number);
    const finite = row.every(Number.isFinite);
    const isProb = finite && row.every((v) => v >= 0 && v <= 1) && Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3;
    const probs = finite ? (isProb ? row : softmax(row)) : row.map(() => NaN);
    const idx = row.map((_, i) => i).sort((a, b) => (row[b] - row[a]) || (a - b)).slice(0, Math.min(k, cols));
    out.push({ row: r, probsAreScores: isProb, items: idx.map((i) => ({ index: i, score: row[i], prob: probs[i] })) });
  }
  return out;
}
