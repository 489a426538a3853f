// idset.c: open addressing over stage indices, keyed by the stages' ids (see idset.h).
#include "idset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_id(const char *s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

// The slot holding an index whose stage has this id, or the empty slot where it would go.
static size_t find(const IdSet *s, const Stage *stages, const char *id) {
    size_t i = (size_t)hash_id(id) & s->mask;
    while (s->slot[i] >= 0 && strcmp(stages[s->slot[i]].id, id) != 0) i = (i + 1) & s->mask;
    return i;
}

static bool grow(IdSet *s, const Stage *stages) {
    const size_t n = s->slot ? 2 * (s->mask + 1) : 256;
    int *old = s->slot;
    const size_t old_n = old ? s->mask + 1 : 0;
    if (!(s->slot = malloc(n * sizeof *s->slot))) return s->slot = old, false;
    s->mask = n - 1;
    for (size_t i = 0; i < n; i++) s->slot[i] = -1;
    for (size_t i = 0; i < old_n; i++)
        if (old[i] >= 0) s->slot[find(s, stages, stages[old[i]].id)] = old[i];
    free(old);
    return true;
}

int idset_add(IdSet *s, const Stage *stages, int index) {
    if ((!s->slot || 2 * (size_t)(s->count + 1) > s->mask + 1) && !grow(s, stages)) return -2;
    const size_t i = find(s, stages, stages[index].id);
    if (s->slot[i] >= 0) return s->slot[i];
    s->slot[i] = index, s->count++;
    return -1;
}

void idset_clear(IdSet *s) {
    for (size_t i = 0; s->slot && i <= s->mask; i++) s->slot[i] = -1;
    s->count = 0;
}

void idset_free(IdSet *s) {
    free(s->slot);
    memset(s, 0, sizeof *s);
}
