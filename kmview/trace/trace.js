/* trace.js — the Trace view of kmview's report (inlined before report.js,
   which calls KM.trace.controls and KM.trace.view when the report was
   written with --trace).  Ranks x time: a row per rank and thread, its
   regions as bars stacked by depth (the outermost on top), messages as
   lines from the sender's row to the receiver's; the wheel zooms at the
   mouse, a drag pans, the buttons zoom in, out and back to the whole run.

   What is drawn depends on the zoom (the data is kmview/tracehtml.c's):
   while a pixel spans at least a bucket of one of the summaries (three
   levels, each 8 times finer), the coarsest such summary, each
   bucket coloured by the region that stayed longest in it and as opaque
   as regions cover it; zoomed in further, the exact events (every one
   when the trace had at most 200,000 regions, else the longest, drawn
   over the finest summary so that nothing disappears).  The hover names
   the region under the mouse.  KM.trace.last holds what the last drawing
   did, for the tests.  Never fetches anything. */
KM.trace = (function () {
'use strict';
var ROW_GAP = 6, BAR = 11, LEFT = 120, AXIS = 22;
var T = null, win = null, last = {};

function decode(D) {
  if (T) return T;
  var X = D.trace;
  T = {span: X.span, levels: X.levels, fileStride: X.fileStride, oddShown: X.oddShown, regions: X.regions, complete: X.complete, nregions: X.nregions,
       matched: X.matched, files: X.files, rows: X.rows.map(function (r) {
         return {rank: r.rank, thread: r.thread, state: r.state, open: r.open,
                 lv: r.lv.map(function (a) { return KM.array(a); }), ev: []};
       }),
       start: KM.array(X.start), dur: KM.array(X.dur), row: KM.array(X.row), region: KM.array(X.region),
       depth: KM.array(X.depth), msgT: KM.array(X.msgT), msgRow: KM.array(X.msgRow), msgStride: X.msgStride};
  T.depths = T.rows.map(function () { return 1; });
  /* each row's exact events (sorted by start in the data), its longest */
  for (var k = 0; k < T.start.length; k++) {
    var r = T.rows[T.row[k]];
    r.ev.push(k);
    if (T.depth[k] + 1 > T.depths[T.row[k]]) T.depths[T.row[k]] = T.depth[k] + 1;
  }
  T.rows.forEach(function (r, i) {
    r.maxDur = 0;
    r.ev.forEach(function (k) { if (T.dur[k] > r.maxDur) r.maxDur = T.dur[k]; });
    for (var l = 0; l < r.lv.length; l++)
      for (var j = 3; j < r.lv[l].length; j += 4) {
        var d = r.lv[l][j] >> 8;
        if (d + 1 > T.depths[i]) T.depths[i] = d + 1;
      }
  });
  /* bars thinner when the rows would not fit a canvas (32,767 px at most) */
  var bars = T.depths.reduce(function (a, b) { return a + b; }, 0);
  BAR = Math.max(2, Math.min(11, Math.floor((30000 - AXIS - ROW_GAP * T.rows.length) / Math.max(1, bars))));
  ROW_GAP = BAR < 6 ? 2 : ROW_GAP;
  var y = AXIS;
  T.y = T.rows.map(function (r, i) { var top = y; y += T.depths[i] * BAR + ROW_GAP; return top; });
  T.height = y + 4;
  return T;
}

/* a region's colour: a hue per name, so that a routine has one colour on
   every rank (MPI calls red, I/O darker) */
function hue(g) {
  var r = T.regions[g];
  if (r.hue === undefined) {
    var n = 0, s = r[0];
    for (var i = 0; i < s.length; i++) n = (n * 31 + s.charCodeAt(i)) % 9973;
    r.hue = (n * 137.508) % 360;
  }
  return r.hue;
}
function colour(g, alpha) {
  var h = hue(g), kind = T.regions[g] ? T.regions[g][1] : '';
  var l = kind === 'MPI' ? 42 : kind === 'I/O' ? 48 : 58;
  if (kind === 'MPI') h = 0;
  return 'hsla(' + h.toFixed(1) + ',' + (kind === 'MPI' ? 75 : 55) + '%,' + l + '%,' + alpha.toFixed(3) + ')';
}

function controls(D, S) {
  return '<span class="group"><label>Zoom</label><button id="tzin" title="zoom in (or the wheel)">+</button>' +
    '<button id="tzout" title="zoom out">&minus;</button><button id="tzall">Whole run</button></span>' +
    '<span class="group"><label>Messages</label><button id="tmsg" class="on" title="lines from sender to receiver">' +
    'Lines</button></span>';
}

function fmtT(ns) {
  var a = Math.abs(ns);
  if (a >= 1e9) return KM.num(ns / 1e9) + ' s';
  if (a >= 1e6) return KM.num(ns / 1e6) + ' ms';
  if (a >= 1e3) return KM.num(ns / 1e3) + ' µs';
  return KM.num(ns) + ' ns';
}

/* the first index of sorted run starts (every 4th word from `from`) at or
   after bucket b, within [lo, hi) runs */
function firstRun(a, lo, hi, b) {
  while (lo < hi) {
    var m = (lo + hi) >> 1;
    if (a[4 * m] + a[4 * m + 1] <= b) lo = m + 1; else hi = m;
  }
  return lo;
}

function drawRuns(x, r, i, level, t0, nsPx, W, alphaScale) {
  var a = r.lv[level], n = a.length / 4, w = T.span / T.levels[level], drawn = 0;
  var b0 = Math.floor(t0 / w), b1 = Math.ceil((t0 + nsPx * W) / w);
  /* runs are by depth, then start: find each depth's stretch */
  var k = 0;
  while (k < n) {
    var d = a[4 * k + 3] >> 8, e = k;
    while (e < n && (a[4 * e + 3] >> 8) === d) e++;
    for (var j = firstRun(a, k, e, b0); j < e && a[4 * j] <= b1; j++) {
      var xs = (a[4 * j] * w - t0) / nsPx, xe = ((a[4 * j] + a[4 * j + 1]) * w - t0) / nsPx;
      x.fillStyle = colour(a[4 * j + 2], alphaScale * (0.25 + 0.75 * (a[4 * j + 3] & 255) / 255));
      x.fillRect(LEFT + Math.max(0, xs), T.y[i] + d * BAR, Math.max(1, Math.min(W, xe) - Math.max(0, xs)), BAR - 1);
      drawn++;
    }
    k = e;
  }
  return drawn;
}

/* the first of a row's exact events (by start) that can reach time t */
function firstEvent(r, t) {
  var ev = r.ev, lo = 0, hi = ev.length;
  while (lo < hi) { var m = (lo + hi) >> 1; if (T.start[ev[m]] < t - r.maxDur) lo = m + 1; else hi = m; }
  return lo;
}

function drawExact(x, r, i, t0, nsPx, W) {
  var t1 = t0 + nsPx * W, ev = r.ev, drawn = 0;
  for (var j = firstEvent(r, t0); j < ev.length && T.start[ev[j]] <= t1; j++) {
    var k = ev[j], s = T.start[k], e = s + T.dur[k];
    if (e < t0) continue;
    var xs = Math.max(0, (s - t0) / nsPx), xe = Math.min(W, (e - t0) / nsPx);
    x.fillStyle = colour(T.region[k], 1);
    x.fillRect(LEFT + xs, T.y[i] + T.depth[k] * BAR, Math.max(1, xe - xs), BAR - 1);
    if (xe - xs > 40 && BAR >= 9) {
      x.fillStyle = '#fff';
      x.fillText(T.regions[T.region[k]][0].slice(0, Math.floor((xe - xs) / 6)), LEFT + xs + 2, T.y[i] + T.depth[k] * BAR + 9);
    }
    drawn++;
  }
  return drawn;
}

function drawAxis(x, t0, nsPx, W) {
  var span = nsPx * W, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
  if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
  x.fillStyle = '#555';
  x.strokeStyle = '#ddd';
  for (var t = Math.ceil(t0 / step) * step; t <= t0 + span; t += step) {
    var px = LEFT + (t - t0) / nsPx;
    x.fillText(fmtT(t), px + 2, 12);
    x.beginPath(); x.moveTo(px, 15); x.lineTo(px, T.height); x.stroke();
  }
}

function drawMessages(x, t0, nsPx, W) {
  var n = T.msgT.length / 2, t1 = t0 + nsPx * W, drawn = 0;
  x.strokeStyle = 'rgba(20,20,20,0.55)';
  x.beginPath();
  for (var k = 0; k < n; k++) {
    var a = T.msgT[2 * k], b = T.msgT[2 * k + 1];
    if (Math.max(a, b) < t0 || Math.min(a, b) > t1) continue;
    var ra = T.msgRow[2 * k], rb = T.msgRow[2 * k + 1];
    x.moveTo(LEFT + (a - t0) / nsPx, T.y[ra] + BAR / 2);
    x.lineTo(LEFT + (b - t0) / nsPx, T.y[rb] + BAR / 2);
    drawn++;
  }
  x.stroke();
  return drawn;
}

/* the coarsest summary level whose buckets are no wider than a pixel;
   -1: none, draw the exact events (always, when every event is there and
   few enough to draw) */
var EXACT_ALWAYS = 50000;
function levelFor(nsPx) {
  if (T.complete && T.start.length <= EXACT_ALWAYS) return -1;
  for (var l = 0; l < T.levels.length; l++) if (T.span / T.levels[l] <= nsPx) return l;
  return -1;
}

function draw() {
  var c = document.getElementById('tcanvas');
  if (!c) return;
  var t0 = performance.now(), x = c.getContext('2d'), W = c.width - LEFT;
  var nsPx = (win[1] - win[0]) / W, level = levelFor(nsPx);
  x.clearRect(0, 0, c.width, c.height);
  x.font = '10px sans-serif';
  drawAxis(x, win[0], nsPx, W);
  var runs = 0, exact = 0, lines = 0;
  T.rows.forEach(function (r, i) {
    x.fillStyle = '#222';
    x.fillText('rank ' + r.rank + ' · thread ' + r.thread, 4, T.y[i] + 10);
    if (level >= 0) runs += drawRuns(x, r, i, level, win[0], nsPx, W, 1);
    else {
      if (!T.complete) runs += drawRuns(x, r, i, T.levels.length - 1, win[0], nsPx, W, 0.35);
      exact += drawExact(x, r, i, win[0], nsPx, W);
    }
  });
  if (document.getElementById('tmsg').classList.contains('on')) lines = drawMessages(x, win[0], nsPx, W);
  last = {level: level, runs: runs, exact: exact, lines: lines, window: win.slice(), ms: performance.now() - t0};
  KM.trace.last = last;
  document.getElementById('twin').textContent = fmtT(win[0]) + ' – ' + fmtT(win[1]) + ' of ' + fmtT(T.span) +
    (level >= 0 ? ' · summary of ' + KM.intText(T.levels[level]) + ' buckets' : ' · exact events') ;
}

function zoom(f, at) {
  var w = win[1] - win[0], c = at === undefined ? win[0] + w / 2 : at;
  var nw = Math.min(T.span, Math.max(w * f, 1000));
  var a = c - (c - win[0]) * nw / w;
  a = Math.max(0, Math.min(T.span - nw, a));
  win = [a, a + nw];
  draw();
}

/* the region under (px, py) of the canvas: html, or '' */
function hit(px, py) {
  var W = document.getElementById('tcanvas').width - LEFT, nsPx = (win[1] - win[0]) / W;
  var t = win[0] + (px - LEFT) * nsPx, i = -1;
  for (var k = 0; k < T.rows.length; k++) if (py >= T.y[k] && py < T.y[k] + T.depths[k] * BAR) i = k;
  if (i < 0 || px < LEFT) return '';
  var d = Math.floor((py - T.y[i]) / BAR), r = T.rows[i], level = levelFor(nsPx);
  if (level < 0) {
    for (var j = firstEvent(r, t - nsPx); j < r.ev.length && T.start[r.ev[j]] <= t + nsPx; j++) {
      var e = r.ev[j];
      if (T.depth[e] === d && T.start[e] + T.dur[e] >= t - nsPx) {
        var g = T.regions[T.region[e]];
        return '<b>' + KM.esc(g[0]) + '</b><br>' + KM.esc(g[1]) + (g[2] ? ' · ' + KM.esc(g[2]) + ':' + g[3] : '') +
          '<br>' + fmtT(T.dur[e]) + ' from ' + fmtT(T.start[e]) + '<br>rank ' + r.rank + ' · thread ' + r.thread;
      }
    }
    if (T.complete) return '';
    level = T.levels.length - 1;
  }
  var a = r.lv[level], w = T.span / T.levels[level], b = Math.floor(t / w);
  for (var q = 0; q < a.length; q += 4)
    if ((a[q + 3] >> 8) === d && a[q] <= b && b < a[q] + a[q + 1]) {
      var h = T.regions[a[q + 2]];
      return 'mostly <b>' + KM.esc(h[0]) + '</b> (' + KM.esc(h[1]) + ')<br>' + KM.pct((a[q + 3] & 255) / 255) +
        ' of ' + fmtT(w) + ' covered at depth ' + d + '<br>zoom in for the exact events';
    }
  return '';
}

function view(main, D) {
  decode(D);
  if (!win) win = [0, T.span];
  var rows = T.rows.length, note = KM.intText(T.nregions) + ' regions on ' + rows + ' row' + (rows > 1 ? 's' : '') +
    ' (' + T.files.length + ' trace file' + (T.files.length > 1 ? 's' : '') + '), ' + KM.intText(T.matched) +
    ' messages matched' + (T.msgStride > 1 ? ' (1 in ' + T.msgStride + ' drawn)' : '') +
    (T.fileStride > 1 ? '; of ' + KM.intText(T.files.length) + ' ranks 1 in ' + T.fileStride +
     ' is shown (rank 0, ' + T.fileStride + ', ...)' + (T.oddShown ? ' and the ' + T.oddShown + ' threads of ranks ' +
     'that were elsewhere at the end than most' : '') + ', and the lines between those' : '') +
    (T.complete ? '' : '; the ' + KM.intText(T.start.length) + ' longest regions are kept exactly, the others ' +
     'in the summaries');
  var open = T.rows.filter(function (r) { return r.open > 0; });
  if (open.length) note += '. Rows whose regions were still open at the end of the trace (closed at their last ' +
    'event): ' + open.map(function (r) { return r.rank + '.' + r.thread + ' (' + r.open + ')'; }).join(', ');
  main.innerHTML = '<p class="note" id="tnote">' + KM.esc(note) + '</p><p class="note" id="twin"></p>' +
    '<div class="heat"><canvas id="tcanvas" width="' + Math.max(600, (main.clientWidth || 1200) - 40) +
    '" height="' + T.height + '"></canvas></div>';
  var c = document.getElementById('tcanvas'), drag = null;
  c.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var rect = c.getBoundingClientRect(), W = c.width - LEFT;
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, win[0] + (ev.clientX - rect.left - LEFT) * (win[1] - win[0]) / W);
  }, {passive: false});
  c.addEventListener('mousedown', function (ev) { drag = [ev.clientX, win[0], win[1]]; });
  window.addEventListener('mouseup', function () { drag = null; });
  c.addEventListener('mousemove', function (ev) {
    var rect = c.getBoundingClientRect();
    if (drag) {
      var W = c.width - LEFT, dt = (drag[0] - ev.clientX) * (drag[2] - drag[1]) / W;
      var a = Math.max(0, Math.min(T.span - (drag[2] - drag[1]), drag[1] + dt));
      win = [a, a + drag[2] - drag[1]];
      draw();
      return;
    }
    var h = hit(ev.clientX - rect.left, ev.clientY - rect.top);
    if (h) KM.tip.show(h, ev); else KM.tip.hide();
  });
  c.addEventListener('mouseleave', function () { KM.tip.hide(); });
  document.getElementById('tzin').onclick = function () { zoom(0.5); };
  document.getElementById('tzout').onclick = function () { zoom(2); };
  document.getElementById('tzall').onclick = function () { win = [0, T.span]; draw(); };
  document.getElementById('tmsg').onclick = function () { this.classList.toggle('on'); draw(); };
  draw();
}

return {controls: controls, view: view, hit: hit, data: function (D) { return decode(D); },
        zoomTo: function (a, b) { win = [a, b]; draw(); }};
})();
