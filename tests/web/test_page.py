"""test_page.py: the browser page in Debian's headless Chromium, held to the native program.

  scripts/web.sh test    (builds the page and the native program, then runs this)

1. Links open places: for each place below (every view at least once) the page's title says
   "stepformer: ready STAGE", and its screenshot is the native `stepformer export` of the same
   lesson, stage, view and size. Pictures match when at most MAX_DIFFERENT of their pixels differ
   by more than PIXEL_TOLERANCE (a colour distance, 0-255: room for font antialiasing; on this
   machine the two are identical). The same screenshot against the export of another stage
   near it must not match, so the comparison can fail.
2. The numbers: each place's stage as the page computes it (web_stage_values) equals
   `stepformer lesson L --print STAGE --json` to 1e-5.
3. A replay link steps, switches views and lessons, saves a PNG (a download), presses Esc (the
   page stays), and its expect lines hold; a replay whose expect is wrong is reported as an error.
4. The browser's own key, mouse, wheel and touch events step, zoom and click as in the window; and
   replays of interactive features (pin and Compare, a pin kept across an edited input, a head
   switched off, the positions explorer, the lesson list) leave the page showing what the native window under Xvfb shows;
   the Training view trains live while the page keeps drawing.
5. Bad links give the error title, a message drawn on the canvas (not a blank page) and no
   markup from the link in the page.
6. The page asks for nothing outside 127.0.0.1; what it fetches before the first frame of a
   lesson is at most 4 MB, the site folder at most 20 MB. The time to the first frame is printed
   (the budget is 2 s), not asserted: the machines here are shared and their speed varies.

7. The program as browsers without relaxed SIMD get it (each multiply-add rewritten into a
   multiply then an add), in such a browser (played by this one) and with wasm=plain, draws and
   computes one place as the native program does, and says its GEMM is not fused; the default
   program says it is, where the CPU has FMA.
8. A link loaded the way a teacher checks one, by Chromium's one-shot --dump-dom and --screenshot
   on virtual time, reaches 'stepformer: ready' and draws the window (three links).
9. A model folder of GPT-2's layout (small random weights, made here) named by a model= link on
   the same site: drawn, its numbers the native program's, and a folder the site lacks refused.
10. The same folder from the disk, given to the page's file input (DOM.setFileInputFiles): drawn,
   its numbers the native program's; a folder without config.json, and weights that are not
   safetensors, refused with the error title.

Ends with 'N passed, N failed' and exits 1 on any failure.
"""
import argparse
import glob
import re
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, Server, click, key_event, wheel  # noqa: E402

PIXEL_TOLERANCE = 24     # per channel, 0-255
MAX_DIFFERENT = 0.001    # of the pixels
FIRST_LOAD_MAX = 4_000_000
SITE_MAX = 20 * 1000 * 1000  # the lessons of real families bring folders in the hub's layout (issue 43: at most 20 MB)

# lesson, stage, view, size: every view at least once, across the course.
PLACES = [
    ("scaling", "encoder.layers.0.self_attn.weights", "attention", (1280, 800)),
    ("forward-pass", "step.3.decoder.layers.1.cross_attn.weights", "attention", (1920, 1080)),
    ("greedy-decoding", "decoder.layers.0.self_attn.weights", "attention", (1280, 800)),  # the last round's
    ("greedy-decoding", "step.2.generator.probs", "decoding", (1280, 720)),
    ("positional-encoding", "table.pe", "positions", (1280, 720)),
    ("multi-head", "decoder.layers.0.self_attn.weights", "stage", (1280, 800)),
    ("mistake-no-causal-mask", "encoder.layers.0.self_attn.q", "stage", (1920, 1080)),
    ("training", "encoder.embed", "training", (1280, 800)),
    ("cross-attention", "decoder.layers.0.cross_attn.weights", "compare", (1280, 720)),
]

# For each place, another stage near it: its export must not match the place's screenshot.
OTHER_STAGE = {
    "scaling": "encoder.layers.0.self_attn.by_sqrt_dmodel.weights",
    "forward-pass": "step.3.decoder.layers.0.cross_attn.weights",
    "greedy-decoding": "step.3.generator.probs",  # and, for the second place, the stage before
    "positional-encoding": "table.pe8",
    "multi-head": "decoder.layers.0.self_attn.scores",
    "mistake-no-causal-mask": "encoder.layers.0.self_attn.k",
    "training": "encoder.pos",
    "cross-attention": "decoder.layers.1.cross_attn.weights",
}

