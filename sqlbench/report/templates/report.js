(function () {
  "use strict";
  // Every value from the run is untrusted: it reaches the page through text nodes only.
  var DATA = JSON.parse(document.getElementById("sqlbench-data").textContent);
  var ICONS = { pass: "\u2713", fail: "\u2717", review: "?", error: "!", skipped: "\u2013" };
  var questions = DATA.questions;
  // Previews arrive compact (see html_data._preview): spell out each row's number and mark.
  function expand(p) {
    if (!p || p.differs) return p;
    p.differs = p.rows.map(function () { return false; });
    p.marked.forEach(function (i) { p.differs[i] = true; });
    if (!p.row_numbers) p.row_numbers = p.rows.map(function (_, i) { return i; });
    return p;
  }
  var byId = {};
  var shown = [];
  var selected = null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        if (key === "text") node.textContent = attrs[key];
        else if (key === "className") node.className = attrs[key];
        else node.setAttribute(key, attrs[key]);
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function text(value) {
    if (value === null || value === undefined) return "NULL";
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }
  function pretty(value) {
    // Tool arguments and outputs: strings as written (SQL keeps its lines), objects key by key.
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    if (typeof value === "object" && !Array.isArray(value)) {
      var keys = Object.keys(value);
      if (!keys.length) return "{}";
      return keys.map(function (k) {
        var v = value[k];
        var shown = typeof v === "string" ? v : JSON.stringify(v, null, 2);
        return k + ": " + (shown.indexOf("\n") >= 0 ? "\n" + shown : shown);
      }).join("\n");
    }
    return JSON.stringify(value, null, 2);
  }

  // --- the list ------------------------------------------------------------------------
  var list = document.getElementById("list");
  var fVerdict = document.getElementById("f-verdict");
  var fSpace = document.getElementById("f-space");
  var fTag = document.getElementById("f-tag");
  var fText = document.getElementById("f-text");
  function fillOptions(select, values) {
    values.forEach(function (v) { select.appendChild(el("option", { value: v, text: v })); });
  }
  var spaces = {}, tags = {};
  var rows = [], haystack = [];
  function row(q) {
    return el("li", { "data-id": q.id, "data-verdict": q.decided, role: "option" }, [
      el("span", { className: "icon " + q.decided, title: q.label, text: ICONS[q.decided] || "?" }),
      el("span", { className: "qname", title: q.id, text: q.id }),
      q.human ? el("span", { className: "chip human", text: q.human.carried_from ? "person (carried)" : "person" }) : null,
      q.change ? el("span", { className: "chip " + q.change, text: q.change }) : null,
      q.answer_changed ? el("span", { className: "chip answer", text: "answer" }) : null
    ]);
  }
  // The questions and what is drawn from them; a page of a run in progress calls it again with
  // the questions graded since (see the end of this file).
  function setQuestions(list) {
    questions = list;
    byId = {};
    questions.forEach(function (q, i) { q.index = i; byId[q.id] = q; });
    var newSpaces = [], newTags = [];
    questions.forEach(function (q) {
      if (!spaces[q.space]) { spaces[q.space] = 1; newSpaces.push(q.space); }
      q.tags.forEach(function (t) { if (!tags[t]) { tags[t] = 1; newTags.push(t); } });
    });
    fillOptions(fSpace, newSpaces.sort());
    fillOptions(fTag, newTags.sort());
    rows = questions.map(row);
    haystack = questions.map(function (q) {
      return [q.id, q.question || "", q.reason || "", q.agent_sql || "", q.tags.join(" ")].join("\n").toLowerCase();
    });
  }
  setQuestions(questions);

  function applyFilters() {
    var verdict = fVerdict.value, space = fSpace.value, tag = fTag.value;
    var needle = fText.value.trim().toLowerCase();
    shown = [];
    var fragment = document.createDocumentFragment();
    questions.forEach(function (q, i) {
      var ok = true;
      if (verdict === "@changed") ok = !!q.change;
      else if (verdict === "@answer") ok = q.answer_changed;
      else if (verdict === "@human") ok = !!q.human;
      else if (verdict) ok = q.decided === verdict;
      if (ok && space) ok = q.space === space;
      if (ok && tag) ok = q.tags.indexOf(tag) >= 0;
      if (ok && needle) ok = haystack[i].indexOf(needle) >= 0;
      if (ok) { shown.push(q); fragment.appendChild(rows[i]); }
    });
    list.textContent = "";
    list.appendChild(fragment);
    document.getElementById("count").textContent = shown.length + " of " + questions.length + " questions";
  }
  [fVerdict, fSpace, fTag].forEach(function (s) { s.addEventListener("change", applyFilters); });
  fText.addEventListener("input", applyFilters);
  list.addEventListener("click", function (event) {
    var li = event.target.closest("li");
    if (li) select(li.getAttribute("data-id"), true);
  });
  document.addEventListener("keydown", function (event) {
    var typing = event.target === fText || (event.target.tagName === "INPUT" && event.target !== fText) || event.target.tagName === "TEXTAREA" || event.target.tagName === "SELECT";
    if (event.key === "/" && !typing) { event.preventDefault(); fText.focus(); return; }
    if (event.key === "Escape" && typing) { event.target.blur(); return; }
    if (typing) return;
    var step = (event.key === "ArrowDown" || event.key === "j") ? 1 : (event.key === "ArrowUp" || event.key === "k") ? -1 : 0;
    if (!step || !shown.length) return;
    event.preventDefault();
    var at = selected ? shown.indexOf(selected) : -1;
    var next = shown[Math.min(shown.length - 1, Math.max(0, at + step))];
    select(next.id, true);
  });

  // --- the detail ----------------------------------------------------------------------
  function tokens(sql) { return (sql || "").match(/\s+|[A-Za-z_0-9.]+|'(?:[^']|'')*'|"[^"]*"|./g) || []; }
  function sqlDiff(a, b) {
    // Token-level longest common subsequence: what the agent's SQL drops (del) and adds (ins).
    var x = tokens(a), y = tokens(b);
    var pre = el("pre", { className: "box diff" });
    if (x.length * y.length > 4000000) { pre.textContent = "(too long to diff)"; return pre; }
    var n = x.length, m = y.length, i, j;
    var table = new Array(n + 1);
    for (i = 0; i <= n; i++) table[i] = new Uint32Array(m + 1);
    for (i = n - 1; i >= 0; i--) for (j = m - 1; j >= 0; j--)
      table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    i = 0; j = 0;
    function put(tag, value) {
      var last = pre.lastChild;
      if (last && last.nodeName.toLowerCase() === tag) { last.textContent += value; return; }
      pre.appendChild(tag === "span" ? document.createTextNode(value) : el(tag, { text: value }));
    }
    while (i < n && j < m) {
      if (x[i] === y[j]) { put("span", x[i]); i++; j++; }
      else if (table[i + 1][j] >= table[i][j + 1]) { put("del", x[i]); i++; }
      else { put("ins", y[j]); j++; }
    }
    while (i < n) put("del", x[i++]);
    while (j < m) put("ins", y[j++]);
    return pre;
  }
  function sqlBlock(title, sql, missing) {
    return el("div", null, [el("h3", { text: title }), el("pre", { className: "box", text: sql && sql.trim() ? sql : missing })]);
  }
  function previewPair(q) {
    var left = q.expected, right = q.actual;
    if (!left && !right) return null;
    if (!left || !right) {
      var only = left ? simplePreview("Expected (ground truth)", left, true) : simplePreview("Agent", right, true);
      return el("div", { className: "block" }, [
        el("h3", { text: "Result" }), only,
        el("div", { className: "note", text: left ? "the agent's SQL gave no result" : "no ground-truth result" })
      ]);
    }
    var lc = left ? left.columns : [], rc = right ? right.columns : [];
    var table = el("table", { className: "preview" });
    var head = el("tr");
    head.appendChild(el("th", { colspan: String(lc.length + 1), text: "Expected (ground truth)" }));
    head.appendChild(el("td", { className: "gap" }));
    head.appendChild(el("th", { colspan: String(rc.length + 1), text: "Agent" }));
    table.appendChild(head);
    var names = el("tr");
    names.appendChild(el("th", { text: "#" }));
    lc.forEach(function (c) { names.appendChild(el("th", { text: c })); });
    names.appendChild(el("td", { className: "gap" }));
    names.appendChild(el("th", { text: "#" }));
    rc.forEach(function (c) { names.appendChild(el("th", { text: c })); });
    table.appendChild(names);
    function cells(tr, preview, index, width) {
      if (index === null || index === undefined || !preview) {
        for (var k = 0; k <= width; k++) tr.appendChild(el("td"));
        return;
      }
      var differs = preview.differs[index];
      tr.appendChild(el("td", { className: "rownum" + (differs ? " differs" : ""), text: String(preview.row_numbers[index] + 1) }));
      preview.rows[index].forEach(function (v) {
        tr.appendChild(el("td", { className: (differs ? "differs" : "") + (v === null ? " null" : ""), title: text(v), text: text(v) }));
      });
    }
    q.aligned.forEach(function (pair) {
      var tr = el("tr");
      var differs = (pair[0] !== null && left.differs[pair[0]]) || (pair[1] !== null && right.differs[pair[1]]);
      if (differs) tr.className = "differs";
      cells(tr, left, pair[0], lc.length);
      tr.appendChild(el("td", { className: "gap" }));
      cells(tr, right, pair[1], rc.length);
      table.appendChild(tr);
    });
    function note(name, p) {
      if (!p) return name + ": no result";
      return name + ": " + p.rows.length + " of " + count(p.total_rows, "row") + " shown, " + p.differing_rows + " without a partner";
    }
    return el("div", { className: "block" }, [
      el("h3", { text: "Results side by side (matching rows aligned, rows without a partner marked)" }),
      el("div", { className: "scroll" }, [table]),
      el("div", { className: "note", text: note("expected", left) + " · " + note("agent", right) })
    ]);
  }
  function count(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
  function simplePreview(title, p, mark) {
    if (!p) return el("div", null, [el("h3", { text: title }), el("div", { className: "note", text: "(not previewed)" })]);
    var table = el("table", { className: "preview" });
    var names = el("tr");
    p.columns.forEach(function (c) { names.appendChild(el("th", { text: c })); });
    table.appendChild(names);
    p.rows.forEach(function (row, i) {
      var tr = el("tr");
      var marked = mark && p.differs && p.differs[i] ? "differs " : "";
      row.forEach(function (v) { tr.appendChild(el("td", { className: marked + (v === null ? "null" : ""), text: text(v) })); });
      table.appendChild(tr);
    });
    return el("div", null, [el("h3", { text: title + " (" + count(p.total_rows, "row") + ")" }), el("div", { className: "scroll" }, [table])]);
  }
  function variantBlock(q) {
    if (!q.variant) return null;
    var v = q.variant;
    var parts = [el("h3", { text: "Data variant #" + v.number + " (" + v.fingerprint + "): the tables both queries read" })];
    v.tables.forEach(function (t) { parts.push(simplePreview(t.name, t)); });
    return el("div", { className: "block", id: "variant" }, parts);
  }
  function trace(q) {
    if (!q.tool_calls.length) return null;
    var ol = el("ol", { className: "trace" });
    q.tool_calls.forEach(function (call) {
      ol.appendChild(el("li", null, [
        el("code", { text: call.name }),
        call.duration_ms !== null && call.duration_ms !== undefined ? el("span", { className: "note", text: " " + Math.round(call.duration_ms) + " ms" }) : null,
        el("div", { className: "note", text: "arguments" }),
        el("pre", { className: "box", text: pretty(call.arguments) }),
        call.output !== null && call.output !== undefined ? el("div", { className: "note", text: "output" }) : null,
        call.output !== null && call.output !== undefined ? el("pre", { className: "box", text: pretty(call.output) }) : null,
        call.error ? el("div", { className: "err", text: "error: " + call.error }) : null
      ]));
    });
    return el("div", { className: "block" }, [el("h3", { text: "Trace (" + q.tool_calls.length + " tool calls, in order)" }), ol]);
  }
  function metrics(q) {
    var names = Object.keys(q.metrics);
    if (!names.length && !q.assertions.length) return null;
    var table = el("table", { className: "small" });
    names.forEach(function (name) {
      var m = q.metrics[name];
      var score = m.score === null || m.score === undefined ? "n/a" : (Math.round(m.score * 100) + "%");
      var extra = m.error || m.explanation || (m.detail ? JSON.stringify(m.detail) : "");
      table.appendChild(el("tr", null, [el("th", { text: name }), el("td", { text: score + (m.band ? " (" + m.band + ")" : "") }), el("td", { className: "note", text: extra })]));
    });
    q.assertions.forEach(function (a) {
      table.appendChild(el("tr", null, [el("th", { text: "assertion: " + a.label }), el("td", { text: a.passed ? "passed" : "failed" }), el("td", { className: "note", text: a.reason || text(a.actual) })]));
    });
    return el("div", { className: "block" }, [el("h3", { text: "Metrics" }), table]);
  }
  function reviewBox(q) {
    if (!DATA.viewer || q.verdict === "skipped") return null;
    var note = el("input", { type: "text", placeholder: "note (optional)", "aria-label": "review note" });
    var status = el("span", { className: "note" });
    function send(verdict) {
      status.textContent = "saving…";
      fetch(DATA.viewer.review_url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Sqlbench-Token": DATA.viewer.token },
        body: JSON.stringify({ run: DATA.run.id, question: q.id, verdict: verdict, note: note.value })
      }).then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.error || response.statusText);
          location.hash = "q=" + encodeURIComponent(q.id);
          location.reload();
        });
      }).catch(function (err) { status.textContent = String(err.message || err); });
    }
    function dispute() {
      if (!note.value.trim()) { status.textContent = "say why the ground truth is wrong in the note"; return; }
      status.textContent = "saving…";
      fetch(DATA.viewer.review_url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Sqlbench-Token": DATA.viewer.token },
        body: JSON.stringify({ run: DATA.run.id, question: q.id, dispute: note.value })
      }).then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.error || response.statusText);
          location.hash = "q=" + encodeURIComponent(q.id);
          location.reload();
        });
      }).catch(function (err) { status.textContent = String(err.message || err); });
    }
    var pass = el("button", { type: "button", id: "review-pass", text: "Decide pass" });
    var fail = el("button", { type: "button", id: "review-fail", text: "Decide fail" });
    var disputeButton = el("button", { type: "button", id: "review-dispute", text: "Dispute the ground truth" });
    pass.addEventListener("click", function () { send("pass"); });
    fail.addEventListener("click", function () { send("fail"); });
    disputeButton.addEventListener("click", dispute);
    var parts = [note, pass, fail];
    if (q.truth_sql && !q.disputed) parts.push(disputeButton);
    parts.push(status);
    return el("div", { className: "block" }, [el("h3", { text: "Your decision" }), el("div", { className: "review-box" }, parts)]);
  }
  function answerChange(q) {
    if (!q.answer_changed || !DATA.compare) return null;
    var change = DATA.compare.answer_changes.filter(function (a) { return a.id === q.id; })[0];
    if (!change) return null;
    return el("div", { className: "block", id: "answer-change" }, [
      el("h3", { text: "Answer change: the ground truth's result differs from base " + DATA.compare.base.name }),
      el("div", { className: "note", text: change.summary }),
      el("div", { className: "sqls" }, [simplePreview("Base", change.base), simplePreview("This run", change.head)])
    ]);
  }

  // A conversation (docs/conversations.md): each turn's question, SQL side by side, results
  // side by side and verdict, in order.
  function thread(q) {
    if (!q.turns) return null;
    var box = el("div", { className: "block thread", id: "thread" }, [
      el("h3", { text: "Conversation (" + q.turns.length + " turn" + (q.turns.length === 1 ? "" : "s") + " asked)" })
    ]);
    q.turns.forEach(function (t) {
      expand(t.expected); expand(t.actual);
      var turn = el("div", { className: "turn " + t.verdict, id: "turn-" + t.turn }, [
        el("div", { className: "turn-head" }, [
          el("span", { className: "v " + t.verdict, text: ICONS[t.verdict] + " " + t.verdict }),
          el("strong", { text: " Turn " + t.turn + ": " }),
          el("span", { className: "turn-question", text: t.question })
        ]),
        el("div", { className: "reason " + t.verdict, text: t.reason }),
        el("div", { className: "sqls" }, [
          sqlBlock(t.expect === "decline" ? "Expected" : "Ground truth SQL", t.expect === "decline" ? "a decline (no SQL)" : t.truth_sql, "(none)"),
          sqlBlock("Agent SQL", t.sql || t.agent_sql, t.answer ? "(no SQL) " + t.answer : "(no SQL)")
        ])
      ]);
      if (t.agent_error) turn.appendChild(el("pre", { className: "box", text: "Agent error: " + t.agent_error }));
      var pair = previewPair(t);
      if (pair) turn.appendChild(pair);
      box.appendChild(turn);
    });
    return box;
  }

  function render(q) {
    expand(q.expected); expand(q.actual);
    if (DATA.compare) DATA.compare.answer_changes.forEach(function (a) { expand(a.base); expand(a.head); });
    var d = document.getElementById("detail");
    d.textContent = "";
    var chips = [el("span", { className: "v " + q.verdict, text: q.label })];
    if (q.change) chips.push(el("span", { className: "chip " + q.change, text: q.change + " vs base" }));
    if (q.answer_changed) chips.push(el("span", { className: "chip answer", text: "answer changed" }));
    d.appendChild(el("h2", { text: q.id }));
    d.appendChild(el("div", null, chips));
    if (q.human) d.appendChild(el("div", { className: "block human" }, [el("strong", { text: "Decided by a person: " }), q.human.line]));
    if (q.disputed) d.appendChild(el("div", { className: "block human", id: "disputed" }, [el("strong", { text: "Ground truth disputed, not counted: " }), q.disputed.reason + " (" + q.disputed.by + ", since " + q.disputed.since + ")"]));
    d.appendChild(el("div", { className: "block reason " + q.verdict, id: "reason", text: q.reason }));
    if (q.question && !q.turns) d.appendChild(el("div", { className: "block" }, [el("h3", { text: "Question" }), el("div", { id: "question-text", text: q.question })]));
    if (q.trials.length > 1) d.appendChild(el("div", { className: "note", text: "Trials: " + q.trials.join(", ") + " · showing trial #" + q.trial }));
    var conversation = thread(q);
    if (conversation) d.appendChild(conversation);
    else d.appendChild(el("div", { className: "block sqls" }, [
      sqlBlock("Ground truth SQL", q.truth_sql, q.expect === "decline" ? "(none: a decline is expected)" : "(none)"),
      sqlBlock("Agent SQL", q.agent_sql, "(no SQL)")
    ]));
    if (!conversation && q.truth_sql && q.agent_sql) d.appendChild(el("div", { className: "block", id: "sql-diff" }, [el("h3", { text: "Diff (ground truth → agent: removed, added)" }), sqlDiff(q.truth_sql, q.agent_sql)]));
    q.also_accept.forEach(function (sql, i) {
      d.appendChild(sqlBlock("also_accept #" + (i + 1) + (q.matched_truth === i + 1 ? " (matched)" : ""), sql, ""));
    });
    if (q.answer && !conversation) d.appendChild(el("div", { className: "block" }, [el("h3", { text: "Agent's answer" }), el("pre", { className: "box", id: "agent-answer", text: q.answer })]));
    if (q.agent_error) d.appendChild(el("div", { className: "block" }, [el("h3", { text: "Agent error" }), el("pre", { className: "box", text: q.agent_error })]));
    [conversation ? null : previewPair(q), variantBlock(q), answerChange(q), trace(q), metrics(q), reviewBox(q)].forEach(function (b) { if (b) d.appendChild(b); });
    var facts = [];
    if (q.latency_ms !== null) facts.push("latency " + Math.round(q.latency_ms) + " ms");
    if (q.input_tokens || q.output_tokens) facts.push("tokens " + (q.input_tokens || 0) + " in / " + (q.output_tokens || 0) + " out");
    (q.economy || []).forEach(function (fact) { facts.push(fact); });
    if (q.tags.length) facts.push("tags " + q.tags.join(", "));
    if (facts.length) d.appendChild(el("div", { className: "note", text: facts.join(" · ") }));
  }

  function select(id, updateHash) {
    var q = byId[id];
    if (!q) return;
    if (selected) rows[selected.index].classList.remove("selected");
    selected = q;
    rows[q.index].classList.add("selected");
    rows[q.index].scrollIntoView({ block: "nearest" });
    render(q);
    if (updateHash) history.replaceState(null, "", "#q=" + encodeURIComponent(id));
  }
  function fromHash() {
    var match = /^#q=(.*)$/.exec(location.hash);
    if (match) select(decodeURIComponent(match[1]), false);
  }
  // In the viewer, a run still in progress updates as it goes, like the run list: its
  // headline, the questions graded since the page loaded, and the decisions they carry.
  function drawSummary(data) {
    // The breakdowns and speed as the server draws them (report.html.j2), from the new data.
    ["space", "tag"].forEach(function (key) {
      var table = document.getElementById("by-" + key);
      if (!table) return;
      var rowsOf = data.breakdowns[key];
      table.textContent = "";
      rowsOf.slice(0, 30).forEach(function (b) {
        var bar = el("span", { className: "bar" });
        bar.style.width = (b.total ? Math.round(80 * b.passed / b.total) : 0) + "px";
        var passed = String(Math.round(b.passed * 100) / 100);
        table.appendChild(el("tr", null, [el("td", { text: b.key }), el("td", null, [el("span", { className: "bar-bg" }, [bar])]), el("td", { text: passed + "/" + b.total })]));
      });
      if (rowsOf.length > 30) table.appendChild(el("tr", null, [el("td", { colspan: "3", className: "note", text: "and " + (rowsOf.length - 30) + " more" })]));
    });
    var run = data.run;
    function put(id, value) { var cell = document.getElementById(id); if (cell) cell.textContent = value; }
    put("latency-p50", run.latency_p50 === null ? "–" : Math.round(run.latency_p50) + " ms");
    put("latency-p95", run.latency_p95 === null ? "–" : Math.round(run.latency_p95) + " ms");
    put("input-tokens", run.input_tokens === null ? "–" : String(run.input_tokens));
    put("output-tokens", run.output_tokens === null ? "–" : String(run.output_tokens));
  }
  function facts(q) { return JSON.stringify([q.decided, q.label, q.reason, q.human, q.trials, q.change]); }
  function refresh() {
    var url = DATA.viewer.run_api + encodeURIComponent(DATA.run.id) + "/data" + location.search;
    return fetch(url, { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (data) {
        var keep = selected ? selected.id : null;
        var drawn = selected ? facts(selected) : null;
        DATA.run = data.run;
        DATA.compare = data.compare;
        setQuestions(data.questions);
        document.getElementById("accuracy").textContent = "Accuracy: " + data.run.accuracy;
        document.getElementById("counts").textContent = data.run.counts;
        drawSummary(data);
        selected = null;
        applyFilters();
        if (keep && byId[keep]) {
          var now = byId[keep];
          selected = now;
          rows[now.index].classList.add("selected");
          // The detail is drawn again only when its question changed (a note being typed stays).
          if (facts(now) !== drawn) render(now);
        } else if (shown.length) {
          select((shown.filter(function (q) { return q.decided !== "pass"; })[0] || shown[0]).id, false);
        }
      });
  }
  if (DATA.viewer && DATA.run.status === "Running") {
    var seen = null;
    var poll = function () {
      fetch(DATA.viewer.runs_api, { cache: "no-store" })
        .then(function (response) { return response.json(); })
        .then(function (data) {
          var run = data.runs.filter(function (r) { return r.id === DATA.run.id; })[0];
          if (!run) return;
          document.getElementById("run-status").textContent = run.status + (run.status === "Running" ? " " + run.graded + "/" + run.planned : "");
          var state = [run.status, run.graded, run.human].join(" ");
          var next = state === seen ? Promise.resolve() : refresh();
          seen = state;
          return next.then(function () { if (run.status === "Running") setTimeout(poll, 1000); });
        })
        .catch(function () { setTimeout(poll, 5000); });
    };
    setTimeout(poll, 1000);
  }
  window.addEventListener("hashchange", fromHash);
  applyFilters();
  fromHash();
  if (!selected && shown.length) {
    var firstBad = shown.filter(function (q) { return q.decided !== "pass"; })[0] || shown[0];
    select(firstBad.id, false);
  }
  // For benchmarks/report_speed.py: the list and the first question are drawn.
  if (window.performance && performance.mark) performance.mark("sqlbench-ready");
})();
