// URL paths → files for the Dawn host's offline mode (web/dawn/host.js --offline): the same
// roots the run server serves (harness/serve/app.py default_roots: web/, workloads/,
// node_modules/<package>/, a --model's files), as {prefix: folder or file}.

import { statSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';

/**
 * The local file of URL path `pathname` (e.g. '/workloads/kernels/add.wgsl') under `roots`
 * ({'web': '/repo/web', 'node_modules/onnxruntime-web': '/repo/node_modules/onnxruntime-web',
 * 'user-model/model.onnx': '/data/model.onnx'}), longest prefix first; null when no root holds
 * it or the path climbs out of its root ('..').
 */
export function localPath(roots, pathname) {
  let rel;
  try {
    rel = decodeURIComponent(pathname).replace(/^\/+/, '');
  } catch {
    return null;
  }
  const prefixes = Object.keys(roots).sort((a, b) => b.length - a.length);
  for (const prefix of prefixes) {
    const p = prefix.replace(/^\/+|\/+$/g, '');
    if (rel === p) return isFile(roots[prefix]) ? roots[prefix] : null;
    if (!rel.startsWith(`${p}/`)) continue;
    const base = normalize(roots[prefix]);
    const full = normalize(join(base, rel.slice(p.length + 1)));
    if (full !== base && !full.startsWith(base.endsWith(sep) ? base : base + sep)) return null;
    return full;
  }
  return null;
}

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const TYPES = {
  '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm',
  '.wgsl': 'text/plain', '.onnx': 'application/octet-stream', '.npy': 'application/octet-stream', '.html': 'text/html',
};

/** Content type by file extension (what the run server sends for the same file). */
export function contentType(path) {
  const m = /\.[a-z0-9]+$/i.exec(path);
  return (m && TYPES[m[0].toLowerCase()]) || 'application/octet-stream';
}
