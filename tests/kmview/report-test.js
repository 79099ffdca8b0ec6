/* report-test.js — run inside kmview's HTML report by html.test (appended
   to a copy of the page, after window.KMTEST = {mode, expect} where expect
   holds kmgen's expectations).  Drives the page as a person would (clicks
   buttons, picks from lists, moves the mouse over bars and the heat map),
   checks what it shows against the expectations, and writes "ok - " /
   "FAIL - " lines into <pre id="kmtest">, which the test reads from
   Chromium's --dump-dom.  mode "speed" times every view instead, against
   one pass over all the data, on the 1,000 x 1,000 report; mode "kpis"
   checks the headline: expect maps a label to the figure shown above it,
   "title:LABEL" to its hover text, "absent:LABEL" to a label that must
   not be there; mode "messages" checks the Messages view against kmgen's
   rank_peers.csv and rank_messages.csv expectations, "nomessages" that a
   run without messages has none; mode "files" checks the Files view
   against kmview's rank_files.csv, "nofiles" that a run without Files
   blocks has none; mode "paths" drives the Paths view (the flame graph)
   on tests/kmview/paths.out, whose figures html.test gives, "pathsbig"
   checks that a big tree draws every frame a pixel wide and no other. */
(function () {
'use strict';
var T = window.KMTEST, E = T.expect, out = [];
function ok(c, what) { out.push((c ? 'ok - ' : 'FAIL - ') + what); }
function near(a, b, rel) {
  return Math.abs(a - b) <= (rel || 2e-3) * Math.max(Math.abs(a), Math.abs(b)) + 1e-9;
}
function num(k) { return parseFloat(E[k]); }
function $(s) { return document.querySelector(s); }
function $$(s) { return Array.prototype.slice.call(document.querySelectorAll(s)); }
function btn(k, v) {
  var b = $('button[data-k="' + k + '"][data-v="' + v + '"]');
  if (!b) throw new Error('no button ' + k + '=' + v);
  b.click();
}
function pick(id, value) {
  var s = document.getElementById(id);
  s.value = String(value);
  s.dispatchEvent(new Event('change', {bubbles: true}));
}
function rows() { return $$('#chart .r'); }
function labels() { return rows().map(function (r) { return r.querySelector('.n').textContent; }); }
/* a value's text: '~' first when it contains an estimate */
function values() {
  return rows().map(function (r) { return parseFloat(r.querySelector('.v').textContent.replace(/^~/, '')); });
}
function marked(r) { return /^~/.test(r.querySelector('.v').textContent); }
function hover(el, x, y) {
  el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true, clientX: x || 50, clientY: y || 50}));
  el.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: x || 50, clientY: y || 50}));
  var t = document.getElementById('tip');
  return t.hidden ? '' : t.textContent;
}
function finish() {
  var pre = document.createElement('pre');
  pre.id = 'kmtest';
  pre.textContent = out.join('\n') + '\nEND\n';
  document.body.appendChild(pre);
}
function sortedDesc(v) { for (var i = 1; i < v.length; i++) if (v[i] > v[i - 1]) return false; return true; }
function sortedAsc(v) { for (var i = 1; i < v.length; i++) if (v[i] < v[i - 1]) return false; return true; }

/* routine ids (1-based) by name, and the expected mean of a metric */
var ids = {}, names = T.mode === 'speed' ? KM.data().routines : [];
for (var id = 1; E['routines.csv:' + id + ':name']; id++) {
  ids[E['routines.csv:' + id + ':name']] = id;
  names.push(E['routines.csv:' + id + ':name']);
}
function mean(id, m) { return num('routines.csv:' + id + ':' + m + '_mean'); }
function cell(rank, id, m) { return num('rank_routines.csv:' + rank + '/' + id + ':' + m) || 0; }
/* a routine's own MPI start-up (its CALL MPI_INIT locations), mean or of a rank */
var initsOf = {};
for (var lid = 1; E['locations.csv:' + lid + ':kind']; lid++)
  if (E['locations.csv:' + lid + ':mpi_startup'] === '1') {
    var rid = 1;
    while (E['routines.csv:' + rid + ':name'] && (lid - 1) / T.nloc >= rid) rid++;
    (initsOf[rid] = initsOf[rid] || []).push(lid);
  }
function startup(id, rank) {
  var s = 0;
  (initsOf[id] || []).forEach(function (l) {
    s += rank === undefined ? num('locations.csv:' + l + ':elapsed_mean')
                            : num('rank_locations.csv:' + rank + '/' + l + ':elapsed') || 0;
  });
  return s;
}
function own(id, rank) {                   /* what a net bar shows */
  return rank === undefined ? mean(id, 'net') + mean(id, 'mpi') + startup(id)
                            : cell(rank, id, 'net') + cell(rank, id, 'mpi') + startup(id, rank);
}

function selfContained() {
  var ext = $$('[src], [href], link, iframe, object, embed, img, audio, video');
  ok(ext.length === 0, 'the page refers to nothing outside itself (' + ext.length + ' elements with src/href)');
  var csp = $('meta[http-equiv="Content-Security-Policy"]');
  ok(csp && /default-src 'none'/.test(csp.content), 'a Content-Security-Policy forbids every request');
  ok(performance.getEntriesByType('resource').length === 0, 'the browser fetched no resource');
}

/* the headline's figures by their labels */
function kpis() {
  var k = {};
  $$('#kpis .kpi').forEach(function (d) { k[d.querySelector('span').textContent] = d.querySelector('b').textContent; });
  return k;
}
function mark(key) { return E['run.csv:' + key + '_estimated:value'] === '1' ? '~' : ''; }
function pctOf(key) { return (100 * num('run.csv:' + key + ':value')).toFixed(1) + '%'; }
function header() {
  var k = kpis(), total = num('figures.csv:total_time:mean');
  var t = k['total time (mean over ranks)'];
  ok(near(parseFloat(t), total), 'header: mean total time ' + t + ' (expected ' + total + ')');
  var mpi = k['MPI communication (after start-up)'], su = k['MPI start-up (MPI_INIT)'];
  ok(mpi === mark('mpi_time') + pctOf('mpi_share'), 'header: MPI communication apart from start-up ' + mpi);
  ok(su === mark('mpi_startup_time') + pctOf('mpi_startup_share') && num('run.csv:mpi_startup_time:value') > 0,
     'header: MPI start-up on its own ' + su);
  ok(k['I/O'] === mark('io_time') + pctOf('io_share'), 'header: I/O share ' + k['I/O']);
  ok(k.estimated === '~' + pctOf('estimated_share'), 'header: the estimated share ' + k.estimated);
  var t1 = k['predicted one-PE time T_1pe (no start-up, no libkm overhead)'];
  ok(near(parseFloat(t1.replace(/^~/, '')), num('run.csv:t_1pe:value')) && t1.charAt(0) === mark('t_1pe').charAt(0),
     'header: T_1pe without start-up and libkm\'s overhead ' + t1);
  ok(near(parseFloat(k['predicted speedup'].replace(/^~/, '')), num('run.csv:speedup:value')),
     'header: speedup ' + k['predicted speedup']);
  ok(k['predicted efficiency'] === mark('efficiency') + pctOf('efficiency'),
     'header: efficiency ' + k['predicted efficiency']);
}

/* Elapsed bars: '~' on every estimated routine's value and on no other,
   the estimated part lighter and as long as its share, said on hover. */
function estimates() {
  btn('metric', 'elapsed');
  var good = true, shaded = 0, frac = true, tipOk = false;
  rows().forEach(function (r) {
    var id = ids[r.querySelector('.n').textContent.replace(/\+$/, '')], p = 'routines.csv:' + id + ':';
    good = good && marked(r) === (E[p + 'elapsed_estimated'] === '1');
    var f = num(p + 'estimated_fraction'), all = 0, est = 0;
    r.querySelectorAll('.b i').forEach(function (i) {
      var w = parseFloat(i.style.width);
      all += w;
      if (/\best\b/.test(i.className)) est += w;
    });
    if (f > 0) {
      shaded++;
      frac = frac && Math.abs(est / all - f) < 1e-3;
      if (!tipOk)
        tipOk = hover(r.querySelector('.b')).indexOf('contains an estimate: ' + (100 * f).toFixed(1) +
                                                     '% of it estimated') > 0;
    } else frac = frac && est === 0;
  });
  ok(good, 'estimates: "~" marks exactly the routines whose elapsed time contains an estimate');
  ok(shaded > 0 && frac, 'estimates: the estimated part of ' + shaded + ' bars is lighter, as long as its share');
  ok(tipOk, 'estimates: hover says how much of the time is estimated');
  ok($('#estlegend') !== null, 'estimates: the legend explains "~"');
  btn('metric', 'net');
}

