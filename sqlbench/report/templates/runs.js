(function () {
  "use strict";
  // The run list, refreshed every second from the store (a run in progress in another
  // terminal shows its progress and then its final accuracy without a reload).
  var DATA = JSON.parse(document.getElementById("sqlbench-data").textContent);
  var body = document.querySelector("#runs tbody");
  function cell(value, className) {
    var td = document.createElement("td");
    td.textContent = value;
    if (className) td.className = className;
    return td;
  }
  function ago(iso) {
    var seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    if (seconds < 86400) return Math.round(seconds / 3600) + " h ago";
    return new Date(iso).toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }
  function draw(runs) {
    var fragment = document.createDocumentFragment();
    runs.forEach(function (run) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-run", run.name);
      var name = document.createElement("td");
      var link = document.createElement("a");
      link.href = "/runs/" + encodeURIComponent(run.id);
      link.textContent = run.name;
      name.appendChild(link);
      tr.appendChild(name);
      tr.appendChild(cell(run.environment));
      tr.appendChild(cell(run.source));
      tr.appendChild(cell(run.agent));
      var status = run.status + (run.status === "Running" ? " " + run.graded + "/" + run.planned : "");
      tr.appendChild(cell(status, "status status-" + run.status.toLowerCase()));
      tr.appendChild(cell(run.total ? run.accuracy : "–", "acc"));
      tr.appendChild(cell(run.cost || "–", "cost"));
      tr.appendChild(cell(run.created_by));
      tr.appendChild(cell(ago(run.updated_at)));
      fragment.appendChild(tr);
    });
    body.textContent = "";
    body.appendChild(fragment);
    document.getElementById("empty").hidden = runs.length > 0;
  }
  // Accuracy against cost over the runs: the geometry the report's chart is drawn from
  // (report/html.py, cost_chart), drawn again only when it changes (a hovered dot keeps its
  // title between refreshes).
  var SVG = "http://www.w3.org/2000/svg";
  var drawnChart = null;
  function svg(name, attributes) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    return node;
  }
  function drawCost(chart) {
    var text = JSON.stringify(chart);
    if (text === drawnChart) return;
    drawnChart = text;
    var section = document.getElementById("cost-section");
    section.hidden = !chart;
    if (!chart) return;
    var box = document.getElementById("cost-chart");
    box.textContent = "";
    box.setAttribute("width", chart.width);
    box.setAttribute("height", chart.height);
    box.setAttribute("viewBox", "0 0 " + chart.width + " " + chart.height);
    chart.grid.forEach(function (g) {
      box.appendChild(svg("line", { x1: chart.pad, x2: chart.width - chart.pad, y1: g.y, y2: g.y, stroke: "#e5e7eb" }));
      var label = svg("text", { x: 2, y: g.y + 4 });
      label.textContent = g.label;
      box.appendChild(label);
    });
    chart.dots.forEach(function (d) {
      var link = svg("a", { href: "/runs/" + encodeURIComponent(d.run) });
      var dot = svg("circle", { cx: d.x, cy: d.y, r: 4, fill: "#2563eb", "data-run": d.run });
      var title = svg("title", {});
      title.textContent = d.title;
      dot.appendChild(title);
      link.appendChild(dot);
      box.appendChild(link);
    });
    document.getElementById("cost-right").textContent = chart.right;
    document.getElementById("cost-axis").style.width = chart.width + "px";
  }
  function refresh() {
    fetch(DATA.viewer.runs_api, { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (data) {
        draw(data.runs);
        drawCost(data.cost_chart);
        document.getElementById("refreshed").textContent = "updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {
        document.getElementById("refreshed").textContent = "the viewer has stopped";
      })
      .then(function () { setTimeout(refresh, 1000); });
  }
  refresh();
})();
