/* tapestry serve: the pages (job list, job report and timeline, live tree,
 * launch). Plain JavaScript, no library; everything comes from this server. */
'use strict';

const $ = (sel, root) => (root || document).querySelector(sel);
const main = () => $('#main');
let pageGen = 0;          /* bumped on every navigation: stale timers stop */
let errorCount = 0;

function showError(msg) {
  errorCount++;
  document.body.dataset.errors = String(errorCount);
  const e = $('#errors');
  e.hidden = false;
  e.textContent += msg + '\n';
}
window.addEventListener('error', ev => showError('script error: ' + ev.message));
window.addEventListener('unhandledrejection', ev => showError('error: ' + (ev.reason && ev.reason.message || ev.reason)));

function esc(s) {
  return String(s === undefined || s === null ? '' : s).replace(/[&<>"']/g,
    c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}
function el(tag, attrs, html) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html;
  return e;
}
function fmtNs(ns) {
  if (ns === null || ns === undefined || isNaN(ns)) return '—';
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(2) + ' µs';
  return Math.round(ns) + ' ns';
}
function fmtBytes(b) {
  if (b === null || b === undefined) return '—';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  b = Number(b);
  while (b >= 1000 && i < 4) { b /= 1000; i++; }
  return (i ? b.toFixed(1) : b) + ' ' + u[i];
}
function fmtRate(v) {
  v = Number(v || 0);
  const u = ['', 'K', 'M', 'G'];
  let i = 0;
  while (v >= 1000 && i < 3) { v /= 1000; i++; }
  return (i ? v.toFixed(1) : v.toFixed(0)) + u[i];
}

/* fetch JSON or text; a 202 answer is returned as {pending: body}. */
async function api(path, opts) {
  opts = opts || {};
  const init = {method: opts.method || 'GET', headers: {}, credentials: 'same-origin'};
  if (init.method === 'POST') { init.headers['X-Tapestry'] = '1'; init.body = opts.body || ''; }
  const r = await fetch(path, init);
  const text = await r.text();
  if (r.status === 202) return {pending: text ? JSON.parse(text) : {}};
  if (r.status === 409 && init.method === 'GET') {
    /* not made yet, and a GET starts no work: the URL to POST */
    let j = null;
    try { j = JSON.parse(text); } catch (e) { /* not JSON */ }
    if (j && j.build) return {build: j.build};
  }
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).error; } catch (e) { /* not JSON */ }
    throw new Error(path + ': ' + r.status + ' ' + msg);
  }
  return opts.text ? text : JSON.parse(text);
}
const sleep = ms => new Promise(res => setTimeout(res, ms));
/* retry while the server answers 202 (building), as long as the page is current */
let lastMs = 0;            /* time of the last request until() made */
async function until(path, gen, opts) {
  for (let k = 0; ; k++) {
    const t = performance.now();
    const r = await api(path, opts);
    lastMs = performance.now() - t;
    if (r && r.build !== undefined) {
      if (gen !== pageGen) return null;
      await api(r.build, {method: 'POST'});
      continue;
    }
    if (!r || r.pending === undefined) {
      if (gen === pageGen) $('#busy').textContent = '';
      return r;
    }
    if (gen !== pageGen) return null;
    $('#busy').textContent = (r.pending.state || 'working') + '…';
    await sleep(k < 10 ? 300 : 1000);
  }
}

/* ---- router ---------------------------------------------------------------- */

function route() {
  pageGen++;
  $('#busy').textContent = '';
  const h = location.hash || '#/jobs';
  const [path, query] = h.slice(1).split('?');
  const q = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll('header nav a')) a.classList.remove('active');
  const nav = {jobs: 'jobs', job: 'jobs', tree: 'tree', launch: 'launch', run: 'launch'}[parts[0]] || 'jobs';
  $('#nav-' + nav).classList.add('active');
  document.body.dataset.page = parts[0] || 'jobs';
  document.body.dataset.ready = '0';
  const done = () => { document.body.dataset.ready = '1'; };
  const p = parts[0] === 'job' ? jobPage(parts[1], q) :
    parts[0] === 'tree' ? treePage() :
    parts[0] === 'launch' ? launchPage(parts[1], q) :
    parts[0] === 'run' ? runPage(parts[1]) : jobsPage();
  p.then(done, e => { showError(e.message); done(); });
}
window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', route);

/* ---- jobs ------------------------------------------------------------------ */

