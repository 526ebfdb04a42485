/* tapestry serve: the job's timeline (docs/modules/manager-serve.md,
 * "Timeline"): lanes per process and thread drawn on a canvas from
 * /api/jobs/NAME/timeline; calls coloured by kind and named; helper threads
 * and launchers folded; zoom, pan, a range selection with its profile
 * (.../range), a search by call name (.../find), details of an event. Uses
 * $, esc(), fmtNs(), fmtBytes(), api(), until(), showError(), pageGen and
 * lastMs of app.js. */
'use strict';

/* the index's kinds of call (tlindex.c, category()), in its order; the
 * legend's colours are style.css's .legend .cN */
const CAT_HUE = [[0, 70], [30, 90], [275, 55], [320, 60], [210, 70], [120, 45], [0, 0]];
const CAT_COLORS = CAT_HUE.map(([h, s]) => `hsl(${h},${s}%,48%)`);
const CAT_NAMES = ['MPI point to point', 'MPI collective', 'MPI wait', 'MPI other', 'I/O and libc',
  'computation', 'process'];
const NCAT = CAT_NAMES.length;
const LABEL_W = 190, LANE_H = 24, AXIS_H = 22, FOLD_H = 16;
/* processes that start others: their lanes are folded into one row */
const LAUNCHER = /^(mpirun|mpiexec|orterun|orted|prterun|prted|prte|hydra_pmi_proxy|mpiexec\.hydra|srun|slurmstepd|tapestry)/;

/* a call's colour: its kind's hue, a lightness of its own so that calls of
 * one kind (MPI_Send, MPI_Recv) are told apart */
function typeColor(type, cat) {
  const [h, s] = CAT_HUE[cat] || [0, 0];
  return `hsl(${h},${s}%,${36 + (type * 7) % 5 * 6}%)`;
}

/* Tick labels of a step: the unit of the window's end, as many decimals as
 * the step needs, so that two ticks never read the same. */
function fmtTick(t, step, tEnd) {
  const a = Math.max(Math.abs(tEnd), step);
  const [u, name] = a >= 1e9 ? [1e9, 's'] : a >= 1e6 ? [1e6, 'ms'] : a >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  const dec = Math.max(0, Math.min(9, -Math.floor(Math.log10(step / u) + 1e-9)));
  return (t / u).toFixed(dec) + ' ' + name;
}

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1))));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

async function startTimeline(base, gen, q) {
  const box = $('#timeline');
  box.innerHTML = '<div class="tl-tools"><button id="tl-in">zoom in</button><button id="tl-out">zoom out</button>' +
    '<button id="tl-reset">whole job</button><button id="tl-unfold">unfold all</button>' +
    '<span class="tl-find"><input id="tl-q" type="search" placeholder="find a call (MPI_Allreduce, write…)" size="28">' +
    '<button id="tl-next">next</button><span id="tl-found" class="mut"></span></span></div>' +
    '<div class="legend">' + CAT_NAMES.map((n, i) => `<span class="c${i}"></span>${n}`).join('') +
    '<span class="mem"></span>memory (rss)</div>' +
    '<div id="tl-status" class="mut">indexing…</div>' +
    '<div class="tl-wrap"><canvas id="tl-canvas" height="120"></canvas></div><div id="tl-detail" class="card mut">' +
    'Point at a call for its details, click to keep them. Drag to select a range (its profile shows below), ' +
    'shift-drag or drag the time axis to pan, wheel or w/s to zoom, a/d to pan, double-click for the whole job; ' +
    '▸ in a lane\'s label unfolds its threads.</div><div id="tl-range"></div>';
  const st = {base, gen, t0: null, t1: null, data: null, seq: 0, tmin: 0, tmax: 1, detailCache: {},
    names: {}, open: {}, sel: null, pinned: null, found: null, nfound: 0};
  if (q.get('t0') && q.get('t1')) { st.t0 = Number(q.get('t0')); st.t1 = Number(q.get('t1')); }
  if (q.get('s0') && q.get('s1')) st.sel = {t0: Number(q.get('s0')), t1: Number(q.get('s1'))};
  if (q.get('unfold') === 'all') st.openAll = true;
  const first = await fetchWindow(st);
  if (!first || gen !== pageGen) return;
  wireTimeline(st);
  if (st.sel) await showRange(st);
  if (q.get('find')) {
    $('#tl-q').value = q.get('find');
    await findNext(st, true);
  }
}