BAD_LINKS = [
    ("lesson=no-such-lesson", "is not a lesson of the course"),
    ("lesson=scaling&stage=encoder.no.such.stage", "has no stage"),
    ("size=0x0", "size='0x0' is out of range"),
    ("size=100000x100000", "is out of range"),
    ("view=sideways", "is not a view"),
    ("lesson=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", "is not a lesson's name"),
    ("stage=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "is not a stage id"),
    ("colour=red", "is not a parameter"),
]

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", flush=True)


def different_fraction(a_path, b_path):
    """The share of pixels that differ by more than PIXEL_TOLERANCE (ImageMagick's fuzz: the
    distance between two colours, scaled to 0-255)."""
    r = subprocess.run(["compare", "-alpha", "off", "-metric", "AE", "-fuzz", f"{100 * PIXEL_TOLERANCE / 255:.2f}%",
                        a_path, b_path, "null:"], capture_output=True, text=True)
    if r.returncode > 1:  # 2: the pictures could not be compared (another size)
        return 1.0
    w, h = (int(v) for v in subprocess.run(["identify", "-format", "%w %h", a_path], capture_output=True,
                                           text=True, check=True).stdout.split())
    return float(r.stderr.split()[0]) / (w * h)


def colours(path):
    out = subprocess.run(["convert", path, "-alpha", "off", "-format", "%k", "info:"], capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip() or 0)


def export(stepformer, lesson, view, size, stages, out, extra=()):
    """The native export of these stages; returns {stage id: path}."""
    subprocess.run([stepformer, "export", f"lessons/{lesson}.md", "--out", out, "--view", view,
                    "--size", f"{size[0]}x{size[1]}", "--stages", ",".join(stages), *extra], check=True,
                   capture_output=True)
    return {f[5:-4]: os.path.join(out, f) for f in os.listdir(out) if f.endswith(".png")}


def native_values(stepformer, lesson, stage):
    r = subprocess.run([stepformer, "lesson", f"lessons/{lesson}.md", "--print", stage, "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def page_values(b, lesson, stage, timeout=120):
    """The stage's numbers as the page computes them; a model folder's weights are read by range
    first, so the call is repeated while it says it is pending."""
    end = time.time() + timeout
    while True:
        text = b.eval("Module.ccall('web_stage_values', 'string', ['string', 'string'], [%s, %s])"
                      % (json.dumps(lesson), json.dumps(stage)))
        got = json.loads(text or "{}")
        if not got.get("pending"):
            return got
        if time.time() > end:
            return {"error": f"still reading after {timeout} s"}
        b.pump(0.05)


def same_values(page, native, tol=1e-5):
    if "error" in page or page.get("shape") != native.get("shape"):
        return False, page.get("error", f"shape {page.get('shape')} against {native.get('shape')}")
    worst = 0.0
    for x, y in zip(page["values"], native["values"]):
        if x is None or y is None:
            if x != y:
                return False, "a masked cell differs"
            continue
        worst = max(worst, abs(x - y))
    return worst <= tol, f"largest difference {worst:.3g}"


def test_places(b, srv, stepformer, tmp):
    for lesson, stage, view, size in PLACES:
        b.size(*size)
        link = f"index.html?lesson={lesson}&stage={stage}&view={view}&size={size[0]}x{size[1]}"
        t0 = time.time()
        b.open(srv.base + link)
        title = b.wait_title(["stepformer: ready", "stepformer: error"])
        took = time.time() - t0
        check(title == f"stepformer: ready {stage}", f"{link}: title '{title}'")
        if not title.startswith("stepformer: ready"):
            continue
        shot = os.path.join(tmp, f"page-{lesson}.png")
        b.screenshot(shot, *size)
        other = OTHER_STAGE[lesson]
        exported = export(stepformer, lesson, view, size, [stage, other], os.path.join(tmp, f"export-{lesson}-{view}"))
        def named(asked):  # the export names a stage by its full id (step.K.ID for a round's)
            return next((p for sid, p in exported.items() if sid == asked or sid.endswith("." + asked)), None)
        if not named(stage) or not named(other):
            check(False, f"{lesson}: the export has no {stage} or {other}")
            continue
        diff = different_fraction(shot, named(stage))
        check(diff <= MAX_DIFFERENT, f"{link}: {100 * diff:.3f}% of pixels differ from the native export")
        wrong = different_fraction(shot, named(other))
        check(wrong > MAX_DIFFERENT, f"{link}: the export of {other} matched too ({100 * wrong:.3f}%)")
        ok, why = same_values(page_values(b, lesson, stage), native_values(stepformer, lesson, stage))
        check(ok, f"{lesson} {stage}: the page's numbers against the native ones: {why}")
        print(f"place {link}: ready in {took:.2f} s, {100 * diff:.3f}% of pixels differ "
              f"(another stage: {100 * wrong:.1f}%), numbers: {why}", flush=True)


def course_lessons():
    """The course's lessons, as `lesson=` names them: the lessons/ files that are lessons."""
    return sorted(f[:-3] for f in os.listdir("lessons") if f.endswith(".md") and not f[0].isupper())


def test_every_lesson(b, srv, stepformer, tmp):
    """Every lesson of the course opens in the page at its last stage, drawn as the export draws it."""
    b.size(1280, 720)
    opened = 0
    for lesson in course_lessons():
        b.open(srv.base + f"index.html?lesson={lesson}&size=1280x720")
        title = b.wait_title(["stepformer: ready", "stepformer: error"])
        check(title.startswith("stepformer: ready"), f"lesson {lesson}: '{title}'")
        if not title.startswith("stepformer: ready"):
            continue
        key_event(b, "End", "End", 35)
        b.pump(0.3)
        shot = os.path.join(tmp, f"lesson-{lesson}.png")
        b.screenshot(shot, 1280, 720)
        out = os.path.join(tmp, f"export-last-{lesson}")
        ids = subprocess.run([stepformer, "lesson", f"lessons/{lesson}.md", "--headless"], capture_output=True,
                             text=True).stdout.split("\n")
        last = [line.split()[1] for line in ids if line[:6].strip().isdigit()][-1]
        exported = export(stepformer, lesson, "stage", (1280, 720), [last], out)  # End keeps the Stage view
        diff = different_fraction(shot, next(iter(exported.values())))
        check(diff <= MAX_DIFFERENT, f"lesson {lesson} at its last stage: {100 * diff:.3f}% of pixels differ")
        opened += 1
    print(f"every lesson: {opened} of {len(course_lessons())} open in the page and match the export at their last stage",
          flush=True)


def replay_link(lines):
    return "index.html?lesson=forward-pass&size=1280x720&replay=" + urllib.parse.quote(";".join(lines))


def test_replay(b, srv, tmp):
    b.size(1280, 720)
    downloads = os.path.join(tmp, "downloads")
    os.makedirs(downloads)
    b.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=downloads)
    good = ["0 key Right", "150 key Right", "300 expect encoder.layers.0.self_attn.q", "400 key Tab",
            "500 key End", "700 key Home", "800 expect encoder.embed", "900 text n", "2500 expect encoder.embed",
            "2550 key Right", "2600 key Tab", "2700 key Right", "2800 expect encoder.pos", "2900 text p", "4450 key Right",
            "4500 key Right",
            "4600 expect encoder.pos", "4700 text s", "4800 key Escape", "4900 expect encoder.pos", "5000 quit"]
    b.open(srv.base + replay_link(good))
    title = b.wait_title(["stepformer: replay passed", "stepformer: error"], timeout=30)
    check(title == "stepformer: replay passed", f"the replay link: '{title}'")
    b.pump(1.0)
    pngs = [f for f in os.listdir(downloads) if f.endswith(".png")]
    check(len(pngs) == 1, f"S offers the window as one PNG download: {pngs}")
    if pngs:
        size = subprocess.run(["identify", "-format", "%w %h", os.path.join(downloads, pngs[0])], capture_output=True,
                              text=True).stdout
        check(size == "1280 720", f"the downloaded PNG is {size}")
    bad = ["0 key Right", "300 expect encoder.layers.9.nothing", "400 quit"]
    b.open(srv.base + replay_link(bad))
    title = b.wait_title(["stepformer: replay passed", "stepformer: error"], timeout=30)
    check(title.startswith("stepformer: error replay: expected stage encoder.layers.9.nothing"),
          f"a replay with a wrong expect: '{title}'")
    print(f"replay links: checked", flush=True)


def test_real_input(b, srv, stepformer, tmp):
    """The browser's own key, mouse and wheel events (not a replay): each leaves the page showing
    what the native export shows for the stage it should have reached."""
    b.size(1280, 720)
    b.open(srv.base + "index.html?lesson=self-attention&size=1280x720")
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title == "stepformer: ready encoder.embed", f"self-attention opens: '{title}'")
    exported = export(stepformer, "self-attention", "stage", (1280, 720), ["encoder.pos", "encoder.bare.x"],
                      os.path.join(tmp, "export-input"))

    def shows(stage, what):
        b.pump(0.3)
        shot = os.path.join(tmp, "input.png")
        b.screenshot(shot, 1280, 720)
        diff = different_fraction(shot, exported[stage])
        check(diff <= MAX_DIFFERENT, f"{what}: the page is not at {stage} ({100 * diff:.2f}% of pixels differ)")
        return diff

    key_event(b, "ArrowRight", "ArrowRight", 39)
    key_event(b, "ArrowRight", "ArrowRight", 39)
    shows("encoder.bare.x", "two Right keys")
    key_event(b, "ArrowLeft", "ArrowLeft", 37)
    shows("encoder.pos", "a Left key")
    key_event(b, "Home", "Home", 36)
    key_event(b, "ArrowRight", "ArrowRight", 39)
    wheel(b, 500, 300, -120)  # zoom the large heatmap in: the picture must change
    b.pump(0.3)
    shot = os.path.join(tmp, "wheel.png")
    b.screenshot(shot, 1280, 720)
    check(different_fraction(shot, exported["encoder.pos"]) > MAX_DIFFERENT, "the wheel zooms the heatmap")
    key_event(b, "0", "Digit0", 48, "0")  # all heads, and the zoom reset
    shows("encoder.pos", "0 resets the zoom")
    click(b, 1200, 700)  # the timeline (the window's foot), near its right end: a later stage
    b.pump(0.3)
    b.screenshot(shot, 1280, 720)
    check(different_fraction(shot, exported["encoder.pos"]) > MAX_DIFFERENT, "a click on the timeline moves the cursor")
    # E: a new sentence typed, Enter runs it; the page then shows what export shows for that input.
    b.open(srv.base + "index.html?lesson=forward-pass&stage=encoder.pos&view=stage&size=1280x720")
    b.wait_title(["stepformer: ready", "stepformer: error"])
    typed = "1 May 2020"
    edited = export(stepformer, "forward-pass", "stage", (1280, 720), ["encoder.pos"], os.path.join(tmp, "export-edit"),
                    ["--input", typed])
    key_event(b, "e", "KeyE", 69, "e")
    for ch in typed:
        key_event(b, ch, "Space" if ch == " " else "Key" + ch.upper() if ch.isalpha() else "Digit" + ch, ord(ch.upper()), ch)
    key_event(b, "Enter", "Enter", 13, "\r")
    b.pump(0.5)
    b.screenshot(shot, 1280, 720)
    diff = different_fraction(shot, edited["encoder.pos"])
    check(diff <= MAX_DIFFERENT, f"E, '{typed}', Enter: {100 * diff:.2f}% of pixels differ from export --input")
    # A tap (a tablet's finger) on the timeline's right end: the last stage, as the export draws it.
    last = "encoder.layers.0.self_attn.by_sqrt_dmodel.weights"
    tapped = export(stepformer, "scaling", "stage", (1280, 720), [last], os.path.join(tmp, "export-tap"))
    b.send("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=1)
    b.open(srv.base + "index.html?lesson=scaling&size=1280x720")
    b.wait_title(["stepformer: ready", "stepformer: error"])
    b.send("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": 1200, "y": 700}])
    b.send("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
    b.pump(0.5)
    b.screenshot(shot, 1280, 720)
    diff = different_fraction(shot, tapped[last])
    check(diff <= MAX_DIFFERENT, f"a tap on the timeline: {100 * diff:.2f}% of pixels differ from the last stage's export")
    b.send("Emulation.setTouchEmulationEnabled", enabled=False)
    print("real key, mouse, wheel and touch events, and editing the input: checked", flush=True)


# Interactive features, played by one replay in the native window (under Xvfb) and in the page;
# the page's last picture must be the window's. Each ends with the pointer moved to the corner
# of the top bar, where nothing hovers.
PARITY = [
    ("pin, then Compare", "forward-pass",  # q pinned, k on screen: the same shape, so a difference
     ["0 key Right", "100 key Right", "200 text c", "300 key Right", "400 key Tab", "500 key Tab", "600 key Tab",
      "700 key Tab", "800 key Tab"]),
    ("pin, edit the input, then Compare", "attention-is-all-you-need-pytorch",  # q on 'hello' pinned, then
     # the input edited to 'world': each map labelled with its own input's letters
     ["0 key Right", "100 key Right", "200 key Right", "300 text c", "400 text e"]
     + [f"{500 + 50 * i} key BackSpace" for i in range(5)]
     + ["800 text world", "900 key Return"] + [f"{1500 + 100 * i} key Tab" for i in range(5)]),
    ("a head switched off", "multi-head",  # head 2 of layer 0's self-attention, the pass re-run
     ["0 key Tab"] + [f"{100 + 50 * i} key Right" for i in range(11)] + ["800 text 2", "900 text x", "1500 key Right"]),
    ("the positions explorer", "positional-encoding",
     ["0 text 3", "0 key Tab", "100 key Tab", "200 key Tab", "300 text ]", "400 key Down", "500 text ]", "600 text ]",
      "700 key Down", "800 text [", "900 text h"]),
    ("the lesson list", "masks", ["0 text l", "100 key Down", "200 key Down", "300 key Up", "400 text +"]),
    # The backward pass, built in the page as natively. (G is not replayed here: its differences are
    # taken on the float32 pass, whose last bits differ between AVX2 and WebAssembly's SIMD.)
    ("the backward pass and its Attention view", "backprop",
     ["0 key End", "100 key Right", "150 key Right"] + [f"{200 + 50 * i} key Right" for i in range(15)] + ["1000 key Tab"]),
    ("the Patch view, a head patched alone", "which-head",
     ["0 key Tab", "100 key Tab", "200 key Tab", "300 key Tab", "400 key Tab", "500 key Tab", "1500 click 835 258"]),
]


def native_replay(stepformer, lesson, lines, size, out):
    """The native window under a fresh Xvfb, playing `lines`, then a shot into out."""
    replay = out + ".replay"
    last = max(int(line.split()[0]) for line in lines)
    with open(replay, "w") as f:
        f.write("\n".join(lines + [f"{last + 300} move 2 2", f"{last + 600} shot {out}", f"{last + 700} quit"]) + "\n")
    read_fd, write_fd = os.pipe()  # Xvfb picks a free display and writes its number here
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "2560x1440x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as f:
            display = ":" + f.readline().strip()
        env = dict(os.environ, DISPLAY=display)
        r = subprocess.run([stepformer, "lesson", f"lessons/{lesson}.md", "--size", f"{size[0]}x{size[1]}",
                            "--replay", replay], env=env, capture_output=True, text=True, timeout=120)
        return r.returncode == 0 and os.path.exists(out), r.stderr.strip()[-300:]
    finally:
        xvfb.kill()
        xvfb.wait()


def test_window_parity(b, srv, stepformer, tmp):
    size = (1280, 720)
    b.size(*size)
    for what, lesson, lines in PARITY:
        native = os.path.join(tmp, f"window-{lesson}.png")
        ok, err = native_replay(stepformer, lesson, lines, size, native)
        check(ok, f"{what}: the native window's replay: {err}")
        if not ok:
            continue
        b.open(srv.base + f"index.html?lesson={lesson}&size={size[0]}x{size[1]}&replay="
               + urllib.parse.quote(";".join(lines)))
        title = b.wait_title(["stepformer: replay passed", "stepformer: error"], timeout=30)
        check(title == "stepformer: replay passed", f"{what}: the page's replay: '{title}'")
        b.pump(0.5)
        page = os.path.join(tmp, f"page-replay-{lesson}.png")
        b.screenshot(page, *size)
        diff = different_fraction(page, native)
        check(diff <= MAX_DIFFERENT, f"{what}: {100 * diff:.3f}% of pixels differ from the native window")
        print(f"{what}: the page against the native window after the same replay: {100 * diff:.3f}% of pixels differ",
              flush=True)


def test_training(b, srv, tmp):
    """The Training view trains live: the picture moves on while it trains (three screenshots 2 s
    apart differ), so the page draws between training steps. Its frame rate is printed, not
    asserted: the machines here are shared and their speed varies."""
    b.size(1280, 720)
    b.open(srv.base + "index.html?lesson=training&view=training&size=1280x720")
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: ready"), f"the training lesson: '{title}'")
    b.eval("window.gaps = []; (function () { let last = performance.now(); function f(t) { window.gaps.push(t - last);"
           " last = t; requestAnimationFrame(f); } requestAnimationFrame(f); })(); 1")
    key_event(b, " ", "Space", 32, " ")  # start
    shots = []
    for k in range(3):
        b.pump(2.0)
        shots.append(os.path.join(tmp, f"training-{k}.png"))
        b.screenshot(shots[-1], 1280, 720)
    gaps = b.eval("window.gaps") or [1e9]
    key_event(b, " ", "Space", 32, " ")  # stop
    check(different_fraction(shots[0], shots[1]) > MAX_DIFFERENT and different_fraction(shots[1], shots[2]) > MAX_DIFFERENT,
          "the training view moves on while it trains")
    print(f"training in the page: {len(gaps)} frames in 6 s, the longest gap {max(gaps):.0f} ms", flush=True)


def test_high_density(b, srv, stepformer, tmp):
    """A screen of two device pixels a page pixel (a Mac's, a Chromebook's): the picture fills the
    canvas. Halved, it is the export of the same place (the browser's scaling blurs its edges: a
    colour distance of up to 30% is allowed there, on at most 0.5% of pixels)."""
    stage = "encoder.layers.0.self_attn.weights"
    b.send("Emulation.setDeviceMetricsOverride", width=1280, height=720, deviceScaleFactor=2, mobile=False)
    b.open(srv.base + f"index.html?lesson=scaling&stage={stage}&view=attention&size=1280x720")
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title == f"stepformer: ready {stage}", f"at devicePixelRatio 2: '{title}'")
    b.pump(0.3)
    big, small = os.path.join(tmp, "dpr2.png"), os.path.join(tmp, "dpr2-halved.png")
    with open(big, "wb") as f:
        f.write(base64.b64decode(b.send("Page.captureScreenshot", format="png")["data"]))
    subprocess.run(["convert", big, "-filter", "box", "-resize", "1280x720", small], check=True)
    exported = export(stepformer, "scaling", "attention", (1280, 720), [stage], os.path.join(tmp, "export-dpr"))
    r = subprocess.run(["compare", "-alpha", "off", "-metric", "AE", "-fuzz", "30%", small, exported[stage], "null:"],
                       capture_output=True, text=True)
    differ = float(r.stderr.split()[0]) / (1280 * 720) if r.returncode <= 1 else 1.0
    check(differ <= 0.005, f"at devicePixelRatio 2, halved: {100 * differ:.2f}% of pixels differ from the export")
    b.size(1280, 720)  # back to one device pixel a page pixel
    print(f"devicePixelRatio 2: {100 * differ:.3f}% of pixels differ from the export (halved)", flush=True)


