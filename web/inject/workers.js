// Worker constructors wrapped so every worker an app starts gets the bootstrap first.
//
// `Worker` and `SharedWorker` become Proxies of the native constructors (instanceof,
// prototype, subclassing and `new.target` unchanged). For each new worker:
//   - same-origin http(s) URL: the URL, script type (classic|module) and a worker id are
//     registered with the interceptor by a synchronous POST to /__webgpu_harness__/worker before
//     the native constructor runs, so the interceptor knows the script's type (and, in Chromium's
//     Fetch interception, that it is a worker script at all) when the browser fetches it. The
//     interceptor then prepends `importScripts(bootstrap)` (classic) or `import bootstrap` (module)
//     to the script: the worker keeps its URL, so self.location, relative URLs and importScripts
//     behave as before.
//   - blob: URL: the worker starts from a new blob: URL made of the prefix and the original
//     Blob (kept when the app called URL.createObjectURL, so nothing is read and CSP
//     connect-src does not matter; a blob: URL made in another realm is read with a synchronous
//     XHR instead). self.location.href is then the new blob: URL (a blob: worker resolves no
//     relative URL either way).
//   - data: or cross-origin URL: started unchanged, recorded as not instrumented.
// `navigator.serviceWorker.register` is wrapped the same way (registration only; a service
// worker is instrumented when the interceptor sees its script fetch).
// Each start is posted as a `worker` sample {worker_id, worker_kind, url, script_type, via,
// instrumented: false + reason | null (decided by whether that worker's realm reports `env`)}.

export const BOOTSTRAP_PATH = '/__webgpu_harness__/bootstrap.js';
export const REGISTER_PATH = '/__webgpu_harness__/worker';

function randomId() {
  return Math.random().toString(16).slice(2, 10);
}

/** Query string of the bootstrap URL: what the new realm is told about itself. */
export function bootstrapQuery(hints) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(hints)) if (v !== undefined && v !== null) q.set(k, String(v));
  return `?${q}`;
}

/** The one-line prefix that loads the bootstrap (absolute URL) before the worker's own code. */
export function bootstrapPrefix(type, url) {
  return type === 'module' ? `import ${JSON.stringify(url)};` : `importScripts(${JSON.stringify(url)});`;
}

function readSync(o, url) {
  const xhr = new o.XMLHttpRequest();
  xhr.open('GET', url, false);
  xhr.overrideMimeType('text/plain; charset=utf-8');
  xhr.send();
  if (xhr.status !== 200 && xhr.status !== 0) throw new Error(`HTTP ${xhr.status}`);
  return xhr.responseText;
}

function registerSync(o, origin, entry) {
  const xhr = new o.XMLHttpRequest();
  xhr.open('POST', new URL(REGISTER_PATH, origin).href, false);
  xhr.setRequestHeader('content-type', 'application/json');
  xhr.send(JSON.stringify({ ...entry, token: o.token }));
  return xhr.status >= 200 && xhr.status < 300;
}

/**
 * Wrap Worker, SharedWorker and navigator.serviceWorker.register in `scope`.
 * @param post function(sample) of the realm's transport
 * @param o originals captured before app code ran (XMLHttpRequest, Blob, URL, setTimeout)
 */
export function wrapWorkers(scope, post, o) {
  const origin = scope.origin;
  const base = () => scope.location.href;

  // Blobs behind this realm's blob: URLs, so a blob: worker's source needs no read.
  const blobs = new Map();
  const URLCtor = scope.URL;
  if (URLCtor && typeof o.createObjectURL === 'function') {
    URLCtor.createObjectURL = function (obj) {
      const url = o.createObjectURL.call(this, obj);
      if (obj instanceof o.Blob) blobs.set(url, obj);
      return url;
    };
    URLCtor.revokeObjectURL = function (url) {
      blobs.delete(String(url));
      return o.revokeObjectURL.call(this, url);
    };
  }

  function prepare(workerKind, url, type) {
    const record = { kind: 'worker', worker_id: randomId(), worker_kind: workerKind, url: String(url),
      script_type: type, via: null, instrumented: null };
    let abs;
    try {
      abs = new o.URL(String(url), base());
    } catch {
      return { record: null, url };  // the native constructor throws its own SyntaxError
    }
    record.url = abs.href;
    const hints = { kind: workerKind, type, wid: record.worker_id };
    if (abs.protocol === 'blob:') {
      try {
        const source = blobs.get(abs.href) ?? readSync(o, abs.href);
        hints.created_url = abs.href;
        const boot = new o.URL(BOOTSTRAP_PATH + bootstrapQuery(hints), origin).href;
        const blob = new o.Blob([`${bootstrapPrefix(type, boot)}\n`, source], { type: 'text/javascript' });
        const replaced = o.createObjectURL.call(o.URL, blob);
        o.setTimeout.call(scope, () => o.revokeObjectURL.call(o.URL, replaced), 60000);
        record.via = 'blob';
        return { record, url: replaced };
      } catch (err) {
        Object.assign(record, { instrumented: false, reason: `could not read the blob: URL (made in another realm): ${err?.message ?? err}` });
        return { record, url };
      }
    }
    if ((abs.protocol === 'http:' || abs.protocol === 'https:') && abs.origin === origin) {
      let ok = false;
      try { ok = registerSync(o, origin, { url: abs.href, type, kind: workerKind, wid: record.worker_id }); } catch { ok = false; }
      record.via = ok ? 'url' : 'url-unregistered';
      return { record, url };
    }
    Object.assign(record, { instrumented: false,
      reason: abs.protocol === 'data:' ? 'data: URL worker (opaque origin)' : 'cross-origin worker script' });
    return { record, url };
  }

  for (const [name, workerKind] of [['Worker', 'worker'], ['SharedWorker', 'sharedworker']]) {
    const Native = scope[name];
    if (typeof Native !== 'function') continue;
    const wrapped = new Proxy(Native, {
      construct(target, args, newTarget) {
        const opts = args[1];
        const type = (opts && typeof opts === 'object' && opts.type === 'module') ? 'module' : 'classic';
        const { record, url } = prepare(workerKind, args[0], type);
        if (record) post(record);
        const newArgs = [url, ...args.slice(1)];
        const worker = Reflect.construct(target, newArgs, newTarget === wrapped ? target : newTarget);
        if (record && record.instrumented === false) {
          // nothing runs in that worker to report its failures: its error events, seen from here
          // (a listener changes nothing of how the error is handled)
          let n = 0;
          worker?.addEventListener?.('error', (e) => {
            if (n++ < 20) {
              post({ kind: 'app_error', error_kind: `${workerKind} error`, source: record.url.slice(0, 500), stack: '',
                message: `${record.worker_kind} not instrumented (${record.reason}): ${e?.message || 'error event'}`.slice(0, 2000),
                step: null });
            }
          });
        }
        return worker;
      },
    });
    Object.defineProperty(scope, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  }

  let container = null;
  try {
    container = scope.navigator?.serviceWorker;  // throws in a sandboxed realm without allow-same-origin
  } catch {
    container = null;
  }
  const proto = container && Object.getPrototypeOf(container);
  if (proto && typeof proto.register === 'function') {
    const register = proto.register;
    Object.defineProperty(proto, 'register', {
      configurable: true, writable: true,
      value: function (url, options) {
        const type = options?.type === 'module' ? 'module' : 'classic';
        const { record } = prepare('serviceworker', url, type);
        if (record) post(record);
        return register.apply(this, arguments);
      },
    });
  }
}
