// wgsl-reflect.js: just enough WGSL reflection for the emulated WebGPU to build
// default ("auto") pipeline layouts.
//
// Sources:
//   - WebGPU spec, "Default pipeline layout" (#default-pipeline-layout): one bind group
//     layout entry per resource *statically used* by the entry point, with
//     buffer.minBindingSize = the variable's "minimum buffer binding size"
//     (#minimum-buffer-binding-size: a runtime-sized array counts as one element).
//   - WGSL spec, "Memory Layout" (alignment and size of scalars, vectors, matrices,
//     arrays and structures; @align/@size attributes).
//
// Scope: this is not a WGSL parser. It strips comments, finds top-level `struct`,
// `alias`, `var` and `fn` declarations by pattern and brace matching, and decides
// static use by identifier reachability from the entry point through called
// functions (shadowing is ignored). A type it cannot size gives minBindingSize 0,
// which only disables the "buffer too small" check for that binding.
//
// Exports:
//   reflectWgsl(code) -> {ok, error, entryPoints: [{name, stage}], resources, structs}
//   bindingsForEntryPoint(reflection, entryPointName) -> [{group, binding, kind, ...}]

const SCALARS = { f32: [4, 4], i32: [4, 4], u32: [4, 4], f16: [2, 2], bool: [4, 4] };
const SHORT_SCALAR = { f: 'f32', i: 'i32', u: 'u32', h: 'f16' };

/** Remove // line comments and (nested) block comments, keeping newlines. */
export function stripComments(code) {
  let out = '';
  let i = 0;
  let depth = 0;
  while (i < code.length) {
    const two = code.slice(i, i + 2);
    if (depth === 0 && two === '//') {
      while (i < code.length && code[i] !== '\n') i++;
      continue;
    }
    if (two === '/*') { depth++; i += 2; continue; }
    if (depth > 0 && two === '*/') { depth--; i += 2; out += ' '; continue; }
    if (depth > 0) { if (code[i] === '\n') out += '\n'; i++; continue; }
    out += code[i++];
  }
  return out;
}

function roundUp(k, n) { return Math.ceil(n / k) * k; }

/** Parse `name<arg, arg<...>>` into {name, args}; args are nested types or raw strings. */
export function parseTypeExpr(text) {
  let pos = 0;
  const s = text.trim();
  function skipWs() { while (pos < s.length && /\s/.test(s[pos])) pos++; }
  function parseOne() {
    skipWs();
    const m = /^[A-Za-z_][\w]*|^[0-9][\w.]*/.exec(s.slice(pos));
    if (!m) return null;
    pos += m[0].length;
    const node = { name: m[0], args: [] };
    skipWs();
    if (s[pos] === '<') {
      pos++;
      for (;;) {
        const arg = parseOne();
        if (!arg) return null;
        node.args.push(arg);
        skipWs();
        if (s[pos] === ',') { pos++; skipWs(); if (s[pos] === '>') { pos++; break; } continue; }
        if (s[pos] === '>') { pos++; break; }
        return null;
      }
    }
    return node;
  }
  const node = parseOne();
  return node;
}

/**
 * Size and alignment of a host-shareable type per WGSL "Memory Layout", with any
 * runtime-sized array counted as one element. Returns null when unknown.
 */