# A teacher checks a link the simplest way: one command, Chromium's own one-shot load on virtual
# time (no DevTools, no foreground tab), as --dump-dom and as --screenshot.
ONE_SHOT_LINKS = ["lesson=backprop&view=stage", "lesson=text-model&view=decoding", "lesson=which-head&view=patch"]


def test_one_shot(srv, tmp):
    for i, query in enumerate(ONE_SHOT_LINKS):
        url = srv.base + "index.html?" + query
        base = ["/usr/bin/chromium-headless-shell", "--headless=new", "--no-sandbox", "--disable-gpu",
                "--virtual-time-budget=30000", f"--user-data-dir={tmp}/one-shot-{i}"]
        dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=180).stdout
        m = re.search(r"<title>([^<]*)</title>", dom)
        title = m.group(1) if m else "(no title)"
        check(title.startswith("stepformer: ready"), f"--dump-dom ?{query}: the page is ready, its title '{title}'")
        shot = os.path.join(tmp, f"one-shot-{i}.png")
        subprocess.run(base + ["--window-size=1280,720", f"--screenshot={shot}", url], capture_output=True, timeout=180)
        check(os.path.exists(shot) and colours(shot) > 200, f"--screenshot ?{query}: the window drawn, not the loading bar")
    print(f"one-shot loads: {len(ONE_SHOT_LINKS)} links checked", flush=True)


