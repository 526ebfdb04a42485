/* tapestry serve: the job's profile drawn from report.xml's <profile>
 * (docs/modules/manager-profile.md): time per rank as stacked bars (MPI,
 * I/O, computation), the top calls by time, the point-to-point matrix as a
 * heat map, the message sizes, the collectives, the busiest files. Every
 * figure shown as a number carries data-x, the XPath of the attribute it
 * shows (tests/manager/test_serve_browser.sh checks them against report
 * --xml). Uses esc() and fmtNs() of app.js. */
'use strict';

const PROF_TOP = 20, PROF_RANKS = 64;

function profKids(p, name) {
  return [...p.children].filter(k => k.tagName === name);
}
function profNum(e, a) { return Number(e.getAttribute(a)); }
function profCell(e, a, x) {
  return `<td class="n" data-x="${x}/@${a}">${esc(e.getAttribute(a))}</td>`;
}
function profPct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + ' %' : '—'; }

/* Time per rank: one stacked bar per rank, its length the rank's span. */
function profRanks(p) {
  const ranks = profKids(p, 'rank');
  if (!ranks.length) return '';
  const shown = ranks.slice(0, PROF_RANKS);
  const maxSpan = Math.max(1, ...shown.map(r => profNum(r, 'span_ns')));
  const rowH = 20, w = 640, lw = 70;
  const who = p.getAttribute('mpi') === '1' ? 'rank' : 'process';
  let svg = `<svg id="prof-ranks" width="${lw + w + 230}" height="${shown.length * rowH + 4}" role="img" aria-label="time per ${who}">`;
  shown.forEach((r, i) => {
    const x = `/report/profile/rank[${i + 1}]`;
    const span = profNum(r, 'span_ns');
    let at = lw;
    svg += `<text x="0" y="${i * rowH + 14}" font-size="12">${who} ${esc(r.getAttribute('rank'))}</text>`;
    for (const [a, cls] of [['mpi_ns', 'mpi'], ['io_ns', 'io'], ['compute_ns', 'cmp']]) {
      const v = profNum(r, a), bw = w * v / maxSpan;
      svg += `<rect class="seg-${cls}" x="${at.toFixed(1)}" y="${i * rowH + 3}" width="${bw.toFixed(1)}" height="${rowH - 6}">` +
        `<title data-x="${x}/@${a}">${esc(r.getAttribute(a))}</title></rect>`;
      at += bw;
    }
    svg += `<text x="${(at + 6).toFixed(1)}" y="${i * rowH + 14}" font-size="12">${esc(fmtNs(span))}: MPI ` +
      `${profPct(profNum(r, 'mpi_ns'), span)}, I/O ${profPct(profNum(r, 'io_ns'), span)}</text>`;
  });
  svg += '</svg>';
  let t = `<table><tr><th class="n">${who}</th><th class="n">pid</th><th>program</th><th class="n">span ns</th>` +
    '<th class="n">MPI ns</th><th class="n">I/O ns</th><th class="n">compute ns</th><th class="n">other threads ns</th></tr>';
  shown.forEach((r, i) => {
    const x = `/report/profile/rank[${i + 1}]`;
    t += '<tr>' + profCell(r, 'rank', x) + profCell(r, 'pid', x) + `<td>${esc(r.getAttribute('exe'))}</td>` +
      ['span_ns', 'mpi_ns', 'io_ns', 'compute_ns', 'threads_ns'].map(a => profCell(r, a, x)).join('') + '</tr>';
  });
  t += '</table>';
  const more = ranks.length > shown.length ? `<p class="mut">${ranks.length - shown.length} more: the report's XML, export profile.</p>` : '';
  return `<h2>Where the time went (per ${who}: main thread's MPI, I/O, computation)</h2><section>` +
    '<div class="legend"><span class="mpi"></span>MPI<span class="io"></span>I/O (libc, MPI-IO)<span class="cmp"></span>computation</div>' +
    svg + t + more + '</section>';
}

