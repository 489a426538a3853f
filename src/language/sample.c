// sample.c: sampling's distribution and draw, and beam search's log-probabilities (sample.h).
#include "sample.h"

#include <math.h>

#include "rng.h"

bool decode_check(const DecodeChoice *c, int V, Err *e) {
    if (!(c->temperature >= 0) || !isfinite(c->temperature))
        return err_set(e, "--temperature must be above 0 (got %g): greedy decoding, the default, is temperature 0",
                       c->temperature);
    if (c->top_k < 0 || c->top_k > V)
        return err_set(e, "--top-k must be from 1 to the vocabulary's %d tokens (got %d)", V, c->top_k);
    if (!(c->top_p >= 0 && c->top_p <= 1))
        return err_set(e, "--top-p must be in (0, 1] (got %g): the share of probability to keep", c->top_p);
    if (c->beam < 0 || c->beam > V)
        return err_set(e, "--beam %d is wider than the vocabulary's %d tokens", c->beam, V);
    if (c->beam >= 2 && c->temperature > 0)
        return err_set(e, "beam search keeps the likeliest hypotheses and draws nothing: give --beam or "
                       "--temperature, not both");
    if (c->temperature <= 0 && (c->top_k > 0 || (c->top_p > 0 && c->top_p < 1)))
        return err_set(e, "--top-k and --top-p cut the distribution sampling draws from: give --temperature too "
                       "(1 samples the model's own distribution)");
    return true;
}

// Whether token i comes before token j: a larger p first; equal p, the lower id.
static bool before(const double *p, int i, int j) { return p[i] != p[j] ? p[i] > p[j] : i < j; }

// Sorts ids [n] by `before`, bottom-up merging through tmp [n] (no globals: qsort has no context).
static void sort_by_prob(int *ids, int *tmp, int n, const double *p) {
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            const int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = before(p, ids[b], ids[a]) ? ids[b++] : ids[a++];
            while (a < mid) tmp[k++] = ids[a++];
            while (b < hi) tmp[k++] = ids[b++];
        }
        for (int i = 0; i < n; i++) ids[i] = tmp[i];
    }
}

int sample_dist(double *probs, int *order, const float *logits, int V, const DecodeChoice *c) {
    const double t = c->temperature > 0 ? c->temperature : 1;
    double top = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++)
        if ((double)logits[v] / t > top) top = (double)logits[v] / t;
    for (int v = 0; v < V; v++) sum += probs[v] = exp((double)logits[v] / t - top);
    for (int v = 0; v < V; v++) probs[v] /= sum, order[v] = v;
    sort_by_prob(order, order + V, V, probs);
    int kept = c->top_k > 0 && c->top_k < V ? c->top_k : V;
    if (c->top_p > 0 && c->top_p < 1) {
        double mass = 0;
        for (int r = 0; r < kept; r++)
            if ((mass += probs[order[r]]) >= c->top_p) {
                kept = r + 1;
                break;
            }
    }
    double left = 0;
    for (int r = 0; r < kept; r++) left += probs[order[r]];
    for (int r = kept; r < V; r++) probs[order[r]] = 0;
    for (int r = 0; r < kept; r++) probs[order[r]] /= left;
    return kept;
}

int sample_pick(const double *probs, int V, double u) {
    double sum = 0;
    int last = 0;
    for (int v = 0; v < V; v++) {
        if (probs[v] <= 0) continue;
        last = v;
        if ((sum += probs[v]) > u) return v;
    }
    return last;
}

double sample_draw(uint64_t *state) {
    Rng r = {*state};
    const uint64_t x = rng_u64(&r);
    *state = r.state;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

void beam_log_probs(double *logp, const float *logits, int V) {
    double top = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++)
        if (logits[v] > top) top = logits[v];
    for (int v = 0; v < V; v++) sum += exp((double)logits[v] - top);
    const double lse = top + log(sum);
    for (int v = 0; v < V; v++) logp[v] = (double)logits[v] - lse;
}
