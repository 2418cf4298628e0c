// collect.js - appended by test_speedscope_browser.py to the script that hands speedscope a
// file (speedscope.loadFileFromBase64, what speedscope's own command line does): waits
// until the profile is imported, opens the Sandwich view, then writes what the page shows
// as JSON into <pre id="tc-result"> (read back by tests/browser/speedscope.js). Nothing here
// computes a value: the page's text is reported as shown.
(function () {
  "use strict";
  var start = Date.now();
  function text(el) { return (el.textContent || "").trim(); }
  function all(selector) { return Array.prototype.slice.call(document.querySelectorAll(selector)); }
  // The profile chooser: a table "# | Name | Total Weight", one row per profile.
  function profileRows() {
    var table = all("table").find(function (t) {
      var head = t.querySelector("thead");
      return head && text(head).indexOf("Total Weight") >= 0;
    });
    return table ? Array.prototype.slice.call(table.querySelectorAll("tbody tr")).map(function (tr) {
      return Array.prototype.slice.call(tr.querySelectorAll("td")).map(text);
    }) : null;
  }
  // The Sandwich view: a header table ("Total | Self | Symbol Name"), then a virtualized
  // list of rows (total, self, symbol with its file as the title); the list's height
  // over a row's height is the number of rows, rendered or not.
  function sandwich() {
    var head = all("thead").find(function (h) { return text(h).endsWith("Symbol Name"); });
    if (!head) return null;
    var rows = all("tr").filter(function (tr) {
      var td = tr.querySelectorAll("td");
      return td.length === 3 && /%\)$/.test(text(td[0]));
    });
    var list = head.parentElement.nextElementSibling, inner = list && list.firstElementChild;
    return {
      rows: rows.map(function (tr) {
        var td = tr.querySelectorAll("td");
        return [text(td[0]), text(td[1]), text(td[2]), td[2].getAttribute("title")];
      }),
      height: inner ? parseFloat(inner.style.height) : null,
      rowHeight: rows.length ? rows[0].getBoundingClientRect().height : null
    };
  }
  function tab(name) {
    return all("div").find(function (d) {
      return d.children.length <= 1 && text(d).endsWith(name) && text(d).length < name.length + 4;
    });
  }
  function report(failed, why) {
    var out = { failed: failed, why: why, title: document.title, toolbar: text(document.body).slice(0, 300),
                profiles: profileRows(), sandwich: sandwich() };
    var pre = document.createElement("pre");
    pre.id = "tc-result";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  // Done when the Sandwich rows stop changing (rendering is asynchronous), or after 200
  // polls (a minute: a profile without functions has no row).
  var clicked = false, polls = 0, lastRows = -1;
  function poll() {
    if (text(document.body).indexOf("Something went wrong") >= 0) return report(true, "Something went wrong");
    var s = tab("Sandwich");
    if (s && !clicked) { s.click(); clicked = true; return setTimeout(poll, 200); }
    if (clicked) {
      var sw = sandwich(), n = sw ? sw.rows.length : -1;
      if ((n > 0 && n === lastRows) || ++polls > 200) return report(false, "");
      lastRows = n;
      return setTimeout(poll, 300);
    }
    if (Date.now() - start > 60000) return report(true, "no profile after 60 s");
    setTimeout(poll, 100);
  }
  setTimeout(poll, 100);
})();
