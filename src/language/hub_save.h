// hub_save.h: a model saved as a folder in the hub's layout, which `--model DIR` opens as it
// opens a download: config.json (the family's model_type and class, the config.json fields its
// program reads, the start id under the family's name for it (bos_token_id, Marian's
// decoder_start_token_id, then with pad_token_id), the eos id, torch_dtype), model.safetensors
// (every weight under the program's names, F32, F16 or BF16; the second name of a tie that is on
// is left out, as transformers leaves out a tied lm_head) and the tokenizer: a copy of the
// tokenizer.json given, or of a Marian folder's source.spm, target.spm and vocab.json.
#ifndef STEPFORMER_HUB_SAVE_H
#define STEPFORMER_HUB_SAVE_H

#include "hub.h"
#include "program.h"

// Writes the folder `dir` (made if missing; files in it are replaced) for m, which runs p: p
// must be a family's program (hub_family_of_program). `name` is config.json's _name_or_path;
// tokenizer (or NULL) the tokenizer.json, or the Marian folder, whose files are copied in.
bool hub_save(const Model *m, const Program *p, const char *dir, StDtype dtype, const char *tokenizer,
              const char *name, Err *e);

#endif
