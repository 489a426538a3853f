// rng.h: a small seeded random number generator (splitmix64), so a seed reproduces a run.
#ifndef STEPFORMER_RNG_H
#define STEPFORMER_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} Rng;

static inline uint64_t rng_u64(Rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Uniform in [0, 1).
static inline float rng_uniform(Rng *r) { return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f); }

// Uniform integer in [0, n).
static inline int rng_below(Rng *r, int n) { return (int)(rng_u64(r) % (uint64_t)n); }

// Standard normal (Box-Muller).
static inline float rng_normal(Rng *r) {
    float u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-12f) u1 = 1e-12f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795864f * u2);
}

#endif
