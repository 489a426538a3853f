// fonts.c: fontconfig lookups for DejaVu Sans (regular, bold, oblique) and DejaVu Sans Mono,
// or whatever fontconfig offers in their place.
#include "fonts.h"

#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool usable(const char *path) {
    size_t n = strlen(path);
    if (n < 4) return false;
    const char *ext = path + n - 4;
    if (strcasecmp(ext, ".ttf") != 0 && strcasecmp(ext, ".otf") != 0 && strcasecmp(ext, ".ttc") != 0)
        return false;
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static bool match(FcConfig *cfg, const char *pattern, char *out, size_t n) {
    FcPattern *pat = FcNameParse((const FcChar8 *)pattern);
    if (!pat) return false;
    FcConfigSubstitute(cfg, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *m = FcFontMatch(cfg, pat, &res);
    bool ok = false;
    FcChar8 *file;
    if (m && FcPatternGetString(m, FC_FILE, 0, &file) == FcResultMatch && usable((const char *)file)) {
        snprintf(out, n, "%s", (const char *)file);
        ok = true;
    }
    if (m) FcPatternDestroy(m);
    FcPatternDestroy(pat);
    return ok;
}

bool fonts_find(char paths[FONT_COUNT][512], Err *e) {
    static const char *const patterns[FONT_COUNT] = {
        "DejaVu Sans:style=Book", "DejaVu Sans:style=Bold", "DejaVu Sans:style=Oblique",
        "DejaVu Sans Mono:style=Book"};
    FcConfig *cfg = FcInitLoadConfigAndFonts();
    if (!cfg)
        return err_set(e, "fontconfig could not load its configuration; install fontconfig and "
                       "fonts-dejavu-core (apt-get install fontconfig fonts-dejavu-core)");
    bool ok = true;
    for (int f = 0; f < FONT_COUNT && ok; f++)
        if (!match(cfg, patterns[f], paths[f], sizeof paths[f])) {
            if (f == FONT_SANS) ok = false;
            else snprintf(paths[f], sizeof paths[f], "%s", paths[FONT_SANS]);  // fall back to regular
        }
    FcConfigDestroy(cfg);
    if (!ok)
        return err_set(e, "no usable font found through fontconfig; install fonts-dejavu-core "
                       "(apt-get install fonts-dejavu-core)");
    return true;
}
