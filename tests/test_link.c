// test_link.c: reading the browser page's links (src/web/link.c), natively: every parameter,
// the issue's own example, and bad links, each with the message a user would read.
#include <string.h>

#include "../src/web/link.h"
#include "check.h"

static void test_example(void) {
    Link l;
    CHECK(link_parse("?lesson=scaling&stage=encoder.layers.0.self_attn.weights&view=attention&size=1280x800", &l),
          "%s", l.error);
    CHECK(!strcmp(l.lesson, "scaling"), "lesson %s", l.lesson);
    CHECK(!strcmp(l.stage, "encoder.layers.0.self_attn.weights"), "stage %s", l.stage);
    CHECK(l.view == 1 && !strcmp(link_view_names[l.view], "attention"), "view %d", l.view);
    CHECK(l.w == 1280 && l.h == 800, "size %dx%d", l.w, l.h);
    CHECK(!l.bench && !l.replay[0], "nothing else");
}

static void test_defaults_and_decoding(void) {
    Link l;
    CHECK(link_parse("", &l) && !l.lesson[0] && !l.stage[0] && l.view == -1 && l.w == 0, "an empty link");
    CHECK(link_parse("?", &l) && l.view == -1, "a bare ?");
    CHECK(link_parse("view=Decoding", &l) && l.view == 2, "views are named in any case (%d)", l.view);
    CHECK(link_parse("view=compare", &l) && l.view == 5, "compare is the sixth view (%d)", l.view);
    CHECK(link_parse("replay=0%20key%20Right%3B100+expect+encoder.pos", &l), "%s", l.error);
    CHECK(!strcmp(l.replay, "0 key Right\n100 expect encoder.pos"), "a replay's ; and %%20 and +: '%s'", l.replay);
    CHECK(link_parse("bench=1", &l) && l.bench, "bench=1");
    CHECK(link_parse("bench=0", &l) && !l.bench, "bench=0");
    CHECK(link_parse("wasm=plain", &l) && l.plain_wasm, "wasm=plain");
    CHECK(link_parse("wasm=madd&bench=1", &l) && !l.plain_wasm && l.bench, "wasm=madd");
    CHECK(link_parse("size=320x320", &l) && l.w == 320, "the smallest size");
    CHECK(link_parse("size=8192x8192", &l) && l.w == 8192, "the largest size");
}

static void bad(const char *query, const char *says) {
    Link l;
    const bool ok = link_parse(query, &l);
    CHECK(!ok, "'%s' is refused", query);
    CHECK(strstr(l.error, says) != NULL, "'%s': '%s' should say '%s'", query, l.error, says);
    CHECK(!strchr(l.error, '<') && !strchr(l.error, '>') && !strchr(l.error, '\n'), "'%s': no markup or new line: %s",
          query, l.error);
}

static void test_bad_links(void) {
    bad("lesson=../etc/passwd", "is not a lesson's name");
    bad("lesson=README", "is not a lesson's name");
    bad("lesson=", "is not a lesson's name");
    bad("stage=a%20b", "is not a stage id");
    bad("stage=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "stage='?script?alert(1)?/script?' is not a stage id");
    bad("view=sideways", "is not a view: stage, attention, decoding, positions, training or compare");
    bad("size=0x0", "is out of range");
    bad("size=100000x100000", "is out of range");
    bad("size=319x800", "is out of range");
    bad("size=1280", "is not WIDTHxHEIGHT");
    bad("size=1280x800px", "is not WIDTHxHEIGHT");
    bad("colour=red", "colour='red' is not a parameter");
    bad("wasm=fast", "wasm='fast' is not madd or plain");
    bad("%3Cb%3E=1", "link: ?b?='1' is not a parameter");
    bad("lesson=scaling&view=nope&size=0x0", "view='nope'");  // the first bad one is named
    char long_value[LINK_REPLAY_MAX + 20];
    memset(long_value, 'a', sizeof long_value);
    memcpy(long_value, "replay=", 7);
    long_value[sizeof long_value - 1] = '\0';
    bad(long_value, "is too long");
    Link l;  // a long quoted value is cut short
    CHECK(!link_parse("stage=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", &l) && strstr(l.error, "...") &&
              strlen(l.error) < 120,
          "cut: %s", l.error);
}

// A model folder on the same site (the example), its text or ids; nothing outside it.
static void test_model(void) {
    Link l;
    CHECK(link_parse("?model=models/gpt2/&input=The+capital+of+France+is", &l), "%s", l.error);
    CHECK(!strcmp(l.model, "models/gpt2") && !strcmp(l.input, "The capital of France is") && !l.lesson[0],
          "model '%s', input '%s'", l.model, l.input);
    CHECK(link_parse("model=a/tiny-gpt2&ids=5,17,3&stage=generator.logits", &l) && !strcmp(l.ids, "5,17,3") &&
              !strcmp(l.model, "a/tiny-gpt2"),
          "ids '%s': %s", l.ids, l.error);
    static const char *const outside[] = {"model=../secret", "model=/etc", "model=a/../../b", "model=https://x.org/m",
                                          "model=a/./b", "model="};
    for (int k = 0; k < 6; k++)
        CHECK(!link_parse(outside[k], &l) && strstr(l.error, "is not a folder of this site"), "%s: '%s'", outside[k],
              l.error);
    CHECK(!link_parse("ids=1,two", &l) && strstr(l.error, "ids='1,two' is not token ids separated by commas"), "%s",
          l.error);
}

int main(void) {
    test_example();
    test_model();
    test_defaults_and_decoding();
    test_bad_links();
    return check_finish("test_link");
}
