// A module Worker as the middle hop: it opens a TVM RPC session (over the
// browser's WebSocket, through the proxy) to ?target= with ?key= and serves
// it to the page that started it; ?chain= (JSON, connectRPC's chain)
// makes it a chained session; ?expose= is serve's allowlist
// (comma-separated), absent: the device decides.
import { serve, connectRPC } from '../../../js/index.js';

const q = new URL(import.meta.url).searchParams;
const expose = q.get('expose');
const chain = q.get('chain');
const options = { timeout: 60000, ...(chain ? { chain: JSON.parse(chain) } : {}) };
serve(connectRPC(q.get('target'), q.get('key'), options), self, expose ? { expose: expose.split(',') } : {});
