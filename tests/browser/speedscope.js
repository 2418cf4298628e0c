// speedscope.js - opens our speedscope files in speedscope's own page (the npm package pinned
// in tests/browser/speedscope) for test_speedscope_browser.py: ONE headless Chromium for every
// file, each in a page of its own, in turn. Chromium's start is most of the cost of a file
// (it took 11 starts, one per input, when each ran `chromium --dump-dom`).
//
//   node speedscope.js SPEC.json RESULT.json
//
// SPEC: { "index": "/.../speedscope/dist/release/index.html",
//         "files": [ { "name": "app-startup", "loader": "/.../app-startup.load.js" } ] }
// Each loader script hands speedscope its file (speedscope.loadFileFromBase64, what speedscope's
// command line does) and then runs collect.js, which writes what the page shows as JSON into
// <pre id="tc-result">. RESULT: { "files": { NAME: { "result": "<the pre's text>" | null,
// "console": ["type: text", ...] } } }. The Python test judges both.
"use strict";
const { launch, run } = require("./lib");

// collect.js reports within its own bounds (60 s without a profile, 200 polls of the Sandwich
// view); a page that reports nothing by then is a finding, not a hang of this script.
const REPORT_TIMEOUT_MS = 120000;

async function openOne(browser, index, file) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 2400 });
  const messages = [];
  page.on("console", (m) => messages.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => messages.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => messages.push(`requestfailed: Failed to load ${r.url()}`));
  let result = null;
  try {
    await page.goto(`file://${index}#localProfilePath=${file.loader}`, { waitUntil: "load", timeout: 60000 });
    await page.waitForSelector("pre#tc-result", { timeout: REPORT_TIMEOUT_MS });
    result = await page.$eval("pre#tc-result", (pre) => pre.textContent);
  } catch (e) {
    messages.push(`harness: ${e.message}`);
  }
  await page.close();
  return { result, console: messages };
}

async function main([specPath]) {
  const spec = JSON.parse(require("fs").readFileSync(specPath, "utf-8"));
  const browser = await launch({ viewport: { width: 1280, height: 2400 } });
  const files = {};
  try {
    for (const file of spec.files)
      files[file.name] = await openOne(browser, spec.index, file);
  } finally {
    await browser.close();
  }
  return { files };
}

run(main);
