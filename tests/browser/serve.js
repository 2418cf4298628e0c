// serve.js - drives `traceconv serve`'s page in headless Chromium for test_serve_browser.py.
//
//   node serve.js URL TRACE BAD_FILE SHOT_DIR SMALL_URL TID HOSTILE WINDOW WINDOW_TID SINCE UNTIL OUT.json
//
// Uploads TRACE through the page's form (the file input, the Convert button), waits for
// the result page, and reports what the browser shows: the flame graph's frames (in its
// sandboxed iframe), the tooltip shown when hovering a thread's root frame, the other
// flame graph tabs, the download links and the bytes of the pprof and Perfetto
// downloads (fetched by the page, base64), console errors, failed requests and CSP
// violations (securitypolicyviolation events, in the page and in the frame). Then uploads
// BAD_FILE and reports the error line the page shows. Then chooses TRACE on the page of
// SMALL_URL, a server whose --keep-size is below the trace's size, and reports the line
// the page shows before sending it ("too large").
//
// The selection (issue 24): on the result page, the thread picker as it comes (nothing
// ticked), then a time range dragged on the timeline and the thread TID ticked, Apply: the
// flame graph shown then, the download links and the folded download's bytes. Then HOSTILE
// (a trace whose thread name is markup) is uploaded: the picker's names as text, and
// whether any script ran (window.pwned) or element came from a name.
//
// The time bar and the excerpts (issue 36): WINDOW (a trace whose thread WINDOW_TID is busy
// in a known window) is uploaded; the activity bars as drawn (bin, count) with no thread
// ticked and with WINDOW_TID ticked, the words under the bar; a search typed into the flame
// graph's field in its sandboxed frame ("Matched"); then SINCE/UNTIL typed and Apply: the top
// methods and parents-and-children excerpts and their titles, before and after.
"use strict";
const path = require("path");
const { launch, openPage, run } = require("./lib");

const CSP_WATCH = () => {
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) =>
    window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
};

