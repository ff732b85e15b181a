// Draws every chart of the page from its JSON spec (charts.py). No inline script: the page's data is JSON.
"use strict";
const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d",
  "#4b5563", "#ea580c", "#0d9488", "#9333ea"];

function draw(canvas) {
  const spec = JSON.parse(document.getElementById(canvas.dataset.spec).textContent);
  const line = spec.type === "line";
  const datasets = spec.datasets.map((d, i) => ({
    label: d.label, data: d.data, borderColor: PALETTE[i % PALETTE.length],
    backgroundColor: PALETTE[i % PALETTE.length] + (line ? "33" : "cc"), pointRadius: line ? 3 : 0,
    spanGaps: true,
  }));
  const axis = (title, max) => ({ stacked: spec.stacked, beginAtZero: true, max, title: { display: !!title, text: title } });
  const options = {
    animation: false, responsive: true, maintainAspectRatio: false, indexAxis: spec.horizontal ? "y" : "x",
    plugins: { title: { display: true, text: spec.title }, legend: { position: "bottom" } },
    scales: { x: axis(spec.x_title), y: axis(spec.y_title, spec.y_max) },
  };
  if (spec.link) {
    options.onClick = (event, elements, chart) => {
      if (!elements.length) return;
      const e = elements[0];
      window.location.href = spec.link
        .replace("{label}", encodeURIComponent(chart.data.labels[e.index]))
        .replace("{dataset}", encodeURIComponent(chart.data.datasets[e.datasetIndex].label));
    };
  }
  return new Chart(canvas, { type: spec.type, data: { labels: spec.labels, datasets }, options });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("canvas[data-spec]").forEach(draw);
  document.body.dataset.charts = "drawn";
});
