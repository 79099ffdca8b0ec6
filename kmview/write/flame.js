/* flame.js — the Paths view of kmview's report (inlined into the page
   before report.js, which calls KM.flame.controls and KM.flame.view).
   A flame graph of the calling-context trees of KM_output's Paths blocks
   (format 6), drawn as an icicle: the thread's root at the top, each
   path's children below it, every frame as wide as its inclusive
   (elapsed) time against its parent's.  A click on a frame zooms into it
   (it becomes the top frame); a click on the top frame zooms out one
   level.  The search box highlights the frames whose name holds the text
   (any case).  One rank, or the mean over the ranks (kmview merged their
   trees by path identity: the same regions from the root down; a rank
   without a path counts 0), and one thread.  Frames that contain an
   estimate (Est(%) > 0, or an elapsed time marked ~) are drawn lighter,
   MPI calls in their own colour (MPI start-up, MPI_INIT, in the report's
   colour for it); the hover gives inclusive and exclusive
   time, counts and the share of the run.  Only frames at least a pixel
   wide are drawn (and what is below them visited), so that a tree of
   100,000 paths still draws at once.  The state (zoom, search, thread)
   lives in the URL's #fragment with the rest of the report's.  The data
   is kmview/htmlpaths.c's.  Never fetches anything. */