def test_bad_links(b, srv, tmp):
    b.size(1280, 720)
    for i, (query, says) in enumerate(BAD_LINKS):
        b.open(srv.base + "index.html?" + query)
        title = b.wait_title(["stepformer: error", "stepformer: ready"])
        check(title.startswith("stepformer: error") and says in title, f"?{query}: title '{title}'")
        check("<" not in title and ">" not in title, f"?{query}: markup in the title")
        injected = b.eval("document.querySelectorAll('img, iframe, script:not([src]):not(:first-of-type)').length"
                          " + (document.body.innerHTML.includes('alert(1)') ? 1 : 0)")
        check(injected == 0, f"?{query}: the page holds markup from the link")
        shot = os.path.join(tmp, f"bad-{i}.png")
        b.pump(0.2)
        b.screenshot(shot, 1280, 720)
        check(colours(shot) > 20, f"?{query}: a blank page")
    print(f"bad links: {len(BAD_LINKS)} checked", flush=True)


def test_budget(b, srv, site):
    sizes = {}
    for root, _, files in os.walk(site):
        for f in files:
            p = os.path.join(root, f)
            sizes["/" + os.path.relpath(p, site)] = os.path.getsize(p)
    total = sum(sizes.values())
    check(total <= SITE_MAX, f"the site folder holds {total} bytes")
    b.size(1280, 800)
    b.requests.clear()
    t0 = time.time()
    b.open(srv.base + "index.html?lesson=greedy-decoding")
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    took = time.time() - t0
    fetched = sum(sizes.get(urllib.parse.urlparse(u).path, 0) for u in b.requests)
    check(title.startswith("stepformer: ready"), f"the default place: '{title}'")
    check(fetched <= FIRST_LOAD_MAX, f"{fetched} bytes fetched before the first frame")
    print(f"budget: site {total / 1e6:.2f} MB, first load {fetched / 1e6:.2f} MB, first frame {took:.2f} s", flush=True)