async function jobsPage() {
  const gen = pageGen;
  main().innerHTML = '<h1>Jobs</h1><section><table id="jobs"><thead><tr><th>job</th><th>date</th>' +
    '<th>application</th><th class="n">ranks</th><th class="n">streams</th><th class="n">events</th>' +
    '<th class="n">losses</th><th class="n">duration</th><th class="n">size</th><th>report</th></tr></thead>' +
    '<tbody></tbody></table></section>';
  let asked = {};
  for (;;) {
    const d = await api('/api/jobs');
    if (gen !== pageGen) return;
    const tb = $('#jobs tbody');
    tb.innerHTML = '';
    if (!d.jobs.length) tb.innerHTML = '<tr><td colspan="10" class="mut">no job directory here</td></tr>';
    let pending = null;
    for (const j of d.jobs) {
      const losses = j.lost_events === null ? '—' : (j.lost_events + (j.gap_batches ? ' + ' + j.gap_batches + ' batches' : ''));
      const tr = el('tr', {'data-job': j.name},
        `<td><a href="#/job/${encodeURIComponent(j.name)}">${esc(j.name)}</a></td><td>${esc(j.date)}</td>` +
        `<td>${esc(j.application || '—')}</td><td class="n">${j.figures && j.ranks ? j.ranks : '—'}</td>` +
        `<td class="n">${j.streams === null ? '—' : j.streams}</td>` +
        `<td class="n" data-k="events">${j.events === null ? '(' + j.records + ' records)' : j.events}</td>` +
        `<td class="n">${losses}</td>${durationCell(j)}` +
        `<td class="n">${fmtBytes(j.bytes)}</td><td>${esc(j.report)}` +
        (j.running ? ' <span class="running" data-running="1">running</span>' : '') + '</td>');
      tb.appendChild(tr);
      if (!j.figures && j.report !== 'failed' && !pending && !asked[j.name]) pending = j.name;
    }
    if (!pending) break;
    /* the columns from each job's quick report (one read of the job, one at
     * a time on the server), not its whole post-processing */
    asked[pending] = 1;
    try {
      for (let k = 0; gen === pageGen; k++) {
        const r = await api('/api/jobs/' + encodeURIComponent(pending) + '/quick', {method: 'POST'});
        if (!r || r.pending === undefined) break;
        $('#busy').textContent = (r.pending.state || 'working') + '…';
        await sleep(k < 10 ? 300 : 1000);
      }
    } catch (e) { /* shown as "failed" in the list */ }
    if (gen !== pageGen) return;
  }
  $('#busy').textContent = '';
}

/* the corrected span once the report is made; before, the collection's
 * wall time (first segment made to last written), still growing while running */
function durationCell(j) {
  const t = {span: 'the corrected span of the report', collection: 'wall time of the collection (the report gives the span)',
    running: 'running for'}[j.duration_of] || '';
  const v = j.duration_ns === null ? '—' : (j.duration_of === 'collection' ? '≈ ' : '') + fmtNs(j.duration_ns) +
    (j.duration_of === 'running' ? '…' : '');
  return `<td class="n" data-k="duration" data-of="${esc(j.duration_of || '')}" title="${t}">${v}</td>`;
}

/* ---- one job ---------------------------------------------------------------- */

function fig(k, v, xpath) {
  return `<div class="fig"><div class="k">${esc(k)}</div><div class="v"${xpath ? ` data-x="${esc(xpath)}"` : ''}>${esc(v)}</div></div>`;
}
function attrs(node, names, xbase) {
  return names.map(n => `<td class="n" data-x="${esc(xbase)}/@${n}">${esc(node.getAttribute(n))}</td>`).join('');
}