async function fetchWindow(st) {
  const cv = $('#tl-canvas');
  const w = Math.max(50, Math.min(4000, Math.floor(cv.parentNode.clientWidth) - LABEL_W - 2));
  const seq = ++st.seq;
  let url = st.base + '/timeline?w=' + w;
  if (st.t0 !== null) url += '&t0=' + Math.floor(st.t0) + '&t1=' + Math.ceil(st.t1);
  const d = await until(url, st.gen);
  if (!d || seq !== st.seq || st.gen !== pageGen) return null;
  st.data = d; st.w = w; st.t0 = d.t0; st.t1 = d.t1; st.tmin = d.tmin; st.tmax = d.tmax;
  Object.assign(st.names, d.names || {});
  st.ms = lastMs;
  $('#busy').textContent = '';
  st.rows = laneRows(st);
  drawTimeline(st);
  return d;
}

/* The rows shown: per process its main thread, its other threads folded
 * under it (a row each once unfolded); launchers (mpirun, orted, ...) one
 * folded row. row = {y, h, lane, fold, key, label, n}; lane: the lane drawn
 * (null for a folded group of launchers). */
function laneRows(st) {
  const lanes = st.data.lanes, procs = new Map();
  for (const l of lanes) {
    const k = l.stream + ':' + l.pid;
    if (!procs.has(k)) procs.set(k, []);
    procs.get(k).push(l);
  }
  const rows = [], launchers = [];
  let y = AXIS_H;
  const add = r => { r.y = y; y += r.h; rows.push(r); };
  const isOpen = k => st.openAll || st.open[k];
  for (const [k, ls] of procs) {
    const main = ls.find(l => l.tid === 0) || ls[0];
    if (main.rank < 0 && LAUNCHER.test(main.exe)) { launchers.push(...ls); continue; }
    const others = ls.filter(l => l !== main);
    const name = main.rank >= 0 ? 'rank ' + main.rank : main.exe + ' ' + main.pid;
    add({h: LANE_H, lane: main, key: 'p' + k, n: others.length,
      label: (others.length ? (isOpen('p' + k) ? '▾ ' : '▸ ') : '') + name +
        (others.length && !isOpen('p' + k) ? ` +${others.length} thr` : '')});
    if (isOpen('p' + k))
      for (const l of others) add({h: LANE_H, lane: l, label: '   thread ' + l.tid, indent: true});
  }
  if (launchers.length) {
    const names = [...new Set(launchers.map(l => l.exe))].join(', ');
    if (isOpen('launch')) {
      add({h: FOLD_H, lane: null, key: 'launch', label: '▾ launchers', n: launchers.length});
      for (const l of launchers)
        add({h: LANE_H, lane: l, label: '   ' + l.exe + ' ' + l.pid + (l.tid ? ' t' + l.tid : ''), indent: true});
    } else {
      add({h: FOLD_H, lane: null, key: 'launch', label: `▸ launchers: ${names}`, n: launchers.length});
    }
  }
  st.height = y + 4;
  st.rowOf = {};
  for (const r of rows) if (r.lane) st.rowOf[r.lane.lane] = r;
  return rows;
}

