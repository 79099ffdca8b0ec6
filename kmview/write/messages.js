/* messages.js — the Messages view of kmview's report (inlined into the
   page before report.js, which calls KM.msg.controls and KM.msg.view).
   What the MPI calls moved: the communication matrix as a heat map (its
   point-to-point or its all-to-all part; colour by bytes or by messages,
   linear or logarithmic; the mouse gives sender, receiver, bytes and
   messages), the same figures as a table of the heaviest pairs of ranks
   (sortable by each column), and per MPI call site its message-size
   histogram as a small bar chart with its totals.  When the run has more
   ranks than the map has cells, a cell is a block of consecutive ranks and
   the page says so; the table keeps single ranks.  The data is
   kmview/htmlmsg.c's.  Never fetches anything. */
KM.msg = (function () {
'use strict';
var SITES_SHOWN = 100, ROWS_SHOWN = 50, MAP_PX = 512, EMPTY = [238, 240, 244];

var intText = KM.intText, bytesText = KM.bytesText, bytesExact = KM.bytesExact;
function pow2Text(v) {               /* a power of two of 1 KiB or more */
  var unit = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], u = 0;
  v /= 1024;
  while (v >= 1024 && u < 4) { v /= 1024; u++; }
  return v + ' ' + unit[u];
}
/* The sizes of bin b: 0 B, 1 B, 2–3 B, ..., 1 KiB–2 KiB (not including
   the second), the last bin everything larger. */
function binText(b) {
  if (b === 0) return '0 B';
  var lo = Math.pow(2, b - 1);
  if (b >= 47) return '≥ ' + pow2Text(lo);
  if (b === 1) return '1 B';
  return lo < 1024 ? lo + '–' + (2 * lo - 1) + ' B' : pow2Text(lo) + '–' + pow2Text(2 * lo);
}

function partOf(D, S) {
  var M = D.messages;
  return M[S.mpart] ? S.mpart : M.p2p ? 'p2p' : M.a2a ? 'a2a' : null;
}
var PART_NAME = {p2p: 'point-to-point messages', a2a: 'all-to-all collectives'};

function controls(D, S) {
  var M = D.messages, part = partOf(D, S);
  if (!part) return '';
  return KM.toggles('Matrix', 'mpart', [['Point-to-point', 'p2p', !M.p2p], ['All-to-all', 'a2a', !M.a2a]], part) +
    KM.toggles('Colour by', 'mshow', [['Bytes', 'bytes'], ['Messages', 'messages']], S.mshow) +
    KM.toggles('Scale', 'mscale', [['Linear', 'linear'], ['Logarithmic', 'log']], S.mscale);
}

/* ---- the matrix --------------------------------------------------------- */
/* The ranks of row or column k: a rank, or a block of them. */
function ranksOf(M, k) {
  var lo = k * M.per, hi = Math.min(M.ranks, lo + M.per) - 1;
  return lo === hi ? 'rank ' + lo : 'ranks ' + lo + '–' + hi;
}
function blockSize(M, k) { return Math.min(M.ranks, (k + 1) * M.per) - k * M.per; }

function matrixHtml(D, S, part) {
  var M = D.messages, P = M[part], blocks = M.per > 1;
  var h = '<h2>Communication matrix: ' + PART_NAME[part] + '</h2><p class="note" id="mnote">' +
    (part === 'p2p' ? 'Bytes and messages each rank (row) sent point to point to each rank (column), as the ' +
     'senders\' Peers blocks count them' : 'Bytes and messages each rank (row) sent to each rank (column) in ' +
     'MPI_ALLTOALL and MPI_ALLTOALLV') + ': ' + bytesExact(P.bytes) + ' in ' + intText(P.messages) +
    ' messages between ' + intText(P.pairs) + ' pairs of ranks. Colour: ' +
    (S.mshow === 'messages' ? 'messages' : 'bytes') + ' of the cell against the largest' +
    (S.mscale === 'log' ? ', on a logarithmic scale' : '') + '; grey: nothing sent. Hover a cell for its figures.</p>';
  if (blocks)
    h += '<p class="note" id="mblocks">' + intText(M.ranks) + ' ranks are more than the map\'s ' + M.side +
      ' cells a side: each row and column is a block of ' + M.per + ' consecutive ranks (the last may hold ' +
      'fewer), a cell the sum over its block\'s pairs of ranks. The table below lists single ranks.</p>';
  var c = cellPx(M), label = c >= 12 ? 70 : 0, top = c >= 20 ? 16 : 0;
  /* the geometry in data- attributes: what a cell is, for the tests */
  return h + '<div class="scale" id="mscale"></div><div class="heat"><canvas id="mheat" width="' +
    (label + c * M.side) + '" height="' + (top + c * M.side) + '" data-cell="' + c + '" data-left="' + label +
    '" data-top="' + top + '" data-side="' + M.side + '" data-per="' + M.per + '"></canvas></div>';
}
function cellPx(M) { return Math.max(2, Math.min(32, Math.floor(MAP_PX / M.side))); }

/* t in [0, 1] of value v against the map's positive extremes. */
function shade(v, lo, hi, log) {
  if (log) return hi > lo ? 0.08 + 0.92 * Math.log(v / lo) / Math.log(hi / lo) : 1;
  return hi > 0 ? v / hi : 0;
}
function drawMatrix(D, S, part) {
  var M = D.messages, P = M[part], n = M.side, c = cellPx(M), log = S.mscale === 'log';
  var vals = KM.array(S.mshow === 'messages' ? P.m : P.b), bytes = KM.array(P.b), msgs = KM.array(P.m);
  var lo = Infinity, hi = 0;
  for (var i = 0; i < vals.length; i++)
    if (vals[i] > 0) { if (vals[i] < lo) lo = vals[i]; if (vals[i] > hi) hi = vals[i]; }
  var cv = document.getElementById('mheat'), ctx = cv.getContext('2d');
  var left = c >= 12 ? 70 : 0, top = c >= 20 ? 16 : 0, img = ctx.createImageData(c * n, c * n), px = img.data;
  var rowBytes = c * n * 4;
  for (var r = 0; r < n; r++) {
    for (var k = 0; k < n; k++) {
      var v = vals[r * n + k], rgb = v > 0 ? KM.heatColour(shade(v, lo, hi, log), false) : EMPTY;
      for (var x = 0; x < c - (c > 4 ? 1 : 0); x++) {
        var o = r * c * rowBytes + (k * c + x) * 4;
        px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
      }
    }
    for (var y = 1; y < c - (c > 4 ? 1 : 0); y++)
      px.copyWithin(r * c * rowBytes + y * rowBytes, r * c * rowBytes, r * c * rowBytes + rowBytes);
  }
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, cv.width, cv.height);
  ctx.putImageData(img, left, top);
  ctx.fillStyle = '#1d2330';
  ctx.font = '11px system-ui, sans-serif';
  if (left) for (r = 0; r < n; r++) ctx.fillText(ranksOf(M, r).replace('ranks', 'rank'), 2, top + r * c + c / 2 + 4);
  if (top) for (k = 0; k < n; k++) ctx.fillText(String(k * M.per), left + k * c + 2, 12);
  scaleBar(document.getElementById('mscale'), S, lo, hi);
  cv.addEventListener('mousemove', function (ev) {
    var b = cv.getBoundingClientRect();
    var col = Math.floor((ev.clientX - b.left - left) / c), row = Math.floor((ev.clientY - b.top - top) / c);
    if (col < 0 || col >= n || row < 0 || row >= n) { KM.tip.hide(); return; }
    var at = row * n + col;
    KM.tip.show('<b>' + ranksOf(M, row) + ' → ' + ranksOf(M, col) + '</b><br>sender: ' + ranksOf(M, row) +
      '<br>receiver: ' + ranksOf(M, col) + '<br>bytes: ' + bytesExact(bytes[at]) + '<br>messages: ' +
      intText(msgs[at]) + (msgs[at] > 0 ? '<br>mean size: ' + bytesText(bytes[at] / msgs[at]) + ' · ' +
      KM.pct(bytes[at] / P.bytes) + ' of the bytes' : '') + (M.per > 1 ? '<br>the sum over ' +
      intText(blockSize(M, row) * blockSize(M, col)) + ' pairs of ranks' : ''), ev);
  });
  cv.addEventListener('mouseleave', function () { KM.tip.hide(); });
}
function scaleBar(host, S, lo, hi) {
  var c = document.createElement('canvas'), x = c.getContext('2d'), fmt = S.mshow === 'messages' ? intText : bytesText;
  c.width = 160; c.height = 10;
  for (var i = 0; i < 160; i++) {
    x.fillStyle = 'rgb(' + KM.heatColour(i / 159, false).map(Math.round).join(',') + ')';
    x.fillRect(i, 0, 1, 10);
  }
  host.innerHTML = '<span>' + (S.mscale === 'log' && isFinite(lo) ? fmt(lo) : '0') + '</span>';
  host.appendChild(c);
  host.insertAdjacentHTML('beforeend', '<span>' + fmt(hi) + (S.mshow === 'messages' ? ' messages' : '') +
                          '</span>');
}