async function jobPage(name, q) {
  const gen = pageGen;
  const base = '/api/jobs/' + encodeURIComponent(name);
  main().innerHTML = `<h1>${esc(name)}</h1><div id="job-figs"><section class="mut">report: asking…</section></div>` +
    '<h2>Timeline</h2><section id="timeline"></section><div id="job-report"></div>' +
    '<h2>Exports</h2><section id="exports"></section>';
  const info = await api(base);
  if (gen !== pageGen) return;
  /* until the report comes (a whole post-processing of a large job takes a
   * while the first time), what the job's index says */
  if (info.job.report !== 'ready')
    $('#job-figs').innerHTML = '<section><div class="figs">' + fig('records (index)', info.job.records) +
      fig('segments', fmtBytes(info.job.bytes)) + fig('created', info.job.date || '—') +
      '</div><p class="mut" id="report-wait">The report is being made (clock fits, causality repair, ' +
      'perturbation correction over the whole job, once): its figures replace these when it is ready.</p></section>';
  renderExports(base, info.exports);
  /* a GET starts no work: the report and the index are asked for first */
  if (info.job.report !== 'ready') await api(base + '/build', {method: 'POST'});
  if (gen !== pageGen) return;
  const tl = startTimeline(base, gen, q);
  /* the quick report (counts, streams: one read of the job) first when the
   * report is not made yet, then the report with the post-processing */
  let xml = await until(base + '/report-quick.xml', gen, {text: true});
  if (gen !== pageGen || xml === null) return;
  let doc = new DOMParser().parseFromString(xml, 'application/xml');
  renderReport(doc);
  if (doc.documentElement.getAttribute('post') === 'skipped') {
    $('#job-report').insertAdjacentHTML('afterbegin', '<p class="mut" id="report-wait">Counts from one read of the job; ' +
      'the clocks, causality repair and perturbation correction follow when the post-processing is done.</p>');
    xml = await until(base + '/report.xml', gen, {text: true});
    if (gen !== pageGen || xml === null) return;
    renderReport(new DOMParser().parseFromString(xml, 'application/xml'));
  }
  await tl;
}

function renderReport(doc) {
  const r = doc.documentElement;
  const g = n => r.getAttribute(n);
  let h = '<section><div class="figs">' +
    fig('events', g('events'), '/report/@events') + fig('batches', g('batches'), '/report/@batches') +
    fig('streams', g('streams'), '/report/@streams') + fig('lost events', g('lost_events'), '/report/@lost_events') +
    fig('missing batches', g('gap_batches'), '/report/@gap_batches') +
    fig('corrupt batches', g('corrupt_batches'), '/report/@corrupt_batches') +
    fig('duplicate batches', g('duplicate_batches'), '/report/@duplicate_batches') +
    fig('damaged bytes skipped', g('skipped_bytes'), '/report/@skipped_bytes') + '</div></section>';
  $('#job-figs').innerHTML = h;
  h = profileSection(r);	/* profile.js */
  const streams = [...r.getElementsByTagName('stream')];
  h += '<h2>Streams</h2><section><table><tr><th>stream</th><th>host</th><th class="n">rank</th><th class="n">pid</th>' +
    '<th>program</th><th class="n">events</th><th class="n">batches</th><th class="n">lost</th><th class="n">missing batches</th><th>end</th></tr>';
  streams.forEach((s, i) => {
    const x = `/report/stream[${i + 1}]`;
    h += `<tr><td data-x="${x}/@id">${esc(s.getAttribute('id'))}</td><td>${esc(s.getAttribute('host'))}</td>` +
      attrs(s, ['rank', 'pid'], x) + `<td>${esc(s.getAttribute('exe'))}</td>` +
      attrs(s, ['events', 'batches', 'lost_events', 'gap_batches'], x) +
      `<td>${s.getAttribute('ended') === '1' ? 'ended' : '<span class="err">no end seen</span>'}</td></tr>`;
  });
  h += '</table></section>';
  h += eventsSection(r);
  h += clockSection(r);
  h += causalitySection(r);
  h += perturbSection(r);
  h += collectorSection(r);
  $('#job-report').innerHTML = h;
}

