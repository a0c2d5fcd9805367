/* statusgen: hover and keyboard focus tell each bucket of the 90-day bars and of the charts.

   The bars of the front page (.bar in li#svc-{slug}) and the charts of a service page
   (svg[data-src]) are drawn by the server; this script only adds words. It reads the numbers
   from the history JSON of the same site (a chart's data-src; for a bar, the service's
   /api/v1/services/{slug}/history?range=90d), once, when a reader first points at the element
   or focuses it. A focused element is a slider: the arrow keys, Home, End, Page Up and
   Page Down move from bucket to bucket, and its value is the bucket in words. data-tell says
   which words (availability, the default, or latency); data-plot is the plot area of a chart
   in its viewBox (x y width height); a bar is all plot.

   Without this script, the words under each bar and the day-by-day table of each service
   page tell the same numbers.

   It also keeps the front page and a service page fresh: every interval it asks for the
   snapshot, or the service's record, with If-None-Match, and shows what moved (a service page
   leaves out what moves with every result, so that the page changes only when what it says
   does) and how old the data is. Without the script, the record's link says where that is.

   And it never lets a page pass old data off as current: once the reader's clock is past the
   stale_after of the data the page shows (the snapshot's on the front page, the record's on a
   service page, health's elsewhere), the status banner becomes a warning that the site has not
   been updated since then, in the reader's zone, and how long ago. Without the script, the
   front page's banner says what time its words are as of. */
