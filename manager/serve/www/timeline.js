/* tapestry serve: the job's timeline (docs/modules/manager-serve.md,
 * "Timeline"): lanes per process and thread drawn on a canvas from
 * /api/jobs/NAME/timeline, zoom, pan, details of an event. Uses $, esc(),
 * fmtNs(), fmtBytes(), api(), until(), pageGen and lastMs of app.js. */
'use strict';

/* the index's categories (tlindex.c, category()) */
const CAT_COLORS = ['#d62728', '#ff7f0e', '#9467bd', '#e377c2', '#1f77b4', '#2ca02c', '#9e9e9e'];
const CAT_NAMES = ['MPI point to point', 'MPI collective', 'MPI wait', 'MPI other', 'I/O and libc',
  'computation', 'process'];
const NCAT = CAT_NAMES.length;
const LABEL_W = 170, LANE_H = 24, AXIS_H = 22;

async function startTimeline(base, gen, q) {
  const box = $('#timeline');
  box.innerHTML = '<div class="tl-tools"><button id="tl-in">zoom in</button><button id="tl-out">zoom out</button>' +
    '<button id="tl-reset">whole job</button><span class="legend">' +
    CAT_NAMES.map((n, i) => `<span class="c${i}"></span>${n}`).join('') +
    '<span class="mem"></span>memory (rss)</span><span id="tl-status" class="mut">indexing…</span></div>' +
    '<div class="tl-wrap"><canvas id="tl-canvas" height="120"></canvas></div><div id="tl-detail" class="card mut">' +
    'Point at an event for its details; wheel or buttons to zoom, drag to pan, double-click for the whole job.</div>';
  const st = {base, gen, t0: null, t1: null, data: null, seq: 0, tmin: 0, tmax: 1, detailCache: {}};
  if (q.get('t0') && q.get('t1')) { st.t0 = Number(q.get('t0')); st.t1 = Number(q.get('t1')); }
  const first = await fetchWindow(st);
  if (!first || gen !== pageGen) return;
  wireTimeline(st);
}

async function fetchWindow(st) {
  const cv = $('#tl-canvas');
  const w = Math.max(50, Math.min(4000, Math.floor(cv.clientWidth) - LABEL_W));
  const seq = ++st.seq;
  let url = st.base + '/timeline?w=' + w;
  if (st.t0 !== null) url += '&t0=' + Math.floor(st.t0) + '&t1=' + Math.ceil(st.t1);
  const d = await until(url, st.gen);
  if (!d || seq !== st.seq || st.gen !== pageGen) return null;
  st.data = d; st.w = w; st.t0 = d.t0; st.t1 = d.t1; st.tmin = d.tmin; st.tmax = d.tmax;
  st.ms = lastMs;
  $('#busy').textContent = '';
  drawTimeline(st);
  return d;
}

