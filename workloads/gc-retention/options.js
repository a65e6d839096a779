// Parameters of the gc-retention workload, validated. A bad value throws an Error with a
// one-line message; the worker records it as an `error` sample and the cell fails with it
// (workloads/README.md, "The ctx a workload receives").
//
// The caps are this harness's sanity limits (memory of a shared CI machine, run time), not
// WebGPU limits.

export const VARIANTS = ['minimal', 'descriptors', 'encoder-refs', 'wasm-heap', 'js-churn', 'force-gc', 'wasm-heap-force-gc'];

export const LIMITS = {
  dispatches_per_token: [1, 100000],
  dispatches_per_submit: [1, 10000],
  storage_buffers: [2, 1024],
  elements: [1, 65536],
  keep_encoders: [0, 100000],
  wasm_heap_mib: [1, 2048],
  churn_kb: [0, 1048576],
  force_gc_every: [1, 100000],
  force_gc_mb: [0, 4096],
  wasm_uniforms: [0, 1],
};

function intIn(name, value) {
  const [lo, hi] = LIMITS[name];
  const v = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw new Error(`--param ${name}=${value}: must be an integer from ${lo} to ${hi}`);
  }
  return v;
}

function verifyMode(value) {
  const v = String(value ?? 'auto').toLowerCase();
  if (['auto'].includes(v)) return 'auto';
  if (['1', 'true', 'on', 'yes'].includes(v)) return 'on';
  if (['0', 'false', 'off', 'no'].includes(v)) return 'off';
  throw new Error(`--param verify=${value}: must be one of auto, on, off`);
}

/**
 * ctx.params -> {variant, dispatchesPerToken, dispatchesPerSubmit, storageBuffers, elements,
 * keepEncoders, wasmHeapMiB, wasmUniforms, churnKiB, forceGcEvery, forceGcMB, verify, tokens}.
 * Every parameter is validated whatever the variant, so a bad value fails every cell alike.
 */
export function parseOptions(params = {}) {
  const variant = String(params.variant ?? 'minimal');
  if (!VARIANTS.includes(variant)) throw new Error(`variant ${variant}: must be one of ${VARIANTS.join(', ')}`);
  const tokens = Number(params.tokens ?? 64);
  if (!Number.isInteger(tokens) || tokens < 1) throw new Error(`tokens=${params.tokens}: must be a positive integer`);
  const get = (name, dflt) => intIn(name, params[name] ?? dflt);
  return {
    variant,
    tokens,
    dispatchesPerToken: get('dispatches_per_token', 317),
    dispatchesPerSubmit: get('dispatches_per_submit', 16),
    storageBuffers: get('storage_buffers', 8),
    elements: get('elements', 64),
    keepEncoders: get('keep_encoders', 64),
    wasmHeapMiB: get('wasm_heap_mib', 256),
    churnKiB: get('churn_kb', 1024),
    forceGcEvery: get('force_gc_every', 16),
    forceGcMB: get('force_gc_mb', 32),
    wasmUniforms: get('wasm_uniforms', 1),
    verify: verifyMode(params.verify),
  };
}
