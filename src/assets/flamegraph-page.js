(function () {
	function all() {
		var s = document.querySelectorAll("svg[data-tc-flame]");
		for (var i = 0; i < s.length; i++) tcFlame(s[i]);
	}
	if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", all);
	else all();
})();
