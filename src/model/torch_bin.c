// torch_bin.c: a torch.save'd state_dict read by a restricted unpickler (torch_bin.h).
//
// The unpickler keeps every value it builds in one growing array and works with their indices:
// the stack, the memo and the containers hold indices. Nothing but the builders of the globals
// it allows is ever "called"; any other global stops the read with its name.
#include "torch_bin.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "zip_read.h"

enum { MAX_MEMO = 1 << 22, MAX_DEPTH = 1 << 20, MAX_DIMS = 8 };

typedef enum { V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_TUPLE, V_LIST, V_DICT, V_GLOBAL, V_STORAGE, V_TENSOR, V_MARK } VKind;
typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_STORAGE } Global;
typedef enum { D_F32, D_F16, D_BF16, D_F64, D_I64, D_I32, D_I16, D_I8, D_U8, D_BOOL } DType;

static const struct {
    const char *name;
    DType dt;
    int size;
} storages[] = {
    {"FloatStorage", D_F32, 4}, {"HalfStorage", D_F16, 2},  {"BFloat16Storage", D_BF16, 2}, {"DoubleStorage", D_F64, 8},
    {"LongStorage", D_I64, 8},  {"IntStorage", D_I32, 4},   {"ShortStorage", D_I16, 2},     {"CharStorage", D_I8, 1},
    {"ByteStorage", D_U8, 1},   {"BoolStorage", D_BOOL, 1},
};
enum { N_STORAGES = sizeof storages / sizeof storages[0] };

typedef struct {
    VKind kind;
    int64_t i;       // int, bool; global: Global; storage: numel; tensor: its storage's value
    double f;        // float
    int sub;         // global G_STORAGE, storage: index into storages[]
    char *s;         // str; storage: its key
    int *items;      // tuple, list: values; dict: key, value, key, value, ...
    int n, cap;
    int64_t offset;  // tensor
    int ndim;
    int64_t size[MAX_DIMS], stride[MAX_DIMS];
} Value;

typedef struct {
    const unsigned char *p, *end;
    const char *what;
    Err *e;
    Value *v;
    int nv, cap_v;
    int *stack, n_stack, cap_stack;
    int *memo, cap_memo;  // memo[k]: a value index, or -1
    int n_memo;           // keys set (MEMOIZE's next key)
} Vm;

static bool fail(Vm *m, const char *msg) { return err_set(m->e, "%s: data.pkl: %s", m->what, msg); }
static bool oom(Vm *m) { return err_code(m->e, ERR_MEMORY, "%s: out of memory reading data.pkl", m->what); }

static bool grow(void **p, int *cap, int need, size_t each) {
    if (need <= *cap) return true;
    const int c = need < 16 ? 16 : need * 2;
    void *q = realloc(*p, (size_t)c * each);
    if (!q) return false;
    *p = q, *cap = c;
    return true;
}

static int new_value(Vm *m, VKind kind) {
    if (!grow((void **)&m->v, &m->cap_v, m->nv + 1, sizeof *m->v)) return -1;
    m->v[m->nv] = (Value){.kind = kind};
    return m->nv++;
}

static bool push(Vm *m, int v) {
    if (v < 0) return oom(m);
    if (m->n_stack >= MAX_DEPTH) return fail(m, "the stack grows past a million entries");
    if (!grow((void **)&m->stack, &m->cap_stack, m->n_stack + 1, sizeof *m->stack)) return oom(m);
    m->stack[m->n_stack++] = v;
    return true;
}

static bool pop(Vm *m, int *v) {
    if (m->n_stack == 0 || m->v[m->stack[m->n_stack - 1]].kind == V_MARK) return fail(m, "an opcode pops an empty stack");
    *v = m->stack[--m->n_stack];
    return true;
}

static bool add_item(Vm *m, int container, int item) {
    Value *c = &m->v[container];
    if (!grow((void **)&c->items, &c->cap, c->n + 1, sizeof *c->items)) return oom(m);
    c->items[c->n++] = item;
    return true;
}

// The position of the topmost mark, or -1.
static int top_mark(const Vm *m) {
    for (int i = m->n_stack - 1; i >= 0; i--)
        if (m->v[m->stack[i]].kind == V_MARK) return i;
    return -1;
}

