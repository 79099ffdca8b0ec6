/* report.js — the views of kmview's HTML report (inlined into the page).
   What the original KMview applet showed: the routine profile, a routine's
   locations, every rank side by side ("AllPro"), computation and
   communication as two colours of one bar (either first) or one colour,
   original / ascending / descending order, elapsed / net / counts, the
   value and its percentage on hover, automatic or manual scale, and a
   history to go back and forth; plus a rank x routine heat map, what the
   MPI calls moved (messages.js: shown only when they moved something),
   what the I/O statements did to each file (files.js: shown only when
   some rank has a Files block), a flame graph of the calling-context
   trees (flame.js: format 6's Paths blocks) and the figures of the run.  The state lives in the URL's #fragment, so the
   browser's back and forward buttons (and << >>) walk the history and a
   view can be bookmarked.  Every figure that contains an estimate is
   marked '~' (and its hover says how much of it is estimated, where the
   file says), the estimated part of an elapsed-time bar is drawn in a
   lighter shade, and MPI start-up (MPI_INIT) has a colour of its own,
   apart from communication.  The prediction shows every rank's row (with
   libkm's overhead and the time the rank waited for a processor, when the
   file gives them) and says what it leaves out.  Never fetches anything. */
(function () {
'use strict';
var D = KM.data();
var N = D.ranks.length, R = D.routines.length, L = D.locations.length;
var F_TOTAL = 0, F_COUNTS = 1, F_OVERHEAD = 4, F_MPI = 6, F_STARTUP = 7, F_IO = 8, F_OUTSIDE = 9,
    F_UNINST = 10, F_EST = 11;
var fig = KM.array(D.fig), V1 = D.format < 2;
/* est masks: a bit per metric, as kmview's cells have them */
var EST = {elapsed: 1, net: 2, counts: 4, mpi: 8, io: 16};
var re = D.re ? KM.array(D.re) : null, le = D.le ? KM.array(D.le) : null;
var rv = {}, lv = {};
['elapsed', 'net', 'counts', 'mpi', 'io'].forEach(function (m) { rv[m] = KM.array(D.rv[m]); });
lv.elapsed = KM.array(D.lv.elapsed);
lv.counts = KM.array(D.lv.counts);
var colOfRank = {};
D.ranks.forEach(function (r, p) { colOfRank[r] = p; });
var locsOf = [], startupOf = [];
for (var i = 0; i < R; i++) { locsOf.push([]); startupOf.push([]); }
D.locations.forEach(function (l, j) { locsOf[l[0]].push(j); if (l[7]) startupOf[l[0]].push(j); });

var DEFAULT = {view: 'profile', rank: 'mean', metric: 'net', order: 'orig', mode: 'cc',
               scale: 'auto', max: '', routine: '', subject: 'program', hscale: 'routine',
               horder: D.groups ? 'cluster' : 'rank', tmetric: 'net',
               mpart: 'p2p', mshow: 'bytes', mscale: 'linear', msort: 'bytes', mrows: 'some',
               fsort: 'time', fiface: 'all', ffile: '', frows: 'some', pzoom: '', psearch: '', pthread: '0'};
var S = {};

/* ---- figures ----------------------------------------------------------- */
function figOf(k, p) {              /* p: column, or 'mean' */
  if (p === 'mean') {
    var s = 0;
    for (var q = 0; q < N; q++) s += fig[k * N + q];
    return N ? s / N : 0;
  }
  return fig[k * N + p];
}
var meanCache = {};
function rmean(m, i) {
  var a = meanCache[m];
  if (!a) {
    a = meanCache[m] = new Float64Array(R);
    var v = rv[m];
    for (var r = 0; r < R; r++) {
      var s = 0;
      for (var p = 0; p < N; p++) s += v[r * N + p];
      a[r] = N ? s / N : 0;
    }
  }
  return a[i];
}
function rval(m, i, p) { return p === 'mean' ? rmean(m, i) : rv[m][i * N + p]; }
function lval(m, j, p) {
  if (p !== 'mean') return lv[m][j * N + p];
  var s = 0;
  for (var q = 0; q < N; q++) s += lv[m][j * N + q];
  return N ? s / N : 0;
}
/* Estimates: est(...) whether a figure contains one, frac(...) how much
   of an elapsed time is estimated (NaN when the file does not say). */
function figEst(k, p) {
  if (p !== 'mean') return !!D.figEst[k * N + p];
  for (var q = 0; q < N; q++) if (D.figEst[k * N + q]) return true;
  return false;
}
function cellFrac(words, at) {
  if (!words) return V1 ? NaN : 0;
  var t = words[at] >> 5;
  return t === 1023 ? NaN : t / 1000;
}
function rEst(m, i, p) {
  if (p === 'mean') return (D.routines[i][4] & EST[m]) !== 0;
  return re ? (re[i * N + p] & EST[m]) !== 0 : false;
}
function rFrac(i, p) {
  if (p === 'mean') return D.routines[i][5] === null ? NaN : D.routines[i][5];
  return cellFrac(re, i * N + p);
}
function lEst(j, p) {
  if (p === 'mean') return !!D.locations[j][5];
  return le ? (le[j * N + p] & 1) !== 0 : false;
}
function lFrac(j, p) {
  if (p === 'mean') return D.locations[j][6] === null ? NaN : D.locations[j][6];
  return cellFrac(le, j * N + p);
}
/* A routine's MPI start-up: its CALL MPI_INIT locations. */
function rStartup(i, p) {
  var s = 0;
  startupOf[i].forEach(function (j) { s += lval('elapsed', j, p); });
  return s;
}
function rankName(p) { return p === 'mean' ? 'mean over ' + N + ' ranks' : 'rank ' + D.ranks[p]; }

/* A routine's bar: elapsed (MPI and I/O of its own calls and statements
   inside), net ("own time": net time, whose I/O part is shown apart, plus
   its own MPI calls, which libkm counts as callees: so the bar is the
   routine's time as the original KMtool counted it), or counts. */
function routineBar(i, p, metric) {
  if (metric === 'counts') {
    var c = rval('counts', i, p);
    return {value: c, segs: [['comp', c]], parts: null};
  }
  var mpi = rval('mpi', i, p), io = rval('io', i, p);
  if (metric === 'elapsed') {
    var e = rval('elapsed', i, p), su = rStartup(i, p);
    return {value: e, parts: {comp: Math.max(0, e - mpi - su - io), comm: mpi, startup: su, io: io},
            est: rEst('elapsed', i, p), frac: rFrac(i, p)};
  }
  /* its own MPI_INIT is its own MPI call too, but start-up: apart.  Est(%)
     is of the elapsed time: how much of the net time is estimated the
     file does not say */
  var net = rval('net', i, p), own = rStartup(i, p);
  return {value: net + mpi + own, net: net, parts: {comp: Math.max(0, net - io), comm: mpi, startup: own, io: io},
          est: rEst('net', i, p) || rEst('mpi', i, p), frac: NaN};
}
function locationBar(j, p, metric) {
  var v = lval(metric, j, p), kind = D.locations[j][1], su = D.locations[j][7];
  if (metric === 'counts') return {value: v, parts: null};
  return {value: v, parts: {comp: kind === 'MPI' || kind === 'IO' ? 0 : v,
                            comm: kind === 'MPI' && !su ? v : 0, startup: su ? v : 0, io: kind === 'IO' ? v : 0},
          est: lEst(j, p), frac: lFrac(j, p)};
}
function programBar(p, metric) {
  if (metric === 'counts') return {value: figOf(F_COUNTS, p), parts: null};
  var t = figOf(F_TOTAL, p), mpi = figOf(F_MPI, p), su = figOf(F_STARTUP, p), io = figOf(F_IO, p);
  return {value: t, parts: {comp: Math.max(0, t - mpi - su - io), comm: mpi, startup: su, io: io},
          est: figEst(F_TOTAL, p), frac: NaN};
}
/* A bar's coloured parts; the estimated part of each (frac of it) is drawn
   lighter, after the measured part. */
function segments(b) {
  if (!b.parts || S.mode === 'total') return shade([['tot', b.value]], b);
  var c = ['comp', b.parts.comp], m = ['comm', b.parts.comm], u = ['startup', b.parts.startup],
      o = ['io', b.parts.io];
  return shade(S.mode === 'mc' ? [m, u, o, c] : [c, m, u, o], b);
}
function shade(segs, b) {
  if (!(b.frac > 0) || S.metric === 'counts') return segs;
  var out = [];
  segs.forEach(function (s) { out.push([s[0], s[1] * (1 - b.frac)], [s[0] + ' est', s[1] * b.frac]); });
  return out;
}
function partsHtml(b, whole) {
  var h = KM.estText(b.est, b.frac);
  if (!b.parts) return h;
  h += '<br>computation ' + KM.sec(b.parts.comp) + ' · MPI ' + KM.sec(b.parts.comm) +
       (b.parts.startup ? ' · MPI start-up ' + KM.sec(b.parts.startup) : '') + ' · I/O ' + KM.sec(b.parts.io);
  if (b.net !== undefined) h += '<br>net time ' + KM.sec(b.net) + ' (' + KM.pct(b.net / whole) + ')';
  return h;
}

/* ---- state ------------------------------------------------------------- */
function readHash() {
  S = {};
  for (var k in DEFAULT) S[k] = DEFAULT[k];
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var e = kv.indexOf('=');
    if (e > 0) S[decodeURIComponent(kv.slice(0, e))] = decodeURIComponent(kv.slice(e + 1));
  });
  if (S.rank !== 'mean') S.rank = colOfRank[+S.rank] === undefined ? 'mean' : colOfRank[+S.rank];
  if (S.view === 'messages' && !D.messages) S.view = 'profile';
  if (S.view === 'files' && !D.files) S.view = 'profile';
  if (S.view === 'trace' && !D.trace) S.view = 'profile';
  if (S.view === 'paths' && !D.paths) S.view = 'profile';
  if (S.routine === '' || !(+S.routine >= 0 && +S.routine < R)) S.routine = firstWithLocations();
  else S.routine = +S.routine;
}
function hashOf(st) {
  var parts = [];
  for (var k in DEFAULT) {
    var v = k === 'rank' && st.rank !== 'mean' ? D.ranks[st.rank] : st[k];
    if (String(v) !== String(DEFAULT[k])) parts.push(k + '=' + encodeURIComponent(v));
  }
  return '#' + parts.join('&');
}
function go(changes) {
  for (var k in changes) S[k] = changes[k];
  if (S.view === 'locations' && S.metric === 'net') S.metric = 'elapsed';
  var h = hashOf(S);
  try { history.pushState(null, '', h || '#'); } catch (e) { /* a file: URL that refuses */ }
  render();
}
function firstWithLocations() {
  var best = -1, bv = -1;
  for (var i = 0; i < R; i++) {
    if (!locsOf[i].length) continue;
    var v = rmean('elapsed', i);
    if (v > bv) { best = i; bv = v; }
  }
  return best < 0 ? 0 : best;
}