function eventsSection(r) {
  const ev = [...r.getElementsByTagName('events')];
  if (!ev.length) return '';
  const max = Math.max(...ev.map(e => Number(e.getAttribute('count'))));
  const ranks = new Set();
  ev.forEach(e => [...e.getElementsByTagName('rank')].forEach(k => ranks.add(Number(k.getAttribute('n')))));
  const rl = [...ranks].sort((a, b) => a - b).slice(0, 64);
  const rowH = 18, w = 420;
  let svg = `<svg width="${w + 300}" height="${ev.length * rowH + 4}" role="img" aria-label="events per type">`;
  ev.forEach((e, i) => {
    const c = Number(e.getAttribute('count'));
    const bw = max ? Math.max(1, Math.round(w * c / max)) : 0;
    svg += `<text x="0" y="${i * rowH + 13}" font-size="12">${esc(e.getAttribute('type'))}</text>` +
      `<rect class="bar" x="150" y="${i * rowH + 3}" width="${bw}" height="${rowH - 6}"></rect>` +
      `<text x="${156 + bw}" y="${i * rowH + 13}" font-size="12" data-x="/report/events[${i + 1}]/@count">${c}</text>`;
  });
  svg += '</svg>';
  let heat = '';
  if (rl.length) {
    let rmax = 1;
    ev.forEach(e => [...e.getElementsByTagName('rank')].forEach(k => { rmax = Math.max(rmax, Number(k.getAttribute('count'))); }));
    heat = '<h2>Events per type and rank</h2><section><table class="heat"><tr><th>type</th>' +
      rl.map(k => `<th class="n">rank ${k}</th>`).join('') + '</tr>';
    ev.forEach((e, i) => {
      const by = {};
      [...e.getElementsByTagName('rank')].forEach((k, j) => { by[k.getAttribute('n')] = [k.getAttribute('count'), j + 1]; });
      heat += `<tr><td>${esc(e.getAttribute('type'))}</td>` + rl.map(k => {
        const v = by[k];
        if (!v) return '<td class="mut">0</td>';
        return `<td data-heat="${Math.round(9 * Number(v[0]) / rmax)}" data-x="/report/events[${i + 1}]/rank[${v[1]}]/@count">${v[0]}</td>`;
      }).join('') + '</tr>';
    });
    heat += '</table></section>';
  }
  return '<h2>Events per type</h2><section>' + svg + '</section>' + heat;
}

function clockSection(r) {
  const cl = [...r.getElementsByTagName('clock')];
  if (!cl.length) return '';
  let h = '<h2>Clocks (every edge of the tree)</h2><section><table><tr><th>child</th><th>parent</th>' +
    '<th class="n">offset ns</th><th class="n">± ns</th><th class="n">drift ppm</th><th class="n">± ppm</th>' +
    '<th class="n">samples used</th><th class="n">min rtt ns</th><th class="n">depth</th><th>quality</th></tr>';
  cl.forEach((c, i) => {
    const x = `/report/clock[${i + 1}]`;
    h += `<tr><td>${esc(c.getAttribute('child'))}</td><td>${esc(c.getAttribute('parent'))}</td>` +
      attrs(c, ['offset_ns', 'offset_ci_ns', 'drift_ppm', 'drift_ci_ppm', 'used', 'rtt_min_ns', 'depth'], x) +
      `<td>${esc(c.getAttribute('quality'))}</td></tr>`;
  });
  return h + '</table></section>';
}

function pairTable(node, x, rows) {
  return '<table>' + rows.map(([label, a, b]) => `<tr><td>${esc(label)}</td>` +
    `<td class="n" data-x="${x}/@${a}">${esc(node.getAttribute(a))}</td>` +
    (b ? `<td class="n" data-x="${x}/@${b}">${esc(node.getAttribute(b))}</td>` : '<td></td>') + '</tr>').join('') + '</table>';
}

function causalitySection(r) {
  const c = r.getElementsByTagName('causality')[0];
  if (!c) return '';
  return '<h2>Causality (before / after repair)</h2><section>' +
    pairTable(c, '/report/causality', [
      ['messages matched', 'messages'], ['unmatched sends / receives', 'unmatched_sends', 'unmatched_receives'],
      ['message violations before / after', 'violations_before', 'violations_after'],
      ['collective violations before / after', 'coll_violations_before', 'coll_violations_after'],
      ['receives moved / collectives moved', 'receives_moved', 'collectives_moved'],
      ['largest shift ns / largest interval change ns', 'max_shift_ns', 'max_interval_change_ns'],
      ['collectives', 'collectives'], ['communicators named / unnamed', 'communicators_named', 'communicators_unnamed']]) +
    '</section>';
}

function perturbSection(r) {
  const p = r.getElementsByTagName('perturbation')[0];
  if (!p) return '';
  const raw = Number(p.getAttribute('span_traced_ns')), cor = Number(p.getAttribute('span_corrected_ns'));
  const pct = raw ? (100 * (raw - cor) / raw).toFixed(2) : '0.00';
  return '<h2>Perturbation removed</h2><section><div class="figs">' +
    fig('span traced', fmtNs(raw)) + fig('span corrected', fmtNs(cor)) + fig('removed', pct + ' %') +
    fig('tracer cost per event', p.getAttribute('alpha_ns') + ' ns') + '</div>' +
    pairTable(p, '/report/perturbation', [
      ['span traced / corrected ns', 'span_traced_ns', 'span_corrected_ns'], ['tracer time removed ns', 'removed_ns'],
      ['receives / arrived', 'receives', 'receives_arrived'], ['receives waited / needed the model', 'receives_waited', 'receives_model'],
      ['collectives / on sub-communicators', 'collectives', 'collectives_sub'],
      ['model latency ns / ns per byte', 'model_latency_ns', 'model_ns_per_byte'],
      ['uncalibrated streams / events', 'uncalibrated_streams', 'uncalibrated_events']]) + '</section>';
}