KM.flame = (function () {
'use strict';
var W = 8, ROW = 18, MAX_FRAMES = 30000;
var PARENT = 0, ROUTINE = 1, LOC = 2, COUNT = 3, EL = 4, NET = 5, PCT = 6, FLAGS = 7;
var F_PLUS = 1, F_EL = 2, F_NET = 4, F_RFOLD = 8, FOLDED = -2;
var KIND_CLASS = {ROUTINE: 'rt', DO: 'loop', CALL: 'call', MPI: 'mpi', IO: 'io', USER: 'user'};

/* A tree of the page, decoded once: its values, each path's children,
   the paths under the root, and the root's time (theirs together). */
function decode(t) {
  if (t.tree) return t.tree;
  var v = KM.array(t.v), n = t.n, kids = new Array(n), top = [], total = 0;
  for (var i = 0; i < n; i++) {
    var p = v[i * W + PARENT];
    if (p < 0) { top.push(i); total += v[i * W + EL]; }
    else (kids[p] || (kids[p] = [])).push(i);
  }
  t.tree = {v: v, n: n, kids: kids, top: top, total: total, keys: new Array(n), thread: t.thread,
            ranks: t.ranks, folded: t.folded || 0, all: t.all || n, deeper: t.deeper || 0};
  return t.tree;
}
function val(T, i, c) { return i < 0 ? (c === EL ? T.total : 0) : T.v[i * W + c]; }
function childrenOf(T, i) { return i < 0 ? T.top : T.kids[i] || []; }
function parentOf(T, i) { return i < 0 ? -1 : T.v[i * W + PARENT]; }
/* A path's identity: its regions from the root, "/r.l" each. */
function seg(T, i) { return '/' + T.v[i * W + ROUTINE] + '.' + T.v[i * W + LOC]; }
/* (a loop up the tree, not recursion: the page holds paths 1000 levels deep) */
function keyOf(T, i) {
  var up = [];
  for (var j = i; j >= 0 && T.keys[j] === undefined; j = parentOf(T, j)) up.push(j);
  var key = j >= 0 ? T.keys[j] : '';
  for (var k = up.length - 1; k >= 0; k--) key = T.keys[up[k]] = key + seg(T, up[k]);
  return i < 0 ? '' : key;
}
/* The path of a key in this tree, or the deepest one on its way there. */
function findKey(T, key) {
  var at = -1, parts = key.split('/').slice(1);
  for (var k = 0; k < parts.length; k++) {
    var next = -1;
    childrenOf(T, at).forEach(function (c) { if (next < 0 && seg(T, c) === '/' + parts[k]) next = c; });
    if (next < 0) break;
    at = next;
  }
  return at;
}

/* ---- names ---------------------------------------------------------------- */
/* A path folded at KM_PATHS_MAX (format 7's Fold m) is under a frame of its own (routine FOLDED): its parent
   did not call it; one that holds deeper recursion of its region (Fold r) says so in its label. */
function regionOf(D, T, i) {
  var r = T.v[i * W + ROUTINE], l = T.v[i * W + LOC], rname = r >= 0 ? D.routines[r][0] : '(no routine)';
  var mark = T.v[i * W + FLAGS] & F_RFOLD ? ' [recursion folded]' : '';
  if (r === FOLDED) return {kind: 'FOLDED', label: '[folded at KM_PATHS_MAX]', routine: '', text: '', folded: true};
  if (l < 0) return {kind: 'ROUTINE', label: rname + mark, routine: rname, text: ''};
  var loc = D.locations[l];
  /* the statement says what it is; its line tells it from its namesakes */
  return {kind: loc[1], label: (loc[3] ? loc[3] : loc[1]) + ' [' + loc[2] + ']' + mark, routine: rname,
          text: loc[3], startup: !!loc[7]};
}
function estimated(T, i) { return i >= 0 && (T.v[i * W + PCT] > 0 || (T.v[i * W + FLAGS] & F_EL) !== 0); }

/* ---- which tree ----------------------------------------------------------- */
function threadOf(D, S) {
  var t = +S.pthread;
  return D.paths.threads.indexOf(t) >= 0 ? t : D.paths.threads[0];
}
function rankEntry(D, p) {
  var R = D.paths.ranks;
  for (var k = 0; k < R.length; k++) if (R[k].col === p) return R[k];
  return null;
}
/* The tree shown, or null when the page does not hold it. */
function treeOf(D, S) {
  var th = threadOf(D, S), list = S.rank === 'mean' ? D.paths.mean : (rankEntry(D, S.rank) || {trees: []}).trees;
  for (var k = 0; k < list.length; k++) if (list[k].thread === th) return decode(list[k]);
  return null;
}

function controls(D, S, rankSelectHtml) {
  var P = D.paths, th = threadOf(D, S), h = rankSelectHtml;
  if (P.threads.length > 1) {
    h += '<span class="group"><label for="pthread">Thread</label><select id="pthread">';
    P.threads.forEach(function (t) {
      h += '<option value="' + t + '"' + (t === th ? ' selected' : '') + '>' + t + '</option>';
    });
    h += '</select></span>';
  }
  return h + '<span class="group"><label for="psearch">Search</label><input id="psearch" type="search" ' +
    'placeholder="routine or statement" value="' + KM.esc(S.psearch) + '"><span id="psearchn"></span></span>' +
    '<span class="group"><button id="pwhole" data-k="pzoom" data-v=""' + (S.pzoom ? '' : ' disabled') +
    '>Whole tree</button></span>';
}

/* ---- layout --------------------------------------------------------------- */
/* The frames at least a pixel wide under `root`, depth first; children
   left to right in the file's order. */
function layout(T, root, width) {
  var frames = [], hidden = 0, stack = [[root, 0, width, 0]], depth = 0;
  while (stack.length && frames.length < MAX_FRAMES) {
    var f = stack.pop(), i = f[0], x = f[1], w = f[2], d = f[3], el = val(T, i, EL);
    frames.push({i: i, x: x, w: w, d: d});
    if (d > depth) depth = d;
    var kids = childrenOf(T, i), cx = x, next = [];
    for (var k = 0; k < kids.length; k++) {
      var cw = el > 0 ? w * val(T, kids[k], EL) / el : 0;
      if (cw >= 1) next.push([kids[k], cx, cw, d + 1]);
      else hidden++;
      cx += cw;
    }
    for (k = next.length - 1; k >= 0; k--) stack.push(next[k]);
  }
  return {frames: frames, hidden: hidden + stack.length, depth: depth};
}

function frameHtml(D, T, f, root, rootLabel) {
  var i = f.i, reg = i < 0 ? {kind: 'ROOT', label: rootLabel} : regionOf(D, T, i);
  var cls = 'fr ' + (i < 0 ? 'root' : KIND_CLASS[reg.kind] || 'oth') + (reg.startup ? ' startup' : '') +
    (estimated(T, i) ? ' est' : '');
  /* the top frame zooms out one level, the others in */
  var to = f.d === 0 ? (i < 0 ? '' : keyOf(T, parentOf(T, i))) : keyOf(T, i);
  return '<div class="' + cls + '" data-k="pzoom" data-v="' + KM.esc(to) + '" data-i="' + i + '" data-d="' + f.d +
    '" style="left:' + f.x.toFixed(2) + 'px;top:' + f.d * ROW + 'px;width:' + f.w.toFixed(2) + 'px">' +
    (f.w >= 24 ? KM.esc(reg.label) : '') + '</div>';
}

function tipHtml(D, T, i, ctx) {
  var v = function (c) { return val(T, i, c); }, fl = i < 0 ? 0 : v(FLAGS), run = ctx.total, el = v(EL);
  var reg = i < 0 ? null : regionOf(D, T, i), par = parentOf(T, i), pel = val(T, par, EL);
  if (reg && reg.folded)
    return '<b>[folded at KM_PATHS_MAX]</b><br>paths libkm did not keep past KM_PATHS_MAX paths per thread: their ' +
      'entries went on under this path\'s outermost region, not as calls made from it<br>inclusive (elapsed): ' +
      KM.mark(KM.sec(el), fl & F_EL) + ' · ' + KM.pct(el / run) + ' of the run';
  var h = '<b>' + KM.esc(reg ? reg.label : 'all of ' + ctx.what) + '</b>' +
    (reg && reg.kind !== 'ROUTINE' ? '<br>' + KM.esc(reg.kind) + ' in ' + KM.esc(reg.routine) : '') +
    (fl & F_RFOLD ? '<br>deeper recursion of this region went on in this path (past KM_PATHS_RECURSION): its ' +
     'counts hold the calls made deeper' : '') +
    '<br>inclusive (elapsed): ' + KM.mark(KM.sec(el), fl & F_EL) + ' · ' + KM.pct(el / run) + ' of the run' +
    (i >= 0 ? ' · ' + KM.pct(el / pel) + (par < 0 ? ' of the thread\'s' : ' of its caller') : '');
  if (i >= 0)
    h += '<br>exclusive (net): ' + KM.mark(KM.sec(v(NET)), fl & F_NET) + ' · ' + KM.pct(v(NET) / run) +
      ' of the run<br>counts: ' + (fl & F_PLUS ? '+' : '') + KM.count(v(COUNT)) +
      (fl & F_PLUS ? ' (some executions estimated)' : '') + KM.estText(estimated(T, i), v(PCT) / 100);
  return h + (ctx.mean ? '<br>mean over the ranks' : '');
}

/* ---- search --------------------------------------------------------------- */
function matches(D, T, i, q) {
  if (!q || i < 0) return false;
  var r = regionOf(D, T, i);
  return r.label.toLowerCase().indexOf(q) >= 0;
}
function search(D, T, q) {
  q = q.trim().toLowerCase();
  var n = 0, el = document.getElementById('flame');
  if (!el) return 0;
  Array.prototype.forEach.call(el.children, function (d) {
    var hit = matches(D, T, +d.dataset.i, q);
    d.classList.toggle('hit', hit);
    if (hit) n++;
  });
  var said = document.getElementById('psearchn');
  if (said) said.textContent = q ? ' ' + n + ' frame' + (n === 1 ? '' : 's') + ' match' + (n === 1 ? 'es' : '') : '';
  KM.flame.last.hits = n;
  return n;
}

function legendHtml() {
  return '<div class="legend" id="plegend"><span><i class="fr rt"></i>routine</span><span><i class="fr loop">' +
    '</i>loop</span><span><i class="fr call"></i>CALL</span><span><i class="fr mpi"></i>MPI call</span>' +
    '<span><i class="fr mpi startup"></i>MPI start-up</span>' +
    '<span><i class="fr io"></i>I/O</span><span><i class="fr rt est"></i>lighter: contains an estimate</span>' +
    '<span><i class="fr rt hit"></i>matches the search</span></div>';
}

function view(main, D, S, ctx) {
  var T = treeOf(D, S), th = threadOf(D, S), P = D.paths;
  KM.flame.last = {frames: 0, hidden: 0, hits: 0, root: null};
  if (!T) {
    main.innerHTML = '<p class="note" id="pnote">' + (S.rank === 'mean' ? 'No rank has a tree of thread ' + th :
      KM.esc(ctx.rankName(S.rank)) + ' has no tree of thread ' + th + ' in this page' +
      (P.held < P.withTrees ? ' (the page holds the trees of ' + P.held + ' of the ' + P.withTrees +
       ' ranks that have one, within its budget; kmview --json has every one; the mean is of all)' : '')) +
      '.</p>';
    return;
  }
  var root = S.pzoom ? findKey(T, S.pzoom) : -1, width = Math.max(300, Math.floor(main.clientWidth - 40));
  var what = ctx.rankName(S.rank) + (P.threads.length > 1 || th !== 0 ? ', thread ' + th : '');
  var L = layout(T, root, width), rootLabel = 'all: ' + what, h = '';
  L.frames.forEach(function (f) { h += frameHtml(D, T, f, root, rootLabel); });
  main.innerHTML = '<p class="note" id="pnote">Calling-context tree of ' + KM.esc(what) + ': ' +
    (T.all > T.n ? 'the ' + KM.intText(T.n) + ' longest of ' + KM.intText(T.all) + ' paths (kmview --json has ' +
    'every one)' : KM.intText(T.n) + ' paths') + (S.rank === 'mean' && ctx.ranks > 1 ? ' over the ranks\' trees merged by path (the same ' +
    'regions from the root), each figure the mean over ' + ctx.ranks + ' ranks' : '') +
    (T.folded ? ', ' + KM.intText(T.folded) + ' entries on paths folded at a limit (a frame [folded at ' +
     'KM_PATHS_MAX] holds paths not kept, whose entries went on under the outermost region: not calls made ' +
     'from there; a path marked [recursion folded] holds deeper recursion of its region)' : '') +
    (T.deeper ? '; ' + KM.intText(T.deeper) + ' paths deeper than 1000 levels are not in the page (their time is ' +
     'in their ancestors\' at that depth)' : '') + '. Width: ' +
    'inclusive (elapsed) time. ' + (root >= 0 ? 'Zoomed into ' + KM.esc(regionOf(D, T, root).label) +
    ' (click the top frame to zoom out). ' : '') + 'Click a frame to zoom into it. ' + L.frames.length +
    ' frames drawn' + (L.hidden ? ', ' + KM.intText(L.hidden) + ' narrower than a pixel not' : '') + '.</p>' +
    legendHtml() + '<div id="flame" class="flame" style="width:' + width + 'px;height:' + (L.depth + 1) * ROW +
    'px">' + h + '</div>';
  KM.flame.last = {frames: L.frames.length, hidden: L.hidden, hits: 0, root: root, width: width, tree: T};
  var tctx = {total: ctx.total(S.rank), what: what, mean: S.rank === 'mean'};
  var fl = document.getElementById('flame');
  fl.addEventListener('mousemove', function (ev) {
    var d = ev.target.closest ? ev.target.closest('.fr') : null;
    if (!d) { KM.tip.hide(); return; }
    KM.tip.show(tipHtml(D, T, +d.dataset.i, tctx), ev);
  });
  fl.addEventListener('mouseleave', function () { KM.tip.hide(); });
  var box = document.getElementById('psearch');
  if (box) box.addEventListener('input', function () { search(D, T, box.value); });
  search(D, T, S.psearch || '');
}

return {controls: controls, view: view, last: {}};
})();