/* ---- page -------------------------------------------------------------- */
function kpi(label, value, title) {
  return '<div class="kpi"' + (title ? ' title="' + KM.esc(title) + '"' : '') + '><b>' + value + '</b><span>' +
         label + '</span></div>';
}
var EST_TITLE = 'contains an estimate';
/* A share of the mean total time, marked when figure k contains an estimate. */
function figKpi(label, k, title) {
  var e = figEst(k, 'mean');
  return kpi(label, KM.mark(KM.pct(figOf(k, 'mean') / figOf(F_TOTAL, 'mean')), e),
             (title || '') + (e ? (title ? '; ' : '') + EST_TITLE : ''));
}
/* What the prediction leaves out: MPI start-up (format 2), and libkm's
   overhead (when the rows have it; the speedup divides by the longest
   T - S - O). */
var LEFT_OUT = D.pred && D.pred.withoutOverhead ? ' (no start-up, no libkm overhead)' :
               D.pred && D.pred.withoutStartup ? ' (no start-up)' : '';
var SPEEDUP = D.pred && D.pred.withoutOverhead ? 'T_1pe / max over ranks of (T − S − O)' : '';
/* KM_CLOCK=cpu: every time is CPU time, and the prediction is of CPU time,
   no speedup in wall time where ranks shared a processor. */
var CPU = D.cpuTime === 1, OF_CPU = CPU ? ' of CPU time (not of wall time)' : '';
function predKpis() {
  var P = D.pred, f = P.fig, e = function (k) { return (P.est >> k & 1) === 1; };
  var title = function (k, what) { return [what, e(k) ? EST_TITLE : ''].filter(Boolean).join('; '); };
  if (!P.available)
    return kpi('prediction', 'n/a', P.reason || 'the file gives no prediction');
  return kpi('predicted one-PE ' + (CPU ? 'CPU ' : '') + 'time T_1pe' + LEFT_OUT, KM.mark(KM.sec(f[0]), e(0)), title(0)) +
    kpi('predicted speedup' + OF_CPU, KM.mark(KM.num(f[1]), e(1)), title(1, SPEEDUP)) +
    kpi('predicted efficiency' + OF_CPU, KM.mark(KM.pct(f[2]), e(2)), title(2));
}
/* MPI start-up apart from MPI: a short run spends much of its time in
   MPI_INIT, and that says nothing about its communication. */
