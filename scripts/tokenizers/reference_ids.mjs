// reference_ids.mjs: the ids the reference implementations give a list of strings.
//   node scripts/tokenizers/reference_ids.mjs TOKENIZER.json STRINGS.json [--gpt3-encoder] > OUT.json
// STRINGS.json is a JSON array of strings. Prints {"strings": [...], "ids": [[...]], "decoded":
// [...]} from Hugging Face's tokenizers.js (encode without special tokens added), and with
// --gpt3-encoder checks that OpenAI's encoder (npm gpt-3-encoder) gives the same ids.
import fs from "fs";
import { createRequire } from "module";
import { Tokenizer } from "@huggingface/tokenizers";

const [file, list, flag] = process.argv.slice(2);
const tok = new Tokenizer(JSON.parse(fs.readFileSync(file, "utf-8")), {});
const strings = JSON.parse(fs.readFileSync(list, "utf-8"));
const ids = strings.map((s) => tok.encode(s, { add_special_tokens: false }).ids);
if (flag === "--gpt3-encoder") {
  const gpt3 = createRequire(import.meta.url)("gpt-3-encoder");
  strings.forEach((s, i) => {
    if (s.includes("<|endoftext|>")) return;  // OpenAI's encoder has no special tokens
    const want = gpt3.encode(s);
    if (JSON.stringify(want) !== JSON.stringify(ids[i])) {
      console.error("gpt-3-encoder and tokenizers.js differ on " + JSON.stringify(s) + ": " + want + " / " + ids[i]);
      process.exit(1);
    }
  });
}
const decoded = ids.map((x) => (x.length ? tok.decode(x) : ""));
console.log(JSON.stringify({ strings, ids, decoded }));