function drawTimeline(st) {
  const d = st.data, cv = $('#tl-canvas');
  const dpr = window.devicePixelRatio || 1;
  const cssW = LABEL_W + st.w, cssH = st.height;
  cv.width = cssW * dpr; cv.height = cssH * dpr;
  cv.style.height = cssH + 'px'; cv.style.width = cssW + 'px';
  const g = cv.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, cssW, cssH);
  const span = d.t1 - d.t0, X = t => LABEL_W + (t - d.t0) * st.w / span;
  /* axis: a label per ~110 px, distinct at every zoom */
  g.font = '11px system-ui, sans-serif';
  const step = niceStep(span / Math.max(2, st.w / 110));
  const ticks = [];
  for (let t = Math.ceil(d.t0 / step) * step; t <= d.t1; t += step) {
    const x = X(t), lab = fmtTick(t, step, d.t1);
    ticks.push(lab);
    g.fillStyle = '#eceff3'; g.fillRect(x, AXIS_H, 1, cssH - AXIS_H);
    g.fillStyle = '#687184'; g.fillRect(x, AXIS_H - 5, 1, 5);
    g.fillText(lab, x + 2, 12);
  }
  st.rows.forEach((r, i) => {
    g.fillStyle = r.lane ? '#1d2330' : '#687184';
    g.font = (r.indent ? '' : 'bold ') + '11px system-ui, sans-serif';
    g.fillText(r.label.slice(0, 30), 4, r.y + (r.lane ? 15 : 12));
  });
  g.font = '11px system-ui, sans-serif';
  let events = 0, mode = 'events', named = 0;
  g.save();
  g.beginPath(); g.rect(LABEL_W, AXIS_H, st.w, cssH); g.clip();
  st.rows.forEach((r, i) => {
    g.fillStyle = i % 2 ? '#fafbfc' : '#f1f3f6';
    g.fillRect(LABEL_W, r.y, st.w, r.h);
    const l = r.lane;
    if (!l) return;
    if (l.mode === 'events') {
      for (const e of l.ev) {
        const x0 = X(e[1]), x1 = X(e[2]), wd = Math.max(1, x1 - x0);
        g.fillStyle = typeColor(e[3], e[4]);
        g.fillRect(x0, r.y + 3, wd, LANE_H - 6);
        if (wd > 34) {
          const name = st.names[e[3]] || '';
          const a = Math.max(x0, LABEL_W), z = Math.min(x1, LABEL_W + st.w);
          const fit = Math.floor((z - a - 6) / 6.2);
          if (fit >= 3) {
            g.fillStyle = '#fff';
            g.fillText(name.length > fit ? name.slice(0, fit - 1) + '…' : name, a + 3, r.y + 16);
            named++;
          }
        }
        if (st.pinned && st.pinned.i === e[0]) {
          g.strokeStyle = '#000'; g.lineWidth = 2;
          g.strokeRect(x0 - 1, r.y + 2, wd + 2, LANE_H - 4);
        }
      }
      events += l.ev.length;
      memLine(g, l.mem.map(m => [X(m[0]), m[1]]), r.y);
    } else {
      mode = 'pixels';
      for (let p = 0; p < st.w; p++) {
        let yy = r.y + LANE_H - 2;
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
      memLine(g, pts, r.y);
    }
  });
  /* messages, when the window is narrow enough to show each event; a
   * folded lane's end at its process's row */
  const msgs = d.msgs || [];
  const rowY = ln => {
    const r = st.rowOf[ln] || st.rowOf[(d.lanes.find(x => x.pid === d.lanes[ln].pid && x.tid === 0) || {}).lane];
    return r ? r.y + LANE_H / 2 : null;
  };
  g.strokeStyle = 'rgba(20,20,20,0.75)'; g.fillStyle = 'rgba(20,20,20,0.75)'; g.lineWidth = 1;
  for (const m of msgs) {
    const y0 = rowY(m[0]), y1 = rowY(m[3]);
    if (y0 === null || y1 === null) continue;
    const x0 = X(m[1]), x1 = X(m[5]);
    g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
    const a = Math.atan2(y1 - y0, x1 - x0);
    g.beginPath(); g.moveTo(x1, y1);
    g.lineTo(x1 - 7 * Math.cos(a - 0.4), y1 - 7 * Math.sin(a - 0.4));
    g.lineTo(x1 - 7 * Math.cos(a + 0.4), y1 - 7 * Math.sin(a + 0.4));
    g.fill();
  }
  /* the range selected */
  if (st.sel) {
    const a = X(st.sel.t0), z = X(st.sel.t1);
    g.fillStyle = 'rgba(43,87,151,0.15)'; g.fillRect(a, AXIS_H, Math.max(1, z - a), cssH - AXIS_H);
    g.fillStyle = 'rgba(43,87,151,0.9)'; g.fillRect(a, AXIS_H, 1, cssH - AXIS_H); g.fillRect(z, AXIS_H, 1, cssH - AXIS_H);
  }
  g.restore();
  const s = $('#tl-status');
  s.dataset.t0 = d.t0; s.dataset.t1 = d.t1; s.dataset.mode = mode; s.dataset.drawn = events;
  s.dataset.msgs = msgs.length; s.dataset.lanes = d.lanes.length; s.dataset.rows = st.rows.length;
  s.dataset.shown = st.rows.filter(r => r.lane).length; s.dataset.named = named;
  s.dataset.ticks = ticks.join('|');
  s.textContent = `${fmtNs(d.t0)} – ${fmtNs(d.t1)} (${fmtNs(span)} shown of ${fmtNs(d.tmax - d.tmin)}), ` +
    `${d.events} events in ${d.lanes.length} lanes (${s.dataset.shown} shown), ` +
    (mode === 'events' ? `${events} drawn one by one, ${msgs.length} messages` :
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

function keepAddress(st) {
  let h = `#/job/${encodeURIComponent(st.base.split('/').pop())}?t0=${Math.floor(st.t0)}&t1=${Math.ceil(st.t1)}`;
  if (st.sel) h += `&s0=${Math.floor(st.sel.t0)}&s1=${Math.ceil(st.sel.t1)}`;
  history.replaceState(null, '', h);
}

function wireTimeline(st) {
  const cv = $('#tl-canvas');
  let timer = null;
  /* keep: the window goes into the address (a zoom, a pan; not a resize) */
  const refetch = keep => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (keep !== false) keepAddress(st);
      fetchWindow(st).catch(e => showError(e.message));
    }, 60);
  };
  st.refetch = refetch;
  /* the width the page gives (a scroll bar appearing when the report
   * comes changes it): drawn again at the new width */
  const wrap = cv.parentNode;
  let lastW = wrap.clientWidth;
  new ResizeObserver(() => {
    if (wrap.clientWidth !== lastW && st.gen === pageGen) { lastW = wrap.clientWidth; refetch(false); }
  }).observe(wrap);
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
  $('#tl-unfold').addEventListener('click', () => {
    st.openAll = !st.openAll;
    if (!st.openAll) st.open = {};
    $('#tl-unfold').textContent = st.openAll ? 'fold helpers' : 'unfold all';
    st.rows = laneRows(st); drawTimeline(st);
  });
  $('#tl-next').addEventListener('click', () => findNext(st, false).catch(e => showError(e.message)));
  $('#tl-q').addEventListener('keydown', ev => {
    if (ev.key === 'Enter') findNext(st, false).catch(e => showError(e.message));
  });
  $('#tl-q').addEventListener('input', () => { st.found = null; st.nfound = 0; $('#tl-found').textContent = ''; });
  cv.addEventListener('dblclick', () => { st.t0 = st.tmin; st.t1 = st.tmax; refetch(); });
  /* Perfetto's keys: w/s zoom, a/d pan (not while typing in a field) */
  const keys = ev => {
    if (st.gen !== pageGen) { window.removeEventListener('keydown', keys); return; }
    if (ev.target.closest('input, textarea, select') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key.toLowerCase(), span = st.t1 - st.t0;
    if (k === 'w') zoom(0.8);
    else if (k === 's') zoom(1.25);
    else if (k === 'a' || k === 'd') {
      const dt = (k === 'a' ? -1 : 1) * span / 4;
      st.t0 = Math.max(st.tmin, Math.min(st.tmax - span, st.t0 + dt)); st.t1 = st.t0 + span;
      refetch();
    }
  };
  window.addEventListener('keydown', keys);
  cv.addEventListener('wheel', ev => {
    ev.preventDefault();
    const r = cv.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(ev.clientX - r.left));
  }, {passive: false});
  let drag = null;
  cv.addEventListener('mousedown', ev => {
    const r = cv.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    if (x < LABEL_W) { toggleRow(st, y); return; }
    const pan = ev.shiftKey || ev.button === 1 || y < AXIS_H;
    drag = {x: ev.clientX, x0: x, t0: st.t0, t1: st.t1, pan, moved: false};
    cv.style.cursor = pan ? 'grabbing' : 'col-resize';
    ev.preventDefault();
  });
  window.addEventListener('mouseup', ev => {
    if (!drag) return;
    const d = drag;
    drag = null; cv.style.cursor = 'crosshair';
    if (d.pan || st.gen !== pageGen) return;
    if (!d.moved) { pick(st, ev); return; }
    showRange(st).catch(e => showError(e.message));
  });
  cv.addEventListener('mousemove', ev => {
    const r = cv.getBoundingClientRect(), x = ev.clientX - r.left;
    if (drag) {
      if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
      if (!drag.moved) return;
      if (drag.pan) {
        const dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / st.w;
        const span = drag.t1 - drag.t0;
        st.t0 = Math.max(st.tmin, Math.min(st.tmax - span, drag.t0 - dt));
        st.t1 = st.t0 + span;
        refetch();
      } else {
        const a = timeAt(Math.max(LABEL_W, Math.min(drag.x0, x))), z = timeAt(Math.min(LABEL_W + st.w, Math.max(drag.x0, x)));
        st.sel = {t0: a, t1: z};
        drawTimeline(st);
      }
      return;
    }
    hover(st, x, ev.clientY - r.top);
  });
}

