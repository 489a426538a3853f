// torch_bin.h: a PyTorch state_dict saved by torch.save (pytorch_model.bin, .pt, .pth), read in
// C without running anything.
//
// The file is a zip archive holding `data.pkl` and one entry a storage (`data/KEY`). The pickle
// is read by a restricted reader that knows only what a state_dict needs: the opcodes of
// protocols 2 to 5 that build dicts, lists, tuples, strings and numbers, the memo, and these
// globals:
//   collections.OrderedDict                       the dict itself
//   torch._utils._rebuild_tensor_v2               a tensor: a storage, an offset, a size, a stride
//   torch._utils._rebuild_parameter               a Parameter around a tensor
//   torch.FloatStorage, HalfStorage, BFloat16Storage, DoubleStorage, LongStorage, IntStorage,
//   ShortStorage, CharStorage, ByteStorage, BoolStorage
// Storages come from persistent ids ('storage', TYPE, KEY, LOCATION, NUMEL). Any other global is
// refused with one line naming it (`os system`, `builtins eval`): nothing is ever called but the
// builders above. A tensor is read by its offset and strides (shared storages and views give the
// right numbers), each number widened to float32. Every index is checked against its storage.
#ifndef STEPFORMER_TORCH_BIN_H
#define STEPFORMER_TORCH_BIN_H

#include "safetensors.h"

// Reads the state_dict at `path` into f (as st_load does a .safetensors file: the tensors under
// their keys, in the dict's order). On failure one line names the file and what is wrong.
bool torch_bin_load(StFile *f, const char *path, Err *e);
// The same from the file's bytes in memory (`what` names it in messages).
bool torch_bin_parse(StFile *f, const unsigned char *bytes, size_t n, const char *what, Err *e);

#endif