function collectorSection(r) {
  const cs = [...r.getElementsByTagName('collector')];
  if (!cs.length) return '';
  let h = '<h2>Collectors (last report of each)</h2><section><table><tr><th>node</th><th>name</th><th>role</th>' +
    '<th class="n">events in</th><th class="n">drops</th><th class="n">filtered</th><th class="n">spilled bytes</th>' +
    '<th class="n">reconnects</th><th class="n">rejected</th></tr>';
  cs.forEach((c, i) => {
    h += `<tr><td>${esc(c.getAttribute('id'))}</td><td>${esc(c.getAttribute('name'))}</td><td>${esc(c.getAttribute('role'))}</td>` +
      attrs(c, ['events_in', 'drops', 'filtered', 'spilled_bytes', 'reconnects', 'rejected'], `/report/collector[${i + 1}]`) + '</tr>';
  });
  return h + '</table></section>';
}

function renderExports(base, exps) {
  const s = $('#exports');
  let h = '<table><tr><th>format</th><th>state</th><th>files</th><th></th></tr>';
  for (const e of exps) {
    const files = e.files.map(f => `<a class="dl" href="${base}/files/${f.path.split('/').map(encodeURIComponent).join('/')}">${esc(f.path)}</a> <span class="mut">${fmtBytes(f.bytes)}</span>`).join('<br>');
    h += `<tr><td>${esc(e.format)}</td><td>${esc(e.state)}</td><td>${files || '<span class="mut">—</span>'}</td>` +
      `<td>${e.state === 'running' ? '' : `<button data-fmt="${esc(e.format)}">${e.state === 'ready' ? 'export again' : 'export'}</button>`}</td></tr>`;
  }
  s.innerHTML = h + '</table>';
  for (const b of s.querySelectorAll('button[data-fmt]'))
    b.addEventListener('click', async () => {
      const gen = pageGen;
      await api(base + '/export?format=' + encodeURIComponent(b.dataset.fmt), {method: 'POST'});
      for (;;) {
        await sleep(700);
        if (gen !== pageGen) return;
        const info = await api(base);
        renderExports(base, info.exports);
        if (!info.exports.some(x => x.state === 'running')) return;
      }
    });
}

/* ---- live tree ----------------------------------------------------------------- */

async function treePage() {
  const gen = pageGen;
  main().innerHTML = '<h1>Live collector tree</h1><div id="tree" class="tree"></div>';
  await treeLoop(gen, $('#tree'));
}

async function treeLoop(gen, box, only) {
  for (;;) {
    const d = await api('/api/tree');
    if (gen !== pageGen) return;
    renderTree(box, d, only);
    document.body.dataset.ready = '1';
    await sleep(1000);
    if (gen !== pageGen) return;
  }
}