def error_page(b, url, wants, tmp, name):
    """Opens url: the title must be the error title holding every text of wants, and the canvas
    must show the message (not a blank page)."""
    b.size(1280, 720)
    b.open(url)
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: error") and all(w in title for w in wants), f"{name}: '{title}'")
    shot = os.path.join(tmp, name.replace(" ", "-") + ".png")
    b.screenshot(shot, 1280, 720)
    check(colours(shot) > 20, f"{name}: a blank page")


def test_missing_model(b, site, tmp):
    """A site without a lesson's model: the page says so, with the file, and does not hang."""
    broken = os.path.join(tmp, "broken-site")
    shutil.copytree(site, broken)
    os.remove(os.path.join(broken, "assets", "models", "mistake-no-positions.safetensors"))
    srv = Server(broken)
    try:
        error_page(b, srv.base + "index.html?lesson=mistake-no-positions&size=1280x720",
                   ["mistake-no-positions.safetensors could not be fetched", "404"], tmp, "a missing model")
    finally:
        srv.close()
    print("a missing model: checked", flush=True)


def used_characters():
    """Every non-ASCII character of the lessons and of the C's string literals (escapes decoded)."""
    chars = set()
    for path in glob.glob("lessons/*.md"):
        chars |= {c for c in open(path, encoding="utf-8").read() if ord(c) > 127}
    for path in glob.glob("src/**/*.[ch]", recursive=True):
        for lit in re.findall(r'"((?:[^"\\\n]|\\.)*)"', open(path, encoding="utf-8").read()):
            raw = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: "%" + m.group(1), lit)
            text = urllib.parse.unquote(raw, errors="ignore")
            text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
            chars |= {c for c in text if ord(c) > 127}
    return chars


