// Hover readouts for the time plots: one crosshair across every time plot
// (they share the session's x mapping) and the hovered plot's value there.
(function () {
  const tip = document.getElementById('tip');
  const plots = Array.from(document.querySelectorAll('svg.tplot'));
  const data = new Map(plots.map(p => [p, JSON.parse(p.dataset.hover || '[]')]));
  function at(p, t) {
    const h = data.get(p);
    let lo = 0, hi = h.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (h[m][1] < t) lo = m + 1; else if (h[m][0] > t) hi = m - 1; else return h[m][2];
    }
    return '';
  }
  function move(p, ev) {
    const r = p.getBoundingClientRect(), vb = p.viewBox.baseVal;
    const x = (ev.clientX - r.left) / r.width * vb.width;
    const x0 = +p.dataset.x0, x1 = +p.dataset.x1, t0 = +p.dataset.t0, t1 = +p.dataset.t1;
    if (x < x0 || x > x1) { leave(); return; }
    const t = t0 + (x - x0) / (x1 - x0) * (t1 - t0);
    for (const q of plots) {
      const l = q.querySelector('.xhair');
      l.setAttribute('x1', x); l.setAttribute('x2', x); l.style.visibility = 'visible';
    }
    const v = at(p, t);
    tip.textContent = t.toFixed(3) + ' s' + (v ? ' · ' + v : '');
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  }
  function leave() {
    tip.hidden = true;
    for (const q of plots) q.querySelector('.xhair').style.visibility = 'hidden';
  }
  for (const p of plots) {
    p.addEventListener('mousemove', ev => move(p, ev));
    p.addEventListener('mouseleave', leave);
  }
})();