static bool take(Vm *m, size_t n, const unsigned char **at) {
    if ((size_t)(m->end - m->p) < n) return fail(m, "it ends in the middle of an opcode's argument");
    *at = m->p, m->p += n;
    return true;
}

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static bool push_str(Vm *m, size_t len) {
    const unsigned char *at = NULL;
    if (!take(m, len, &at)) return false;
    const int v = new_value(m, V_STR);
    if (v < 0 || !(m->v[v].s = malloc(len + 1))) return oom(m);
    memcpy(m->v[v].s, at, len), m->v[v].s[len] = '\0';
    return push(m, v);
}

static bool push_int(Vm *m, int64_t i, VKind kind) {
    const int v = new_value(m, kind);
    if (v >= 0) m->v[v].i = i;
    return push(m, v);
}

// A global by module and name: one of those allowed, or the read stops naming it.
static bool push_global(Vm *m, const char *module, const char *name) {
    int g = -1, sub = 0;
    if (!strcmp(module, "collections") && !strcmp(name, "OrderedDict")) g = G_ORDERED_DICT;
    else if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_tensor_v2")) g = G_REBUILD_TENSOR;
    else if (!strcmp(module, "torch._utils") && !strcmp(name, "_rebuild_parameter")) g = G_REBUILD_PARAMETER;
    else if (!strcmp(module, "torch"))
        for (int k = 0; k < N_STORAGES; k++)
            if (!strcmp(name, storages[k].name)) g = G_STORAGE, sub = k;
    if (g < 0)
        return err_set(m->e, "%s: data.pkl asks for the global '%.60s.%.60s', which a state_dict does not need: refused, "
                       "nothing was run (if you trust the file, convert it with scripts/torch2st.py --trust-pickle)",
                       m->what, module, name);
    const int v = new_value(m, V_GLOBAL);
    if (v >= 0) m->v[v].i = g, m->v[v].sub = sub;
    return push(m, v);
}

static bool stack_global(Vm *m) {
    int name = 0, module = 0;
    if (!pop(m, &name) || !pop(m, &module)) return false;
    if (m->v[name].kind != V_STR || m->v[module].kind != V_STR) return fail(m, "STACK_GLOBAL without two strings");
    return push_global(m, m->v[module].s, m->v[name].s);
}

static bool text_global(Vm *m) {
    char part[2][128];
    for (int k = 0; k < 2; k++) {
        const unsigned char *nl = memchr(m->p, '\n', (size_t)(m->end - m->p));
        if (!nl || nl - m->p >= (long)sizeof part[k]) return fail(m, "GLOBAL's name is cut short or too long");
        memcpy(part[k], m->p, (size_t)(nl - m->p)), part[k][nl - m->p] = '\0';
        m->p = nl + 1;
    }
    return push_global(m, part[0], part[1]);
}

// Pops the values above the topmost mark into a new container of `kind` (its items in order).
static bool collect(Vm *m, VKind kind) {
    const int mark = top_mark(m);
    if (mark < 0) return fail(m, "an opcode needs a mark and there is none");
    const int v = new_value(m, kind);
    if (v < 0) return oom(m);
    for (int i = mark + 1; i < m->n_stack; i++)
        if (!add_item(m, v, m->stack[i])) return false;
    m->n_stack = mark;
    return push(m, v);
}

static bool tuple_of(Vm *m, int n) {
    if (m->n_stack < n) return fail(m, "a TUPLE opcode pops an empty stack");
    const int v = new_value(m, V_TUPLE);
    if (v < 0) return oom(m);
    for (int i = m->n_stack - n; i < m->n_stack; i++) {
        if (m->v[m->stack[i]].kind == V_MARK) return fail(m, "a TUPLE opcode meets a mark");
        if (!add_item(m, v, m->stack[i])) return false;
    }
    m->n_stack -= n;
    return push(m, v);
}

// SETITEM, SETITEMS, APPEND, APPENDS: the values above the mark (or the top one or two) into the
// container below them.
static bool fill(Vm *m, bool many, bool pairs) {
    const int mark = many ? top_mark(m) : -1;
    if (many && mark < 0) return fail(m, "SETITEMS or APPENDS without a mark");
    const int at = many ? mark - 1 : m->n_stack - (pairs ? 3 : 2);  // the container's place
    if (at < 0) return fail(m, "SETITEM(S) or APPEND(S) with no container below its items");
    const int c = m->stack[at], first = many ? mark + 1 : at + 1;
    if (m->v[c].kind != (pairs ? V_DICT : V_LIST))
        return fail(m, pairs ? "SETITEM(S) on what is not a dict" : "APPEND(S) on what is not a list");
    if (pairs && (m->n_stack - first) % 2) return fail(m, "SETITEMS with a key and no value");
    for (int i = first; i < m->n_stack; i++)
        if (!add_item(m, c, m->stack[i])) return false;
    m->n_stack = at + 1;
    return true;
}