function header() {
  var t = figOf(F_TOTAL, 'mean'), h = '<header><h1>kmview — ' + KM.esc(D.program || '?') + '</h1>' +
    '<p class="facts">' + KM.esc(D.source) + ' · ' + KM.esc(D.rankText) + ' · started ' +
    KM.esc(D.started || '?') + ' · written at ' + KM.esc(D.writtenAt || '?') + ' · clock ' +
    KM.esc(D.clock || '?') + (CPU ? ' · <span id="cputime">every time is CPU time, not elapsed time</span>' : '') + (V1 ? ' · KM_output format 1: estimates not marked, MPI start-up taken from ' +
    'its CALL MPI_INIT statements' : '') + (D.binned ? ' · <span id="binned">' + D.binned.ranks +
    ' ranks shown as ' + D.binned.columns + ' columns, each the mean of ' + D.binned.per +
    ' consecutive ranks (no per-thread table; kmview --csv has every rank)</span>' : '') +
    '</p><div class="kpis" id="kpis">' +
    kpi((CPU ? 'total CPU time' : 'total time') + ' (mean over ranks)', KM.mark(KM.sec(t), figEst(F_TOTAL, 'mean'))) +
    figKpi('MPI communication (after start-up)', F_MPI) +
    figKpi('MPI start-up (MPI_INIT)', F_STARTUP) + figKpi('I/O', F_IO);
  if (!V1) h += figKpi('estimated', F_EST, 'the share of the time whose place libkm estimated');
  h += kpi('routines', R) + kpi('locations', L);
  if (D.pred) h += predKpis();
  return h + '</div></header>';
}
function nav() {
  var views = [['Profile', 'profile'], ['Locations', 'locations', L === 0], ['Ranks', 'ranks'],
               ['Heat map', 'heat'], ['Timeline', 'timeline', !D.timeline], ['Threads', 'threads', !D.threads],
               ['Paths', 'paths', !D.paths],
               ['Figures', 'figures']];
  /* a run without messages has no Messages view at all, not an empty one */
  if (D.messages) views.splice(views.length - 1, 0, ['Messages', 'messages']);
  if (D.files) views.splice(views.length - 1, 0, ['Files', 'files']);
  if (D.trace) views.splice(views.length - 1, 0, ['Trace', 'trace']);
  var h = '<nav id="nav"><span class="group" data-group="view"><label>View</label>';
  views.forEach(function (v) {
    h += '<button class="view' + (S.view === v[1] ? ' on' : '') + '" data-k="view" data-v="' + v[1] + '"' +
         (v[2] ? ' disabled' : '') + '>' + v[0] + '</button>';
  });
  h += '</span>';
  h += '<span class="group"><button id="back" title="previous view">&lt;&lt;</button>' +
       '<button id="fwd" title="next view">&gt;&gt;</button></span></nav>';
  return h;
}
function rankSelect() {
  var h = '<span class="group"><label for="rank">Rank</label><select id="rank">' +
          '<option value="mean">all (mean)</option>';
  for (var p = 0; p < N; p++)
    h += '<option value="' + p + '"' + (S.rank === p ? ' selected' : '') + '>' + D.ranks[p] + '</option>';
  return h + '</select></span>';
}
function routineSelect() {
  var h = '<span class="group"><label for="routine">Routine</label><select id="routine">';
  for (var i = 0; i < R; i++)
    if (locsOf[i].length)
      h += '<option value="' + i + '"' + (S.routine === i ? ' selected' : '') + '>' +
           KM.esc(D.routines[i][0]) + ' (' + locsOf[i].length + ')</option>';
  return h + '</select></span>';
}
function locLabel(j) {
  var l = D.locations[j];
  return D.routines[l[0]][0] + ' ' + l[1] + ' ' + l[2] + ': ' + l[3];
}
function subjectSelect() {
  var h = '<span class="group"><label for="subject">Of</label><select id="subject">' +
          '<option value="program">the whole program (total time)</option><optgroup label="routines">';
  for (var i = 0; i < R; i++)
    h += '<option value="r' + i + '"' + (S.subject === 'r' + i ? ' selected' : '') + '>' +
         KM.esc(D.routines[i][0]) + '</option>';
  h += '</optgroup><optgroup label="locations">';
  for (var j = 0; j < L; j++)
    h += '<option value="l' + j + '"' + (S.subject === 'l' + j ? ' selected' : '') + '>' +
         KM.esc(locLabel(j).slice(0, 90)) + '</option>';
  return h + '</optgroup></select></span>';
}
function metricToggles(noNet) {
  return KM.toggles('Show', 'metric', [['Elapsed Time', 'elapsed'], ['Net Time', 'net', noNet],
                                       ['Exec Counts', 'counts']], S.metric);
}
function barControls() {
  return KM.toggles('Order', 'order', [['Original', 'orig'], ['Ascending', 'asc'], ['Descending', 'desc']], S.order) +
    KM.toggles('Bars', 'mode', [['Total Time', 'total'], ['Comp & Comm', 'cc'], ['Comm & Comp', 'mc']], S.mode) +
    KM.toggles('Scale', 'scale', [['Automatic', 'auto'], ['Manual', 'manual']], S.scale) +
    (S.scale === 'manual' ? '<input class="max" id="max" type="number" min="0" step="any" value="' +
     KM.esc(S.max) + '" title="the value of a full bar">' : '');
}
function controls() {
  var h = '<div class="controls" id="controls">';
  if (S.view === 'profile') h += rankSelect() + metricToggles(false) + barControls();
  else if (S.view === 'locations') h += routineSelect() + rankSelect() + metricToggles(true) + barControls();
  else if (S.view === 'ranks') h += subjectSelect() + metricToggles(S.subject.charAt(0) === 'l') + barControls();
  else if (S.view === 'heat')
    h += metricToggles(false) + KM.toggles('Routines', 'order', [['Original', 'orig'], ['Ascending', 'asc'],
                                                                  ['Descending', 'desc']], S.order) +
      KM.toggles('Colour', 'hscale', [['Whole map', 'map'], ['Each routine vs its mean', 'routine']], S.hscale) +
      KM.toggles('Ranks', 'horder', [['By number', 'rank'], ['By cluster', 'cluster', !D.groups]], S.horder);
  else if (S.view === 'threads' && D.threads)
    h += KM.toggles('Show', 'tmetric', [['Net Time', 'net'], ['Total', 'total'], ['Outside', 'outside'],
                                        ['MPI', 'mpi'], ['Routine Counts', 'counts']], S.tmetric);
  else if (S.view === 'messages' && D.messages) h += KM.msg.controls(D, S);
  else if (S.view === 'files' && D.files) h += KM.files.controls(D, S);
  else if (S.view === 'trace' && D.trace) h += KM.trace.controls(D, S);
  else if (S.view === 'paths' && D.paths) h += KM.flame.controls(D, S, rankSelect());
  return h + '</div>';
}
function legend(items) {
  var est = items.some(function (it) { return it.est; }), h = '';
  var part = items.some(function (it) { return it.frac > 0; }) && S.metric !== 'counts';
  if (est) h += '<span id="estlegend">~ contains an estimate' + (part ? '; lighter: the estimated part' : '') +
                '</span>';
  if (S.metric === 'counts' || !(items.length && items[0].parts))
    return h ? '<div class="legend">' + h + '</div>' : '';
  if (S.mode === 'total') return '<div class="legend"><span><i class="tot"></i>time</span>' + h + '</div>';
  return '<div class="legend"><span><i class="comp"></i>computation</span><span><i class="comm"></i>' +
         'communication (MPI)</span><span><i class="startup"></i>MPI start-up</span><span><i class="io"></i>' +
         'I/O</span>' + h + '</div>';
}
function scaleMax(items) {
  if (S.scale === 'manual' && +S.max > 0) return +S.max;
  var m = 0;
  items.forEach(function (it) { if (it.value > m) m = it.value; });
  return m;
}
function fmtFor() { return S.metric === 'counts' ? KM.count : KM.sec; }
function metricName() { return {elapsed: 'elapsed', net: 'net (own time)', counts: 'counts'}[S.metric]; }

/* Percentages: times of the rank's total time (of the mean total for the
   mean), counts of the sum of the counts shown. */
