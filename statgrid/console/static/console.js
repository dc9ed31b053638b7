// statgrid console: draws each page's charts with uPlot and extends them with the live samples
// that htmx's SSE extension receives (events "sample" and "usage"; their swap is cancelled, the
// data goes to the charts). Everything else on the pages is htmx: fragments the server pushes.
(function () {
  "use strict";
  var KEEP_POINTS = 600;
  var LOG_MAX_CHARS = 262144;
  var COLORS = ["#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var charts = [];

  function stacked(spec, raw) {
    if (!spec.stacked) { return raw; }
    var out = [raw[0]];
    var acc = raw[0].map(function () { return 0; });
    for (var i = 1; i < raw.length; i++) {
      acc = acc.map(function (a, j) { return a + (raw[i][j] || 0); });
      out.push(acc.slice());
    }
    return out;
  }

  function make(el) {
    var spec = JSON.parse(document.getElementById("spec-" + el.dataset.chart).textContent);
    var small = el.closest(".small") !== null;
    var series = [{}];
    spec.series.forEach(function (s, i) {
      var color = COLORS[i % COLORS.length];
      series.push({label: s.label, stroke: color, width: 1, fill: spec.stacked ? color + "40" : undefined,
                   value: function (u, v) { return v == null ? "-" : v.toFixed(2); }});
    });
    var opts = {width: Math.max(220, el.clientWidth || 300), height: small ? 120 : 190,
                legend: {show: !small}, cursor: {show: !small}, scales: {x: {time: true}},
                series: series, axes: [{}, {size: 46, label: small ? undefined : spec.unit}]};
    if (small) { opts.title = spec.title; }
    var raw = spec.data.map(function (a) { return a.slice(); });
    charts.push({spec: spec, raw: raw, plot: new uPlot(opts, stacked(spec, raw), el)});
  }

  function extend(chart, ts, values) {
    var raw = chart.raw;
    if (raw[0].length && ts <= raw[0][raw[0].length - 1]) { return; }
    raw[0].push(ts);
    chart.spec.series.forEach(function (s, i) {
      var v = values[s.key];
      raw[i + 1].push(v == null ? null : v * s.scale);
    });
    if (raw[0].length > KEEP_POINTS) { raw.forEach(function (a) { a.shift(); }); }
    chart.plot.setData(stacked(chart.spec, raw));
  }

  document.querySelectorAll(".chart[data-chart]").forEach(make);

  document.body.addEventListener("htmx:sseBeforeMessage", function (e) {
    var type = e.detail.type;
    if (type === "sample" || type === "usage") {
      e.preventDefault();
      var d = JSON.parse(e.detail.data);
      charts.forEach(function (c) {
        if ((type === "sample" && c.spec.host === d.host) || (type === "usage" && c.spec.job === d.job)) {
          extend(c, d.ts, type === "sample" ? d.values : d);
        }
      });
    } else if (type === "resync") {
      e.preventDefault();
      window.location.reload();
    }
  });

  document.body.addEventListener("htmx:sseMessage", function (e) {
    if (e.detail.type !== "log") { return; }
    var log = document.getElementById("log");
    if (log && log.textContent.length > LOG_MAX_CHARS) {
      log.textContent = log.textContent.slice(-LOG_MAX_CHARS / 2);
    }
    if (log) { log.scrollTop = log.scrollHeight; }
  });

  // A running job's run time counts on from what the server rendered (data-elapsed-s), by the
  // browser's own clock from when the element first showed; a swapped-in row starts again.
  function tick() {
    var now = Date.now();
    document.querySelectorAll(".elapsed[data-elapsed-s]").forEach(function (el) {
      if (el.statgridSeen === undefined) { el.statgridSeen = now; }
      var s = parseFloat(el.dataset.elapsedS) + (now - el.statgridSeen) / 1000;
      el.textContent = s.toFixed(1);
    });
  }
  window.setInterval(tick, 1000);

  var live = document.getElementById("live");
  document.body.addEventListener("htmx:sseOpen", function () { if (live) { live.classList.add("on"); } });
  document.body.addEventListener("htmx:sseError", function () { if (live) { live.classList.remove("on"); } });
})();
