// The weights and inputs the model tests feed: the package's seeded
// weights (js/model_library.js, what `webffi model weights` writes) under
// the names the tests use, and token inputs. No Node APIs: pages import it too.
import { seededRandom, seededTensorCache } from '../../js/model_library.js';

export const seeded = seededRandom;

/** seededTensorCache with the tests' defaults (seed 42). */
export const makeTensorCache = (params, options = {}) => seededTensorCache(params, options);

/** Token ids and an attention mask of length L (ids below vocab). */
export function makeInputs(L, vocab = 30522) {
  const ids = new Int32Array(L);
  for (let i = 0; i < L; i++) ids[i] = (i * 997 + 101) % vocab;
  return { ids, mask: new Int32Array(L).fill(1) };
}