function profile() {
  ok($('button.view.on').dataset.v === 'profile', 'the page opens on the routine profile');
  var l = labels().map(function (s) { return s.replace(/\+$/, ''); });
  ok(l.join(' ') === names.join(' '), 'profile: every routine, in original order (' + l.length + ')');
  var v = values(), good = true;
  l.forEach(function (n, i) { good = good && near(v[i], own(ids[n])); });
  ok(good && Object.keys(initsOf).length > 0,
     'profile: net bars show net + own MPI time + own MPI start-up, mean over ranks');
  var vmax = Math.max.apply(null, v), lengths = true;
  rows().forEach(function (r, i) {
    var w = 0, segs = r.querySelectorAll('.b i');
    for (var k = 0; k < segs.length; k++) w += parseFloat(segs[k].style.width);
    lengths = lengths && Math.abs(w - 100 * v[i] / vmax) < 0.05;
  });
  ok(lengths, 'profile: each bar\'s length is its value against the largest (automatic scale)');
  var first = rows()[0], tip = hover(first.querySelector('.b'));
  var share = own(1) / num('figures.csv:total_time:mean');
  ok(tip.indexOf(names[0]) === 0 && tip.indexOf((100 * share).toFixed(1) + '% of total time') > 0,
     'hover: value and percentage (' + tip.slice(0, 80) + '...)');
  var segs = $$('#chart .r:first-child .b i').map(function (i) { return i.className; });
  ok(segs[0] === 'comp', 'Comp & Comm: computation first (' + segs.join(',') + ')');
  btn('order', 'desc');
  ok(sortedDesc(values()) && values().length === names.length, 'Descending order');
  btn('order', 'asc');
  ok(sortedAsc(values()), 'Ascending order');
  btn('order', 'orig');
  ok(labels()[0].replace(/\+$/, '') === names[0], 'Original order again');
  btn('metric', 'elapsed');
  v = values(); good = true;
  labels().forEach(function (n, i) { good = good && near(v[i], mean(ids[n.replace(/\+$/, '')], 'elapsed')); });
  ok(good, 'Elapsed Time: bars show mean elapsed times');
  btn('metric', 'counts');
  v = values(); good = true;
  labels().forEach(function (n, i) { good = good && near(v[i], mean(ids[n.replace(/\+$/, '')], 'counts')); });
  ok(good, 'Exec Counts: bars show mean counts');
  btn('metric', 'net');
  btn('mode', 'mc');
  var withMpi = rows().filter(function (r, i) { return mean(ids[names[i]], 'mpi') > 0; })[0];
  ok(withMpi && withMpi.querySelector('.b i').className === 'comm', 'Comm & Comp: communication first');
  btn('mode', 'total');
  ok($$('#chart .b i').every(function (i) { return i.className === 'tot'; }), 'Total Time: one colour');
  btn('mode', 'cc');
  pick('rank', 2);
  v = values(); good = true;
  labels().forEach(function (n, i) {
    var id = ids[n.replace(/\+$/, '')];
    good = good && near(v[i], own(id, 2));
  });
  ok(good && /rank 2/.test($('#note').textContent), 'rank 2 chosen: its own figures');
  pick('rank', 'mean');
  btn('scale', 'manual');
  var max = Math.max.apply(null, values());
  var input = document.getElementById('max');
  input.value = String(max / 2);
  input.dispatchEvent(new Event('change', {bubbles: true}));
  ok($$('#chart .b.clip').length > 0 && $$('#chart .b.clip').length < names.length,
     'Manual scale: bars beyond the maximum are marked (' + $$('#chart .b.clip').length + ')');
  btn('scale', 'auto');
}

function locations() {
  var a = $('#chart .n a');                /* the first routine: its locations */
  var name = a.textContent;
  a.click();
  ok($('button.view.on').dataset.v === 'locations', 'clicking a routine opens its locations');
  var n = T.nloc;
  ok(rows().length === n, 'locations: ' + rows().length + ' rows (expected ' + n + ')');
  ok(/^DO \d+/.test(labels()[0]) && /^MPI /.test(labels()[2]), 'locations: kind and line on each row');
  var initBar = rows()[2].querySelector('.b i');
  ok(initBar && initBar.className === 'startup' && /CALL MPI_INIT/.test(labels()[2]),
     'locations: CALL MPI_INIT is MPI start-up, not communication');
  ok($('button[data-v="net"]').disabled, 'locations: net time is not offered (KM_output has none)');
  ok(new RegExp(name).test($('#note').textContent), 'locations: of ' + name);
  var tip = hover(rows()[0].querySelector('.b'));
  ok(/of total time/.test(tip), 'locations: hover gives value and percentage');
  rows()[0].querySelector('.n a').click();
  ok($('button.view.on').dataset.v === 'ranks' && rows().length === T.ranks,
     'clicking a location shows every rank (' + rows().length + ')');
}

function ranks() {
  btn('view', 'ranks');
  pick('subject', 'program');
  var v = values(), good = v.length === T.ranks;
  for (var p = 0; p < v.length; p++) good = good && near(v[p], num('rank_figures.csv:' + p + ':total_time'));
  ok(good, 'every rank side by side: total time per rank');
  var segs = rows()[0].querySelectorAll('.b i');
  ok(segs.length >= 2 && segs[0].className === 'comp' && segs[1].className === 'comm',
     'a rank\'s bar: computation and communication in two colours');
  var id = 2;
  pick('subject', 'r' + (id - 1));
  btn('metric', 'net');
  v = values(); good = true;
  for (p = 0; p < v.length; p++) good = good && near(v[p], own(id, p));
  ok(good, 'every rank side by side: routine ' + names[id - 1]);
  var tip = hover(rows()[1].querySelector('.b'));
  ok(/rank 1's total time/.test(tip), 'hover: percentage of that rank\'s total time');
}

function heat() {
  btn('view', 'heat');
  var cv = document.getElementById('heat');
  ok(cv && cv.width >= names.length && cv.height >= T.ranks, 'heat map drawn (' + cv.width + 'x' + cv.height + ')');
  var ctx = cv.getContext('2d'), b = cv.getBoundingClientRect();
  var px = ctx.getImageData(cv.width - 2, cv.height - 2, 1, 1).data;
  ok(px[3] === 255, 'heat map cells are painted');
  cv.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: b.right - 2, clientY: b.bottom - 2}));
  var tip = document.getElementById('tip').textContent;
  ok(/^rank \d+ · SUB\d+/.test(tip) && /× the routine's mean/.test(tip), 'heat map hover: ' + tip.slice(0, 60));
  btn('hscale', 'map');
  ok(/largest of the map/.test($('#note').textContent), 'heat map colour: whole map');
  cv = document.getElementById('heat');
  b = cv.getBoundingClientRect();
  cv.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: b.right - 2, clientY: b.bottom - 2}));
  ok($('button.view.on').dataset.v === 'ranks', 'clicking a cell shows that routine on every rank');
}

/* --- the Threads view of a run whose ranks ran several threads ------- */
function threadsPage() {
  var b = $('button.view[data-v="threads"]');
  ok(b && !b.disabled, 'threads: the Threads view is offered');
  btn('view', 'threads');
  var cv = document.getElementById('theat');
  ok(cv !== null, 'threads: the rank x thread map is drawn');
  var regions = {};
  Object.keys(E).forEach(function (k) {
    var m = /^rank_thread_(routines|locations)\.csv:\d+\/(\d+):threads$/.exec(k);
    if (m) regions[m[1] + m[2]] = true;
  });
  var nreg = Object.keys(regions).length;
  ok($$('#tregions tr').length === nreg + 1, 'threads: a row per region over ranks (' +
     ($$('#tregions tr').length - 1) + ', expected ' + nreg + ')');
  var r = cv.getBoundingClientRect(), d = KM.data().threads;
  /* the cell of rank 0's thread 0: the map's first column and row */
  var left = cv.width - d.max * Math.max(4, Math.min(40, Math.floor(1000 / d.max)));
  var top = cv.height - T.ranks * Math.max(1, Math.min(24, Math.floor(600 / T.ranks)));
  cv.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + left + 2,
                                                clientY: r.top + top + 2}));
  var tip = document.getElementById('tip').textContent;
  var net = /net: ([0-9.e+-]+) s/.exec(tip);
  ok(/^rank 0 · thread 0 \(OpenMP 0\)/.test(tip) && net && near(parseFloat(net[1]),
     num('rank_threads.csv:0/0:net')), 'threads: hover gives the thread\'s figures (' + tip.slice(0, 60) + ')');
  btn('tmetric', 'counts');
  ok(/threads's counts|thread's counts/.test($('#note').textContent), 'threads: the map shows routine counts');
  finish();
}

