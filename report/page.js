// tracecast report: draws DATA on three canvases sharing one time view.
(function () {
  "use strict";
  const D = DATA, G = D.gantt, O = D.occupancy, F = D.forecast, P = D.energy ? D.energy.power : null, S = D.spells;
  const spellsOn = document.getElementById("spells-on");
  const full = [G.t0, G.t1 > G.t0 ? G.t1 : G.t0 + 1];
  let view = full.slice();
  const LEFT = 120, RIGHT = 10, AXIS = 18;
  const classColor = { idle: "#bbbbbb", compute: "#1f77b4", comm: "#d62728", other: "#9467bd" };

  // Task kinds get distinct hues; idle-class states greys.
  // No red in the tasks' palette: red is communication.
  const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#7b4173", "#3182bd", "#31a354"];
  const colors = [];
  let hue = 0, grey = 0;
  for (let i = 0; i < G.values.length; i++) {
    if (G.classes[i] === "idle") {
      const g = 170 + (grey++ * 23) % 70;
      colors.push("rgb(" + g + "," + g + "," + g + ")");
    } else if (G.classes[i] === "comm") {
      colors.push("#d62728");
    } else {
      colors.push(palette[hue++ % palette.length]);
    }
  }

  function xOf(t, w) { return LEFT + (t - view[0]) / (view[1] - view[0]) * (w - LEFT - RIGHT); }
  function tOf(x, w) { return view[0] + (x - LEFT) / (w - LEFT - RIGHT) * (view[1] - view[0]); }

  function axis(ctx, w, h) {
    ctx.fillStyle = "#444"; ctx.strokeStyle = "#999"; ctx.font = "11px sans-serif";
    const span = view[1] - view[0];
    const step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    const mult = span / step > 30 ? 5 : span / step > 12 ? 2 : 1;
    const s = step * mult;
    for (let t = Math.ceil(view[0] / s) * s; t <= view[1]; t += s) {
      const x = xOf(t, w);
      ctx.beginPath(); ctx.moveTo(x, h - AXIS); ctx.lineTo(x, h - AXIS + 4); ctx.stroke();
      ctx.fillText(fmt(t) + " s", x + 2, h - 4);
    }
  }
  function fmt(t) { return Math.abs(t) >= 100 ? t.toFixed(0) : Number(t.toPrecision(4)).toString(); }

  let ganttRows = 0;
  function drawGantt() {
    const c = document.getElementById("gantt"), n = G.rows.length;
    const rowH = Math.max(3, Math.min(22, Math.floor(600 / Math.max(n, 1))));
    c.height = n * rowH + AXIS + 4;
    const ctx = c.getContext("2d"), w = c.width, h = c.height;
    ctx.clearRect(0, 0, w, h);
    ctx.font = Math.min(12, rowH) + "px sans-serif";
    ganttRows = 0;
    for (let r = 0; r < n; r++) {
      const y = r * rowH;
      ctx.fillStyle = "#333";
      if (rowH >= 8) ctx.fillText(G.rows[r].slice(0, 18), 2, y + rowH - 2);
      if (G.aggregated) {
        const bins = G.bins[r], bw = (full[1] - full[0]) / bins.length;
        for (let b = 0; b < bins.length; b++) {
          if (bins[b] < 0) continue;
          const a = full[0] + b * bw, e = a + bw;
          if (e < view[0] || a > view[1]) continue;
          const x0 = xOf(a, w), x1 = xOf(e, w);
          ctx.fillStyle = colors[bins[b]];
          ctx.fillRect(x0, y + 1, Math.max(1, x1 - x0), rowH - 2);
        }
      } else {
        const s = G.segs[r];
        for (let i = 0; i < s.length; i += 3) {
          const a = G.t0 + s[i], e = G.t0 + s[i + 1];
          if (e < view[0] || a > view[1]) continue;
          const x0 = Math.max(LEFT, xOf(a, w)), x1 = Math.min(w - RIGHT, xOf(e, w));
          ctx.fillStyle = colors[s[i + 2]];
          ctx.fillRect(x0, y + 1, Math.max(0.5, x1 - x0), rowH - 2);
        }
      }
      ganttRows++;
    }
    if (S && spellsOn && spellsOn.checked && rowH >= 8) drawSpells(ctx, w, rowH); // rows ≥ 8 px: at most 75 (spells.go's maxSpellRows)
    axis(ctx, w, h);
  }

  // Each spell over its row: what happened (a black line from its start
  // to its end, busy spells in the row's upper part, idle ones in its
  // lower part) and its forecast end from the 10% quantile to the median
  // (a bar, the median a tick); a spell ending past the tick outlasted it.
  let spellsDrawn = 0;
  function drawSpells(ctx, w, rowH) {
    spellsDrawn = 0;
    const x0 = LEFT, x1 = w - RIGHT;
    const clip = x => Math.min(x1, Math.max(x0, x));
    for (let r = 0; r < S.ticks.length; r++) {
      const s = S.ticks[r];
      for (let i = 0; i < s.length; i += 5) {
        const a = G.t0 + s[i], e = G.t0 + s[i + 1], q10 = s[i + 2], q50 = s[i + 3], busy = s[i + 4] === 1;
        const fe = q50 >= 0 ? a + q50 : view[1];
        if (Math.max(e, fe) < view[0] || a > view[1] || xOf(Math.max(e, fe), w) - xOf(a, w) < 3) continue; // zoom in for the short ones
        const y = r * rowH + (busy ? Math.round(rowH * 0.3) : Math.round(rowH * 0.72));
        ctx.fillStyle = "#111";
        ctx.fillRect(clip(xOf(a, w)), y, Math.max(0.5, clip(xOf(e, w)) - clip(xOf(a, w))), 1);
        if (xOf(e, w) >= x0 && xOf(e, w) <= x1) ctx.fillRect(xOf(e, w) - 0.5, y - 2, 1, 5);
        ctx.fillStyle = busy ? "rgba(255,212,0,0.9)" : "rgba(255,45,149,0.9)";
        const lo = q10 >= 0 ? a + q10 : view[1];
        ctx.fillRect(clip(xOf(lo, w)), y - 1, Math.max(1, clip(xOf(fe, w)) - clip(xOf(lo, w))), 3);
        if (q50 >= 0 && xOf(fe, w) >= x0 && xOf(fe, w) <= x1) ctx.fillRect(xOf(fe, w) - 1, y - 3, 2, 7);
        spellsDrawn++;
      }
    }
    document.body.dataset.spellsDrawn = String(spellsDrawn);
  }

  function lineChart(id, xs, series, ymax, band) {
    const c = document.getElementById(id), ctx = c.getContext("2d"), w = c.width, h = c.height;
    ctx.clearRect(0, 0, w, h);
    const yOf = v => (h - AXIS) - v / ymax * (h - AXIS - 6);
    ctx.strokeStyle = "#ddd";
    for (const v of [0, ymax / 2, ymax]) { ctx.beginPath(); ctx.moveTo(LEFT, yOf(v)); ctx.lineTo(w - RIGHT, yOf(v)); ctx.stroke(); ctx.fillStyle = "#666"; ctx.fillText(fmt(v), 2, yOf(v) + 4); }
    if (band) {
      ctx.fillStyle = "rgba(31,119,180,0.18)";
      for (let i = 0; i + 1 < xs.length; i++) {
        if (band.lo[i] < 0 || xs[i + 1] < view[0] || xs[i] > view[1]) continue;
        const x0 = xOf(xs[i], w), x1 = xOf(xs[i + 1], w);
        ctx.fillRect(x0, yOf(band.hi[i]), Math.max(0.5, x1 - x0), yOf(band.lo[i]) - yOf(band.hi[i]));
      }
    }
    for (const s of series) {
      ctx.strokeStyle = s.color; ctx.lineWidth = s.width || 1; ctx.beginPath();
      let pen = false;
      for (let i = 0; i < xs.length; i++) {
        const v = s.y[i];
        if (v < 0 || xs[i] < view[0] - (view[1] - view[0]) * 0.01 || xs[i] > view[1]) { pen = false; continue; }
        const x = xOf(xs[i], w), y = yOf(v);
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.stroke(); ctx.lineWidth = 1;
    }
    let lx = LEFT + 4;
    for (const s of series) { ctx.fillStyle = s.color; ctx.fillRect(lx, 4, 10, 10); ctx.fillStyle = "#333"; ctx.fillText(s.name, lx + 14, 13); lx += 24 + ctx.measureText(s.name).width; }
    axis(ctx, w, h);
  }

  // Power: a line per node through its points (the mean of its samples
  // over each pixel's interval), broken where points are more than max_gap
  // apart (the integration does not bridge those either); with one node,
  // the band between the samples' minimum and maximum.
  const nodeColors = ["#1f77b4", "#d62728", "#8c564b", "#17becf", "#ff7f0e", "#2ca02c", "#9467bd", "#e377c2"];
  function drawPower() {
    if (!P) return;
    const c = document.getElementById("power"), ctx = c.getContext("2d"), w = c.width, h = c.height;
    ctx.clearRect(0, 0, w, h);
    ctx.font = "11px sans-serif";
    // The axis starts near the lowest power, not at 0 W: a node's idle
    // power is most of its power, and the states move the rest.
    const span = Math.max(P.max - P.min, 1e-9), ymin = Math.max(0, P.min - 0.1 * span), ymax = P.max > 0 ? P.max + 0.05 * span : 1;
    const yOf = v => (h - AXIS) - (v - ymin) / (ymax - ymin) * (h - AXIS - 6);
    ctx.strokeStyle = "#ddd";
    for (const v of [ymin, (ymin + ymax) / 2, ymax]) { ctx.beginPath(); ctx.moveTo(LEFT, yOf(v)); ctx.lineTo(w - RIGHT, yOf(v)); ctx.stroke(); ctx.fillStyle = "#666"; ctx.fillText(fmt(v) + " W", 2, yOf(v) + 4); }
    const margin = (view[1] - view[0]) * 0.01;
    const inView = t => t >= view[0] - margin && t <= view[1] + margin;
    let drawn = 0;
    P.series.forEach((s, n) => {
      const color = nodeColors[n % nodeColors.length];
      if (P.series.length === 1 && s.lo) {
        ctx.fillStyle = "rgba(31,119,180,0.18)";
        for (let i = 0; i + 1 < s.t.length; i++) {
          if (s.t[i + 1] - s.t[i] > P.max_gap || !inView(s.t[i]) || !inView(s.t[i + 1])) continue;
          const x0 = xOf(s.t[i], w), x1 = xOf(s.t[i + 1], w);
          ctx.beginPath(); ctx.moveTo(x0, yOf(s.hi[i])); ctx.lineTo(x1, yOf(s.hi[i + 1])); ctx.lineTo(x1, yOf(s.lo[i + 1])); ctx.lineTo(x0, yOf(s.lo[i])); ctx.closePath(); ctx.fill();
        }
      }
      ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.beginPath();
      let prev = null;
      for (let i = 0; i < s.t.length; i++) {
        if (!inView(s.t[i])) { prev = null; continue; }
        const x = xOf(s.t[i], w), y = yOf(s.mean[i]);
        if (prev !== null && s.t[i] - prev <= P.max_gap) ctx.lineTo(x, y); else { ctx.moveTo(x, y); ctx.fillStyle = color; ctx.fillRect(x - 1, y - 1, 2, 2); }
        prev = s.t[i];
        drawn++;
      }
      ctx.stroke(); ctx.lineWidth = 1;
    });
    let lx = LEFT + 4;
    P.series.forEach((s, n) => { ctx.fillStyle = nodeColors[n % nodeColors.length]; ctx.fillRect(lx, 4, 10, 10); ctx.fillStyle = "#333"; ctx.fillText(s.node, lx + 14, 13); lx += 24 + ctx.measureText(s.node).width; });
    axis(ctx, w, h);
    document.body.dataset.powerSeries = String(P.series.length);
    document.body.dataset.powerPoints = String(drawn);
  }

  function draw() {
    drawGantt();
    lineChart("occ", O.t, O.classes.map((c, i) => ({ name: c, color: classColor[c] || "#000", y: O.y[i] })), Math.max(O.r, 1));
    lineChart("fc", F.t, [
      { name: "forecast p", color: "#1f77b4", y: F.p, width: 1.5 },
      { name: "what happened", color: "#333", y: F.observed },
    ], 1, { lo: F.lo, hi: F.hi });
    drawPower();
    document.body.dataset.ganttRows = String(ganttRows);
  }

  // Zoom: wheel around the cursor, drag to select, double-click to reset.
  for (const id of P ? ["gantt", "occ", "power", "fc"] : ["gantt", "occ", "fc"]) {
    const c = document.getElementById(id);
    let down = null;
    c.addEventListener("wheel", ev => {
      ev.preventDefault();
      const t = tOf(ev.offsetX * c.width / c.clientWidth, c.width), k = ev.deltaY > 0 ? 1.25 : 0.8;
      view = [Math.max(full[0], t - (t - view[0]) * k), Math.min(full[1], t + (view[1] - t) * k)];
      draw();
    }, { passive: false });
    c.addEventListener("mousedown", ev => { down = tOf(ev.offsetX * c.width / c.clientWidth, c.width); });
    c.addEventListener("mouseup", ev => {
      const t = tOf(ev.offsetX * c.width / c.clientWidth, c.width);
      if (down !== null && Math.abs(t - down) > (view[1] - view[0]) / 200) { view = [Math.min(down, t), Math.max(down, t)]; draw(); }
      down = null;
    });
    c.addEventListener("dblclick", () => { view = full.slice(); draw(); });
  }
  const tip = document.getElementById("tip"), gc = document.getElementById("gantt");
  gc.addEventListener("mousemove", ev => {
    const rowH = (gc.height - AXIS - 4) / Math.max(G.rows.length, 1), r = Math.floor(ev.offsetY * gc.height / gc.clientHeight / rowH);
    const t = tOf(ev.offsetX * gc.width / gc.clientWidth, gc.width);
    let v = -1;
    if (r >= 0 && r < G.rows.length) {
      if (G.aggregated) { const bins = G.bins[r]; v = bins[Math.floor((t - full[0]) / (full[1] - full[0]) * bins.length)]; }
      else { const s = G.segs[r]; for (let i = 0; i < s.length; i += 3) if (G.t0 + s[i] <= t && t < G.t0 + s[i + 1]) { v = s[i + 2]; break; } }
    }
    if (v === undefined || v < 0) { tip.style.display = "none"; return; }
    let text = G.rows[r] + ": " + G.values[v] + " at " + fmt(t) + " s";
    if (S && spellsOn && spellsOn.checked) {
      const s = S.ticks[r];
      for (let i = 0; i < s.length; i += 5) {
        if (G.t0 + s[i] <= t && t < G.t0 + s[i + 1]) {
          const q = x => x < 0 ? "beyond range" : fmt(x) + " s";
          text += "; " + (s[i + 4] === 1 ? "busy" : "idle") + " spell of " + fmt(s[i + 1] - s[i]) + " s, forecast median " + q(s[i + 3]) + ", q10 " + q(s[i + 2]);
          break;
        }
      }
    }
    tip.textContent = text;
    tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px"; tip.style.display = "block";
  });
  gc.addEventListener("mouseleave", () => { tip.style.display = "none"; });

  if (spellsOn) spellsOn.addEventListener("change", draw);
  const lg = document.getElementById("legend");
  G.values.forEach((v, i) => {
    const s = document.createElement("span"), sw = document.createElement("i");
    sw.style.background = colors[i]; s.appendChild(sw); s.appendChild(document.createTextNode(v + " (" + G.classes[i] + ")"));
    lg.appendChild(s);
  });
  document.getElementById("fcnote").textContent = "Forecast of the fraction of the next " + F.horizon + " with " + F.query +
    " (blue, with its interval shaded), against what happened over that interval (black), at each issue time.";
  if (P) {
    document.getElementById("powernote").textContent = (P.summed ?
      "Power of the streams' " + P.series[0].node + ": each node's mean power over each pixel's interval, added up" :
      "Power of each node in the streams: the mean of its samples over each pixel's interval" + (P.series.length === 1 ? ", their minimum to maximum shaded" : "")) +
      ", in trace time (power time minus the offset), under the occupancy above; lines break where samples are more than " + fmt(P.max_gap) + " s apart." +
      (P.series.some(s => s.t.length > 0) ? "" : " No sample falls within the run: see the warnings below.");
  }
  draw();
  document.body.dataset.ready = "1";
})();
