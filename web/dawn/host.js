// The Dawn host: one cell of the harness in Node on Dawn, the WebGPU implementation inside
// Chrome, built as `dawn.node` (npm package `webgpu`). Native Dawn (Node), not a browser.
//
//   node web/dawn/host.js --url RUNNER_URL [--webgpu DIR] [--dawn-flag F]...
//       RUNNER_URL is the runner page's URL a browser would open (…/web/runner.html?cell=C&token=T):
//       the cell's config comes from the run server and its samples go to it, as a browser
//       worker's do (harness/drive/dawn.py starts one such process per cell).
//   node web/dawn/host.js --offline LAUNCH.json [--webgpu DIR] [--dawn-flag F]...
//       no server (a GPU machine without our Python packages: harness/native/dawn.py): LAUNCH.json
//       holds {cell, config, roots, samples, seq_start, t0_epoch_s}; the cell's samples are
//       appended straight to `samples` (RESULTS.md lines: seq, cell, received_s, src, queue).
//   node web/dawn/host.js --probe [--webgpu DIR]
//       prints {"adapter": …} or {"adapter": null, "reason": …} as one JSON line, and exits.
//
// What runs is the browser worker's own bootstrap, web/worker.js, unchanged: probes first, then
// the workload, with the same samples. This host only gives it the globals a worker has and Node
// lacks: `self`, `location` (the worker script's URL), `navigator.gpu` (Dawn), the WebGPU
// interfaces (for the probes to wrap), `addEventListener('error' | 'unhandledrejection')`, a
// `fetch` that resolves relative URLs (and, offline, serves the harness's files and takes the
// sample posts), and module loading from those URLs (web/dawn/hooks.js).
//
// One patch of the engine, made before the probes wrap it: dawn.node crashes (SIGSEGV here;
// "Invalid argument" in other builds) when GPUQueue.writeBuffer is handed a view on a
// SharedArrayBuffer, which onnxruntime-web's wasm heap is. Such data is copied (only the bytes
// written) into an ordinary ArrayBuffer first. The probes see the call as the workload made it.
//
// Exit status: 0 once the cell's end (done, skip or error) was delivered — offline at once; with
// a run server when its standard input closes (the harness ends the process when it moves to the
// next cell, so an exit is never mistaken for a crash, and a killed harness leaves none behind);
// 1 when the host itself could not start the cell (the reason on stderr).

import { readFileSync, appendFileSync, readdirSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { contentType, localPath } from './roots.js';
import { patchWriteBuffer } from './write-buffer.js';

/** What every sample and report says this engine is. */
export const ENGINE = 'native Dawn (Node), not a browser';
/** The origin the offline mode's URLs use (never resolved on a network). */
export const OFFLINE_ORIGIN = 'http://harness.invalid';

function parseArgs(argv) {
  const out = { url: null, offline: null, webgpu: null, probe: false, flags: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--url') out.url = value();
    else if (a === '--offline') out.offline = value();
    else if (a === '--webgpu') out.webgpu = value();
    else if (a === '--dawn-flag') out.flags.push(value());
    else if (a === '--probe') out.probe = true;
    else throw new Error(`unknown argument ${a} (valid: --url URL, --offline LAUNCH.json, --probe, --webgpu DIR, --dawn-flag F)`);
  }
  if (!out.probe && !out.url === !out.offline) throw new Error('give exactly one of --url RUNNER_URL, --offline LAUNCH.json, --probe');
  return out;
}

/** The npm package `webgpu`'s folder: --webgpu, else the one Node resolves from here. */
function webgpuDir(given) {
  if (given) return given;
  return dirname(fileURLToPath(import.meta.resolve('webgpu')));
}

async function loadDawn(dir, flags) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const mod = await import(pathToFileURL(join(dir, pkg.main ?? 'index.js')).href);
  const platformDir = join(dir, 'dist', `${process.platform}-${process.platform === 'darwin' ? 'universal' : process.arch}`);
  let binary = null;
  try {
    binary = readdirSync(platformDir).includes('dawn.node') ? join(platformDir, 'dawn.node') : null;
  } catch { /* reported as null */ }
  return { create: mod.create, globals: mod.globals, version: pkg.version, binary, flags };
}

/** {vendor, architecture, device, description, is_fallback_adapter, backend?} of an adapter. */
function adapterSummary(adapter) {
  const i = adapter.info ?? {};
  return {
    vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '',
    description: i.description ?? '', is_fallback_adapter: Boolean(i.isFallbackAdapter ?? adapter.isFallbackAdapter),
  };
}

function vulkanEnv() {
  const e = process.env;
  return {
    icd: e.VK_DRIVER_FILES || e.VK_ICD_FILENAMES || '(the Vulkan loader\'s default search)',
    library_path: e.LD_LIBRARY_PATH || '',
  };
}

