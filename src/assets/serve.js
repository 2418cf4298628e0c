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
  if (flame) {
    var tabs = document.querySelectorAll('button.tab');
    Array.prototype.forEach.call(tabs, function (t) {
      t.addEventListener('click', function () {
        Array.prototype.forEach.call(tabs, function (o) { o.setAttribute('aria-selected', String(o === t)); });
        flame.src = t.dataset.src;
      });
    });
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
