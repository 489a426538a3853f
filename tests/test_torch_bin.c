// test_torch_bin.c: PyTorch checkpoints read in C without running them (torch_bin.h), against
// files torch.save wrote (scripts/make_bin_fixtures.py): views of one storage at offsets, a
// transpose and a strided slice read by their strides, F16, BF16 and int64 storages, a 0-d
// tensor and a Parameter, each equal to the contiguous float32 copy PyTorch made of it. Pickles
// that ask for os.system, builtins.eval or subprocess.Popen are refused naming the global as
// protocol 2 writes it (posix.system, __builtin__.eval, commands.Popen), with nothing run; a list looped into itself, a zip cut short, a storage shorter than its tensor and
// a stride past its storage are each one message. A folder with pytorch_model.bin and no
// safetensors opens through it, saying so (test_marian holds its logits).
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "torch_bin.h"

#define BIN FIXTURES "/torch_bin"

static void views(void) {
    StFile got, want;
    Err e = {{0}};
    const bool ok = torch_bin_load(&got, BIN "/views.bin", &e);
    CHECK(ok, "views.bin: %s", e.msg);
    if (!ok || !st_load(&want, BIN "/views.safetensors", &e)) return;
    CHECK(got.n_entries == want.n_entries, "%d tensors, PyTorch saved %d", got.n_entries, want.n_entries);
    for (int i = 0; i < want.n_entries; i++) {
        const StEntry *w = &want.entries[i], *g = st_find(&got, w->name);
        const bool same = g && shape_eq(&g->shape, &w->shape) &&
                          !memcmp(g->data, w->data, sizeof(float) * (size_t)shape_numel(&w->shape));
        CHECK(same, "'%s': the same shape and numbers as PyTorch's contiguous copy", w->name);
    }
    st_free(&got), st_free(&want);
}

static void refused(const char *file, const char *says) {
    StFile f;
    Err e = {{0}};
    char path[300];
    snprintf(path, sizeof path, BIN "/%s", file);
    const bool ok = torch_bin_load(&f, path, &e);
    CHECK(!ok && strstr(e.msg, says) && strstr(e.msg, file) && !strchr(e.msg, '\n'), "%s: one line saying '%s': %s", file,
          says, e.msg);
    if (ok) st_free(&f);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    unlink("/tmp/stepformer-pwned");
    views();
    refused("evil-os-system.bin", "the global 'posix.system'");
    refused("evil-eval.bin", "the global '__builtin__.eval'");  // protocol 2 writes Python 2's names
    refused("evil-popen.bin", "the global 'commands.Popen'");
    CHECK(access("/tmp/stepformer-pwned", F_OK) != 0, "os.system was never run");
    refused("evil-os-system.bin", "scripts/torch2st.py --trust-pickle");
    refused("evil-loop.bin", "holds no tensor");
    refused("evil-truncated.bin", "not a zip archive");
    refused("evil-short-storage.bin", "fewer than its 12 elements");
    refused("evil-stride.bin", "its strides run past the storage");
    // Through a folder: the note names the file read, and the exit is clean.
    const int code = run("run --model '" FIXTURES "/hub/marian-bin' --src-ids 3,4,0 --max-len 1 --json");
    CHECK(code == 0 && strstr(err, "pytorch_model.bin (no model.safetensors)") && strstr(err, "nothing in it run"),
          "a folder with only pytorch_model.bin opens, saying so: %s", err);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_torch_bin");
}
