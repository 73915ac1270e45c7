// The report's item browser: reads the items from the JSON element and draws one page of rows at a
// time. Every text goes in through textContent, never as markup.
(function () {
  "use strict";
  var source = document.getElementById("items-data");
  var root = document.getElementById("items");
  if (!source || !root) { return; }
  var items = JSON.parse(source.textContent);
  var PAGE = 50;
  var page = 0;
  var shown = items;
  var filter = root.querySelector("#item-filter");
  var agent = root.querySelector("#item-agent");
  var search = root.querySelector("#item-search");
  var body = root.querySelector("#item-rows");
  var count = root.querySelector("#item-count");
  var prev = root.querySelector("#item-prev");
  var next = root.querySelector("#item-next");

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }

  function keep(item) {
    var f = filter.value;
    if (f === "rejected" && item.status !== "rejected") { return false; }
    if (f === "unscored" && item.unscored.length === 0) { return false; }
    if (f === "flipped" && !item.flip) { return false; }
    if (f === "disagree" && !item.disagrees) { return false; }
    if (agent && agent.value && item.agent !== agent.value) { return false; }
    var q = search.value.trim().toLowerCase();
    if (q && exact) { return item.id.toLowerCase() === q; }
    if (q) {
      var text = [item.id, item.question, item.answer, item.reason].join(" ").toLowerCase();
      if (text.indexOf(q) < 0) { return false; }
    }
    return true;
  }

  function block(parent, label, text) {
    if (text === undefined || text === null || text === "") { return; }
    parent.appendChild(el("h4", label));
    parent.appendChild(el("p", text, "reason"));
  }

  function details(item) {
    var box = el("div", null, "item-details");
    block(box, "Question", item.question);
    block(box, "Answer", item.answer);
    (item.contexts || []).forEach(function (c, i) { block(box, "Context " + (i + 1), c); });
    block(box, "Reference", item.reference);
    block(box, "Judge's reason", item.reason);
    block(box, "Judge's reply", item.reply);
    if (item.human !== null && item.human !== undefined) { block(box, "Human grade", item.human); }
    item.unscored.forEach(function (u) { block(box, "Unscored", u); });
    var metrics = Object.keys(item.thelma || {});
    if (metrics.length) {
      block(box, "THELMA scores", metrics.map(function (m) {
        return m.toUpperCase() + " " + Number(item.thelma[m]).toFixed(2);
      }).join(", "));
    }
    return box;
  }

  function draw() {
    body.textContent = "";
    var start = page * PAGE;
    shown.slice(start, start + PAGE).forEach(function (item) {
      var tr = el("tr", null, "item-row status-" + item.status);
      tr.dataset.id = item.id;
      tr.appendChild(el("td", item.id));
      tr.appendChild(el("td", item.agent || "—"));
      tr.appendChild(el("td", item.score === null ? "—" : item.score, "num"));
      var status = el("td");
      status.appendChild(el("span", item.status, "badge badge-" + item.status));
      if (item.flip) { status.appendChild(el("span", item.flip === "lost" ? "flipped: lost" : "flipped: gained", "badge badge-flip")); }
      if (item.disagrees) { status.appendChild(el("span", "disagrees with humans", "badge badge-disagree")); }
      tr.appendChild(status);
      tr.appendChild(el("td", item.question || "—", "clip"));
      tr.appendChild(el("td", item.reason || (item.unscored[0] || "—"), "clip"));
      tr.tabIndex = 0;
      var open = null;
      function toggle() {
        if (open) { open.remove(); open = null; return; }
        open = el("tr", null, "item-open");
        var td = el("td");
        td.colSpan = 6;
        td.appendChild(details(item));
        open.appendChild(td);
        tr.after(open);
      }
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") { toggle(); } });
      body.appendChild(tr);
    });
    var end = Math.min(start + PAGE, shown.length);
    count.textContent = shown.length === 0 ? "no item matches" :
      "items " + (start + 1) + "–" + end + " of " + shown.length + " (of " + items.length + " in the run), worst first";
    prev.disabled = page === 0;
    next.disabled = end >= shown.length;
  }

  var exact = false;  // the search names one item's id: that item alone

  function apply() {
    var q = search.value.trim().toLowerCase();
    exact = q !== "" && items.some(function (item) { return item.id.toLowerCase() === q; });
    shown = items.filter(keep);
    page = 0;
    draw();
  }

  filter.addEventListener("change", apply);
  if (agent) { agent.addEventListener("change", apply); }
  search.addEventListener("input", apply);
  prev.addEventListener("click", function () { if (page > 0) { page -= 1; draw(); } });
  next.addEventListener("click", function () { if ((page + 1) * PAGE < shown.length) { page += 1; draw(); } });
  document.querySelectorAll("a[data-item]").forEach(function (a) {
    a.addEventListener("click", function () {
      filter.value = "all"; if (agent) { agent.value = ""; }
      search.value = a.dataset.item; apply();
    });
  });
  apply();
}());