/* a click in the labels: fold or unfold the row's group */
function toggleRow(st, y) {
  const r = st.rows.find(r => y >= r.y && y < r.y + r.h);
  if (!r || !r.key || !r.n) return;
  st.open[r.key] = !st.open[r.key];
  st.rows = laneRows(st);
  drawTimeline(st);
}

function rowAt(st, y) {
  return st.rows.find(r => y >= r.y && y < r.y + r.h);
}

/* the call of row r under time t (within 3 pixels), or null */
function callAt(st, r, t) {
  const d = st.data;
  if (!r || !r.lane || r.lane.mode !== 'events') return null;
  const tol = 3 * (d.t1 - d.t0) / st.w;
  let best = null;
  for (const e of r.lane.ev) if (e[1] - tol <= t && t <= e[2] + tol) { best = e; if (e[1] <= t && t <= e[2]) break; }
  return best;
}

async function showEvent(st, i, who) {
  const box = $('#tl-detail');
  box.dataset.i = i;
  const ev = st.detailCache[i] || (st.detailCache[i] = await api(st.base + '/event?i=' + i));
  if (box.dataset.i !== String(ev.i)) return;
  box.classList.remove('mut');
  box.dataset.name = ev.name;
  box.innerHTML = `<b>${esc(ev.name)}</b> (${esc(ev.category)}${ev.failed ? ', <span class="err">failed</span>' : ''}) — ${who}` +
    (st.pinned && st.pinned.i === i ? ' <span class="mut">(kept: click elsewhere to let go)</span>' : '') + '<table>' +
    `<tr><td>start</td><td>${fmtTick(ev.start, 1, ev.end)}</td><td>end</td><td>${fmtTick(ev.end, 1, ev.end)}</td>` +
    `<td>duration</td><td>${fmtNs(ev.end - ev.start)}</td></tr>` +
    `<tr><td>arguments</td><td colspan="5">${Object.entries(ev.args).map(([k, v]) => `${esc(k)} ${esc(v)}`).join(', ')}</td></tr>` +
    (ev.path ? `<tr><td>path</td><td colspan="5">${esc(ev.path)}</td></tr>` : '') + '</table>';
}

