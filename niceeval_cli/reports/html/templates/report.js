(function () {
  "use strict";
  // Attempt details are rendered from the embedded JSON with textContent only: nothing from the
  // data is ever parsed as HTML, so a reply holding markup or event handlers stays text.
  var data = JSON.parse(document.getElementById("niceeval-data").textContent);
  var list = document.getElementById("attempts");
  var items = Array.prototype.slice.call(list.children);

  var escaped = niceevalEscaper(data.safe);  // safe_text.js
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = escaped(text);
    return e;
  }
  function pretty(text) {
    if (typeof text !== "string") return JSON.stringify(text, null, 2);
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }
  var shownId = "";  // the attempt whose details are being built
  var CUT = /\u2026 \[\+\d+ chars\]/;  // how the store's read marks a text cut at the report's limit
  function block(parent, label, text) {
    if (text === undefined || text === null || text === "") return;
    var wrap = el("div", "block");
    wrap.appendChild(el("div", "block-label", label));
    wrap.appendChild(el("pre", null, text));
    if (typeof text === "string" && CUT.test(text)) {
      wrap.appendChild(el("p", "limit", "Cut at " + data.text_limit + " characters in this report; the whole " +
        "text: niceeval view @" + shownId));
    }
    parent.appendChild(wrap);
  }
  function facts(parent, pairs) {
    var dl = el("dl", "facts");
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null) return;
      var d = el("div");
      d.appendChild(el("dt", null, p[0]));
      d.appendChild(el("dd", null, p[1]));
      dl.appendChild(d);
    });
    parent.appendChild(dl);
  }
  function num(x) {
    if (x === null || x === undefined) return "\u2014";
    return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
  }
  function measure(m, t) {  // 0.62 < 0.80 required
    if (m === null || m === undefined) return t == null ? null : "\u2014 (" + t.toFixed(2) + " required)";
    if (t === null || t === undefined) return m.toFixed(2);
    return m.toFixed(2) + (m >= t ? " \u2265 " : " < ") + t.toFixed(2) + " required";
  }
  var columns = data.columns, values = data.values;
  function result(row) {  // a results row: 1-based indexes into the table of distinct values, 0 = empty;
    var r = {};              // a long text is written in the row itself
    for (var i = 0; i < columns.length; i++) {
      r[columns[i]] = typeof row[i] === "string" ? row[i] : row[i] ? values[row[i] - 1] : null;
    }
    r.name = (r.group_name ? r.group_name + " / " : "") + (r.label || r.key);
    r.measure = measure(r.measurement, r.threshold);
    if ((r.role === "score" || r.role === "gate+score") && r.weight != null) {
      r.points = num(r.contribution) + " / " + num(r.weight);
    }
    r.at = r.source_file ? r.source_file + ":" + (r.source_line || "?") : null;
    return r;
  }
  function assertion(r) {
    var li = el("li", "assertion s-" + r.state);
    var head = el("div", "assertion-head");
    head.appendChild(el("span", "badge s-" + r.state, r.state));
    head.appendChild(el("span", "label", r.name));
    if (r.measure) head.appendChild(el("span", "measure", r.measure));
    if (r.points) head.appendChild(el("span", "points", r.points + " points"));
    var tags = [];
    if (r.role && r.role !== "record") tags.push(r.role);
    if (r.or_stop) tags.push("or_stop");
    if (tags.length) head.appendChild(el("span", "dim", "[" + tags.join(", ") + "]"));
    li.appendChild(head);
    facts(li, [["key", r.key], ["match", r.match_name], ["reason", r.reason], ["at", r.at]]);
    block(li, "explanation", r.explanation);
    block(li, "evidence", r.evidence && pretty(r.evidence));
    block(li, "judge reasoning", r.judge_audit && pretty(r.judge_audit));
    block(li, "extras", r.extras && pretty(r.extras));
    return li;
  }
  function transcript(parent, turns) {
    var ol = el("ol", "turns");
    turns.forEach(function (t) {
      var li = el("li", "turn");
      li.appendChild(el("div", "block-label", "turn " + t.ordinal + (t.session ? " · session " + t.session : "") +
        (t.status ? " · " + t.status : "")));
      block(li, "input", t.input);
      block(li, "reply", t.message);
      (t.events || []).forEach(function (ev) {
        var label = ev.kind + (ev.name ? " " + ev.name : "") + (ev.status ? " (" + ev.status + ")" : "");
        var text = [ev.text, ev.input && "input: " + pretty(ev.input), ev.output && "output: " + pretty(ev.output)]
          .filter(Boolean).join("\n");
        block(li, label, text || "—");
      });
      ol.appendChild(li);
    });
    var wrap = el("div", "block");
    wrap.appendChild(el("div", "block-label", "transcript"));
    wrap.appendChild(ol);
    parent.appendChild(wrap);
  }
  function render(item) {
    if (item.getAttribute("data-rendered")) return;
    item.setAttribute("data-rendered", "1");
    var a = data.attempts[Number(item.getAttribute("data-i"))];
    var box = item.querySelector(".detail");
    if (a.omitted) {  // past the page's budget for details (docs/reports.md, "Size")
      box.appendChild(el("p", "limit", "This report does not hold this attempt's details (it embeds the " +
        "details of the first attempts, worst first, up to its size limit). See them with: niceeval view @" + a.id));
      return;
    }
    shownId = a.id;
    facts(box, [["attempt", a.id], ["score", a.score], ["reason", a.reason], ["stopped", a.stop_cause],
      ["case", a.case], ["reused from run", a.reused_from], ["started", a.started_at],
      ["duration", a.duration_ms != null ? a.duration_ms + " ms" : null],
      ["tokens in / out", a.input_tokens != null ? a.input_tokens + " / " + a.output_tokens : null],
      ["judge tokens", a.judge_tokens || null], ["cost", a.cost_usd != null ? "$" + a.cost_usd : null],
      ["estimated cost", a.estimated_cost_usd != null ? "$" + a.estimated_cost_usd : null],
      ["judge cost", a.judge_cost_usd != null ? "$" + a.judge_cost_usd : null],
      ["judge estimated cost", a.judge_estimated_cost_usd != null ? "$" + a.judge_estimated_cost_usd : null]]);
    block(box, "error", a.error);
    block(box, "traceback", a.traceback);
    block(box, "case value", a.case_value && pretty(a.case_value));
    block(box, "case metadata", a.case_metadata && pretty(a.case_metadata));
    if (a.results.length) {
      var ol = el("ol", "assertions");
      a.results.forEach(function (row) { ol.appendChild(assertion(result(row))); });
      box.appendChild(ol);
      if (a.more_results) box.appendChild(el("p", "limit", a.more_results + " more assertion results not shown " +
        "(this attempt's details reached the report's size limit): niceeval view @" + a.id));
    } else {
      box.appendChild(el("p", "dim", "No assertion results."));
    }
    if (a.turns && a.turns.length) transcript(box, a.turns);
    if (a.more_turns) box.appendChild(el("p", "limit", a.more_turns + " more turns not shown (this attempt's " +
      "details reached the report's size limit): niceeval view @" + a.id));
    block(box, "sandbox", a.sandbox && pretty(a.sandbox));
    block(box, "notes", a.notes && pretty(a.notes));
  }

  if (data.omitted) {  // say once, above the list, what a huge run's page leaves out
    var note = el("p", "limit", "This report embeds the details of the first " +
      (data.attempts.length - data.omitted) + " of " + data.attempts.length + " attempts (worst first) to stay " +
      "small; the other " + data.omitted + " show their summary row only. Every attempt: niceeval view @ATTEMPT_ID.");
    note.id = "details-limit";
    list.parentNode.insertBefore(note, list);
  }

  // Closed attempts are rendered when opened; open ones (failed, errored, unavailable) now,
  // the first slice before the page shows and the rest in later slices.
  list.addEventListener("toggle", function (ev) {
    if (ev.target.open) render(ev.target.parentNode);
  }, true);
  var first = data.first_slice || 60;
  var pending = items.filter(function (li) { return li.firstChild.open; });
  pending.slice(0, first).forEach(render);
  pending = pending.slice(first);
  // Rows past the first ones wait in inert templates; move them in a chunk at a time.
  var later = Array.prototype.slice.call(document.querySelectorAll("template.more-attempts"));
  (function step() {
    if (!pending.length && !later.length) { list.setAttribute("data-complete", "1"); return; }
    setTimeout(function () {
      pending.splice(0, 60).forEach(render);
      var chunk = later.shift();
      if (chunk) {
        var made = Array.prototype.slice.call(chunk.content.children);
        made.forEach(function (li) { items.push(li); filter(li); if (li.firstChild.open) pending.push(li); });
        list.appendChild(chunk.content);
        chunk.parentNode.removeChild(chunk);
      }
      step();
    }, 0);
  })();

  // Case groups whose cases all passed alike start folded; their button shows and hides the cases.
  document.getElementById("matrix").addEventListener("click", function (ev) {
    var button = ev.target.closest("button.expand");
    if (!button) return;
    var open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = button.textContent.replace(open ? "show" : "hide", open ? "hide" : "show");
    Array.prototype.forEach.call(button.closest("tbody").querySelectorAll("tr.case-row"), function (tr) {
      tr.hidden = !open;
    });
  });

  // Filters: state, experiment, tag, eval id text; they hide and show rows, no server needed.
  var form = document.getElementById("filters");
  var count = document.getElementById("shown-count");
  var groups = Array.prototype.slice.call(document.querySelectorAll("#matrix tbody.eval-group"));
  var want = {states: {}, experiment: "", tag: "", text: ""};
  function value(id) { var e = document.getElementById(id); return e ? e.value : ""; }
  function named(tags, evalId) {  // the tag and eval id filters (the matrix follows these two)
    return (!want.tag || JSON.parse(tags).indexOf(want.tag) >= 0) &&  // whole tags: a JSON list
      (!want.text || evalId.toLowerCase().indexOf(want.text) >= 0);
  }
  function keep(state, experiment, tags, evalId) {
    return want.states[state] !== false && (!want.experiment || experiment === want.experiment) &&
      named(tags, evalId);
  }
  function filter(li) { li.hidden = !kept(li); }
  function kept(li) {
    return keep(li.getAttribute("data-state"), li.getAttribute("data-experiment"), li.getAttribute("data-tags"),
      li.getAttribute("data-eval"));
  }
  function shown() {  // rows in the list and kept, plus rows still waiting in templates that will be
    var n = items.filter(function (li) { return !li.hidden; }).length;
    later.forEach(function (t) { Array.prototype.forEach.call(t.content.children, function (li) { n += kept(li); }); });
    return n;
  }
  function apply() {
    want.states = {};
    Array.prototype.forEach.call(form.querySelectorAll("input[name=state]"), function (box) {
      want.states[box.value] = box.checked;
    });
    want.experiment = value("filter-experiment");
    want.tag = value("filter-tag");
    want.text = value("filter-search").trim().toLowerCase();
    items.forEach(filter);
    groups.forEach(function (g) {
      g.hidden = !named(g.getAttribute("data-tags"), g.getAttribute("data-eval"));
    });
    count.textContent = shown() + " of " + data.attempts.length + " attempts shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); });
})();