static bool memo_put(Vm *m, uint64_t k) {
    if (m->n_stack == 0) return fail(m, "PUT with nothing on the stack");
    if (k >= MAX_MEMO) return fail(m, "a memo key past four million");
    if ((int)k >= m->cap_memo) {
        const int old = m->cap_memo, cap = (int)k * 2 + 16 < MAX_MEMO ? (int)k * 2 + 16 : MAX_MEMO;
        int *q = realloc(m->memo, sizeof *q * (size_t)cap);
        if (!q) return oom(m);
        for (int i = old; i < cap; i++) q[i] = -1;
        m->memo = q, m->cap_memo = cap;
    }
    m->n_memo += m->memo[k] < 0;
    m->memo[k] = m->stack[m->n_stack - 1];
    return true;
}

static bool memo_get(Vm *m, uint64_t k) {
    if (k >= (uint64_t)m->cap_memo || m->memo[k] < 0) return fail(m, "GET of a memo key never put");
    return push(m, m->memo[k]);
}

// ('storage', TYPE, KEY, LOCATION, NUMEL) -> a storage.
static bool persistent(Vm *m) {
    int pid = 0;
    if (!pop(m, &pid)) return false;
    const Value *t = &m->v[pid];
    if (t->kind != V_TUPLE || t->n != 5 || m->v[t->items[0]].kind != V_STR || strcmp(m->v[t->items[0]].s, "storage") ||
        m->v[t->items[1]].kind != V_GLOBAL || m->v[t->items[1]].i != G_STORAGE || m->v[t->items[2]].kind != V_STR ||
        m->v[t->items[4]].kind != V_INT || m->v[t->items[4]].i < 0)
        return fail(m, "a persistent id that is not ('storage', TYPE, KEY, LOCATION, NUMEL)");
    const int v = new_value(m, V_STORAGE);
    if (v < 0) return oom(m);
    const Value *tt = &m->v[pid];  // (new_value may have moved the array)
    m->v[v].sub = m->v[tt->items[1]].sub, m->v[v].i = m->v[tt->items[4]].i;
    if (!(m->v[v].s = malloc(strlen(m->v[tt->items[2]].s) + 1))) return oom(m);
    strcpy(m->v[v].s, m->v[tt->items[2]].s);
    return push(m, v);
}

// A tuple of whole numbers into out[] (at most MAX_DIMS).
static bool ints_of(Vm *m, int tuple, int64_t *out, int *n) {
    const Value *t = &m->v[tuple];
    if (t->kind != V_TUPLE || t->n > MAX_DIMS) return fail(m, "a tensor's size or stride is not a tuple of at most 8 numbers");
    for (int k = 0; k < t->n; k++) {
        if (m->v[t->items[k]].kind != V_INT) return fail(m, "a tensor's size or stride holds what is not a whole number");
        out[k] = m->v[t->items[k]].i;
    }
    *n = t->n;
    return true;
}

// _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]).
static bool rebuild_tensor(Vm *m, int args) {
    const Value *a = &m->v[args];
    if (a->n < 4 || m->v[a->items[0]].kind != V_STORAGE || m->v[a->items[1]].kind != V_INT)
        return fail(m, "_rebuild_tensor_v2 without (storage, offset, size, stride, ...)");
    const int v = new_value(m, V_TENSOR);
    if (v < 0) return oom(m);
    a = &m->v[args];
    Value *t = &m->v[v];
    t->i = a->items[0], t->offset = m->v[a->items[1]].i;
    int64_t size[MAX_DIMS], stride[MAX_DIMS];
    int ns, nt;
    if (!ints_of(m, m->v[args].items[2], size, &ns) || !ints_of(m, m->v[args].items[3], stride, &nt)) return false;
    if (ns != nt) return fail(m, "a tensor's size and stride differ in length");
    t = &m->v[v];
    t->ndim = ns;
    memcpy(t->size, size, sizeof size), memcpy(t->stride, stride, sizeof stride);
    return push(m, v);
}