function figures() {
  ok($('button.view[data-v="threads"]').disabled, 'no Threads view for a run of one thread per rank');
  btn('view', 'figures');
  ok($$('#figtable tr').length === 14, 'figures: the thirteen header figures');
  var cells = $$('#figtable tr')[1].querySelectorAll('td');
  ok(near(parseFloat(cells[1].textContent), num('rank_figures.csv:0:total_time')), 'figures: rank 0 total time');
  ok($('#pred') !== null && /Start-up/.test($('#predrows').textContent), 'figures: the prediction, with start-up');
  predictionRows();
  var shares = $('#shares').textContent;
  ok(/MPI communication \(after start-up\)/.test(shares) && /MPI start-up \(MPI_INIT\)/.test(shares),
     'figures: MPI and MPI start-up apart in where the time goes');
}

/* Every rank's Prediction row: its columns, values and marks exactly, the
   overhead and the time waited among them; and what the prediction leaves
   out. */
function predictionRows() {
  var cols = ['total', 'startup', 'mpi', 'redundant', 'overhead', 'parallel', 'waited'];
  var head = $$('#predrows tr')[0].textContent, good = true, n = 0;
  ok(head === 'rankTotal(s)Start-up(s)MPI(s)Redundant(s)Overhead(s)Parallel(s)Waited(s)',
     'figures: the prediction\'s columns, overhead before parallel, waited last (' + head + ')');
  $$('#predrows tr').slice(1).forEach(function (tr, p) {
    var got = Array.prototype.map.call(tr.children, function (td) { return td.textContent; });
    var want = [String(p)].concat(cols.map(function (c) {
      var key = 'prediction.csv:' + p + ':' + c;
      return (E[key + '_estimated'] === '1' ? '~' : '') + KM.num(num(key));
    }));
    good = good && got.join(' ') === want.join(' ');
    if (!good && n++ === 0) out.push('# rank ' + p + ': ' + got.join(' ') + ', expected ' + want.join(' '));
  });
  var waited = 0;
  for (var p = 0; E['prediction.csv:' + p + ':waited'] !== undefined; p++)
    waited += num('prediction.csv:' + p + ':waited') > 0;
  ok(good && $$('#predrows tr').length === T.ranks + 1 && waited > 0,
     'figures: every rank\'s prediction row, overhead and time waited with their marks (' + waited + ' ranks waited)');
  var why = $('#predexplain') ? $('#predexplain').textContent : '';
  ok(/leaves out MPI start-up S and libkm's overhead O/.test(why) && /W is how long the rank waited for a processor/.test(why) &&
     /max over ranks of \(T − S − O\)/.test(why) && /T − S − O/.test($('#pred').textContent),
     'figures: the prediction says what it leaves out (' + why.slice(0, 60) + '...)');
}

/* Going back and forth is asynchronous: wait for the page's popstate
   (its own listener, registered first, has rendered by then), or give up
   after a while. */
function afterNavigation(then) {
  var done = false;
  function once() {
    if (done) return;
    done = true;
    window.removeEventListener('popstate', once);
    then();
  }
  window.addEventListener('popstate', once);
  setTimeout(once, 10000);
}
function history() {
  var before = $('button.view.on').dataset.v;
  afterNavigation(function () {
    var after = $('button.view.on').dataset.v;
    ok(before === 'figures' && after === 'ranks', '<< goes back to the previous view (' + after + ')');
    afterNavigation(function () {
      ok($('button.view.on').dataset.v === 'figures', '>> goes forward again');
      finish();
    });
    document.getElementById('fwd').click();
  });
  document.getElementById('back').click();
}

/* --- speed: every view against one pass over all the data ------------- */
function time(f) {
  var t0 = performance.now();
  f();
  return performance.now() - t0;
}
function speed() {
  var D = JSON.parse(document.getElementById('kmdata').textContent), sum = 0;
  var base = time(function () {
    ['elapsed', 'net', 'counts', 'mpi', 'io'].forEach(function (m) {
      var a = KM.array(D.rv[m]);
      for (var i = 0; i < a.length; i++) sum += a[i];
    });
  });
  ok(sum > 0, 'one pass over the ' + T.ranks + ' x ' + names.length + ' tables: ' + base.toFixed(1) + ' ms');
  var steps = [['profile', function () { btn('view', 'profile'); }],
               ['descending', function () { btn('order', 'desc'); }],
               ['elapsed', function () { btn('metric', 'elapsed'); }],
               ['one rank', function () { pick('rank', 500); }],
               ['locations', function () { btn('view', 'locations'); }],
               ['every rank', function () { btn('view', 'ranks'); pick('subject', 'r7'); }],
               ['heat map', function () { btn('view', 'heat'); }],
               ['heat map, whole-map colour', function () { btn('hscale', 'map'); }],
               ['figures', function () { btn('view', 'figures'); }]];
  steps.forEach(function (s) {
    var ms = time(s[1]), nodes = document.getElementsByTagName('*').length;
    ok(ms < 25 * base + 50 && nodes < 20000,
       s[0] + ': ' + ms.toFixed(1) + ' ms (' + (ms / base).toFixed(1) + 'x one pass), ' + nodes + ' elements');
  });
  out.push('# load and first view: ' + performance.now().toFixed(0) + ' ms');
  finish();
}

/* --- the diff page: its order, another order, hover ------------------ */
function tableOrder() {
  return $$('#both tr').slice(1).map(function (r) { return r.children[1].textContent; }).join(' ');
}
function diffPage() {
  selfContained();
  ok(tableOrder() === E.order, 'diff: regions in PARP order (' + tableOrder() + ')');
  ok(rows().length === E.order.split(' ').length, 'diff: a pair of bars per region');
  var w = rows().map(function (r) {
    return Array.prototype.map.call(r.querySelectorAll('.b i'), function (i) { return parseFloat(i.style.width); });
  });
  ok(w.join(' ') === E.widths, 'diff: bar lengths are tA and tB against the longest (' + w.join(' ') + ')');
  btn('order', 'diff');
  ok(tableOrder() === E.bydiff, 'diff: ordered by |B-A| on a click (' + tableOrder() + ')');
  btn('order', 'ratio');
  ok(tableOrder() === E.byratio, 'diff: ordered by ratio on a click (' + tableOrder() + ')');
  var tip = hover(rows()[0].querySelector('.b'));
  ok(/A: .* of A/.test(tip) && /B: .* of B/.test(tip) && /B \/ A: 10/.test(tip),
     'diff: hover gives both times, shares and the ratio (' + tip.slice(0, 70) + '...)');
  var bd = $$('#breakdown tr')[2].textContent;
  ok(/^Computation/.test(bd) && /75\.0%$/.test(bd), 'diff: computation is 75% of the difference (' + bd + ')');
  finish();
}

/* --- the headline of a hand-made run --------------------------------- */
function kpiPage() {
  var k = kpis(), titles = {};
  $$('#kpis .kpi').forEach(function (d) { titles[d.querySelector('span').textContent] = d.title; });
  Object.keys(E).forEach(function (key) {
    if (key.indexOf('title:') === 0)
      ok(titles[key.slice(6)] === E[key], 'headline: "' + key.slice(6) + '" says on hover: ' + titles[key.slice(6)]);
    else if (key.indexOf('absent:') === 0)
      ok(!(key.slice(7) in k), 'headline: no "' + key.slice(7) + '"');
    else ok(k[key] === E[key], 'headline: ' + key + ' ' + k[key] + ' (expected ' + E[key] + ')');
  });
  finish();
}

/* --- the Messages view: matrix, pairs and call sites against kmgen ---- */
/* expect holds kmgen's rank_peers.csv and rank_messages.csv expectations,
   the locations' lines and routines, the routines' names, and "per": the
   ranks a matrix cell should aggregate. */
function intOf(s) { return +String(s).replace(/,/g, ''); }
function expectedPairs(what) {          /* what: 'sent' or 'alltoall' */
  var pairs = [];
  Object.keys(E).forEach(function (k) {
    var m = /^rank_peers\.csv:(\d+)\/(\d+):(\w+)$/.exec(k);
    var msgs = what === 'sent' ? 'messages_sent' : 'alltoall_messages';
    if (m && m[3] === msgs && +E[k] > 0)
      pairs.push([+m[1], +m[2], +E[k], num('rank_peers.csv:' + m[1] + '/' + m[2] + ':' +
                                           (what === 'sent' ? 'bytes_sent' : 'alltoall_bytes'))]);
  });
  return pairs;
}
/* the expected cells: "row/col" -> [bytes, messages], blocks of per */
function expectedCells(pairs, per) {
  var cells = {};
  pairs.forEach(function (p) {
    var k = Math.floor(p[0] / per) + '/' + Math.floor(p[1] / per), c = cells[k] || (cells[k] = [0, 0]);
    c[0] += p[3];
    c[1] += p[2];
  });
  return cells;
}
function ranksText(k, per, n) {
  var lo = k * per, hi = Math.min(n, lo + per) - 1;
  return lo === hi ? 'rank ' + lo : 'ranks ' + lo + '–' + hi;
}
/* Hover every cell that holds messages and as many empty ones: the tip's
   sender, receiver, bytes and messages exactly, and the colour painted. */
