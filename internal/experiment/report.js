// Sorting by a column: click its heading (again to reverse). The page
// reads the same without it. Figures sort by value, units included
// ("20.4 MB" above "900 kB"); other cells as text.
(function () {
  "use strict";
  var units = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };
  function key(text) {
    var m = /^\(?([+-]?\d+(?:\.\d+)?)\s*(B|kB|MB|GB|TB)?/.exec(text.trim());
    if (!m) return null;
    return parseFloat(m[1]) * (m[2] ? units[m[2]] : 1);
  }
  function sortBy(table, th, col) {
    var body = table.tBodies[0];
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col] ? a.cells[col].textContent : "";
      var y = b.cells[col] ? b.cells[col].textContent : "";
      var kx = key(x), ky = key(y);
      if (kx !== null && ky !== null) return (kx - ky) * dir;
      if (kx !== null) return -1;
      if (ky !== null) return 1;
      return x.localeCompare(y) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
  }
  document.querySelectorAll("table.data").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.title = "sort by " + th.textContent;
      th.addEventListener("click", function () { sortBy(table, th, col); });
    });
  });
})();
