(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("review-data").textContent);
  var token = document.querySelector('meta[name="niceeval-token"]').getAttribute("content");
  var items = data.items, at = 0;
  var app = document.getElementById("app");

  var escaped = niceevalEscaper(data.safe);  // safe_text.js
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = escaped(text);
    if (cls) node.className = cls;
    return node;
  }
  function shown(v) { return v === null || v === undefined ? "—" : String(v); }

  function render() {
    app.textContent = "";
    app.appendChild(el("h1", "Review run " + data.run));
    if (!items.length) { app.appendChild(el("p", "Nothing to label here (try --only all).", "dim")); return; }
    var it = items[at];
    app.appendChild(el("p", (at + 1) + " of " + items.length + " · " + it.experiment_id + " · " + it.eval_id + " · @" + it.attempt_id, "meta"));
    app.appendChild(el("h2", (it.label || it.key) + " · " + it.match + " · " + it.state));
    app.appendChild(el("p", "judge: " + shown(it.measurement) + (it.threshold !== null ? " (threshold " + it.threshold + ")" : "")));
    app.appendChild(el("pre", it.explanation || ""));
    app.appendChild(el("h3", "Material"));
    app.appendChild(el("pre", it.material || ""));
    var earlier = el("ul");
    it.labels.forEach(function (l) { earlier.appendChild(el("li", l.value + " by " + l.author + (l.comment ? ": " + l.comment : "") + " (" + l.created_at + ")")); });
    if (it.labels.length) { app.appendChild(el("h3", "Earlier labels")); app.appendChild(earlier); }
    var comment = el("textarea"); comment.id = "comment"; comment.placeholder = "Comment (optional)";
    var scale = el("div", null, "scale");
    it.scale.forEach(function (v, i) {
      var b = el("button", (i < 10 ? "[" + i + "] " : "") + v); b.type = "button"; b.dataset.value = String(v);
      b.addEventListener("click", function () { send(v, comment.value); });
      scale.appendChild(b);
    });
    app.appendChild(el("h3", "Your label"));
    app.appendChild(scale);
    app.appendChild(comment);
    var nav = el("nav");
    var prev = el("button", "← previous"); prev.type = "button"; prev.addEventListener("click", function () { move(-1); });
    var next = el("button", "next →"); next.type = "button"; next.addEventListener("click", function () { move(1); });
    nav.appendChild(prev); nav.appendChild(next); app.appendChild(nav);
    var status = el("p", "", "status"); status.id = "status"; app.appendChild(status);
  }

  function move(step) { at = Math.max(0, Math.min(items.length - 1, at + step)); render(); }

  function send(value, comment) {
    var from = at, it = items[at], status = document.getElementById("status");
    fetch("/labels", {
      method: "POST", headers: {"Content-Type": "application/json", "X-NiceEval-Token": token},
      body: JSON.stringify({attempt_id: it.attempt_id, key: it.key, value: value, comment: comment || null})
    }).then(function (r) { return r.json().then(function (body) { return [r.status, body]; }); })
      .then(function (res) {
        if (res[0] !== 200) { status.textContent = "not saved: " + res[1].error; status.className = "status error"; return; }
        it.labels.push({value: res[1].value, author: res[1].author, comment: comment || null, created_at: "now"});
        var saved = "saved " + res[1].value + " (label " + res[1].id + ")";
        // Move on only from the item labelled: a reply arriving after the reader went elsewhere
        // leaves them (and what they are typing) where they are.
        if (at === from) { if (at < items.length - 1) { move(1); } else { render(); } }
        document.getElementById("status").textContent = saved;
      })
      .catch(function (e) { status.textContent = "not saved: " + e; status.className = "status error"; });
  }

  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "TEXTAREA") return;
    if (e.key === "ArrowRight") { move(1); e.preventDefault(); return; }
    if (e.key === "ArrowLeft") { move(-1); e.preventDefault(); return; }
    if (/^[0-9]$/.test(e.key) && items.length) {
      var v = items[at].scale[Number(e.key)];
      if (v !== undefined) { send(v, (document.getElementById("comment") || {}).value); e.preventDefault(); }
    }
  });
  render();
})();