function wholeOf(items, p) {
  if (S.metric !== 'counts') return figOf(F_TOTAL, p);
  var s = 0;
  items.forEach(function (it) { s += it.value; });
  return s;
}
function drawBars(main, items, note) {
  var whole = items.whole;
  main.innerHTML = '<p class="note" id="note">' + note + '</p>' + legend(items) + '<div id="chart"></div>';
  var shown = KM.order(items, S.order), fmt = fmtFor();
  items.forEach(function (it) {
    it.segs = segments(it);
    if (!it.tip) it.tip = function () {
      var w = it.whole !== undefined ? it.whole : whole;
      return '<b>' + KM.esc(it.label) + '</b><br>' + metricName() + ': ' + KM.mark(fmt(it.value), it.est) + ' (' +
             KM.pct(it.value / w) + ' of ' + (S.metric === 'counts' ? 'all counts shown' : it.ofWhat) +
             ')' + partsHtml(it, w);
    };
  });
  /* times also show their share, as the hover does */
  KM.bars(document.getElementById('chart'), shown, scaleMax(items), function (v, it) {
    if (S.metric === 'counts') return fmt(v);
    return KM.mark(fmt(v), it.est) + ' · ' + KM.pct(v / (it.whole !== undefined ? it.whole : whole));
  });
  return shown;
}

function profileView(main) {
  var p = S.rank, items = [];
  for (var i = 0; i < R; i++) {
    var b = routineBar(i, p, S.metric);
    b.label = D.routines[i][0];
    b.pos = i;
    b.ofWhat = 'total time, ' + rankName(p);
    b.labelHtml = '<a data-routine="' + i + '" title="' + (locsOf[i].length ? 'its locations' : 'every rank') +
                  '">' + KM.esc(b.label) + '</a>' + (D.routines[i][3] ? '<sup>+</sup>' : '');
    items.push(b);
  }
  items.whole = wholeOf(items, p);
  drawBars(main, items, 'Routine profile, ' + rankName(p) + ': ' + metricName() + ' of ' + R +
           ' routines. Click a routine for its locations (or every rank). ' +
           (S.metric === 'net' ? 'Net bars add the routine\'s own MPI calls (its MPI start-up apart) to its net time.' : ''));
}
function locationsView(main) {
  var p = S.rank, i = S.routine, items = [];
  locsOf[i].forEach(function (j, k) {
    var b = locationBar(j, p, S.metric), l = D.locations[j];
    b.label = l[1] + ' ' + l[2] + ': ' + l[3];
    b.labelHtml = '<a data-location="' + j + '" title="every rank">' + KM.esc(l[1]) + ' ' + l[2] + '</a> ' +
                  KM.esc(l[3]);
    b.pos = k;
    b.ofWhat = 'total time, ' + rankName(p);
    items.push(b);
  });
  items.whole = wholeOf(items, p);
  var r = D.routines[i];
  drawBars(main, items, 'Locations of ' + KM.esc(r[0]) + (r[1] ? ' (' + KM.esc(r[1]) + ', line ' + r[2] + ')' : '') +
           ', ' + rankName(p) + ': ' + metricName() + '. Click a location for every rank.');
}
function ranksView(main) {
  var subj = S.subject, items = [], what;
  var kind = subj.charAt(0), id = +subj.slice(1);
  if (kind === 'l' && S.metric === 'net') S.metric = 'elapsed';
  for (var p = 0; p < N; p++) {
    var b = kind === 'r' ? routineBar(id, p, S.metric) : kind === 'l' ? locationBar(id, p, S.metric)
          : programBar(p, S.metric);
    b.label = 'rank ' + D.ranks[p];
    b.pos = p;
    if (S.metric !== 'counts') b.whole = figOf(F_TOTAL, p);
    b.ofWhat = 'rank ' + D.ranks[p] + '\'s total time';
    items.push(b);
  }
  if (S.metric === 'counts') items.whole = wholeOf(items, 'mean');
  what = kind === 'r' ? 'routine ' + KM.esc(D.routines[id][0]) : kind === 'l' ? KM.esc(locLabel(id))
       : 'the whole program (total time per rank)';
  drawBars(main, items, 'Every rank side by side: ' + metricName() + ' of ' + what + '.');
}

/* ---- heat map ---------------------------------------------------------- */
var heatColour = KM.heatColour;
function heatView(main) {
  var metric = S.metric, cols = [], rows = [];
  for (var i = 0; i < R; i++) cols.push({value: routineBar(i, 'mean', metric).value, pos: i, i: i});
  cols = KM.order(cols, S.order).map(function (c) { return c.i; });
  if (S.horder === 'cluster' && D.groups) rows = D.groups.order.slice();
  else for (var p = 0; p < N; p++) rows.push(p);
  var cw = Math.max(1, Math.min(40, Math.floor(1100 / Math.max(1, R))));
  var ch = Math.max(1, Math.min(24, Math.floor(700 / Math.max(1, N))));
  var left = ch >= 9 ? 70 : 0, top = cw >= 9 ? 110 : 0;
  var W = left + cw * R, H = top + ch * N;
  main.innerHTML = '<p class="note" id="note">Rank × routine heat map of ' + metricName() + ': ' + N +
    ' ranks (rows' + (S.horder === 'cluster' && D.groups ? ', ordered by cluster' : '') + ') × ' + R +
    ' routines (columns). ' + (S.hscale === 'routine' ? 'Colour: each cell against its routine\'s mean ' +
    'over ranks (blue below, red above; white the mean).' : 'Colour: the cell\'s value against the largest ' +
    'of the map.') + ' Hover a cell for its figures; click it for every rank of that routine.</p>' +
    '<div class="scale" id="hscale"></div><div class="heat"><canvas id="heat" width="' + W + '" height="' + H +
    '"></canvas></div>';
  var cv = document.getElementById('heat'), ctx = cv.getContext('2d');
  var img = ctx.createImageData(cw * R, ch * N), px = img.data, vmax = 0, val = new Float64Array(R * N);
  for (var c = 0; c < R; c++)
    for (var r = 0; r < N; r++) {
      var v = routineBar(cols[c], rows[r], metric).value;
      val[r * R + c] = v;
      if (v > vmax) vmax = v;
    }
  var mean = new Float64Array(R);
  for (c = 0; c < R; c++) mean[c] = routineBar(cols[c], 'mean', metric).value;
  var rowBytes = cw * R * 4;
  for (r = 0; r < N; r++) {
    for (c = 0; c < R; c++) {
      v = val[r * R + c];
      var t = S.hscale === 'routine' ? (mean[c] > 0 ? v / mean[c] / 2 : 0.5) : (vmax > 0 ? v / vmax : 0);
      var rgb = heatColour(t, S.hscale === 'routine');
      for (var x = 0; x < cw; x++) {
        var o = r * ch * rowBytes + (c * cw + x) * 4;
        px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
      }
    }
    for (var y = 1; y < ch; y++)
      px.copyWithin(r * ch * rowBytes + y * rowBytes, r * ch * rowBytes, r * ch * rowBytes + rowBytes);
  }
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  ctx.putImageData(img, left, top);
  ctx.fillStyle = '#1d2330';
  ctx.font = '11px system-ui, sans-serif';
  if (left) for (r = 0; r < N; r++) {
    var g = D.groups ? D.groups.group[rows[r]] : 0, out = D.groups && D.groups.outlier[g];
    ctx.fillStyle = out ? '#b3261e' : '#1d2330';
    ctx.fillText('rank ' + D.ranks[rows[r]] + (out ? ' !' : ''), 2, top + r * ch + ch / 2 + 4);
  }
  ctx.fillStyle = '#1d2330';
  if (top) for (c = 0; c < R; c++) {
    ctx.save();
    ctx.translate(left + c * cw + cw / 2 + 4, top - 4);
    ctx.rotate(-Math.PI / 3);
    ctx.fillText(D.routines[cols[c]][0].slice(0, 16), 0, 0);
    ctx.restore();
  }
  heatScale(document.getElementById('hscale'), vmax);
  function cell(ev) {
    var b = cv.getBoundingClientRect();
    var cx = Math.floor((ev.clientX - b.left - left) / cw), cy = Math.floor((ev.clientY - b.top - top) / ch);
    return cx >= 0 && cx < R && cy >= 0 && cy < N ? {c: cx, r: cy} : null;
  }
  cv.addEventListener('mousemove', function (ev) {
    var k = cell(ev);
    if (!k) { KM.tip.hide(); return; }
    var i = cols[k.c], p = rows[k.r], b = routineBar(i, p, metric), fmt = fmtFor();
    var whole = metric === 'counts' ? figOf(F_COUNTS, p) : figOf(F_TOTAL, p);
    KM.tip.show('<b>rank ' + D.ranks[p] + ' · ' + KM.esc(D.routines[i][0]) + '</b><br>' + metricName() + ': ' +
      KM.mark(fmt(b.value), b.est) + ' (' + KM.pct(b.value / whole) + ' of the rank\'s ' +
      (metric === 'counts' ? 'routine counts' : 'total time') + ')<br>' +
      KM.num(mean[k.c] > 0 ? b.value / mean[k.c] : NaN) + ' × the routine\'s mean over ranks' +
      partsHtml(b, whole), ev);
  });
  cv.addEventListener('mouseleave', function () { KM.tip.hide(); });
  cv.addEventListener('click', function (ev) {
    var k = cell(ev);
    if (k) go({view: 'ranks', subject: 'r' + cols[k.c]});
  });
}
function heatScale(host, vmax, sequential) {
  var diverging = !sequential && S.hscale === 'routine';
  var c = document.createElement('canvas');
  c.width = 160; c.height = 10;
  var x = c.getContext('2d');
  for (var i = 0; i < 160; i++) {
    var rgb = heatColour(i / 159, diverging);
    x.fillStyle = 'rgb(' + rgb.map(Math.round).join(',') + ')';
    x.fillRect(i, 0, 1, 10);
  }
  var hi = diverging ? '2 × mean' : fmtFor()(vmax);
  host.innerHTML = '<span>0</span>';
  host.appendChild(c);
  host.insertAdjacentHTML('beforeend', '<span>' + hi + '</span>');
}

