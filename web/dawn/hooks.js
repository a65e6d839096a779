// Module loading hooks of the Dawn host (web/dawn/host.js), registered with node:module's
// register(): they let Node import the harness's modules by the URLs a browser worker uses.
//
// A browser worker imports /web/worker.js, the workload's /workloads/<name>/main.js and, through
// them, relative modules and onnxruntime-web's bundle under /node_modules/ — all http URLs of the
// run server. Node imports only file: and data: URLs by itself, so these hooks
//  - resolve an http(s) specifier, or a relative or absolute-path one inside an http(s) module,
//    against that module's URL (as a browser does: import.meta.url stays the http URL), and
//  - load such a URL's source: over HTTP from the run server (`--url`), or, with no server
//    (`--offline`), from the folder of the harness's roots (URL prefix → folder or file, the same
//    roots the server would serve) for the host's own origin.
// Bare specifiers and node: builtins go to Node's own resolution.

import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { localPath } from './roots.js';

let settings = { origin: null, roots: {} };

/** data: {origin, roots}: the offline origin and its roots ({} with a run server). */
export function initialize(data) {
  settings = { origin: data?.origin ?? null, roots: data?.roots ?? {} };
}

const isHttp = (s) => s.startsWith('http://') || s.startsWith('https://');

export async function resolve(specifier, context, nextResolve) {
  if (isHttp(specifier)) return { url: specifier, shortCircuit: true };
  const parent = context.parentURL ?? '';
  if (isHttp(parent) && (specifier.startsWith('./') || specifier.startsWith('../') || specifier.startsWith('/'))) {
    return { url: new URL(specifier, parent).href, shortCircuit: true };
  }
  // a module loaded from a URL that imports a Node builtin (onnxruntime-web's Emscripten glue
  // imports worker_threads, fs… when it finds itself in Node): Node refuses "remote imports
  // cannot import from a local location" unless the hook answers for it
  if (isHttp(parent) && isBuiltin(specifier)) {
    return { url: specifier.startsWith('node:') ? specifier : `node:${specifier}`, shortCircuit: true };
  }
  if (isHttp(parent)) return nextResolve(specifier, { ...context, parentURL: import.meta.url });
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!isHttp(url)) return nextLoad(url, context);
  const u = new URL(url);
  let source;
  if (settings.origin && u.origin === settings.origin) {
    const path = localPath(settings.roots, u.pathname);
    if (!path) throw new Error(`Dawn host: ${u.pathname} is under none of the harness's roots (${Object.keys(settings.roots).join(', ')})`);
    source = await readFile(path, 'utf8');
  } else {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`Dawn host: importing ${url}: HTTP ${res.status}`);
    source = await res.text();
  }
  return { format: 'module', source, shortCircuit: true };
}