def test_fonts(site):
    """The page's cut fonts keep every character the window and the course draw that DejaVu has."""
    from fontTools.ttLib import TTFont  # Debian's python3-fonttools, which the build uses
    pack = os.path.join(os.path.dirname(site), "pack", "fonts")
    chars = used_characters()
    check(len(chars) > 10, f"the characters the window draws were found ({len(chars)})")
    for name in ("DejaVuSans", "DejaVuSans-Bold", "DejaVuSans-Oblique", "DejaVuSansMono"):
        full = TTFont(f"/usr/share/fonts/truetype/dejavu/{name}.ttf").getBestCmap()
        cut = TTFont(os.path.join(pack, name + ".ttf")).getBestCmap()
        lost = sorted(c for c in chars if ord(c) in full and ord(c) not in cut)
        check(not lost, f"{name}: the page's font lost {''.join(lost)}")
    print(f"fonts: the {len(chars)} non-ASCII characters of the lessons and the window are kept", flush=True)


def test_requests(b):
    outside = [u for u in b.requests
               if not (urllib.parse.urlparse(u).hostname == "127.0.0.1" or u.startswith(("data:", "blob:")))]
    check(not outside, f"requests outside 127.0.0.1: {outside[:5]}")
    print(f"requests: {len(b.requests)}, all to 127.0.0.1", flush=True)


# A browser without relaxed SIMD, played by this one: WebAssembly.validate refuses a module with
# relaxed_madd's opcode (the page asks it of its one-instruction probe), and instantiating a
# program that still has one fails, as an older engine's would.
OLD_BROWSER = """(() => {
  const madd = (b) => { b = new Uint8Array(b);
    for (let i = 0; i + 2 < b.length; i++) if (b[i] === 0xfd && b[i + 1] === 0x85 && b[i + 2] === 2) return true;
    return false; };
  const validate = WebAssembly.validate, instantiate = WebAssembly.instantiate;
  WebAssembly.validate = (b) => !madd(b) && validate(b);
  WebAssembly.instantiate = (b, imports) => !(b instanceof WebAssembly.Module) && wasmMadd.plain(b).count > 0
    ? Promise.reject(new WebAssembly.CompileError('relaxed SIMD is not in this browser')) : instantiate(b, imports);
})();"""


def test_plain_program(b, srv, stepformer, tmp):
    """The program whose multiply-adds the loader rewrote (src/web/wasm_madd.js): in a browser
    without relaxed SIMD (played by this one: OLD_BROWSER) and with wasm=plain, it draws and
    computes as the native program does and says its GEMM is not fused; the default program says
    it is, where the CPU has FMA. The page prints which ran."""
    fma = " fma " in open("/proc/cpuinfo").read()
    lesson, stage, view, size = PLACES[1]
    cases = (("&wasm=plain", "simd128", False), ("", "simd128", True), ("", "simd128 fma" if fma else None, False))
    for query, want, old in cases:
        b.console.clear()
        b.size(*size)
        script = b.send("Page.addScriptToEvaluateOnNewDocument", source=OLD_BROWSER)["identifier"] if old else None
        link = f"index.html?lesson={lesson}&stage={stage}&view={view}&size={size[0]}x{size[1]}{query}"
        what = "in a browser without relaxed SIMD" if old else "with wasm=plain" if query else "by default"
        try:
            b.open(srv.base + link)
            title = b.wait_title(["stepformer: ready", "stepformer: error"])
        finally:
            if script:
                b.send("Page.removeScriptToEvaluateOnNewDocument", identifier=script)
        check(title == f"stepformer: ready {stage}", f"{link} {what}: title '{title}'")
        b.pump(0.2)
        said = [line.split(": ")[-1] for line in b.console if line.startswith("stepformer: the GEMM's kernel: ")]
        check(said and (want is None or said[0] == want), f"{link} {what}: the page's GEMM was {said}, not {want}")
        shot = os.path.join(tmp, "page-plain.png")
        b.screenshot(shot, *size)
        exported = export(stepformer, lesson, view, size, [stage], os.path.join(tmp, "export-plain"))
        diff = different_fraction(shot, next(iter(exported.values())))
        check(diff <= MAX_DIFFERENT, f"{link} {what}: {100 * diff:.3f}% of pixels differ from the native export")
        ok, why = same_values(page_values(b, lesson, stage), native_values(stepformer, lesson, stage))
        check(ok, f"{link} {what}: the page's numbers against the native ones: {why}")
        print(f"the program {what}: GEMM {said}, {100 * diff:.3f}% of pixels differ from the native export, "
              f"numbers: {why}", flush=True)


