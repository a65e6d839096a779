// Loading onnxruntime-web in a worker or page, for the workloads that run ONNX models (ort-decode,
// ort-run): the pinned package under /node_modules/, or the dist/ folder the harness passes as
// `ortDist` (harness/plan.py engine_params: --ort-version, --ort-dist).

/** Bundle name → file in onnxruntime-web's dist/. */
export const BUNDLES = {
  webgpu: 'ort.webgpu.bundle.min.mjs', // C++ WebGPU EP, asyncify build
  jspi: 'ort.jspi.bundle.min.mjs', // C++ WebGPU EP, JSPI build
  jsep: 'ort.bundle.min.mjs', // the older JS EP (the plain `onnxruntime-web` import)
};

export const DEFAULT_DIST = new URL('../../node_modules/onnxruntime-web/dist/', import.meta.url).href;

/** WebGPU EP options passed through when non-empty (onnxruntime-common inference-session.ts). */
export const EP_OPTION_KEYS = ['storageBufferCacheMode', 'uniformBufferCacheMode', 'validationMode', 'preferredLayout'];

/**
 * Import the bundle `bundle` from `dist` (a URL of a dist/ folder) with one wasm thread and no
 * proxy worker. Throws 'SKIP: …' for jspi without WebAssembly.Suspending, Error for an unknown
 * bundle. Resolves to the `ort` namespace.
 */
export async function importOrt(bundle, dist = DEFAULT_DIST) {
  const file = BUNDLES[bundle];
  if (!file) throw new Error(`bundle must be one of ${Object.keys(BUNDLES).join(', ')}, got ${bundle}`);
  if (bundle === 'jspi' && typeof WebAssembly.Suspending !== 'function') {
    throw new Error('SKIP: this browser has no JSPI (WebAssembly.Suspending), which the jspi bundle needs');
  }
  const ort = await import(new URL(file, dist).href);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = dist;
  return ort;
}

/** {name: 'webgpu', ...the EP options of EP_OPTION_KEYS set in params, device?}. */
export function epOptions(params, device = null) {
  const ep = { name: 'webgpu' };
  for (const key of EP_OPTION_KEYS) if (params[key]) ep[key] = String(params[key]);
  if (device) ep.device = device;
  return ep;
}

/** Bytes of `url` (a model or a .npy); Error naming the URL on a network or HTTP failure. */
export async function fetchBytes(url, what = 'file') {
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`could not fetch ${what} ${url}: ${e.message}`);
  }
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}
