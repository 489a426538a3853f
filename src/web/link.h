// link.h: what a link to the page names, read from its query string:
//   index.html?lesson=scaling&stage=encoder.layers.0.self_attn.weights&view=attention&size=1280x800
//   lesson=NAME   a course lesson's file name without .md (default: forward-pass)
//   stage=ID      a stage id, as `stepformer lesson --to` takes it
//   view=NAME     stage, attention, decoding, positions, training or compare
//   size=WxH      the canvas, fixed, at the page's top-left corner (default: the browser window)
//   replay=TEXT   a replay (src/ui/platform/events.h's format), lines split by new lines or ';'
//   model=PATH    a model folder in the hub's layout on the same site, relative to the page
//                 (models/gpt2/): the page opens it as `stepformer --model DIR` does, its files
//                 fetched from the site (a teacher hosts a copy for a class)
//   input=TEXT    the text the model reads (with model=, or replacing a lesson's input)
//   ids=LIST      token ids instead of text, comma separated (a folder without a tokenizer)
//   bench=1       the benchmark page instead of the window
//   wasm=plain    the program's multiply-adds rewritten into a multiply then an add, as the page
//                 does anyway where the browser lacks relaxed SIMD (wasm=madd, the default: fused
//                 where the browser can)
// Pure C with no browser in it, so the tests run it natively.
#ifndef STEPFORMER_LINK_H
#define STEPFORMER_LINK_H

#include <stdbool.h>

enum { LINK_MIN_SIZE = 320, LINK_MAX_SIZE = 8192, LINK_REPLAY_MAX = 8192, LINK_MODEL_MAX = 200, LINK_INPUT_MAX = 1024 };

typedef struct {
    char lesson[64];       // "" : the default lesson
    char stage[112];       // "" : the lesson's first stage
    int view;              // an index into link_view_names, or -1
    int w, h;              // 0 x 0: the browser window
    char replay[LINK_REPLAY_MAX];  // the replay's text, one directive or event a line ("" : none)
    char model[LINK_MODEL_MAX];    // a folder on the site, relative, without a trailing '/' ("" : none)
    char input[LINK_INPUT_MAX];    // text ("" : none)
    char ids[LINK_REPLAY_MAX];     // "3,4,5" ("" : none)
    bool bench;
    bool plain_wasm;       // wasm=plain: the loader rewrote the multiply-adds (src/web/wasm_madd.js)
    char error[300];       // what is wrong with the link ("" : nothing); the fields read before it stay
} Link;

// The names view= takes, in the window's ViewKind order.
extern const char *const link_view_names[];
extern const int link_view_count;

// Reads a query string ("?a=b&c=d", the leading '?' optional). Returns false with l->error
// naming the first bad parameter; the text quoted from the link is cut short and shows only
// printable ASCII, so a message can never carry markup or control characters.
bool link_parse(const char *query, Link *l);

#endif
