"""browser.py: Debian's headless Chromium driven over the DevTools protocol, and a static
server for the site folder, both on 127.0.0.1 only. Used by test_page.py and bench_page.py.

Every request the page makes is recorded; a test fails on any that leaves 127.0.0.1.
"""
import base64
import functools
import http.server
import re
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket  # Debian's python3-websocket

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript", ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


class RangeHandler(QuietHandler):
    """A static host that honours Range: bytes=A-B on files (206 and Content-Range), as most do
    (Python's own server answers 200 with the whole file). Each answer is noted in `served`."""
    served = None  # [(path, status, bytes sent)], set per server

    def send_head(self):
        path = self.translate_path(self.path)
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if not m or not os.path.isfile(path):
            self.served.append((self.path, 200, os.path.getsize(path) if os.path.isfile(path) else 0))
            return super().send_head()
        size = os.path.getsize(path)
        begin = int(m.group(1))
        end = min(int(m.group(2)) + 1 if m.group(2) else size, size)
        if begin >= size or end <= begin:
            self.send_error(416)
            return None
        f = open(path, "rb")
        f.seek(begin)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {begin}-{end - 1}/{size}")
        self.send_header("Content-Length", str(end - begin))
        self.end_headers()
        self.served.append((self.path, 206, end - begin))
        return _Slice(f, end - begin)


class _Slice:
    """The first n bytes of an open file, for copyfile."""

    def __init__(self, f, n):
        self.f, self.left = f, n

    def read(self, size=-1):
        size = self.left if size < 0 else min(size, self.left)
        data = self.f.read(size)
        self.left -= len(data)
        return data

    def close(self):
        self.f.close()


class _QuietServer(http.server.ThreadingHTTPServer):
    """A reader that stops a stream once it has the bytes it wants (the page's header reads) is
    not an error of the server's."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


class Server:
    """The site folder on 127.0.0.1, in a thread: what any static host does. With ranges=True
    it honours Range requests, and `served` lists its answers."""

    def __init__(self, site, ranges=False):
        self.port = free_port()
        self.served = []
        handler = functools.partial(type("Handler", (RangeHandler,), {"served": self.served}) if ranges else QuietHandler,
                                    directory=site)
        self.httpd = _QuietServer(("127.0.0.1", self.port), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.port}/"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def site_with(site, links):
    """A new folder to serve: the site's files, and beside them `links` (name: path), each a
    symbolic link (the caller removes the folder, links only, with shutil.rmtree)."""
    root = tempfile.mkdtemp(prefix="stepformer-site-")
    site = os.path.abspath(site)
    for name in os.listdir(site):
        os.symlink(os.path.join(site, name), os.path.join(root, name))
    for name, path in links.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        os.symlink(os.path.abspath(path), os.path.join(root, name))
    return root


class Browser:
    """One headless Chromium with one page, over the DevTools protocol."""

    def __init__(self, width=1280, height=800):
        self.profile = tempfile.mkdtemp(prefix="stepformer-chromium-")
        self.port = free_port()
        args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
                "--hide-scrollbars", "--force-device-scale-factor=1", f"--window-size={width},{height}",
                f"--user-data-dir={self.profile}", f"--remote-debugging-port={self.port}", "about:blank"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self.ws = None
        deadline = time.time() + 30
        while time.time() < deadline and self.ws is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                                          suppress_origin=True)
            except OSError:
                time.sleep(0.2)
        if self.ws is None:
            self.close()
            raise RuntimeError("headless Chromium did not start (is chromium-headless-shell installed?)")
        self.next_id = 0
        self.requests = []   # every URL the page asked for
        self.console = []    # what the page printed
        self.send("Network.enable")
        self.send("Runtime.enable")
        self.send("Page.enable")

    def send(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.event(msg)

    def event(self, msg):
        m = msg.get("method")
        if m == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])
        elif m == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", "")) for a in msg["params"]["args"]))

    def pump(self, seconds):
        """Reads events for up to `seconds` (requests, console lines)."""
        self.ws.settimeout(seconds)
        try:
            while True:
                self.event(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(60)

    def size(self, width, height):
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def open(self, url):
        self.send("Page.navigate", url=url)

    def eval(self, expr):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def eval_async(self, expr, timeout=600):
        """The value a promise-returning expression resolves to; raises with the page's error if it
        rejects."""
        self.ws.settimeout(timeout)
        try:
            r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        finally:
            self.ws.settimeout(60)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError(d.get("exception", {}).get("description") or d.get("text", "the script failed"))
        return r.get("result", {}).get("value")

    def wait_title(self, prefixes, timeout=30):
        """Waits until document.title starts with one of prefixes; returns it (or the last seen)."""
        deadline = time.time() + timeout
        title = ""
        while time.time() < deadline:
            title = self.eval("document.title") or ""
            if any(title.startswith(p) for p in prefixes):
                return title
            self.pump(0.05)
        return title

    def give_files(self, paths):
        """Gives the page's folder picker these files, as a user choosing them does (DevTools'
        DOM.setFileInputFiles: the page reads them from disk, nothing is uploaded)."""
        root = self.send("DOM.getDocument")["root"]["nodeId"]
        node = self.send("DOM.querySelector", nodeId=root, selector="#files")["nodeId"]
        self.send("DOM.setFileInputFiles", nodeId=node, files=paths)

    def peak_rss_mb(self):
        """The largest peak resident memory (VmHWM) of Chromium's processes, in MB: the renderer's,
        which holds the page's WebAssembly memory."""
        best = 0
        for pid in os.listdir("/proc"):
            try:
                if not pid.isdigit() or os.getpgid(int(pid)) != self.proc.pid:  # Chromium's own session
                    continue
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            best = max(best, int(line.split()[1]) / 1024)
            except (OSError, ValueError, IndexError):
                continue
        return best

    def screenshot(self, path, width, height):
        r = self.send("Page.captureScreenshot", format="png",
                      clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            if self.ws:
                self.ws.close()
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


def key_event(b, key, code, vk, text=None):
    """A real key press in the page (the browser's own events, as a user's keyboard sends them)."""
    down = dict(type="keyDown", key=key, code=code, windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
    if text:
        down["text"] = text
    b.send("Input.dispatchKeyEvent", **down)
    b.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)


def click(b, x, y):
    for t in ("mouseMoved", "mousePressed", "mouseReleased"):
        b.send("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left", clickCount=1)


def wheel(b, x, y, dy):
    b.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    b.send("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=dy)