/* ---- timeline ---------------------------------------------------------- */
/* Rank x time slot: each cell the mix of what the rank did in the slot
   (computation green, MPI red, I/O blue, other grey, in proportion), dark
   as the slot is full; the phases as a band above, the ranks that depart
   from the main group marked; hover for the figures. */
var TL_COLOURS = [[46, 139, 87], [200, 50, 40], [40, 90, 200], [170, 170, 170]];
var TL_NAMES = ['computation', 'MPI', 'I/O', 'other'];
function tlCell(v, p, s) {
  var T = D.timeline, o = (p * T.slots + s) * 4;
  return [v[o], v[o + 1], v[o + 2], v[o + 3]];
}
function tlColour(c, width) {
  var sum = c[0] + c[1] + c[2] + c[3], rgb = [255, 255, 255];
  if (!(sum > 0)) return rgb;
  var fill = Math.min(1, sum / width);
  for (var k = 0; k < 3; k++) {
    var mix = 0;
    for (var j = 0; j < 4; j++) mix += TL_COLOURS[j][k] * c[j] / sum;
    rgb[k] = 255 - (255 - mix) * fill;
  }
  return rgb;
}
function timelineView(main) {
  var T = D.timeline, v = KM.array(T.v), S_ = T.slots;
  var cw = Math.max(2, Math.min(16, Math.floor(1000 / S_))), ch = Math.max(1, Math.min(16, Math.floor(600 / N)));
  var left = ch >= 9 ? 70 : 0, band = 14, W = left + cw * S_, H = band + ch * N;
  var departs = {};
  T.departs.forEach(function (d) { departs[d[0]] = d; });
  var h = '<p class="note" id="tlnote">Rank × time timeline: ' + N + (D.binned ? ' columns of ranks' : ' ranks') +
    ' (rows) × ' + S_ + ' slots of ' + KM.sec(T.width) + ' from ' + (T.originMpi ? 'MPI_INIT\'s return' : 'the start') +
    ' (columns). Colour: computation, MPI, I/O and other time of the slot mixed in proportion (' +
    TL_NAMES.map(function (n, k) { return '<span class="sw" style="background:rgb(' + TL_COLOURS[k].join(',') +
      ')"></span> ' + n; }).join(', ') + '), paler where the slot was not full. The band above shows the ' +
    'phases. Hover a cell for its figures.' + (T.est ? ' ' + EST_TITLE : '') + '</p>' +
    '<div class="heat"><canvas id="timeline" width="' + W + '" height="' + H + '"></canvas></div>';
  h += '<h2>Phases</h2><table id="tlphases"><tr><th>phase</th><th>slots</th><th>from (s)</th><th>to (s)</th>' +
       '<th>kind</th></tr>';
  T.phases.forEach(function (ph, k) {
    h += '<tr><td>' + (k + 1) + '</td><td>' + ph[0] + '–' + ph[1] + '</td><td>' + KM.num(ph[0] * T.width) +
         '</td><td>' + KM.num((ph[1] + 1) * T.width) + '</td><td>' + String.fromCharCode(65 + ph[2] % 26) + '</td></tr>';
  });
  h += '</table><h2>Ranks departing from the main group over time</h2>';
  if (T.departs.length) {
    h += '<table id="tldeparts"><tr><th>rank</th><th>departs at slot</th><th>most in slot</th></tr>';
    T.departs.slice(0, 200).forEach(function (d) {
      h += '<tr><td class="outlier">' + d[0] + '</td><td>' + d[1] + ' (' + KM.num(d[1] * T.width) + ' s)</td><td>' +
           d[2] + ' (' + KM.num(d[2] * T.width) + ' s)</td></tr>';
    });
    h += '</table>';
  } else h += '<p class="note" id="tldeparts">None: no rank\'s timeline stands apart at this cut.</p>';
  main.innerHTML = h;
  var cv = document.getElementById('timeline'), ctx = cv.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  var img = ctx.createImageData(cw * S_, ch * N), px = img.data, rowBytes = cw * S_ * 4;
  for (var p = 0; p < N; p++) {
    for (var s = 0; s < S_; s++) {
      var rgb = tlColour(tlCell(v, p, s), T.width);
      for (var x = 0; x < cw; x++) {
        var o = p * ch * rowBytes + (s * cw + x) * 4;
        px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
      }
    }
    for (var y = 1; y < ch; y++)
      px.copyWithin(p * ch * rowBytes + y * rowBytes, p * ch * rowBytes, p * ch * rowBytes + rowBytes);
  }
  ctx.putImageData(img, left, band);
  T.phases.forEach(function (ph) {
    ctx.fillStyle = 'hsl(' + (ph[2] * 67 % 360) + ',55%,60%)';
    ctx.fillRect(left + ph[0] * cw, 0, (ph[1] - ph[0] + 1) * cw - 1, band - 3);
  });
  ctx.font = '11px system-ui, sans-serif';
  if (left) for (p = 0; p < N; p++) {
    var d = departs[D.ranks[p]];
    ctx.fillStyle = d ? '#b3261e' : '#1d2330';
    ctx.fillText('rank ' + D.ranks[p] + (d ? ' !' : ''), 2, band + p * ch + ch / 2 + 4);
  }
  cv.addEventListener('mousemove', function (ev) {
    var b = cv.getBoundingClientRect();
    var s = Math.floor((ev.clientX - b.left - left) / cw), p = Math.floor((ev.clientY - b.top - band) / ch);
    if (s < 0 || s >= S_ || p < 0 || p >= N) { KM.tip.hide(); return; }
    var c = tlCell(v, p, s), t = '<b>' + rankName(p) + ' · slot ' + s + '</b> (' + KM.sec(s * T.width) + ' – ' +
      KM.sec((s + 1) * T.width) + ')';
    for (var k = 0; k < 4; k++)
      t += '<br>' + TL_NAMES[k] + ': ' + KM.mark(KM.sec(c[k]), (T.est >> k & 1) === 1);
    KM.tip.show(t, ev);
  });
  cv.addEventListener('mouseleave', function () { KM.tip.hide(); });
}

