// Inputs for any ONNX model: generated from the session's declared input shapes and types, or read
// from .npy files. Pure functions (no WebGPU, no onnxruntime), unit-tested in tests/js/ort-run.test.mjs.
import { prng } from '../lib/prng.js';

/** ONNX tensor element type (onnxruntime-web's names) → typed array constructor and byte size. */
export const TYPES = {
  float32: { Array: Float32Array, bytes: 4 },
  float16: { Array: Uint16Array, bytes: 2 }, // IEEE half bits (onnxruntime-web's float16 data)
  int64: { Array: BigInt64Array, bytes: 8 },
  uint64: { Array: BigUint64Array, bytes: 8 },
  int32: { Array: Int32Array, bytes: 4 },
  uint32: { Array: Uint32Array, bytes: 4 },
  int8: { Array: Int8Array, bytes: 1 },
  uint8: { Array: Uint8Array, bytes: 1 },
  bool: { Array: Uint8Array, bytes: 1 },
};

/** NumPy dtype descr (without byte order) → ONNX type (NumPy format spec, numpy.lib.format). */
const NPY_TYPES = { f4: 'float32', f2: 'float16', i8: 'int64', u8: 'uint64', i4: 'int32', u4: 'uint32', i1: 'int8', u1: 'uint8', b1: 'bool' };

/**
 * Parse `KEY=VALUE,KEY=VALUE` into a Map. `what` names the parameter in errors; `value(v, key)`
 * converts each value (throws to reject it).
 */
export function parsePairs(text, what, value = (v) => v) {
  const out = new Map();
  for (const item of String(text ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`--param ${what}: ${JSON.stringify(item)} is not NAME=VALUE`);
    const key = item.slice(0, eq).trim();
    out.set(key, value(item.slice(eq + 1).trim(), key));
  }
  return out;
}

/** `dims` parameter: symbolic dimension name → positive integer. */
export function parseDims(text) {
  return parsePairs(text, 'dims', (v, k) => {
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--param dims: ${k}=${v} must be a positive integer`);
    return n;
  });
}

/**
 * Concrete dims of a declared shape: numbers ≥ 0 stay, a symbolic name (string) takes
 * dims.get(name), an unnamed dynamic dim (-1, null, undefined, '') takes `dimDefault`.
 * Throws when a symbolic name has no value and no default.
 */
export function resolveShape(shape, dims, dimDefault, inputName = 'input') {
  return (shape ?? []).map((d, i) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (typeof d === 'string' && d !== '' && dims.has(d)) return dims.get(d);
    if (dimDefault) return dimDefault;
    throw new Error(`input ${inputName}: dimension ${i} (${JSON.stringify(d)}) is dynamic: give it with --param dims=${typeof d === 'string' && d ? d : 'NAME'}=N or --param dim_default=N`);
  });
}

/** mulberry32 (public domain, T. Ettinger) as floats in [0, 1): workloads/lib/prng.js. */
export function mulberry32(seed) {
  const next = prng(seed);
  return () => next() / 4294967296;
}

/** IEEE 754 half bits of a float in [0, 1) or small integers (round to nearest, no subnormal care). */
export function toHalfBits(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = ((u >>> 23) & 0xff) - 127 + 15;
  const mant = u & 0x7fffff;
  if (exp <= 0) return sign; // flush tiny values to zero
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | ((mant + 0x1000) >>> 13);
}

/**
 * Data for a tensor of `type` with `count` elements. fill: 'random' (floats uniform in [0, 1),
 * integers uniform in [0, 10), bools 0/1, from mulberry32(seed)), 'zeros' or 'ones'.
 */
export function generate(type, count, fill, seed) {
  const t = TYPES[type];
  if (!t) throw new Error(`cannot generate input of type ${type} (supported: ${Object.keys(TYPES).join(', ')})`);
  const data = new t.Array(count);
  if (fill === 'zeros') return data;
  const rand = mulberry32(seed);
  const big = type === 'int64' || type === 'uint64';
  for (let i = 0; i < count; i++) {
    let v;
    if (fill === 'ones') v = 1;
    else if (type === 'float32') v = rand();
    else if (type === 'float16') v = rand();
    else if (type === 'bool') v = rand() < 0.5 ? 0 : 1;
    else v = Math.floor(rand() * 10);
    data[i] = type === 'float16' ? toHalfBits(v) : big ? BigInt(v) : v;
  }
  return data;
}

/**
 * Parse a NumPy .npy file (format versions 1-3; little-endian or byte-order-free, C order).
 * Returns {type (ONNX name), shape: number[], data: typed array (its own aligned copy)}.
 * Throws Error with a one-line reason on anything else.
 */
export function parseNpy(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
  if (u8.length < 10 || magic.some((b, i) => u8[i] !== b)) throw new Error('not a .npy file (no \\x93NUMPY magic)');
  const major = u8[6];
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(u8.subarray(start, start + headerLen));
  const descr = /'descr'\s*:\s*'([<>|=])([a-z]\d+)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeM = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeM) throw new Error(`.npy header not understood: ${header.trim()}`);
  if (descr[1] === '>') throw new Error(`.npy data is big-endian (${descr[1]}${descr[2]}); save it little-endian`);
  if (fortran[1] === 'True') throw new Error('.npy data is in Fortran order; save it C-ordered (np.ascontiguousarray)');
  const type = NPY_TYPES[descr[2]];
  if (!type) throw new Error(`.npy dtype ${descr[2]} is not supported (supported: ${Object.keys(NPY_TYPES).join(', ')})`);
  const shape = shapeM[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const byteLength = count * TYPES[type].bytes;
  if (u8.length - offset < byteLength) throw new Error(`.npy holds ${u8.length - offset} data bytes, shape ${JSON.stringify(shape)} needs ${byteLength}`);
  const copy = new Uint8Array(byteLength); // its own buffer: aligned for any element type
  copy.set(u8.subarray(offset, offset + byteLength));
  return { type, shape, data: new TYPES[type].Array(copy.buffer, 0, count) };
}

/** Sum of a typed array's values as a Number (BigInt arrays converted), float16 bits decoded. */
export function sumOf(data, type) {
  let s = 0;
  if (type === 'float16') {
    for (let i = 0; i < data.length; i++) s += halfToFloat(data[i]);
    return s;
  }
  for (let i = 0; i < data.length; i++) s += Number(data[i]);
  return s;
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (mant / 1024);
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + mant / 1024);
}
