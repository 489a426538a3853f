// reader.js: a model's weights files in the page, read by range straight into the program's
// memory, never held whole (linked before the program with --pre-js; platform_web.c calls it).
//
// A weights file of a model folder is a stand-in in the program's file system: its header (the
// 8-byte length and the JSON) with the file's own size; a read past the header fails (EIO). The
// C reader reads the header as it reads any file's, places the model and lists the entries'
// reads for later (safetensors.h: StReads); platform_read_queue hands them here, and they are
// read from where the file is, in file order, each chunk copied to its place as it arrives:
//   - a file the user gave the page (a File: Blob.slice(...).stream());
//   - a file of the site (fetch with a Range header; a server that ignores ranges answers 200
//     with the whole file, which is then read once, front to back, each read taken as it passes).
// A file already whole in the file system (a lesson's own small model) is copied from there.

var pageHeads = {};  // path -> {state: 0 running, or the failure's HTTP status (-1: none), why}
var pageJob = null;  // the queued reads: {reads, total, done, started, failed, cancelled}

// A source's bytes [begin, end) as a stream: {reader, start} where start is the file offset of
// its first byte (0 when a server ignored the range and sent the whole file).
function pageOpen(source, begin, end) {
  if (source.file) return Promise.resolve({reader: source.file.slice(begin, end).stream().getReader(), start: begin});
  return fetch(source.url, {headers: {Range: 'bytes=' + begin + '-' + (end - 1)}}).then(function (r) {
    if (r.status === 206) return {reader: r.body.getReader(), start: begin, size: pageRangeSize(r)};
    if (r.status === 200) return {reader: r.body.getReader(), start: 0, size: Number(r.headers.get('Content-Length'))};
    const e = new Error('the site answered ' + r.status);
    e.status = r.status;
    throw e;
  });
}

function pageRangeSize(r) {  // "bytes 0-7/12345" -> 12345
  const m = /\/(\d+)\s*$/.exec(r.headers.get('Content-Range') || '');
  return m ? Number(m[1]) : NaN;
}

// Reads the stream on from file offset `start`, copying the bytes of each read of `list` (sorted
// by begin, none before start) to its place through put(read, chunk, at); resolves when the last
// is in, and stops the stream there.
function pageRoute(s, list, put, live) {
  let pos = s.start, first = 0;
  function pump() {
    if (!live() || first >= list.length) return s.reader.cancel().catch(function () {});
    return s.reader.read().then(function (got) {
      if (!live()) return s.reader.cancel().catch(function () {});
      if (got.done) throw new Error('the file is only ' + pos + ' bytes long, shorter than its header says');
      const chunk = got.value, end = pos + chunk.length;
      for (let i = first; i < list.length && list[i].begin < end; i++) {
        const r = list[i], a = Math.max(r.begin, pos), b = Math.min(r.end, end);
        if (a < b) put(r, chunk.subarray(a - pos, b - pos), a - r.begin);
      }
      pos = end;
      while (first < list.length && list[first].end <= pos) first++;
      return pump();
    });
  }
  return pump();
}

// Bytes [0, n) of a source (a header's), as one array.
function pageBytes(source, n) {
  const out = new Uint8Array(n);
  return pageOpen(source, 0, n).then(function (s) {
    return pageRoute(s, [{begin: 0, end: n}], function (r, chunk, at) { out.set(chunk, at); },
                     function () { return true; }).then(function () { return {bytes: out, size: s.size}; });
  });
}

// A stand-in for `path`: its first bytes `head` (its header), the size `size`, its bytes at `source`.
function pageStandIn(path, head, size, source) {
  FS.mkdirTree(path.slice(0, path.lastIndexOf('/')));
  FS.writeFile(path, head);
  const node = FS.lookupPath(path).node, ops = node.stream_ops;
  node.usedBytes = size;  // what stat says: the C reader checks every offset against it
  node.stream_ops = Object.assign({}, ops, {
    read: function (stream, buffer, offset, length, position) {
      if (position >= head.length) throw new FS.ErrnoError(29);  // EIO: these bytes are read by range
      return ops.read(stream, buffer, offset, Math.min(length, head.length - position), position);
    }
  });
  node.pageSource = source;  // where its bytes are: {file: File} or {url: string}
}

// Where the bytes of the file at `path` (however spelt) are, or null: whole in the file system.
function pageSource(path) { return FS.lookupPath(path).node.pageSource || null; }

// The header of a source of `size` bytes: its 8-byte length, then as many bytes as it says (the
// C reader says what is wrong with a length that does not fit).
function pageHeader(source, size) {
  return pageBytes(source, size >= 0 ? Math.min(8, size) : 8).then(function (first) {
    const b = first.bytes;
    if (!(size >= 0)) size = first.size;
    let n = 0;
    for (let k = 7; k >= 0 && b.length === 8; k--) n = n * 256 + b[k];
    if (b.length < 8 || 8 + n > size || n > 256 * 1048576) return {head: b, size: size};
    return pageBytes(source, 8 + n).then(function (all) { return {head: all.bytes, size: size}; });
  });
}