function laneWho(l) {
  return (l.rank >= 0 ? 'rank ' + l.rank + ', ' : '') + `${esc(l.exe)} pid ${l.pid} thread ${l.tid} on ${esc(l.host)}`;
}

/* a click (no drag) on the tracks: keep the call's details, or let go */
function pick(st, ev) {
  const cv = $('#tl-canvas'), rc = cv.getBoundingClientRect();
  const x = ev.clientX - rc.left, y = ev.clientY - rc.top;
  const r = rowAt(st, y), t = st.t0 + (x - LABEL_W) * (st.t1 - st.t0) / st.w;
  const e = callAt(st, r, t);
  st.pinned = e ? {i: e[0]} : null;
  if (!e && st.sel) { st.sel = null; $('#tl-range').innerHTML = ''; keepAddress(st); }
  drawTimeline(st);
  if (e) showEvent(st, e[0], laneWho(r.lane)).catch(err => showError(err.message));
}

async function hover(st, x, y) {
  const d = st.data;
  if (!d || x < LABEL_W || st.pinned) return;
  const r = rowAt(st, y);
  if (!r) return;
  const box = $('#tl-detail');
  if (!r.lane) {
    box.innerHTML = `<b>${r.n} lanes of launchers</b>, folded: click ▸ to unfold them.`;
    return;
  }
  const l = r.lane, t = d.t0 + (x - LABEL_W) * (d.t1 - d.t0) / st.w;
  if (l.mode === 'pixels') {
    const p = Math.floor(x - LABEL_W);
    const f = CAT_NAMES.map((n, c) => l.px[p * NCAT + c] / 10);
    box.dataset.i = '';
    box.innerHTML = `<b>${laneWho(l)}</b> around ${fmtNs(t)}: ${l.pc[p]} events in this pixel (${fmtNs((d.t1 - d.t0) / st.w)}); busy ` +
      CAT_NAMES.map((n, c) => f[c] ? `${n} ${f[c].toFixed(1)} %` : '').filter(Boolean).join(', ') +
      (l.pm[p] ? `; memory ${fmtBytes(l.pm[p])}` : '');
    return;
  }
  const best = callAt(st, r, t);
  if (!best || box.dataset.i === String(best[0])) return;
  await showEvent(st, best[0], laneWho(l));
}

