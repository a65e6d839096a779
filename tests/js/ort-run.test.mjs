// workloads/ort-run/inputs.js: .npy parsing, shape resolution and generated inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generate, mulberry32, parseDims, parseNpy, parsePairs, resolveShape, sumOf, toHalfBits } from '../../workloads/ort-run/inputs.js';

const fixture = new URL('../../workloads/ort-run/models/conv-tiny/', import.meta.url);

/** A version-1 .npy of `descr` and `shape` around `data` bytes, header padded to 64 as numpy does. */
function npy(descr, shape, data, fortran = 'False') {
  let header = `{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

test('parseNpy reads the committed fixture input written by numpy (float32 [1, 3, 64, 64])', () => {
  const { type, shape, data } = parseNpy(readFileSync(new URL('input.npy', fixture)));
  assert.equal(type, 'float32');
  assert.deepEqual(shape, [1, 3, 64, 64]);
  assert.equal(data.length, 3 * 64 * 64);
  assert.ok(data.every((v) => v >= 0 && v < 1));
});

test('parseNpy: int64, bool and 1-d shapes; big-endian, Fortran order and float64 refused', () => {
  const ints = parseNpy(npy('<i8', [2, 2], new BigInt64Array([1n, -2n, 3n, 4n])));
  assert.equal(ints.type, 'int64');
  assert.deepEqual([...ints.data], [1n, -2n, 3n, 4n]);
  const flags = parseNpy(npy('|b1', [3], new Uint8Array([1, 0, 1])));
  assert.deepEqual([flags.type, flags.shape, [...flags.data]], ['bool', [3], [1, 0, 1]]);
  assert.throws(() => parseNpy(npy('>f4', [1], new Float32Array(1))), /big-endian/);
  assert.throws(() => parseNpy(npy('<f4', [1], new Float32Array(1), 'True')), /Fortran order/);
  assert.throws(() => parseNpy(npy('<f8', [1], new Float64Array(1))), /dtype f8 is not supported/);
  assert.throws(() => parseNpy(new Uint8Array(16)), /not a .npy file/);
  assert.throws(() => parseNpy(npy('<f4', [4], new Float32Array(2))), /needs 16/);
});

test('resolveShape: fixed dims stay, symbolic names from dims, other dynamic dims from the default', () => {
  const dims = parseDims('batch=2, seq=7');
  assert.deepEqual(resolveShape(['batch', 3, 'seq', -1, null], dims, 1), [2, 3, 7, 1, 1]);
  assert.deepEqual(resolveShape(['height'], dims, 5), [5]);
  assert.throws(() => resolveShape(['height'], dims, 0, 'image'), /input image: dimension 0 \("height"\) is dynamic: give it with --param dims=height=N/);
  assert.throws(() => parseDims('batch=0'), /batch=0 must be a positive integer/);
  assert.throws(() => parsePairs('image', 'inputs'), /"image" is not NAME=VALUE/);
});

test('generate: seeded, typed, in range; zeros and ones', () => {
  const a = generate('float32', 100, 'random', 3);
  assert.deepEqual(a, generate('float32', 100, 'random', 3));
  assert.notDeepEqual(a, generate('float32', 100, 'random', 4));
  assert.ok(a.every((v) => v >= 0 && v < 1));
  const ids = generate('int64', 50, 'random', 1);
  assert.ok(ids instanceof BigInt64Array && ids.every((v) => v >= 0n && v < 10n));
  assert.deepEqual([...generate('int32', 3, 'ones', 1)], [1, 1, 1]);
  assert.deepEqual([...generate('uint8', 3, 'zeros', 1)], [0, 0, 0]);
  assert.equal(sumOf(generate('float16', 4, 'ones', 1), 'float16'), 4);
  assert.equal(toHalfBits(1), 0x3c00);
  assert.equal(toHalfBits(0.5), 0x3800);
  assert.throws(() => generate('string', 1, 'random', 1), /cannot generate input of type string/);
  const r = mulberry32(1);
  assert.notEqual(r(), r());
});