/* The top calls by time over the ranks. */
function profCalls(p) {
  const calls = profKids(p, 'call').slice(0, PROF_TOP);
  if (!calls.length) return '';
  const max = Math.max(1, ...calls.map(c => profNum(c, 'time_ns')));
  const rowH = 18, w = 420;
  let svg = `<svg id="prof-calls" width="${w + 330}" height="${calls.length * rowH + 4}" role="img" aria-label="top calls by time">`;
  calls.forEach((c, i) => {
    const x = `/report/profile/call[${i + 1}]`, v = profNum(c, 'time_ns');
    const bw = Math.max(1, Math.round(w * v / max));
    const cls = c.getAttribute('name').startsWith('MPI_File') ? 'io' : c.getAttribute('name').startsWith('MPI_') ? 'mpi' : 'io';
    svg += `<text x="0" y="${i * rowH + 13}" font-size="12">${esc(c.getAttribute('name'))}</text>` +
      `<rect class="seg-${cls}" x="190" y="${i * rowH + 3}" width="${bw}" height="${rowH - 6}"></rect>` +
      `<text x="${196 + bw}" y="${i * rowH + 13}" font-size="12">${esc(fmtNs(v))}</text>`;
  });
  svg += '</svg>';
  let t = '<table><tr><th>call</th><th class="n">calls</th><th class="n">time ns</th><th class="n">max ns</th>' +
    '<th class="n">bytes</th><th class="n">imbalance</th></tr>';
  calls.forEach((c, i) => {
    const x = `/report/profile/call[${i + 1}]`;
    t += `<tr><td>${esc(c.getAttribute('name'))}</td>` +
      ['calls', 'time_ns', 'max_ns', 'bytes', 'imbalance'].map(a => profCell(c, a, x)).join('') + '</tr>';
  });
  return `<h2>Top calls by time (summed over the ranks)</h2><section>${svg}${t}</table></section>`;
}

/* The point-to-point matrix as a heat map of bytes (counted at the sender). */
function profMatrix(p) {
  const msgs = profKids(p, 'messages');
  if (!msgs.length) return '';
  const ranks = new Set();
  msgs.forEach(m => { ranks.add(profNum(m, 'from')); ranks.add(profNum(m, 'to')); });
  const rl = [...ranks].sort((a, b) => a - b).slice(0, PROF_RANKS);
  const cell = {};
  let max = 1;
  msgs.forEach((m, i) => {
    cell[m.getAttribute('from') + ':' + m.getAttribute('to')] = [m, i + 1];
    max = Math.max(max, profNum(m, 'bytes'));
  });
  let h = '<table class="heat" id="prof-matrix"><tr><th>from \\ to</th>' + rl.map(k => `<th class="n">${k}</th>`).join('') + '</tr>';
  for (const f of rl) {
    h += `<tr><th>${f}</th>` + rl.map(t => {
      const c = cell[f + ':' + t];
      if (!c) return '<td class="mut">·</td>';
      const b = profNum(c[0], 'bytes');
      /* a log scale: one heavy pair does not wash out the others */
      const heat = b > 0 ? Math.max(1, Math.round(9 * Math.log1p(b) / Math.log1p(max))) : 0;
      return `<td data-heat="${heat}" title="${esc(c[0].getAttribute('count'))} messages"` +
        ` data-x="/report/profile/messages[${c[1]}]/@bytes">${esc(c[0].getAttribute('bytes'))}</td>`;
    }).join('') + '</tr>';
  }
  h += '</table>';
  return `<h2>Point-to-point bytes, from rank (rows) to rank (columns)</h2><section><div class="figs">` +
    `<div class="fig"><div class="k">messages</div><div class="v" data-x="/report/profile/@messages">${esc(p.getAttribute('messages'))}</div></div>` +
    `<div class="fig"><div class="k">bytes</div><div class="v" data-x="/report/profile/@message_bytes">${esc(p.getAttribute('message_bytes'))}</div></div>` +
    `</div>${h}</section>`;
}