async function flameFrame(page, name) {
  for (let i = 0; i < 100; i++) {
    const f = page.frames().find((fr) => fr.url().endsWith("/" + name));
    if (f) {
      await f.waitForSelector("#frames", { timeout: 30000 });
      return f;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no frame showing ${name}`);
}

async function flameFrameWhere(page, test) {
  for (let i = 0; i < 300; i++) {
    const f = page.frames().find((fr) => test(fr.url()));
    if (f) {
      await f.waitForSelector("#frames", { timeout: 60000 });
      return f;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no frame showing the selection");
}

async function frames(frame) {
  return frame.evaluate(() => [...document.getElementById("frames").children].map((g) => ({
    title: g.querySelector("title").textContent, y: Number(g.querySelector("rect").getAttribute("y")) })));
}

async function upload(page, file) {
  const input = await page.$("#trace");
  await input.uploadFile(file);
  await page.click("#go");
}

async function fetchText(page, href) {
  return page.evaluate(async (h) => { const r = await fetch(h); return { status: r.status, text: await r.text() }; }, href);
}

async function select(page, out, tid) {
  await page.waitForSelector("#thread-list label", { timeout: 60000 });
  out.pickerTicked = await page.$$eval("#thread-list input", (cs) => cs.filter((c) => c.checked).length);
  out.picker = await page.$$eval("#thread-list label", (ls) => ls.map((l) => ({
    tid: l.querySelector("input").value, name: l.querySelector(".name").textContent,
    main: l.classList.contains("main"), facts: l.querySelector(".hint").textContent })));
  out.duration = await page.$eval("#duration", (e) => e.textContent);
  await page.$eval("#timeline", (e) => e.scrollIntoView({ block: "center" }));
  const box = await (await page.$("#timeline")).boundingBox();
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  out.since = await page.$eval("#since", (e) => e.value);
  out.until = await page.$eval("#until", (e) => e.value);
  await page.click("button.tab[data-src$='flame-wall.svg']"); // back from the CPU tab
  await page.click(`#thread-list input[value='${tid}']`);
  await page.click("#apply");
  const flame = await flameFrameWhere(page, (u) => u.includes("/flame-wall.svg?") && u.includes(`thread=${tid}`));
  out.selFlameUrl = flame.url();
  out.selFrames = await frames(flame);
  out.selLinks = await page.$$eval("#downloads a", (as) => as.map((a) => ({ href: a.getAttribute("href"),
                                                                           writer: a.dataset.writer })));
  out.selReport = await page.$eval("#report-html", (f) => f.getAttribute("src"));
  out.selPageUrl = page.url();
  const folded = out.selLinks.find((l) => l.writer === "folded");
  out.selFolded = folded ? await fetchText(page, folded.href) : null;
}

// the methods' fields: callers of a method typed as people type it, the flame graph rooted at it,
// the fields kept by a reload of the page's address; "Whole trace" clears them
async function callers(page, out) {
  out.methodFields = await page.$$eval("#methods input", (is) => is.map((i) => ({ id: i.id, disabled: i.disabled })));
  await page.click("#show-all");
  await page.type("#callers", "LayoutInflater.inflate");
  await page.type("#focus", "onCreate");
  await page.click("#reverse"); // callers is bottom-up already: reverse is not sent with it
  await page.click("#apply");
  const flame = await flameFrameWhere(page, (u) => u.includes("/flame-wall.svg?") && u.includes("callers="));
  out.callersFlameUrl = flame.url();
  out.callersFrames = await frames(flame);
  out.callersTitle = await flame.evaluate(() => document.getElementById("title").textContent);
  out.callersLinks = await page.$$eval("#downloads a", (as) => as.map((a) => ({ href: a.getAttribute("href"),
                                                                               writer: a.dataset.writer })));
  const folded = out.callersLinks.find((l) => l.writer === "folded");
  out.callersFolded = folded ? await fetchText(page, folded.href) : null;
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("#thread-list label", { timeout: 60000 });
  await page.waitForFunction(() => document.getElementById("callers").value !== "", { timeout: 60000 });
  out.callersKept = await page.$eval("#callers", (e) => e.value);
  out.focusKept = await page.$eval("#focus", (e) => e.value);
  await page.click("#show-all");
  out.callersCleared = await page.$eval("#callers", (e) => e.value);
}

async function bars(page) {
  return page.$$eval("#activity rect", (rs) => rs.map((r) => ({ bin: Number(r.getAttribute("data-bin")),
                                                                 count: Number(r.getAttribute("data-count")),
                                                                 height: Number(r.getAttribute("height")) })));
}

async function timeBar(page, out, windowTrace, tid, since, until, shotDir) {
  await page.goto(page.url().replace(/\/r\/.*$/, "/"), { waitUntil: "load", timeout: 60000 });
  await upload(page, windowTrace);
  await page.waitForSelector("#activity rect", { timeout: 120000 });
  out.barsAll = await bars(page);
  out.barsBox = await page.$eval("#activity", (e) => { const b = e.getBoundingClientRect(); return { w: b.width, h: b.height }; });
  out.whatAll = await page.$eval("#activity-what", (e) => e.textContent);
  await page.click(`#thread-list input[value='${tid}']`);
  out.barsOne = await bars(page);
  out.whatOne = await page.$eval("#activity-what", (e) => e.textContent);
  // the flame graph's search, typed into its field inside the sandboxed frame
  const flame = await flameFrame(page, "flame-wall.svg");
  await (await flame.$("#search rect")).click();
  await page.keyboard.type("Busy\\.work");
  await page.keyboard.press("Enter");
  out.flameMatched = await flame.evaluate(() => document.getElementById("matched").textContent);
  out.topBefore = await page.$eval("#top-methods", (e) => e.textContent);
  out.topTitleBefore = await page.$eval("#top-methods-title", (e) => e.textContent);
  await page.type("#since", since);
  await page.type("#until", until);
  await page.click("#apply");
  await page.waitForFunction(() => /selection/.test(document.getElementById("top-methods-title").textContent) &&
    !/converting/.test(document.getElementById("top-methods-title").textContent), { timeout: 60000 });
  out.topAfter = await page.$eval("#top-methods", (e) => e.textContent);
  out.topTitleAfter = await page.$eval("#top-methods-title", (e) => e.textContent);
  out.pcAfter = await page.$eval("#parents-children", (e) => e.textContent);
  out.barsAfter = await bars(page);
  await page.$eval("#timeline", (e) => e.scrollIntoView({ block: "center" }));
  await page.screenshot({ path: path.join(shotDir, "serve-time-bar.png") });
  await page.click("#show-all");
  await page.waitForFunction(() => !/selection/.test(document.getElementById("top-methods-title").textContent),
                             { timeout: 60000 });
  out.topWhole = await page.$eval("#top-methods", (e) => e.textContent);
}

async function main([url, trace, bad, shotDir, smallUrl, tid, hostile, windowTrace, windowTid, since, until]) {
  const browser = await launch();
  const out = {};
  try {
    const page = await browser.newPage();
    await page.evaluateOnNewDocument(CSP_WATCH);
    const { errors } = await (async () => {
      const errs = [];
      page.on("console", (m) => { if (m.type() === "error") errs.push(`console: ${m.text()}`); });
      page.on("pageerror", (e) => errs.push(`pageerror: ${e.message}`));
      page.on("requestfailed", (r) => errs.push(`requestfailed: ${r.url()}`));
      return { errors: errs };
    })();
    await page.goto(url, { waitUntil: "load", timeout: 60000 });
    await upload(page, trace);
    await page.waitForSelector("#flame", { timeout: 120000 });
    out.resultUrl = page.url();
    const flame = await flameFrame(page, "flame-wall.svg");
    out.frames = await frames(flame);
    // hover the first thread root (the frames one level above "all")
    const maxY = Math.max(...out.frames.map((f) => f.y));
    const rootIndex = out.frames.findIndex((f) => f.y < maxY && f.y >= maxY - 20);
    const rect = await flame.evaluateHandle((i) =>
      document.getElementById("frames").children[i].querySelector("rect"), rootIndex);
    await rect.asElement().hover();
    out.hovered = out.frames[rootIndex].title;
    out.details = await flame.evaluate(() => document.getElementById("details").textContent);
    out.frameCsp = await flame.evaluate(() => (window.__csp || []).slice());
    out.frameCanReachPage = await flame.evaluate(() => {
      try { return Boolean(window.parent.document.body); } catch (e) { return false; }
    });
    await page.screenshot({ path: path.join(shotDir, "serve-result.png"), fullPage: true });
    // the CPU tab loads the CPU flame graph
    out.tabs = await page.$$eval("button.tab", (bs) => bs.map((b) => ({ text: b.textContent, src: b.dataset.src || null,
                                                                          disabled: b.disabled })));
    const cpuTab = await page.$("button.tab[data-src$='flame-cpu.svg']");
    if (cpuTab) {
      await cpuTab.click();
      out.cpuFrames = (await frames(await flameFrame(page, "flame-cpu.svg"))).length;
    }
    out.links = await page.$$eval("#downloads a", (as) => as.map((a) => ({ href: a.getAttribute("href"),
                                                                          writer: a.dataset.writer })));
    out.downloads = {};
    for (const l of out.links.filter((x) => x.writer === "pprof" || x.writer === "perfetto")) {
      out.downloads[l.writer] = await page.evaluate(async (href) => {
        const r = await fetch(href);
        const b = new Uint8Array(await r.arrayBuffer());
        let s = "";
        for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
        return { status: r.status, disposition: r.headers.get("content-disposition"), base64: btoa(s) };
      }, l.href);
    }
    out.threadsTable = await page.$$eval("#threads tbody tr td:first-child", (tds) => tds.map((t) => t.textContent));
    await select(page, out, tid);
    await page.screenshot({ path: path.join(shotDir, "serve-selection.png"), fullPage: true });
    await callers(page, out);
    out.window = {};
    await timeBar(page, out.window, windowTrace, windowTid, since, until, shotDir);
    out.pageCsp = await page.evaluate(() => window.__csp.slice());
    out.errors = errors.slice();
    // a thread name that is markup: text in the picker, no script, no element
    await page.goto(url, { waitUntil: "load", timeout: 60000 });
    await upload(page, hostile);
    await page.waitForSelector("#thread-list label", { timeout: 120000 });
    out.hostileNames = await page.$$eval("#thread-list .name", (ns) => ns.map((n) => n.textContent));
    out.hostileElements = await page.$$eval("#thread-list *", (es) => es.filter((e) =>
      !["LABEL", "INPUT", "SPAN"].includes(e.tagName)).map((e) => e.tagName));
    out.pwned = await page.evaluate(() => window.pwned === 1);
    out.errorsHostile = errors.slice(out.errors.length);
    // a bad upload: the CLI's line on the page
    await page.goto(url, { waitUntil: "load", timeout: 60000 });
    await upload(page, bad);
    await page.waitForSelector("#error:not([hidden])", { timeout: 60000 });
    out.badError = await page.$eval("#error", (e) => e.textContent);
    out.badUrl = page.url();
    await page.screenshot({ path: path.join(shotDir, "serve-error.png"), fullPage: true });
    out.errorsAfterBad = errors.slice(out.errors.length + out.errorsHostile.length);
    out.pageCspAfterBad = await page.evaluate(() => window.__csp.slice());
    // a trace larger than the store keeps: the page says so, and sends nothing
    let posted = 0;
    page.on("request", (r) => { if (r.method() === "POST") posted++; });
    await page.goto(smallUrl, { waitUntil: "load", timeout: 60000 });
    await upload(page, trace);
    await page.waitForSelector("#error:not([hidden])", { timeout: 60000 });
    out.tooLarge = await page.$eval("#error", (e) => e.textContent);
    out.tooLargePosted = posted;
    await page.screenshot({ path: path.join(shotDir, "serve-too-large.png"), fullPage: true });
  } finally {
    await browser.close();
  }
  return out;
}

run(main);
