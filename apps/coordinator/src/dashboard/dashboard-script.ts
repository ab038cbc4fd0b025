// The dashboard's browser script, inlined into the page (no build step, no external assets). It
// takes the token from `?token=` (then drops it from the address bar) or from this tab's
// sessionStorage, sends it as `Authorization: Bearer` on every fetch (frame images too: they are
// fetched, then shown from blob: URLs), and re-renders every 2 s. Every value from the API is
// written with textContent, never as HTML.
export const DASHBOARD_SCRIPT = String.raw`
(function () {
  'use strict';
  var KEY = 'flowfleet.token';
  var REFRESH_MS = 2000;
  var html = document.documentElement;
  // The model cards' components (the server fills it in), shown before any worker reports them.
  var KNOWN_COMPONENTS = (html.getAttribute('data-components') || '').split(' ').filter(Boolean);

  // The server checked any ?token= already: data-auth says how that went.
  var serverAuth = html.getAttribute('data-auth');
  var params = new URLSearchParams(location.search);
  var presented = params.get('token');
  if (presented) {
    if (serverAuth === 'ok') sessionStorage.setItem(KEY, presented);
    else sessionStorage.removeItem(KEY);
    params.delete('token');
    var rest = params.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : '') + location.hash);
  }

  function token() { return sessionStorage.getItem(KEY); }
  function $(id) { return document.getElementById(id); }

  function showLogin(message) {
    sessionStorage.removeItem(KEY);
    if (message) $('login-error').textContent = message;
    html.setAttribute('data-view', 'login');
  }

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === undefined || value === null || value === false) return;
      if (name === 'text') node.textContent = String(value);
      else if (name === 'bg') node.style.background = value;
      else node.setAttribute(name, String(value));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }
  function table(headers, rows, className) {
    return h('table', { class: className }, [
      h('thead', {}, [h('tr', {}, headers.map(function (cell) {
        return typeof cell === 'string' ? h('th', { text: cell }) : cell;
      }))]),
      h('tbody', {}, rows),
    ]);
  }
  function badge(text, kind) { return h('span', { class: 'badge ' + (kind || text), text: text }); }
  function empty(text) { return h('p', { class: 'muted', text: text }); }
  function fill(id, node) { var target = $(id); target.replaceChildren(node); }
  function age(iso, now) {
    if (!iso) return '–';
    var s = Math.max(0, (now - Date.parse(iso)) / 1000);
    if (s < 60) return s.toFixed(1) + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    return Math.floor(s / 3600) + ' h';
  }
  function bar(done, total, label) {
    var pct = total > 0 ? Math.min(100, Math.round((100 * done) / total)) : 0;
    var fillNode = h('i', {});
    fillNode.style.width = pct + '%';
    return h('span', { class: 'bar', title: label }, [fillNode, h('em', { text: label })]);
  }

  async function api(path) {
    var response = await fetch(path, {
      headers: { authorization: 'Bearer ' + token() },
      cache: 'no-store',
    });
    if (response.status === 401 || response.status === 403) {
      var error = new Error('token');
      error.auth = response.status;
      throw error;
    }
    if (!response.ok) throw new Error(path + ' answered HTTP ' + response.status);
    return response.json();
  }

  function renderCards(fleet, lanes, rollouts) {
    var backlog = 0;
    lanes.lanes.forEach(function (lane) { backlog += lane.backlog; });
    var active = rollouts.rollouts.filter(function (r) { return r.status === 'active'; }).length;
    var cards = [
      ['live workers', fleet.live, 'live'], ['dead workers', fleet.dead, 'dead'],
      ['lanes', lanes.lanes.length, 'lanes'], ['backlog', backlog, 'backlog'],
      ['running rollouts', active, 'running'],
    ];
    $('cards').replaceChildren.apply($('cards'), cards.map(function (card) {
      return h('div', { class: 'card', 'data-card': card[2] }, [
        h('b', { text: card[1] }), h('span', { text: card[0] }),
      ]);
    }));
  }

  function cellKey(cell) {
    return [cell.registry, cell.name, cell.device, cell.arch || '', cell.variant].join('|');
  }
  function matrixTable(cells, registry, live) {
    var mine = cells.filter(function (c) { return c.registry === registry; });
    if (mine.length === 0) return empty('No live worker declares any ' + registry + '.');
    var columns = [];
    var rows = [];
    var byKey = {};
    mine.forEach(function (c) {
      var column = [c.device, c.arch || '', c.variant].join('|');
      if (columns.indexOf(column) < 0) columns.push(column);
      if (rows.indexOf(c.name) < 0) rows.push(c.name);
      byKey[c.name + '#' + column] = c;
    });
    columns.sort();
    rows.sort();
    var headers = [registry === 'kernel' ? 'op' : 'component'].concat(columns.map(function (col) {
      var parts = col.split('|');
      var label = parts[0] + (parts[1] ? ' · ' + parts[1] : '') + (parts[2] !== 'default' ? ' · ' + parts[2] : '');
      return h('th', { class: 'num', text: label });
    }));
    return table(headers, rows.map(function (name) {
      return h('tr', {}, [h('td', { class: 'mono', text: name })].concat(columns.map(function (col) {
        var cell = byKey[name + '#' + col];
        if (!cell) return h('td', { class: 'cell absent', title: 'not declared by any live worker', text: '–' });
        var n = cell.liveWorkers;
        var alpha = live > 0 ? 0.2 + 0.6 * (n / live) : 0;
        return h('td', {
          class: 'cell' + (n === 0 ? ' zero' : ''),
          'data-cell': cellKey(cell),
          title: n + ' of ' + live + ' live workers have it available',
          bg: n === 0 ? undefined : 'rgba(22, 163, 74, ' + alpha.toFixed(2) + ')',
          text: n,
        });
      })));
    }), 'matrix');
  }
  function renderMatrix(matrix) {
    fill('matrix', h('div', {}, [
      h('h3', { text: 'kernels (op × device · arch · variant)' }),
      matrixTable(matrix.cells, 'kernel', matrix.liveWorkers),
      h('h3', { text: 'components (kind × device · variant)' }),
      matrixTable(matrix.cells, 'component', matrix.liveWorkers),
      h('p', { class: 'muted', text: 'Darker green: more of the live workers have it. Grey 0: declared, but available on no live worker. Hatched: no live worker declares it.' }),
    ]));
  }

  function feature(platform, name) {
    var prefix = name + ':';
    var found = (platform.features || []).filter(function (f) { return f.indexOf(prefix) === 0; })[0];
    return found === undefined ? undefined : found.slice(prefix.length);
  }
  // A webgpu worker on a software adapter (lavapipe, SwiftShader) emulates its GPU on the CPU.
  function isEmulated(platform) { return platform.device === 'webgpu' && platform.arch === 'software'; }
  function platformCell(w) {
    var p = w.platform;
    var adapter = feature(p, 'adapter.description');
    return h('td', { 'data-platform': w.workerId, title: adapter ? 'adapter: ' + adapter : undefined }, [
      document.createTextNode(p.device + ' · ' + p.arch + ' '),
    ].concat(isEmulated(p) ? [badge('emulated')] : []));
  }
  function deviceClasses(workers) {
    var counts = {};
    workers.filter(function (w) { return w.alive; }).forEach(function (w) {
      var cls = w.platform.device + '/' + w.platform.arch;
      counts[cls] = (counts[cls] || 0) + 1;
    });
    var names = Object.keys(counts).sort();
    return h('p', { class: 'classes' }, [h('span', { class: 'muted', text: 'live workers by device class: ' })].concat(
      names.map(function (cls) {
        return h('span', { class: 'chip', 'data-device-class': cls, text: cls + ' × ' + counts[cls] });
      })));
  }
  function renderWorkers(fleet, now) {
    if (fleet.workers.length === 0) return fill('workers', empty('No worker has registered.'));
    fill('workers', h('div', {}, [deviceClasses(fleet.workers), table(
      ['worker', 'state', 'host', 'platform', 'version', 'weights', 'load', h('th', { class: 'num', text: 'heartbeat age' }), 'lanes', 'kernels', 'components'],
      fleet.workers.map(function (w) {
        var weights = Object.keys(w.weights).sort().map(function (c) { return c + ' v' + w.weights[c]; }).join(', ');
        var beat = age(w.lastHeartbeatAt, now);
        var stale = w.lastHeartbeatAt && now - Date.parse(w.lastHeartbeatAt) > 10000;
        return h('tr', { 'data-worker': w.workerId }, [
          h('td', { class: 'mono', text: w.workerId }),
          h('td', {}, [badge(w.alive ? 'alive' : 'dead')]),
          h('td', { text: w.host + ' (' + w.pid + ')' }),
          platformCell(w),
          h('td', { text: w.version }),
          h('td', { 'data-weights': w.workerId, text: weights || '–' }),
          h('td', {}, [bar(w.activeJobs, w.concurrency, w.activeJobs + ' / ' + w.concurrency)]),
          h('td', { class: 'num' + (stale ? ' stale' : ''), 'data-heartbeat': w.workerId, text: w.alive ? beat : 'lapsed' }),
          h('td', { class: 'num', text: w.lanes.length }),
          h('td', { class: 'num', text: w.kernels.available + ' / ' + w.kernels.declared }),
          h('td', { class: 'num', text: w.components.available + ' / ' + w.components.declared }),
        ]);
      }))]));
  }

  function requirementsText(r) {
    var arch = Object.keys(r.minArch).map(function (d) { return d + '≥' + r.minArch[d]; });
    return r.model + ' · ' + r.ops.join('+') + ' · ' + r.devices.join('/') + (arch.length ? ' (' + arch.join(', ') + ')' : '') + (r.adapter ? ' · ' + r.adapter + ' adapters only' : '') + ' · ' + r.dtype;
  }
  function renderLanes(lanes) {
    if (lanes.lanes.length === 0) return fill('lanes', empty('No lane yet: lanes appear with the first rollout of each requirement set.'));
    fill('lanes', table(
      ['lane', 'requirements', h('th', { class: 'num', text: 'backlog' }), h('th', { class: 'num', text: 'active' }), h('th', { class: 'num', text: 'done' }), h('th', { class: 'num', text: 'failed' }), h('th', { class: 'num', text: 'workers' }), h('th', { class: 'num', text: 'capacity' })],
      lanes.lanes.map(function (l) {
        return h('tr', { 'data-lane': l.lane }, [
          h('td', { class: 'mono', text: l.lane }),
          h('td', { text: requirementsText(l.requirements) }),
          h('td', { class: 'num', 'data-backlog': l.lane, text: l.backlog }),
          h('td', { class: 'num', text: l.counts.active }),
          h('td', { class: 'num', text: l.counts.completed }),
          h('td', { class: 'num', text: l.counts.failed }),
          h('td', { class: 'num', text: l.eligibleWorkers }),
          h('td', { class: 'num', text: l.capacity }),
        ]);
      })));
  }

  function renderWeights(reports, fleet) {
    var live = fleet.workers.filter(function (w) { return w.alive; }).map(function (w) { return w.workerId; });
    fill('weights', h('div', {}, reports.map(function (report) {
      var versions = Object.keys(report.versions).map(Number).sort(function (a, b) { return b - a; });
      // current: the newest version a live worker holds; latest: the newest synced, with its status.
      var latest = report.latest;
      var summary = latest === null ? 'never synced'
        : 'current ' + (report.current === null ? '–' : 'v' + report.current)
          + (latest.version === report.current ? '' : ' · latest v' + latest.version + ' ' + latest.status);
      var title = h('h3', { 'data-weight-current': report.component, text: report.component + ' — ' + summary });
      if (versions.length === 0) return h('div', {}, [title]);
      var workers = live.slice();
      versions.forEach(function (v) {
        Object.keys(report.versions[v].acks).forEach(function (id) { if (workers.indexOf(id) < 0) workers.push(id); });
      });
      workers.sort();
      return h('div', {}, [title, table(
        ['version', 'sha256', 'status', 'synced'].concat(workers.map(function (id) { return h('th', { class: 'mono', text: id }); })),
        versions.map(function (v) {
          var version = report.versions[v];
          return h('tr', { 'data-version': report.component + '|' + v }, [
            h('td', { text: 'v' + v }),
            h('td', { class: 'mono', title: version.sha256, text: version.sha256.slice(0, 12) }),
            h('td', {}, [badge(version.status)]),
            h('td', { text: age(version.syncedAt, Date.now()) + ' ago' }),
          ].concat(workers.map(function (id) {
            var ack = version.acks[id];
            var state = ack || (live.indexOf(id) >= 0 && version.status !== 'superseded' ? 'pending' : '–');
            var why = version.reasons[id] === undefined ? undefined : (version.codes[id] ? version.codes[id] + ': ' : '') + version.reasons[id];
            return h('td', { 'data-ack': report.component + '|' + v + '|' + id, title: why }, [state === '–' ? '–' : badge(state)]);
          })));
        })), ]);
    })));
  }

  // Frames: each is fetched once, when its image first scrolls into view, with the bearer token
  // (never in a URL), and kept as an object URL so the 2 s re-render does not fetch it again.
  var STRIP_FRAMES = 12;
  var FRAME_CACHE = 240;
  var frameUrls = new Map();
  var expanded = {};
  function framePath(id, sample, frame) {
    return '/v1/rollouts/' + encodeURIComponent(id) + '/frames/' + sample + '/' + frame;
  }
  function loadFrame(path) {
    var known = frameUrls.get(path);
    if (known) return known;
    var loading = fetch(path, { headers: { authorization: 'Bearer ' + token() } }).then(async function (response) {
      if (!response.ok) {
        var body = await response.json().catch(function () { return {}; });
        throw new Error(body.code || 'HTTP ' + response.status);
      }
      return URL.createObjectURL(await response.blob());
    });
    // A refusal is kept too: a stored result never changes, so asking again would not help.
    frameUrls.set(path, loading);
    // Oldest first out; an image already shown keeps its pixels.
    while (frameUrls.size > FRAME_CACHE) {
      var oldest = frameUrls.keys().next().value;
      frameUrls.get(oldest).then(URL.revokeObjectURL, function () {});
      frameUrls.delete(oldest);
    }
    return loading;
  }
  function showFrame(img) {
    loadFrame(img.getAttribute('data-src')).then(function (url) {
      img.src = url;
    }, function (error) {
      img.replaceWith(h('span', { class: 'muted frame-missing', title: error.message, text: '–' }));
    });
  }
  var frameObserver = typeof IntersectionObserver === 'function' ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (!entry.isIntersecting) return;
      frameObserver.unobserve(entry.target);
      showFrame(entry.target);
    });
  }, { rootMargin: '200px' }) : null;
  function frameImage(id, sample, frame, frames, className) {
    var path = framePath(id, sample, frame);
    var img = h('img', {
      class: className, alt: 'sample ' + sample + ', frame ' + frame, width: frames.width, height: frames.height,
      'data-frame': id + '|' + sample + '|' + frame, 'data-src': path,
    });
    if (frameUrls.has(path) || !frameObserver) showFrame(img);
    else frameObserver.observe(img);
    return img;
  }
  // At most STRIP_FRAMES of the returned frames, evenly spaced, first and last included.
  function stripIndices(indices) {
    if (indices.length <= STRIP_FRAMES) return indices;
    var picked = [];
    for (var i = 0; i < STRIP_FRAMES; i++) {
      var at = indices[Math.round((i * (indices.length - 1)) / (STRIP_FRAMES - 1))];
      if (picked.indexOf(at) < 0) picked.push(at);
    }
    return picked;
  }
  function thumbnailCell(r) {
    if (!r.frames) return h('td', { class: 'muted', text: '–' });
    var open = expanded[r.id] !== undefined;
    var button = h('button', {
      class: 'thumb', type: 'button', 'aria-expanded': open ? 'true' : 'false',
      title: 'frame ' + r.frames.indices[0] + ' of sample 0 (' + r.frames.indices.length + ' returned) — click for the strip',
      'data-thumb': r.id,
    }, [frameImage(r.id, 0, r.frames.indices[0], r.frames, 'thumb')]);
    button.addEventListener('click', function () {
      if (open) delete expanded[r.id];
      else expanded[r.id] = 0;
      renderRollouts(lastRollouts, Date.now());
    });
    return h('td', {}, [button]);
  }
  function stripRow(r, columns) {
    var sample = expanded[r.id];
    var group = r.groupSize || 1;
    var samples = [];
    for (var g = 0; g < Math.min(group, STRIP_FRAMES); g++) {
      (function (g) {
        var pick = h('button', { type: 'button', class: 'chip' + (g === sample ? ' picked' : ''), 'data-strip-sample': r.id + '|' + g, text: 'sample ' + g });
        pick.addEventListener('click', function () {
          expanded[r.id] = g;
          renderRollouts(lastRollouts, Date.now());
        });
        samples.push(pick);
      })(g);
    }
    var frames = stripIndices(r.frames.indices).map(function (frame) {
      return h('figure', {}, [frameImage(r.id, sample, frame, r.frames, 'strip'), h('figcaption', { text: 'frame ' + frame })]);
    });
    return h('tr', { class: 'strip-row', 'data-strip': r.id }, [h('td', { colspan: columns }, [
      h('div', { class: 'samples' }, group > 1 ? samples : []),
      h('div', { class: 'strip' }, frames),
      h('p', { class: 'muted', text: r.frames.indices.length + ' frames returned per sample, ' + r.frames.width + '×' + r.frames.height + (r.frames.indices.length > STRIP_FRAMES ? '; ' + frames.length + ' shown' : '') }),
    ])]);
  }

  var lastRollouts = { rollouts: [] };
  function renderRollouts(list, now) {
    lastRollouts = list;
    // The images of the last render are gone: stop watching them.
    if (frameObserver) frameObserver.disconnect();
    if (list.rollouts.length === 0) return fill('rollouts', empty('No rollouts yet.'));
    var headers = ['id', 'status', 'frame', 'progress', 'model', 'prompt', h('th', { class: 'num', text: 'group' }), 'worker', h('th', { class: 'num', text: 'attempts' }), 'lane', h('th', { class: 'num', text: 'age' })];
    var rows = [];
    list.rollouts.forEach(function (r) {
      rows.push(h('tr', { 'data-rollout': r.id }, [
        h('td', { class: 'mono', title: r.id, text: r.id.slice(r.id.lastIndexOf('.') + 1).slice(0, 8) }),
        h('td', { title: r.error ? r.error.code + ': ' + r.error.message : undefined }, [badge(r.status)]),
        thumbnailCell(r),
        h('td', {}, [bar(r.progress.step, r.progress.steps, r.progress.step + ' / ' + r.progress.steps)]),
        // A job whose stored payload is unreadable is listed without its request.
        h('td', { text: r.model || '–' }),
        h('td', { title: r.prompt, text: !r.prompt ? '–' : r.prompt.length > 40 ? r.prompt.slice(0, 40) + '…' : r.prompt }),
        h('td', { class: 'num', text: r.groupSize || '–' }),
        h('td', { class: 'mono', text: r.worker || '–' }),
        h('td', { class: 'num', text: r.attempts }),
        h('td', { class: 'mono', text: r.lane }),
        h('td', { class: 'num', text: age(r.createdAt, now) }),
      ]));
      if (r.frames && expanded[r.id] !== undefined) rows.push(stripRow(r, headers.length));
    });
    fill('rollouts', table(headers, rows));
  }

  async function refresh() {
    var results = await Promise.all([api('/v1/fleet'), api('/v1/fleet/matrix'), api('/v1/lanes'), api('/v1/rollouts?limit=20')]);
    var fleet = results[0];
    var components = KNOWN_COMPONENTS.slice();
    fleet.workers.forEach(function (w) {
      Object.keys(w.weights).forEach(function (c) { if (components.indexOf(c) < 0) components.push(c); });
    });
    var weights = await Promise.all(components.map(function (c) { return api('/v1/weights/' + encodeURIComponent(c) + '?limit=5'); }));
    var now = Date.now();
    renderCards(fleet, results[2], results[3]);
    renderMatrix(results[1]);
    renderWorkers(fleet, now);
    renderLanes(results[2]);
    renderWeights(weights, fleet);
    renderRollouts(results[3], now);
    $('status').textContent = 'updated ' + new Date(now).toLocaleTimeString() + ' · refreshes every 2 s';
    $('banner').style.display = 'none';
  }

  async function tick() {
    try {
      await refresh();
    } catch (error) {
      if (error.auth) {
        showLogin(error.auth === 403 ? 'That token does not grant the viewer role.' : 'That token was not accepted.');
        return;
      }
      $('banner').textContent = 'Refresh failed: ' + error.message + ' (retrying)';
      $('banner').style.display = 'block';
    }
    setTimeout(tick, REFRESH_MS);
  }

  if (!token()) {
    showLogin('');
    return;
  }
  html.setAttribute('data-view', 'dashboard');
  tick();
})();
`;
