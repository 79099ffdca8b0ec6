/* common.js — helpers every kmview page shares (inlined into each page).
   Owns number formats, the data element, base64 arrays, the tooltip,
   the heat maps' colours and the bar chart both the report and the diff
   view draw.  Never fetches anything: the page's Content-Security-Policy
   forbids it anyway. */
'use strict';

var KM = {};

KM.data = function () {
  return JSON.parse(document.getElementById('kmdata').textContent);
};

/* {"t":"f32"|"f64"|"u16","b":base64} -> Float32Array / Float64Array /
   Uint16Array (little-endian, as every browser's platform is). */
KM.array = function (a) {
  var s = atob(a.b), n = s.length, bytes = new Uint8Array(n);
  for (var i = 0; i < n; i++) bytes[i] = s.charCodeAt(i);
  if (a.t === 'u16') return new Uint16Array(bytes.buffer);
  return a.t === 'f32' ? new Float32Array(bytes.buffer) : new Float64Array(bytes.buffer);
};

KM.esc = function (s) {
  return String(s).replace(/[&<>"']/g, function (c) {
    return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
  });
};

/* 4 significant digits, as the terminal summary prints them. */
KM.num = function (v) {
  if (v === null || v === undefined || isNaN(v)) return '-';
  if (!isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v === 0) return '0';
  var a = Math.abs(v);
  if (a >= 1e-4 && a < 1e6) return String(Number(v.toPrecision(4)));
  return v.toExponential(3).replace(/\.?0+e/, 'e');
};
/* An exact count, digits grouped: 1,234,567. */
KM.intText = function (v) { return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); };
/* A size as a person reads it, as the terminal summary prints it. */
KM.bytesText = function (v) {
  var unit = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], x = v, u = -1;
  if (v < 1024) return KM.intText(v) + ' B';
  while (x >= 1024 && u < 4) { x /= 1024; u++; }
  return x.toFixed(1) + ' ' + unit[u];
};
/* Exact bytes, and their size when it is not plain. */
KM.bytesExact = function (v) { return KM.intText(v) + ' B' + (v >= 1024 ? ' (' + KM.bytesText(v) + ')' : ''); };
KM.sec = function (v) { return KM.num(v) + ' s'; };
KM.pct = function (f) {
  if (f === null || f === undefined || !isFinite(f)) return '-';
  return (100 * f).toFixed(1) + '%';
};
KM.count = function (v) {
  return Math.abs(v - Math.round(v)) < 1e-9 ? String(Math.round(v)) : KM.num(v);
};

/* A figure that contains an estimate is marked as KM_output marks it:
   '~' before the number. */
KM.mark = function (text, est) { return (est ? '~' : '') + text; };
/* What a tooltip says of a figure's estimate: frac, the estimated part
   (NaN when unknown). */
KM.estText = function (est, frac) {
  if (!est && !(frac > 0)) return '';
  return '<br>~ contains an estimate' + (isFinite(frac) ? ': ' + KM.pct(frac) + ' of it estimated' : '');
};

/* The tooltip: show(html, mouse event) / hide(). */
KM.tip = {
  el: function () { return document.getElementById('tip'); },
  show: function (html, ev) {
    var t = this.el();
    t.innerHTML = html;
    t.hidden = false;
    var x = (ev && ev.clientX) || 0, y = (ev && ev.clientY) || 0;
    var w = t.offsetWidth, h = t.offsetHeight;
    t.style.left = Math.max(4, Math.min(x + 14, window.innerWidth - w - 8)) + 'px';
    t.style.top = Math.max(4, Math.min(y + 14, window.innerHeight - h - 8)) + 'px';
  },
  hide: function () { this.el().hidden = true; }
};

/* A bar chart.  items: [{label, labelHtml?, segs: [[cls, value], ...],
   value, tip: function () -> html}], in display order.  max: the value of
   a full bar; fmt(value, item) its text.  Rows are one grid; a single delegated listener serves the
   hover of every row, so a thousand rows cost a thousand small elements
   and nothing more. */
KM.bars = function (host, items, max, fmt, cls) {
  var html = [];
  for (var i = 0; i < items.length; i++) {
    var it = items[i], segs = '', clip = max > 0 && it.value > max * (1 + 1e-9);
    for (var k = 0; k < it.segs.length; k++) {
      var s = it.segs[k], w = max > 0 ? Math.max(0, Math.min(100, 100 * s[1] / max)) : 0;
      if (w > 0) segs += '<i class="' + s[0] + '" style="width:' + w.toFixed(3) + '%"></i>';
    }
    html.push('<div class="r' + (cls ? ' ' + cls : '') + '" data-i="' + i + '"><span class="n">' +
              (it.labelHtml || KM.esc(it.label)) + '</span><span class="b' + (clip ? ' clip' : '') +
              '">' + segs + '</span><span class="v">' + fmt(it.value, it) + '</span></div>');
  }
  host.innerHTML = '<div class="bars">' + html.join('') + '</div>';
  var grid = host.firstChild;
  function row(ev) {
    var n = ev.target;
    while (n && n !== grid && !(n.dataset && n.dataset.i !== undefined)) n = n.parentNode;
    return n && n !== grid ? n : null;
  }
  grid.addEventListener('mouseover', function (ev) {
    var r = row(ev);
    if (r) KM.tip.show(items[+r.dataset.i].tip(), ev); else KM.tip.hide();
  });
  grid.addEventListener('mousemove', function (ev) {
    var r = row(ev);
    if (r) KM.tip.show(items[+r.dataset.i].tip(), ev);
  });
  grid.addEventListener('mouseleave', function () { KM.tip.hide(); });
  return grid;
};

/* Sort items for display: 'orig' keeps the given order. */
KM.order = function (items, order) {
  var out = items.slice();
  if (order === 'asc') out.sort(function (a, b) { return a.value - b.value || a.pos - b.pos; });
  if (order === 'desc') out.sort(function (a, b) { return b.value - a.value || a.pos - b.pos; });
  return out;
};

/* The heat maps' colours: t in [0, 1] to [r, g, b]. */
KM.heatColour = function (t, diverging) {
  /* sequential: pale yellow -> orange -> dark red; diverging: blue -> white -> red */
  var stops = diverging ? [[49, 104, 181], [247, 247, 247], [196, 40, 40]]
                        : [[255, 250, 220], [250, 160, 60], [150, 20, 30]];
  t = Math.max(0, Math.min(1, t));
  var x = t * 2, k = Math.min(1, Math.floor(x)), f = x - k, a = stops[k], b = stops[k + 1];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
};

/* A group of toggle buttons: [label, value, disabled?] choices for key k. */
KM.toggles = function (title, k, choices, current) {
  var h = '<span class="group" data-group="' + k + '"><label>' + KM.esc(title) + '</label>';
  for (var i = 0; i < choices.length; i++) {
    var c = choices[i];
    h += '<button data-k="' + k + '" data-v="' + KM.esc(c[1]) + '"' +
         (String(c[1]) === String(current) ? ' class="on"' : '') + (c[2] ? ' disabled' : '') + '>' +
         KM.esc(c[0]) + '</button>';
  }
  return h + '</span>';
};