// A weights file the user gave the page, as a stand-in at `path`.
Module.pageGiveFile = function (path, file) {
  const source = {file: file};
  return pageHeader(source, file.size).then(function (h) { pageStandIn(path, h.head, file.size, source); });
};

// A weights file of the site (platform_web.c): its header fetched, a stand-in made at `path`;
// pageHeads[path] says how it went.
function pageFetchHead(url, path) {
  const source = {url: url};
  pageHeads[path] = {state: 0, why: ''};
  pageHeader(source, NaN).then(function (h) {
    pageStandIn(path, h.head, h.size, source);
  }).catch(function (e) {
    pageHeads[path] = {state: e.status || -1, why: e.status ? 'the site answered ' + e.status : String(e.message || e)};
  });
}

// ---- the queued reads (platform_read_queue, platform_read_poll, platform_read_cancel) ----

function pageQueue(path, begin, end, fileBytes, to) {
  if (!pageJob) pageJob = {reads: [], total: 0, done: 0, started: false, failed: null, cancelled: false};
  pageJob.reads.push({path: path, begin: begin, end: end, fileBytes: fileBytes, to: to});
  pageJob.total += end - begin;
}

function pageName(path) { return path.slice(path.lastIndexOf('/') + 1); }

// The reads of one file, in file order: in runs of reads at most a megabyte apart, one stream each
// (what lies between, a buffer the program does not declare, is not read) or, where the server
// sent the whole file, all of them from that one stream.
function pageReadFile(job, path, list) {
  const source = pageSource(path), live = function () { return !job.cancelled && !job.failed; };
  const put = function (r, chunk, at) { HEAPU8.set(chunk, r.to + at); job.done += chunk.length; };
  if (!source) {  // whole in the file system already
    if (FS.stat(path).size !== list[0].fileBytes) throw new Error('the file changed while it was read');
    const s = FS.open(path, 'r');
    try {
      list.forEach(function (r) { FS.read(s, HEAPU8, r.to, r.end - r.begin, r.begin); job.done += r.end - r.begin; });
    } finally { FS.close(s); }
    return Promise.resolve();
  }
  if (source.file && source.file.size !== list[0].fileBytes)
    return Promise.reject(new Error('the file changed while it was read'));
  const told = function (e) { e.byUser = !!source.file; throw e; };
  const runs = [];
  list.forEach(function (r) {
    const last = runs[runs.length - 1];
    if (last && r.begin <= last.end + 1048576) last.end = Math.max(last.end, r.end), last.reads.push(r);
    else runs.push({begin: r.begin, end: r.end, reads: [r]});
  });
  let k = 0;
  function next() {
    if (k >= runs.length || !live()) return Promise.resolve();
    const run = runs[k++];
    return pageOpen(source, run.begin, run.end).then(function (s) {
      if (s.size >= 0 && s.size !== list[0].fileBytes) throw new Error('the file changed on the site while it was read');
      if (s.start === run.begin) return pageRoute(s, run.reads, put, live).then(next);
      k = runs.length;  // the whole file came: every read from this stream
      return pageRoute(s, list, put, live);
    });
  }
  return next().catch(told);
}

// Where the reads fail: the message names the file (and, for the user's, what may have happened).
function pageFailure(path, e) {
  const said = String(e.message || e);
  return new Error(e.byUser ? pageName(path) + ' could not be read from your disk: was it moved or removed while the ' +
                              'page read it? (the browser said: ' + said + ')'
                            : pageName(path) + ' could not be read: ' + said);
}

// Files whole in the file system are read at once (a lesson's own model opens in the frame it
// is asked for); the others in turn, by range.
function pageStart(job) {
  job.started = true;
  const byPath = {};
  job.reads.forEach(function (r) { (byPath[r.path] = byPath[r.path] || []).push(r); });
  const later = [];
  Object.keys(byPath).forEach(function (path) {
    const list = byPath[path].sort(function (a, b) { return a.begin - b.begin; });
    if (job.failed) return;
    if (pageSource(path)) return later.push(path);
    try { pageReadFile(job, path, list); } catch (e) { job.failed = pageFailure(path, e).message; }
  });
  if (!later.length || job.failed) return job.finished = true;
  let k = 0;
  function next() {
    if (k >= later.length || job.cancelled) return Promise.resolve();
    const path = later[k++];
    return pageReadFile(job, path, byPath[path]).catch(function (e) { throw pageFailure(path, e); }).then(next);
  }
  next().then(function () { job.finished = true; }, function (e) { job.failed = e.message; });
}

// 0: running, 1: done, 2: failed (the message into why); the fraction read into *progress.
function pageReadPoll(progress, why, cap) {
  const job = pageJob;
  if (!job) return HEAPF64[progress >> 3] = 1, 1;
  if (!job.started) pageStart(job);
  HEAPF64[progress >> 3] = job.total ? job.done / job.total : 1;
  if (job.failed) {
    stringToUTF8(job.failed, why, cap);
    pageJob = null;
    return 2;
  }
  if (!job.finished) return 0;
  pageJob = null;
  return 1;
}

function pageReadCancel() {
  if (pageJob) pageJob.cancelled = true;
  pageJob = null;
}
