'use strict';
(function () {
  function $(id) { return document.getElementById(id); }
  function showError(text) { var e = $('error'); e.textContent = text; e.hidden = false; }
  function human(n) {
    var u = ['bytes', 'K', 'M', 'G'], k = 0;
    while (n >= 1024 && k < 3) { n /= 1024; k++; }
    return k ? n.toFixed(1) + u[k] : n + ' bytes';
  }
  var form = $('upload');
  if (form) {
    var drop = $('drop'), input = $('trace');
    drop.addEventListener('dragover', function (e) { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', function () { drop.classList.remove('over'); });
    drop.addEventListener('drop', function (e) {
      e.preventDefault(); drop.classList.remove('over');
      if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; $('chosen').textContent = input.files[0].name; }
    });
    input.addEventListener('change', function () {
      $('chosen').textContent = input.files.length ? input.files[0].name : '';
    });
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      if (!input.files.length) { showError('Choose a trace first.'); return; }
      var size = input.files[0].size, ds = form.dataset;
      if (size > Number(ds.maxUpload) || size > Number(ds.keepSize)) {
        var up = size > Number(ds.maxUpload);
        showError(input.files[0].name + ': too large for this server\u2019s page: the file is ' + human(size) +
                  (up ? ' and uploads are at most ' + ds.maxUploadText + ' (--max-upload)'
                      : ' and its store keeps ' + ds.keepSizeText + ' in all (--keep-size); the API (POST '
                        + '/api/convert) converts it without keeping it'));
        return;
      }
      $('error').hidden = true;
      var bar = $('progress'), state = $('state'), go = $('go');
      bar.hidden = false; bar.value = 0; go.disabled = true; state.textContent = 'Uploading\u2026';
      var xhr = new XMLHttpRequest();
      xhr.open('POST', '/upload');
      xhr.setRequestHeader('Accept', 'application/json');
      xhr.upload.addEventListener('progress', function (p) {
        if (p.lengthComputable) bar.value = p.loaded / p.total;
      });
      xhr.upload.addEventListener('load', function () { bar.value = 1; state.textContent = 'Converting\u2026'; });
      xhr.addEventListener('load', function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
        if (xhr.status === 200 && body && body.result) { state.textContent = 'Done.'; location.assign(body.result); return; }
        go.disabled = false; bar.hidden = true; state.textContent = '';
        showError(body && body.error ? body.error : 'HTTP ' + xhr.status + ' ' + xhr.statusText);
      });
      xhr.addEventListener('error', function () {
        go.disabled = false; bar.hidden = true; state.textContent = '';
        showError('The upload failed (the connection was closed).');
      });
      xhr.send(new FormData(form));
    });
  }
  var flame = $('flame');
  var tabs = document.querySelectorAll('button.tab');
  var selectForm = $('select');
  if (flame && !selectForm) {
    Array.prototype.forEach.call(tabs, function (t) {
      t.addEventListener('click', function () {
        Array.prototype.forEach.call(tabs, function (o) { o.setAttribute('aria-selected', String(o === t)); });
        flame.src = t.dataset.src;
      });
    });
  }
  if (selectForm) selection(selectForm);

  // The selection (thread, since/until, weight, bottom-up, ignore idle, the methods' focus, ignore
  // and callers): the command's options,
  // added to the address of every view and download of the result, so the server converts its
  // kept upload with them when one is looked at. Which output takes which option comes from
  // /api/formats (bottom-up only where a writer lists "reverse"). Thread names from the trace
  // are shown as text nodes only: a name is never markup.
  function selection(form) {
    var DURATION = /^(0|\d+(\.\d+)?(s|ms|us|ns))$/;
    var UNIT = { s: 1e9, ms: 1e6, us: 1e3, ns: 1 };
    var info = { duration_ns: 0, records: 0, threads: [] };
    var core = {}, allowed = null, takes = {};
    var weight = $('weight'), reverse = $('reverse'), idle = $('ignore-idle');
    // the methods' fields: focus, ignore, callers (the query fields of the same names)
    var methods = ['focus', 'ignore', 'callers'].map(function (k) { return { key: k, el: $(k) }; })
      .filter(function (m) { return m.el; });
    var since = $('since'), until = $('until'), list = $('thread-list');
    var views = [], frames = [];
    function each(nodes, fn) { Array.prototype.forEach.call(nodes, fn); }
    each(document.querySelectorAll('#downloads a[data-writer]'), function (a) {
      views.push({ el: a, attr: 'href', base: a.getAttribute('href'), writer: a.dataset.writer });
    });
    var pf = $('perfetto');
    if (pf) views.push({ el: pf, attr: 'data-src', base: pf.dataset.src, writer: 'perfetto' });
    each(tabs, function (t) {
      if (t.dataset.src) views.push({ el: t, attr: 'data-src', base: t.dataset.src, writer: 'flamegraph' });
    });
    var report = $('report-html');
    if (report) frames.push({ el: report, base: report.getAttribute('src'), writer: 'report' });

    function showError(text) { var e = $('select-error'); e.textContent = text; e.hidden = !text; }
    function nanos(text) {
      var m = /^(\d+(?:\.\d+)?)(s|ms|us|ns)?$/.exec(text);
      return m ? Number(m[1]) * (m[2] ? UNIT[m[2]] : 0) : NaN;
    }
    function timeText(ns) {
      if (ns >= 1e9) return String(Number((ns / 1e9).toFixed(6))) + ' s';
      if (ns >= 1e6) return String(Number((ns / 1e6).toFixed(3))) + ' ms';
      return String(Number((ns / 1e3).toFixed(3))) + ' \u00b5s';
    }
    // an input's value from a point of the timeline: whole microseconds, as ms
    function brushValue(ns) { return String(Number((Math.round(ns / 1e3) / 1e3).toFixed(3))) + 'ms'; }
    function option(writer, key) {
      if (allowed && !allowed[key]) return false;
      if (writer === 'flamegraph' && key === 'weight') return false; // each flame graph tab has its clock
      return Boolean(core[key] || (takes[writer] && takes[writer][key]));
    }
    function ticked() {
      var all = list.querySelectorAll('input[type=checkbox]'), on = [];
      each(all, function (c) { if (c.checked) on.push(c.value); });
      return on.length === all.length ? [] : on;
    }
    function pairs() {
      var out = ticked().map(function (tid) { return ['thread', tid]; });
      if (since.value.trim()) out.push(['since', since.value.trim()]);
      if (until.value.trim()) out.push(['until', until.value.trim()]);
      if (weight.value !== 'wall') out.push(['weight', weight.value]);
      var callers = methods.some(function (m) { return m.key === 'callers' && m.el.value.trim() && !m.el.disabled; });
      if (reverse.checked && !reverse.disabled && !callers) out.push(['reverse', '1']); // callers is bottom-up already
      if (idle.checked && !idle.disabled) out.push(['ignore-idle', '1']);
      methods.forEach(function (m) { if (m.el.value.trim() && !m.el.disabled) out.push([m.key, m.el.value.trim()]); });
      return out;
    }
    function query(ps, writer) {
      return ps.filter(function (p) { return writer === null || option(writer, p[0]); })
        .map(function (p) { return encodeURIComponent(p[0]) + '=' + encodeURIComponent(p[1]); }).join('&');
    }
    function address(base, writer, ps) {
      var q = query(ps, writer);
      return q ? base + (base.indexOf('?') < 0 ? '?' : '&') + q : base;
    }
    function load(el, url) { if (el.getAttribute('src') !== url) el.src = url; }
    function selectedTab() {
      var sel = null;
      each(tabs, function (t) { if (t.getAttribute('aria-selected') === 'true') sel = t; });
      return sel;
    }
    function check() {
      var a = since.value.trim(), b = until.value.trim();
      if (a && !DURATION.test(a)) return 'since: ' + a + ': a time after the trace\u2019s start with its unit: 1.5s, 250ms, 40us';
      if (b && !DURATION.test(b)) return 'until: ' + b + ': a time after the trace\u2019s start with its unit: 1.5s, 250ms, 40us';
      if (a && b && nanos(a) >= nanos(b)) return 'since must be before until';
      return '';
    }
    function apply() {
      var why = check();
      showError(why);
      if (why) return;
      var ps = pairs();
      views.forEach(function (v) { v.el.setAttribute(v.attr, address(v.base, v.writer, ps)); });
      frames.forEach(function (f) { load(f.el, address(f.base, f.writer, ps)); });
      var tab = selectedTab();
      if (flame && tab) load(flame, tab.dataset.src);
      var q = query(ps, null);
      history.replaceState(null, '', location.pathname + (q ? '?' + q : ''));
      $('select-state').textContent = ps.length ? 'Showing the selection.' : 'Showing the whole trace.';
      drawBrush();
      excerpts(ps);
    }
    // the flame graph tab of a clock, keeping per thread or merged
    function tabFor(clock) {
      var cur = selectedTab(), merged = cur ? cur.dataset.merged : '0', found = null;
      each(tabs, function (t) { if (t.dataset.weight === clock && t.dataset.merged === merged) found = t; });
      return found;
    }
    function selectTab(t) { each(tabs, function (o) { o.setAttribute('aria-selected', String(o === t)); }); }
    each(tabs, function (t) {
      t.addEventListener('click', function () {
        selectTab(t);
        weight.value = t.dataset.weight || 'wall';
        apply();
      });
    });
    weight.addEventListener('change', function () {
      var t = tabFor(weight.value);
      if (t && !t.disabled) selectTab(t);
    });
    form.addEventListener('submit', function (e) { e.preventDefault(); apply(); });
    $('show-all').addEventListener('click', function () {
      each(list.querySelectorAll('input'), function (c) { c.checked = false; });
      since.value = ''; until.value = ''; reverse.checked = false; idle.checked = false;
      methods.forEach(function (m) { m.el.value = ''; });
      weight.value = 'wall';
      var t = tabFor('wall');
      if (t && !t.disabled) selectTab(t);
      apply();
    });

    // the time range as a brush on a timeline of the whole trace
    var timeline = $('timeline'), brush = $('brush'), drag = null;
    function fraction(evt) {
      var r = timeline.getBoundingClientRect();
      return Math.min(1, Math.max(0, (evt.clientX - r.left) / r.width));
    }
    function drawBrush() {
      var d = info.duration_ns, a = nanos(since.value.trim() || '0'), b = until.value.trim() ? nanos(until.value.trim()) : d;
      if (!d || isNaN(a) || isNaN(b) || (a <= 0 && b >= d)) { brush.hidden = true; return; }
      brush.hidden = false;
      brush.style.left = (Math.min(a, d) / d * 100) + '%';
      brush.style.width = (Math.max(0, Math.min(b, d) - Math.min(a, d)) / d * 100) + '%';
    }
    timeline.addEventListener('pointerdown', function (e) {
      if (!info.duration_ns) return;
      drag = fraction(e);
      timeline.setPointerCapture(e.pointerId);
    });
    timeline.addEventListener('pointermove', function (e) {
      if (drag === null) return;
      var x = fraction(e), lo = Math.min(drag, x), hi = Math.max(drag, x);
      since.value = lo > 0 ? brushValue(lo * info.duration_ns) : '';
      until.value = hi < 1 ? brushValue(hi * info.duration_ns) : '';
      drawBrush();
    });
    timeline.addEventListener('pointerup', function () { drag = null; });
    since.addEventListener('input', drawBrush);
    until.addEventListener('input', drawBrush);

    // The time bar's histogram: the ticked threads' activity (every thread's when none is
    // ticked), the calls begun and samples taken in each bin of the whole trace, from the
    // activity writer's output; so one sees where a thread is busy before choosing a range.
    // SVG bars made here (attributes, no inline style: the page's CSP), heights relative to
    // the highest bar shown.
    var activity = null, SVGNS = 'http://www.w3.org/2000/svg';
    function threadName(tid) {
      var found = null;
      info.threads.forEach(function (t) { if (String(t.tid) === tid) found = t.name + ' (' + t.tid + ')'; });
      return found || tid;
    }
    function drawActivity() {
      if (!activity) return;
      var tids = ticked(), n = activity.bins, sums = [], max = 0, k;
      for (k = 0; k < n; k++) sums.push(0);
      activity.threads.forEach(function (t) {
        if (tids.length && tids.indexOf(String(t.tid)) < 0) return;
        for (var i = 0; i < n; i++) sums[i] += t.counts[i];
      });
      sums.forEach(function (c) { if (c > max) max = c; });
      var bars = $('activity');
      if (!bars) {
        bars = document.createElementNS(SVGNS, 'svg');
        bars.setAttribute('id', 'activity');
        bars.setAttribute('viewBox', '0 0 ' + n + ' 100');
        bars.setAttribute('preserveAspectRatio', 'none');
        bars.setAttribute('aria-hidden', 'true');
        timeline.insertBefore(bars, brush);
      }
      while (bars.firstChild) bars.removeChild(bars.firstChild);
      bars.setAttribute('data-max', String(max));
      for (k = 0; k < n; k++) {
        if (!sums[k]) continue;
        var h = Math.max(4, sums[k] / max * 100), r = document.createElementNS(SVGNS, 'rect');
        r.setAttribute('x', String(k));
        r.setAttribute('width', '1');
        r.setAttribute('y', String(100 - h));
        r.setAttribute('height', String(h));
        r.setAttribute('data-bin', String(k));
        r.setAttribute('data-count', String(sums[k]));
        bars.appendChild(r);
      }
      var who = tids.length ? tids.map(threadName).join(', ') : 'every thread';
      $('activity-what').textContent = max
        ? 'Bars: calls begun and samples taken per ' + timeText(activity.bin_ns) + ', ' + who + ' (the highest: ' +
          max + ').'
        : 'No calls or samples in ' + who + '.';
    }
    list.addEventListener('change', drawActivity);

    // The report's excerpts (top methods, parents and children) of the selection: the text
    // report converted with it, cut by the server's own rules (serve_page.c,
    // report_excerpts); the whole trace's again when nothing is selected. Text nodes only.
    var excerptParts = [['top-methods', 'top-methods-title'], ['parents-children', 'parents-children-title']]
      .map(function (p) {
        var pre = $(p[0]), title = $(p[1]);
        return pre && title ? { pre: pre, title: title, text: pre.textContent, head: title.textContent } : null;
      }).filter(Boolean);
    var excerptSeq = 0;
    function lineIndex(lines, from, prefix) {
      for (var i = from; i < lines.length; i++) if (lines[i].indexOf(prefix) === 0) return i;
      return lines.length;
    }
    function cut(text) {
      var l = text.split('\n'), all = lineIndex(l, 0, 'All threads'), head = lineIndex(l, all, 'index '), end = head;
      while (end < l.length && l[end] && end < head + 31) end++;
      var pc = lineIndex(l, head, 'Parents and children'), pch = lineIndex(l, pc, 'index '), pce = pch, seps = 0;
      while (pce < l.length && l[pce] && seps < 13) seps += l[pce++].indexOf('-----') === 0 ? 1 : 0;
      return [head < l.length ? l.slice(all, end).join('\n') + '\n' : '',
              pch < l.length ? l.slice(pch, pce).join('\n') + '\n' : ''];
    }
    function describe(ps) {
      return ps.map(function (p) {
        if (p[0] === 'thread') return 'thread ' + threadName(p[1]);
        return p[1] === '1' ? p[0] : p[0] + ' ' + p[1];
      }).join(', ');
    }
    function excerpts(ps) {
      if (!excerptParts.length) return;
      var seq = ++excerptSeq, q = query(ps, 'report');
      if (!q) {
        excerptParts.forEach(function (e) { e.pre.textContent = e.text; e.title.textContent = e.head; });
        return;
      }
      var what = ' (the selection: ' + describe(ps.filter(function (p) { return option('report', p[0]); })) + ')';
      excerptParts.forEach(function (e) { e.title.textContent = e.head.replace(/ \(.*\)$/, '') + what + ': converting\u2026'; });
      fetch(form.dataset.report + '?' + q).then(function (r) {
        return r.text().then(function (t) { if (!r.ok) throw new Error(t.trim() || 'HTTP ' + r.status); return t; });
      }).then(function (text) {
        if (seq !== excerptSeq) return;
        var parts = cut(text);
        excerptParts.forEach(function (e, i) {
          e.pre.textContent = parts[i] || '(none in this report)\n';
          e.title.textContent = e.head.replace(/ \(.*\)$/, '') + what;
        });
      }).catch(function (err) {
        if (seq !== excerptSeq) return;
        excerptParts.forEach(function (e) {
          e.pre.textContent = '';
          e.title.textContent = e.head.replace(/ \(.*\)$/, '') + what + ': ' + err.message;
        });
      });
    }

    function threadRow(t) {
      var label = document.createElement('label'), box = document.createElement('input');
      var name = document.createElement('span'), facts = document.createElement('span');
      label.className = 'thread';
      box.type = 'checkbox';
      box.value = String(t.tid);
      name.className = 'name';
      name.textContent = t.name;
      facts.className = 'hint';
      facts.textContent = (t.main ? ' main thread \u00b7' : '') + ' tid ' + t.tid + ' \u00b7 ' +
        (info.records ? (100 * t.records / info.records).toFixed(1) : '0') + '% of the records';
      if (t.main) label.classList.add('main');
      label.appendChild(box);
      label.appendChild(document.createTextNode(' '));
      label.appendChild(name);
      label.appendChild(facts);
      return label;
    }
    function restore() {
      var q = new URLSearchParams(location.search), tids = q.getAll('thread');
      each(list.querySelectorAll('input'), function (c) { c.checked = tids.indexOf(c.value) >= 0; });
      since.value = q.get('since') || '';
      until.value = q.get('until') || '';
      reverse.checked = q.has('reverse');
      idle.checked = q.has('ignore-idle');
      methods.forEach(function (m) { m.el.value = q.get(m.key) || ''; });
      var w = q.get('weight') === 'cpu' ? 'cpu' : 'wall', t = tabFor(w);
      if (t && !t.disabled) { weight.value = w; selectTab(t); }
      if (Array.from(q.keys()).length) apply(); else drawBrush();
    }
    function json(url) {
      return fetch(url).then(function (r) { if (!r.ok) throw new Error(url + ': HTTP ' + r.status); return r.json(); });
    }
    Promise.all([json(form.dataset.info), json('/api/formats')]).then(function (got) {
      info = got[0];
      var formats = got[1];
      (formats.options || []).forEach(function (o) { core[o.name] = true; });
      (formats.writers || []).forEach(function (w) {
        takes[w.name] = {};
        (w.options || []).forEach(function (o) { takes[w.name][o.name] = true; });
      });
      if (formats.serve && formats.serve.options) {
        allowed = {};
        formats.serve.options.forEach(function (k) { allowed[k] = true; });
      }
      var bottomUp = ['flamegraph', 'report', 'folded'].some(function (w) { return option(w, 'reverse'); });
      reverse.disabled = !bottomUp;
      if (!bottomUp) reverse.parentNode.title = 'this traceconv has no bottom-up view (--reverse)';
      idle.disabled = !option('json', 'ignore-idle');
      methods.forEach(function (m) { // callers: only the writers that draw callers take it
        m.el.disabled = !['json', 'flamegraph', 'report', 'folded'].some(function (w) { return option(w, m.key); });
        if (m.el.disabled) m.el.parentNode.title = 'this traceconv has no option ' + m.key;
      });
      var cpu = tabFor('cpu');
      weight.querySelector('option[value=cpu]').disabled = !cpu || cpu.disabled;
      // in the server's order: main first, then by time outside idle waits (idle daemons last)
      info.threads.filter(function (t) { return t.records > 0; })
        .forEach(function (t) { list.appendChild(threadRow(t)); });
      $('duration').textContent = 'The trace lasts ' + timeText(info.duration_ns) +
        ' (its own time: 0 is its start). Drag on the bar, or type a time with its unit: 1.5s, 250ms.';
      restore();
      if (form.dataset.activity) {
        json(form.dataset.activity).then(function (a) { activity = a; drawActivity(); })
          .catch(function (err) { $('activity-what').textContent = 'No activity bars: ' + err.message; });
      }
    }).catch(function (err) { showError('Cannot load the selection\u2019s controls: ' + err.message); });
  }
  var pf = $('perfetto');
  if (pf) {
    pf.addEventListener('click', function () {
      var ORIGIN = 'https://ui.perfetto.dev';
      var win = window.open(ORIGIN + '/#!/');
      if (!win) { showError('The browser blocked the Perfetto UI window.'); return; }
      fetch(pf.dataset.src).then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.arrayBuffer();
      }).then(function (buffer) {
        var tries = 0;
        var timer = setInterval(function () {
          if (++tries > 200) { clearInterval(timer); window.removeEventListener('message', onPong); return; }
          win.postMessage('PING', ORIGIN);
        }, 50);
        function onPong(evt) {
          if (evt.origin !== ORIGIN || evt.data !== 'PONG') return;
          clearInterval(timer);
          window.removeEventListener('message', onPong);
          win.postMessage({ perfetto: { buffer: buffer, title: pf.dataset.title, fileName: pf.dataset.file } }, ORIGIN);
        }
        window.addEventListener('message', onPong);
      }).catch(function (err) { showError('Cannot read the Perfetto trace: ' + err.message); });
    });
  }
})();
