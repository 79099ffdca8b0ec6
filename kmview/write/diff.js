/* diff.js — the HTML view of `kmview diff A B` (inlined into the page).
   Where the total difference comes from (computation, MPI, I/O), then every
   region in both runs as a pair of bars (A above, B below) in the order
   chosen (PARP's score by default), with tA, tB, difference, ratio, calls,
   time per call and, for different rank counts, efficiency; hover a row for
   its figures.  Regions found in one run only are listed apart.  MPI
   start-up is a part of the breakdown of its own; a time that contains an
   estimate is marked '~'.  Last, the call paths (KM_output 6): kmview's
   top paths of each list, inclusive times, in the same order.  Never
   fetches anything. */
(function () {
'use strict';
var D = KM.data();
var ROWS = D.rows.map(function (r, k) {
  return {status: r[0], routine: r[1], kind: r[2], line: r[3], text: r[4], ta: r[5], tb: r[6],
          ca: r[7], cb: r[8], eff: r[9], score: r[10] === 'inf' ? Infinity : r[10], ea: !!r[11], eb: !!r[12],
          pos: k};
});
var order = (location.hash.match(/order=(\w+)/) || [])[1] || 'score';

function label(r) {
  return r.kind === 'ROUTINE' ? r.routine : r.routine + ' ' + r.kind + ' ' + r.line;
}
function ratio(r) { return r.ta > 0 ? r.tb / r.ta : r.tb > 0 ? Infinity : NaN; }
function key(r) {
  switch (order) {
  case 'diff': return Math.abs(r.tb - r.ta);
  case 'ratio': return Math.abs(Math.log(ratio(r)));
  case 'a': return r.ta;
  case 'b': return r.tb;
  default: return r.score;
  }
}
var PATHS = D.paths && D.paths.map(function (r, k) {
  return {status: r[0], path: r[1], ta: r[2], tb: r[3], ca: r[4], cb: r[5],
          score: r[6] === 'inf' ? Infinity : r[6], ea: !!r[7], eb: !!r[8], pos: k};
});
function sorted(status, all, name) {
  var rows = (all || ROWS).filter(function (r) { return r.status === status; });
  name = name || label;
  if (status !== 'both') return rows;          /* by their time, as written */
  if (order === 'name') return rows.slice().sort(function (a, b) {
    return name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : a.pos - b.pos;
  });
  if (order === 'score') return rows;          /* kmview's own order */
  return rows.slice().sort(function (a, b) {
    var x = key(a), y = key(b);
    if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);
    return y - x || Math.abs(b.tb - b.ta) - Math.abs(a.tb - a.ta) || a.pos - b.pos;
  });
}
function tip(r) {
  var h = '<b>' + KM.esc(label(r)) + '</b>' + (r.text ? '<br><code>' + KM.esc(r.text) + '</code>' : '') +
    '<br>A: ' + KM.mark(KM.sec(r.ta), r.ea) + ' (' + KM.pct(r.ta / D.a.total) + ' of A), ' + KM.count(r.ca) +
    ' calls, ' + KM.sec(r.ca > 0 ? r.ta / r.ca : NaN) + ' per call' +
    '<br>B: ' + KM.mark(KM.sec(r.tb), r.eb) + ' (' + KM.pct(r.tb / D.b.total) + ' of B), ' + KM.count(r.cb) +
    ' calls, ' +
    KM.sec(r.cb > 0 ? r.tb / r.cb : NaN) + ' per call' +
    '<br>B − A: ' + KM.sec(r.tb - r.ta) + ', B / A: ' + KM.num(ratio(r));
  if (r.status === 'both') h += ', score ' + KM.num(r.score);
  if (D.scaling && r.eff !== null) h += '<br>efficiency of the larger run: ' + KM.pct(r.eff);
  if (r.ea || r.eb) h += '<br>~ contains an estimate';
  return h;
}
function pairBars(host, rows) {
  var max = 0;
  rows.forEach(function (r) { max = Math.max(max, r.ta, r.tb); });
  var items = rows.map(function (r) {
    return {label: label(r), value: r.tb - r.ta, segs: [['a', r.ta], ['b', r.tb]],
            labelHtml: KM.esc(label(r)) + (r.text ? ' <small>' + KM.esc(r.text.slice(0, 50)) + '</small>' : ''),
            tip: function () { return tip(r); }};
  });
  /* 'pair' rows stack their two segments (CSS), so each is one bar */
  KM.bars(host, items, max, function (v) { return (v > 0 ? '+' : '') + KM.sec(v); }, 'pair');
}
function table(rows, id) {
  var h = '<table id="' + id + '"><tr><th>#</th><th class="l">region</th><th>tA (s)</th><th>tB (s)</th>' +
    '<th>B−A (s)</th><th>B/A</th><th>calls A</th><th>calls B</th><th>t/call A</th><th>t/call B</th>' +
    (id === 'both' ? '<th>score</th>' : '') + (D.scaling && id === 'both' ? '<th>eff</th>' : '') +
    '<th class="l">statement</th></tr>';
  rows.forEach(function (r, k) {
    h += '<tr><td>' + (k + 1) + '</td><td class="l">' + KM.esc(label(r)) + '</td><td>' + KM.mark(KM.num(r.ta), r.ea) +
      '</td><td>' + KM.mark(KM.num(r.tb), r.eb) + '</td><td>' + KM.mark(KM.num(r.tb - r.ta), r.ea || r.eb) +
      '</td><td>' + KM.num(ratio(r)) +
      '</td><td>' + KM.num(r.ca) + '</td><td>' + KM.num(r.cb) + '</td><td>' +
      KM.num(r.ca > 0 ? r.ta / r.ca : NaN) + '</td><td>' + KM.num(r.cb > 0 ? r.tb / r.cb : NaN) + '</td>' +
      (id === 'both' ? '<td>' + KM.num(r.score) + '</td>' : '') +
      (D.scaling && id === 'both' ? '<td>' + KM.pct(r.eff) + '</td>' : '') +
      '<td class="code">' + KM.esc(r.text || '') + '</td></tr>';
  });
  return h + '</table>';
}
function pathTable(rows, id) {
  var both = id === 'pathsboth';
  var h = '<table id="' + id + '"><tr><th>#</th><th>tA (s)</th><th>tB (s)</th><th>B−A (s)</th><th>B/A</th>' +
    (both ? '<th>score</th>' : '') + '<th class="l">call path</th></tr>';
  rows.forEach(function (r, k) {
    h += '<tr><td>' + (k + 1) + '</td><td>' + KM.mark(KM.num(r.ta), r.ea) + '</td><td>' + KM.mark(KM.num(r.tb), r.eb) +
      '</td><td>' + KM.mark(KM.num(r.tb - r.ta), r.ea || r.eb) + '</td><td>' + KM.num(ratio(r)) + '</td>' +
      (both ? '<td>' + KM.num(r.score) + '</td>' : '') + '<td class="l">' + KM.esc(r.path) + '</td></tr>';
  });
  return h + '</table>';
}
function paths() {
  var h = '<h2>Call paths</h2>';
  if (!PATHS) return h + '<p class="note">Not compared: a run has no Paths block (KM_output before 6).</p>';
  var path = function (r) { return r.path; };
  var both = sorted('both', PATHS, path), onlyA = sorted('only_a', PATHS, path),
      onlyB = sorted('only_b', PATHS, path);
  h += '<p class="note">Thread 0; inclusive times, means over ranks; kmview\'s top paths of each list ' +
       '(paths.csv and the JSON have them all).</p>' + pathTable(both, 'pathsboth');
  if (onlyA.length) h += '<h3>Call paths only in A</h3>' + pathTable(onlyA, 'pathsonlya');
  if (onlyB.length) h += '<h3>Call paths only in B</h3>' + pathTable(onlyB, 'pathsonlyb');
  return h;
}
function breakdown() {
  var parts = [['Total time', 'total'], ['Computation', 'comp'], ['MPI', 'mpi'], ['MPI start-up', 'startup'],
               ['I/O', 'io']];
  var dt = D.b.total - D.a.total;
  var h = '<table id="breakdown"><tr><th class="l"></th><th>A (s)</th><th>B (s)</th><th>B−A (s)</th>' +
          '<th>of B−A</th></tr>';
  parts.forEach(function (p, k) {
    var d = D.b[p[1]] - D.a[p[1]];
    var ea = !!D.a.est[p[1]], eb = !!D.b.est[p[1]];
    h += '<tr><td class="l">' + p[0] + '</td><td>' + KM.mark(KM.num(D.a[p[1]]), ea) + '</td><td>' +
         KM.mark(KM.num(D.b[p[1]]), eb) + '</td><td>' + KM.mark(KM.num(d), ea || eb) + '</td><td>' + (k ? KM.pct(dt !== 0 ? d / dt : NaN) : '') + '</td></tr>';
  });
  return h + '</table>';
}
function render() {
  var both = sorted('both'), onlyA = sorted('only_a'), onlyB = sorted('only_b');
  var h = '<header><h1>kmview diff</h1><p class="facts">A: ' + KM.esc(D.a.file) + ' (' + KM.esc(D.a.program || '?') +
    ', ' + KM.esc(D.a.ranks) + ') · B: ' + KM.esc(D.b.file) + ' (' + KM.esc(D.b.program || '?') + ', ' +
    KM.esc(D.b.ranks) + ')</p></header><div class="controls" id="controls">' +
    KM.toggles('Order', 'order', [['PARP score', 'score'], ['|B−A|', 'diff'], ['ratio', 'ratio'],
                                  ['tA', 'a'], ['tB', 'b'], ['name', 'name']], order) +
    '</div><main id="view"><h2>Where the difference comes from</h2>' + breakdown() +
    '<h2>Regions in both runs</h2><p class="note">Times are means over ranks (routines: net time). ' +
    'Score: (longer time / total time of the slower run) × ln(longer / shorter), after PARP.</p>' +
    '<div class="legend"><span><i class="a"></i>A</span><span><i class="b"></i>B</span></div>' +
    '<div id="chart"></div>' + table(both, 'both');
  if (onlyA.length) h += '<h2>Only in A</h2>' + table(onlyA, 'onlya');
  if (onlyB.length) h += '<h2>Only in B</h2>' + table(onlyB, 'onlyb');
  h += paths();
  document.getElementById('app').innerHTML = h + '</main>';
  pairBars(document.getElementById('chart'), both.slice(0, 200));
}
document.getElementById('app').addEventListener('click', function (ev) {
  var t = ev.target;
  if (t.dataset && t.dataset.k === 'order') {
    order = t.dataset.v;
    try { history.pushState(null, '', '#order=' + order); } catch (e) { /* file: URL */ }
    render();
  }
});
window.addEventListener('popstate', function () {
  order = (location.hash.match(/order=(\w+)/) || [])[1] || 'score';
  render();
});
render();
})();