static bool reduce(Vm *m) {
    int args = 0, fn = 0;
    if (!pop(m, &args) || !pop(m, &fn)) return false;
    if (m->v[fn].kind != V_GLOBAL || m->v[args].kind != V_TUPLE) return fail(m, "REDUCE of what is not an allowed global");
    switch ((Global)m->v[fn].i) {
    case G_ORDERED_DICT: return push(m, new_value(m, V_DICT));
    case G_REBUILD_TENSOR: return rebuild_tensor(m, args);
    case G_REBUILD_PARAMETER:
        if (m->v[args].n < 1 || m->v[m->v[args].items[0]].kind != V_TENSOR) return fail(m, "_rebuild_parameter without a tensor");
        return push(m, m->v[args].items[0]);
    case G_STORAGE: return fail(m, "a storage type called as a function");
    }
    return fail(m, "REDUCE of an unknown global");
}

static bool step(Vm *m, bool *stop) {
    const unsigned char *a = NULL;
    const unsigned char op = *m->p++;
    int x = 0;
    switch (op) {
    case 0x80: return take(m, 1, &a);                                   // PROTO
    case 0x95: return take(m, 8, &a);                                   // FRAME
    case '.': return *stop = true;                                      // STOP
    case '(': return push(m, new_value(m, V_MARK));                     // MARK
    case '}': return push(m, new_value(m, V_DICT));                     // EMPTY_DICT
    case ']': return push(m, new_value(m, V_LIST));                     // EMPTY_LIST
    case ')': return push(m, new_value(m, V_TUPLE));                    // EMPTY_TUPLE
    case 'N': return push(m, new_value(m, V_NONE));                     // NONE
    case 0x88: case 0x89: return push_int(m, op == 0x88, V_BOOL);       // NEWTRUE, NEWFALSE
    case 'K': return take(m, 1, &a) && push_int(m, a[0], V_INT);        // BININT1
    case 'M': return take(m, 2, &a) && push_int(m, (int64_t)le(a, 2), V_INT);
    case 'J': return take(m, 4, &a) && push_int(m, (int32_t)le(a, 4), V_INT);
    case 0x8a:                                                          // LONG1
        if (!take(m, 1, &a)) return false;
        x = a[0];
        if (x > 8) return fail(m, "a LONG1 number past 64 bits");
        if (!take(m, (size_t)x, &a)) return false;
        {
            uint64_t v = x ? le(a, x) : 0;
            if (x && x < 8 && (a[x - 1] & 0x80)) v |= ~0ull << (8 * x);  // negative: sign-extend
            return push_int(m, (int64_t)v, V_INT);
        }
    case 'G':                                                           // BINFLOAT, big-endian
        if (!take(m, 8, &a)) return false;
        {
            uint64_t bits = 0;
            for (int i = 0; i < 8; i++) bits = bits << 8 | a[i];
            double d;
            memcpy(&d, &bits, sizeof d);
            x = new_value(m, V_FLOAT);
            if (x >= 0) m->v[x].f = d;
            return push(m, x);
        }
    case 'X': return take(m, 4, &a) && push_str(m, (size_t)le(a, 4));  // BINUNICODE
    case 0x8c: case 'U': return take(m, 1, &a) && push_str(m, a[0]);   // SHORT_BINUNICODE, SHORT_BINSTRING
    case 'T': return take(m, 4, &a) && push_str(m, (size_t)le(a, 4));  // BINSTRING
    case 0x8d: return take(m, 8, &a) && push_str(m, (size_t)le(a, 8)); // BINUNICODE8
    case 'c': return text_global(m);                                    // GLOBAL
    case 0x93: return stack_global(m);                                  // STACK_GLOBAL
    case 't': return collect(m, V_TUPLE);                               // TUPLE
    case 'l': return collect(m, V_LIST);                                // LIST
    case 0x85: case 0x86: case 0x87: return tuple_of(m, op - 0x84);     // TUPLE1, TUPLE2, TUPLE3
    case 'q': return take(m, 1, &a) && memo_put(m, a[0]);               // BINPUT
    case 'r': return take(m, 4, &a) && memo_put(m, le(a, 4));           // LONG_BINPUT
    case 0x94: return memo_put(m, (uint64_t)m->n_memo);                // MEMOIZE: the next key
    case 'h': return take(m, 1, &a) && memo_get(m, a[0]);               // BINGET
    case 'j': return take(m, 4, &a) && memo_get(m, le(a, 4));           // LONG_BINGET
    case 's': return fill(m, false, true);                              // SETITEM
    case 'u': return fill(m, true, true);                               // SETITEMS
    case 'a': return fill(m, false, false);                             // APPEND
    case 'e': return fill(m, true, false);                              // APPENDS
    case 'Q': return persistent(m);                                     // BINPERSID
    case 'R': return reduce(m);                                         // REDUCE
    case 'b': return pop(m, &x);                                        // BUILD: the state is not needed
    case '0': return pop(m, &x);                                        // POP
    case '1': {                                                         // POP_MARK
        const int mark = top_mark(m);
        if (mark < 0) return fail(m, "POP_MARK without a mark");
        m->n_stack = mark;
        return true;
    }
    case '2': return m->n_stack ? push(m, m->stack[m->n_stack - 1]) : fail(m, "DUP of an empty stack");
    default: {
        char msg[80];
        snprintf(msg, sizeof msg, "opcode 0x%02X, which a state_dict does not use: refused", op);
        return fail(m, msg);
    }
    }
}