/* Message sizes: one bar per power-of-two bin with messages. */
function profSizes(p) {
  const bins = profKids(p, 'size_bin');
  if (!bins.length) return '';
  const max = Math.max(1, ...bins.map(b => profNum(b, 'count')));
  const colW = 70, h = 140;
  let svg = `<svg id="prof-sizes" width="${bins.length * colW + 10}" height="${h + 40}" role="img" aria-label="message sizes">`;
  bins.forEach((b, i) => {
    const x = `/report/profile/size_bin[${i + 1}]`, c = profNum(b, 'count');
    const bh = Math.max(1, Math.round(h * c / max));
    svg += `<rect class="bar" x="${i * colW + 8}" y="${h - bh + 14}" width="${colW - 16}" height="${bh}"></rect>` +
      `<text x="${i * colW + colW / 2}" y="${h - bh + 10}" font-size="11" text-anchor="middle" data-x="${x}/@count">${c}</text>` +
      `<text x="${i * colW + colW / 2}" y="${h + 28}" font-size="10" text-anchor="middle">${esc(profSize(b))}</text>`;
  });
  svg += '</svg>';
  return `<h2>Message sizes (point to point, messages per bin)</h2><section>${svg}</section>`;
}
function profSize(b) {
  const f = n => n >= 1 << 30 ? (n / 2 ** 30) + 'G' : n >= 1 << 20 ? (n / 2 ** 20) + 'M' : n >= 1024 ? (n / 1024) + 'K' : String(n);
  const lo = profNum(b, 'min_bytes');
  return lo === 0 ? '0 B' : f(lo) + '–' + f(profNum(b, 'max_bytes') + 1) + ' B';
}

function profColls(p) {
  const cs = profKids(p, 'collective').slice(0, PROF_TOP);
  if (!cs.length) return '';
  let t = '<table><tr><th>communicator</th><th>call</th><th class="n">calls</th><th class="n">time ns</th><th class="n">bytes</th><th class="n">ranks</th></tr>';
  cs.forEach((c, i) => {
    const x = `/report/profile/collective[${i + 1}]`, k = profNum(c, 'comm');
    t += `<tr><td>${k === 0 ? 'world' : k < 0 ? 'unnamed' : 'comm ' + k}</td><td>${esc(c.getAttribute('name'))}</td>` +
      ['calls', 'time_ns', 'bytes', 'ranks'].map(a => profCell(c, a, x)).join('') + '</tr>';
  });
  return `<h2>Collectives per communicator</h2><section>${t}</table></section>`;
}

function profFiles(p) {
  const fs = profKids(p, 'file').slice(0, PROF_TOP);
  if (!fs.length) return '';
  let t = '<table id="prof-files"><tr><th class="n">rank</th><th>path</th><th class="n">opens</th><th class="n">reads</th>' +
    '<th class="n">bytes read</th><th class="n">writes</th><th class="n">bytes written</th><th class="n">time ns</th></tr>';
  fs.forEach((f, i) => {
    const x = `/report/profile/file[${i + 1}]`;
    t += '<tr>' + profCell(f, 'rank', x) + `<td data-x="${x}/@path">${esc(f.getAttribute('path'))}</td>` +
      ['opens', 'reads', 'read_bytes', 'writes', 'write_bytes', 'time_ns'].map(a => profCell(f, a, x)).join('') + '</tr>';
  });
  return `<h2>Busiest files (by time; bytes: what the calls moved)</h2><section>${t}</table></section>`;
}

/* The whole profile section of report r (its root element), or '' when the
 * report has none (--quick, or a report from before the profile). */
function profileSection(r) {
  const p = [...r.children].find(k => k.tagName === 'profile');
  if (!p) return '';
  return '<div id="profile">' + profRanks(p) + profCalls(p) + profMatrix(p) + profSizes(p) +
    profColls(p) + profFiles(p) + '</div>';
}