function matrixCells(pairs, what) {
  var cv = $('#mheat'), per = +E.per, n = T.ranks, side = Math.ceil(n / per);
  ok(cv && +cv.dataset.side === side && +cv.dataset.per === per,
     what + ': the map is ' + side + ' cells a side, ' + per + ' rank' + (per > 1 ? 's' : '') + ' a cell');
  var c = +cv.dataset.cell, left = +cv.dataset.left, top = +cv.dataset.top, b = cv.getBoundingClientRect();
  var ctx = cv.getContext('2d'), cells = expectedCells(pairs, per), keys = Object.keys(cells), bad = [];
  for (var e = 0; e < side && keys.length < 2 * Object.keys(cells).length + 1; e++) {
    var k0 = e + '/' + ((e + Math.floor(side / 2)) % side);
    if (!cells[k0]) keys.push(k0);
  }
  var empties = 0;
  keys.forEach(function (k) {
    var rc = k.split('/').map(Number), x = left + (rc[1] + 0.5) * c, y = top + (rc[0] + 0.5) * c;
    cv.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: b.left + x, clientY: b.top + y}));
    var tip = document.getElementById('tip').textContent, want = cells[k] || [0, 0];
    var by = /bytes: ([\d,]+) B/.exec(tip), ms = /messages: ([\d,]+)/.exec(tip);
    var from = ranksText(rc[0], per, n), to = ranksText(rc[1], per, n);
    var px = ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
    var grey = px[0] === 238 && px[1] === 240 && px[2] === 244;
    if (!cells[k]) empties++;
    if (!(tip.indexOf('sender: ' + from) >= 0 && tip.indexOf('receiver: ' + to) >= 0 && by && ms &&
          intOf(by[1]) === want[0] && intOf(ms[1]) === want[1] && grey === !cells[k]) && bad.length < 3)
      bad.push(k + ': "' + tip + '" expected ' + from + ' → ' + to + ' ' + want.join(' B, ') + ' messages' +
               (grey === !cells[k] ? '' : ', painted ' + Array.prototype.join.call(px, ',')));
  });
  ok(bad.length === 0 && keys.length > empties, what + ': the mouse over ' + (keys.length - empties) +
     ' cells with messages and ' + empties + ' without gives sender, receiver, exact bytes and messages; ' +
     'grey where nothing was sent' + (bad.length ? ' (' + bad.join('; ') + ')' : ''));
}
/* The table: its first rows in the order of a sort, exactly. */
function tableRows() {
  return $$('#mpairs tr').slice(1).map(function (tr) {
    return Array.prototype.map.call(tr.children, function (td) { return intOf(td.textContent); }).slice(0, 4);
  });
}
/* The pairs the page holds: all, or (more than 500) the 250 heaviest by
   bytes and the 250 by messages, as kmview picks them. */
function heldPairs(pairs) {
  if (pairs.length <= 500) return pairs;
  var byBytes = function (a, b) { return b[3] - a[3] || b[2] - a[2] || a[0] - b[0] || a[1] - b[1]; };
  var byMsgs = function (a, b) { return b[2] - a[2] || b[3] - a[3] || a[0] - b[0] || a[1] - b[1]; };
  var held = {};
  pairs.slice().sort(byBytes).slice(0, 250).concat(pairs.slice().sort(byMsgs).slice(0, 250))
    .forEach(function (p) { held[p[0] + '/' + p[1]] = p; });
  return Object.keys(held).map(function (k) { return held[k]; });
}
function pairsTable(pairs, what) {
  var held = heldPairs(pairs), order = {bytes: function (a, b) { return b[3] - a[3] || a[0] - b[0] || a[1] - b[1]; },
               messages: function (a, b) { return b[2] - a[2] || b[3] - a[3] || a[0] - b[0] || a[1] - b[1]; },
               from: function (a, b) { return a[0] - b[0] || b[3] - a[3] || a[1] - b[1]; }};
  ['bytes', 'messages', 'from'].forEach(function (key) {
    if (key !== 'bytes') btn('msort', key);
    var want = held.slice().sort(order[key]), got = tableRows(), n = Math.min(got.length, 50);
    var same = got.length > 0 && got.length <= 50 && got.length === Math.min(50, want.length);
    for (var i = 0; i < n && same; i++) same = got[i].join(' ') === want[i].join(' ');
    ok(same, what + ': the table by ' + key + ' lists the pairs in that order with exact messages and bytes (' +
       got.length + ' rows; first ' + (got[0] || []).join(' ') + ', expected ' + want[0].join(' ') + ')');
  });
  var more = $('#mrows');
  if (pairs.length > 50) {
    ok(more !== null, what + ': a button shows every row the page holds');
    more.click();
    var all = tableRows().length;
    ok(all === held.length,
       what + ': ' + all + ' rows of ' + pairs.length + ' pairs' + (pairs.length > 500 ? ' (the heaviest)' : ''));
    ok(pairs.length > 500 === /heaviest of/.test($('#mpairsnote').textContent),
       what + ': the note says whether the table has every pair');
  }
  btn('msort', 'bytes');
}
/* Per call site over ranks: its totals and the bars of its histogram. */
function expectedSites() {
  var sites = {};
  Object.keys(E).forEach(function (k) {
    var m = /^rank_messages\.csv:(\d+)\/(\d+):(\w+)$/.exec(k);
    if (!m) return;
    var s = sites[m[2]] || (sites[m[2]] = {id: +m[2], messages: 0, sent: 0, received: 0, bins: {}, ranks: 0});
    if (m[3] === 'sizes') {
      s.ranks++;
      E[k].split(' ').forEach(function (bc) {
        var b = bc.split(':');
        s.bins[b[0]] = (s.bins[b[0]] || 0) + +b[1];
      });
    } else s[m[3]] += +E[k];
  });
  return Object.keys(sites).map(function (id) { return sites[id]; })
    .sort(function (a, b) { return b.sent + b.received - a.sent - a.received || a.id - b.id; });
}
function callSites() {
  var want = expectedSites(), cards = $$('#msites .site'), bad = [];
  ok(cards.length === want.length, 'sites: a chart per MPI call site (' + cards.length + ', expected ' +
     want.length + ')');
  want.forEach(function (s, i) {
    var card = cards[i], id = s.id, name = E['routines.csv:' + E['locations.csv:' + id + ':routine_id'] + ':name'] +
        ' line ' + E['locations.csv:' + id + ':line'];
    if (!card) return;
    var st = card.querySelector('.st').textContent.replace(/,/g, ''), most = 0, good = true;
    good = card.querySelector('.sh b').textContent === name && st.indexOf(s.messages + ' messages') === 0 &&
      st.indexOf('sent ' + s.sent + ' B') > 0 && st.indexOf('received ' + s.received + ' B') > 0 &&
      st.indexOf(s.ranks + ' rank') > 0;
    Object.keys(s.bins).forEach(function (b) { most = Math.max(most, s.bins[b]); });
    var bars = card.querySelectorAll('.hb'), filled = 0;
    Array.prototype.forEach.call(bars, function (bar) {
      var n = s.bins[bar.dataset.bin] || 0, h = parseFloat(bar.firstChild.style.height);
      if (h > 0) filled++;
      good = good && +bar.dataset.n === n && Math.abs(h - 100 * n / most) < 0.01;
    });
    good = good && filled === Object.keys(s.bins).length;
    if (!good && bad.length < 2) bad.push(name + ': "' + st + '" ' + JSON.stringify(s.bins));
  });
  ok(bad.length === 0, 'sites: in order of bytes, each with its routine, line, messages, bytes sent and ' +
     'received and ranks, its bars as high as its bins\' messages against the fullest' +
     (bad.length ? ' (' + bad.join('; ') + ')' : ''));
  var zero = $('#msites .hb[data-bin="0"][data-n]:not([data-n="0"])');
  var tip = zero ? hover(zero).replace(/,/g, '') : '';
  var empty = want.some(function (s) { return s.bins[0] > 0; });
  ok(empty ? zero && /size: 0 B/.test(tip) && new RegExp('messages: ' + zero.dataset.n + ' ').test(tip) : !zero,
     'sites: ' + (empty ? 'the bar of empty messages (bin 0) says so on hover (' + tip + ')' : 'no empty message'));
  var bin = $('#msites .hb[data-bin="9"]');
  ok(!bin || /256–511 B/.test(hover(bin)), 'sites: bin 9 holds 256–511 bytes');
}
function messagesPage() {
  selfContained();
  var b = $('button.view[data-v="messages"]');
  ok(b && !b.disabled, 'messages: the Messages view is offered');
  btn('view', 'messages');
  var per = +E.per;
  ok(per > 1 === ($('#mblocks') !== null) && (per === 1 || new RegExp('blocks? of ' + per +
     ' consecutive ranks').test($('#mblocks').textContent)), 'messages: ' + (per > 1 ? 'the page says ranks ' +
     'are aggregated into blocks of ' + per : 'one rank a row and column'));
  var sent = expectedPairs('sent');
  matrixCells(sent, 'point-to-point');
  pairsTable(sent, 'point-to-point');
  btn('mshow', 'messages');
  ok(/Colour: messages/.test($('#mnote').textContent) && / messages$/.test($('#mscale').textContent),
     'messages: colour by message counts');
  btn('mscale', 'log');
  ok(/logarithmic/.test($('#mnote').textContent), 'messages: a logarithmic colour scale');
  var a2a = expectedPairs('alltoall'), a2aButton = $('button[data-k="mpart"][data-v="a2a"]');
  ok(a2aButton.disabled === (a2a.length === 0), 'messages: the all-to-all part is offered when there is one');
  if (a2a.length) {
    btn('mpart', 'a2a');
    matrixCells(a2a, 'all-to-all');
    pairsTable(a2a, 'all-to-all');
  }
  callSites();
  finish();
}
/* A run without messages: no Messages view, not even when asked for. */
function noMessagesPage() {
  ok($('button.view[data-v="messages"]') === null, 'no messages: no Messages view is offered');
  window.history.replaceState(null, '', '#view=messages');
  window.dispatchEvent(new PopStateEvent('popstate'));
  ok($('button.view.on').dataset.v === 'profile' && $('#mheat') === null && $('#msites') === null,
     'no messages: asking for it by address shows the profile');
  finish();
}

