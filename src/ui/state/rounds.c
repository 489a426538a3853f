// rounds.c: the decoding round on screen, from the cursor's point of view (rounds.h).
#include "rounds.h"

#include <stdio.h>

bool decode_seen(const App *a, int stage) {
    return stage >= 0 && stage <= a->cursor && stage < interp_n_done(a->session.it);
}

int decode_round_argmax(const Interp *it, bool greedy, int round) {
    int k = -1;
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (st->in_decode && (!greedy || st->step == round) && st->op == OP_ARGMAX) k = i;
    }
    return k;
}

bool decode_round_chosen(const Round *R, int r) {
    if (R->why != STOP_NONE) return true;  // every round that ran has chosen
    const int n = interp_n_stages(R->it);
    return n > 0 && interp_stage(R->it, n - 1)->in_decode && interp_stage(R->it, n - 1)->step > r;
}

Round decode_round_at(const App *a) {
    const Program *p = &a->session.lesson.program;
    Round R = {.it = a->session.it, .greedy = a->session.run.tgt == NULL, .before = true};
    R.mode = R.greedy ? decoding_kind(&a->session.run.choice) : DECODING_GREEDY;
    for (int i = a->cursor; i >= 0; i--) {
        const Stage *st = interp_stage(R.it, i);
        if (st->in_decode) {
            R.before = false;
            R.round = R.greedy ? st->step : 0;
            break;
        }
    }
    R.start = interp_start_len(R.it), R.prompted = R.greedy && program_decoder_only(p);
    const int slot = p->decode < p->n ? program_input(p, p->stmts[p->decode].name) : program_input(p, "tgt");
    if (slot >= 0) R.ids = interp_input_ids(R.it, slot, &R.n_ids);
    if (R.greedy) interp_generated(R.it, &R.n_gen, &R.why);
    R.next = decode_round_argmax(R.it, R.greedy, R.round);  // and the scores it picks from
    const Stage *nx = R.next >= 0 ? interp_stage(R.it, R.next) : NULL;
    R.probs = nx && nx->in[0].kind == REF_STAGE ? nx->in[0].index : -1;
    R.next_run = decode_seen(a, R.next), R.probs_run = decode_seen(a, R.probs);
    return R;
}

int decode_produced(const Round *R) {
    if (!R->next_run) return -1;
    if (R->mode == DECODING_SAMPLING) {
        const SamplePick *p = chooser_pick(interp_chooser(R->it), R->round, 0);
        return p ? p->token : -1;
    }
    if (R->mode == DECODING_BEAM) {  // row 0 of the next round: the best live hypothesis
        int n;
        const BeamLive *live = decode_round_chosen(R, R->round) ? chooser_live(interp_chooser(R->it), R->round, &n) : NULL;
        return live ? live[0].token : -1;
    }
    return (int)interp_output(R->it, R->next)[interp_stage(R->it, R->next)->shape.dim[0] - 1];
}

// (view_decode.h)
int decode_last_row(const Round *R) { return R->greedy ? R->start + R->round - 1 : R->n_ids - 1; }

int decode_rounds_run(const Interp *it) {
    const int n = interp_n_stages(it);
    const Stage *st = n > 0 ? interp_stage(it, n - 1) : NULL;
    return st && st->in_decode ? st->step + 1 : 0;
}
