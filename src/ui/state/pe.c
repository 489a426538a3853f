// pe.c: the positional-encoding explorer's settings and its own small program.
//
// The Positions view never calls a kernel: the explorer writes a two-line program
//   pe = positional_table(positions=P, width=D, base=B)
//   similarity = matmul(pe, transpose(pe))
// runs it through the interpreter like any lesson, and the view reads that trace (stages "pe"
// and "similarity"). Every change of a setting re-runs it and bumps `generation`.
#include <stdio.h>
#include <string.h>

#include "app.h"

const char *const pe_param_names[PE_PARAM_COUNT] = {"d_model", "positions", "base", "dimension",
                                                     "position"};

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// An even number in [lo, hi] (rounded down to even).
static int clamp_even(int v, int lo, int hi) { return clampi(v, lo, hi) & ~1; }

void pe_init(PeExplorer *pe, int d_model) {
    memset(pe, 0, sizeof *pe);
    pe->d_model = clamp_even(d_model, 2, 512);
    pe->positions = 50, pe->base = 10000;
    pe->dim = 0, pe->position = 1;
    pe->selected = PE_D_MODEL;
}

// The source is the table the lesson's first add_positions adds: a weight (stored with the
// model: a sinusoid buffer, or learned), a stage (positional_table), or none at all. The
// settings start from the program's first positional_table, added or not (the
// positional-encoding lesson builds a worked example of width 8 and adds nothing).
void pe_from_program(PeExplorer *pe, const Interp *it, const Model *m) {
    const Stage *add = NULL, *first = NULL, *rope = NULL;
    pe->learned[0] = '\0';
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (st->op == OP_ADD_POSITIONS && !add) add = st;
        if (st->op == OP_POSITIONAL_TABLE && !first) first = st;
        if (st->op == OP_ROPE && !rope) rope = st;
    }
    if (first) {
        pe->base = (int)first->attr.base, pe->d_model = first->attr.width;
        pe->positions = first->attr.positions > pe->positions ? first->attr.positions : pe->positions;
    }
    const Ref r = add ? add->in[1] : (Ref){REF_INPUT, 0, 0};
    const Stage *table = add && r.kind == REF_STAGE ? interp_stage(it, r.index) : NULL;
    const ParamDecl *w = add && r.kind == REF_WEIGHT ? &m->params[r.index] : NULL;
    if (table && table->op == OP_POSITIONAL_TABLE) {
        pe->source = PE_SOURCE_COMPUTED;
        snprintf(pe->about, sizeof pe->about, "This lesson's model computes this table (positional_table, base %d).",
                 (int)table->attr.base);
    } else if (w && w->init == INIT_SINUSOID_HALVES) {  // Marian's: the formula's numbers, the columns reordered
        pe->source = PE_SOURCE_HALVES;
        snprintf(pe->learned, sizeof pe->learned, "%s", w->name);
        pe->selected = PE_POSITION;
        snprintf(pe->about, sizeof pe->about, "%s",
                 "Marian's column j is the paper's 2j, its column d/2+j the paper's 2j+1: sin in the first half, cos "
                 "in the second (right, as the model stores it), where the paper interleaves them (left).");
    } else if (w && w->init == INIT_SINUSOID) {
        pe->source = PE_SOURCE_STORED;
        snprintf(pe->about, sizeof pe->about, "This lesson's model adds this table, stored with it as @%s.", w->name);
    } else if (w) {  // the model's own learned rows, in place of the formula's
        pe->source = PE_SOURCE_LEARNED;
        snprintf(pe->learned, sizeof pe->learned, "%s", w->name);
        pe->selected = PE_POSITION;
        snprintf(pe->about, sizeof pe->about,
                 "This model learns a row for each position (@%s), trained like any weight: here are its rows, and "
                 "how alike each two are.", w->name);
    } else if (table) {  // a table another stage makes
        pe->source = PE_SOURCE_OTHER;
        snprintf(pe->about, sizeof pe->about, "This lesson's model adds the table %s, not this one.", table->id);
    } else if (rope) {  // the formula's table at the head's width and rope_theta: RoPE's angles
        pe->source = PE_SOURCE_ROPE;
        pe->d_model = rope->shape.dim[2], pe->base = (int)rope->attr.theta;
        snprintf(pe->about, sizeof pe->about,
                 "RoPE, no table: pair i of a head's q and k turns by p \xc2\xb7 \xcf\x89\xe1\xb5\xa2 (base rope_theta "
                 "%d, d = head width %d): the sin and cos in columns 2i, 2i+1. Pairs %s.",
                 pe->base, pe->d_model, rope->attr.adjacent ? "2i, 2i+1" : "i, i + d/2");
    } else if (add) {
        pe->source = PE_SOURCE_OTHER;
        snprintf(pe->about, sizeof pe->about, "%s", "This lesson's model adds a table given as an input, not this one.");
    } else {
        pe->source = PE_SOURCE_NONE;
        snprintf(pe->about, sizeof pe->about, "%s",
                 "This lesson's model adds no positions: nothing tells its attention the order of the tokens. "
                 "The table here is the formula alone.");
    }
}

