// A tiny BERT-shaped model made by the tests, in the layout transformers.js
// loads from a model folder (config.json, tokenizer.json,
// tokenizer_config.json, onnx/model.onnx), so a feature-extraction pipeline
// runs offline: last_hidden_state = E[input_ids] * attention_mask, with E
// seeded here. Runs in Node (to write the files) and in the page (for the
// CPU reference).
import { onnxModel } from './onnx_model.mjs';
import { randomFloats } from './numeric.mjs';

export const HIDDEN = 16;
const WORDS = ['hello', 'world', 'webffi', 'shares', 'one', 'gpu', 'no', 'copies'];
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
export const VOCAB = [...SPECIAL, ...WORDS];
/** The embedding table, [VOCAB.length, HIDDEN]. */
export const EMBEDDINGS = randomFloats(VOCAB.length * HIDDEN, 51);

/** The model's output for token ids and their mask, on the CPU: [ids.length * HIDDEN]. */
export function tinyBertRef(ids, mask) {
  const out = new Float32Array(ids.length * HIDDEN);
  for (let t = 0; t < ids.length; t++) {
    for (let h = 0; h < HIDDEN; h++) out[t * HIDDEN + h] = Number(mask[t]) ? EMBEDDINGS[Number(ids[t]) * HIDDEN + h] : 0;
  }
  return out;
}

/** The model folder's files: { path: string | Uint8Array }. */
export function tinyBertFiles() {
  const maskTable = new Float32Array(2 * HIDDEN).fill(1, HIDDEN); // row 0: zeros, row 1: ones
  const model = onnxModel({
    inputs: [['input_ids', 'int64', ['batch', 'sequence']], ['attention_mask', 'int64', ['batch', 'sequence']]],
    outputs: [['last_hidden_state', 'float32', ['batch', 'sequence', HIDDEN]]],
    nodes: [
      { op: 'Gather', inputs: ['E', 'input_ids'], outputs: ['emb'] },
      { op: 'Gather', inputs: ['maskTable', 'attention_mask'], outputs: ['m'] },
      { op: 'Mul', inputs: ['emb', 'm'], outputs: ['last_hidden_state'] },
    ],
    initializers: [['E', EMBEDDINGS, [VOCAB.length, HIDDEN]], ['maskTable', maskTable, [2, HIDDEN]]],
  });
  const vocab = Object.fromEntries(VOCAB.map((w, i) => [w, i]));
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((t, i) => special(t, i)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
  const tokenizerConfig = {
    tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512,
    cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]',
  };
  const config = {
    model_type: 'bert', architectures: ['BertModel'], hidden_size: HIDDEN, vocab_size: VOCAB.length,
    num_hidden_layers: 0, num_attention_heads: 1, max_position_embeddings: 512,
  };
  return {
    'config.json': JSON.stringify(config),
    'tokenizer.json': JSON.stringify(tokenizer),
    'tokenizer_config.json': JSON.stringify(tokenizerConfig),
    'onnx/model.onnx': model,
  };
}

// `node tests/support/tiny_bert.mjs` writes the folder to tests/fixtures/tiny-bert/ (committed: the README's
// transformers.js example loads it; tests/node/gpu_interop.test.mjs checks it matches what this file makes).
if (typeof process !== 'undefined' && process.argv?.[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { dirname, join } = await import('node:path');
  const root = new URL('../fixtures/tiny-bert/', import.meta.url).pathname;
  for (const [name, content] of Object.entries(tinyBertFiles())) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), content);
  }
}
