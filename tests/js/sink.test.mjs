// The sample sink (web/probes/sink.js) against a real HTTP server (node:http) that misbehaves
// like a restarting network process or a busy harness: refused connections, 503s, answers lost
// after the body arrived. Delivery must stay in order, at least once, batched, and flush() must
// wait for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { SampleSink, MAX_BATCH, MAX_IN_FLIGHT } from '../../web/probes/sink.js';

/** A server that answers each request with plan(i, body) → status, or 'drop' (close the
 *  connection without an answer after reading the body). Returns {url, batches, close}. */
async function server(plan) {
  const batches = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const i = batches.length;
      const parsed = JSON.parse(body);
      batches.push({ ...parsed, token: req.headers['x-harness-token'] });
      const what = plan(i, parsed);
      if (what === 'drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(what, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  return { url: `http://127.0.0.1:${port}/api`, batches, close: () => new Promise((r) => srv.close(r)) };
}

test('retries lost answers and 5xx until answered, in order; the receiver dedups on (src, n)', async () => {
  const s = await server((i) => (i === 1 ? 503 : i === 2 ? 'drop' : 200));
  const sink = new SampleSink('c1', { base: s.url, token: 'tok' });
  for (let round = 0; round < 3; round++) { // request 0; 1 (503), 2 (answer lost), 3; 4
    for (let i = 0; i < 10; i++) sink.post({ kind: 'step', step: round * 10 + i });
    await sink.flush();
  }
  const seen = [];
  const unique = new Map();
  for (const b of s.batches) {
    assert.equal(b.src, sink.src);
    assert.equal(b.token, 'tok');
    for (const x of b.samples) {
      seen.push(x.n);
      if (!unique.has(x.n)) unique.set(x.n, x);
    }
  }
  // at least once: every sample arrived; in order: n never goes back except when a batch is resent
  assert.deepEqual([...unique.keys()], Array.from({ length: 30 }, (_, i) => i + 1));
  assert.deepEqual([...unique.values()].map((x) => x.step), Array.from({ length: 30 }, (_, i) => i));
  assert.ok(seen.length > 30, 'the batch whose answer was lost was sent again');
  assert.equal(s.batches.length, 5, 'batched: one request per round, plus two resends');
  assert.equal(sink.retries, 2);
  assert.ok(unique.get(1).t_ms >= 0);
  await s.close();
});

test('a refused connection (server not there yet) is retried with back-off', async () => {
  const s = await server(() => 200);
  const url = s.url;
  await s.close(); // nothing listens: fetch fails
  const sink = new SampleSink('c1', { base: url });
  const done = sink.post({ kind: 'log', message: 'x' });
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(sink.retries >= 1);
  assert.equal(sink.acked, 0);
  sink.close(); // the page is gone: stop trying
  await done;
});

test('422 is final (the store kept the batch and recorded refusals); 403 gives the batch up', async () => {
  const s = await server((i) => (i === 0 ? 422 : i === 1 ? 403 : 200));
  const sink = new SampleSink('c1', { base: s.url });
  await sink.post({ kind: 'log', message: 'a' });
  await sink.post({ kind: 'log', message: 'b' });
  await sink.post({ kind: 'log', message: 'c' });
  assert.equal(s.batches.length, 3);
  assert.equal(sink.retries, 0);
  assert.equal(sink.failures, 1);
  assert.deepEqual(s.batches.map((b) => b.samples[0].n), [1, 2, 3]);
  await s.close();
});

test('batches are at most MAX_BATCH samples and report the queue behind them', async () => {
  const s = await server(() => 200);
  const sink = new SampleSink('c1', { base: s.url });
  for (let i = 0; i < MAX_BATCH + 100; i++) sink.post({ kind: 'log', message: String(i) });
  await sink.flush();
  assert.ok(s.batches.every((b) => b.samples.length <= MAX_BATCH));
  assert.equal(s.batches.reduce((a, b) => a + b.samples.length, 0), MAX_BATCH + 100);
  const first = s.batches[0];
  assert.equal(first.queue, MAX_BATCH + 100); // everything was unanswered when the first batch left
  // the second left while the first was in flight: both were unanswered then (what a crash would lose)
  assert.equal(s.batches.at(-1).queue, MAX_BATCH + 100);
  await s.close();
});

test('up to MAX_IN_FLIGHT requests are out at once; a sample is answered only when every one before it was', async () => {
  // a server that answers each request after a delay, the first one last: answers come back out of order
  const arrivals = [];
  let open = 0;
  let most = 0;
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const i = arrivals.length;
      arrivals.push(JSON.parse(body).samples.map((x) => x.n));
      open += 1;
      most = Math.max(most, open);
      setTimeout(() => { open -= 1; res.writeHead(200); res.end('{}'); }, i === 0 ? 400 : 50);
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const sink = new SampleSink('c1', { base: `http://127.0.0.1:${srv.address().port}/api` });
  const answered = [];
  const posts = [];
  for (let i = 0; i < 8; i++) { // one step per task, as a decoder posts them
    posts.push(sink.post({ kind: 'step', step: i }).then(() => answered.push(i)));
    await new Promise((r) => setTimeout(r, 20));
  }
  await sink.flush();
  await Promise.all(posts);
  assert.ok(most > 1, 'a step left while an earlier request was unanswered');
  assert.ok(most <= MAX_IN_FLIGHT, `at most ${MAX_IN_FLIGHT} in flight (saw ${most})`);
  assert.deepEqual(arrivals.flat(), [1, 2, 3, 4, 5, 6, 7, 8], 'every sample once, sent in order');
  assert.deepEqual(answered, [0, 1, 2, 3, 4, 5, 6, 7], 'answers resolve in order though the first came last');
  assert.equal(sink.acked, 8);
  await new Promise((r) => srv.close(r));
});

test('the first step leaves at once, later steps wait to be coalesced', async () => {
  const s = await server(() => 200);
  try {
    const sink = new SampleSink('c1', { base: s.url });
    sink.post({ kind: 'env' }); // leaves at once (urgent), so what follows within COALESCE_MS would wait
    await null; // the workload awaits between steps (its mapAsync): queued microtasks run there
    sink.post({ kind: 'step', step: 0 });
    await null;
    // then hold the thread as a busy worker does: no coalescing timer can fire meanwhile
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy */ }
    sink.post({ kind: 'step', step: 1 });
    // until two batches have arrived (30 ms was not always enough on a loaded 2-core CI machine)
    for (const until2 = Date.now() + 10000; s.batches.length < 2 && Date.now() < until2;) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // step 0 left on its own before the thread was held (without it, step 0 would have waited for
    // the coalescing timer and left only after the busy spell, with step 1)
    assert.deepEqual(s.batches.slice(0, 2).map((b) => b.samples.map((x) => x.kind === 'step' ? x.step : x.kind)),
      [['env'], [0]]);
    await sink.flush();
    assert.deepEqual(s.batches.flatMap((b) => b.samples.map((x) => x.step)).filter((x) => x !== undefined), [0, 1]);
  } finally {
    await s.close();
  }
});
