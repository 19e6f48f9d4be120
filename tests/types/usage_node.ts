// Compiled (not run) by tests/node/types.test.mjs with @types/node: a worker
// session over worker_threads, as a Node user writes it.
import { Worker, parentPort } from 'node:worker_threads';
import { connect, connectRPC, serve, load, type Session } from 'webffi';

export async function node(): Promise<number> {
  const session: Session = await connect(new Worker(new URL('./worker.js', import.meta.url)), { timeout: 1000 });
  const n: number = await session.call('testing.add_one', [1], { signal: AbortSignal.timeout(500), transfer: true });
  session.close();
  if (parentPort) serve(load(), parentPort);
  // a worker as the middle hop to a TVM RPC device
  if (parentPort) serve(connectRPC('127.0.0.1:9090', 'dev', { chain: [{ target: '10.0.0.2:9090', key: 'far' }] }), parentPort, { expose: ['demo.*'] });
  const rt = await load({ wasm: new URL('./webffi.wasm', import.meta.url), appDir: process.cwd() });
  return n + rt.listGlobals().length;
}
