// strata web UI: sortable tables and an opt-in auto-refresh. The pages
// work without this script.
(function () {
  "use strict";
  function cellValue(td) {
    var v = td.getAttribute("data-sort");
    if (v === null) v = td.textContent.trim();
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  function sortBy(table, th, col) {
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      if (!a.cells[col] || !b.cells[col]) return 0;
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function initSort() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.tHead || !table.tBodies.length) return;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        th.addEventListener("click", function () { sortBy(table, th, col); });
      });
    });
  }
  function initRefresh() {
    var box = document.getElementById("autorefresh");
    if (!box) return;
    var secs = Number(box.getAttribute("data-seconds")) || 5;
    var key = "strata.autorefresh." + location.pathname;
    box.checked = localStorage.getItem(key) === "1";
    var timer = null;
    function arm() {
      if (timer) clearTimeout(timer);
      timer = box.checked ? setTimeout(function () { location.reload(); }, secs * 1000) : null;
    }
    box.addEventListener("change", function () {
      localStorage.setItem(key, box.checked ? "1" : "0");
      arm();
    });
    arm();
  }
  document.addEventListener("DOMContentLoaded", function () { initSort(); initRefresh(); });
})();