/* ---- the profile of a range ------------------------------------------------- */

async function showRange(st) {
  if (!st.sel || st.sel.t1 <= st.sel.t0) return;
  keepAddress(st);
  const a = Math.floor(st.sel.t0), z = Math.ceil(st.sel.t1);
  const d = await api(`${st.base}/range?t0=${a}&t1=${z}`);
  if (st.gen !== pageGen) return;
  Object.assign(st.names, d.names || {});
  const lanes = st.data.lanes;
  /* per call: total calls and ns, and ns per rank (or process) */
  const who = l => l.rank >= 0 ? 'rank ' + l.rank : l.exe + ' ' + l.pid;
  const cols = [], colOf = {}, calls = {};
  for (const x of d.lanes) {
    const l = lanes[x.lane], c = who(l);
    if (!(c in colOf)) { colOf[c] = cols.length; cols.push(c); }
    for (const [type, n, ns, cat] of x.calls) {
      const k = calls[type] || (calls[type] = {type, cat, n: 0, ns: 0, by: {}});
      k.n += n; k.ns += ns; k.by[c] = (k.by[c] || 0) + ns;
    }
  }
  const rows = Object.values(calls).sort((p, q) => q.ns - p.ns);
  const span = d.t1 - d.t0, shown = cols.slice(0, 16);
  let h = `<h2>Selection ${fmtNs(d.t0)} – ${fmtNs(d.t1)} (${fmtNs(span)})</h2><section id="tl-profile" ` +
    `data-t0="${d.t0}" data-t1="${d.t1}" data-calls="${rows.length}">` +
    '<button id="tl-zoomsel">zoom to the selection</button> <button id="tl-clearsel">clear</button>' +
    '<table><tr><th>call</th><th class="n">calls</th><th class="n">time</th><th class="n">mean</th>' +
    shown.map(c => `<th class="n">${esc(c)}</th>`).join('') + '</tr>';
  for (const k of rows.slice(0, 40)) {
    const name = d.names[k.type] || st.names[k.type] || '#' + k.type;
    h += `<tr data-call="${esc(name)}"><td><span class="sw" data-type="${k.type}" data-cat="${k.cat}"></span>${esc(name)}</td>` +
      `<td class="n" data-k="calls">${k.n}</td><td class="n" data-k="ns" data-v="${k.ns}">${fmtNs(k.ns)}</td>` +
      `<td class="n">${fmtNs(k.ns / k.n)}</td>` +
      shown.map(c => `<td class="n">${k.by[c] ? fmtNs(k.by[c]) + ` <span class="mut">${(100 * k.by[c] / span).toFixed(1)}%</span>` : ''}</td>`).join('') + '</tr>';
  }
  if (!rows.length) h += '<tr><td colspan="4" class="mut">no call in this range</td></tr>';
  h += '</table>' + (rows.length > 40 ? `<p class="mut">${rows.length - 40} more calls</p>` : '') +
    (cols.length > shown.length ? `<p class="mut">${cols.length - shown.length} more processes not shown</p>` : '') +
    '<p class="mut">Time within the selection (calls cut at its edges), per rank summed over its threads; % of the selection.</p></section>';
  $('#tl-range').innerHTML = h;
  /* the call's colour beside its name (no inline style: the page's CSP) */
  for (const sw of document.querySelectorAll('#tl-range .sw'))
    sw.style.background = typeColor(Number(sw.dataset.type), Number(sw.dataset.cat));
  $('#tl-zoomsel').addEventListener('click', () => {
    st.t0 = st.sel.t0; st.t1 = Math.max(st.sel.t1, st.sel.t0 + 1000); st.refetch();
  });
  $('#tl-clearsel').addEventListener('click', () => {
    st.sel = null; $('#tl-range').innerHTML = ''; keepAddress(st); drawTimeline(st);
  });
}

