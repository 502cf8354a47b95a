// Test probe for TestHTMLInBrowser: appended to a report, it reads the
// rendered page (layout and the plots' data attributes), moves the mouse
// over a plot, and writes what it found as JSON into <pre id="probe">.
(function () {
  const all = (root, sel) => Array.from(root.querySelectorAll(sel));
  const num = v => (v === undefined ? null : +v);
  const r = {title: document.title, scrollWidth: document.documentElement.scrollWidth, scrollHeight: document.documentElement.scrollHeight, innerWidth: window.innerWidth};
  r.maxRight = Math.max(...all(document, 'svg, table, h1, p').map(e => e.getBoundingClientRect().right));
  r.lanes = all(document, 'svg[data-plot=timeline] g.lane').map(g => {
    const name = g.querySelector('.lane-name').getBBox(), facts = g.querySelector('.lane-facts').getBBox();
    return {
      channel: g.dataset.channel, kind: g.dataset.kind, samples: num(g.dataset.samples),
      present: all(g, 'rect.present').length,
      outages: all(g, 'rect.outage').map(e => [num(e.dataset.from), num(e.dataset.to)]),
      restarts: all(g, 'rect.restart').map(e => num(e.dataset.at)),
      skips: all(g, 'path.skip').map(e => num(e.dataset.at)),
      probes: all(g, 'circle.probe').length,
      labelsOverlap: name.x + name.width > facts.x,
    };
  });
  r.intervals = all(document, 'svg[data-plot=interval]').map(s => {
    const m = s.querySelector('g.meta');
    return {
      channel: s.dataset.channel, clipMs: num(m.dataset.clipMs), nominalMs: num(m.dataset.nominalMs),
      overflowMs: all(s, 'path.overflow').map(e => num(e.dataset.valueMs)),
      overflowLabels: all(s, 'text.overflow-label').map(e => e.textContent),
      refLabels: all(s, 'text.ref-label').map(e => e.textContent),
      yticks: all(s, 'text.ytick').map(e => e.textContent),
      hover: JSON.parse(s.dataset.hover).length,
    };
  });
  // The lag plots: each bin's delay range as drawn (the middle of its
  // segment, mapped back through the y axis), and the marks.
  r.lags = all(document, 'svg[data-plot=lag]').map(s => {
    const m = s.querySelector('g.meta'), lo = num(m.dataset.loMs), hi = num(m.dataset.hiMs), ya = num(m.dataset.yLo), yb = num(m.dataset.yHi);
    const d = s.querySelector('path.delay').getAttribute('d');
    const mids = Array.from(d.matchAll(/M[-\d.]+ ([-\d.]+)V([-\d.]+)/g)).map(g => lo + ((+g[1] + +g[2]) / 2 - ya) / (yb - ya) * (hi - lo));
    const frames = sel => all(s, sel).reduce((a, e) => a + num(e.dataset.frames), 0);
    return {
      channel: s.dataset.channel, loMs: lo, hiMs: hi, p50Ms: num(m.dataset.p50Ms), midsMs: mids,
      rejected: frames('path.rejected'), across: frames('path.across'), acrossGaps: all(s, 'rect.across-bg').length,
      refLabels: all(s, 'text.ref-label').map(e => e.textContent), hover: JSON.parse(s.dataset.hover).length,
    };
  });
  r.rates = all(document, 'svg[data-plot=rate]').map(s => ({channel: s.dataset.channel, hover: JSON.parse(s.dataset.hover).length}));
  r.hists = all(document, 'svg.hplot').map(s => ({
    plot: s.dataset.plot, loMs: num(s.dataset.loMs), hiMs: num(s.dataset.hiMs), under: num(s.dataset.under), over: num(s.dataset.over),
    count: num(s.dataset.count), barSum: all(s, 'rect.bar:not(.out)').reduce((a, e) => a + num(e.dataset.count), 0),
  }));
  r.clockProbes = all(document, 'svg[data-plot=clock] circle.probe, svg[data-plot=clock] path.overflow').length;
  // Hover the first interval plot 2 s into the session.
  const p = document.querySelector('svg[data-plot=interval]'), b = p.getBoundingClientRect();
  const x0 = +p.dataset.x0, x1 = +p.dataset.x1, t0 = +p.dataset.t0, t1 = +p.dataset.t1;
  const vx = x0 + (2 - t0) / (t1 - t0) * (x1 - x0);
  p.dispatchEvent(new MouseEvent('mousemove', {clientX: b.left + vx / p.viewBox.baseVal.width * b.width, clientY: b.top + b.height / 2, bubbles: true}));
  const tip = document.getElementById('tip');
  r.tip = tip.hidden ? '' : tip.textContent;
  r.crosshairs = all(document, '.xhair').filter(l => l.style.visibility === 'visible').length;
  r.timePlots = all(document, 'svg.tplot').length;
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(r);
  document.body.appendChild(out);
})();
