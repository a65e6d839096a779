// errors.js: GPUError classes, error scopes and uncaptured-error events of the emulated
// WebGPU.
//
// Sources: WebGPU spec "Errors & Debugging" (#errors-and-debugging): GPUError,
// GPUValidationError, GPUOutOfMemoryError, GPUInternalError, GPUPipelineError;
// "Error Scopes" (#error-scopes): an error goes to the innermost scope whose filter
// matches, a scope keeps only its first error, and an error no scope captures fires
// `uncapturederror` (GPUUncapturedErrorEvent) at the device; popErrorScope() on an empty
// stack rejects with OperationError. "Shader Modules" (#gpucompilationinfo) for
// GPUCompilationInfo/GPUCompilationMessage, and GPUDeviceLostInfo (#device-lost).

import { INTERNAL, afterTask, domException } from './internals.js';

export class GPUError {
  constructor(message) {
    if (new.target === GPUError) throw new TypeError('Illegal constructor');
    this[INTERNAL] = { message: String(message ?? '') };
  }
  get message() { return this[INTERNAL].message; }
}
export class GPUValidationError extends GPUError {}
export class GPUOutOfMemoryError extends GPUError {}
export class GPUInternalError extends GPUError {}

export class GPUPipelineError extends DOMException {
  constructor(message = '', options = {}) {
    super(message, 'GPUPipelineError');
    if (options.reason !== 'validation' && options.reason !== 'internal') {
      throw new TypeError("GPUPipelineError: reason must be 'validation' or 'internal'");
    }
    Object.defineProperty(this, INTERNAL, { value: { reason: options.reason } });
  }
  get reason() { return this[INTERNAL].reason; }
}

const EventBase = typeof Event === 'function' ? Event : class { constructor(type) { this.type = type; } };

export class GPUUncapturedErrorEvent extends EventBase {
  constructor(type, init) {
    super(type, init);
    if (!init || !(init.error instanceof GPUError)) throw new TypeError('GPUUncapturedErrorEvent: error is required');
    Object.defineProperty(this, INTERNAL, { value: { error: init.error } });
  }
  get error() { return this[INTERNAL].error; }
}

export class GPUDeviceLostInfo {
  constructor(token, reason, message) {
    if (token !== INTERNAL) throw new TypeError('Illegal constructor');
    this[INTERNAL] = { reason, message };
  }
  get reason() { return this[INTERNAL].reason; }
  get message() { return this[INTERNAL].message; }
}

export class GPUCompilationMessage {
  constructor(token, init) {
    if (token !== INTERNAL) throw new TypeError('Illegal constructor');
    this[INTERNAL] = init;
  }
  get message() { return this[INTERNAL].message; }
  get type() { return this[INTERNAL].type; }
  get lineNum() { return this[INTERNAL].lineNum; }
  get linePos() { return this[INTERNAL].linePos; }
  get offset() { return this[INTERNAL].offset; }
  get length() { return this[INTERNAL].length; }
}

export class GPUCompilationInfo {
  constructor(token, messages) {
    if (token !== INTERNAL) throw new TypeError('Illegal constructor');
    this[INTERNAL] = { messages: Object.freeze(messages.slice()) };
  }
  get messages() { return this[INTERNAL].messages; }
}

const ERROR_CLASS = { validation: GPUValidationError, 'out-of-memory': GPUOutOfMemoryError, internal: GPUInternalError };

/**
 * Report an error on the device timeline of device native `dev`.
 * Lost devices drop errors (spec: errors after loss are not surfaced).
 */
export function generateError(dev, filter, message) {
  if (dev.lost) return;
  dev.ledger.errorsGenerated++;
  const error = new ERROR_CLASS[filter](message);
  for (let i = dev.errorScopes.length - 1; i >= 0; i--) {
    const scope = dev.errorScopes[i];
    if (scope.filter === filter) {
      if (scope.error === null) scope.error = error;
      return;
    }
  }
  const target = dev.eventTarget;
  afterTask(() => {
    if (dev.lost || !target) return;
    const event = new GPUUncapturedErrorEvent('uncapturederror', { error, cancelable: true });
    if (typeof target.dispatchEvent === 'function') target.dispatchEvent(event);
    if (!event.defaultPrevented && dev.options.logUncapturedErrors !== false) {
      console.warn(`[webgpu-emulated] uncaptured ${filter} error: ${message}`);
    }
  });
}

export function validationError(dev, message) {
  generateError(dev, 'validation', message);
}

export function pushErrorScope(dev, filter) {
  if (!(filter in ERROR_CLASS)) throw new TypeError(`pushErrorScope: invalid filter '${filter}'`);
  dev.errorScopes.push({ filter, error: null });
}

export function popErrorScope(dev) {
  if (dev.lost) return Promise.resolve(null);
  const scope = dev.errorScopes.pop();
  if (!scope) return Promise.reject(domException('OperationError', 'popErrorScope: the error scope stack is empty'));
  // Errors are generated synchronously here; resolve in a later task like a real device timeline.
  return new Promise((resolve) => afterTask(() => resolve(scope.error)));
}