/* ---- threads ----------------------------------------------------------- */
/* Rank x thread: every thread's figures (KM_output's Threads blocks), then
   the regions threads other than 0 ran, the longest first. */
function threadsView(main) {
  var T = D.threads, M = T.max, W = T.w, tv = KM.array(T.v), key = S.tmetric;
  var ki = T.keys.indexOf(key), omp = T.keys.indexOf('omp'), fmt = key === 'counts' ? KM.count : KM.sec;
  var tval = function (p, t, k) { return tv[(p * M + t) * W + k]; };
  var cw = Math.max(4, Math.min(40, Math.floor(1000 / M))), ch = Math.max(1, Math.min(24, Math.floor(600 / N)));
  var left = ch >= 9 ? 70 : 0, top = cw >= 14 ? 20 : 0, Wd = left + cw * M, H = top + ch * N, vmax = 0;
  for (var p = 0; p < N; p++)
    for (var t = 0; t < M; t++) if (tval(p, t, ki) > vmax) vmax = tval(p, t, ki);
  var h = '<p class="note" id="note">Rank × thread map of each thread\'s ' + KM.esc(key) + ': ' + N +
    ' ranks (rows) × up to ' + M + ' threads (columns, numbered in the order they first called libkm; grey: ' +
    'no such thread). A rank\'s profile is its thread 0\'s (the program\'s thread). Colour: the cell against ' +
    'the largest of the map. Hover a cell for its figures.</p><div class="scale" id="hscale"></div>' +
    '<div class="heat"><canvas id="theat" width="' + Wd + '" height="' + H + '"></canvas></div>';
  h += '<h2>Regions threads other than 0 ran</h2><p class="note">The ' + T.regions.length + ' longest of ' +
    T.nregions + ', by mean time per thread' + (N > 1 ? ' (over ranks: counts added, the least min, the mean ' +
    'mean, the largest max)' : '') + '. Imbalance: (max − mean) / max.</p><table id="tregions"><tr>' +
    '<th class="l">routine</th><th>kind</th><th>line</th><th>threads</th><th>counts</th><th>min</th>' +
    '<th>mean</th><th>max</th><th>imbalance</th>' + (N > 1 ? '<th>max at rank</th>' : '') +
    '<th class="l">statement</th></tr>';
  T.regions.forEach(function (g) {
    var loc = g[1] >= 0 ? D.locations[g[1]] : null, e = g[5] === 1;
    h += '<tr><td class="l">' + KM.esc(D.routines[g[0]][0]) + '</td><td>' + (loc ? loc[1] : 'ROUT') +
      '</td><td>' + (loc ? loc[2] : D.routines[g[0]][2]) + '</td><td>' + g[2] + '</td><td>' +
      (g[4] ? '+' : '') + KM.count(g[3]) + '</td><td>' + KM.mark(KM.sec(g[6]), e) + '</td><td>' +
      KM.mark(KM.sec(g[7]), e) + '</td><td>' + KM.mark(KM.sec(g[8]), e) + '</td><td>' + KM.pct(g[9]) +
      '</td>' + (N > 1 ? '<td>' + g[10] + '</td>' : '') + '<td class="l">' + (loc ? KM.esc(loc[3]) : '') +
      '</td></tr>';
  });
  main.innerHTML = h + '</table>';
  var cv = document.getElementById('theat'), ctx = cv.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, Wd, H);
  for (p = 0; p < N; p++)
    for (t = 0; t < M; t++) {
      var v = tval(p, t, ki);
      if (isNaN(v)) ctx.fillStyle = '#ddd';
      else ctx.fillStyle = 'rgb(' + heatColour(vmax > 0 ? v / vmax : 0, false).map(Math.round).join(',') + ')';
      ctx.fillRect(left + t * cw, top + p * ch, cw - (cw > 6 ? 1 : 0), ch - (ch > 6 ? 1 : 0));
    }
  ctx.fillStyle = '#1d2330';
  ctx.font = '11px system-ui, sans-serif';
  if (left) for (p = 0; p < N; p++) ctx.fillText('rank ' + D.ranks[p], 2, top + p * ch + ch / 2 + 4);
  if (top) for (t = 0; t < M; t++) ctx.fillText(String(t), left + t * cw + 2, 14);
  var sc = document.getElementById('hscale');
  heatScale(sc, vmax, true);
  sc.lastChild.textContent = fmt(vmax);
  cv.addEventListener('mousemove', function (ev) {
    var b = cv.getBoundingClientRect();
    var t = Math.floor((ev.clientX - b.left - left) / cw), p = Math.floor((ev.clientY - b.top - top) / ch);
    if (t < 0 || t >= M || p < 0 || p >= N || isNaN(tval(p, t, 0))) { KM.tip.hide(); return; }
    var tip = '<b>rank ' + D.ranks[p] + ' · thread ' + t + ' (OpenMP ' + tval(p, t, omp) + ')</b>';
    T.keys.forEach(function (k, i) {
      if (k !== 'omp') tip += '<br>' + k + ': ' + (k === 'counts' ? KM.count : KM.sec)(tval(p, t, i));
    });
    KM.tip.show(tip, ev);
  });
  cv.addEventListener('mouseleave', function () { KM.tip.hide(); });
}

