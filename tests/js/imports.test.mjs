// No import cycle among the browser-side modules (web/, workloads/): each static import,
// re-export and literal dynamic import() is an edge; a cycle fails the test with its path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROOTS = ['web', 'workloads'];
// import x from '...'; import '...'; export ... from '...'; import('...') with a literal
const SPECIFIER = /(?:\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?|\bexport\s*[\w*{}\s,$]*\s*from\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;

function jsFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') out.push(...jsFiles(p));
    else if (/\.m?js$/.test(entry.name)) out.push(p);
  }
  return out;
}

/** file (repo-relative) -> [imported repo files]; bare and node_modules specifiers are skipped. */
export function importGraph(roots = ROOTS) {
  const graph = new Map();
  for (const root of roots) {
    for (const file of jsFiles(path.join(REPO, root))) {
      const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      const deps = [];
      for (const m of text.matchAll(SPECIFIER)) {
        const spec = m[1];
        let target;
        if (spec.startsWith('./') || spec.startsWith('../')) target = path.resolve(path.dirname(file), spec);
        else if (spec.startsWith('/web/') || spec.startsWith('/workloads/')) target = path.join(REPO, spec);
        else continue;
        if (target.includes(`${path.sep}node_modules${path.sep}`)) continue;
        deps.push(path.relative(REPO, target));
      }
      graph.set(path.relative(REPO, file), deps);
    }
  }
  return graph;
}

/** Every cycle found by depth-first search, each as [a, b, ..., a]. */
export function findCycles(graph) {
  const cycles = [];
  const state = new Map(); // undefined: new, 1: on the stack, 2: done
  const stack = [];
  const visit = (node) => {
    state.set(node, 1);
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      if (state.get(dep) === 1) cycles.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (!state.get(dep)) visit(dep);
    }
    stack.pop();
    state.set(node, 2);
  };
  for (const node of graph.keys()) if (!state.get(node)) visit(node);
  return cycles;
}

test('the cycle finder finds a cycle', () => {
  const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
  assert.deepEqual(findCycles(g), [['a', 'b', 'c', 'a']]);
  assert.deepEqual(findCycles(new Map([['a', ['b']], ['b', []]])), []);
});

test('no import cycle in web/ or workloads/', () => {
  const graph = importGraph();
  // the scan sees real edges (so an empty result is not a parse failure)
  assert.ok(graph.get('workloads/decode-loop/graph.js').includes('workloads/decode-loop/graph-fused.js'));
  assert.ok(graph.get('workloads/ort-decode/main.js').includes('workloads/lib/bind-group-cache.js'));
  assert.ok(graph.get('web/worker.js').includes('web/probes/index.js'));
  for (const [file, deps] of graph) {
    for (const dep of deps) assert.ok(fs.existsSync(path.join(REPO, dep)), `${file} imports a missing ${dep}`);
  }
  assert.deepEqual(findCycles(graph), []);
});
