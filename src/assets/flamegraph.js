function tcFlame(svg, pfx) {
	"use strict";
	if (!svg || svg.tcFlame) return svg && svg.tcFlame;
	if (pfx === undefined) pfx = svg.getAttribute("data-tc-flame") || "";
	var XPAD = 10, FONTSIZE = 12, FONTWIDTH = 0.59, MATCH = "rgb(230,0,230)";
	var inverted = svg.getAttribute("data-inverted") === "1";
	var standalone = svg.ownerDocument.documentElement === svg;
	function byId(name) { return svg.querySelector('[id="' + pfx + name + '"]'); }
	var details = byId("details").firstChild, frames = byId("frames"), unzoombtn = byId("unzoom");
	var searchbox = byId("search"), clearbtn = byId("searchclear"), icbtn = byId("ignorecase");
	var matchedtxt = byId("matched"), field = null, pending = null;
	var searching = false, term = null, ignorecase = false;
	function child(e, tag) {
		for (var c = e.firstElementChild; c; c = c.nextElementSibling) if (c.localName === tag) return c;
		return null;
	}
	function frameOf(t) {
		for (; t && t !== svg; t = t.parentNode) if (t.parentNode === frames) return t;
		return null;
	}
	function tooltip(g) { return child(g, "title").textContent; }
	function num(e, a) { return parseFloat(e.getAttribute(a)); }
	function save(e, a) { if (!e.hasAttribute("_orig_" + a)) e.setAttribute("_orig_" + a, e.getAttribute(a)); }
	function restore(e, a) {
		if (!e.hasAttribute("_orig_" + a)) return;
		e.setAttribute(a, e.getAttribute("_orig_" + a));
		e.removeAttribute("_orig_" + a);
	}
	function svgWidth() { return svg.width.baseVal.value; }
	// the label: the name (the tooltip without its final group; the root's own, data-label)
	// cut to the frame's width
	function updateText(g) {
		var r = child(g, "rect"), t = child(g, "text"), w = num(r, "width") - 3;
		var txt = t.getAttribute("data-label") || tooltip(g).replace(/ \([^()]*\)$/, "");
		t.setAttribute("x", (num(r, "x") + 3).toFixed(2));
		if (w < 2 * FONTSIZE * FONTWIDTH || !txt.length) { t.textContent = ""; return; }
		t.textContent = txt;
		var full = t.getSubStringLength(0, txt.length);
		if (full < w) return;
		for (var x = Math.floor(w / full * txt.length); x > 0; x -= 2) {
			if (x + 2 <= txt.length && t.getSubStringLength(0, x + 2) <= w) {
				t.textContent = txt.substring(0, x) + "..";
				return;
			}
		}
		t.textContent = "";
	}
	function each(fn) { for (var e = frames.firstElementChild; e; e = e.nextElementSibling) fn(e); }
	function zoom(g) {
		var r = child(g, "rect"), xmin = num(r, "x"), width = num(r, "width"), ymin = num(r, "y");
		var xmax = xmin + width, ratio = (svgWidth() - 2 * XPAD) / width, fudge = 0.0001;
		unzoombtn.classList.remove("hide");
		each(function (e) {
			var a = child(e, "rect"), t = child(e, "text"), ex = num(a, "x"), ew = num(a, "width");
			var upstack = inverted ? num(a, "y") < ymin : num(a, "y") > ymin;
			if (upstack) {
				if (ex <= xmin && ex + ew + fudge >= xmax) { // an ancestor: full width, dimmed
					e.classList.add("parent");
					save(a, "x"); save(a, "width"); save(t, "x");
					a.setAttribute("x", XPAD);
					a.setAttribute("width", svgWidth() - 2 * XPAD);
					updateText(e);
				} else e.classList.add("hide");
			} else if (ex < xmin || ex + fudge >= xmax) {
				e.classList.add("hide");
			} else { // the frame itself and what it called: stretched
				save(a, "x"); save(a, "width"); save(t, "x");
				a.setAttribute("x", (ex - xmin) * ratio + XPAD);
				a.setAttribute("width", ew * ratio);
				updateText(e);
			}
		});
	}
	function unzoom() {
		unzoombtn.classList.add("hide");
		each(function (e) {
			var a = child(e, "rect"), t = child(e, "text");
			if (!a.hasAttribute("_orig_x") && !e.classList.contains("hide")) return;
			e.classList.remove("parent", "hide");
			restore(a, "x"); restore(a, "width"); restore(t, "x");
			updateText(e);
		});
	}
	// a frame's count: the number that opens its tooltip's final group
	function countOf(text) {
		var m = / \(([0-9,]+)[^()]*\)$/.exec(text);
		return m ? parseFloat(m[1].replace(/,/g, "")) : 0;
	}
	function resetSearch() {
		each(function (e) { restore(child(e, "rect"), "fill"); });
		searching = false;
		clearbtn.classList.add("hide");
		matchedtxt.classList.add("hide");
	}
	// "Reset search": no term, no colours, an empty field
	function clearSearch() {
		term = null;
		if (field) field.value = "";
		resetSearch();
	}
	// Matched: the counts of the matching frames, a match inside a counted one not counted
	// again (frames come in pre-order, so a frame's subtree follows it), over the root's.
	function search(t) {
		if (t !== undefined) term = t;
		if (term === null) return null;
		var re;
		try { re = new RegExp(term, ignorecase ? "i" : ""); }
		catch (err) { details.nodeValue = "Search: " + err.message; return null; }
		resetSearch();
		if (field && field.value !== term) field.value = term;
		clearbtn.classList.remove("hide");
		var total = 0, matched = 0, inside = false, insideKey = 0;
		each(function (e) {
			var text = tooltip(e), r = child(e, "rect"), count = countOf(text);
			var key = inverted ? num(r, "y") : -num(r, "y"), hit = re.test(text);
			if (count > total) total = count;
			if (hit) { save(r, "fill"); r.setAttribute("fill", MATCH); searching = true; }
			if (inside && key > insideKey) return;
			inside = hit;
			if (hit) { matched += count; insideKey = key; }
		});
		if (!searching) { // said, so that a search as one types shows it found nothing
			matchedtxt.classList.remove("hide");
			matchedtxt.firstChild.nodeValue = "Matched: nothing";
			return null;
		}
		var pct = total ? 100 * matched / total : 0;
		var shown = pct === 100 ? "100" : pct.toFixed(1);
		matchedtxt.classList.remove("hide");
		matchedtxt.firstChild.nodeValue = "Matched: " + shown + "%";
		return shown;
	}
	// The search field: an XHTML input put into the drawn box (a foreignObject made here, so
	// the file holds only SVG); it searches as one types. Without foreignObject, the box asks
	// with prompt() as flamegraph.pl does.
	function makeField() {
		if (typeof SVGForeignObjectElement === "undefined") return null;
		var box = child(searchbox, "rect"), SVGNS = "http://www.w3.org/2000/svg";
		var fo = svg.ownerDocument.createElementNS(SVGNS, "foreignObject");
		["x", "y", "width", "height"].forEach(function (a) { fo.setAttribute(a, box.getAttribute(a)); });
		var input = svg.ownerDocument.createElementNS("http://www.w3.org/1999/xhtml", "input");
		input.setAttribute("id", pfx + "searchfield");
		input.setAttribute("type", "text");
		input.setAttribute("placeholder", child(searchbox, "text").textContent);
		input.setAttribute("aria-label", "Search the frames: a regular expression");
		input.setAttribute("autocomplete", "off");
		input.setAttribute("spellcheck", "false");
		fo.appendChild(input);
		searchbox.appendChild(fo);
		child(searchbox, "text").classList.add("hide");
		input.addEventListener("input", function () {
			clearTimeout(pending);
			pending = setTimeout(function () { if (input.value) search(input.value); else clearSearch(); }, 120);
		});
		input.addEventListener("keydown", function (e) {
			if (e.key === "Enter") { clearTimeout(pending); if (input.value) search(input.value); else clearSearch(); }
			else if (e.key === "Escape") { clearTimeout(pending); clearSearch(); input.blur(); }
			else if (e.ctrlKey && (e.key === "i" || e.key === "I")) toggleIgnorecase();
			else return;
			e.preventDefault();
			e.stopPropagation();
		});
		input.addEventListener("focus", function () { searchbox.classList.add("focus"); });
		input.addEventListener("blur", function () { searchbox.classList.remove("focus"); });
		return input;
	}
	function searchPrompt() {
		if (field) { field.focus(); field.select(); return; }
		var t = prompt("Enter a search term (regexp allowed, eg: ^com\\.example\\.)" +
			(ignorecase ? ", ignoring case" : "") + "\nPress Ctrl-i to toggle case sensitivity", term || "");
		if (t != null && t !== "") search(t);
	}
	// a key the page's own fields take (a filter box, the graph's search field)
	function typing(e) {
		var t = e.target;
		return t && t !== svg.ownerDocument.body && (t.isContentEditable || /^(input|textarea|select)$/i.test(t.localName));
	}
	function toggleIgnorecase() {
		ignorecase = !ignorecase;
		icbtn.classList.toggle("show", ignorecase);
		if (searching) search();
	}
	svg.addEventListener("click", function (e) {
		var g = frameOf(e.target);
		if (g) {
			if (g.classList.contains("parent")) unzoom();
			zoom(g);
		} else if (unzoombtn.contains(e.target)) unzoom();
		else if (clearbtn.contains(e.target)) { clearSearch(); if (field) field.focus(); }
		else if (searchbox.contains(e.target)) { if (e.target !== field) searchPrompt(); }
		else if (icbtn.contains(e.target)) toggleIgnorecase();
	});
	// the controls are buttons for the keyboard too (Tab to one, Enter or Space)
	svg.addEventListener("keydown", function (e) {
		var c = e.target;
		if ((e.key === "Enter" || e.key === " ") && c !== field && c.classList && c.classList.contains("tc-ctl")) {
			e.preventDefault();
			e.stopPropagation();
			c.dispatchEvent(new MouseEvent("click", { bubbles: true }));
		}
	});
	svg.addEventListener("mouseover", function (e) {
		var g = frameOf(e.target);
		if (g) details.nodeValue = "Function: " + tooltip(g);
	});
	svg.addEventListener("mouseout", function (e) {
		if (frameOf(e.target)) details.nodeValue = " ";
	});
	window.addEventListener("keydown", function (e) {
		if (typing(e)) return; // keys typed into a field are the field's
		if (!standalone && !svg.matches(":hover")) return; // the graph under the pointer
		if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70) || (e.key === "/" && !e.ctrlKey && !e.altKey &&
			!e.metaKey)) { e.preventDefault(); searchPrompt(); }
		else if (e.ctrlKey && e.keyCode === 73) { e.preventDefault(); toggleIgnorecase(); }
		else if (e.key === "Escape" && !unzoombtn.classList.contains("hide")) { e.preventDefault(); unzoom(); }
	});
	field = makeField();
	// open on main's tower when the writer marked it (data-open: the first thread, with less than a
	// third of the time): busy daemons would leave it a sliver; Reset zoom shows every thread
	var open = frames.querySelector("g[data-open]");
	if (open) {
		zoom(open);
		details.nodeValue = "Zoomed on " + tooltip(open) + ": Reset zoom (or Escape) shows every thread";
	}
	svg.tcFlame = { zoom: zoom, unzoom: unzoom, search: search, resetSearch: clearSearch,
		toggleIgnorecase: toggleIgnorecase };
	return svg.tcFlame;
}