/* ---- figures ----------------------------------------------------------- */
function figureTable() {
  var h = '<h2>Header figures</h2><table id="figtable"><tr><th class="l">figure</th>';
  var perRank = N <= 16;
  if (perRank) for (var p = 0; p < N; p++) h += '<th>rank ' + D.ranks[p] + '</th>';
  else h += '<th>min</th><th>mean</th><th>max</th><th>max at rank</th>';
  h += '</tr>';
  D.figures.forEach(function (f, k) {
    if (!f[2]) return;                             /* the format has no such figure */
    var fmt = f[1] ? KM.count : KM.num;
    h += '<tr><td class="l">' + KM.esc(f[0]) + (f[1] ? '' : ' (s)') + '</td>';
    if (perRank) for (var p = 0; p < N; p++) h += '<td>' + KM.mark(fmt(fig[k * N + p]), D.figEst[k * N + p]) + '</td>';
    else {
      var mn = Infinity, mx = -Infinity, s = 0, at = 0, e = figEst(k, 'mean');
      for (p = 0; p < N; p++) {
        var v = fig[k * N + p];
        s += v; if (v < mn) mn = v; if (v > mx) { mx = v; at = p; }
      }
      h += '<td>' + KM.mark(fmt(mn), e) + '</td><td>' + KM.mark(KM.num(s / N), e) + '</td><td>' +
           KM.mark(fmt(mx), e) + '</td><td>' + D.ranks[at] + '</td>';
    }
    h += '</tr>';
  });
  return h + '</table>';
}
function sharesTable() {
  var t = figOf(F_TOTAL, 'mean'), mpi = figOf(F_MPI, 'mean'), su = figOf(F_STARTUP, 'mean'),
      io = figOf(F_IO, 'mean'), net = 0;
  for (var i = 0; i < R; i++) net += rmean('net', i);
  var h = '<h2>Where the time goes (mean over ranks)</h2><table id="shares"><tr><th class="l"></th>' +
          '<th>seconds</th><th>share</th></tr>';
  var rows = [['Total time', t, figEst(F_TOTAL, 'mean')], ['MPI communication (after start-up)', mpi, figEst(F_MPI, 'mean')],
    ['MPI start-up (MPI_INIT)', su, figEst(F_STARTUP, 'mean')], ['I/O', io, figEst(F_IO, 'mean')],
    ['Computation (total − MPI − start-up − I/O)', t - mpi - su - io,
     figEst(F_TOTAL, 'mean') || figEst(F_MPI, 'mean') || figEst(F_STARTUP, 'mean') || figEst(F_IO, 'mean')],
    ['Net time of the routines', net, D.timeEst.net, D.timeEst.netFrac],
    ['Outside routines', figOf(F_OUTSIDE, 'mean'), figEst(F_OUTSIDE, 'mean')],
    ['In uninstrumented routines', figOf(F_UNINST, 'mean'), figEst(F_UNINST, 'mean')],
    ['libkm overhead', figOf(F_OVERHEAD, 'mean'), figEst(F_OVERHEAD, 'mean')]];
  if (!V1) rows.push(['Estimated (place of the time estimated)', figOf(F_EST, 'mean'), figEst(F_EST, 'mean')]);
  rows.forEach(function (r) {
    var tip = r[2] ? ' title="' + KM.esc(KM.estText(true, r[3]).replace('<br>', '')) + '"' : '';
    h += '<tr><td class="l">' + r[0] + '</td><td' + tip + '>' + KM.mark(KM.num(r[1]), r[2]) + '</td><td>' +
         KM.pct(r[1] / t) + '</td></tr>';
  });
  h += '</table>';
  if (D.startupFromStatements)
    h += '<p class="note">KM_output format 1 counts MPI_INIT in its MPI time: kmview took the time of the ' +
         'CALL MPI_INIT statements out of MPI as MPI start-up.</p>';
  if (D.plain > 0) return h + plainTable(t);
  if (figOf(F_OVERHEAD, 'mean') === figOf(F_OVERHEAD, 'mean'))   /* (not NaN) */
    h += '<p class="note">libkm overhead: libkm\'s own work. What measuring cost in all needs the plain ' +
         'build\'s time (kmview --plain=SECONDS).</p>';
  return h;
}
/* The run against the plain build's run of the same input (kmview
   --plain): what measuring really cost, how much of it libkm's figure
   accounts for (its own work, at costs calibrated hot in the caches), and
   the rest, which the routines' times hold (summary.c's against_plain). */