def test_model_link(b, stepformer, site, tmp):
    """A model folder on the same site, named by a link (model=, ids=): a folder of GPT-2's layout
    made here with small random weights and no tokenizer. The page fetches it, draws, and its
    stage's numbers are `stepformer lesson lessons/gpt2.md --model DIR --src-ids ... --print` to
    1e-5. A folder the site lacks gives the error title and a drawn message."""
    hosted = os.path.join(tmp, "model-site")
    shutil.copytree(site, hosted)
    folder = os.path.join(hosted, "models", "tiny-gpt2")
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    subprocess.run([stepformer, "init", "--program", "lessons/gpt2.md", "--config",
                    "n_layer=2 n_head=2 n_embd=32 n_inner=64 n_positions=64 vocab_size=100", "--seed", "7",
                    "--out", folder + "/"], check=True, capture_output=True)
    ids, stage = "5,17,3,42", "step.0.decoder.layers.1.self_attn.weights"
    srv = Server(hosted)
    try:
        b.size(1280, 720)
        b.open(srv.base + f"index.html?model=models/tiny-gpt2/&ids={ids}&stage={stage}&size=1280x720")
        title = b.wait_title(["stepformer: ready", "stepformer: error"])
        check(title.startswith("stepformer: ready"), f"a model= link: '{title}'")
        shot = os.path.join(tmp, "model-link.png")
        b.screenshot(shot, 1280, 720)
        check(colours(shot) > 20, "a model= link: a blank page")
        native = subprocess.run([stepformer, "lesson", "lessons/gpt2.md", "--model", folder, "--src-ids", ids,
                                 "--print", stage, "--json"], capture_output=True, text=True, check=True)
        ok, why = same_values(page_values(b, f"model:models/tiny-gpt2|{ids}", stage), json.loads(native.stdout))
        check(ok, f"a model= link: {stage} against the native program: {why}")
        error_page(b, srv.base + "index.html?model=models/no-such-model/&ids=1,2&size=1280x720",
                   ["models/no-such-model/config.json could not be fetched", "404"], tmp, "a missing model folder")
    finally:
        srv.close()
    # The same from a server that honours ranges: the weights come by range, never whole.
    srv = Server(hosted, ranges=True)
    try:
        b.open(srv.base + f"index.html?model=models/tiny-gpt2/&ids={ids}&stage={stage}&size=1280x720")
        title = b.wait_title(["stepformer: ready", "stepformer: error"])
        check(title.startswith("stepformer: ready"), f"a model= link, ranges: '{title}'")
        ok, why = same_values(page_values(b, f"model:models/tiny-gpt2|{ids}", stage), json.loads(native.stdout))
        check(ok, f"a model= link, ranges: {stage} against the native program: {why}")
        size = os.path.getsize(os.path.join(folder, "model.safetensors"))
        weights = [(status, n) for path, status, n in srv.served if path.endswith("/model.safetensors")]
        check(weights and all(status == 206 and n < size for status, n in weights),
              f"a model= link, ranges: model.safetensors ({size} bytes) was answered {weights}")
        # A folder of two shards (the PyTorch-made BF16 LLaMA of the native tests): its index, then
        # each shard's header, then the tensors.
        shards = os.path.join(hosted, "models", "tiny-llama-shards")
        os.makedirs(shards)
        fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hub", "llama-gqa-bf16")
        for f in os.listdir(fixture):
            if f == "config.json" or f.startswith("model"):
                shutil.copy(os.path.join(fixture, f), shards)
        mlp, llama_ids = "step.0.decoder.layers.0.mlp.down", "1,17,33,49"
        b.open(srv.base + f"index.html?model=models/tiny-llama-shards/&ids={llama_ids}&stage={mlp}&size=1280x720")
        title = b.wait_title(["stepformer: ready", "stepformer: error"])
        check(title.startswith("stepformer: ready"), f"a model= link to a folder of shards: '{title}'")
        native_mlp = subprocess.run([stepformer, "lesson", "lessons/llama.md", "--model", shards, "--src-ids", llama_ids,
                                     "--print", mlp, "--json"], capture_output=True, text=True, check=True)
        ok, why = same_values(page_values(b, f"model:models/tiny-llama-shards|{llama_ids}", mlp), json.loads(native_mlp.stdout))
        check(ok, f"a model= link to a folder of shards: {mlp} against the native program: {why}")
        shard_answers = [(p, st) for p, st, _ in srv.served if "tiny-llama-shards/model-0000" in p]
        check(shard_answers and all(st == 206 for _, st in shard_answers), f"the shards were answered {shard_answers}")
        # A model over the page's memory: refused by the estimate off its header, in plain words,
        # before anything is read (the file holds its header alone).
        huge = os.path.join(hosted, "models", "huge")
        os.makedirs(huge)
        shutil.copy(os.path.join(folder, "config.json"), huge)
        header = json.dumps({"wte.weight": {"dtype": "F32", "shape": [1000000, 1024],
                                            "data_offsets": [0, 4096000000]}}).encode()
        with open(os.path.join(huge, "model.safetensors"), "wb") as f:
            f.write(len(header).to_bytes(8, "little") + header)
        error_page(b, srv.base + "index.html?model=models/huge/&ids=1,2&size=1280x720",
                   ["the weights need about 4.1 GB", "free in this page"], tmp, "a model over the page's memory")
        print(f"a model= link from a server with ranges: {len(weights)} ranges of model.safetensors, "
              f"{sum(n for _, n in weights)} bytes of {size} (read twice: the window, then web_stage_values)", flush=True)
    finally:
        srv.close()
    print("a model= link: checked", flush=True)


