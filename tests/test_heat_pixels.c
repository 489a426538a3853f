// test_heat_pixels.c: a heat map's pixels against the naive reading of what they are.
//
// Each pixel is the mean of the cells it covers (finite, not masked), coloured by the map; a pixel
// with no such cell is the masked grey. heat_pixels sums down columns first, in vectors, and
// colours with its own rounding: here every pixel of maps with NaN, infinities and a mask, drawn
// smaller (a pixel over more than a thousand columns too), the same size and larger (wider than
// its table of column edges), is held to a plain loop over its cells and lroundf's colours; and
// the colour range of long tensors to a plain loop.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "heat.h"

// The colour maps' anchors (colormap.c's, as published), for the reference colouring.
static const Rgba diverging[] = {{5, 48, 97, 255},    {33, 102, 172, 255}, {67, 147, 195, 255}, {146, 197, 222, 255},
                                 {209, 229, 240, 255}, {247, 247, 247, 255}, {253, 219, 199, 255}, {244, 165, 130, 255},
                                 {214, 96, 77, 255},  {178, 24, 43, 255},  {103, 0, 31, 255}};
static const Rgba sequential[] = {{68, 1, 84, 255},    {71, 45, 123, 255}, {59, 82, 139, 255},
                                  {44, 114, 142, 255}, {33, 145, 140, 255}, {40, 174, 128, 255},
                                  {94, 201, 98, 255},  {173, 220, 48, 255}, {253, 231, 37, 255}};

static Rgba ref_colour(Colormap m, float v, float lo, float hi) {
    const Rgba *s = m == CMAP_DIVERGING ? diverging : sequential;
    const int n = m == CMAP_DIVERGING ? 11 : 9;
    float t = m == CMAP_DIVERGING ? (hi > 0 ? 0.5f + 0.5f * v / hi : 0.5f) : (hi > lo ? (v - lo) / (hi - lo) : 0.0f);
    if (!(t > 0.0f)) t = 0.0f;
    if (t > 1.0f) t = 1.0f;
    const float x = t * (float)(n - 1);
    const int i = (int)x;
    if (i >= n - 1) return s[n - 1];
    const float f = x - (float)i;
    const Rgba a = s[i], b = s[i + 1];
    return (Rgba){(uint8_t)lroundf(a.r + f * (b.r - a.r)), (uint8_t)lroundf(a.g + f * (b.g - a.g)),
                  (uint8_t)lroundf(a.b + f * (b.b - a.b)), 255};
}

static Rgba ref_pixel(const float *d, const float *mask, int cols, int r0, int r1, int c0, int c1, int w, int h, int x,
                      int y, Colormap m, float lo, float hi) {
    const int nr = r1 - r0, nc = c1 - c0;
    int ya = r0 + (int)((long)y * nr / h), yb = r0 + (int)((long)(y + 1) * nr / h);
    int xa = c0 + (int)((long)x * nc / w), xb = c0 + (int)((long)(x + 1) * nc / w);
    if (yb <= ya) yb = ya + 1;
    if (xb <= xa) xb = xa + 1;
    double sum = 0;
    int n = 0;
    for (int r = ya; r < yb; r++)
        for (int c = xa; c < xb; c++) {
            const float v = d[(size_t)r * cols + c];
            if (isfinite(v) && !(mask && mask[(size_t)r * cols + c] == -INFINITY)) sum += v, n++;
        }
    return n ? ref_colour(m, (float)(sum / n), lo, hi) : cmap_masked;
}

