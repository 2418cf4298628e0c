(function () {
	"use strict";
	// a cell's sort key: the method's name, or the number it shows ("-": below every number)
	function key(td, numeric) {
		var name = td.querySelector(".name");
		var text = (name || td).textContent;
		if (!numeric) return text;
		var v = parseFloat(text.replace(/,/g, "")); // 1,234,567: thousands separators
		return isNaN(v) ? -Infinity : v;
	}
	// by one column: numbers descending first, names ascending first, then the other way;
	// equal keys keep their current order (stable)
	function sortBy(table, col) {
		var heads = table.tHead.rows[0].cells, th = heads[col];
		var numeric = th.getAttribute("data-type") !== "text";
		var now = th.getAttribute("aria-sort");
		var dir = now === "descending" ? "ascending" : now === "ascending" ? "descending"
			: numeric ? "descending" : "ascending";
		var sign = dir === "descending" ? -1 : 1;
		var body = table.tBodies[0], rows = [];
		for (var i = 0; i < body.rows.length; i++) rows.push({ k: key(body.rows[i].cells[col], numeric), i: i, r: body.rows[i] });
		rows.sort(function (a, b) { return (a.k < b.k ? -sign : a.k > b.k ? sign : 0) || a.i - b.i; });
		var frag = document.createDocumentFragment();
		for (var j = 0; j < rows.length; j++) frag.appendChild(rows[j].r);
		body.appendChild(frag);
		for (var h = 0; h < heads.length; h++) heads[h].setAttribute("aria-sort", h === col ? dir : "none");
	}
	// each header becomes a button (only with a script: without one there is nothing to press)
	function bind(table) {
		var heads = table.tHead.rows[0].cells;
		for (var c = 0; c < heads.length; c++) (function (th, col) {
			var b = document.createElement("button");
			b.type = "button";
			while (th.firstChild) b.appendChild(th.firstChild);
			th.appendChild(b);
			if (!th.hasAttribute("aria-sort")) th.setAttribute("aria-sort", "none");
			b.addEventListener("click", function () { sortBy(table, col); });
		})(heads[c], c);
	}
	// a parent/child link leads to the method's row: open it, and the section around it
	function open(id) {
		var row = id ? document.getElementById(id) : null;
		if (!row) return;
		for (var e = row; e; e = e.parentElement) if (e.localName === "details") e.open = true;
		var d = row.querySelector("td.m > details");
		if (d) d.open = true;
	}
	function init() {
		var tables = document.querySelectorAll("table.prof");
		for (var i = 0; i < tables.length; i++) bind(tables[i]);
		// a name cut by its column shows whole in a tooltip
		document.addEventListener("mouseover", function (ev) {
			var n = ev.target.closest ? ev.target.closest(".name") : null;
			if (n && !n.title) n.title = n.textContent;
		});
		document.addEventListener("click", function (ev) {
			var a = ev.target.closest ? ev.target.closest("a.to") : null;
			if (a) open(a.getAttribute("href").slice(1));
		});
		if (location.hash) open(decodeURIComponent(location.hash.slice(1)));
	}
	if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
	else init();
})();
// The profiler view (section#tree): the top-down and the bottom-up call tree, a thread picker and
// a filter, drawn from the JSON block #pv-data (report_html.c: each thread's call tree in preorder,
// [depth, method, calls, total ns, self ns] per node, by the --weight clock).
//
// A top-down node is the set of call-tree nodes on one path of names (ids of one method under
// the same name are one node, as every output names them); its total, self and calls are their
// sums. A bottom-up node is a method with a chain of callers (its path read from the leaf): the
// set of call-tree nodes of that method whose callers are that chain. Its self is their self
// time, its calls their calls, its total the time the chain was on the stack: the totals of the
// nodes not inside another node of the set (recursion counted once). Children are computed when
// a node is opened, so the page costs what is looked at. The filter (case-insensitive substring)
// shows the paths that hold a matching frame: a node that matches, with what is above and below
// it; the figures stay the node's own.
(function () {
	"use strict";
	var MAX_ROWS = 500; // children listed per node; the rest counted in one line
	var data = document.getElementById("pv-data"), view = document.getElementById("pv");
	if (!data || !view) return;
	var D = JSON.parse(data.textContent);
	var raw = D.nodes, N = raw.length / 5;
	var parent = new Int32Array(N), key = new Int32Array(N), thread = new Int32Array(N);
	var firstChild = new Int32Array(N).fill(-1), nextSib = new Int32Array(N).fill(-1);
	var sameUp = new Int32Array(N); // the nearest caller of the same method, -1: none
	var names = [], keyOf = new Map(), threadRoots = [];
	// one key per distinct name; threads are keys of their own (negative)
	var methodKey = D.methods.map(function (m) {
		if (!keyOf.has(m)) { keyOf.set(m, names.length); names.push(m); }
		return keyOf.get(m);
	});
	function label(k) {
		if (k >= 0) return names[k];
		var t = D.threads[-k - 1];
		return t.name + " (tid " + t.tid + ")";
	}
	// parents, children lists, and sameUp from the preorder (one pass; the open frames of each
	// method kept on a stack of their own, so a deep recursion costs no more than a flat tree)
	(function link() {
		var stack = [], lastChild = new Int32Array(N).fill(-1), openOf = new Map();
		for (var i = 0; i < N; i++) {
			var d = raw[5 * i];
			while (stack.length > d) openOf.get(key[stack.pop()]).pop();
			if (d === 0) {
				threadRoots.push(i);
				parent[i] = -1;
				key[i] = -threadRoots.length;
			} else {
				var p = stack[d - 1];
				parent[i] = p;
				key[i] = methodKey[raw[5 * i + 1]];
				if (lastChild[p] < 0) firstChild[p] = i; else nextSib[lastChild[p]] = i;
				lastChild[p] = i;
			}
			thread[i] = threadRoots.length - 1;
			if (!openOf.has(key[i])) openOf.set(key[i], []);
			var same = openOf.get(key[i]);
			sameUp[i] = same.length ? same[same.length - 1] : -1;
			same.push(i);
			stack.push(i);
		}
	})();
	function calls(i) { return raw[5 * i + 2]; }
	function total(i) { return raw[5 * i + 3]; }
	function self(i) { return raw[5 * i + 4]; }

	// ---- numbers: µs rounded from ns (halves up), 1,234,567 in every locale -------------------
	function grouped(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
	function us(ns) { return grouped(Math.floor((ns + 500) / 1000)); }
	function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "-"; }

	// ---- the selection: threads, filter -----------------------------------------------------
	var state = { bottomUp: false, thread: -1, filter: "", open: [new Set(), new Set()], focus: null };
	var matchOf = null, aboveMatch = null, belowMatch = null; // per call-tree node, for the filter
	function computeFilter() {
		if (!state.filter) { matchOf = aboveMatch = belowMatch = null; return; }
		var q = state.filter.toLowerCase(), keyMatch = new Map();
		matchOf = new Uint8Array(N); aboveMatch = new Uint8Array(N); belowMatch = new Uint8Array(N);
		for (var i = 0; i < N; i++) {
			var k = key[i];
			if (!keyMatch.has(k)) keyMatch.set(k, label(k).toLowerCase().indexOf(q) >= 0);
			matchOf[i] = keyMatch.get(k) ? 1 : 0;
			aboveMatch[i] = matchOf[i] || (parent[i] >= 0 && aboveMatch[parent[i]]) ? 1 : 0;
		}
		for (var j = N - 1; j > 0; j--) // preorder: children after their parent
			if ((matchOf[j] || belowMatch[j]) && parent[j] >= 0) belowMatch[parent[j]] = 1;
	}
	function threadShown(t) { return state.thread < 0 || state.thread === t; }

	// ---- tree nodes -----------------------------------------------------------------------
	// a node: { id, key, depth, ids (call-tree nodes), at (bottom-up: the caller reached per id),
	// flag (bottom-up: per id, whether the chain so far matches the filter), total, self, calls, base }
	function sum(ids, f) { var s = 0; for (var i = 0; i < ids.length; i++) s += f(ids[i]); return s; }
	function group(items, keyFn) {
		var m = new Map();
		for (var i = 0; i < items.length; i++) {
			var k = keyFn(items[i]);
			if (!m.has(k)) m.set(k, []);
			m.get(k).push(items[i]);
		}
		return m;
	}
	var baseAll = 0;
	function tdNode(id, k, depth, ids) {
		return { id: id, key: k, depth: depth, ids: ids, total: sum(ids, total), self: sum(ids, self),
		         calls: sum(ids, calls), base: total(threadRoots[thread[ids[0]]]) };
	}
	function tdVisible(n) {
		if (!matchOf) return true;
		for (var i = 0; i < n.ids.length; i++) if (aboveMatch[n.ids[i]] || belowMatch[n.ids[i]]) return true;
		return false;
	}
	function tdRoots() {
		var out = [];
		for (var t = 0; t < threadRoots.length; t++)
			if (threadShown(t)) out.push(tdNode(String(-t - 1), -t - 1, 0, [threadRoots[t]]));
		return out;
	}
	function tdChildren(n) {
		var kids = [];
		for (var i = 0; i < n.ids.length; i++)
			for (var c = firstChild[n.ids[i]]; c >= 0; c = nextSib[c]) kids.push(c);
		var out = [];
		group(kids, function (c) { return key[c]; }).forEach(function (ids, k) {
			out.push(tdNode(n.id + "/" + k, k, n.depth + 1, ids));
		});
		return out;
	}
	// the time the chain was on the stack: the nodes not inside another node of the set
	function outerTotal(ids) {
		var set = new Set(ids), s = 0;
		for (var i = 0; i < ids.length; i++) {
			var up = sameUp[ids[i]];
			while (up >= 0 && !set.has(up)) up = sameUp[up];
			if (up < 0) s += total(ids[i]);
		}
		return s;
	}
	function buNode(id, k, depth, ids, at, flag) {
		return { id: id, key: k, depth: depth, ids: ids, at: at, flag: flag, total: outerTotal(ids),
		         self: sum(ids, self), calls: sum(ids, calls), base: baseAll };
	}
	function buVisible(n) {
		if (!matchOf) return true;
		for (var i = 0; i < n.ids.length; i++)
			if (n.flag[i] || (parent[n.at[i]] >= 0 && aboveMatch[parent[n.at[i]]])) return true;
		return false;
	}
	function buGroup(items, prefix, depth) {
		var out = [];
		group(items, function (x) { return key[x.at]; }).forEach(function (xs, k) {
			out.push(buNode(prefix + k, k, depth, xs.map(function (x) { return x.id; }),
			                xs.map(function (x) { return x.at; }), xs.map(function (x) { return x.flag; })));
		});
		return out;
	}
	function buRoots() {
		var items = [];
		for (var i = 0; i < N; i++)
			if (parent[i] >= 0 && threadShown(thread[i]))
				items.push({ id: i, at: i, flag: matchOf ? matchOf[i] : 0 });
		return buGroup(items, "", 0);
	}
	function buChildren(n) {
		var items = [];
		for (var i = 0; i < n.ids.length; i++) {
			var p = parent[n.at[i]];
			if (p >= 0) items.push({ id: n.ids[i], at: p, flag: n.flag[i] || (matchOf ? matchOf[p] : 0) });
		}
		return buGroup(items, n.id + "/", n.depth + 1);
	}
	function children(n) {
		if (!n.kids) {
			var kids = state.bottomUp ? buChildren(n) : tdChildren(n);
			n.kids = kids.filter(state.bottomUp ? buVisible : tdVisible).sort(order);
			n.leaf = kids.length === 0;
		}
		return n.kids;
	}
	// top-down by total, bottom-up by self (a method's own time, then its callers'), then name
	function order(a, b) {
		// threads (top-down roots) in the page's order: main first, then by time outside idle waits
		if (!state.bottomUp && a.key < 0 && b.key < 0 && a.depth === 0 && b.depth === 0) return b.key - a.key;
		var x = state.bottomUp ? b.self - a.self || b.total - a.total : b.total - a.total;
		return x || (label(a.key) < label(b.key) ? -1 : label(a.key) > label(b.key) ? 1 : 0);
	}

	// ---- drawing --------------------------------------------------------------------------
	var rowsEl = document.getElementById("pv-rows"), rowNodes = [], roots = [];
	function cell(tr, text, cls) {
		var td = document.createElement("td");
		td.textContent = text;
		if (cls) td.className = cls;
		tr.appendChild(td);
	}
	function row(n) {
		var tr = document.createElement("tr"), open = state.open[state.bottomUp ? 1 : 0].has(n.id);
		var kids = children(n);
		tr.setAttribute("role", "row");
		tr.setAttribute("aria-level", n.depth + 1);
		if (!n.leaf) tr.setAttribute("aria-expanded", open ? "true" : "false");
		tr.tabIndex = -1;
		tr.dataset.id = n.id;
		var td = document.createElement("td"), tw = document.createElement("span"), nm = document.createElement("span");
		td.className = "m";
		td.style.paddingLeft = Math.min(n.depth, 40) * 0.8 + 0.3 + "em";
		tw.className = "tw";
		tw.textContent = n.leaf ? "" : open ? "\u25BE" : "\u25B8";
		nm.className = n.key < 0 ? "name thread" : "name";
		nm.textContent = label(n.key);
		nm.title = label(n.key);
		if (matchOf && n.key !== undefined && label(n.key).toLowerCase().indexOf(state.filter.toLowerCase()) >= 0)
			nm.classList.add("hit");
		td.appendChild(tw);
		td.appendChild(nm);
		tr.appendChild(td);
		cell(tr, us(n.total)); cell(tr, pct(n.total, n.base)); cell(tr, us(n.self)); cell(tr, pct(n.self, n.base));
		cell(tr, n.key < 0 && n.depth === 0 ? "-" : grouped(n.calls)); // a thread (a top-down root) is not called
		rowNodes.push(n);
		return { tr: tr, open: open, kids: kids };
	}
	function draw() {
		var frag = document.createDocumentFragment();
		rowNodes = [];
		(function add(list) {
			var shown = Math.min(list.length, MAX_ROWS);
			for (var i = 0; i < shown; i++) {
				var r = row(list[i]);
				frag.appendChild(r.tr);
				if (r.open) add(r.kids);
			}
			if (list.length > shown) {
				var tr = document.createElement("tr");
				tr.className = "more";
				cell(tr, grouped(list.length - shown) + " more (smaller) not listed: use the filter", "m");
				tr.firstChild.colSpan = 6;
				frag.appendChild(tr);
			}
		})(roots);
		rowsEl.textContent = "";
		rowsEl.appendChild(frag);
		var f = state.focus && rowsEl.querySelector('tr[data-id="' + state.focus + '"]');
		(f || rowsEl.querySelector("tr[role=row]") || { tabIndex: 0 }).tabIndex = 0;
	}
	function rebuild() {
		computeFilter();
		baseAll = 0;
		for (var t = 0; t < threadRoots.length; t++) if (threadShown(t)) baseAll += total(threadRoots[t]);
		roots = (state.bottomUp ? buRoots() : tdRoots()).filter(state.bottomUp ? buVisible : tdVisible).sort(order);
		draw();
	}
	// at first: the hottest path of the top-down tree open, from the first thread (main) down
	function openHottest() {
		var set = state.open[0], list = tdRoots().sort(order);
		for (var guard = 0; list.length && guard < 200; guard++) {
			var n = list[0];
			var kids = tdChildren(n).sort(order);
			if (!kids.length) break;
			set.add(n.id);
			list = kids;
		}
	}
	function toggle(id, open) {
		var set = state.open[state.bottomUp ? 1 : 0];
		if (open === undefined) open = !set.has(id);
		if (open) set.add(id); else set.delete(id);
		state.focus = id;
		draw();
		focusRow(id);
	}
	function focusRow(id) {
		var tr = rowsEl.querySelector('tr[data-id="' + CSS.escape(id) + '"]');
		if (!tr) return;
		var old = rowsEl.querySelector("tr[tabindex='0']");
		if (old) old.tabIndex = -1;
		tr.tabIndex = 0;
		tr.focus();
		state.focus = id;
	}
	function nodeOf(tr) { return tr ? rowNodes[Array.prototype.indexOf.call(rowsEl.querySelectorAll("tr[role=row]"), tr)] : null; }
	rowsEl.addEventListener("click", function (ev) {
		var tr = ev.target.closest("tr[role=row]"), n = nodeOf(tr);
		if (!n) return;
		if (n.leaf) focusRow(n.id); else toggle(n.id);
	});
	rowsEl.addEventListener("keydown", function (ev) {
		var tr = ev.target.closest("tr[role=row]"), n = nodeOf(tr);
		if (!n) return;
		var rows = rowsEl.querySelectorAll("tr[role=row]"), i = Array.prototype.indexOf.call(rows, tr);
		var open = tr.getAttribute("aria-expanded") === "true";
		var go = function (j) { if (j >= 0 && j < rows.length) focusRow(rows[j].dataset.id); };
		switch (ev.key) {
		case "ArrowDown": go(i + 1); break;
		case "ArrowUp": go(i - 1); break;
		case "Home": go(0); break;
		case "End": go(rows.length - 1); break;
		case "ArrowRight": if (n.leaf) return; if (!open) toggle(n.id, true); else go(i + 1); break;
		case "ArrowLeft":
			if (open) { toggle(n.id, false); break; }
			for (var j = i - 1; j >= 0; j--) if (+rows[j].getAttribute("aria-level") === n.depth) { go(j); break; }
			break;
		case "Enter": case " ": if (!n.leaf) toggle(n.id); break;
		default: return;
		}
		ev.preventDefault();
	});
	var tabs = [document.getElementById("pv-td"), document.getElementById("pv-bu")];
	tabs.forEach(function (b, i) {
		b.addEventListener("click", function () {
			state.bottomUp = i === 1;
			tabs.forEach(function (x, j) { x.setAttribute("aria-selected", j === i ? "true" : "false"); });
			help();
			rebuild();
		});
	});
	// a count profile's figures are counts of its event (D.count, "cycles:HG"), 1000 a count as
	// times are ns, so us() shows them too; else times in µs of the D.clock clock
	var unit = D.count ? " " + D.count : " µs", what = D.count ? D.count + " counts" : D.clock + " time";
	var picker = document.getElementById("pv-thread");
	(function threads() {
		var o = document.createElement("option");
		o.value = "-1";
		o.textContent = "All threads (" + grouped(threadRoots.length) + ")";
		picker.appendChild(o);
		for (var t = 0; t < threadRoots.length; t++) {
			o = document.createElement("option");
			o.value = String(t);
			o.textContent = label(-t - 1) + ": " + us(total(threadRoots[t])) + unit;
			picker.appendChild(o);
		}
	})();
	picker.addEventListener("change", function () { state.thread = +picker.value; rebuild(); });
	var filter = document.getElementById("pv-filter"), timer = 0;
	filter.addEventListener("input", function () {
		clearTimeout(timer);
		timer = setTimeout(function () { state.filter = filter.value; rebuild(); }, 120);
	});
	function help() {
		document.getElementById("pv-help").textContent = state.bottomUp
			? "Bottom-up: each method by its self time, its callers beneath (open a row for who called it). " +
			  "Total: the time that chain of calls was on the stack; % of the threads shown (" + what + ")."
			: "Top-down: each thread's calls, children by total time; the hottest path is open. Click a row or " +
			  "use the arrow keys to open and close; % of the thread (" + what + ").";
	}
	if (D.view === "bottom-up") { // report --html --reverse: the page opens on its bottom-up tree
		state.bottomUp = true;
		tabs.forEach(function (x, j) { x.setAttribute("aria-selected", j === 1 ? "true" : "false"); });
	}
	document.getElementById("pv-nojs").hidden = true;
	view.hidden = false;
	help();
	openHottest();
	rebuild();
})();