export function sizeAlign(node, structs, aliases, seen = new Set()) {
  if (!node) return null;
  let { name, args } = node;
  if (aliases.has(name) && !seen.has(name)) {
    seen.add(name);
    return sizeAlign(aliases.get(name), structs, aliases, seen);
  }
  if (SCALARS[name]) return { size: SCALARS[name][0], align: SCALARS[name][1] };
  if (name === 'atomic') return sizeAlign(args[0], structs, aliases, seen);
  let m = /^vec([234])([fiuh]?)$/.exec(name);
  if (m) {
    const scalar = m[2] ? { name: SHORT_SCALAR[m[2]], args: [] } : args[0];
    const e = sizeAlign(scalar, structs, aliases, seen);
    if (!e) return null;
    const n = Number(m[1]);
    return { size: n * e.size, align: (n === 3 ? 4 : n) * e.size };
  }
  m = /^mat([234])x([234])([fh]?)$/.exec(name);
  if (m) {
    const cols = Number(m[1]);
    const col = sizeAlign({ name: `vec${m[2]}${m[3]}`, args: m[3] ? [] : args }, structs, aliases, seen);
    if (!col) return null;
    return { size: cols * roundUp(col.align, col.size), align: col.align };
  }
  if (name === 'array') {
    const e = sizeAlign(args[0], structs, aliases, seen);
    if (!e) return null;
    const stride = roundUp(e.align, e.size);
    if (args.length < 2) return { size: stride, align: e.align, runtimeSized: true };
    const count = parseInt(args[1].name, 10);
    if (!Number.isFinite(count)) return null; // override-sized or expression
    return { size: count * stride, align: e.align };
  }
  if (structs.has(name)) {
    if (seen.has('struct:' + name)) return null;
    seen.add('struct:' + name);
    let offset = 0;
    let align = 1;
    let runtimeSized = false;
    for (const member of structs.get(name)) {
      const t = sizeAlign(member.type, structs, aliases, seen);
      if (!t) return null;
      const a = member.align ?? t.align;
      const sz = member.size ?? t.size;
      offset = roundUp(a, offset) + sz;
      align = Math.max(align, a);
      runtimeSized = runtimeSized || !!t.runtimeSized;
    }
    return { size: roundUp(align, offset), align, runtimeSized };
  }
  return null;
}

/** Find the index just past the brace block that opens at `open` ('{'). */
function matchBrace(src, open) {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    if (src[i] === '{') depth++;
    else if (src[i] === '}') { depth--; if (depth === 0) return i + 1; }
  }
  return -1;
}