/* ---- the pairs ---------------------------------------------------------- */
var SORTS = {from: [0, 1], to: [1, 1], messages: [2, -1], bytes: [3, -1], mean: [4, -1]};
function pairsHtml(D, S, part) {
  var P = D.messages[part], rows = [], t = P.top, sort = SORTS[S.msort] ? S.msort : 'bytes';
  for (var i = 0; i + 3 < t.length; i += 4) rows.push([t[i], t[i + 1], t[i + 2], t[i + 3], t[i + 3] / t[i + 2]]);
  var key = SORTS[sort][0], dir = SORTS[sort][1];
  rows.sort(function (a, b) {
    return dir * (a[key] - b[key]) || b[3] - a[3] || a[0] - b[0] || a[1] - b[1];
  });
  var h = '<h2>Pairs of ranks</h2><p class="note" id="mpairsnote">' + (P.allPairs ? 'All ' + intText(P.pairs) +
    ' pairs that exchanged ' + PART_NAME[part] : 'The ' + intText(rows.length) + ' heaviest of ' +
    intText(P.pairs) + ' pairs (those that sent the most bytes and those that sent the most messages; ' +
    'kmview --csv writes every pair to rank_peers.csv)') + '. Click a heading to sort by it.</p>' +
    '<table id="mpairs"><tr>';
  [['sender', 'from'], ['receiver', 'to'], ['messages', 'messages'], ['bytes', 'bytes'],
   ['mean size', 'mean']].forEach(function (c) {
    h += '<th><button data-k="msort" data-v="' + c[1] + '"' + (c[1] === sort ? ' class="on"' : '') + '>' +
      c[0] + '</button></th>';
  });
  h += '<th>share of the bytes</th></tr>';
  var all = S.mrows === 'all' || rows.length <= ROWS_SHOWN;
  rows.slice(0, all ? rows.length : ROWS_SHOWN).forEach(function (r) {
    h += '<tr><td>' + r[0] + '</td><td>' + r[1] + '</td><td>' + intText(r[2]) + '</td><td title="' +
      bytesText(r[3]) + '">' + intText(r[3]) + '</td><td>' + bytesText(r[4]) + '</td><td>' +
      KM.pct(r[3] / P.bytes) + '</td></tr>';
  });
  return h + '</table>' + (all ? '' : '<p class="note"><button id="mrows" data-k="mrows" data-v="all">all ' +
    intText(rows.length) + ' rows</button> (the first ' + ROWS_SHOWN + ' shown)</p>');
}