/** The globals a dedicated worker has and Node lacks (see the module comment). */
function installWorkerGlobals(dawn, gpu, workerUrl, fetchRoute) {
  Object.assign(globalThis, dawn.globals);
  patchWriteBuffer(dawn.globals.GPUQueue);
  globalThis.self = globalThis;
  globalThis.location = new URL(workerUrl);
  // Emscripten glue (onnxruntime-web's wasm loader) picks its environment from these: a
  // WorkerGlobalScope means a web worker (wasm and modules fetched by URL, as in the browser);
  // process.type 'renderer' (Electron's mark of a web page with Node's globals) keeps it off its
  // Node path (fs and createRequire on import.meta.url), which cannot read the run server's URLs
  if (typeof globalThis.WorkerGlobalScope === 'undefined') {
    globalThis.WorkerGlobalScope = class WorkerGlobalScope {
      static [Symbol.hasInstance](x) { return x === globalThis; }
    };
  }
  process.type = 'renderer';
  Object.defineProperty(globalThis, 'navigator', {
    configurable: true, writable: true,
    value: {
      gpu,
      userAgent: `Node.js/${process.versions.node} webgpu/${dawn.version} (Dawn: ${ENGINE})`,
      hardwareConcurrency: globalThis.navigator?.hardwareConcurrency ?? 1,
      language: 'en-US',
    },
  });
  const listeners = { error: [], unhandledrejection: [] };
  globalThis.addEventListener = (type, fn) => listeners[type]?.push(fn);
  globalThis.removeEventListener = (type, fn) => {
    const l = listeners[type];
    if (l && l.includes(fn)) l.splice(l.indexOf(fn), 1);
  };
  process.on('uncaughtException', (error) => {
    if (!listeners.error.length) throw error;
    for (const fn of listeners.error) fn({ error, message: String(error?.message ?? error) });
  });
  process.on('unhandledRejection', (reason) => {
    for (const fn of listeners.unhandledrejection) fn({ reason });
  });
  const nodeFetch = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input), globalThis.location.href);
    const routed = fetchRoute ? await fetchRoute(url, init) : null;
    if (routed) return routed;
    return nodeFetch(input instanceof Request ? new Request(url, input) : url, init);
  };
}

/** Offline: GET /api/cells/<cell> answers the config, POST …/samples appends lines to the run's
 *  samples.jsonl, other paths of OFFLINE_ORIGIN are the roots' files. */
function offlineRoute(launch, ended) {
  let seq = Number(launch.seq_start ?? 0);
  const t0 = Number(launch.t0_epoch_s ?? Date.now() / 1000);
  const api = `/api/cells/${encodeURIComponent(launch.cell)}`;
  return async (url, init) => {
    if (url.origin !== OFFLINE_ORIGIN) return null;
    const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === api && (init.method ?? 'GET') === 'GET') return json(launch.config);
    if (url.pathname === `${api}/samples` && init.method === 'POST') {
      const batch = JSON.parse(String(init.body));
      const received = Math.round((Date.now() / 1000 - t0) * 1e4) / 1e4;
      let lines = '';
      for (const s of batch.samples) {
        seq += 1;
        lines += `${JSON.stringify({ ...s, src: batch.src, queue: batch.queue, seq, cell: launch.cell, received_s: received })}\n`;
        if (['done', 'error', 'skip'].includes(s.kind)) ended(s);
      }
      appendFileSync(launch.samples, lines); // synchronous: on disk before the answer, as the store does
      return json({ seq, accepted: batch.samples.length, duplicates: 0, refused: [] });
    }
    if (url.pathname.startsWith('/api/')) return json({ detail: 'not found' }, 404);
    const path = localPath(launch.roots ?? {}, url.pathname);
    if (!path) return new Response('not found', { status: 404 });
    try {
      return new Response(readFileSync(path), { status: 200, headers: { 'content-type': contentType(path) } });
    } catch {
      return new Response('not found', { status: 404 });
    }
  };
}

async function probe(args) {
  const dawn = await loadDawn(webgpuDir(args.webgpu), args.flags);
  const gpu = dawn.create(dawn.flags);
  const adapter = await gpu.requestAdapter();
  const out = { webgpu_package: dawn.version, dawn_node: dawn.binary, node: process.version, vulkan: vulkanEnv() };
  if (adapter) out.adapter = adapterSummary(adapter);
  else {
    out.adapter = null;
    out.reason = 'Dawn found no WebGPU adapter (navigator.gpu.requestAdapter() returned null)';
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.probe) return probe(args);
  const dawn = await loadDawn(webgpuDir(args.webgpu), args.flags);
  let workerUrl;
  let route = null;
  let origin = null;
  let launch = null;
  let outcome = null;
  if (args.url) {
    const page = new URL(args.url);
    const q = new URLSearchParams({ cell: page.searchParams.get('cell') ?? '', token: page.searchParams.get('token') ?? '', page: 'null' });
    workerUrl = `${page.origin}/web/worker.js?${q}`;
  } else {
    launch = JSON.parse(readFileSync(args.offline, 'utf8'));
    origin = OFFLINE_ORIGIN;
    workerUrl = `${OFFLINE_ORIGIN}/web/worker.js?${new URLSearchParams({ cell: launch.cell, page: 'null' })}`;
    route = offlineRoute(launch, (s) => { outcome = s; });
  }
  register('./hooks.js', import.meta.url, { data: { origin, roots: launch?.roots ?? {} } });
  const gpu = dawn.create(dawn.flags);
  installWorkerGlobals(dawn, gpu, workerUrl, route);
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  globalThis.__harnessHost = {
    thread: 'node',
    env: {
      engine: ENGINE, node: process.version, webgpu_package: dawn.version, dawn_node: dawn.binary,
      dawn_flags: dawn.flags, vulkan: vulkanEnv(), delivery: args.url ? 'run server' : 'samples.jsonl (offline)',
    },
    // the bootstrap's messages to its page: {status} once the cell's end was delivered
    toHost(msg) {
      if (msg?.status) finish(msg.status);
      else if (msg?.navigate) throw new Error(`${ENGINE}: there is no page to ${msg.navigate}`);
    },
  };
  const boot = await import(workerUrl);
  boot.start(null);
  const status = await finished;
  if (launch) {
    process.stdout.write(`${JSON.stringify({ host: 'end', status, outcome: outcome?.kind ?? null })}\n`);
    return;
  }
  await new Promise((resolve) => {
    process.stdin.on('end', resolve).on('error', resolve).resume();
  });
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`Dawn host: ${err?.stack ?? err}\n`);
  process.exit(1);
});
