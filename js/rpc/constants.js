// TVM RPC's constants, apart from the code that uses them: the script
// bundle keeps them while the rest of js/rpc/ loads on first use
// (scripts/bundle.mjs).

/** Defaults of a served device's limits (each can be set per server). */
export const RPC_LIMITS = Object.freeze({
  maxPacketBytes: 64 * 1024 * 1024,
  maxHandles: 65536,
  maxDeviceBytes: 1024 * 1024 * 1024,
  maxUploadBytes: 256 * 1024 * 1024,
});

export const RPC_TRACKER_MAGIC = 0x2f271;
/** TVM's TrackerCode. */
export const TRACKER_CODE = Object.freeze({
  FAIL: -1, SUCCESS: 0, PING: 1, STOP: 2, PUT: 3, REQUEST: 4, UPDATE_INFO: 5, SUMMARY: 6, GET_PENDING_MATCHKEYS: 7,
});
