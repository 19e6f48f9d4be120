// Types for js/rpc/transport.js: the byte streams TVM RPC runs over, for
// serveConnection (the rest of the module is internal).

/** An open byte stream in the form serveConnection serves. */
export interface RPCTransport {
  readonly closed: boolean;
  close(): void;
}

/** A Node `net.Socket` (connected) as a transport. */
export function socketTransport(socket: object): RPCTransport;

/** An open WebSocket as a transport: messages are byte chunks, in order. */
export function webSocketTransport(ws: object): RPCTransport;
