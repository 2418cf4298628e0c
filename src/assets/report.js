(function () {
	"use strict";
	// a cell's sort key: the method's name, or the number it shows ("-": below every number)
	function key(td, numeric) {
		var name = td.querySelector(".name");
		var text = (name || td).textContent;
		if (!numeric) return text;
		var v = parseFloat(text);
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
		document.addEventListener("click", function (ev) {
			var a = ev.target.closest ? ev.target.closest("a.to") : null;
			if (a) open(a.getAttribute("href").slice(1));
		});
		if (location.hash) open(decodeURIComponent(location.hash.slice(1)));
	}
	if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
	else init();
})();
