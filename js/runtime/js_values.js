// JS values held by C: callbacks and thrown values C keeps references to,
// by small integer handle (the opaque objects and JS Functions hold one).

export function install(state) {
  const jsValues = [undefined]; // handle 0 is never used
  const jsOpaque = [0]; // handle -> the opaque object that holds it (0: none)
  const freeHandles = [];
  state.jsValues = jsValues;
  state.jsOpaque = jsOpaque;
  state.liveHandles = 0;

  state.addHandle = function addHandle(value) {
    const h = freeHandles.length ? freeHandles.pop() : jsValues.length;
    jsValues[h] = value;
    jsOpaque[h] = 0;
    state.liveHandles++;
    return h;
  };

  /** The `webffi.release_js` import: C dropped its last reference to handle h. */
  state.releaseHandle = function releaseHandle(h) {
    jsValues[h] = undefined;
    jsOpaque[h] = 0;
    freeHandles.push(h);
    state.liveHandles--;
  };
}