// ---- the tensors ----

static double number(const unsigned char *p, DType dt) {
    switch (dt) {
    case D_F32: { float f; memcpy(&f, p, 4); return f; }
    case D_F16: return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case D_BF16: return bf16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case D_F64: { double d; memcpy(&d, p, 8); return d; }
    case D_I64: return (double)(int64_t)le(p, 8);
    case D_I32: return (double)(int32_t)le(p, 4);
    case D_I16: return (double)(int16_t)le(p, 2);
    case D_I8: return (double)(int8_t)p[0];
    case D_U8: case D_BOOL: return p[0];
    }
    return 0;
}

// Checks the tensor against its storage's bytes; its number of elements in *count.
static bool tensor_fits(Vm *m, const Value *t, const ZipEntry *z, const char *key, int64_t *count) {
    const Value *s = &m->v[t->i];
    const int64_t el = storages[s->sub].size;
    if (s->i > (int64_t)(z->size / (size_t)el))
        return err_set(m->e, "%s: the storage of '%s' holds %zu bytes, fewer than its %lld elements of %lld", m->what, key,
                       z->size, (long long)s->i, (long long)el);
    int64_t last = t->offset, n = 1;
    if (t->offset < 0) return err_set(m->e, "%s: '%s' starts at a negative offset", m->what, key);
    for (int k = 0; k < t->ndim; k++) {
        if (t->size[k] < 0 || t->stride[k] < 0) return err_set(m->e, "%s: '%s' has a negative size or stride", m->what, key);
        if (t->size[k] > INT32_MAX) return err_set(m->e, "%s: '%s' has a dimension past 2^31", m->what, key);
        if (t->size[k] == 0) n = 0;
        else if (t->stride[k] > (INT64_MAX / 2) / t->size[k] || n > (INT64_MAX / 2) / t->size[k])
            return err_set(m->e, "%s: '%s' has a size or stride too large", m->what, key);
        else last += (t->size[k] - 1) * t->stride[k], n *= t->size[k];
    }
    if (n > 0 && last >= s->i)
        return err_set(m->e, "%s: '%s' reads element %lld of a storage of %lld: its strides run past the storage", m->what,
                       key, (long long)last, (long long)s->i);
    *count = n;
    return true;
}

// Copies the tensor, by its offset and strides, into out as float32.
static void gather(const Vm *m, const Value *t, const ZipEntry *z, float *out, int64_t count) {
    const Value *s = &m->v[t->i];
    const DType dt = storages[s->sub].dt;
    const int el = storages[s->sub].size;
    int64_t idx[MAX_DIMS] = {0};
    for (int64_t k = 0; k < count; k++) {
        int64_t at = t->offset;
        for (int d = 0; d < t->ndim; d++) at += idx[d] * t->stride[d];
        out[k] = (float)number(z->data + at * el, dt);
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->size[d]; d--) idx[d] = 0;
    }
}

static Shape shape_of(const Value *t) {
    Shape s = {0};
    s.ndim = t->ndim ? t->ndim : 1;
    for (int k = 0; k < SHAPE_MAX_DIMS; k++) s.dim[k] = k < t->ndim ? (int)t->size[k] : 1;
    return s;
}

