// Frames the network never serves — an <iframe> without src or with about:blank, srcdoc — get
// the bootstrap from the document that made them.
//
// The proxy injects the bootstrap into every HTML document it serves, and Chromium's init
// script runs in every new document; but an about:blank or srcdoc frame's document is made by
// the browser from its parent, never fetched, so on the proxy path nothing would enter it
// (web/inject/README.md). Here, in each window realm:
//   - about:blank (and any same-origin frame) is entered from the parent, synchronously, the
//     first time the app can reach the frame's global: reading an <iframe>'s (or <frame>'s)
//     contentWindow or contentDocument, or inserting it into the document (appendChild,
//     insertBefore, replaceChild, append, prepend, before, after, replaceWith,
//     insertAdjacentElement, innerHTML, outerHTML, insertAdjacentHTML); a MutationObserver catches
//     frames the parser or other paths insert (its records are delivered before the parser runs
//     the next script). "Entering" runs the bootstrap again — a fresh copy of every probe, with
//     the frame's global as its realm (bootstrap.js install(config, scope, reenter)).
//   - srcdoc: a srcdoc set from script (the property, or setAttribute) gets a first
//     `<script src=".../bootstrap.js?kind=frame">` (a classic, parser-blocking script: it runs
//     before the srcdoc's own scripts); the getter returns the app's own text. A srcdoc in the
//     served HTML is rewritten the same way by the proxy (harness/serve/rewrite.py).
//   - at each frame's `load`, a same-origin frame still without the bootstrap is entered late
//     and reported (`frame` sample, `instrumented: 'late'`): its calls before that are not
//     counted. A frame that cannot be entered (a sandboxed or cross-origin frame: its global is
//     not reachable) is reported with `instrumented: null` (its own document may have the
//     bootstrap — Chromium's init script, the proxy's HTML — decided by whether a `frame` realm
//     with that URL reports `env`) or `false` with the reason.

import { BOOTSTRAP_PATH, bootstrapQuery } from './workers.js';

const FRAME_TAGS = new Set(['IFRAME', 'FRAME']);

function randomId() {
  return Math.random().toString(16).slice(2, 10);
}

/**
 * Wrap frame creation in the window `scope`.
 * @param key the bootstrap's global key (a frame with it has the bootstrap)
 * @param enter (win, fid) => void: install the bootstrap into a same-origin frame's global; throws on failure
 * @param post function(sample) of the realm's transport
 */