/* --- the Files view against kmview's own rank_files.csv -------------- */
/* expect holds the CSV's lines ("csv:N"), which the test sums per file
   itself: every row the page shows, its cells and bar, the kinds of its
   bytes, the sort orders, the totals and the ranks of each file. */
function csvFields(line) {
  var out = [], f = '', q = false;
  for (var i = 0; i < line.length; i++) {
    var c = line.charAt(i);
    if (q && c === '"' && line.charAt(i + 1) === '"') { f += '"'; i++; }
    else if (c === '"') q = !q;
    else if (c === ',' && !q) { out.push(f); f = ''; }
    else f += c;
  }
  out.push(f);
  return out;
}
function csvRows() {
  var head = csvFields(E['csv:1']), rows = [];
  for (var n = 2; E['csv:' + n] !== undefined; n++) {
    var f = csvFields(E['csv:' + n]), o = {};
    head.forEach(function (h, k) { o[h] = f[k]; });
    rows.push(o);
  }
  return rows;
}
/* An MPI-IO block's row says so in a column "interface" or "mpiio" once
   kmview writes one; every other row is Fortran's. */
function ifaceOfCsv(o) {
  if (o.interface !== undefined) return /mpi/i.test(o.interface) ? 'MPI-IO' : 'Fortran';
  return o.mpiio === '1' || o.mpiio === 'true' ? 'MPI-IO' : 'Fortran';
}
var META_COLS = ['opens', 'closes', 'inquires', 'seeks', 'flushes'];
var KIND_SAID = {exact: 'exact', estimate: '~ estimate', at_least: '>= at least', unknown: '- not known'};
function fileSum(name, iface) {
  return {name: name, iface: iface, seen: {}, ranks: 0, ops: [0, 0, 0, 0, 0], meta: 0, reads: 0, read: 0, rb: 0,
          rk: [], writes: 0, write: 0, wb: 0, wk: [], est: [false, false, false], sizes: [], rows: []};
}
/* CSV rows are added in the CSV's order (rank order), as kmview adds them. */
function addCsv(s, o) {
  if (!s.seen[o.rank]) { s.seen[o.rank] = true; s.ranks++; }
  META_COLS.forEach(function (c, k) { s.ops[k] += +o[c]; });
  s.meta += parseFloat(o.meta_seconds);
  s.reads += +o.reads; s.read += parseFloat(o.read_seconds); s.rb += +o.bytes_read; s.rk.push(o.bytes_read_kind);
  s.writes += +o.writes; s.write += parseFloat(o.write_seconds); s.wb += +o.bytes_written;
  s.wk.push(o.bytes_written_kind);
  ['meta', 'read', 'write'].forEach(function (m, k) { s.est[k] = s.est[k] || o[m + '_estimated'] === '1'; });
  if (o.size !== '') s.sizes.push(+o.size);
  s.rows.push(o);
}
function sumTime(s) { return s.meta + s.read + s.write; }
function csvTime(o) { return parseFloat(o.meta_seconds) + parseFloat(o.read_seconds) + parseFloat(o.write_seconds); }
function allUnknown(kinds) { return kinds.every(function (k) { return k === 'unknown'; }); }
function byIfaceName(a, b) {
  return a.iface < b.iface ? -1 : a.iface > b.iface ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
function fileSums() {
  var by = {}, all = [];
  csvRows().forEach(function (o) {
    var k = ifaceOfCsv(o) + '\n' + o.file;
    if (!by[k]) all.push(by[k] = fileSum(o.file, ifaceOfCsv(o)));
    addCsv(by[k], o);
  });
  return all;
}
/* The files the page holds: every one up to 500, else the 250 with the
   most I/O time and the 250 with the most known bytes (ties: interface,
   then name), as htmlfiles.c picks them. */
function heldFiles(sums) {
  if (sums.length <= 500) return sums.slice();
  var bytes = function (s) { return allUnknown(s.rk.concat(s.wk)) ? -1 : s.rb + s.wb; }, held = [];
  [sumTime, bytes].forEach(function (key) {
    sums.slice().sort(function (a, b) { return key(b) - key(a) || byIfaceName(a, b); }).slice(0, 250)
      .forEach(function (s) { if (held.indexOf(s) < 0) held.push(s); });
  });
  return held;
}
/* What a sum of bytes of these kinds must show: '-' when no figure is
   known, else >= when some is at least or not known, ~ when some is an
   estimate; marked mixed when the kinds differ. */
function wantBytes(b, kinds) {
  var has = {}, n = 0;
  kinds.forEach(function (k) { if (!has[k]) n++; has[k] = (has[k] || 0) + 1; });
  var mark = (has.at_least || has.unknown ? '>=' : '') + (has.estimate ? '~' : '');
  var known = has.exact || has.estimate || has.at_least;
  return {data: known ? mark + b : '-', text: known ? mark + KM.bytesText(b) : '-', mixed: n > 1, has: has};
}
function bytesOk(td, b, kinds) {
  var w = wantBytes(b, kinds), good = td.dataset.b === w.data && td.textContent === w.text &&
    td.classList.contains('mixed') === w.mixed;
  if (w.mixed)
    Object.keys(w.has).forEach(function (k) {
      good = good && td.title.indexOf(KIND_SAID[k] + ' on ' + KM.intText(w.has[k])) >= 0;
    });
  return good ? '' : 'bytes "' + td.textContent + '" data ' + td.dataset.b + (td.className ? ' ' + td.className : '') +
    ' title "' + td.title + '", expected ' + w.data + (w.mixed ? ' mixed' : '');
}
function sec(v, est) { return (est ? '~' : '') + KM.num(v); }
/* The text each column of a file's row must show. */
function wantCells(s) {
  var w = {Interface: s.iface, Ranks: KM.intText(s.ranks), 'I/O (s)': sec(sumTime(s), s.est.some(Boolean)),
           'Meta (s)': sec(s.meta, s.est[0]), Reads: KM.intText(s.reads), 'Read (s)': sec(s.read, s.est[1]),
           Writes: KM.intText(s.writes), 'Write (s)': sec(s.write, s.est[2]),
           Size: s.sizes.length ? KM.bytesText(Math.max.apply(null, s.sizes)) : '-'};
  ['Opens', 'Closes', 'Inquire', 'Seeks', 'Flushes'].forEach(function (h, k) { w[h] = KM.intText(s.ops[k]); });
  return w;
}
function columns(table) {
  return $$(table + ' > tbody > tr:first-child > th').map(function (th) { return th.textContent; });
}
/* Every cell of a table row against the sum s; the bar against max. */
function rowOk(tr, s, cols, max) {
  var td = tr.children, w = wantCells(s), bad = [];
  cols.forEach(function (c, k) {
    if (w[c] !== undefined && td[k].textContent !== w[c]) bad.push(c + ' "' + td[k].textContent + '" not "' + w[c] + '"');
  });
  var rb = bytesOk(td[cols.indexOf('Read')], s.rb, s.rk), wb = bytesOk(td[cols.indexOf('Written')], s.wb, s.wk);
  if (rb) bad.push('read ' + rb);
  if (wb) bad.push('written ' + wb);
  var segs = Array.prototype.map.call(td[cols.indexOf('Metadata | read | write')].querySelectorAll('i'),
                                      function (i) { return i.className + ':' + parseFloat(i.style.width); });
  var want = [['fmeta', s.meta], ['fread', s.read], ['fwrite', s.write]].filter(function (x) { return x[1] > 0; })
    .map(function (x) { return x[0] + ':' + Number((100 * x[1] / max).toFixed(3)); });
  if (segs.join(' ') !== want.join(' ')) bad.push('bar ' + segs.join(' ') + ' not ' + want.join(' '));
  return bad.join('; ');
}
function label(s) { return s.name + ' (' + s.iface + ')'; }
/* The file rows of the table: "name (interface)". */
function tableLabels() {
  return $$('#ftable tr[data-f]').map(function (tr) {
    return tr.querySelector('td.fn').textContent + ' (' + tr.children[1].textContent + ')';
  });
}
function sumOf(groups) {
  var s = fileSum('', groups[0].iface);
  groups.slice().sort(byIfaceName).forEach(function (g) { g.rows.forEach(function (o) { addCsv(s, o); }); });
  return s;
}
var FSORTS = {time: sumTime, meta: function (s) { return s.meta; }, data: function (s) { return s.read + s.write; },
  bytes: function (s) { return allUnknown(s.rk.concat(s.wk)) ? -1 : s.rb + s.wb; },
  read: function (s) { return allUnknown(s.rk) ? -1 : s.rb; },
  written: function (s) { return allUnknown(s.wk) ? -1 : s.wb; }, ranks: function (s) { return s.ranks; }};
function filesSorts(held) {
  Object.keys(FSORTS).concat(['name']).forEach(function (key) {
    var b = $('#ftable th button[data-v="' + key + '"]') || $('button[data-k="fsort"][data-v="' + key + '"]');
    b.click();
    var k = FSORTS[key], want = held.slice().sort(function (a, c) {
      return (k ? k(c) - k(a) || sumTime(c) - sumTime(a) : 0) || (a.name < c.name ? -1 : a.name > c.name ? 1 : 0) ||
        (a.iface < c.iface ? -1 : a.iface > c.iface ? 1 : 0);
    }).map(label), got = tableLabels();
    ok(got.join('\n') === want.join('\n'), 'files: sorted by ' + key + ' (' + got.slice(0, 4).join(' | ') +
       ' ..., expected ' + want.slice(0, 4).join(' | ') + ' ...)');
  });
  btn('fsort', 'time');
}
/* The file picked: the least, mean and most time over its ranks, and its
   ranks with the most I/O time (10 at most; ties: the lower rank). */
function fileDetail(s) {
  var est = s.est.some(Boolean), lo = null, hi = null;
  s.rows.forEach(function (o) {
    if (!lo || csvTime(o) < csvTime(lo)) lo = o;
    if (!hi || csvTime(o) > csvTime(hi)) hi = o;
  });
  var rowEst = function (o) {
    return o.meta_estimated === '1' || o.read_estimated === '1' || o.write_estimated === '1' ? '~' : '';
  };
  var note = 'least ' + rowEst(lo) + KM.sec(csvTime(lo)) + ' (rank ' + lo.rank + '), mean ' + (est ? '~' : '') +
    KM.sec(sumTime(s) / s.ranks) + ', most ' + rowEst(hi) + KM.sec(csvTime(hi)) + ' (rank ' + hi.rank + ')';
  var want = s.rows.map(function (o, k) { return [o, k]; }).sort(function (a, b) {
    return csvTime(b[0]) - csvTime(a[0]) || a[1] - b[1];
  }).slice(0, 10).map(function (x) { return x[0]; });
  var cols = columns('#franks'), trs = $$('#franks tr').slice(1), bad = [];
  if (trs.length !== want.length) bad.push(trs.length + ' ranks, expected ' + want.length);
  want.forEach(function (o, k) {
    var tr = trs[k];
    if (!tr) return;
    var one = fileSum(s.name, s.iface);
    addCsv(one, o);
    var cells = tr.children, e = rowOk(tr, one, cols, csvTime(want[0]));
    if (cells[0].textContent !== o.rank) e = 'rank ' + cells[0].textContent + ' not ' + o.rank + '; ' + e;
    if (e && bad.length < 2) bad.push(e);
  });
  var head = $('#fdetail').textContent, dn = $('#fdnote').textContent;
  ok(head === s.name + ' (' + s.iface + ')' && dn.indexOf(note) >= 0 && bad.length === 0,
     'files: ' + s.name + ': ' + dn.slice(0, 120) + (head === s.name + ' (' + s.iface + ')' ? '' : ' heading ' + head) +
     (dn.indexOf(note) >= 0 ? '' : ', expected ' + note) + (bad.length ? ' (' + bad.join('; ') + ')' : ''));
}
/* The table with the files of interface `iface` ('' all): a row per file
   the page holds, the others summed per interface, the totals. */
function filesTable(sums, held, iface, cols) {
  var of = function (v) { return v.filter(function (s) { return !iface || s.iface === iface; }); };
  var mine = of(held), rest = of(sums).filter(function (s) { return held.indexOf(s) < 0; }), max = 0, bad = [];
  var what = 'files' + (iface ? ' (' + iface + ')' : '') + ': ';
  held.forEach(function (s) { max = Math.max(max, sumTime(s)); });
  var labels = tableLabels();
  ok(labels.length === mine.length, what + 'a row per file the page holds (' + labels.length + ', expected ' +
     mine.length + ' of ' + of(sums).length + ')');
  $$('#ftable tr[data-f]').forEach(function (tr, k) {
    var s = mine.filter(function (h) { return label(h) === labels[k]; })[0];
    var e = s ? rowOk(tr, s, cols, max) : 'not a file of the CSV';
    if (e && bad.length < 3) bad.push(labels[k] + ': ' + e);
  });
  ok(bad.length === 0, what + 'every row\'s name, interface, ranks, operations, times (~ where estimated), ' +
     'bytes with their kind and size as the CSV sums them, its bar metadata | read | write against the ' +
     'longest' + (bad.length ? ' (' + bad.join('; ') + ')' : ''));
  ['Fortran', 'MPI-IO'].forEach(function (i) {
    var r = rest.filter(function (s) { return s.iface === i; }), tr = $$('#ftable tr.other').filter(function (t) {
      return / files$/.test(t.children[0].textContent) && t.children[0].textContent.indexOf(' ' + i + ' ') > 0;
    })[0];
    if (!r.length) return ok(!tr, what + 'no row of other ' + i + ' files');
    var e = tr ? rowOk(tr, sumOf(r), cols, sumTime(sumOf(r))) : 'none';
    ok(!e && tr.children[0].textContent === KM.intText(r.length) + ' other ' + i + ' files',
       what + 'the others summed in one row: ' + (tr ? tr.children[0].textContent : '') + (e ? ' (' + e + ')' : ''));
  });
  var total = $('#ftable tr.total'), all = fileSum('', iface || '');
  csvRows().forEach(function (o) { if (!iface || ifaceOfCsv(o) === iface) addCsv(all, o); });
  var te = rowOk(total, all, cols, sumTime(all)), n = of(sums).length;
  ok(total.children[0].textContent === 'Total (' + KM.intText(n) + ' file' + (n === 1 ? '' : 's') + ')' && !te,
     what + 'the totals row sums every rank\'s rows: ' + total.textContent.slice(0, 90) + (te ? ' (' + te + ')' : ''));
}
function filesPage() {
  selfContained();
  var b = $('button.view[data-v="files"]');
  ok(b && !b.disabled, 'files: the Files view is offered');
  btn('view', 'files');
  var sums = fileSums(), held = heldFiles(sums), cols = columns('#ftable');
  if ($('#frows')) $('#frows').click();
  ok(held.length < sums.length === /holds the \d+ files/.test($('#fnote').textContent),
     'files: the note says whether the page holds every file');
  filesTable(sums, held, '', cols);
  var both = ['Fortran', 'MPI-IO'].every(function (i) { return sums.some(function (s) { return s.iface === i; }); });
  ok(both === ($('button[data-k="fiface"]') !== null), 'files: a choice of interface when there are two');
  if (both) {
    btn('fiface', 'mpiio');
    filesTable(sums, held, 'MPI-IO', cols);
    btn('fiface', 'fortran');
    filesTable(sums, held, 'Fortran', cols);
    btn('fiface', 'all');
  }
  ok($('#ftable td.fn b') === null && $$('#ftable tr[data-f]').every(function (tr) {
    return tr.querySelector('a').title === tr.querySelector('td.fn').textContent + ': its ranks';
  }), 'files: names are text, escaped in cells and titles');
  var specials = {'<stdin>': /^<stdin>$/, '<stdout>': /^<stdout>$/, '<internal>': /^<internal>$/,
                  '<unit not known>': /^<unit not known>$/, 'fort.N': /^fort\.\d+$/,
                  '<file handle N>': /^<file handle \d+>$/};
  var glossary = $('#fnames') ? $('#fnames').textContent : '', said = true;
  Object.keys(specials).forEach(function (n) {
    var there = held.some(function (s) { return specials[n].test(s.name); });
    said = said && there === (glossary.indexOf(n + ' ') >= 0);
  });
  ok(said, 'files: the note explains the names that are not files, those the table holds (' +
     glossary.slice(0, 60) + '...)');
  filesSorts(held);
  var picks = held.length <= 24 ? held : held.slice(0, 3), link = function (s) {
    var k = tableLabels().indexOf(label(s));
    return $$('#ftable tr[data-f]')[k].querySelector('a');
  };
  ok($('#fdetail') === null, 'files: no file is open at first');
  picks.forEach(function (s) {
    link(s).click();
    fileDetail(s);
  });
  var last = picks[picks.length - 1], under = $('#ftable tr.on + tr.fdrow #fdetail');
  ok(under && $('#ftable tr.on td.fn').textContent === last.name, 'files: its ranks open under the file\'s row');
  link(last).click();
  ok($('#fdetail') === null && $('#ftable tr.on') === null, 'files: a second click closes them');
  finish();
}
/* A run without Files blocks: no Files view, not even when asked for. */
function noFilesPage() {
  ok($('button.view[data-v="files"]') === null, 'no files: no Files view is offered');
  window.history.replaceState(null, '', '#view=files');
  window.dispatchEvent(new PopStateEvent('popstate'));
  ok($('button.view.on').dataset.v === 'profile' && $('#ftable') === null,
     'no files: asking for it by address shows the profile');
  finish();
}

/* --- the timeline view: the grid, the phases, the departing ranks ----- */
function timelinePage() {
  selfContained();
  btn('view', 'timeline');
  var cv = $('#timeline'), TL = KM.data().timeline;
  ok(!!cv, 'timeline: the view draws the ranks x slots canvas');
  ok(TL.slots === +E.slots, 'timeline: ' + TL.slots + ' slots (expected ' + E.slots + ')');
  var cw = Math.max(2, Math.min(16, Math.floor(1000 / TL.slots)));
  ok(cv.width >= cw * TL.slots && cv.width <= cw * TL.slots + 70,
     'timeline: one column of ' + cw + ' pixels per slot (' + cv.width + ' wide)');
  var phases = $$('#tlphases tr').length - 1;
  ok(phases === +E.phases, 'timeline: ' + phases + ' phases listed (expected ' + E.phases + ')');
  var dep = $$('#tldeparts tr').slice(1).map(function (r) { return r.children[0].textContent; }).join(' ');
  ok(dep === E.departs, 'timeline: the ranks that depart, ' + dep + ' (expected ' + E.departs + ')');
  var b = cv.getBoundingClientRect();
  var tip = hover(cv, b.left + cv.width - 3 * cw, b.top + cv.height - 3);
  ok(/slot \d+/.test(tip) && /computation: /.test(tip) && /MPI: /.test(tip),
     'timeline: hover gives a cell\'s slot and figures (' + tip.slice(0, 60) + '...)');
  var px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data, busy = 0;
  for (var i = 0; i < px.length; i += 4) if (px[i] + px[i + 1] + px[i + 2] < 3 * 240) busy++;
  ok(busy > 0.5 * cv.width * cv.height, 'timeline: the slots the ranks were busy in are coloured (' +
     (100 * busy / (cv.width * cv.height)).toFixed(0) + '% of the canvas)');
  finish();
}

/* The Trace view (kmview --html ... --trace): its rows, regions and
   message lines against kmtracegen's counts, nesting, zoom, hover; mode
   "tracebig" a trace of more regions than the page keeps exactly. */
function tracePage() {
  selfContained();
  btn('view', 'trace');
  var c = $('#tcanvas');
  ok(c && c.height > 0, 'the Trace view draws on a canvas');
  var X = KM.trace.data(KM.data()), nrows = X.rows.length;
  ok(nrows === num('rows'), 'one row per rank and thread: ' + nrows + ' (expected ' + E.rows + ')');
  ok(X.nregions === num('regions'), 'every region counted: ' + X.nregions + ' (expected ' + E.regions + ')');
  ok(X.matched === num('matched'), 'messages matched: ' + X.matched + ' (expected ' + E.matched + ')');
  var seen = {}, dup = 0;
  X.regions.forEach(function (g) { var k = g.join('\u001f'); if (seen[k]) dup++; seen[k] = 1; });
  ok(dup === 0 && X.regions.length <= 13, 'the ranks\' regions are one table, each region once (' +
     X.regions.length + ' regions, ' + dup + ' twice)');
  if (T.mode === 'tracemany') {
    ok(X.fileStride === num('stride') && /of 600 ranks 1 in 2 is shown/.test($('#tnote').textContent),
       'more rows than fit: 1 rank in ' + X.fileStride + ' shown, and said so');
    ok(X.rows[1].rank === 1 && X.rows[3].rank === 3 && X.oddShown === 2,
       'and ranks 1 and 3, which were elsewhere at the end than most');
    ok(c.height <= 32767 && KM.trace.last.exact + KM.trace.last.runs > 0, 'the canvas fits (' + c.height + ' px) and is drawn');
    finish();
    return;
  }
  if (T.mode === 'trace') {
    ok(X.complete && X.start.length === num('regions'), 'every region kept exactly: ' + X.start.length);
    ok(KM.trace.last.exact === num('regions'), 'the whole run draws every region: ' + KM.trace.last.exact);
    ok(KM.trace.last.lines === num('matched'), 'a line per message: ' + KM.trace.last.lines);
  } else {
    ok(!X.complete && X.start.length === 200000, 'the 200,000 longest regions kept exactly: ' + X.start.length);
    ok(KM.trace.last.level >= 0 && KM.trace.last.runs > 0, 'the whole run drawn from a summary (level ' +
       KM.trace.last.level + ', ' + KM.trace.last.runs + ' runs, ' + KM.trace.last.ms.toFixed(1) + ' ms)');
    echo('whole run drawn in ' + KM.trace.last.ms.toFixed(1) + ' ms');
  }
  /* children inside their parents, on every row */
  var bad = 0;
  X.rows.forEach(function (r) {
    var stack = [];
    r.ev.forEach(function (k) {
      while (stack.length && (stack.length > X.depth[k] ||
             X.start[stack[stack.length - 1]] + X.dur[stack[stack.length - 1]] < X.start[k])) stack.pop();
      var p = stack[stack.length - 1];
      if (X.depth[k] > 0 && X.complete && (p === undefined || X.depth[p] !== X.depth[k] - 1 ||
          X.start[k] + X.dur[k] > X.start[p] + X.dur[p])) bad++;
      stack.push(k);
    });
  });
  ok(bad === 0, 'every exact region lies inside its parent (' + bad + ' do not)');
  $('#tzin').click();
  var w = KM.trace.last.window;
  ok(near(w[1] - w[0], X.span / 2), 'zoom in halves the window');
  $('#tzall').click();
  w = KM.trace.last.window;
  ok(w[0] === 0 && w[1] === X.span, 'whole run: the window is the run again');
  /* deep zoom at the first region of row 0: exact events, a hover naming it */
  var k0 = X.rows[0].ev[0];
  X.rows[0].ev.forEach(function (k) { if (X.dur[k0] > X.span / 1e5 && X.dur[k] <= X.span / 1e5) k0 = k; });
  KM.trace.zoomTo(X.start[k0], X.start[k0] + Math.max(X.dur[k0] * 1.5, 2000));
  ok(KM.trace.last.level === -1 && KM.trace.last.exact > 0, 'zoomed in: exact events (' + KM.trace.last.exact +
     ' drawn in ' + KM.trace.last.ms.toFixed(1) + ' ms)');
  var h = KM.trace.hit(120 + 5, 22 + X.depth[k0] * 11 + 5);
  ok(h.indexOf(KM.esc(X.regions[X.region[k0]][0])) >= 0, 'the hover names the region under the mouse: ' +
     h.replace(/<[^>]*>/g, ' ').slice(0, 80));
  finish();
}
/* The Paths view (format 6): tests/kmview/paths.out's trees, whose every
   figure html.test gives: frames per depth, widths against the parent's,
   zoom in and out, search, rank and thread, estimated and MPI frames, the
   hover. */
function frames(d) { return $$('#flame .fr[data-d="' + d + '"]'); }
function frameNamed(label) {
  return $$('#flame .fr').filter(function (f) { return f.textContent === label; })[0] || null;
}
function width(f) { return parseFloat(f.style.width); }
function depths(what) {
  var d1 = frames(1).length, d2 = frames(2).length;
  ok(d1 === +E[what + '.d1'] && d2 === +E[what + '.d2'], what + ': ' + d1 + ' frames at depth 1, ' + d2 +
     ' at depth 2 (expected ' + E[what + '.d1'] + ', ' + E[what + '.d2'] + ')');
}
/* The frame of DO 10 against MAIN's, and every frame against its parent's
   as the page's data has them. */
function widths(what) {
  var r = E[what + '.ratio'].split('|'), parent = frameNamed(r[1]), child = frameNamed(r[0]);
  ok(parent && child && near(width(child) / width(parent), +r[2], 1e-3),
     what + ': ' + r[0] + ' is ' + (parent && child ? (width(child) / width(parent)).toFixed(4) : '?') + ' of ' +
     r[1] + '\'s width (elapsed ratio ' + r[2] + ')');
  var T = KM.flame.last.tree, bad = 0, byI = {};
  $$('#flame .fr').forEach(function (f) { byI[f.dataset.i] = f; });
  $$('#flame .fr').forEach(function (f) {
    var i = +f.dataset.i;
    if (+f.dataset.d === 0) return;
    var p = T.v[i * 8], pf = byI[p < 0 ? -1 : p], pe = p < 0 ? T.total : T.v[p * 8 + 4];
    if (!pf || Math.abs(width(f) - width(pf) * T.v[i * 8 + 4] / pe) > 0.02 ||
        parseFloat(f.style.left) < parseFloat(pf.style.left) - 0.01 ||
        parseFloat(f.style.left) + width(f) > parseFloat(pf.style.left) + width(pf) + 0.02) bad++;
  });
  ok(bad === 0, what + ': every frame lies under its parent, as wide against it as its elapsed time (' + bad +
     ' do not)');
}
function typeSearch(q) {
  var box = $('#psearch');
  box.value = q;
  box.dispatchEvent(new Event('input', {bubbles: true}));
  return $$('#flame .fr.hit').length;
}
function pathsPage() {
  selfContained();
  ok(!$('button.view[data-v="paths"]').disabled, 'the Paths view is offered');
  btn('view', 'paths');
  ok(!!$('#flame'), 'the Paths view draws the flame graph');
  depths('mean');
  widths('mean');
  var tip = hover(frameNamed('MAIN'));
  ok(tip.indexOf('inclusive (elapsed): ' + E['mean.main']) >= 0 && /mean over the ranks/.test(tip),
     'mean: MAIN\'s hover gives the mean inclusive time ' + E['mean.main'] + ' (' + tip.slice(0, 80) + ')');
  pick('rank', 0);
  depths('r0');
  widths('r0');
  tip = hover(frameNamed('MAIN'));
  ok(tip.indexOf('inclusive (elapsed): ' + E['r0.main']) >= 0, 'rank 0: MAIN\'s hover gives ' + E['r0.main']);
  var est = $$('#flame .fr.est').map(function (f) { return f.textContent; }).join(' ');
  ok(est === E['r0.est'], 'rank 0: the estimated frames are lighter: ' + est + ' (expected ' + E['r0.est'] + ')');
  ok(getComputedStyle($('#flame .fr.est')).opacity < 1 && getComputedStyle(frameNamed('MAIN')).opacity === '1',
     'rank 0: ... drawn lighter than the others');
  var mpi = $$('#flame .fr.mpi');
  ok(mpi.length === +E['r0.mpi'] && getComputedStyle(mpi[0]).backgroundColor !==
     getComputedStyle(frameNamed('MAIN')).backgroundColor, 'rank 0: ' + mpi.length + ' MPI call frames in ' +
     'their own colour (expected ' + E['r0.mpi'] + ')');
  tip = hover(frameNamed('HALO'));
  ok(E['r0.halo'].split('|').every(function (x) { return tip.indexOf(x) >= 0; }),
     'rank 0: HALO\'s hover: ' + tip + ' (expected "' + E['r0.halo'] + '")');
  /* search: live as one types, kept in the address */
  var n = typeSearch('solve');
  ok(n === +E['r0.solve'] && /2 frames match/.test($('#psearchn').textContent),
     'search "solve" highlights ' + n + ' frames (expected ' + E['r0.solve'] + ')');
  n = typeSearch('MPI_');
  ok(n === +E['r0.mpisearch'], 'search "MPI_" highlights ' + n + ' frames (expected ' + E['r0.mpisearch'] + ')');
  $('#psearch').dispatchEvent(new Event('change', {bubbles: true}));
  ok($$('#flame .fr.hit').length === +E['r0.mpisearch'] && /psearch=MPI_/.test(location.hash),
     'the search stays after the page is drawn again, and is in the address');
  typeSearch('');
  $('#psearch').dispatchEvent(new Event('change', {bubbles: true}));
  ok($$('#flame .fr.hit').length === 0, 'an empty search highlights nothing');
  /* zoom in, out, whole tree */
  frameNamed('SOLVE').click();
  var top = frames(0)[0];
  ok(top && top.textContent === 'SOLVE' && frames(1).length === +E['zoom.d1'] && width(top) === KM.flame.last.width,
     'a click on SOLVE zooms into it: the top frame, full width, ' + frames(1).length + ' frames below it ' +
     '(expected ' + E['zoom.d1'] + ')');
  widths('zoom');
  frames(0)[0].click();
  ok(frames(0)[0].textContent === E['zoom.out'], 'a click on the top frame zooms out one level, to ' +
     frames(0)[0].textContent);
  window.history.back();
  afterNavigation(function () {
    ok(frames(0)[0] && frames(0)[0].textContent === 'SOLVE', 'the browser\'s back button zooms into SOLVE again');
    $('#pwhole').click();
    ok(frames(0)[0].dataset.i === '-1' && frames(1).length === +E['r0.d1'], 'Whole tree: the thread\'s root again');
    /* another rank, another thread */
    pick('rank', 1);
    depths('r1');
    widths('r1');
    ok(hover(frameNamed('MAIN')).indexOf('inclusive (elapsed): ' + E['r1.main']) >= 0,
       'rank 1: MAIN\'s hover gives ' + E['r1.main']);
    pick('pthread', 1);
    ok(frames(1).length === 1 && frames(1)[0].textContent === 'HALO' && frames(1)[0].classList.contains('est'),
       'rank 1, thread 1: one frame, HALO, estimated');
    pick('rank', 0);
    ok(frames(0).length === 0 && /has no tree of thread 1/.test($('#pnote').textContent),
       'rank 0 has no thread 1: said so');
    finish();
  });
}
/* A tree of 22,621 paths: every frame a pixel wide drawn, no other. */
function pathsBigPage() {
  var t0 = performance.now();
  btn('view', 'paths');
  var ms = performance.now() - t0, L = KM.flame.last, T = L.tree, want = 1;
  ok(T.n === +E.paths, 'big tree: ' + T.n + ' paths in the page (expected ' + E.paths + ')');
  var bad = 0;
  for (var k = 0; k < T.n; k++) {
    var p = T.v[k * 8];
    if (p >= k || (p >= 0 && T.v[p * 8 + 4] < T.v[k * 8 + 4])) bad++;
  }
  ok(bad === 0, 'big tree: every path after its parent, none longer than it (' + bad + ' are not)');
  if (E.all)
    ok($('#pnote').textContent.indexOf('the ' + KM.intText(T.n) + ' longest of ' + E.all + ' paths') >= 0,
       'big tree: the page says it holds the ' + KM.intText(T.n) + ' longest of ' + E.all + ' paths');
  for (var i = 0; i < T.n; i++) if (L.width * T.v[i * 8 + 4] / T.total >= 1) want++;
  var drawn = $$('#flame .fr'), thin = drawn.filter(function (f) { return width(f) < 1; }).length;
  ok(drawn.length === want && L.frames === want && thin === 0, 'big tree: the ' + want + ' frames a pixel wide ' +
     'or more are drawn, no other (' + drawn.length + ' drawn, ' + thin + ' narrower)');
  ok(L.hidden > 0 && /narrower than a pixel not/.test($('#pnote').textContent),
     'big tree: ' + L.hidden + ' narrower frames left out, and said so');
  echo('big tree: the Paths view drawn in ' + ms.toFixed(1) + ' ms (' + drawn.length + ' frames of ' + T.n + ')');
  finish();
}
function echo(s) { out.push('# ' + s); }

try {
  if (/^trace/.test(T.mode)) tracePage();
  else if (T.mode === 'timeline') timelinePage();
  else if (T.mode === 'paths') pathsPage();
  else if (T.mode === 'pathsbig') pathsBigPage();
  else if (T.mode === 'diff') diffPage();
  else if (T.mode === 'kpis') kpiPage();
  else if (T.mode === 'threads') threadsPage();
  else if (T.mode === 'messages') messagesPage();
  else if (T.mode === 'nomessages') noMessagesPage();
  else if (T.mode === 'files') filesPage();
  else if (T.mode === 'nofiles') noFilesPage();
  else if (T.mode === 'speed') speed();
  else {
    selfContained();
    header();
    estimates();
    profile();
    locations();
    ranks();
    heat();
    figures();
    history();
  }
} catch (e) {
  ok(false, 'the test script stopped: ' + e + ' ' + (e.stack || ''));
  finish();
}
})();
