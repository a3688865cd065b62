// kmirror dashboard charts: samples GET /connectors/{c}/partitions every 2 s and draws, per partition, its lag
// (records) and throughput (records/s) with uPlot. History lives in this page only; Prometheus keeps the long one.
// Names are set with textContent, never as HTML.
(function () {
  "use strict";
  var MAX_POINTS = 150, MAX_CHARTS = 24, PERIOD_MS = 2000;

  // fitLabels sizes a y axis to its widest tick label (uPlot's fixed sizes clip "12,345"), measured in the axis
  // font; uPlot calls it again while the sizes settle (cycleNum), when the last answer stands.
  function fitLabels(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    var size = axis.ticks.size + axis.gap, widest = 0;
    u.ctx.font = axis.font[0];
    (values || []).forEach(function (v) { widest = Math.max(widest, u.ctx.measureText(v).width); });
    return Math.ceil(size + widest / (window.devicePixelRatio || 1)) + 2;
  }

  function start(box) {
    var url = box.getAttribute("data-partitions-url");
    var series = {}; // "topic-partition" -> {t: [], lag: [], rps: [], plot, el}
    var order = [];

    function chartFor(key) {
      var s = series[key];
      if (s) return s;
      s = series[key] = { t: [], lag: [], rps: [], plot: null };
      if (order.length >= MAX_CHARTS) return s;
      order.push(key);
      var fig = document.createElement("figure");
      fig.className = "chart";
      fig.setAttribute("data-partition", key);
      var h = document.createElement("h4");
      h.textContent = key;
      fig.appendChild(h);
      box.appendChild(fig);
      s.plot = new uPlot({
        width: 300, height: 120, legend: { show: true },
        scales: { x: { time: true }, lag: {}, rps: {} },
        axes: [{}, { scale: "lag", size: fitLabels }, { scale: "rps", side: 1, size: fitLabels, grid: { show: false } }],
        series: [{}, { label: "lag", scale: "lag", stroke: "#b3261e", width: 1.5 },
                 { label: "rec/s", scale: "rps", stroke: "#1f6feb", width: 1.5 }]
      }, [[], [], []], fig);
      fig.uplot = s.plot; // for the browser tests, which check that the axis labels fit
      return s;
    }

    function sample() {
      fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (body) {
        if (!body || !body.by_partition) return;
        var now = Date.now() / 1000;
        body.by_partition.forEach(function (p) {
          var s = chartFor(p.topic + "-" + p.partition);
          s.t.push(now); s.lag.push(p.lag_records); s.rps.push(p.records_per_second);
          if (s.t.length > MAX_POINTS) { s.t.shift(); s.lag.shift(); s.rps.shift(); }
          if (s.plot) s.plot.setData([s.t, s.lag, s.rps]);
        });
        box.setAttribute("data-samples", String((+box.getAttribute("data-samples") || 0) + 1));
      }).catch(function () { /* the next sample retries */ });
    }
    sample();
    setInterval(sample, PERIOD_MS);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("charts");
    if (box && window.uPlot) start(box);
  });
})();
