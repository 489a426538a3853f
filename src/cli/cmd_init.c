// cmd_init.c: `init` writes a model with fresh random weights, from a config and a seed.
#include "cli.h"

static const char init_usage[] =
    "usage: stepformer init --out FILE [--config \"d_model=64 nhead=4 ...\"] [--seed N] [--vocab chars]\n"
    "\n"
    "Writes a .safetensors model with Xavier-uniform matrices, zero biases, unit LayerNorm gains\n"
    "and the sinusoidal table, with its configuration in the metadata. --config takes\n"
    "nn.Transformer's argument names (d_model, nhead, num_encoder_layers, num_decoder_layers,\n"
    "dim_feedforward, src_vocab_size, tgt_vocab_size, norm_first, activation, layer_norm,\n"
    "layer_norm_eps) and max_positions; unspecified items come from the base configuration\n"
    "(512, 8 heads, 6+6 layers, 2048, vocabulary 1000, 128 positions). --vocab chars gives both\n"
    "sides a character vocabulary (specials + printable ASCII).\n";

int cmd_init(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_INIT, init_usage, &o);
    if (code >= 0) return code;
    if (o.n_positional) return cli_usage_error("init", "unexpected argument '%s'", o.positional[0]);
    if (!o.out) return cli_usage_error("init", "--out FILE is required");
    ModelConfig c = config_base();
    Err e = {{0}};
    if (o.vocab_chars) c.src_vocab_size = c.tgt_vocab_size = 4 + ('~' - ' ' + 1);
    if (o.config && !config_parse(&c, o.config, "--config", &e)) return cli_fail(&e);
    Model m;
    if (!model_init_random(&m, &c, (uint64_t)o.seed, &e)) return cli_fail(&e);
    bool ok = true;
    if (o.vocab_chars) {
        if (c.src_vocab_size != 99 || c.tgt_vocab_size != 99)
            ok = err_set(&e, "--vocab chars has 99 tokens; leave the vocabulary sizes out of --config");
        vocab_free(&m.src_vocab), vocab_free(&m.tgt_vocab);
        ok = ok && vocab_chars(&m.src_vocab, &e) && vocab_chars(&m.tgt_vocab, &e);
        m.has_vocab = ok;
    }
    ok = ok && model_save(&m, o.out, &e);
    model_free(&m);
    if (!ok) return cli_fail(&e);
    printf("wrote %s (d_model %d, %d heads, %d+%d layers, seed %ld)\n", o.out, c.d_model, c.nhead,
           c.num_encoder_layers, c.num_decoder_layers, o.seed);
    return EXIT_OK;
}
