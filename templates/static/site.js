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
   front page's banner says what time its words are as of.

   Every word it says comes from the page (the #words element: its sentences in the page's
   language, with %(name)s places), and every number and time is formatted with Intl in the
   page's language (<html lang>), as the server formats those of the page with Babel. */
"use strict";
(() => {
  const LANG = document.documentElement.lang || "en";
  // The language of the JSON (the site's first): its sentences are shown only on pages in it.
  const JSON_LANGUAGE = document.body.dataset.jsonLanguage || LANG;
  const WORDS_OF = JSON.parse(document.getElementById("words")?.textContent || "{}");
  const SAID = WORDS_OF.say || {};
  // A sentence of the page's language with its places filled: say("as_of", { time: "..." }).
  const say = (key, values = {}) => (SAID[key] || key).replace(/%\((\w+)\)s/g, (_, name) => String(values[name] ?? ""));
  const NUMBER = new Intl.NumberFormat(LANG, { maximumFractionDigits: 3 });
  const PERCENT = new Intl.NumberFormat(LANG, { style: "percent", maximumFractionDigits: 5 });
  const num = (v) => NUMBER.format(v);
  const pct = (v) => PERCENT.format(v / 100);
  const DAY = new Intl.DateTimeFormat(LANG, { timeZone: "UTC", year: "numeric", month: "short", day: "numeric" });
  const DAY_TIME = new Intl.DateTimeFormat(LANG, {
    timeZone: "UTC", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });
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

  // A bucket's start as precise as its resolution needs: "Nov 22, 2026" or "Nov 22, 20:05 UTC";
  // the bucket in progress at a bar's or a chart's end says so.
  function when(start, resolution, sofar) {
    const at = new Date(start);
    if (resolution >= 86400) return sofar ? say("today_so_far", { day: DAY.format(at) }) : DAY.format(at);
    const time = `${DAY_TIME.format(at)} UTC`;
    return sofar ? say("bucket_so_far", { time }) : time;
  }

  // The band of an availability, as the server names it (render.words.band).
  function band(availability, maintenance) {
    if (availability === null) return maintenance ? "a-maint" : "a-none";
    if (availability >= 100) return "a-full";
    if (availability >= 99) return "a-high";
    return availability >= 95 ? "a-mid" : "a-low";
  }

  // A service page's record as last read (its data-record, polled below): the charts' bucket in
  // progress is read from it.
  let latestRecord = null;
  const recordOf = (url) => (latestRecord ? Promise.resolve(latestRecord) : history(url));

  // How many of a bar's days a screen this wide shows (site.css hides the older ones).
  function shownDays(n) {
    if (window.matchMedia("(max-width: 599.98px)").matches) return Math.min(30, n);
    if (window.matchMedia("(max-width: 899.98px)").matches) return Math.min(60, n);
    return n;
  }

  const ms = (v) => say("ms", { ms: num(v) });
  const WORDS = {
    availability(p) {
      const minutes = say("incident_minutes", { minutes: num(p.incident_minutes) });
      if (p.availability === null) {
        return say(p.maintenance ? "maintenance_only" : "no_data") + (p.incident_minutes ? `, ${minutes}` : "");
      }
      return `${say("available", { percent: pct(p.availability) })}, ${minutes}`;
    },
    latency(p) {
      return p.latency_p50_ms === null ? say("no_latency")
        : say("latency", { p50: ms(p.latency_p50_ms), p95: ms(p.latency_p95_ms) });
    },
  };

  // The keys of a slider: where each moves from bucket i of n (Page Up and Page Down by a twelfth).
  const KEYS = {
    ArrowLeft: (i) => i - 1, ArrowDown: (i) => i - 1, ArrowRight: (i) => i + 1, ArrowUp: (i) => i + 1,
    PageDown: (i, n) => i - Math.ceil(n / 12), PageUp: (i, n) => i + Math.ceil(n / 12),
    Home: () => 0, End: (i, n) => n - 1,
  };

  // ``record``: the service's record, whose bucket in progress is drawn at the end: for a front
  // page bar, the day so far of the 90-day history; for a chart (data-range), its range's bucket,
  // in the slot the chart keeps after its closed buckets (when it follows them: a page older than
  // its data has none).
  function explore(el, src, record) {
    const words = WORDS[el.dataset.tell || "availability"];
    const range = el.dataset.range || null;   // a chart's: it has a slot more than closed buckets
    const plot = el.dataset.plot ? el.dataset.plot.split(" ").map(Number) : null;
    // A chart's slot of the bucket in progress after its plot of closed buckets: x width.
    const sofar = el.dataset.sofar ? el.dataset.sofar.split(" ").map(Number) : null;
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
    const initial = String(Number(el.dataset.count) + (range ? 1 : 0));
    el.setAttribute("aria-valuemax", initial);
    el.setAttribute("aria-valuenow", initial);
    el.setAttribute("aria-valuetext", say("slider_start"));
    if (!el.getAttribute("aria-label")) {
      const name = el.closest("li")?.querySelector("a")?.textContent || say("availability");
      el.setAttribute("aria-label", say("bar_label", { name }));
    }

    // The plot area on screen, in CSS pixels from the host's top left corner.
    function area() {
      const box = el.getBoundingClientRect();
      const origin = host.getBoundingClientRect();
      const k = plot ? box.width / el.viewBox.baseVal.width : 1;
      const [x, y, w, h] = plot || [0, 0, box.width, box.height];
      const [sx, sw] = sofar || [x + w, 0];
      return { left: box.left - origin.left + x * k, top: box.top - origin.top + y * k,
               width: w * k, height: h * k, hostWidth: origin.width, screenLeft: box.left + x * k,
               slotLeft: box.left - origin.left + sx * k, slotWidth: sw * k };
    }

    function load() {
      const asked = record ? Promise.all([history(src), range ? recordOf(record) : history(record)])
        : history(src).then((d) => [d]);
      return asked.then(([d, r]) => {
        let today = r && r.service.in_progress && r.service.in_progress[range || "90d"];
        if (today && range && today.start !== d.to) today = null;   // not the bucket after these
        doc = { resolution_s: d.resolution_s, closed: d.points, today: today ? { ...today, sofar: true } : null };
        return doc;
      });
    }

    // The buckets drawn now: a bar's last days as wide as the screen shows them, and its day so
    // far; a chart's closed buckets and the one in progress.
    function points() {
      if (!record) return doc.closed;
      const shown = range ? doc.closed : doc.closed.slice(doc.closed.length - shownDays(doc.closed.length));
      return doc.today ? shown.concat([doc.today]) : shown;
    }
    // The buckets across the plot: a chart's closed ones (its bucket in progress has its own slot).
    const across = () => (range ? doc.closed.length : points().length);

    function show(i) {
      const drawn = points();
      index = Math.max(0, Math.min(drawn.length - 1, i));
      if (document.activeElement === el) cursor = index;
      const p = drawn[index];
      const text = `${when(p.start, doc.resolution_s, p.sofar)}: ${words(p)}`;
      el.setAttribute("aria-valuemax", String(drawn.length));
      el.setAttribute("aria-valuenow", String(index + 1));
      el.setAttribute("aria-valuetext", text);
      tip.textContent = text;
      if (!tip.isConnected) host.append(mark, tip);
      const a = area();
      const step = a.width / across();
      const inSlot = index >= across();
      const left = inSlot ? a.slotLeft : a.left + index * step;
      const wide = inSlot ? a.slotWidth : step;
      Object.assign(mark.style, { left: `${left}px`, top: `${a.top}px`,
                                  width: `${Math.max(wide, 2)}px`, height: `${a.height}px` });
      tip.style.maxWidth = `${a.hostWidth}px`;
      const centre = left + wide / 2;
      const at = Math.max(0, Math.min(a.hostWidth - tip.offsetWidth, centre - tip.offsetWidth / 2));
      Object.assign(tip.style, { left: `${at}px`, top: `${a.top - tip.offsetHeight - 6}px` });
    }

    function fail() {
      tip.textContent = say("unreadable");
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
      if (f >= 1 && range && clientX < a.screenLeft + a.width + a.slotWidth) return doc.today ? across() : null;
      return f < 0 || f >= 1 ? null : Math.floor(f * across());
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
    // A touch has no pointer moving over the bar first, and leaves before the focus comes: where
    // it lands is the day chosen, now or when the focus shows it.
    let tapX = null;
    el.addEventListener("pointerdown", (e) => {
      tapX = e.clientX;
      if (document.activeElement === el) {
        load().then(() => { const i = indexAt(tapX); if (i !== null) show(i); }, fail);
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
        const x = pointerX === null ? tapX : pointerX;
        const i = x === null ? null : indexAt(x);   // a click or a tap chooses the bucket under it
        show(i !== null ? i : cursor < 0 ? points().length - 1 : cursor);
      }, fail);
    });
    el.addEventListener("blur", () => { if (pointerX === null) hide(); });
    el.addEventListener("keydown", (e) => {
      const move = KEYS[e.key];
      if (!move) return;
      e.preventDefault();
      load().then(() => show(move(cursor, points().length)), fail);   // after the focus has shown its bucket
    });
  }

  // Times are written in UTC ("2026-11-22 20:02 UTC"); where this script runs they read in the
  // reader's own time zone, the UTC one kept as the title, and a "since" says for how long.
  const LOCAL = new Intl.DateTimeFormat(LANG, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
    timeZoneName: "short",
  });
  const unit = (name, display) => new Intl.NumberFormat(LANG, { style: "unit", unit: name, unitDisplay: display });
  const MINUTES = unit("minute", "short");
  const HOURS = unit("hour", "short");
  const DAYS = unit("day", "long");
  function lasted(span) {
    const min = Math.max(0, Math.round(span / 60000));
    if (min < 60) return MINUTES.format(min);
    const hours = Math.floor(min / 60);
    return hours < 48 ? `${HOURS.format(hours)} ${MINUTES.format(min % 60)}` : DAYS.format(Math.floor(hours / 24));
  }
  document.querySelectorAll("time[datetime]").forEach((t) => {
    const at = new Date(t.getAttribute("datetime"));
    if (!t.textContent.endsWith(" UTC") || Number.isNaN(at.getTime())) return;   // days stay UTC days
    t.title = t.textContent;
    t.textContent = LOCAL.format(at);
    if (t.closest("[data-since]")) t.after(` ${say("lasted", { duration: lasted(Date.now() - at.getTime()) })}`);
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
    said.textContent = say("stale", { time: LOCAL.format(new Date(since)), duration: lasted(Date.now() - since) });
    const summary = doc.summary && (LANG === JSON_LANGUAGE || doc.own) ? doc.summary : null;
    const rest = ` ${summary ? say("stale_summary", { summary }) : say("stale_rest")}`;
    banner.className = "banner banner-stale";
    banner.replaceChildren(said, rest);
    banner.hidden = false;
  };

  // A sentence told into a data-live element with each figure its own element, naming its field
  // in the JSON (data-field) and, when it is not the element's, the document it is read from
  // (data-source): ``values`` are text, or { text, field, source, at } (at: a time, as <time>).
  const tellParts = (name, key, values) => {
    const el = document.querySelector(`[data-live="${name}"]`);
    if (!el) return;
    const sentence = SAID[key] || key;
    const parts = [];
    let from = 0;
    for (const m of sentence.matchAll(/%\((\w+)\)s/g)) {
      parts.push(sentence.slice(from, m.index));
      const v = values[m[1]] ?? "";
      if (typeof v === "object") {
        const span = document.createElement("span");
        if (v.field) span.dataset.field = v.field;
        if (v.source) span.dataset.source = v.source;
        if (v.at) {
          const t = document.createElement("time");
          t.dateTime = v.at;
          t.textContent = v.text;
          span.append(t);
        } else span.textContent = v.text;
        parts.push(span);
      } else parts.push(String(v));
      from = m.index + m[0].length;
    }
    parts.push(sentence.slice(from));
    el.replaceChildren(...parts);
    el.hidden = false;
  };

  const aged = (name, asOf) => {
    if (asOf) tell(name, say("as_of", { time: LOCAL.format(new Date(asOf)), duration: lasted(Date.now() - Date.parse(asOf)) }));
  };

  // The bucket in progress of a chart's range (``p``, a history point so far) drawn in the slot the
  // chart keeps after its closed buckets: outlined, and marked "so far".
  const SVG = "http://www.w3.org/2000/svg";
  function drawSoFar(chart, p) {
    const [, y, , h] = chart.dataset.plot.split(" ").map(Number);
    const [left, step] = chart.dataset.sofar.split(" ").map(Number);
    const base = y + h;
    const add = (name, attrs) => {
      const e = document.createElementNS(SVG, name);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
      e.classList.add("sofar");
      chart.append(e);
      return e;
    };
    add("rect", { x: left, y, width: step, height: h, class: "slot" });
    if (chart.dataset.tell === "latency") {
      const top = Number(chart.dataset.top) || 1;
      for (const [value, css] of [[p.latency_p95_ms, "dot95"], [p.latency_p50_ms, "dot50"]]) {
        if (value !== null) add("circle", { cx: left + step / 2, cy: base - (Math.min(value, top) / top) * h, r: 2.5, class: css });
      }
    } else {
      const tall = p.availability === null ? 3 : Math.max(1.5, (p.availability / 100) * h);
      add("rect", { x: left, y: base - tall, width: step, height: tall, class: band(p.availability, p.maintenance) });
    }
    const label = add("text", { x: left + step, y: y - 1, class: "end" });
    label.textContent = say("chart_so_far");
  }

  // A service page leaves out what moves with every result (so that it changes only when what it
  // says does): its data-live parts are told here from the service's record.
  const live = document.querySelector("[data-record]");
  if (live) {
    const words = WORDS_OF;
    let asOf = null;
    const at = (iso) => LOCAL.format(new Date(iso));
    const figure = (v, format) => (v === null || v === undefined ? "\u2014" : format(v));
    const result = (r) => {
      const said = words.outcomes[r.outcome] || r.outcome;
      let text = said.charAt(0).toUpperCase() + said.slice(1);
      if (r.http_status) text += `, ${say("http", { code: r.http_status })}`;
      if (r.latency_ms !== null) text += `, ${ms(r.latency_ms)}`;
      if (r.slow) text += ` ${say("slow")}`;
      if (r.condition) text += `: ${r.condition}`;
      if (r.flag) text += `; ${say("not_counted", { why: words.flags[r.flag] || r.flag })}`;
      return `${text}, ${at(r.at)}`;
    };
    // The figures of a summary or a point (``base``: its path in the record), each its own element.
    const counted = (p, base) => {
      const more = [[p.maintenance, "in_maintenance"], [p.excluded, "set_aside"]].filter(([n]) => n)
        .map(([n, key]) => `, ${say(key, { n: num(n) })}`).join("");
      return {
        checks: { text: num(p.checks), field: `${base}.checks` },
        failed: { text: num(p.failed), field: `${base}.failed` },
        more,
        availability: { text: figure(p.availability, pct), field: `${base}.availability` },
        p50: { text: figure(p.latency_p50_ms, num), field: `${base}.latency_p50_ms` },
        p95: { text: figure(p.latency_p95_ms, num), field: `${base}.latency_p95_ms` },
        minutes: { text: num(p.incident_minutes), field: `${base}.incident_minutes` },
      };
    };
    let lastDayClosed = null;                 // the 24h history the last-day line was told with
    const fill = (record) => {
      latestRecord = record;
      const s = record.service;
      asOf = record.as_of;
      for (const c of s.checks) {
        tell(`check-${c.check}`, c.last_result ? result(c.last_result) : say("no_result"));
        for (const seen of c.locations || []) {
          tell(`at-${seen.location}-${c.check}`, seen.last_result ? result(seen.last_result) : say("no_fresh"));
        }
      }
      const progress = s.in_progress || {};
      // Each range's panel is of the closed buckets up to its data-to: the bucket in progress told
      // after it, and drawn in its charts' last slot, is the one that follows (a page older than
      // its data says so instead).
      let behind = false;
      document.querySelectorAll(".panel[data-to]").forEach((panel) => {
        const range = panel.id.replace("panel-", "");
        const p = progress[range];
        const charts = panel.querySelectorAll("svg[data-range]");
        charts.forEach((chart) => chart.querySelectorAll(".sofar").forEach((e) => e.remove()));
        if (!p || p.start !== panel.dataset.to) {
          behind = true;
          const line = panel.querySelector("[data-live]");
          if (line) line.hidden = true;
          return;
        }
        tellParts(`progress-${range}`, "progress", {
          ...counted(p, `service.in_progress.${range}`),
          start: { text: at(p.start), at: p.start, field: `service.in_progress.${range}.start` },
        });
        charts.forEach((chart) => drawSoFar(chart, p));
      });
      if (behind) tell("changed", say("panels_changed"));
      const day = s.last_day;
      const now = progress["24h"];
      const closedAt = document.querySelector("#panel-24h")?.dataset.source;
      if (now && closedAt) {
        const told = (closed) => {
          if (closed.to !== now.start) return;   // the history and the record a run apart: next time
          const base = "service.last_day.summary";
          tellParts("last-day", "last_day", {
            ...counted(day.summary, base),
            start: { text: at(day.from), at: day.from, field: "service.last_day.from" },
            end: { text: at(day.to), at: day.to, field: "service.last_day.to" },
            closed_checks: { text: num(closed.summary.checks), field: "summary.checks", source: closedAt },
            closed_failed: { text: num(closed.summary.failed), field: "summary.failed", source: closedAt },
            progress_checks: { text: num(now.checks), field: "service.in_progress.24h.checks" },
            progress_failed: { text: num(now.failed), field: "service.in_progress.24h.failed" },
          });
        };
        if (lastDayClosed && lastDayClosed.to === now.start) told(lastDayClosed);
        else {
          fetch(closedAt, { cache: "no-store" }).then((r) => (r.ok ? r.json() : null)).then((closed) => {
            if (!closed) return;
            lastDayClosed = closed;
            told(closed);
          }, () => {});
        }
      }
      const m = s.this_month;
      if (m) {
        let said = say("so_far", {
          availability: figure(m.availability, pct), down: num(m.down_minutes), incidents: num(m.incidents),
        });
        if (m.sla) {
          const judged = m.sla.met === null ? "target_open" : m.sla.met ? "target_met" : "target_missed";
          said += ` ${say(judged, { left: num(m.sla.error_budget_left_minutes), budget: num(m.sla.error_budget_minutes) })}`;
        }
        tell("this-month", said);
      }
      const v = s.vendor;
      if (v) {
        const outcome = words.outcomes[v.outcome] || v.outcome;
        tell("vendor-read", !v.fetched_at ? say("not_read")
          : say(v.detail ? "vendor_read_detail" : "vendor_read", { time: at(v.fetched_at), outcome, detail: v.detail }));
      }
      if (s.status !== live.dataset.status) tell("changed", say("changed"));
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
    const words = WORDS_OF.statuses || {};
    let asOf = null;
    let last = { as_of: overall.dataset.asOf, stale_after: overall.dataset.staleAfter,
                 summary: overall.querySelector("strong").textContent, own: true };   // the page's own words
    const made = [...overall.childNodes].map((n) => n.cloneNode(true));   // the banner as the page came
    // The snapshot's sentence is in the site's first language: a page in another keeps its own.
    const ownWords = LANG === JSON_LANGUAGE ? null : last.summary;
    stale(last);                            // before any answer: the page's own time tells
    const fill = (snap) => {
      asOf = snap.as_of;
      last = ownWords ? { ...snap, summary: ownWords, own: true } : snap;
      if (overall.classList.contains("banner-stale")) overall.replaceChildren(...made.map((n) => n.cloneNode(true)));
      const shown = overall.querySelector(".as-of time");
      if (shown) {
        shown.dateTime = snap.as_of;
        shown.textContent = LOCAL.format(new Date(snap.as_of));
      }
      overall.className = `banner banner-${snap.status}`;
      const index = document.getElementById("health-index");
      if (index && snap.health_index !== null) index.textContent = num(snap.health_index);
      let changed = false;
      for (const [status, n] of Object.entries(snap.counts.by_status)) {
        const count = document.querySelector(`.counts li[data-status="${status}"] b`);
        if (count && count.textContent !== num(n)) { count.textContent = num(n); changed = true; }
      }
      if (!ownWords) overall.querySelector("strong").textContent = snap.summary;
      if (changed) tell("front-changed", say("changed"));   // the headline says what the page was made with
      for (const svc of snap.services) {
        const word = document.querySelector(`#svc-${svc.slug} .svc-head .st`);
        if (word) {
          word.className = `st st-${svc.status}`;
          word.textContent = words[svc.status] || svc.status;
        }
      }
      if (String(snap.open_incidents) !== overall.dataset.open) {
        tell("front-changed", say("front_changed"));
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

  // The subscribe page: boxes in place of a link per service, and one link whose subject names
  // the ticked services and the page's language, as statusgen.mailto.subject writes it.
  const pick = document.querySelector("[data-subscribe-pick]");
  if (pick) {
    const link = pick.querySelector("[data-subscribe-link]");
    const to = link.getAttribute("href").split("?")[0];
    const rebuild = () => {
      const ticked = [...pick.querySelectorAll("input[name=service]:checked")].map((box) => box.value);
      link.href = `${to}?subject=${encodeURIComponent(["subscribe", ...ticked, `lang=${LANG}`].join(" "))}`;
    };
    pick.addEventListener("change", rebuild);
    pick.addEventListener("submit", (e) => e.preventDefault());
    rebuild();
    document.querySelector("[data-subscribe-each]").hidden = true;
    pick.hidden = false;
  }

  document.querySelectorAll("[data-hint]").forEach((hint) => { hint.hidden = false; });   // how to use what follows
  document.querySelectorAll("svg[data-src]").forEach((chart) => explore(chart, chart.dataset.src, live?.dataset.record));
  document.querySelectorAll("li[id^='svc-'] > .bar").forEach((bar) => {
    const slug = bar.parentElement.id.slice(4);
    explore(bar, `/api/v1/services/${slug}/history?range=90d`, `/api/v1/services/${slug}`);
  });
})();