function drawTimeline(st) {
  const d = st.data, cv = $('#tl-canvas');
  const dpr = window.devicePixelRatio || 1;
  const cssW = LABEL_W + st.w, cssH = AXIS_H + d.lanes.length * LANE_H + 4;
  cv.width = cssW * dpr; cv.height = cssH * dpr;
  cv.style.height = cssH + 'px'; cv.style.width = cssW + 'px';
  const g = cv.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, cssW, cssH);
  const span = d.t1 - d.t0, X = t => LABEL_W + (t - d.t0) * st.w / span;
  /* axis */
  g.fillStyle = '#687184'; g.font = '11px system-ui, sans-serif';
  const step = niceStep(span / 8);
  for (let t = Math.ceil(d.t0 / step) * step; t <= d.t1; t += step) {
    const x = X(t);
    g.fillRect(x, AXIS_H - 5, 1, 5);
    g.fillText(fmtNs(t), x + 2, 12);
  }
  let events = 0, mode = 'events';
  d.lanes.forEach((l, i) => {
    const y = AXIS_H + i * LANE_H;
    g.fillStyle = '#1d2330';
    const label = (l.rank >= 0 ? 'rank ' + l.rank : l.exe + ' ' + l.pid) + (l.tid ? ' t' + l.tid : '');
    g.fillText(label.slice(0, 26), 4, y + 15);
  });
  g.save();
  g.beginPath(); g.rect(LABEL_W, 0, st.w, cssH); g.clip();
  d.lanes.forEach((l, i) => {
    const y = AXIS_H + i * LANE_H;
    g.fillStyle = i % 2 ? '#fafbfc' : '#f1f3f6';
    g.fillRect(LABEL_W, y, st.w, LANE_H);
    if (l.mode === 'events') {
      for (const e of l.ev) {
        g.fillStyle = CAT_COLORS[e[4]] || '#999';
        const x0 = X(e[1]), x1 = X(e[2]);
        g.fillRect(x0, y + 3, Math.max(1, x1 - x0), LANE_H - 6);
      }
      events += l.ev.length;
      memLine(g, l.mem.map(m => [X(m[0]), m[1]]), y);
    } else {
      mode = 'pixels';
      for (let p = 0; p < st.w; p++) {
        let yy = y + LANE_H - 2;
        for (let c = 0; c < NCAT; c++) {
          const f = l.px[p * NCAT + c] / 1000;
          if (f <= 0) continue;
          const hgt = Math.max(1, f * (LANE_H - 4));
          g.fillStyle = CAT_COLORS[c];
          g.fillRect(LABEL_W + p, yy - hgt, 1, hgt);
          yy -= hgt;
        }
      }
      const pts = [];
      l.pm.forEach((v, p) => { if (v > 0) pts.push([LABEL_W + p + 0.5, v]); });
      memLine(g, pts, y);
    }
  });
  /* messages, when the window is narrow enough to show each event */
  const msgs = d.msgs || [];
  g.strokeStyle = 'rgba(20,20,20,0.75)'; g.fillStyle = 'rgba(20,20,20,0.75)'; g.lineWidth = 1;
  for (const m of msgs) {
    const x0 = X(m[1]), y0 = AXIS_H + m[0] * LANE_H + LANE_H / 2;
    const x1 = X(m[5]), y1 = AXIS_H + m[3] * LANE_H + LANE_H / 2;
    g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
    const a = Math.atan2(y1 - y0, x1 - x0);
    g.beginPath(); g.moveTo(x1, y1);
    g.lineTo(x1 - 7 * Math.cos(a - 0.4), y1 - 7 * Math.sin(a - 0.4));
    g.lineTo(x1 - 7 * Math.cos(a + 0.4), y1 - 7 * Math.sin(a + 0.4));
    g.fill();
  }
  g.restore();
  const s = $('#tl-status');
  s.dataset.t0 = d.t0; s.dataset.t1 = d.t1; s.dataset.mode = mode; s.dataset.drawn = events;
  s.dataset.msgs = msgs.length; s.dataset.lanes = d.lanes.length;
  s.textContent = `${fmtNs(d.t0)} – ${fmtNs(d.t1)} (${fmtNs(span)} shown of ${fmtNs(d.tmax - d.tmin)}), ` +
    `${d.events} events in ${d.lanes.length} lanes, ` + (mode === 'events' ? `${events} drawn one by one, ${msgs.length} messages` :
      'summarised per pixel (zoom in for single events and messages)') + `; answered in ${st.ms.toFixed(0)} ms`;
}

