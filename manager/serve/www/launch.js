/* tapestry serve: the launch view (a job description, the form that edits
 * it into a new description, the plan of what would run) and a launch
 * followed (#/run/ID). Uses app.js's helpers ($, api, until, esc, treeLoop). */
'use strict';

const SENSORS = ['libc', 'mpi', 'mem'];

async function launchPage(sel, q) {
  const gen = pageGen;
  const d = await api('/api/descriptions');
  if (gen !== pageGen) return;
  main().innerHTML = '<h1>Launch</h1><div class="cols"><section class="desc-list" id="descs"></section>' +
    '<div id="desc"><section class="mut">Pick a job description.</section></div></div>';
  d.descriptions.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  let h = d.descriptions.map(x => `<a href="#/launch/${encodeURIComponent(x.name)}" class="${x.name === sel ? 'sel' : ''}">${esc(x.name)}</a>`).join('');
  if (!d.descriptions.length) h = '<p class="mut">no *.xml here</p>';
  if (d.upload) h += '<h2>Upload</h2><input type="file" id="up" accept=".xml"><button id="up-go">upload</button>';
  $('#descs').innerHTML = h;
  if (d.upload) $('#up-go').addEventListener('click', async () => {
    const f = $('#up').files[0];
    if (!f) return;
    await api('/api/descriptions?name=' + encodeURIComponent(f.name), {method: 'POST', body: await f.text()});
    location.hash = '#/launch/' + encodeURIComponent(f.name);
  });
  if (!sel) return;
  const base = '/api/descriptions/' + encodeURIComponent(sel);
  const planned = api(base + '/plan', {method: 'POST'});	/* runs while the rest loads */
  planned.catch(() => {});	/* awaited below, unless the page moved on */
  const text = await api(base, {text: true});
  const form = await getJson(base + '/form');
  if (gen !== pageGen) return;
  const from = q && q.get('from');
  $('#desc').innerHTML = `<section><h2>${esc(sel)}</h2>` +
    (from ? `<p class="ok" id="saved-from">Saved from ${esc(from)} as a new description: the plan below is this one's.</p>` : '') +
    '<div id="form"></div>' +
    `<details><summary>the description as written</summary><pre id="desc-text">${esc(text)}</pre></details>` +
    `<p><button class="primary" id="go" disabled>Launch ${esc(sel)}</button> <span id="plan-state" class="mut">planning…</span></p></section>` +
    '<section id="plan"></section>';
  renderForm(base, sel, form);
  $('#go').addEventListener('click', async () => {
    $('#go').disabled = true;
    const r = await api(base + '/launch', {method: 'POST'});
    location.hash = '#/run/' + r.pending.id;
  });
  await planned;
  const p = await until(base + '/plan', gen);
  if (!p || gen !== pageGen) return;
  $('#plan-state').textContent = p.exit === 0 ? 'the plan is valid' : 'the description is invalid (tapestry plan exit ' + p.exit + ')';
  $('#plan-state').className = p.exit === 0 ? 'ok' : 'err';
  $('#plan-state').dataset.exit = p.exit;
  let ph = '<h2>tapestry plan</h2>' + (p.output ? `<pre id="plan-out">${esc(p.output)}</pre>` : '<p class="mut">no message</p>');
  for (const [f, c] of Object.entries(p.files)) ph += `<h2>${esc(f)}</h2><pre data-plan-file="${esc(f)}">${esc(c)}</pre>`;
  $('#plan').innerHTML = ph;
  $('#go').disabled = p.exit !== 0 || d.launch === false;
  if (d.launch === false) $('#plan-state').textContent += ' (launches are off: tapestry serve runs with --no-token)';
}

/* GET path: {status, body} whatever the status (the form's errors are JSON
 * naming their field) */
async function getJson(path, init) {
  const r = await fetch(path, Object.assign({credentials: 'same-origin'}, init || {}));
  let body;
  try { body = await r.json(); } catch (e) { body = {error: path + ': HTTP ' + r.status}; }
  return {status: r.status, body};
}

function hostRow(hst, known) {
  return `<tr data-host="${esc(hst.name)}"><td><input class="h-name" value="${esc(hst.name)}"${known ? ' readonly' : ' placeholder="name"'}></td>` +
    `<td><input class="h-addr" value="${esc(hst.address || '')}" placeholder="${known ? esc(hst.name) : 'address'}"></td>` +
    `<td><input class="h-slots" type="number" min="0" max="65536" value="${esc(hst.slots)}"></td>` +
    `<td class="mut">${known ? (hst.collector ? 'has a collector' : 'no collector') : 'new: a node collector is added'}</td></tr>`;
}