static void clamp_settings(PeExplorer *pe) {
    pe->d_model = clamp_even(pe->d_model, 2, 1024);
    pe->positions = clampi(pe->positions, 2, 512);
    pe->base = clampi(pe->base, 2, 10000000);
    pe->dim = clampi(pe->dim, 0, pe->d_model - 1);
    pe->position = clampi(pe->position, 0, pe->positions - 1);
    if ((unsigned)pe->selected >= PE_PARAM_COUNT) pe->selected = PE_D_MODEL;
}

bool pe_rebuild(PeExplorer *pe, const Model *m, Err *e) {
    clamp_settings(pe);
    char text[512];
    const StEntry *w = pe->learned[0] ? model_weight(m, pe->learned) : NULL;
    if (w && w->shape.ndim >= 2 && pe->source == PE_SOURCE_HALVES) {  // the paper's table at its size, and the stored one
        const int C = w->shape.dim[w->shape.ndim - 1], P = (int)(shape_numel(&w->shape) / C);
        pe->d_model = C, pe->positions = P, pe->base = 10000;
        pe->dim = pe->dim < C ? pe->dim : C - 1, pe->position = pe->position < P ? pe->position : P - 1;
        snprintf(text, sizeof text, "pe = positional_table(positions=%d, width=%d, base=10000)\n"
                 "similarity = matmul(pe, transpose(pe))\nstored = reshape(@%s, %d, %d)\n", P, C, pe->learned, P, C);
    } else if (w && w->shape.ndim >= 2) {  // the learned rows as they are, [P, C]
        const int C = w->shape.dim[w->shape.ndim - 1], P = (int)(shape_numel(&w->shape) / C);
        pe->d_model = C, pe->positions = P;
        pe->dim = pe->dim < C ? pe->dim : C - 1, pe->position = pe->position < P ? pe->position : P - 1;
        snprintf(text, sizeof text, "pe = reshape(@%s, %d, %d)\nsimilarity = matmul(pe, transpose(pe))\n", pe->learned, P, C);
    } else
        snprintf(text, sizeof text,
                 "pe = positional_table(positions=%d, width=%d, base=%d)\n"
                 "similarity = matmul(pe, transpose(pe))\n",
                 pe->positions, pe->d_model, pe->base);
    Program fresh = {0};
    if (!program_parse_text(&fresh, "positions explorer", text, e)) return false;
    // The interpreter keeps a pointer to its program, so the new one goes in place first and
    // the old one comes back if the run fails (the old trace is not read in between).
    const Program old = pe->program;
    pe->program = fresh;
    const RunSpec spec = {0};
    Interp *it = interp_new(&pe->program, m, &spec, e);
    if (!it || !interp_run(it, e)) {
        interp_free(it);
        program_free(&pe->program);
        pe->program = old;
        return false;
    }
    interp_free(pe->it);
    Program gone = old;
    program_free(&gone);
    pe->it = it;
    pe->generation++;
    return true;
}

// The next entry of a sorted list above (dir > 0) or below (dir < 0) v; v itself at the ends.
static int list_step(const int *list, int n, int v, int dir) {
    if (dir > 0) {
        for (int i = 0; i < n; i++)
            if (list[i] > v) return list[i];
    } else {
        for (int i = n - 1; i >= 0; i--)
            if (list[i] < v) return list[i];
    }
    return v;
}

bool pe_adjust(PeExplorer *pe, const Model *m, PeParam p, int dir, Err *e) {
    static const int positions[] = {10, 20, 50, 100, 200, 500};
    static const int bases[] = {10, 100, 1000, 10000, 100000};
    dir = dir > 0 ? 1 : -1;
    if (pe->learned[0] && p != PE_DIM && p != PE_POSITION) return true;  // the model's own table: its size is its
    switch (p) {
    case PE_D_MODEL:
        pe->d_model = clamp_even(dir > 0 ? pe->d_model * 2 : pe->d_model / 2, 2, 1024);
        break;
    case PE_POSITIONS: pe->positions = list_step(positions, 6, pe->positions, dir); break;
    case PE_BASE: pe->base = list_step(bases, 5, pe->base, dir); break;
    case PE_DIM: pe->dim += dir; break;
    case PE_POSITION: pe->position += dir; break;
    case PE_PARAM_COUNT: break;
    }
    return pe_rebuild(pe, m, e);
}

void pe_free(PeExplorer *pe) {
    interp_free(pe->it);
    pe->it = NULL;
    program_free(&pe->program);
    memset(&pe->program, 0, sizeof pe->program);
}