export function wrapFrames(scope, { key, enter, post }) {
  if (!scope.document || typeof scope.HTMLIFrameElement !== 'function') return false;
  const handled = new WeakSet(); // frame windows entered, found instrumented or reported
  const watched = new WeakSet(); // frame elements with our load listener
  const getters = new Map(); // element prototype -> native contentWindow getter
  for (const name of ['HTMLIFrameElement', 'HTMLFrameElement']) {
    const proto = scope[name]?.prototype;
    const d = proto && Object.getOwnPropertyDescriptor(proto, 'contentWindow');
    if (d?.get) getters.set(proto, d.get);
  }
  const nativeWindow = (el) => {
    for (const [proto, get] of getters) if (proto.isPrototypeOf(el)) return get.call(el);
    return null;
  };

  const report = (el, fields) => {
    let url = '';
    try { url = String(el.src || (el.hasAttribute?.('srcdoc') ? 'about:srcdoc' : 'about:blank')); } catch { url = ''; }
    post({ kind: 'frame', frame_id: randomId(), url, instrumented: null, late: false, reason: '', ...fields });
  };

  // Returns true when the frame has the bootstrap (now or already).
  const visit = (el, win, late) => {
    if (!win || handled.has(win)) return true;
    let has;
    try {
      has = Boolean(win[key]);
    } catch {
      // cross-origin (or sandboxed without allow-same-origin): not reachable from here
      handled.add(win);
      report(el, { instrumented: null, reason: 'a cross-origin or sandboxed frame: not reachable from its parent; measured only if its own document got the bootstrap' });
      return false;
    }
    handled.add(win);
    if (has) return true;
    // a document whose own scripts are already there ran (some of) them before the bootstrap
    try { if (win.document?.scripts?.length) late = true; } catch { /* no document yet */ }
    try {
      enter(win, randomId());
    } catch (err) {
      report(el, { instrumented: false, reason: `the bootstrap could not be run in the frame: ${err?.message ?? err}` });
      return false;
    }
    if (late) {
      report(el, { instrumented: 'late', late: true,
        reason: 'the frame ran before the bootstrap reached it (entered at its load): its WebGPU calls before then are not counted' });
    }
    return true;
  };

  const watch = (el) => {
    if (watched.has(el)) return;
    watched.add(el);
    el.addEventListener('load', () => {
      let win = null;
      try { win = nativeWindow(el); } catch { win = null; }
      visit(el, win, true);
    });
  };

  const look = (el) => {
    if (!el || !FRAME_TAGS.has(el.tagName)) return;
    watch(el);
    let win = null;
    try { win = nativeWindow(el); } catch { win = null; }
    visit(el, win, false);
  };
  const lookIn = (node) => {
    if (!node || (node.nodeType !== 1 && node.nodeType !== 11)) return;
    if (node.nodeType === 1) look(node);
    if (typeof node.querySelectorAll === 'function') {
      for (const el of node.querySelectorAll('iframe,frame')) look(el);
    }
  };

  // contentWindow / contentDocument: the app's way into a frame's global
  for (const [proto, get] of getters) {
    Object.defineProperty(proto, 'contentWindow', {
      configurable: true, enumerable: true,
      get() { const w = get.call(this); if (w) { watch(this); visit(this, w, false); } return w; },
    });
    const doc = Object.getOwnPropertyDescriptor(proto, 'contentDocument');
    if (doc?.get) {
      Object.defineProperty(proto, 'contentDocument', {
        configurable: true, enumerable: true,
        get() { const w = get.call(this); if (w) { watch(this); visit(this, w, false); } return doc.get.call(this); },
      });
    }
  }

  // insertion: a frame's global exists as soon as it is connected
  const after = (proto, method, collect) => {
    const original = proto?.[method];
    if (typeof original !== 'function') return;
    Object.defineProperty(proto, method, {
      configurable: true, writable: true, enumerable: false,
      value: function (...args) {
        // a DocumentFragment is empty once inserted: its frames are found before
        const nodes = collect(this, args).flatMap((n) => (n?.nodeType === 11 && typeof n.querySelectorAll === 'function'
          ? [...n.querySelectorAll('iframe,frame')] : [n]));
        const result = original.apply(this, args);
        for (const n of nodes) lookIn(n);
        return result;
      },
    });
  };
  const nodesIn = (_self, args) => args.filter((a) => a && typeof a === 'object');
  const Node = scope.Node?.prototype;
  const Element = scope.Element?.prototype;
  after(Node, 'appendChild', (_s, a) => [a[0]]);
  after(Node, 'insertBefore', (_s, a) => [a[0]]);
  after(Node, 'replaceChild', (_s, a) => [a[0]]);
  for (const m of ['append', 'prepend', 'before', 'after', 'replaceWith']) after(Element, m, nodesIn);
  after(scope.DocumentFragment?.prototype, 'append', nodesIn);
  after(Element, 'insertAdjacentElement', (_s, a) => [a[1]]);
  after(Element, 'insertAdjacentHTML', (self) => [self.parentNode ?? self]);
  for (const [prop, target] of [['innerHTML', (el) => el], ['outerHTML', (el) => el.parentNode]]) {
    const d = Element && Object.getOwnPropertyDescriptor(Element, prop);
    if (!d?.set) continue;
    Object.defineProperty(Element, prop, {
      ...d,
      set(v) { const parent = target(this); d.set.call(this, v); lookIn(parent); },
    });
  }

  // srcdoc: the bootstrap as the srcdoc document's first script
  const origin = scope.origin && scope.origin !== 'null' ? scope.origin : scope.location.href;
  const tag = () => `<script src="${new URL(BOOTSTRAP_PATH + bootstrapQuery({ kind: 'frame', fid: randomId() }), origin).href}"></script>`;
  // the app reads back its own srcdoc: without the tag put in front (here, or by the proxy)
  const strip = (text) => {
    if (typeof text !== 'string' || !text.startsWith('<script src="')) return text;
    const end = text.indexOf('</script>');
    return end < 0 || !text.slice(0, end).includes(BOOTSTRAP_PATH) ? text : text.slice(end + '</script>'.length);
  };
  const iframeProto = scope.HTMLIFrameElement.prototype;
  const srcdoc = Object.getOwnPropertyDescriptor(iframeProto, 'srcdoc');
  if (srcdoc?.set) {
    Object.defineProperty(iframeProto, 'srcdoc', {
      ...srcdoc,
      get() { return strip(srcdoc.get.call(this)); },
      set(v) { watch(this); srcdoc.set.call(this, tag() + String(v)); },
    });
  }
  const setAttribute = Element?.setAttribute;
  if (typeof setAttribute === 'function') {
    Object.defineProperty(Element, 'setAttribute', {
      configurable: true, writable: true, enumerable: false,
      value: function (name, value) {
        if (this.tagName === 'IFRAME' && String(name).toLowerCase() === 'srcdoc') {
          watch(this);
          return setAttribute.call(this, name, tag() + String(value));
        }
        return setAttribute.call(this, name, value);
      },
    });
  }
  const getAttribute = Element?.getAttribute;
  if (typeof getAttribute === 'function') {
    Object.defineProperty(Element, 'getAttribute', {
      configurable: true, writable: true, enumerable: false,
      value: function (name) {
        const v = getAttribute.call(this, name);
        return this.tagName === 'IFRAME' && String(name).toLowerCase() === 'srcdoc' ? strip(v) : v;
      },
    });
  }

  // frames inserted by the parser or by paths not wrapped above
  const Observer = scope.MutationObserver;
  if (typeof Observer === 'function') {
    const start = () => {
      const mo = new Observer((records) => {
        for (const r of records) for (const n of r.addedNodes) lookIn(n);
      });
      mo.observe(scope.document, { childList: true, subtree: true });
    };
    start();
  }
  for (const el of scope.document.querySelectorAll?.('iframe,frame') ?? []) look(el);
  return true;
}
