// cmd_init.c: `init` writes a model with fresh random weights for a program, from a config
// and a seed.
#include "cli.h"
#include "hub_save.h"

#include <string.h>

static const char init_usage[] =
    "usage: stepformer init --out FILE [--program LESSON.md] [--config \"k=v ...\"] [--seed N]\n"
    "                       [--vocab chars] [--dtype f32|f16|bf16]\n"
    "\n"
    "Writes a .safetensors model holding every tensor the program declares (its `param` and\n"
    "`buffer` lines), each initialised as its declaration says, with the configuration in the\n"
    "metadata. The program is the standard post-norm lesson unless --program names another\n"
    "(--norm-first picks the pre-norm one). --config takes any name the program uses; for the\n"
    "standard lessons, names left out come from the base configuration (d_model 512, 8 heads,\n"
    "6+6 layers, d_ff 2048, vocabulary 1000, 128 positions). --vocab chars gives both sides a\n"
    "character vocabulary (specials + printable ASCII, 99 tokens).\n"
    "\n"
    "An --out ending in / is a folder in the hub's layout (config.json and model.safetensors,\n"
    "F32, no tokenizer) for a program of a hub family (lessons/gpt2.md, lessons/llama.md,\n"
    "lessons/marian.md): `init --program lessons/gpt2.md --config \"n_layer=12 ...\" --out g/`.\n"
    "--dtype f16 or bf16 stores a folder's weights so, as the hub ships many (SmolLM2: bf16).\n";

// The program must run on the model it declares: expanded on one source token (and bos).
static bool runs(const Program *p, const Model *m, Err *e) {
    const float src[1] = {0}, tgt[1] = {(float)(m->cfg.bos_id.set ? m->cfg.bos_id.id : 0)};
    const bool decoder = program_has_decoder(p);
    RunSpec spec = {src, 1, decoder ? tgt : NULL, decoder ? 1 : 0, 1, 1};
    Interp *it = interp_new(p, m, &spec, e);
    interp_free(it);
    return it != NULL;
}

int cmd_init(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_INIT | OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS, init_usage, &o);
    if (code >= 0) return code;
    if (o.n_positional) return cli_usage_error("init", "unexpected argument '%s'", o.positional[0]);
    if (!o.out) return cli_usage_error("init", "--out FILE is required");
    StDtype dtype = ST_F32;  // a usage error before any work
    if (o.train.dtype && !cli_dtype("init", o.train.dtype, &dtype, &code)) return code;
    Err e = {{0}};
    Lesson l;
    char base[512], from[600];
    ConfSpec cs;
    double pre = 0;
    session_conf_spec(&cs, &o.spec, NULL, from, sizeof from);
    conf_spec_get(&cs, "norm_first", &pre);
    const char *path = NULL, *text = o.spec.program_path ? NULL
                                   : session_builtin_lesson(pre == 1 ? "pre-norm.md" : "forward-pass.md", &path);
    if (!(text ? lesson_parse(&l, path, text, &e) : lesson_load(&l, o.spec.program_path, &e))) return cli_fail(&e);
    ModelConfig c = config_base();
    config_text(&c, base, sizeof base);
    session_conf_spec(&cs, &o.spec, &l, from, sizeof from);
    conf_spec_add(&cs, o.vocab_chars ? VOCAB_CHARS_CONFIG : NULL, "--vocab chars", false);
    conf_spec_add(&cs, base, "the base configuration", true);
    Model m;
    bool ok = model_init_random(&m, &l.program, &cs, (uint64_t)o.seed, &e);
    if (ok && (o.vocab_chars || l.setup.vocab_chars)) {  // asked for, or the program's lesson says so
        vocab_free(&m.src_vocab), vocab_free(&m.tgt_vocab);
        ok = vocab_chars(&m.src_vocab, &e) && vocab_chars(&m.tgt_vocab, &e);
        m.has_vocab = ok;
    }
    if (ok && m.note[0]) fprintf(stderr, "stepformer: note: %s\n", m.note);
    ok = ok && runs(&l.program, &m, &e);
    const size_t out_len = strlen(o.out);
    const bool folder = out_len > 0 && o.out[out_len - 1] == '/';
    if (ok && folder && !hub_family_of_program(l.program.file))
        ok = err_set(&e, "--out %s: a folder is written in the hub's layout, for a program of a hub family "
                     "(lessons/gpt2.md, lessons/llama.md, lessons/marian.md); %s is none", o.out, l.program.file);
    if (ok && o.train.dtype && !folder)
        ok = err_set(&e, "--dtype is for a folder in the hub's layout (an --out ending in /): a single file is written as F32");
    ok = ok && (folder ? hub_save(&m, &l.program, o.out, dtype, NULL, "stepformer/init", &e) : model_save(&m, o.out, &e));
    if (ok)
        printf("wrote %s: %d tensors of %s (d_model %d, seed %ld)\n", o.out, m.n_params, l.program.file,
               m.cfg.d_model, o.seed);
    model_free(&m);
    lesson_free(&l);
    return ok ? EXIT_OK : cli_fail(&e);
}