function memLine(g, pts, y) {
  if (!pts.length) return;
  const max = Math.max(...pts.map(p => p[1])) || 1;
  g.strokeStyle = '#f0a030'; g.lineWidth = 1.5;
  g.beginPath();
  pts.forEach((p, k) => {
    const yy = y + LANE_H - 3 - (p[1] / max) * (LANE_H - 6);
    if (k) g.lineTo(p[0], yy); else g.moveTo(p[0], yy);
  });
  if (pts.length === 1) g.lineTo(pts[0][0] + 3, y + 3);
  g.stroke();
}

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1))));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function wireTimeline(st) {
  const cv = $('#tl-canvas');
  let timer = null;
  const refetch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      history.replaceState(null, '', `#/job/${encodeURIComponent(st.base.split('/').pop())}?t0=${Math.floor(st.t0)}&t1=${Math.ceil(st.t1)}`);
      fetchWindow(st).catch(e => showError(e.message));
    }, 60);
  };
  const zoom = (factor, at) => {
    const span = st.t1 - st.t0, c = at === undefined ? st.t0 + span / 2 : at;
    let ns = Math.max(1000, Math.min(st.tmax - st.tmin, span * factor));
    st.t0 = Math.max(st.tmin, c - (c - st.t0) * ns / span);
    st.t1 = Math.min(st.tmax, st.t0 + ns);
    refetch();
  };
  const timeAt = x => st.t0 + (x - LABEL_W) * (st.t1 - st.t0) / st.w;
  $('#tl-in').addEventListener('click', () => zoom(0.5));
  $('#tl-out').addEventListener('click', () => zoom(2));
  $('#tl-reset').addEventListener('click', () => { st.t0 = st.tmin; st.t1 = st.tmax; refetch(); });
  cv.addEventListener('dblclick', () => { st.t0 = st.tmin; st.t1 = st.tmax; refetch(); });
  cv.addEventListener('wheel', ev => {
    ev.preventDefault();
    const r = cv.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(ev.clientX - r.left));
  }, {passive: false});
  let drag = null;
  cv.addEventListener('mousedown', ev => { drag = {x: ev.clientX, t0: st.t0, t1: st.t1}; cv.style.cursor = 'grabbing'; });
  window.addEventListener('mouseup', () => { if (drag) { drag = null; cv.style.cursor = 'grab'; } });
  cv.addEventListener('mousemove', ev => {
    const r = cv.getBoundingClientRect();
    if (drag) {
      const dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / st.w;
      const span = drag.t1 - drag.t0;
      st.t0 = Math.max(st.tmin, Math.min(st.tmax - span, drag.t0 - dt));
      st.t1 = st.t0 + span;
      refetch();
      return;
    }
    hover(st, ev.clientX - r.left, ev.clientY - r.top);
  });
}

async function hover(st, x, y) {
  const d = st.data;
  if (!d || x < LABEL_W) return;
  const lane = Math.floor((y - AXIS_H) / LANE_H);
  const l = d.lanes[lane];
  if (!l) return;
  const box = $('#tl-detail');
  const t = d.t0 + (x - LABEL_W) * (d.t1 - d.t0) / st.w;
  const who = (l.rank >= 0 ? 'rank ' + l.rank + ', ' : '') + `${esc(l.exe)} pid ${l.pid} thread ${l.tid} on ${esc(l.host)}`;
  if (l.mode === 'pixels') {
    const p = Math.floor(x - LABEL_W);
    const f = CAT_NAMES.map((n, c) => l.px[p * NCAT + c] / 10);
    box.innerHTML = `<b>${who}</b> around ${fmtNs(t)}: ${l.pc[p]} events in this pixel (${fmtNs((d.t1 - d.t0) / st.w)}); busy ` +
      CAT_NAMES.map((n, c) => `${n} ${f[c].toFixed(1)} %`).join(', ') + (l.pm[p] ? `; memory ${fmtBytes(l.pm[p])}` : '');
    return;
  }
  const tol = 3 * (d.t1 - d.t0) / st.w;
  let best = null;
  for (const e of l.ev) if (e[1] - tol <= t && t <= e[2] + tol) { best = e; if (e[1] <= t && t <= e[2]) break; }
  if (!best) return;
  if (box.dataset.i === String(best[0])) return;
  box.dataset.i = best[0];
  const ev = st.detailCache[best[0]] || (st.detailCache[best[0]] = await api(st.base + '/event?i=' + best[0]));
  if (box.dataset.i !== String(ev.i)) return;
  box.classList.remove('mut');
  box.innerHTML = `<b>${esc(ev.name)}</b> (${esc(ev.category)}${ev.failed ? ', <span class="err">failed</span>' : ''}) — ${who}<table>` +
    `<tr><td>start</td><td>${fmtNs(ev.start)}</td><td>end</td><td>${fmtNs(ev.end)}</td><td>duration</td><td>${fmtNs(ev.end - ev.start)}</td></tr>` +
    `<tr><td>arguments</td><td colspan="5">${Object.entries(ev.args).map(([k, v]) => `${esc(k)} ${esc(v)}`).join(', ')}</td></tr>` +
    (ev.path ? `<tr><td>path</td><td colspan="5">${esc(ev.path)}</td></tr>` : '') + '</table>';
}
