// fuzz_torch_bin.c: a PyTorch checkpoint (torch_bin.h). torch_bin_parse reads the bytes as a zip
// holding data.pkl and its storages; a file that parses must hold entries inside one arena, each
// as many floats as its shape. Nothing in a pickle is ever run, whatever the bytes ask for.
#include <assert.h>

#include "fuzz.h"
#include "torch_bin.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    StFile f;
    Err e = {{0}};
    if (!torch_bin_parse(&f, data, size, "fuzz.bin", &e)) {
        assert(e.msg[0] && f.n_entries == 0);
        return 0;
    }
    const float *at = f.arena;
    for (int i = 0; i < f.n_entries; i++) {
        assert(f.entries[i].data == at && f.entries[i].name);
        at += shape_numel(&f.entries[i].shape);
    }
    st_free(&f);
    return 0;
}
