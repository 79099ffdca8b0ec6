/* files.js — the Files view of kmview's report (inlined into the page
   before report.js, which calls KM.files.controls and KM.files.view).
   What the measured I/O statements (the Files blocks) and MPI-IO calls
   (the MPI-IO blocks) did to each file over the ranks: a table of one row
   per file and interface with the ranks that touched it, its metadata
   operations (OPEN, CLOSE, INQUIRE, seeks, flushes) and their time, its
   reads and writes, their times and bytes, its size, and a bar of its
   metadata time against its read and write time; sortable by time, bytes
   and name, a totals row last.  A click on a file opens, under its row,
   the least, mean and most I/O time over its ranks and the ranks that
   spent the most on it (a second click closes it).  

   Bytes keep their kind: exact (unformatted transfers), ~ an estimate
   (from the file's growth), >= at least (formatted transfers not
   counted), - not known.  A sum over ranks is exact only when every
   rank's figure is; it is marked ~ when some were estimates and >= when
   some were at least or not known (the known ones summed), and when the
   ranks' kinds differ the cell is underlined and its hover counts them,
   so that no sum looks more exact than its parts.  Times that contain an
   estimate are marked ~.  File names are the user's: always escaped.
   The data is kmview/htmlfiles.c's.  Never fetches anything. */