def test_file_picker(b, srv, stepformer, tmp):
    """A model folder from the user's disk: a folder of GPT-2's layout (small random weights, no
    tokenizer, made here, outside the site) given to the page's file input opens in the window,
    and its stage's numbers are the native program's to 1e-5; so does a tiny LLaMA stored as BF16. A folder without config.json, and
    one whose model.safetensors is not safetensors, each give the error title and a message."""
    folder = os.path.join(tmp, "disk", "tiny-gpt2")
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    subprocess.run([stepformer, "init", "--program", "lessons/gpt2.md", "--config",
                    "n_layer=2 n_head=2 n_embd=32 n_inner=64 n_positions=64 vocab_size=100", "--seed", "8",
                    "--out", folder + "/"], check=True, capture_output=True)
    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
    stage = "step.0.decoder.layers.0.self_attn.weights"
    b.size(1280, 720)
    b.open(srv.base + "index.html?size=1280x720")
    b.wait_title(["stepformer: ready", "stepformer: error"])
    b.give_files(files)
    b.wait_title(["stepformer: opening"])
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: ready"), f"a folder from the disk: '{title}'")
    shot = os.path.join(tmp, "picked.png")
    b.screenshot(shot, 1280, 720)
    check(colours(shot) > 20, "a folder from the disk: a blank page")
    native = subprocess.run([stepformer, "lesson", "lessons/gpt2.md", "--model", folder, "--src-ids", "1,2,3,4",
                             "--print", stage, "--json"], capture_output=True, text=True, check=True)
    ok, why = same_values(page_values(b, "model:/user/1/model|1,2,3,4", stage), json.loads(native.stdout))
    check(ok, f"a folder from the disk: {stage} against the native program: {why}")
    # A BF16 folder (a tiny LLaMA): its matrices held 2 bytes a number in the page as natively.
    bf16 = os.path.join(tmp, "disk", "tiny-llama-bf16")
    subprocess.run([stepformer, "init", "--program", "lessons/llama.md", "--config",
                    "vocab_size=100 hidden_size=32 intermediate_size=64 num_hidden_layers=2 num_attention_heads=4 "
                    "num_key_value_heads=2 max_position_embeddings=64", "--seed", "9", "--dtype", "bf16", "--out", bf16 + "/"],
                   check=True, capture_output=True)
    b.give_files([os.path.join(bf16, f) for f in sorted(os.listdir(bf16))])
    b.wait_title(["stepformer: opening"])
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: ready"), f"a BF16 folder from the disk: '{title}'")
    mlp = "step.0.decoder.layers.1.mlp.down"
    native = subprocess.run([stepformer, "lesson", "lessons/llama.md", "--model", bf16, "--src-ids", "1,2,3,4",
                             "--print", mlp, "--json"], capture_output=True, text=True, check=True)
    ok, why = same_values(page_values(b, "model:/user/2/model|1,2,3,4", mlp), json.loads(native.stdout))
    check(ok, f"a BF16 folder from the disk: {mlp} against the native program: {why}")
    # A weights file removed while the page reads it: the reads of its tensors are held (Blob
    # streams past 16 KB wait) until the file is gone, then go on; the page says which file.
    gone = os.path.join(tmp, "disk", "gone")
    shutil.copytree(folder, gone)
    b.eval("""(function () {
        const stream = Blob.prototype.stream;
        window.heldRelease = null;
        const held = new Promise(function (ok) { window.heldRelease = ok; });
        Blob.prototype.stream = function () {
          if (this.size <= 16384) return stream.call(this);
          const blob = this;
          let reader = null;
          return new ReadableStream({pull: function (c) {
            return held.then(function () {
              reader = reader || stream.call(blob).getReader();
              return reader.read();
            }).then(function (got) { if (got.done) c.close(); else c.enqueue(got.value); });
          }});
        };
        return true;
      })()""")
    b.give_files([os.path.join(gone, f) for f in sorted(os.listdir(gone))])
    b.wait_title(["stepformer: opening"])
    b.pump(0.5)
    os.remove(os.path.join(gone, "model.safetensors"))
    b.eval("window.heldRelease(), true")
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: error") and "model.safetensors could not be read from your disk" in title and "removed" in title,
          f"a weights file removed while it is read: '{title}'")
    shot = os.path.join(tmp, "picked-gone.png")
    b.screenshot(shot, 1280, 720)
    check(colours(shot) > 20, "a weights file removed while it is read: a blank page")
    b.open(srv.base + "index.html?size=1280x720")  # Blob.stream as it was
    b.wait_title(["stepformer: ready", "stepformer: error"])
    # Bad folders: no config.json; weights that are not safetensors.
    notes = os.path.join(tmp, "disk", "notes.txt")
    with open(notes, "w") as f:
        f.write("not a model\n")
    b.give_files([notes])
    title = b.wait_title(["stepformer: error"])
    check("the folder has no config.json" in title, f"a folder without config.json: '{title}'")
    broken = os.path.join(tmp, "disk", "broken")
    os.makedirs(broken)
    shutil.copy(os.path.join(folder, "config.json"), broken)
    with open(os.path.join(broken, "model.safetensors"), "wb") as f:
        f.write(b"PK\x03\x04 this is a zip, not safetensors")
    b.give_files([os.path.join(broken, "config.json"), os.path.join(broken, "model.safetensors")])
    b.wait_title(["stepformer: opening"])
    title = b.wait_title(["stepformer: ready", "stepformer: error"])
    check(title.startswith("stepformer: error") and "model.safetensors" in title, f"weights that are not safetensors: '{title}'")
    shot = os.path.join(tmp, "picked-broken.png")
    b.screenshot(shot, 1280, 720)
    check(colours(shot) > 20, "weights that are not safetensors: a blank page")
    print("a folder from the disk: checked", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--stepformer", required=True)
    args = ap.parse_args()
    srv = Server(args.site)
    b = Browser(1920, 1080)
    try:
        with tempfile.TemporaryDirectory(prefix="stepformer-web-") as tmp:
            test_fonts(args.site)
            test_budget(b, srv, args.site)
            test_places(b, srv, os.path.abspath(args.stepformer), tmp)
            test_plain_program(b, srv, os.path.abspath(args.stepformer), tmp)
            test_replay(b, srv, tmp)
            test_every_lesson(b, srv, os.path.abspath(args.stepformer), tmp)
            test_real_input(b, srv, os.path.abspath(args.stepformer), tmp)
            test_window_parity(b, srv, os.path.abspath(args.stepformer), tmp)
            test_training(b, srv, tmp)
            test_high_density(b, srv, os.path.abspath(args.stepformer), tmp)
            test_bad_links(b, srv, tmp)
            test_one_shot(srv, tmp)
            test_missing_model(b, args.site, tmp)
            test_model_link(b, os.path.abspath(args.stepformer), args.site, tmp)
            test_file_picker(b, srv, os.path.abspath(args.stepformer), tmp)
            test_requests(b)  # every request the page made in all of the above
    finally:
        b.close()
        srv.close()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