// Every pixel of a w x h drawing of rows [r0, r1) and columns [c0, c1) against the reference:
// the masked grey exactly where the reference has it, each channel within 1 elsewhere (the sums
// are added in another order; the mean can differ in its last bit) and most pixels exact.
static void check_map(const float *d, const float *mask, int cols, int r0, int r1, int c0, int c1, int w, int h,
                      Colormap m, float lo, float hi, const char *what) {
    Rgba *px = malloc(sizeof *px * (size_t)w * h);
    CHECK(px != NULL, "%s: memory", what);
    if (!px) return;
    heat_pixels(px, w, h, d, mask, cols, r0, r1, c0, c1, m, lo, hi);
    long off = 0, exact = 0, grey = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const Rgba got = px[(size_t)y * w + x], want = ref_pixel(d, mask, cols, r0, r1, c0, c1, w, h, x, y, m, lo, hi);
            const bool masked = !memcmp(&want, &cmap_masked, sizeof want);
            const int dr = abs(got.r - want.r), dg = abs(got.g - want.g), db = abs(got.b - want.b);
            grey += masked;
            exact += !dr && !dg && !db;
            if ((masked && (dr || dg || db)) || dr > 1 || dg > 1 || db > 1) {
                if (off++ < 3)
                    CHECK(false, "%s: pixel (%d, %d) is (%d,%d,%d), the mean of its cells gives (%d,%d,%d)", what, x, y, got.r,
                          got.g, got.b, want.r, want.g, want.b);
            }
        }
    CHECK(off == 0, "%s: %ld of %d pixels off", what, off, w * h);
    CHECK(exact * 1000 >= 999L * w * h, "%s: only %ld of %d pixels exactly the reference's", what, exact, w * h);
    CHECK(mask == NULL || grey > 0, "%s: the mask shows nowhere (the test's map is wrong)", what);
    free(px);
}

// The colour range of long tensors (cmap_range reads them four at a time, in chunks over the
// cores) against a plain loop: NaN and infinities anywhere, the least and the most in the last
// lanes, tails, a lone finite value among infinities, and a masked attention map's -inf above
// its diagonal. (test_render holds the bar's rules on short ones.)
static void test_long_ranges(void) {
    float lo, hi, b0, b1;
    const size_t lens[] = {1, 7, 8, 9, 17, 1000, 65537, 3000001};
    unsigned seed = 7;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        const size_t n = lens[l];
        float *x = malloc(sizeof(float) * n);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            const unsigned r = seed >> 8;
            x[i] = r % 97 == 0 ? NAN : r % 89 == 0 ? INFINITY : r % 83 == 0 ? -INFINITY : (float)(r % 20001) / 1000.0f - 9.0f;
        }
        if (n > 8) x[n - 1] = -123.5f, x[n - 2] = 77.25f;
        float want_lo = INFINITY, want_hi = -INFINITY;
        for (size_t i = 0; i < n; i++)
            if (isfinite(x[i])) want_lo = fminf(want_lo, x[i]), want_hi = fmaxf(want_hi, x[i]);
        cmap_range(CMAP_SEQUENTIAL, x, n, &lo, &hi, &b0, &b1);
        CHECK(want_lo > want_hi ? lo == 0.0f && hi == 1.0f : lo == want_lo && hi == want_hi,
              "%zu values: %g to %g, a plain loop %g to %g", n, (double)lo, (double)hi, (double)want_lo, (double)want_hi);
        free(x);
    }
    float lone[40];
    for (int i = 0; i < 40; i++) lone[i] = i % 2 ? INFINITY : -INFINITY;
    lone[21] = -0.75f;
    cmap_range(CMAP_SEQUENTIAL, lone, 40, &lo, &hi, &b0, &b1);
    CHECK(lo == -0.75f && hi == -0.75f, "one finite value among infinities: %g to %g", (double)lo, (double)hi);
    enum { T = 300 };
    float *masked = malloc(sizeof(float) * T * T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) masked[i * T + j] = j > i ? -INFINITY : (float)(i - 3 * j) / T;
    cmap_range(CMAP_DIVERGING, masked, T * T, &lo, &hi, &b0, &b1);
    const float least = (float)(-2 * (T - 1)) / T;  // on the diagonal's last row; the most, (T-1)/T, is less far
    CHECK(b0 == least && b1 == -least && lo == least, "a masked map of %d x %d: the bar %g to %g", T, T, (double)b0, (double)b1);
    free(masked);
}

