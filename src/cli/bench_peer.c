// bench_peer.c: the peers `bench` measures stepformer against, in the same run: PyTorch
// (scripts/bench_torch.py, at its best thread setting) and OpenBLAS's cblas_sgemm, loaded at
// run time so it is never a build dependency.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "data.h"
#include "rng.h"

static const char torch_missing[] =
    "PyTorch not measured: /usr/bin/python3 with python3-torch is not installed here "
    "(apt-get install python3-torch libopenblas0-pthread, then run this again)";

bool bench_torch(const BenchCase *c, Figure *out, char *why, size_t n) {
    memset(out, 0, sizeof *out);
    char script[4096], args[256], cmd[4700];
    if (access("/usr/bin/python3", X_OK) != 0) return snprintf(why, n, "%s", torch_missing), false;
    if (!data_path("scripts/bench_torch.py", script, sizeof script) || strchr(script, '\''))
        return snprintf(why, n, "PyTorch not measured: scripts/bench_torch.py is not installed beside stepformer"), false;
    if (c->path == PATH_FORWARD) snprintf(args, sizeof args, "forward --len %d", c->len);
    else if (c->path == PATH_GREEDY) snprintf(args, sizeof args, "greedy --src-len %d --new %d", c->src_len, c->new_tokens);
    else if (c->path == PATH_GPT2_FORWARD || c->path == PATH_GPT2_GENERATE) {
        if (strchr(c->model_dir, '\'')) return snprintf(why, n, "PyTorch not measured: a quote in %s", c->model_dir), false;
        snprintf(args, sizeof args, "%s --model '%s' --len %d", c->path == PATH_GPT2_FORWARD ? "gpt2-forward" : "gpt2-generate",
                 c->model_dir, c->len);
        if (c->path == PATH_GPT2_GENERATE) snprintf(args + strlen(args), sizeof args - strlen(args), " --new %d", c->new_tokens);
    } else snprintf(args, sizeof args, "train");
    if (c->runs) snprintf(args + strlen(args), sizeof args - strlen(args), " --runs %d", c->runs);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %s 2>/dev/null", script, args);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    char line[512] = "", path[32], version[64], expect[32];
    int threads = 0, blas = 0;
    sscanf(args, "%31s", expect);  // the reply names the path it ran
    const bool got = p && fgets(line, sizeof line, p) &&
                     sscanf(line, "torch %31s median_ms %lf min_ms %lf rss_mb %lf threads %d blas_threads %d torch %63s",
                            path, &out->median_ms, &out->min_ms, &out->rss_mb, &threads, &blas, version) == 7 &&
                     !strcmp(path, expect);
    const int status = p ? pclose(p) : -1;
    if (!got || status != 0) return snprintf(why, n, "%s", torch_missing), false;
    out->ok = true;
    snprintf(out->about, sizeof out->about, "PyTorch %s, %d torch thread%s, OpenBLAS on %d (its fastest)", version,
             threads, threads == 1 ? "" : "s", blas);
    return true;
}

// ---- OpenBLAS ----

typedef void (*CblasSgemm)(int order, int ta, int tb, int M, int N, int K, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c, int ldc);
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

static const char *const openblas_names[] = {
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0",
    "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"};

typedef struct {
    const GemmShape *s;
    int n, threads;
    bool side_by_side;  // a batch's products split over the cores, one OpenBLAS thread each
} BlasJob;

// GFLOP/s of each shape at one thread count: v[i].
static void task_openblas(const void *arg, BenchReply *r) {
    const BlasJob *j = arg;
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof openblas_names / sizeof *openblas_names; i++) h = dlopen(openblas_names[i], RTLD_NOW);
    CblasSgemm sg = h ? (CblasSgemm)(uintptr_t)dlsym(h, "cblas_sgemm") : NULL;
    void (*set_threads)(int) = h ? (void (*)(int))(uintptr_t)dlsym(h, "openblas_set_num_threads") : NULL;
    if (!sg || !set_threads)
        return (void)snprintf(r->why, sizeof r->why, "OpenBLAS not measured: libopenblas0-pthread is not installed");
    set_threads(j->threads);
    r->ok = true;
    for (int i = 0; i < j->n && i < BENCH_VALUES && r->ok; i++) {
        const GemmShape *s = &j->s[i];
        const size_t na = (size_t)s->M * s->K, nb = (size_t)s->K * s->N, nc = (size_t)s->M * s->N;
        float *a, *b, *c;
        r->ok = bench_operands(s, 5 + (unsigned)i, &a, &b, &c);
        int reps = 0;
        const double t0 = bench_now();
        double el = 0;
        while (r->ok && (el = bench_now() - t0) < 0.2) {
#pragma omp parallel for schedule(static) if (j->side_by_side)
            for (int q = 0; q < s->batch; q++)
                sg(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, s->bt ? CBLAS_TRANS : CBLAS_NO_TRANS, s->M, s->N, s->K, 1.0f,
                   a + na * (size_t)q, s->K, b + nb * (size_t)q, s->bt ? s->K : s->N, 0.0f, c + nc * (size_t)q, s->N);
            reps++;
        }
        if (r->ok) r->v[i] = 2.0 * s->M * s->N * s->K * s->batch * reps / el * 1e-9;
        free(a), free(b), free(c);
    }
    if (!r->ok) snprintf(r->why, sizeof r->why, "out of memory");
}

bool bench_gemm_openblas(const GemmShape *s, int n, BlasBest *best, char *why, size_t wn) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int most = cores > 0 ? (int)cores : 1;
    bool any = false, batches = false;
    for (int i = 0; i < n; i++) best[i] = (BlasBest){0, 0, false}, batches |= s[i].batch > 1;
    for (int t = 1; t <= most + (batches && most > 1); t++) {  // its best setting, shape by shape
        const BlasJob j = {s, n, t <= most ? t : 1, t > most};
        BenchReply r;
        double rss;
        if (!bench_in_child(task_openblas, &j, &r, &rss)) return any || (snprintf(why, wn, "%s", r.why), false);
        any = true;
        for (int i = 0; i < n && i < BENCH_VALUES; i++)
            if (r.v[i] > best[i].gflops && (!j.side_by_side || s[i].batch > 1))
                best[i] = (BlasBest){r.v[i], j.threads, j.side_by_side};
    }
    return true;
}