function plainTable(t) {
  var p = D.plain, o = figOf(F_OVERHEAD, 'mean'), oe = figEst(F_OVERHEAD, 'mean'), added = t - p;
  /* no negative figure: a run no slower than the plain one, or one that lost less than libkm's figure, is
     said so below */
  var rows = [['Plain run (as given)', p, false], ['Instrumented run (total time)', t, figEst(F_TOTAL, 'mean')]];
  if (added > 0) rows.push(['Added by measuring (the difference)', added, false]);
  rows.push(['\u2003libkm\'s overhead figure', o, oe]);
  if (added > o) rows.push(['\u2003the rest, held in the routines\' times', added - o, oe]);
  var h = '<h2>Against the plain run (mean over ranks)</h2><table id="plain"><tr><th class="l"></th>' +
          '<th>seconds</th><th>of plain</th></tr>';
  rows.forEach(function (r) {
    h += '<tr><td class="l">' + r[0] + '</td><td>' + KM.mark(KM.num(r[1]), r[2]) + '</td><td>' +
         KM.pct(r[1] / p) + '</td></tr>';
  });
  h += '</table>';
  if (CPU) h += '<p class="note">Every time of this run is CPU time: the plain time given must be too.</p>';
  if (added <= 0)
    h += '<p class="note">The instrumented run was no slower than the plain one: what measuring cost is below ' +
         'the difference between two runs of either.</p>';
  else if (added > o)
    h += '<p class="note">libkm\'s figure accounts for ' + Math.round(100 * o / added) + '% of the cost. The ' +
         'rest is what the instrumented code does to the program\'s own (the calls, another code layout, caches ' +
         'and branch predictors shared with libkm): libkm cannot see it, so the routines\' times hold it, most ' +
         'in those that run most often or share the most with it.</p>';
  else
    h += '<p class="note">libkm\'s figure is above what the run lost: its calibrated costs overstate the cost ' +
         'here, or the plain run was slower than usual.</p>';
  return h;
}
function predictionTable() {
  var P = D.pred;
  if (!P) return '<h2>Prediction</h2><p class="note">None in this file (a serial program, or results written ' +
                 'before MPI_FINALIZE).</p>';
  /* the columns of a row, as in the file; a column the file lacks is NaN */
  var cols = ['Total(s)', 'Start-up(s)', 'MPI(s)', 'Redundant(s)', 'Overhead(s)', 'Parallel(s)', 'Waited(s)'];
  var has = function (k) { return (k !== 1 || P.withoutStartup) && (k !== 4 && k !== 6 || P.withoutOverhead); };
  var rows = KM.array(P.rows), w = 1 + cols.length, e = function (k) { return (P.est >> k & 1) === 1; };
  var h = '<h2>Prediction</h2>';
  if (P.note) h += '<p class="note" id="prednote">' + KM.esc(P.note) + '</p>';
  if (P.withoutOverhead)
    h += '<p class="note" id="predexplain">P = T − S − C − R − O, each rank\'s parallel work, leaves out MPI ' +
         'start-up S and libkm\'s overhead O; T_1pe = min R + sum P, and the speedup is T_1pe / max over ranks ' +
         'of (T − S − O). ' + (CPU ? 'These are CPU times: the prediction is of CPU time, not a speedup in ' +
         'wall time. W is how long the rank waited for a processor: CPU time leaves it out, and the run took ' +
         'that much longer.</p>' : 'W is how long the rank waited for a processor: P holds it, so that with more ranks ' +
         'than processors T_1pe is too high.</p>');
  if (!P.available) h += '<table id="pred"><tr><th class="l">T_1pe, speedup, efficiency</th><td>n/a</td></tr></table>';
  else
    h += '<table id="pred"><tr><th class="l">T_1pe' + (CPU ? ' (CPU time)' : '') + (P.withoutOverhead ? ' (without MPI start-up, libkm\'s ' +
      'overhead)' : P.withoutStartup ? ' (without MPI start-up)' : '') + '</th><td>' +
      KM.mark(KM.sec(P.fig[0]), e(0)) + '</td></tr><tr><th class="l">speedup' + OF_CPU + (SPEEDUP ? ' (' + SPEEDUP + ')' : '') +
      '</th><td>' + KM.mark(KM.num(P.fig[1]), e(1)) + '</td></tr><tr><th class="l">efficiency' + OF_CPU + '</th><td>' +
      KM.mark(KM.pct(P.fig[2]), e(2)) + '</td></tr></table>';
  h += '<table id="predrows"><tr><th>rank</th>';
  cols.forEach(function (c, k) { if (has(k)) h += '<th>' + c + '</th>'; });
  h += '</tr>';
  for (var r = 0; r < rows.length / w && r < 64; r++) {
    h += '<tr><td>' + rows[w * r] + '</td>';
    for (var k = 0; k < cols.length; k++)
      if (has(k)) h += '<td>' + KM.mark(KM.num(rows[w * r + 1 + k]), P.rowEst[r] >> k & 1) + '</td>';
    h += '</tr>';
  }
  return h + '</table>';
}
function figuresView(main) {
  var h = figureTable() + sharesTable() + predictionTable();
  if (D.anyEst)
    h += '<p class="note" id="figlegend">~ contains an estimate: past a region\'s threshold libkm measured only a ' +
         'sample of its executions and estimated the others.</p>';
  if (D.groups) {
    h += '<h2>Rank groups</h2><p class="note">Complete-linkage clustering of the ranks\' profiles, cut at ' +
         KM.num(D.groups.cut) + ' of the run time (see <code>kmview ranks</code>).</p><table id="groups">' +
         '<tr><th>group</th><th class="l">ranks</th></tr>';
    var members = {};
    D.groups.group.forEach(function (g, p) { (members[g] = members[g] || []).push(D.ranks[p]); });
    Object.keys(members).forEach(function (g) {
      h += '<tr><td' + (D.groups.outlier[g] ? ' class="outlier"' : '') + '>' + (+g + 1) +
           (D.groups.outlier[g] ? ' outlier' : g === '0' ? ' main' : '') + '</td><td class="l">' +
           members[g].slice(0, 40).join(', ') + (members[g].length > 40 ? ', …' : '') + '</td></tr>';
    });
    h += '</table>';
  } else if (D.groupRows) {
    h += '<h2>Rank groups</h2><p class="note">Complete-linkage clustering of the ranks\' profiles, cut at ' +
         KM.num(D.groupRows.cut) + ' of the run time (see <code>kmview ranks</code>). ' +
         KM.esc(D.groupRows.note) + '</p><table id="groups"><tr><th>group</th><th>ranks</th>' +
         '<th class="l">which</th></tr>';
    D.groupRows.rows.forEach(function (r) {
      h += '<tr><td' + (r[2] ? ' class="outlier"' : '') + '>' + (r[0] + 1) +
           (r[2] ? ' outlier' : r[0] === 0 ? ' main' : '') + '</td><td>' + r[1] + '</td><td class="l">' +
           KM.esc(r[3]) + '</td></tr>';
    });
    h += '</table>';
  }
  if (D.extra.length) {
    h += '<h2>Other header lines</h2><table>';
    D.extra.forEach(function (e) { h += '<tr><td class="l">' + KM.esc(e[0]) + '</td><td class="l">' + KM.esc(e[1]) + '</td></tr>'; });
    h += '</table>';
  }
  if (D.warnings.length) {
    h += '<h2>Warnings</h2><table id="warnings">';
    D.warnings.forEach(function (w) { h += '<tr><td>rank ' + w[0] + '</td><td class="l">' + KM.esc(w[1]) + '</td></tr>'; });
    h += '</table>';
  }
  main.innerHTML = h;
}

/* ---- wiring ------------------------------------------------------------ */
function render() {
  KM.tip.hide();
  var app = document.getElementById('app');
  app.innerHTML = header() + nav() + controls() + '<main id="view"></main>';
  var main = document.getElementById('view');
  if (S.view === 'locations' && L > 0) locationsView(main);
  else if (S.view === 'ranks') ranksView(main);
  else if (S.view === 'heat') heatView(main);
  else if (S.view === 'timeline' && D.timeline) timelineView(main);
  else if (S.view === 'threads' && D.threads) threadsView(main);
  else if (S.view === 'messages' && D.messages) KM.msg.view(main, D, S);
  else if (S.view === 'files' && D.files) KM.files.view(main, D, S);
  else if (S.view === 'trace' && D.trace) KM.trace.view(main, D, S);
  else if (S.view === 'paths' && D.paths)
    KM.flame.view(main, D, S, {total: function (p) { return figOf(F_TOTAL, p); }, rankName: rankName, ranks: N});
  else if (S.view === 'figures') figuresView(main);
  else profileView(main);
  document.title = 'kmview: ' + (D.program || '') + ' — ' + S.view;
}
document.getElementById('app').addEventListener('click', function (ev) {
  var t = ev.target;
  if (t.id === 'back') { history.back(); return; }
  if (t.id === 'fwd') { history.forward(); return; }
  if (t.dataset && t.dataset.k && !t.disabled) {
    var ch = {};
    ch[t.dataset.k] = t.dataset.v;
    go(ch);
    return;
  }
  var a = t.closest ? t.closest('a') : null;
  if (a && a.dataset.routine !== undefined) {
    var i = +a.dataset.routine;
    go(locsOf[i].length ? {view: 'locations', routine: i} : {view: 'ranks', subject: 'r' + i});
  } else if (a && a.dataset.location !== undefined) {
    go({view: 'ranks', subject: 'l' + a.dataset.location});
  }
});
document.getElementById('app').addEventListener('change', function (ev) {
  var t = ev.target;
  if (t.id === 'rank') go({rank: t.value === 'mean' ? 'mean' : +t.value});
  else if (t.id === 'routine') go({routine: +t.value});
  else if (t.id === 'subject') go({subject: t.value});
  else if (t.id === 'max') go({max: t.value});
  else if (t.id === 'pthread') go({pthread: t.value, pzoom: ''});
  else if (t.id === 'psearch') go({psearch: t.value});
});
window.addEventListener('popstate', function () { readHash(); render(); });
readHash();
render();
})();