function parseAttrs(text) {
  const attrs = new Map();
  const re = /@\s*([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?/g;
  let m;
  while ((m = re.exec(text))) attrs.set(m[1], m[2] === undefined ? '' : m[2].trim());
  return attrs;
}

function intAttr(v) {
  if (v === undefined) return undefined;
  const n = parseInt(String(v).replace(/[iu]$/, ''), 10);
  return Number.isFinite(n) ? n : undefined;
}

function classify(addressSpace, access, typeNode) {
  if (addressSpace === 'uniform') return { kind: 'buffer', type: 'uniform' };
  if (addressSpace === 'storage') {
    return { kind: 'buffer', type: access === 'read_write' ? 'storage' : 'read-only-storage' };
  }
  const name = typeNode ? typeNode.name : '';
  if (name === 'sampler') return { kind: 'sampler', type: 'filtering' };
  if (name === 'sampler_comparison') return { kind: 'sampler', type: 'comparison' };
  if (name === 'texture_external') return { kind: 'externalTexture' };
  if (name.startsWith('texture_storage_')) return { kind: 'storageTexture' };
  if (name.startsWith('texture_')) return { kind: 'texture' };
  return { kind: 'unknown' };
}

/**
 * Reflect a WGSL module. Never throws; `ok` is false (with `error`) when the
 * source is obviously malformed (unbalanced braces or parentheses).
 */
export function reflectWgsl(code) {
  const result = { ok: true, error: '', entryPoints: [], resources: [], functions: new Map(), structs: new Map() };
  if (typeof code !== 'string') return { ...result, ok: false, error: 'code is not a string' };
  const src = stripComments(code);
  for (const [a, b] of [['{', '}'], ['(', ')'], ['[', ']']]) {
    let depth = 0;
    for (const ch of src) {
      if (ch === a) depth++;
      else if (ch === b && --depth < 0) break;
    }
    if (depth !== 0) return { ...result, ok: false, error: `unbalanced '${a}${b}' in WGSL source` };
  }

  // Split into top-level chunks: brace blocks belong to the declaration before them.
  const topLevel = [];
  const structs = result.structs;
  const aliases = new Map();
  let i = 0;
  let start = 0;
  while (i < src.length) {
    const ch = src[i];
    if (ch === '{') {
      const end = matchBrace(src, i);
      topLevel.push({ head: src.slice(start, i), body: src.slice(i + 1, end - 1) });
      i = end;
      start = i;
      continue;
    }
    if (ch === ';') {
      topLevel.push({ head: src.slice(start, i), body: null });
      start = i + 1;
    }
    i++;
  }

  for (const { head, body } of topLevel) {
    const h = head.trim();
    let m;
    if (body !== null && (m = /(?:^|\s)struct\s+([A-Za-z_]\w*)\s*$/.exec(h))) {
      const members = [];
      for (const part of body.split(/[,;]/)) {
        let rest = part.trim();
        let attrText = '';
        let am;
        while ((am = /^@\s*[A-Za-z_]\w*\s*(?:\([^)]*\))?\s*/.exec(rest))) {
          attrText += am[0];
          rest = rest.slice(am[0].length);
        }
        const mm = /^([A-Za-z_]\w*)\s*:\s*([\s\S]+)$/.exec(rest);
        if (!mm) continue;
        const attrs = parseAttrs(attrText);
        members.push({
          name: mm[1],
          type: parseTypeExpr(mm[2]),
          align: intAttr(attrs.get('align')),
          size: intAttr(attrs.get('size')),
        });
      }
      structs.set(m[1], members);
      continue;
    }
    if (body === null && (m = /(?:^|\s)alias\s+([A-Za-z_]\w*)\s*=\s*([\s\S]+)$/.exec(h))) {
      aliases.set(m[1], parseTypeExpr(m[2]));
      continue;
    }
    if (body === null && (m = /^([\s\S]*?)\bvar\s*(?:<([^>]*)>)?\s*([A-Za-z_]\w*)\s*:\s*([\s\S]+?)\s*(?:=[\s\S]*)?$/.exec(h))) {
      const attrs = parseAttrs(m[1]);
      if (!attrs.has('group') || !attrs.has('binding')) continue;
      const [addressSpace = '', access = ''] = (m[2] || '').split(',').map((x) => x.trim());
      const typeNode = parseTypeExpr(m[4]);
      const res = {
        name: m[3],
        group: intAttr(attrs.get('group')),
        binding: intAttr(attrs.get('binding')),
        addressSpace,
        access,
        typeText: m[4].trim(),
        ...classify(addressSpace, access, typeNode),
        minBindingSize: 0,
      };
      if (res.kind === 'buffer') res.typeNode = typeNode;
      result.resources.push(res);
      continue;
    }
    if (body !== null && (m = /^([\s\S]*?)\bfn\s+([A-Za-z_]\w*)\s*\(/.exec(h))) {
      const attrs = parseAttrs(m[1]);
      const stage = attrs.has('compute') ? 'compute' : attrs.has('vertex') ? 'vertex' : attrs.has('fragment') ? 'fragment' : null;
      const idents = new Set(body.match(/[A-Za-z_]\w*/g) || []);
      result.functions.set(m[2], { name: m[2], stage, idents, workgroupSize: attrs.get('workgroup_size') });
      if (stage) result.entryPoints.push({ name: m[2], stage });
    }
  }

  for (const res of result.resources) {
    if (res.kind !== 'buffer') continue;
    const sa = sizeAlign(res.typeNode, structs, aliases);
    res.minBindingSize = sa ? sa.size : 0;
    delete res.typeNode;
  }
  return result;
}

/** Resources statically used by an entry point (through the functions it calls). */
export function bindingsForEntryPoint(reflection, entryPointName) {
  const fns = reflection.functions;
  const seen = new Set();
  const idents = new Set();
  const stack = [entryPointName];
  while (stack.length) {
    const name = stack.pop();
    if (seen.has(name) || !fns.has(name)) continue;
    seen.add(name);
    for (const id of fns.get(name).idents) {
      idents.add(id);
      if (fns.has(id) && !seen.has(id)) stack.push(id);
    }
  }
  return reflection.resources.filter((r) => idents.has(r.name));
}