"use strict";
(() => {
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const HOVER_MS = 80;            // a pointer that only passes over a bar does not fetch anything
  const histories = new Map();    // URL -> promise of its history document

  function history(url) {
    if (!histories.has(url)) {
      const answer = fetch(url).then((r) => {
        if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
        return r.json();
      });
      answer.catch(() => histories.delete(url));   // a later hover asks again
      histories.set(url, answer);
    }
    return histories.get(url);
  }

  // A bucket's start as precise as its resolution needs: "22 Nov 2026" or "22 Nov 20:05 UTC".
  function when(start, resolution) {
    const day = `${Number(start.slice(8, 10))} ${MONTHS[Number(start.slice(5, 7)) - 1]}`;
    return resolution >= 86400 ? `${day} ${start.slice(0, 4)}` : `${day} ${start.slice(11, 16)} UTC`;
  }

  const WORDS = {
    availability(p) {
      const minutes = `${p.incident_minutes} min of incidents`;
      if (p.availability === null) {
        return (p.maintenance ? "maintenance only" : "no data") + (p.incident_minutes ? `, ${minutes}` : "");
      }
      return `${p.availability}% available, ${minutes}`;
    },
    latency(p) {
      return p.latency_p50_ms === null ? "no latency measured"
        : `p50 ${p.latency_p50_ms} ms, p95 ${p.latency_p95_ms} ms`;
    },
  };

  // The keys of a slider: where each moves from bucket i of n (Page Up and Page Down by a twelfth).
  const KEYS = {
    ArrowLeft: (i) => i - 1, ArrowDown: (i) => i - 1, ArrowRight: (i) => i + 1, ArrowUp: (i) => i + 1,
    PageDown: (i, n) => i - Math.ceil(n / 12), PageUp: (i, n) => i + Math.ceil(n / 12),
    Home: () => 0, End: (i, n) => n - 1,
  };

  function explore(el, src) {
    const words = WORDS[el.dataset.tell || "availability"];
    const plot = el.dataset.plot ? el.dataset.plot.split(" ").map(Number) : null;
    const host = el.parentElement;          // positioned by the stylesheet: the tip and mark sit in it
    const tip = document.createElement("div");
    const mark = document.createElement("div");
    tip.className = "tip";
    mark.className = "mark";
    tip.setAttribute("aria-hidden", "true");   // the slider's value says the same
    mark.setAttribute("aria-hidden", "true");
    let doc = null;
    let index = -1;                         // the bucket told
    let cursor = -1;                        // the bucket of the keys: kept while the element is not focused
    let pointerX = null;
    let timer = 0;

    el.tabIndex = 0;
    el.setAttribute("role", "slider");
    el.setAttribute("aria-valuemin", "1");
    // A slider has a value before it is read: the latest bucket, the one on the right.
    el.setAttribute("aria-valuemax", el.dataset.count);
    el.setAttribute("aria-valuenow", el.dataset.count);
    el.setAttribute("aria-valuetext", "The latest; use the arrow keys to read each one");
    if (!el.getAttribute("aria-label")) {
      const name = el.closest("li")?.querySelector("a")?.textContent || "Availability";
      el.setAttribute("aria-label", `${name}: availability by day, last 90 days`);
    }

    // The plot area on screen, in CSS pixels from the host's top left corner.
    function area() {
      const box = el.getBoundingClientRect();
      const origin = host.getBoundingClientRect();
      const k = plot ? box.width / el.viewBox.baseVal.width : 1;
      const [x, y, w, h] = plot || [0, 0, box.width, box.height];
      return { left: box.left - origin.left + x * k, top: box.top - origin.top + y * k,
               width: w * k, height: h * k, hostWidth: origin.width, screenLeft: box.left + x * k };
    }

    function load() {
      return history(src).then((d) => { doc = d; return d; });
    }

    function show(i) {
      const points = doc.points;
      index = Math.max(0, Math.min(points.length - 1, i));
      if (document.activeElement === el) cursor = index;
      const p = points[index];
      const text = `${when(p.start, doc.resolution_s)}: ${words(p)}`;
      el.setAttribute("aria-valuemax", String(points.length));
      el.setAttribute("aria-valuenow", String(index + 1));
      el.setAttribute("aria-valuetext", text);
      tip.textContent = text;
      if (!tip.isConnected) host.append(mark, tip);
      const a = area();
      const step = a.width / points.length;
      Object.assign(mark.style, { left: `${a.left + index * step}px`, top: `${a.top}px`,
                                  width: `${Math.max(step, 2)}px`, height: `${a.height}px` });
      tip.style.maxWidth = `${a.hostWidth}px`;
      const centre = a.left + (index + 0.5) * step;
      const left = Math.max(0, Math.min(a.hostWidth - tip.offsetWidth, centre - tip.offsetWidth / 2));
      Object.assign(tip.style, { left: `${left}px`, top: `${a.top - tip.offsetHeight - 6}px` });
    }

    function fail() {
      tip.textContent = "The numbers could not be read; the service page lists them.";
      if (!tip.isConnected) host.append(tip);
      Object.assign(tip.style, { left: "0px", top: `${area().top - tip.offsetHeight - 6}px` });
    }

    function hide() {
      mark.remove();
      tip.remove();
    }

    function indexAt(clientX) {
      const a = area();
      const f = (clientX - a.screenLeft) / a.width;
      return f < 0 || f >= 1 ? null : Math.floor(f * doc.points.length);
    }

    function pointed() {
      const i = doc && pointerX !== null ? indexAt(pointerX) : null;
      if (i !== null) show(i);
      else if (document.activeElement === el && cursor >= 0) show(cursor);
      else hide();
    }

    el.addEventListener("pointermove", (e) => {
      pointerX = e.clientX;
      if (doc) pointed();
      else if (!timer) {
        timer = setTimeout(() => {
          timer = 0;
          load().then(pointed, fail);
        }, HOVER_MS);
      }
    });
    el.addEventListener("pointerleave", () => {
      clearTimeout(timer);
      timer = 0;
      pointerX = null;
      if (doc) pointed();
      else if (document.activeElement !== el) hide();
    });
    el.addEventListener("focus", () => {
      load().then(() => {
        const i = pointerX === null ? null : indexAt(pointerX);   // a click chooses the bucket under the pointer
        show(i !== null ? i : cursor < 0 ? doc.points.length - 1 : cursor);
      }, fail);
    });
    el.addEventListener("blur", () => { if (pointerX === null) hide(); });
    el.addEventListener("keydown", (e) => {
      const move = KEYS[e.key];
      if (!move) return;
      e.preventDefault();
      load().then(() => show(move(cursor, doc.points.length)), fail);   // after the focus has shown its bucket
    });
  }

  // Times are written in UTC ("2026-11-22 20:02 UTC"); where this script runs they read in the
  // reader's own time zone, the UTC one kept as the title, and a "since" says for how long.
  const LOCAL = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short",
  });
  function lasted(ms) {
    const min = Math.max(0, Math.round(ms / 60000));
    if (min < 60) return `${min} min`;
    const hours = Math.floor(min / 60);
    return hours < 48 ? `${hours} h ${min % 60} min` : `${Math.floor(hours / 24)} days`;
  }
  document.querySelectorAll("time[datetime]").forEach((t) => {
    const at = new Date(t.getAttribute("datetime"));
    if (!t.textContent.endsWith(" UTC") || Number.isNaN(at.getTime())) return;   // days stay UTC days
    t.title = t.textContent;
    t.textContent = LOCAL.format(at);
    if (t.closest("[data-since]")) t.after(` (for ${lasted(Date.now() - at.getTime())})`);
  });

  // Ask for a document now and every interval, with the ETag of the last answer (If-None-Match), so
  // that an unchanged one costs a 304 and no body; ``fill`` gets each new one, ``tick`` runs after
  // every answer (or failure: it is asked again next time).
  function poll(url, seconds, fill, tick) {
    let etag = null;
    const ask = () => {
      const headers = etag ? { "If-None-Match": etag } : {};
      fetch(url, { headers, cache: "no-store" }).then((r) => {
        if (r.status !== 200) return null;
        etag = r.headers.get("ETag");
        return r.json().then(fill);
      }).catch(() => {}).finally(tick);
    };
    ask();
    setInterval(ask, Math.max(5, Number(seconds) || 60) * 1000);
  }
  const tell = (name, text) => {
    const el = document.querySelector(`[data-live="${name}"]`);
    if (el) { el.textContent = text; el.hidden = false; }
  };
  // Past the data's stale_after: the front page's banner, or the one every page holds for this,
  // says since when the site has not been updated; what the page shows is as of then.
  const stale = (doc) => {
    if (!doc || !doc.stale_after || !doc.as_of || Date.now() <= Date.parse(doc.stale_after)) return;
    const banner = document.querySelector("#overall") || document.querySelector("[data-stale-banner]");
    if (!banner) return;
    const since = Date.parse(doc.as_of);
    const said = document.createElement("strong");
    said.textContent = `This page has not been updated since ${LOCAL.format(new Date(since))} `
      + `(${lasted(Date.now() - since)} ago).`;
    const rest = doc.summary ? ` Statuses may be out of date. As of then: ${doc.summary}`
      : " The statuses and figures below are as of then, and may be out of date.";
    banner.className = "banner banner-stale";
    banner.replaceChildren(said, rest);
    banner.hidden = false;
  };

  const aged = (name, asOf) => {
    if (asOf) tell(name, `Data as of ${LOCAL.format(new Date(asOf))} (${lasted(Date.now() - Date.parse(asOf))} ago).`);
  };

  // A service page leaves out what moves with every result (so that it changes only when what it
  // says does): its data-live parts are told here from the service's record.
  const live = document.querySelector("[data-record]");
  if (live) {
    const words = JSON.parse(live.dataset.words);
    let asOf = null;
    const at = (iso) => LOCAL.format(new Date(iso));
    const figure = (v, unit) => (v === null || v === undefined ? "\u2014" : `${v}${unit}`);
    const result = (r) => {
      const said = words.outcomes[r.outcome] || r.outcome;
      let text = said.charAt(0).toUpperCase() + said.slice(1);
      if (r.http_status) text += `, HTTP ${r.http_status}`;
      if (r.latency_ms !== null) text += `, ${r.latency_ms} ms`;
      if (r.slow) text += " (slow)";
      if (r.condition) text += `: ${r.condition}`;
      if (r.flag) text += `; not counted: ${words.flags[r.flag] || r.flag}`;
      return `${text}, ${at(r.at)}`;
    };
    const fill = (record) => {
      const s = record.service;
      asOf = record.as_of;
      for (const c of s.checks) {
        tell(`check-${c.check}`, c.last_result ? result(c.last_result) : "No result yet");
        for (const seen of c.locations || []) {
          tell(`at-${seen.location}-${c.check}`, seen.last_result ? result(seen.last_result) : "No fresh result");
        }
      }
      const day = s.last_day;
      const sum = day.summary;
      tell("last-day", `Last day: ${day.count} results, ${sum.failed} failed; availability `
        + `${figure(sum.availability, "%")}; latency p50 ${figure(sum.latency_p50_ms, " ms")}, `
        + `p95 ${figure(sum.latency_p95_ms, " ms")}.`);
      const m = s.this_month;
      if (m) {
        let said = `So far: ${figure(m.availability, "%")} available, ${m.down_minutes} minutes down, `
          + `${m.incidents} incident${m.incidents === 1 ? "" : "s"}.`;
        if (m.sla) {
          said += ` Target ${m.sla.met === null ? "not judged yet" : m.sla.met ? "met" : "missed"} so far; `
            + `${m.sla.error_budget_left_minutes} of ${m.sla.error_budget_minutes} minutes of error budget left.`;
        }
        tell("this-month", said);
      }
      const v = s.vendor;
      if (v) {
        tell("vendor-read", v.fetched_at ? `Last read ${at(v.fetched_at)}: ${words.outcomes[v.outcome] || v.outcome}`
          + `${v.detail ? ` (${v.detail})` : ""}.` : "Not read yet.");
      }
      if (s.status !== live.dataset.status) tell("changed", "The status has changed since this page was made: reload it.");
    };
    let last = null;
    poll(live.dataset.record, live.dataset.refresh, (record) => { last = record; fill(record); }, () => {
      aged("as-of", asOf);
      stale(last);
    });
  }

  // The front page: the banner, the health index, the counts and each service's status follow the
  // snapshot; a change of the open incidents asks the reader to reload.
  const overall = document.querySelector("[data-snapshot]");
  if (overall) {
    const words = JSON.parse(overall.dataset.words);
    let asOf = null;
    let last = { as_of: overall.dataset.asOf, stale_after: overall.dataset.staleAfter,
                 summary: overall.querySelector("strong").textContent };
    const made = [...overall.childNodes].map((n) => n.cloneNode(true));   // the banner as the page came
    stale(last);                            // before any answer: the page's own time tells
    const fill = (snap) => {
      asOf = snap.as_of;
      last = snap;
      if (overall.classList.contains("banner-stale")) overall.replaceChildren(...made.map((n) => n.cloneNode(true)));
      const shown = overall.querySelector(".as-of time");
      if (shown) {
        shown.dateTime = snap.as_of;
        shown.textContent = LOCAL.format(new Date(snap.as_of));
      }
      overall.className = `banner banner-${snap.status}`;
      overall.querySelector("strong").textContent = snap.summary;
      const index = document.getElementById("health-index");
      if (index && snap.health_index !== null) index.textContent = String(snap.health_index);
      for (const [status, n] of Object.entries(snap.counts.by_status)) {
        const count = document.querySelector(`.counts li[data-status="${status}"] b`);
        if (count) count.textContent = String(n);
      }
      for (const svc of snap.services) {
        const word = document.querySelector(`#svc-${svc.slug} .svc-head .st`);
        if (word) {
          word.className = `st st-${svc.status}`;
          word.textContent = words[svc.status] || svc.status;
        }
      }
      if (String(snap.open_incidents) !== overall.dataset.open) {
        tell("front-changed", "The open incidents have changed since this page was made: reload it.");
      }
    };
    poll(overall.dataset.snapshot, overall.dataset.refresh, fill, () => {
      aged("front-as-of", asOf);
      stale(last);
    });
  }
  if (!live && !overall) {                   // any other page: health's time tells
    fetch("/api/v1/health", { cache: "no-store" }).then((r) => (r.ok ? r.json() : null)).then(stale, () => {});
  }

  document.querySelectorAll("[data-hint]").forEach((hint) => { hint.hidden = false; });   // how to use what follows
  document.querySelectorAll("svg[data-src]").forEach((chart) => explore(chart, chart.dataset.src));
  document.querySelectorAll("li[id^='svc-'] > .bar").forEach((bar) => {
    explore(bar, `/api/v1/services/${bar.parentElement.id.slice(4)}/history?range=90d`);
  });
})();