/* ---- the call sites ------------------------------------------------------ */
function siteName(D, s) {
  var l = D.locations[s[0]];
  return D.routines[l[0]][0] + ' line ' + l[2];
}
/* The bins a site's chart shows: its non-empty ones and one either side. */
function binRange(bins) {
  var lo = 47, hi = 0;
  for (var i = 0; i < bins.length; i += 2) { lo = Math.min(lo, bins[i]); hi = Math.max(hi, bins[i]); }
  return [Math.max(0, lo - 1), Math.min(47, hi + 1)];
}
function siteHtml(D, s, k) {
  var l = D.locations[s[0]], counts = {}, most = 0, range = binRange(s[5]);
  for (var i = 0; i < s[5].length; i += 2) {
    counts[s[5][i]] = s[5][i + 1];
    most = Math.max(most, s[5][i + 1]);
  }
  var h = '<div class="site" data-site="' + k + '"><div class="sh"><b>' + KM.esc(siteName(D, s)) + '</b> ' +
    '<code>' + KM.esc(l[3]) + '</code></div><div class="st">' + intText(s[2]) + ' messages · sent ' +
    bytesExact(s[3]) + ' · received ' + bytesExact(s[4]) + ' · ' + s[1] + ' rank' + (s[1] === 1 ? '' : 's') +
    '</div><div class="hist">';
  for (var b = range[0]; b <= range[1]; b++)
    h += '<span class="hb" data-bin="' + b + '" data-n="' + (counts[b] || 0) + '"><i style="height:' +
      (most > 0 ? (100 * (counts[b] || 0) / most).toFixed(2) : 0) + '%"></i></span>';
  return h + '</div><div class="hx"><span>' + binText(range[0]) + '</span><span>' + binText(range[1]) +
    '</span></div></div>';
}
function sitesHtml(D) {
  var sites = D.messages.sites, n = Math.min(sites.length, SITES_SHOWN), h = '';
  h += '<h2>Message sizes per call site</h2><p class="note" id="msitesnote">' + sites.length + ' MPI call site' +
    (sites.length === 1 ? '' : 's') + ' moved messages (over every rank), the most bytes first' +
    (n < sites.length ? '; the first ' + n + ' shown (kmview --csv: rank_messages.csv has every one)' : '') +
    '. Each bar: the messages of a size bin (0, 1, 2–3, 4–7 ... bytes) against the site\'s fullest bin; ' +
    'hover it for its figures.</p><div class="sites" id="msites">';
  for (var k = 0; k < n; k++) h += siteHtml(D, sites[k], k);
  return h + '</div>';
}
function siteTips(D) {
  var host = document.getElementById('msites');
  function show(ev) {
    var bar = ev.target.closest ? ev.target.closest('.hb') : null;
    if (!bar) { KM.tip.hide(); return; }
    var s = D.messages.sites[+bar.closest('.site').dataset.site], n = +bar.dataset.n;
    KM.tip.show('<b>' + KM.esc(siteName(D, s)) + '</b><br>size: ' + binText(+bar.dataset.bin) + '<br>messages: ' +
                intText(n) + ' (' + KM.pct(n / s[2]) + ' of the site\'s)', ev);
  }
  host.addEventListener('mouseover', show);
  host.addEventListener('mousemove', show);
  host.addEventListener('mouseleave', function () { KM.tip.hide(); });
}

function view(main, D, S) {
  var part = partOf(D, S), h = '';
  if (part) h += matrixHtml(D, S, part) + pairsHtml(D, S, part);
  else h += '<p class="note" id="mnote">No rank sent point-to-point messages or took part in an all-to-all: ' +
            'the call sites below moved their bytes in other collectives.</p>';
  main.innerHTML = h + sitesHtml(D);
  if (part) drawMatrix(D, S, part);
  siteTips(D);
}

return {controls: controls, view: view, binText: binText};
})();
