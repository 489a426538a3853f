// fonts_web.c: the browser side of fonts.h: the four DejaVu faces come with the page, packed
// into its file system under WEB_ROOT/fonts by scripts/web.sh (cut to the scripts the window
// shows, so the first load stays small).
#include <stdio.h>

#include "fonts.h"
#include "web_root.h"

bool fonts_find(char paths[FONT_COUNT][512], Err *e) {
    static const char *const files[FONT_COUNT] = {"DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
                                                  "DejaVuSansMono.ttf"};
    for (int f = 0; f < FONT_COUNT; f++) {
        snprintf(paths[f], sizeof paths[f], "%s/fonts/%s", WEB_ROOT, files[f]);
        FILE *probe = fopen(paths[f], "rb");
        if (!probe) return err_set(e, "the page has no font %s: build it again with scripts/web.sh build", paths[f]);
        fclose(probe);
    }
    return true;
}