KM.files = (function () {
'use strict';
var ROWS_SHOWN = 100;
/* a file row (htmlfiles.c's write_acc; the metadata counts are 3..7) */
var NAME = 0, MPIIO = 1, RANKS = 2, META = 3, META_S = 8, READS = 9, READ_S = 10, READ_B = 11, READ_K = 12,
    WRITES = 13, WRITE_S = 14, WRITE_B = 15, WRITE_K = 16, EST = 17, SIZE_MAX = 18, SIZE_MIN = 19, TMIN = 20,
    TMIN_R = 21, TMIN_EST = 22, TMAX = 23, TMAX_R = 24, TMAX_EST = 25, TOP = 26;
/* a rank's row (write_rank_row; the metadata counts are 1..5) */
var R_RANK = 0, R_META = 1, R_META_S = 6, R_READS = 7, R_READ_S = 8, R_READ_B = 9, R_READ_K = 10, R_WRITES = 11,
    R_WRITE_S = 12, R_WRITE_B = 13, R_WRITE_K = 14, R_SIZE = 15, R_EST = 16;
var IFACE = ['Fortran', 'MPI-IO'], KIND = ['exact', '~ estimate', '>= at least', '- not known'];
/* What a name in <...> stands for (doc/KM_output.md, "Files block"). */
var SPECIAL = [
  [/^<stdin>$/, '<stdin>', 'unit 5, and READ with the default unit *'],
  [/^<stdout>$/, '<stdout>', 'unit 6, and WRITE and PRINT with the default unit *'],
  [/^<stderr>$/, '<stderr>', 'unit 0'],
  [/^<unit \d+>$/, '<unit N>', 'unit N, which no measured OPEN connected'],
  [/^<internal>$/, '<internal>', 'transfers to and from internal files, and INQUIRE(IOLENGTH=): no file'],
  [/^<unit not known>$/, '<unit not known>', 'formatted transfers whose unit kmrun could not tell from a ' +
   'CHARACTER variable (declared in a module, or typed by IMPLICIT)'],
  [/^<scratch>$/, '<scratch>', 'files opened with STATUS=\'SCRATCH\''],
  [/^<other files>$/, '<other files>', 'every file beyond the 4095th a rank told apart'],
  [/^fort\.\d+$/, 'fort.N', 'an OPEN of unit N without FILE= (the name gfortran, flang and ifort give it)'],
  [/^<file handle \d+>$/, '<file handle N>', 'an MPI-IO file handle opened where kmrun measured no MPI_FILE_OPEN']];

/* ---- figures ------------------------------------------------------------ */
function time(r) { return r[META_S] + r[READ_S] + r[WRITE_S]; }
/* The mark of bytes summed over figures of kinds k (how many of each):
   null when none was known. */
function bytesMark(k) {
  if (k[0] + k[1] + k[2] === 0) return null;
  return (k[2] + k[3] > 0 ? '>=' : '') + (k[1] > 0 ? '~' : '');
}
/* The bytes a sort goes by: -1 when none is known. */
function knownBytes(b, k) { return bytesMark(k) === null ? -1 : b; }
function mixed(k) { return k.filter(function (n) { return n > 0; }).length > 1; }
/* How many figures of each kind were summed; `of` what they are. */
function kindsText(k, of) {
  var parts = [], n = k[0] + k[1] + k[2] + k[3];
  k.forEach(function (c, i) { if (c) parts.push(KIND[i] + (n > 1 ? ' on ' + KM.intText(c) : '')); });
  return n > 1 ? 'of ' + KM.intText(n) + ' ' + of + ': ' + parts.join(', ') : parts[0];
}
/* A bytes cell: its size as a person reads it, the exact figure and the
   kinds of the figures summed on hover, data-b the mark and the bytes. */
function bytesCell(b, k, of) {
  var m = bytesMark(k);
  if (m === null) return '<td class="fb" data-b="-" title="' + KM.esc(kindsText(k, of)) + '">-</td>';
  return '<td class="fb' + (mixed(k) ? ' mixed' : '') + '" data-b="' + m + b + '" title="' +
    KM.esc(m + KM.intText(b) + ' B; ' + kindsText(k, of)) + '">' + m + KM.bytesText(b) + '</td>';
}
function kindsOf(kind) { var k = [0, 0, 0, 0]; k[kind] = 1; return k; }
function secCell(v, est) { return '<td>' + KM.mark(KM.num(v), est) + '</td>'; }
function sizeCell(hi, lo) {
  if (hi < 0) return '<td data-b="-">-</td>';
  return '<td data-b="' + hi + '" title="' + KM.esc(KM.intText(hi) + ' B' + (lo !== hi ? '; the ranks saw ' +
    KM.intText(lo) + ' to ' + KM.intText(hi) + ' B' : '')) + '">' + KM.bytesText(hi) + '</td>';
}
/* Metadata against read and write time, against the longest file's (the
   other files' and the totals' rows against their own). */
function barCell(meta, read, write, est, max) {
  var t = meta + read + write, h = '<td class="fbar" title="' + KM.esc('metadata ' + KM.mark(KM.sec(meta), est & 1) +
    ' (' + KM.pct(meta / t) + '), read ' + KM.mark(KM.sec(read), est & 2) + ', write ' +
    KM.mark(KM.sec(write), est & 4)) + '"><span class="b">';
  [['fmeta', meta], ['fread', read], ['fwrite', write]].forEach(function (s) {
    var w = max > 0 ? 100 * s[1] / max : 0;
    if (w > 0) h += '<i class="' + s[0] + '" style="width:' + w.toFixed(3) + '%"></i>';
  });
  return h + '</span></td>';
}

/* ---- the table ------------------------------------------------------------ */
var SORTS = {
  time: function (r) { return time(r); }, meta: function (r) { return r[META_S]; },
  data: function (r) { return r[READ_S] + r[WRITE_S]; },
  bytes: function (r) { return knownBytes(r[READ_B] + r[WRITE_B], r[READ_K].map(function (n, i) {
    return n + r[WRITE_K][i]; })); },
  read: function (r) { return knownBytes(r[READ_B], r[READ_K]); },
  written: function (r) { return knownBytes(r[WRITE_B], r[WRITE_K]); },
  ranks: function (r) { return r[RANKS]; }, name: null};
function byName(a, b) { return a[NAME] < b[NAME] ? -1 : a[NAME] > b[NAME] ? 1 : a[MPIIO] - b[MPIIO]; }
function sorted(rows, sort) {
  var key = SORTS[sort];
  return rows.slice().sort(function (a, b) {
    return key ? key(b) - key(a) || time(b) - time(a) || byName(a, b) : byName(a, b);
  });
}
function sortOf(S) { return SORTS.hasOwnProperty(S.fsort) ? S.fsort : 'time'; }
function ifaceOf(D, S) {
  var F = D.files;
  return F.total[1] && F.total[2] && (S.fiface === 'fortran' || S.fiface === 'mpiio') ? S.fiface : 'all';
}
function shownRows(D, S) {
  var iface = ifaceOf(D, S), rows = [];
  D.files.rows.forEach(function (r, i) {
    if (iface === 'all' || r[MPIIO] === (iface === 'mpiio' ? 1 : 0)) rows.push(r.concat([i]));
  });
  return sorted(rows, sortOf(S));
}

function controls(D, S) {
  var F = D.files;
  return KM.toggles('Sort by', 'fsort', [['I/O time', 'time'], ['Metadata time', 'meta'], ['Data time', 'data'],
                                         ['Bytes', 'bytes'], ['Name', 'name']], sortOf(S)) +
    (F.total[1] && F.total[2] ? KM.toggles('Interface', 'fiface', [['Both', 'all'], ['Fortran', 'fortran'],
                                                                    ['MPI-IO', 'mpiio']], ifaceOf(D, S)) : '');
}

function head(sort) {
  var h = '<tr>';
  [['File', 'name', 'l'], ['Interface', '', 'l'], ['Ranks', 'ranks'], ['I/O (s)', 'time'],
   ['Metadata | read | write', '', 'l'], ['Opens'], ['Closes'], ['Inquire'], ['Seeks'], ['Flushes'],
   ['Meta (s)', 'meta'], ['Reads'], ['Read (s)'], ['Read', 'read'], ['Writes'], ['Write (s)'],
   ['Written', 'written'], ['Size']]
    .forEach(function (c) {
      h += '<th' + (c[2] ? ' class="l"' : '') + '>' + (c[1] ? '<button data-k="fsort" data-v="' + c[1] + '"' +
        (c[1] === sort ? ' class="on"' : '') + '>' + c[0] + '</button>' : c[0]) + '</th>';
    });
  return h + '</tr>';
}
/* A row's cells after its name: the figures, summed over `of`; the
   time and its bar first, which a narrow window still shows. */
function cells(r, max, of) {
  var h = '<td class="l">' + (r[MPIIO] < 0 ? '' : IFACE[r[MPIIO]]) + '</td><td>' + KM.intText(r[RANKS]) + '</td>' +
    secCell(time(r), r[EST]) + barCell(r[META_S], r[READ_S], r[WRITE_S], r[EST], max);
  for (var m = 0; m < 5; m++) h += '<td>' + KM.intText(r[META + m]) + '</td>';
  return h + secCell(r[META_S], r[EST] & 1) + '<td>' + KM.intText(r[READS]) + '</td>' +
    secCell(r[READ_S], r[EST] & 2) + bytesCell(r[READ_B], r[READ_K], of) + '<td>' + KM.intText(r[WRITES]) +
    '</td>' + secCell(r[WRITE_S], r[EST] & 4) + bytesCell(r[WRITE_B], r[WRITE_K], of) +
    sizeCell(r[SIZE_MAX], r[SIZE_MIN]);
}
/* A file's row; the file picked has its ranks in a row under it, and
   its name closes them. */
function fileRow(D, r, max, pick) {
  var i = r[r.length - 1], on = i === pick;
  return '<tr data-f="' + i + '"' + (on ? ' class="on"' : '') + '><td class="l fn"><a data-k="ffile" ' +
    'data-v="' + (on ? '' : i) + '" title="' + KM.esc(r[NAME]) + ': its ranks">' + KM.esc(r[NAME]) + '</a></td>' +
    cells(r, max, 'ranks') + '</tr>' + (on ? '<tr class="fdrow"><td colspan="18">' + detailHtml(D, D.files.rows[i]) +
    '</td></tr>' : '');
}
function tableHtml(D, S, rows, pick) {
  var F = D.files, iface = ifaceOf(D, S), at = {all: 0, fortran: 1, mpiio: 2}[iface];
  var other = [], max = 0, all = S.frows === 'all' || rows.length <= ROWS_SHOWN;
  F.rows.forEach(function (r) { max = Math.max(max, time(r)); });
  F.other.forEach(function (o, k) { if (o && (iface === 'all' || at === k + 1)) other.push(o); });
  var files = rows.length, h = '<div class="wide"><table id="ftable">' + head(sortOf(S)), shown = false;
  rows.slice(0, all ? rows.length : ROWS_SHOWN).forEach(function (r) {
    h += fileRow(D, r, max, pick);
    shown = shown || r[r.length - 1] === pick;
  });
  other.forEach(function (o) {
    files += o.files;
    h += '<tr class="other"><td class="l">' + KM.intText(o.files) + ' other ' + IFACE[o.row[MPIIO]] +
      ' files</td>' + cells(o.row, time(o.row), 'figures of ranks') + '</tr>';
  });
  var t = F.total[at];
  h += '<tr class="total"><td class="l">Total (' + KM.intText(files) + ' file' + (files === 1 ? '' : 's') + ')</td>' +
    cells(t, time(t), 'figures of ranks') + '</tr></table></div>';
  /* a file picked beyond the rows shown (an address) has its ranks below */
  if (pick >= 0 && !shown) h += detailHtml(D, F.rows[pick]);
  return h + (all ? '' : '<p class="note"><button id="frows" data-k="frows" data-v="all">all ' +
    KM.intText(rows.length) + ' rows</button> (the first ' + ROWS_SHOWN + ' shown)</p>');
}

/* ---- the notes ------------------------------------------------------------ */
/* MPI-IO calls' time is MPI time (doc/KM_output.md, "MPI-IO block"), the
   I/O statements' I/O time: the note says so rather than add them up. */
function introHtml(D, S, rows) {
  var F = D.files, t = F.total[0], held = F.rows.length < F.nfiles, mpiio = F.total[2], fortran = F.total[1];
  return '<p class="note" id="fnote">What the measured I/O statements' + (mpiio ? ' and MPI-IO calls' : '') +
    ' did to each file, summed over the ' + KM.intText(t[RANKS]) + ' rank' + (t[RANKS] === 1 ? '' : 's') +
    ' that used one: ' + KM.intText(F.nfiles) + ' file' + (F.nfiles === 1 ? '' : 's') + ' (a name on several ' +
    'ranks is one file' + (mpiio && fortran ? ', an interface apart' : '') + '), ' +
    (fortran ? KM.mark(KM.sec(time(fortran)), fortran[EST]) + ' of I/O statements' : '') +
    (mpiio && fortran ? ' and ' : '') + (mpiio ? KM.mark(KM.sec(time(mpiio)), mpiio[EST]) + ' of MPI-IO calls ' +
    '(part of the MPI time)' : '') + '. ' + (held ? 'The page holds the ' +
    KM.intText(F.rows.length) + ' files with the most I/O time and the most bytes; the others are summed in a ' +
    'row per interface (kmview --csv: rank_files.csv has every one). ' : '') + 'Click a heading to sort by ' +
    'it, a file for its ranks (again to close them).</p>';
}
function legendHtml(D, rows) {
  var mpiio = D.files.total[2] !== null, seen = {};
  var h = '<div class="legend"><span><i class="fmeta"></i>metadata (OPEN, CLOSE, INQUIRE, REWIND, BACKSPACE, ' +
    'ENDFILE, FLUSH, WAIT' + (mpiio ? '; MPI_FILE_ calls that move no data' : '') + ')</span><span>' +
    '<i class="fread"></i>read</span><span><i class="fwrite"></i>write</span></div><p class="note" id="fkinds">' +
    'Bytes: exact for unformatted transfers' + (mpiio ? ' and MPI-IO' : '') + '; ~ an estimate ' +
    '(the file\'s growth on disk); &gt;= at least (formatted transfers not counted); - not known. Summed over ' +
    'ranks, a figure is exact only when every rank\'s is, ~ when some were estimates, &gt;= when some were at ' +
    'least or not known (the known ones summed); <span class="mixed">underlined</span>: the ranks\' figures ' +
    'differ in kind (hover for how many of each). Size: when last seen, the largest over the ranks. Times ' +
    'marked ~ contain an estimate.</p>';
  rows.forEach(function (r) {
    SPECIAL.forEach(function (s) { if (s[0].test(r[NAME])) seen[s[1]] = s[2]; });
  });
  var names = Object.keys(seen);
  if (!names.length) return h;
  return h + '<p class="note" id="fnames">Names that are not files (doc/KM_output.md, "Files block"): ' +
    names.map(function (n) { return '<code>' + KM.esc(n) + '</code> ' + KM.esc(seen[n]); }).join('; ') + '.</p>';
}

/* ---- the file picked -------------------------------------------------------- */
function rankRow(x, max) {
  var t = x[R_META_S] + x[R_READ_S] + x[R_WRITE_S], h = '<tr><td>' + x[R_RANK] + '</td>' +
    secCell(t, x[R_EST]) + barCell(x[R_META_S], x[R_READ_S], x[R_WRITE_S], x[R_EST], max);
  for (var m = 0; m < 5; m++) h += '<td>' + KM.intText(x[R_META + m]) + '</td>';
  return h + secCell(x[R_META_S], x[R_EST] & 1) + '<td>' + KM.intText(x[R_READS]) + '</td>' +
    secCell(x[R_READ_S], x[R_EST] & 2) + bytesCell(x[R_READ_B], kindsOf(x[R_READ_K]), '') + '<td>' +
    KM.intText(x[R_WRITES]) + '</td>' + secCell(x[R_WRITE_S], x[R_EST] & 4) +
    bytesCell(x[R_WRITE_B], kindsOf(x[R_WRITE_K]), '') + sizeCell(x[R_SIZE], x[R_SIZE]) + '</tr>';
}
function detailHtml(D, r) {
  var top = r[TOP], n = r[RANKS], est = r[EST] !== 0, max = 0;
  top.forEach(function (x) { max = Math.max(max, x[R_META_S] + x[R_READ_S] + x[R_WRITE_S]); });
  var h = '<div class="fdetail"><h3 id="fdetail">' + KM.esc(r[NAME]) + ' (' + IFACE[r[MPIIO]] + ')</h3>' +
    '<p class="note" id="fdnote">' +
    'I/O time over its ' + KM.intText(n) + ' rank' + (n === 1 ? '' : 's') + ': least ' +
    KM.mark(KM.sec(r[TMIN]), r[TMIN_EST]) + ' (rank ' + r[TMIN_R] + '), mean ' + KM.mark(KM.sec(time(r) / n), est) +
    ', most ' + KM.mark(KM.sec(r[TMAX]), r[TMAX_EST]) + ' (rank ' + r[TMAX_R] + '). ' +
    (top.length < n ? 'The ' + top.length + ' ranks that spent the most I/O time on it:' : 'Its ranks, the most ' +
    'I/O time first:') + '</p><div class="wide"><table id="franks"><tr><th>Rank</th><th>I/O (s)</th>' +
    '<th class="l">Metadata | read | write</th>';
  ['Opens', 'Closes', 'Inquire', 'Seeks', 'Flushes', 'Meta (s)', 'Reads', 'Read (s)', 'Read', 'Writes',
   'Write (s)', 'Written', 'Size'].forEach(function (c) { h += '<th>' + c + '</th>'; });
  h += '</tr>';
  top.forEach(function (x) { h += rankRow(x, max); });
  return h + '</table></div></div>';
}

function view(main, D, S) {
  var rows = shownRows(D, S), pick = S.ffile === '' ? -1 : +S.ffile;
  if (!(pick >= 0 && pick < D.files.rows.length)) pick = -1;
  main.innerHTML = introHtml(D, S, rows) + legendHtml(D, rows) + tableHtml(D, S, rows, pick);
}

return {controls: controls, view: view};
})();