function renderTree(box, d, only) {
  let h = '';
  d.roots.forEach((r, ri) => {
    if (only && r.addr !== only) return;
    h += `<section data-root="${esc(r.addr)}"><b>${esc(r.label)}</b> — ${esc(r.addr)} ` +
      (r.error ? `<span class="err">${esc(r.error)}</span>` : `<span class="ok">answering</span>`);
    const nodes = d.nodes.filter(n => n.root === ri);
    const byId = {};
    nodes.forEach(n => { byId[n.id] = n; });
    const kids = id => nodes.filter(n => (n.stats.parent || null) === id);
    const tops = nodes.filter(n => !n.stats.parent || !byId[n.stats.parent]);
    const render = n => {
      const s = n.stats;
      let li = `<li><div class="node${n.stale ? ' stale' : ''}" data-node="${esc(n.id)}" data-stale="${n.stale}">` +
        `<b>${esc(s.role === 'root' ? 'root' : 'collector')} ${esc(s.name)}</b> on ${esc(s.host)} <span class="mut">node ${esc(n.id)}</span>` +
        (n.stale ? `<span class="stale-tag">STALE (no report for ${n.age_s.toFixed(0)} s)</span>` : '') +
        (s.paused === '1' ? ' <span class="err">PAUSED (backpressure)</span>' : '') +
        '<div class="kv">' +
        `<span>events/s <b data-k="events_per_s">${fmtRate(s.events_per_s)}</b></span>` +
        `<span>bytes/s <b>${fmtBytes(s.bytes_per_s)}</b></span>` +
        `<span>events in <b data-k="events_in">${esc(s.events_in)}</b></span>` +
        `<span>streams <b data-k="streams">${esc(s.streams)}</b></span>` +
        `<span>buffered <b>${fmtBytes(s.buffered_bytes)}</b></span>` +
        `<span>spilled <b>${fmtBytes(s.spilled_bytes)}</b></span>` +
        `<span>drops <b data-k="drops">${esc(s.drops)}</b></span>` +
        `<span>reconnects <b data-k="reconnects">${esc(s.reconnects)}</b></span>` +
        `<span>children <b>${esc(s.children)}</b></span>` +
        `<span>unacked frames <b>${esc(s.unacked_frames)}</b></span>` +
        `<span>clock drift <b>${esc(s.clock_drift_ppm)} ppm</b></span>` +
        clockFit(n.clock_fit, s) +
        (s.stored_batches !== undefined ? `<span>stored batches <b>${esc(s.stored_batches)}</b></span>` : '') +
        '</div>' + streamList(s.stream_list) + '</div>';
      const k = kids(n.id);
      if (k.length) li += '<ul>' + k.map(render).join('') + '</ul>';
      return li + '</li>';
    };
    h += nodes.length ? '<ul>' + tops.map(render).join('') + '</ul>' : '<p class="mut">no STATS yet</p>';
    h += '</section>';
  });
  if (!h) h = '<p class="mut">No collector tree to show: start tapestry serve with --collector ADDR:PORT, or launch a job.</p>';
  box.innerHTML = h;
}

/* The clock against the parent as the report computes it: the server's fit
 * of every round seen (offset node - parent at the newest round, 95 %
 * half-widths, quality); the last round's sample (parent - node) beside it. */
function clockFit(f, s) {
  if (s.clock_offset_ns === undefined) return '';
  const last = `<span class="mut" data-k="clock_offset_ns" data-v="${esc(s.clock_offset_ns)}">last round: parent − node ` +
    `${fmtNs(Number(s.clock_offset_ns))}, round trip ${fmtNs(Number(s.clock_rtt_ns))}</span>`;
  if (!f || f.offset_ns === undefined)
    return `<span>clock fit vs parent <b data-k="clock_fit">pending (${f ? f.rounds : 0} rounds)</b></span>` + last;
  return `<span>clock fit vs parent (node − parent) <b data-k="clock_fit_offset_ns">${fmtNs(f.offset_ns)}</b> ± ${fmtNs(f.offset_ci_ns)}, ` +
    `drift <b data-k="clock_fit_drift_ppm">${f.drift_ppm.toFixed(3)}</b> ± ${f.drift_ci_ppm.toFixed(3)} ppm, ` +
    `<b data-k="clock_fit_quality">${esc(f.quality)}</b> (${f.used} of ${f.rounds} rounds)</span>` + last;
}

/* "ID,HOST,RANK,PID,EVENTS;...[;+N]" (the collector's STATS stream_list);
 * rank -1: the stream's HELLO had none (the launcher's environment did not
 * say it), so it is pending until MPI_Init's META, which reaches the job
 * directory (the job page) but not the collector's list */
function rankCell(v) {
  return Number(v) >= 0 ? esc(v) :
    '<span class="mut" title="not in the stream\'s HELLO: known once MPI_Init\'s META is stored (job page)">pending</span>';
}

function streamList(v) {
  if (!v) return '';
  let more = '';
  const rows = v.split(';').filter(x => {
    if (x.startsWith('+')) { more = `<tr><td colspan="4" class="mut">and ${esc(x.slice(1))} more</td></tr>`; return false; }
    return x.length > 0;
  }).map(x => x.split(','));
  return '<table class="streams"><tr><th>stream</th><th>host</th><th class="n">rank</th><th class="n">pid</th><th class="n">events</th></tr>' +
    rows.map(r => `<tr data-stream="${esc(r[0])}"><td>${esc(r[0])}</td><td>${esc(r[1])}</td><td class="n">${rankCell(r[2])}</td>` +
      `<td class="n">${esc(r[3])}</td><td class="n">${esc(r[4])}</td></tr>`).join('') + more + '</table>';
}

/* ---- launch: launch.js ---------------------------------------------------------- */