// The dict's tensors into f: names, shapes, and one arena of float32.
static bool tensors_out(Vm *m, const Zip *z, const Value *dict, StFile *f) {
    int64_t total = 0, *count = calloc((size_t)dict->n / 2 + 1, sizeof *count);
    const ZipEntry **ent = calloc((size_t)dict->n / 2 + 1, sizeof *ent);
    bool ok = (count && ent) || oom(m);
    for (int k = 0; ok && k < dict->n / 2; k++) {
        const Value *key = &m->v[dict->items[2 * k]], *t = &m->v[dict->items[2 * k + 1]];
        if (key->kind != V_STR) ok = fail(m, "a state_dict key that is not a string");
        else if (t->kind != V_TENSOR)
            ok = err_set(m->e, "%s: '%s' holds no tensor: stepformer reads a state_dict of tensors", m->what, key->s);
        else if (t->ndim > SHAPE_MAX_DIMS)
            ok = err_set(m->e, "%s: '%s' has %d dimensions, more than the %d a tensor may have", m->what, key->s, t->ndim,
                         SHAPE_MAX_DIMS);
        if (!ok) break;
        char entry[300];
        snprintf(entry, sizeof entry, "data/%s", m->v[t->i].s);
        if (!(ent[k] = zip_find_suffix(z, entry)))
            ok = err_set(m->e, "%s: the zip has no entry '%s', the storage of '%s'", m->what, entry, key->s);
        ok = ok && tensor_fits(m, t, ent[k], key->s, &count[k]);
        total += ok ? count[k] : 0;
        if (ok && (double)total * 4 > (double)limit_bytes(LIMIT_MODEL_MB))
            ok = err_code(m->e, ERR_LIMIT, "%s: the tensors take more than the %lld MB a model may take (set %s to raise "
                          "it)", m->what, limit_value(LIMIT_MODEL_MB), limit_env(LIMIT_MODEL_MB));
    }
    const int n = dict->n / 2;
    f->arena = ok ? malloc(sizeof(float) * (size_t)(total + 1)) : NULL;
    f->entries = ok ? calloc((size_t)n + 1, sizeof *f->entries) : NULL;
    if (ok && (!f->arena || !f->entries)) ok = oom(m);
    int64_t at = 0;
    for (int k = 0; ok && k < n; k++) {
        const Value *key = &m->v[dict->items[2 * k]], *t = &m->v[dict->items[2 * k + 1]];
        StEntry *en = &f->entries[f->n_entries];
        if (!(en->name = malloc(strlen(key->s) + 1))) ok = oom(m);
        if (!ok) break;
        strcpy(en->name, key->s);
        en->shape = shape_of(t), en->data = f->arena + at;
        gather(m, t, ent[k], en->data, count[k]);
        at += count[k], f->n_entries++;
    }
    free(count), free(ent);
    return ok;
}

static void vm_free(Vm *m) {
    for (int i = 0; i < m->nv; i++) free(m->v[i].s), free(m->v[i].items);
    free(m->v), free(m->stack), free(m->memo);
}

bool torch_bin_parse(StFile *f, const unsigned char *bytes, size_t n, const char *what, Err *e) {
    memset(f, 0, sizeof *f);
    Zip z;
    if (!zip_read(&z, bytes, n, what, e)) return false;
    const ZipEntry *pkl = zip_find_suffix(&z, "data.pkl");
    if (!pkl) return zip_free(&z), err_set(e, "%s: the zip holds no data.pkl: not a file torch.save wrote", what);
    Vm m = {.p = pkl->data, .end = pkl->data + pkl->size, .what = what, .e = e};
    bool ok = true, stop = false;
    while (ok && !stop) ok = m.p < m.end ? step(&m, &stop) : fail(&m, "it ends without STOP");
    int top = -1;
    if (ok && (m.n_stack != 1 || m.v[top = m.stack[0]].kind != V_DICT))
        ok = fail(&m, "it does not hold one dict of tensors (a state_dict)");
    ok = ok && tensors_out(&m, &z, &m.v[top], f) && (st_index(f) || oom(&m));
    vm_free(&m);
    zip_free(&z);
    if (!ok) st_free(f);
    return ok;
}

bool torch_bin_load(StFile *f, const char *path, Err *e) {
    char *bytes;
    size_t n;
    memset(f, 0, sizeof *f);
    if (!file_read_all(path, "the model", &bytes, &n, e)) return false;
    const bool ok = torch_bin_parse(f, (const unsigned char *)bytes, n, path, e);
    free(bytes);
    return ok;
}
