// The report's item browser: reads the items from the JSON element and draws one page of rows at a
// time. Every item carries its scores by name (value, scale, pass call, reason, or the Unscored
// cause), whatever evaluator gave them. Every text goes in through textContent, never as markup.
(function () {
  "use strict";
  var source = document.getElementById("items-data");
  var root = document.getElementById("items");
  if (!source || !root) { return; }
  var items = JSON.parse(source.textContent);
  // the page leaves out what a score holds by default, and a reason the score before it gave
  items.forEach(function (item) {
    var before = null;
    item.scores.forEach(function (s) {
      if (s.same_reason) { s.reason = before.reason; }
      ["passed", "reason", "cause"].forEach(function (k) { if (s[k] === undefined) { s[k] = null; } });
      s.binary = s.binary === true;
      s.higher_is_better = s.higher_is_better !== false;
      if (s.value === undefined) { s.value = null; }
      before = s;
    });
    var scored = item.scores.filter(function (s) { return s.value !== null; });
    // the row's reason: a failed score's first, else the first scored one's
    var why = scored.filter(function (s) { return s.reason && s.passed === false; })[0] ||
      scored.filter(function (s) { return s.reason; })[0];
    item.reason = why ? why.reason : (item.unscored[0] || null);
  });
  var PAGE = 50;
  var page = 0;
  var shown = items;
  var filter = root.querySelector("#item-filter");
  var agent = root.querySelector("#item-agent");
  var scoreSelect = root.querySelector("#item-score");
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

  function key(s) { return s.family + "/" + s.name; }

  // the score names of the run, in the order they first appear; a name two families share is
  // shown with its family
  var names = [];
  var families = {};
  items.forEach(function (item) {
    item.scores.forEach(function (s) {
      if (names.indexOf(key(s)) < 0) { names.push(key(s)); }
      (families[s.name] = families[s.name] || {})[s.family] = true;
    });
  });
  function label(s) { return Object.keys(families[s.name]).length > 1 ? key(s) : s.name; }
  if (scoreSelect) {
    names.forEach(function (k) {
      var family = k.slice(0, k.indexOf("/")), name = k.slice(k.indexOf("/") + 1);
      var option = el("option", label({family: family, name: name}));
      option.value = k;
      scoreSelect.appendChild(option);
    });
  }

  function number(v) {
    return Number.isInteger(v) ? String(v) : Number(v.toPrecision(3)).toString();
  }

  function value(s) {
    if (s.value === null) { return "unscored (" + s.cause + ")"; }
    return number(s.value);
  }

  function scale(s) {
    return number(s.low) + "–" + number(s.high) + (s.binary ? " (yes/no)" : "") +
      (s.higher_is_better ? "" : ", lower is better");
  }

  function chosen(item) {
    var k = scoreSelect ? scoreSelect.value : "";
    if (!k) { return null; }
    for (var i = 0; i < item.scores.length; i++) { if (key(item.scores[i]) === k) { return item.scores[i]; } }
    return undefined;
  }

  function worth(s) {
    if (!s || s.value === null) { return -1; }
    var share = (s.value - s.low) / (s.high - s.low);
    return s.higher_is_better ? share : 1 - share;
  }

  function keep(item) {
    var f = filter.value;
    if (f === "failed" && item.status !== "failed") { return false; }
    if (f === "unscored" && item.unscored.length === 0) { return false; }
    if (f === "flipped" && !item.flip) { return false; }
    if (f === "disagree" && !item.disagrees) { return false; }
    if (agent && agent.value && item.agent !== agent.value) { return false; }
    if (chosen(item) === undefined) { return false; }
    var q = search.value.trim().toLowerCase();
    if (q && exact) { return item.id.toLowerCase() === q; }
    if (q) {
      var text = [item.id, item.question, item.answer, item.reason].concat(item.scores.map(function (s) {
        return s.name + " " + (s.reason || "") + " " + (s.cause || "");
      })).join(" ").toLowerCase();
      if (text.indexOf(q) < 0) { return false; }
    }
    return true;
  }

  function block(parent, label, text) {
    if (text === undefined || text === null || text === "") { return; }
    parent.appendChild(el("h4", label));
    parent.appendChild(el("p", text, "reason"));
  }

  function scoreTable(item) {
    var table = el("table", null, "item-scores");
    var head = el("tr");
    ["evaluator", "score", "value", "scale", "pass", "reason or cause"].forEach(function (h) { head.appendChild(el("th", h)); });
    table.appendChild(head);
    item.scores.forEach(function (s) {
      var tr = el("tr", null, "score-row " + (s.value === null ? "score-unscored" : "score-scored"));
      tr.dataset.score = key(s);
      tr.appendChild(el("td", s.family));
      tr.appendChild(el("td", s.name, "score-name"));
      tr.appendChild(el("td", value(s), "num score-value"));
      tr.appendChild(el("td", scale(s), "score-scale"));
      var pass = el("td", null, "score-pass");
      if (s.passed !== null) {
        pass.appendChild(el("span", s.passed ? "passed" : "failed", "badge badge-" + (s.passed ? "passed" : "failed")));
      } else { pass.textContent = "—"; }
      tr.appendChild(pass);
      var why = el("td", null, "score-reason");
      why.appendChild(el("span", s.value === null ? s.cause + ": " + (s.reason || "") : (s.reason || "—"), "reason"));
      tr.appendChild(why);
      table.appendChild(tr);
    });
    return table;
  }

  function trajectory(box, title, steps, cls) {
    box.appendChild(el("h4", title));
    var list = el("ol", null, cls);
    steps.forEach(function (s) {
      var li = el("li", null, "step step-" + s.kind);
      li.appendChild(el("span", s.label, "badge step-kind"));
      if (s.text) { li.appendChild(el(s.kind === "tool_call" ? "code" : "p", s.text, "reason step-text")); }
      list.appendChild(li);
    });
    box.appendChild(list);
  }

  function conversation(box, item) {
    var c = item.conversation || {};
    box.appendChild(el("h4", "Conversation, turn by turn (" + item.turns.length + " turns)"));
    if (c.persona) { box.appendChild(el("p", "Persona: " + c.persona, "reason")); }
    if (c.goal) {
      box.appendChild(el("p", "Goal: " + c.goal + (c.goal_met === true ? " (met)" : c.goal_met === false ? " (not met)" : ""), "reason conversation-goal"));
    }
    if (c.error) { box.appendChild(el("p", "Stopped: " + c.error, "reason")); }
    var list = el("ol", null, "turns");
    item.turns.forEach(function (t, i) {
      var li = el("li", null, "turn");
      li.appendChild(el("span", "turn " + (i + 1) + (t.history ? ", sent with " + t.history + " earlier messages" : ""), "muted"));
      var user = el("div", null, "turn-user");
      user.appendChild(el("strong", "user"));
      user.appendChild(el("p", t.user, "reason"));
      li.appendChild(user);
      var answer = el("div", null, "turn-answer");
      answer.appendChild(el("strong", "assistant"));
      answer.appendChild(el("p", t.answer === null || t.answer === undefined ? "(no answer)" : t.answer, "reason"));
      li.appendChild(answer);
      (t.contexts || []).forEach(function (ctx, k) { li.appendChild(el("p", "context " + (k + 1) + ": " + ctx, "reason muted turn-context")); });
      list.appendChild(li);
    });
    box.appendChild(list);
  }

  function details(item) {
    var box = el("div", null, "item-details");
    block(box, "Question", item.question);
    if (item.trajectory) { trajectory(box, "Trajectory, step by step", item.trajectory, "trajectory"); }
    if (item.reference_trajectory) { trajectory(box, "Reference trajectory", item.reference_trajectory, "trajectory reference"); }
    if (item.turns) { conversation(box, item); }
    block(box, "Answer", item.answer);
    (item.contexts || []).forEach(function (c, i) { block(box, "Context " + (i + 1), c); });
    block(box, "Reference", item.reference);
    if (item.scores.length) {
      box.appendChild(el("h4", "Scores"));
      box.appendChild(scoreTable(item));
    }
    item.unscored.forEach(function (u) { block(box, "Unscored", u); });
    item.replies.forEach(function (r) { block(box, "Judge's reply (" + r.family + ")", r.text); });
    if (item.human) {
      block(box, "Human", item.human.score + " " + number(item.human.value) +
        (item.human.passed === true ? " (passes)" : item.human.passed === false ? " (does not pass)" : ""));
    }
    return box;
  }

  function summary(item) {
    var s = chosen(item);
    if (s) { return value(s); }
    if (!item.scores.length) { return "—"; }
    return item.scores.map(function (s) { return label(s) + " " + (s.value === null ? "unscored" : number(s.value)); }).join(", ");
  }

  function draw() {
    body.textContent = "";
    var start = page * PAGE;
    shown.slice(start, start + PAGE).forEach(function (item) {
      var tr = el("tr", null, "item-row status-" + item.status);
      tr.dataset.id = item.id;
      tr.appendChild(el("td", item.id));
      tr.appendChild(el("td", item.agent || "—"));
      tr.appendChild(el("td", summary(item), "clip item-score"));
      var status = el("td");
      var inc = item.incomplete;
      status.appendChild(el("span", item.status === "incomplete" && inc ?
        "incomplete: " + inc.k + " of " + inc.n + " unscored (" + inc.cause + ")" : item.status, "badge badge-" + item.status));
      if (item.status !== "unscored" && item.status !== "incomplete" && item.unscored.length) { status.appendChild(el("span", item.unscored.length + " unscored", "badge badge-unscored")); }
      if (item.flip) { status.appendChild(el("span", item.flip === "lost" ? "flipped: lost" : "flipped: gained", "badge badge-flip")); }
      if (item.disagrees) { status.appendChild(el("span", "disagrees with humans", "badge badge-disagree")); }
      tr.appendChild(status);
      tr.appendChild(el("td", item.question || "—", "clip"));
      tr.appendChild(el("td", item.reason || "—", "clip"));
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
    if (scoreSelect && scoreSelect.value) {  // worst first on the chosen score, unscored first
      var order = new Map(shown.map(function (item, i) { return [item, i]; }));
      shown.sort(function (a, b) { return worth(chosen(a)) - worth(chosen(b)) || order.get(a) - order.get(b); });
    }
    page = 0;
    draw();
  }

  filter.addEventListener("change", apply);
  if (agent) { agent.addEventListener("change", apply); }
  if (scoreSelect) { scoreSelect.addEventListener("change", apply); }
  search.addEventListener("input", apply);
  prev.addEventListener("click", function () { if (page > 0) { page -= 1; draw(); } });
  next.addEventListener("click", function () { if ((page + 1) * PAGE < shown.length) { page += 1; draw(); } });
  document.querySelectorAll("a[data-item]").forEach(function (a) {
    a.addEventListener("click", function () {
      filter.value = "all"; if (agent) { agent.value = ""; } if (scoreSelect) { scoreSelect.value = ""; }
      search.value = a.dataset.item; apply();
    });
  });
  apply();
}());
