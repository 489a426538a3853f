// heat_pixels.c: a heat map's pixels, each the average of the cells it covers (heat.h), split
// over the cores for a large map.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "heat.h"
#include "par.h"
#include "simd.h"

// Where each pixel's cells start: edge[x] for x in [0, w] (columns of the tensor), divided out
// once an image, not twice a pixel.
typedef struct {
    const int *edge;  // [w + 1], or NULL: computed each time (an image wider than the table)
    int w, c0, nc;
} Columns;

// The cells pixel x covers: [*a, *b), at least one.
static void pixel_cells(const Columns *k, int x, int *a, int *b) {
    *a = k->edge ? k->edge[x] : k->c0 + (int)((long)x * k->nc / k->w);
    *b = k->edge ? k->edge[x + 1] : k->c0 + (int)((long)(x + 1) * k->nc / k->w);
    if (*b <= *a) *b = *a + 1;
}

// One pixel's colour from its cells, rows [ya, yb) and columns [xa, xb), one by one.
static Rgba pixel_wide(const float *data, const float *mask, int cols, int ya, int yb, int xa, int xb, Colormap map,
                       float lo, float hi) {
    double sum = 0.0;
    int n = 0;
    for (int r = ya; r < yb; r++)
        for (int c = xa; c < xb; c++) {
            const size_t at = (size_t)r * cols + c;
            if (isfinite(data[at]) && !(mask && mask[at] == -INFINITY)) sum += data[at], n++;
        }
    return n ? cmap_value(map, (float)(sum / n), lo, hi) : cmap_masked;
}

// sum[c] and count[c] += the counted cells of column from + c, rows [ya, yb): branch-free on the
// bits (an exponent all ones is inf or NaN), so it vectorises; the same sums in any width.
#define DEFINE_ADD_ROWS(NAME, ATTR)                                                                              \
    ATTR static void NAME(double *sum, int *count, const float *data, const float *mask, int cols, int ya, int yb, \
                          int from, int n) {                                                                     \
        for (int r = ya; r < yb; r++) {                                                                          \
            const float *v = data + (size_t)r * cols + from, *m = mask ? mask + (size_t)r * cols + from : NULL;  \
            for (int c = 0; c < n; c++) {                                                                        \
                uint32_t bits;                                                                                   \
                memcpy(&bits, &v[c], sizeof bits);                                                               \
                const uint32_t ok = ((bits & 0x7f800000u) != 0x7f800000u) & (!m || m[c] != -INFINITY);           \
                bits &= 0u - ok; /* 0.0f where not counted */                                                    \
                float kept;                                                                                      \
                memcpy(&kept, &bits, sizeof kept);                                                               \
                sum[c] += (double)kept, count[c] += (int)ok;                                                     \
            }                                                                                                    \
        }                                                                                                        \
    }
DEFINE_ADD_ROWS(add_rows, )
#if defined(__x86_64__)
DEFINE_ADD_ROWS(add_rows_avx2, __attribute__((target("avx2"))))  // four doubles a vector, not two
#endif

// One row of pixels: the cells of rows [ya, yb) summed down each column first (a loop the
// compiler vectorises), then across each pixel's columns, SPAN columns at a time. A cell that is
// not finite, or masked, is not counted; a pixel with none is the masked grey. The colours of a
// run of pixels are made together (cmap_values: eight at a time).
static void pixel_row(Rgba *out, const Columns *k, const float *data, const float *mask, int cols, int ya, int yb,
                      Colormap map, float lo, float hi) {
    enum { SPAN = 1024 };
    double sum[SPAN];
    int count[SPAN];
    for (int x = 0; x < k->w;) {
        int from, to, a, b;
        pixel_cells(k, x, &from, &to);
        if (to - from > SPAN) {  // one pixel over SPAN columns (a long vector in a small box)
            out[x++] = pixel_wide(data, mask, cols, ya, yb, from, to, map, lo, hi);
            continue;
        }
        int end = x + 1;  // pixels [x, end) take cells [from, to): at most SPAN of each
        while (end < k->w && end - x < SPAN && (pixel_cells(k, end, &a, &b), b - from <= SPAN)) to = b, end++;
        const int n = to - from;
        memset(sum, 0, sizeof(double) * (size_t)n), memset(count, 0, sizeof(int) * (size_t)n);
#if defined(__x86_64__)
        if (simd_level() >= SIMD_AVX2) add_rows_avx2(sum, count, data, mask, cols, ya, yb, from, n);
        else
#endif
            add_rows(sum, count, data, mask, cols, ya, yb, from, n);
        float mean[SPAN];  // a pixel's average, -inf where no cell counts (cmap_value's masked grey)
        for (int p = x; p < end; p++) {
            pixel_cells(k, p, &a, &b);
            double t = 0.0;
            int got = 0;
            for (int c = a - from; c < b - from; c++) t += sum[c], got += count[c];
            mean[p - x] = got ? (float)(t / got) : -INFINITY;
        }
        cmap_values(out + x, mean, end - x, map, lo, hi);
        x = end;
    }
}

void heat_pixels(Rgba *px, int w, int h, const float *data, const float *mask, int cols, int r0, int r1, int c0, int c1,
                 Colormap map, float lo, float hi) {
    enum { EDGES = 8192 };  // wider than any screen
    const int nr = r1 - r0, nc = c1 - c0;
    int edge[EDGES + 1];
    const Columns k = {w <= EDGES ? edge : NULL, w, c0, nc};
    for (int x = 0; x <= w && w <= EDGES; x++) edge[x] = c0 + (int)((long)x * nc / w);
    // Each pixel averages its cells alone: rows of pixels split over the cores once the cells
    // are many (a 1024 x 1024 attention map a head), the same colours either way.
    PAR_LOOP(PAR_ROWS((long)nr * nc), "omp parallel for schedule(static)",
        for (int y = 0; y < h; y++) {
            const int ya = r0 + (int)((long)y * nr / h), yb = r0 + (int)((long)(y + 1) * nr / h);
            pixel_row(px + (size_t)y * w, &k, data, mask, cols, ya, yb > ya ? yb : ya + 1, map, lo, hi);
        }
    );
}
