// fuzz_program.c: the program language. The text is parsed; a program that parses gets fresh
// weights for a tiny configuration (what its param and buffer lines declare), then is expanded
// and run on a few ids: teacher-forced, or greedily for inputs of odd length. The limits are
// set small (fuzz.h), so a loop or a tensor too large is refused, not run.
#include <stdio.h>

#include "fuzz.h"
#include "interp.h"
#include "load.h"

static const char tiny[] = "d_model=8 nhead=2 num_encoder_layers=1 num_decoder_layers=1 dim_feedforward=16 "
                           "src_vocab_size=20 tgt_vocab_size=20 max_positions=16 bos_id=2 eos_id=3 pad_id=1";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    char *text = fuzz_text(data, n);
    Program p;
    Err e = {{0}};
    if (program_parse_text(&p, "fuzz.sfp", text, &e)) {
        ConfSpec cs = {0};
        conf_spec_add(&cs, tiny, "the fuzz configuration", false);
        Model m;
        if (model_init_random(&m, &p, &cs, 1, &e)) {
            static const float src[4] = {2, 5, 6, 3}, tgt[3] = {2, 7, 8};
            // The input's length picks teacher forcing or greedy, packed weights or not, and
            // the cached decoder or not; greedy runs 5 rounds, and every stage is read back
            // (an evicted round is recomputed).
            const bool greedy = n & 1;
            const RunSpec spec = {src, 4, greedy ? NULL : tgt, greedy ? 0 : 3, 5, 1, (n & 2) != 0, (n & 4) != 0};
            Interp *it = interp_new(&p, &m, &spec, &e);
            if (it && interp_run(it, &e))
                for (int i = interp_n_stages(it) - 1; i >= 0; i--) (void)interp_output(it, i);
            interp_free(it);
            model_free(&m);
        }
        program_free(&p);
    }
    free(text);
    return 0;
}