/* ---- search by call name ------------------------------------------------------ */

async function findNext(st, fromStart) {
  const q = $('#tl-q').value.trim().replace(/[^A-Za-z0-9_]/g, '');
  const out = $('#tl-found');
  if (!q) { out.textContent = ''; return; }
  const after = !fromStart && st.found ? `&after=${st.found.start}&after_i=${st.found.i}` : '';
  let d = await api(`${st.base}/find?q=${encodeURIComponent(q)}${after}`);
  if (d.next === null && after && d.matches) {
    st.nfound = 0;
    d = await api(`${st.base}/find?q=${encodeURIComponent(q)}`);	/* past the last: from the start */
  }
  if (st.gen !== pageGen) return;
  out.dataset.matches = d.matches;
  const names = Object.values(d.names);
  if (!d.next) {
    st.found = null;
    out.dataset.i = '';
    out.textContent = `no call matches "${q}"`;
    return;
  }
  st.found = d.next; st.nfound++;
  out.dataset.i = d.next.i; out.dataset.start = d.next.start; out.dataset.lane = d.next.lane;
  out.textContent = `${st.nfound} of ${d.matches} (${names.slice(0, 4).join(', ')}${names.length > 4 ? '…' : ''})`;
  /* the call centred, a window ten times its length (at least 20 µs, at
   * most the window shown), its group unfolded, its details kept */
  const n = d.next, dur = Math.max(1, n.end - n.start);
  const span = Math.min(Math.max(10 * dur, 20000), Math.max(st.t1 - st.t0, 20000));
  const c = (n.start + n.end) / 2;
  st.t0 = Math.max(st.tmin, c - span / 2); st.t1 = Math.min(st.tmax, st.t0 + span);
  const l = st.data.lanes[n.lane];
  if (l) {
    st.open['p' + l.stream + ':' + l.pid] = true;
    if (l.rank < 0 && LAUNCHER.test(l.exe)) st.open.launch = true;
  }
  st.pinned = {i: n.i};
  keepAddress(st);
  await fetchWindow(st);
  const ln = st.data.lanes[n.lane];
  await showEvent(st, n.i, ln ? laneWho(ln) : '');
}