function renderForm(base, sel, res) {
  const box = $('#form');
  if (res.status !== 200) {
    box.innerHTML = `<p class="err field-err" data-field="${esc(res.body.field || '')}" id="form-error">${esc(res.body.error)}</p>` +
      '<p class="mut">The form edits a well-formed description: fix the file, or pick another.</p>';
    return;
  }
  const f = res.body;
  let h = '<form id="lf" class="launch-form" novalidate><table class="form">' +
    `<tr><th>program</th><td><code>${esc(f.executable)}</code> <span class="mut">MPI: ${esc(f.mpi || 'none')}` +
    `${f.mode ? ', mode ' + esc(f.mode) : ''}</span></td></tr>` +
    `<tr><th><label for="f-np">processes</label></th><td><input id="f-np" type="number" min="1" max="65536" value="${esc(f.processes)}">` +
    ' <span class="field-err err" data-field="processes"></span></td></tr>' +
    `<tr><th><label for="f-args">arguments</label><div class="mut">one per line</div></th><td>` +
    `<textarea id="f-args" rows="3" cols="50">${esc(f.arguments.join('\n'))}</textarea>` +
    ' <span class="field-err err" data-field="arguments"></span></td></tr><tr><th>hosts</th><td>';
  if (f.hosts_from)
    h += `<span class="mut">the nodes of the ${esc(f.hosts_from)} allocation (not edited here)</span>`;
  else
    h += '<table id="f-hosts"><tr><th>name</th><th>address</th><th>slots</th><th></th></tr>' +
      f.hosts.map(x => hostRow(x, true)).join('') + '</table><button type="button" id="f-addhost">add a host</button>';
  h += ' <span class="field-err err" data-field="host"></span></td></tr>' +
    '<tr><th>sensors</th><td>' + SENSORS.map(s =>
      `<label><input type="checkbox" class="f-sensor" value="${s}"${f.sensors.includes(s) ? ' checked' : ''}> ${s}</label> `).join('') +
    '<span class="field-err err" data-field="sensors"></span></td></tr>' +
    `<tr><th><label for="f-as">save as</label></th><td><input id="f-as" placeholder="${esc(sel.replace(/(-edit-\d+)?\.xml$/, ''))}-edit-N.xml">` +
    ' <span class="field-err err" data-field="as"></span></td></tr></table>' +
    `<p><button type="submit" id="f-save"${f.editable ? '' : ' disabled'}>Save as a new description and plan it</button> ` +
    `<span class="mut">${f.editable ? esc(sel) + ' itself is never changed' : esc(f.why)}</span></p>` +
    '<p class="err field-err" data-field="" id="form-error"></p></form>';
  box.innerHTML = h;
  if (!f.hosts_from)
    $('#f-addhost').addEventListener('click', () =>
      $('#f-hosts tbody').insertAdjacentHTML('beforeend', hostRow({name: '', address: '', slots: 1}, false)));
  $('#lf').addEventListener('submit', ev => { ev.preventDefault(); saveForm(base, sel).catch(e => showError(e.message)); });
}

function formError(field, msg) {
  const e = document.querySelector(`.field-err[data-field="${field || ''}"]`) || $('#form-error');
  e.textContent = msg;
  document.body.dataset.formError = field || 'form';
}

async function saveForm(base, sel) {
  for (const e of document.querySelectorAll('.field-err')) e.textContent = '';
  delete document.body.dataset.formError;
  const p = new URLSearchParams();
  p.append('processes', $('#f-np').value.trim());
  p.append('arguments', '1');
  const lines = $('#f-args').value.split('\n');
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  lines.forEach(a => p.append('arg', a));
  for (const tr of document.querySelectorAll('#f-hosts tr[data-host]')) {
    const name = $('.h-name', tr).value.trim();
    if (!name && !tr.dataset.host) continue;	/* an added row left empty */
    p.append('host', `${name},${$('.h-addr', tr).value.trim()},${$('.h-slots', tr).value.trim()}`);
  }
  p.append('sensors', '1');
  for (const c of document.querySelectorAll('.f-sensor')) if (c.checked) p.append('sensor', c.value);
  const as = $('#f-as').value.trim();
  if (as) p.append('as', as);
  $('#f-save').disabled = true;
  const r = await getJson(base + '/edit', {method: 'POST', body: p.toString(),
    headers: {'X-Tapestry': '1', 'Content-Type': 'application/x-www-form-urlencoded'}});
  $('#f-save').disabled = false;
  if (r.status !== 201) { formError(r.body.field, r.body.error); return; }
  location.hash = '#/launch/' + encodeURIComponent(r.body.name) + '?from=' + encodeURIComponent(sel);
}

async function runPage(id) {
  const gen = pageGen;
  main().innerHTML = `<h1>Launch ${esc(id)}</h1><section><span id="run-state">starting…</span>` +
    '<p id="run-links"><a href="#/tree" id="run-tree-link">the live tree</a> (every tree this server follows)</p></section>' +
    '<h2>Collector tree</h2><div id="run-tree" class="tree"><p class="mut">waiting for the root receiver…</p></div>' +
    '<h2>Output</h2><pre id="run-out"></pre>';
  let from = 0, treeOn = false;
  for (;;) {
    const r = await api('/api/launches/' + encodeURIComponent(id) + '?from=' + from);
    if (gen !== pageGen) return;
    const out = $('#run-out');
    out.textContent += r.output;
    out.scrollTop = out.scrollHeight;
    from = r.next;
    if (r.root && !treeOn) { treeOn = true; treeLoop(gen, $('#run-tree'), r.root).catch(e => showError(e.message)); }
    const st = $('#run-state');
    const job = `<a href="#/job/${encodeURIComponent(r.job)}" id="run-job">${esc(r.job)}</a>`;
    st.dataset.state = r.state;
    st.innerHTML = r.state === 'running' ? `job ${job}: running` + (r.root ? `, its root receiver at ${esc(r.root)}` : '') :
      `job ${job}: finished, exit ${r.exit}` + (r.exit === 0 ? ' — its page opens' : '');
    if (r.state === 'done') {
      st.dataset.exit = r.exit;
      $('#run-links').innerHTML = `<a href="#/job/${encodeURIComponent(r.job)}" id="run-job-page">the job's page</a>`;
      if (r.exit === 0) { await sleep(1500); if (gen === pageGen) location.hash = '#/job/' + encodeURIComponent(r.job); }
      return;
    }
    await sleep(700);
  }
}