// cmap_values (eight at a time where the CPU has AVX2, the rest one by one) against the reference
// colouring, exactly, channel for channel: a sweep past both ends of each map through every
// stop, on ranges of both signs and empty ones, with NaN, the infinities, -0 and tiny values;
// -inf is the masked grey. A run of 1001 values, so the vector loop's tail is taken too.
static void test_colours(void) {
    enum { N = 1001 };
    float v[N];
    Rgba got[N];
    const float ranges[][2] = {{-1, 1}, {-3.5f, 0.25f}, {0, 0}, {2, 2}, {0.1f, 7}, {-1e-30f, 1e-30f}};
    const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, -1e-40f, 3e38f, -3e38f};
    for (int m = 0; m < 2; m++)
        for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
            const float lo = ranges[r][0], hi = ranges[r][1], span = hi - lo > 0 ? hi - lo : 1.0f;
            for (int i = 0; i < N; i++) v[i] = lo - 0.2f * span + 1.4f * span * (float)i / (N - 1);
            for (size_t k = 0; k < sizeof special / sizeof *special; k++) v[37 * k + 3] = special[k];
            const Colormap map = m ? CMAP_SEQUENTIAL : CMAP_DIVERGING;
            cmap_values(got, v, N, map, lo, hi);
            int bad = 0, first = -1;
            for (int i = 0; i < N; i++) {
                const Rgba want = v[i] == -INFINITY ? cmap_masked : ref_colour(map, v[i], lo, hi);
                if (memcmp(&got[i], &want, sizeof want)) bad++, first = first < 0 ? i : first;
            }
            CHECK(bad == 0, "map %d, range %g to %g: %d of %d colours differ from the reference, first at %g", m,
                  (double)lo, (double)hi, bad, N, first >= 0 ? (double)v[first] : 0.0);
        }
}

int main(void) {
    test_long_ranges();
    test_colours();
    enum { ROWS = 37, COLS = 5003 };
    float *d = malloc(sizeof(float) * ROWS * COLS), *mask = malloc(sizeof(float) * ROWS * COLS);
    CHECK(d && mask, "memory");
    if (!d || !mask) return check_finish("test_heat_pixels");
    unsigned s = 12345;
    for (int i = 0; i < ROWS * COLS; i++) {
        s = s * 1103515245u + 12345u;
        d[i] = (float)((s >> 8) % 20001) / 10000.0f - 1.0f;  // -1 to 1
        mask[i] = (i % COLS) > (i / COLS) * 100 + 40 ? -INFINITY : 0.0f;  // a causal-like mask
    }
    d[5] = NAN, d[COLS + 7] = INFINITY, d[2 * COLS + 9] = -INFINITY;
    for (int c = 100; c < 140; c++) d[3 * COLS + c] = NAN;  // a run no pixel can count
    check_map(d, NULL, COLS, 0, ROWS, 0, COLS, 300, 20, CMAP_DIVERGING, -1, 1, "smaller");
    check_map(d, NULL, COLS, 0, ROWS, 0, COLS, 3, 5, CMAP_DIVERGING, -1, 1, "a pixel over 1000 columns");
    check_map(d, NULL, COLS, 0, ROWS, 0, COLS, 7, 37, CMAP_SEQUENTIAL, -1, 1, "each row, 7 wide");
    check_map(d, mask, COLS, 0, ROWS, 0, COLS, 1000, 37, CMAP_DIVERGING, -1, 1, "masked");
    check_map(d, mask, COLS, 2, 30, 100, 1200, 1100, 50, CMAP_SEQUENTIAL, -1, 1, "a zoomed box, larger");
    check_map(d, NULL, COLS, 0, 3, 4000, 4100, 9000, 4, CMAP_DIVERGING, -1, 1, "wider than the edge table");
    check_map(d, NULL, COLS, 3, 4, 90, 150, 120, 2, CMAP_DIVERGING, -1, 1, "a run of NaN: the masked grey");
    free(d), free(mask);
    return check_finish("test_heat_pixels");
}
