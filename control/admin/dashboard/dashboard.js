// SPDX-License-Identifier: BSD-3-Clause
/*
 * dashboard.js - the live dashboard of seckill-control (docs/dashboard.md).
 *
 * Once a second it reads two answers of the admin API that serves it (same
 * origin): GET /v1/items (JSON: every item's arena counters, activity and
 * ledger) and GET /metrics (Prometheus text, parsed here). From each pair of
 * consecutive samples it derives rates (requests/s by outcome, units sold/s,
 * commits/s) and interval percentiles (buy latency, commit latency), keeps
 * the last 10 minutes in memory and redraws plain SVG charts. No library,
 * no framework, nothing fetched from elsewhere; the Content-Security-Policy
 * of the page (default-src 'self') would refuse it anyway.
 *
 * On TCP the admin API wants a bearer token for /v1/items (docs/dashboard.md,
 * "Access"): the page takes it from its URL once (/dashboard#token=T, which
 * never leaves the browser: a fragment is not sent) or asks for it after a
 * 401, keeps it in sessionStorage (this tab only, gone when it closes),
 * sends it as Authorization: Bearer and removes it from the address bar.
 * Through the unix socket (an ssh -L tunnel) no token is needed.
 *
 * Values the browser test reads carry stable attributes:
 *   [data-item="ID"][data-field="sold|remaining|total|state|wps"]  per item
 *   [data-metric="rps|lat-p99|ring-depth|export-backlog|redis|mysql|..."]
 */
'use strict';

const POLL_MS = 1000;
const HISTORY_S = 600;
const FETCH_TIMEOUT_MS = 4000;
const STALE_MS = 4000;
const TOKEN_KEY = 'seckill-admin-token'; // sessionStorage key of the bearer token
const NEVER_NS = 9e18; // end_ns of a sale without end is INT64_MAX
const SVG_NS = 'http://www.w3.org/2000/svg'; // the SVG namespace name (never fetched)

const STATE_LABEL = {
	scheduled: 'scheduled',
	open: 'open',
	sold_out: 'sold out',
	ended: 'ended',
	loading: 'loading',
	unknown: 'unknown',
};

// Buy outcomes of seckill_requests_total, in display order, with colours.
const OUTCOMES = [
	['won', '#16a34a'],
	['duplicate', '#0d9488'],
	['sold_out', '#64748b'],
	['not_started', '#2563eb'],
	['ended', '#7c3aed'],
	['limit', '#ca8a04'],
	['rate_limited', '#ea580c'],
	['busy', '#f97316'],
	['unauthorized', '#e11d48'],
	['unavailable', '#991b1b'],
	['not_found', '#a8a29e'],
	['bad_request', '#be185d'],
	['paused', '#0284c7'],
	['restocking', '#0369a1'],
	['gate', '#9333ea'],
	['not_reserved', '#c026d3'],
	['denied', '#44403c'],
];

const LCORE_COLORS = ['#0d9488', '#d97706', '#7c3aed', '#db2777', '#65a30d', '#0891b2', '#ea580c', '#4f46e5'];

const ORDER_STATES = [
	['queued', '#f59e0b'],
	['confirmed', '#2563eb'],
	['paid', '#16a34a'],
	['cancelled', '#94a3b8'],
	['refunded', '#7c3aed'],
	['failed', '#dc2626'],
];

/* ----------------------------------------------------------- formatting */

function fmtInt(v) {
	return v === undefined || v === null || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US');
}

function fmtRate(v) {
	if (v === undefined || v === null || !Number.isFinite(v)) return '–';
	if (v === 0) return '0';
	if (v < 10) return v.toFixed(1);
	return Math.round(v).toLocaleString('en-US');
}

function fmtSeconds(s) {
	if (s === undefined || s === null || !Number.isFinite(s)) return '–';
	if (s < 1e-3) return (s * 1e6).toFixed(s < 1e-5 ? 1 : 0) + ' µs';
	if (s < 1) return (s * 1e3).toFixed(s < 1e-2 ? 2 : 1) + ' ms';
	return s.toFixed(2) + ' s';
}

function fmtBytes(b) {
	if (b === undefined || !Number.isFinite(b)) return '–';
	const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	while (b >= 1024 && i < units.length - 1) {
		b /= 1024;
		i++;
	}
	return (i === 0 ? b.toFixed(0) : b.toFixed(b < 10 ? 1 : 0)) + ' ' + units[i];
}

function fmtClock(ms, withSeconds = true) {
	const d = new Date(ms);
	const p = (n) => String(n).padStart(2, '0');
	return p(d.getHours()) + ':' + p(d.getMinutes()) + (withSeconds ? ':' + p(d.getSeconds()) : '');
}

function fmtAgo(s) {
	if (!Number.isFinite(s)) return '–';
	if (s < 1) return 'just now';
	if (s < 90) return Math.round(s) + ' s ago';
	if (s < 5400) return Math.round(s / 60) + ' min ago';
	return Math.round(s / 3600) + ' h ago';
}

function fmtIn(s) {
	if (s < 60) return Math.ceil(s) + ' s';
	if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.floor(s % 60) + ' s';
	if (s < 172800) return (s / 3600).toFixed(1) + ' h';
	return Math.round(s / 86400) + ' days';
}

// fmtTimeNs - a sale's start or end (unix ns) as local date and time.
function fmtTimeNs(ns) {
	if (ns >= NEVER_NS) return 'never';
	const ms = ns / 1e6;
	const d = new Date(ms);
	const sameDay = new Date().toDateString() === d.toDateString();
	return (sameDay ? '' : d.toISOString().slice(0, 10) + ' ') + fmtClock(ms);
}

/* ---------------------------------------------------------------- DOM */

// h - an element: h('div', {class: 'x', 'data-k': 'v'}, child, 'text', ...).
function h(tag, attrs, ...children) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
	for (const c of children) el.append(c);
	return el;
}

function svg(tag, attrs) {
	const el = document.createElementNS(SVG_NS, tag);
	for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
	return el;
}

function setText(id, text) {
	const el = typeof id === 'string' ? document.getElementById(id) : id;
	if (el && el.textContent !== text) el.textContent = text;
}

/* ------------------------------------------------- Prometheus text format */

// parseValue - a sample value: a float, +Inf, -Inf or NaN; undefined if none.
function parseValue(s) {
	if (s === '+Inf' || s === 'Inf') return Infinity;
	if (s === '-Inf') return -Infinity;
	if (s === 'NaN') return NaN;
	if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return undefined;
	return Number(s);
}

// parseSample - one sample line: {name, labels, value}, or null if malformed.
function parseSample(line) {
	const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
	if (!m) return null;
	const labels = {};
	let i = m[0].length;
	if (line[i] === '{') {
		i++;
		for (;;) {
			while (line[i] === ' ' || line[i] === ',') i++;
			if (line[i] === '}') {
				i++;
				break;
			}
			const lm = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
			if (!lm) return null;
			i += lm[0].length;
			if (line[i] !== '=' || line[i + 1] !== '"') return null;
			i += 2;
			let v = '';
			while (i < line.length && line[i] !== '"') {
				if (line[i] === '\\' && i + 1 < line.length) {
					i++;
					v += line[i] === 'n' ? '\n' : line[i];
				} else {
					v += line[i];
				}
				i++;
			}
			if (i >= line.length) return null;
			i++;
			labels[lm[0]] = v;
		}
	}
	const fields = line.slice(i).trim().split(/\s+/);
	const value = parseValue(fields[0]);
	if (value === undefined) return null;
	return { name: m[0], labels, value };
}

/*
 * parseProm - the text format 0.0.4 as a Map name -> [{labels, value}]
 * (comments skipped, a malformed line skipped and counted in .bad).
 */
function parseProm(text) {
	const out = new Map();
	out.bad = 0;
	for (const raw of text.split('\n')) {
		const line = raw.trim();
		if (line === '' || line[0] === '#') continue;
		const s = parseSample(line);
		if (s === null) {
			out.bad++;
			continue;
		}
		if (!out.has(s.name)) out.set(s.name, []);
		out.get(s.name).push({ labels: s.labels, value: s.value });
	}
	return out;
}

function labelsMatch(have, want) {
	for (const [k, v] of Object.entries(want)) if (have[k] !== v) return false;
	return true;
}

// mval - the value of NAME with (at least) LABELS; undefined if absent.
function mval(m, name, labels = {}) {
	for (const s of m.get(name) || []) if (labelsMatch(s.labels, labels)) return s.value;
	return undefined;
}

// msum - the sum of every sample of NAME; undefined if absent.
function msum(m, name) {
	const list = m.get(name);
	if (!list) return undefined;
	return list.reduce((a, s) => a + s.value, 0);
}

// histogram - {bounds: [le...], cum: [count...], count, sum} of NAME, or null.
function histogram(m, name) {
	const b = (m.get(name + '_bucket') || [])
		.map((s) => [parseValue(s.labels.le), s.value])
		.filter((x) => x[0] !== undefined)
		.sort((x, y) => x[0] - y[0]);
	if (b.length === 0) return null;
	return {
		bounds: b.map((x) => x[0]),
		cum: b.map((x) => x[1]),
		count: mval(m, name + '_count') ?? b[b.length - 1][1],
		sum: mval(m, name + '_sum') ?? 0,
	};
}

// histDelta - CUR minus PREV bucket by bucket (a reset: CUR itself).
function histDelta(cur, prev) {
	if (!cur) return null;
	if (!prev || prev.bounds.length !== cur.bounds.length || prev.count > cur.count) return cur;
	return {
		bounds: cur.bounds,
		cum: cur.cum.map((c, i) => c - prev.cum[i]),
		count: cur.count - prev.count,
		sum: cur.sum - prev.sum,
	};
}

/*
 * quantile - the Q quantile of a cumulative histogram, interpolated inside
 * its bucket as Prometheus' histogram_quantile() does; null if empty. In
 * the +Inf bucket: the largest finite bound.
 */
function quantile(hg, q) {
	if (!hg || hg.cum.length === 0) return null;
	const total = hg.cum[hg.cum.length - 1];
	if (!(total > 0)) return null;
	const rank = q * total;
	for (let i = 0; i < hg.cum.length; i++) {
		if (hg.cum[i] < rank) continue;
		const hi = hg.bounds[i];
		const lo = i === 0 ? 0 : hg.bounds[i - 1];
		if (hi === Infinity) return lo;
		const below = i === 0 ? 0 : hg.cum[i - 1];
		const inside = hg.cum[i] - below;
		return inside > 0 ? lo + (hi - lo) * ((rank - below) / inside) : hi;
	}
	return hg.bounds[hg.bounds.length - 2] ?? null;
}

// rate - per second from two counter values DT seconds apart (a reset: CUR / DT).
function rate(cur, prev, dt) {
	if (cur === undefined || prev === undefined || !(dt > 0)) return null;
	return (cur >= prev ? cur - prev : cur) / dt;
}

/* ------------------------------------------------------------- history */

// One time series: parallel arrays of client times (ms) and values (null = gap).
class Series {
	constructor() {
		this.t = [];
		this.v = [];
	}

	push(t, v) {
		this.t.push(t);
		this.v.push(v === undefined ? null : v);
	}

	prune(tmin) {
		let k = 0;
		while (k < this.t.length && this.t[k] < tmin) k++;
		if (k > 0) {
			this.t.splice(0, k);
			this.v.splice(0, k);
		}
	}

	last() {
		return this.v.length ? this.v[this.v.length - 1] : null;
	}

	// max - the largest value at t >= T0 (nulls skipped), -Infinity if none.
	max(t0) {
		let m = -Infinity;
		for (let i = 0; i < this.t.length; i++) if (this.t[i] >= t0 && this.v[i] !== null && this.v[i] > m) m = this.v[i];
		return m;
	}
}

const history = new Map();

function series(key) {
	let s = history.get(key);
	if (!s) {
		s = new Series();
		history.set(key, s);
	}
	return s;
}

function record(key, t, v) {
	series(key).push(t, v);
}

// pruneHistory - drop what is older than HISTORY_S, and series left empty.
function pruneHistory(now) {
	for (const [k, s] of history) {
		s.prune(now - HISTORY_S * 1000);
		if (s.t.length === 0) history.delete(k);
	}
}

/* ---------------------------------------------------------------- charts */

function niceStep(range, ticks) {
	const raw = range / ticks;
	const mag = Math.pow(10, Math.floor(Math.log10(raw)));
	const n = raw / mag;
	return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag;
}

const TIME_STEPS = [5, 10, 15, 30, 60, 120, 300, 600].map((s) => s * 1000);

/*
 * A line chart in an SVG that fills its host element: time on x (the
 * chosen window, ending now), one or more series on y (linear from 0, or
 * log10), grid, axis labels, and a hover cursor with the values.
 */
class Chart {
	/*
	 * opts: {fmt: value -> text, label: for screen readers, log: log10 y axis
	 * (logMin: its lowest bottom), minMax: smallest top of a linear axis,
	 * integer: whole ticks only, area: fill below the first line, empty:
	 * the text of a chart without data}
	 */
	constructor(hostId, opts) {
		this.host = document.getElementById(hostId);
		this.opts = opts;
		this.svg = svg('svg', { role: 'img', 'aria-label': opts.label || '' });
		this.tip = h('div', { class: 'tip', hidden: '' });
		this.host.append(this.svg, this.tip);
		this.lines = [];
		this.geo = null;
		this.svg.addEventListener('mousemove', (e) => this.hover(e));
		this.svg.addEventListener('mouseleave', () => this.unhover());
	}

	// draw - LINES [{key, label, color}] (series keys of the history) over [T0, T1].
	draw(lines, t0, t1) {
		this.lines = lines;
		const w = Math.max(120, this.host.clientWidth);
		const hgt = Math.max(60, this.host.clientHeight);
		const o = this.opts;
		const ml = 46;
		const mr = 6;
		const mt = 6;
		const mb = 17;
		const pw = w - ml - mr;
		const ph = hgt - mt - mb;
		const kids = [];
		this.svg.setAttribute('viewBox', `0 0 ${w} ${hgt}`);

		let top = -Infinity;
		let lowPos = Infinity;
		for (const l of lines) {
			const s = history.get(l.key);
			if (!s) continue;
			for (let i = 0; i < s.t.length; i++) {
				const v = s.v[i];
				if (s.t[i] < t0 || v === null) continue;
				if (v > top) top = v;
				if (v > 0 && v < lowPos) lowPos = v;
			}
		}
		const haveData = top > -Infinity;
		let y;
		const ticks = [];
		if (o.log) {
			let lo = Math.floor(Math.log10(Number.isFinite(lowPos) ? lowPos : o.logMin || 1));
			let hi = Math.ceil(Math.log10(top > 0 ? top : Math.pow(10, lo + 1)));
			if (o.logMin) lo = Math.min(lo, Math.log10(o.logMin));
			if (hi <= lo) hi = lo + 1;
			const step = Math.ceil((hi - lo) / 5);
			for (let e = lo; e <= hi; e += step) ticks.push(Math.pow(10, e));
			y = (v) => {
				const lv = v > 0 ? Math.log10(v) : lo;
				return mt + ph - (Math.max(lo, Math.min(hi, lv)) - lo) / (hi - lo) * ph;
			};
		} else {
			let ymax = Math.max(top, o.minMax || 1);
			const step = o.integer ? Math.max(1, niceStep(ymax, 4)) : niceStep(ymax, 4);
			ymax = Math.ceil(ymax / step) * step;
			for (let v = 0; v <= ymax + step / 2; v += step) ticks.push(v);
			y = (v) => mt + ph - (Math.max(0, v) / ymax) * ph;
		}
		const x = (t) => ml + ((t - t0) / (t1 - t0)) * pw;

		const grid = svg('g', { class: 'axis' });
		for (const v of ticks) {
			const yy = Math.round(y(v)) + 0.5;
			grid.append(svg('line', { class: v === ticks[0] ? 'base-line' : 'grid-line', x1: ml, x2: w - mr, y1: yy, y2: yy }));
			const label = svg('text', { x: ml - 6, y: yy + 3.5, 'text-anchor': 'end' });
			label.textContent = o.fmt(v);
			grid.append(label);
		}
		// Time labels at least ~56 px apart (HH:MM:SS), ~40 px (HH:MM).
		const tstep =
			TIME_STEPS.find((s) => (s / (t1 - t0)) * pw >= (s < 60000 ? 56 : 40)) || TIME_STEPS[TIME_STEPS.length - 1];
		for (let t = Math.ceil(t0 / tstep) * tstep; t <= t1; t += tstep) {
			const xx = x(t);
			if (xx < ml + 22 || xx > w - mr - 22) continue;
			const label = svg('text', { x: xx, y: hgt - 4, 'text-anchor': 'middle' });
			label.textContent = fmtClock(t, tstep < 60000);
			grid.append(label);
		}
		kids.push(grid);

		lines.forEach((l, idx) => {
			const s = history.get(l.key);
			if (!s) return;
			let d = '';
			let run = [];
			let first = null;
			let lastX = null;
			const dots = [];
			// A point between two gaps draws no segment: it gets a dot.
			const endRun = () => {
				if (run.length === 1) dots.push(run[0]);
				run = [];
			};
			for (let i = 0; i < s.t.length; i++) {
				if (s.t[i] < t0 - 2000) continue;
				const v = s.v[i];
				if (v === null) {
					endRun();
					continue;
				}
				const xx = x(Math.max(t0, s.t[i])).toFixed(1);
				const yy = y(v).toFixed(1);
				d += (run.length ? 'L' : 'M') + xx + ' ' + yy;
				run.push([xx, yy]);
				if (first === null) first = xx;
				lastX = xx;
			}
			endRun();
			if (d === '') return;
			if (o.area && idx === 0 && first !== null) {
				const base = (mt + ph).toFixed(1);
				kids.push(svg('path', { class: 'area', fill: l.color, d: `${d}L${lastX} ${base}L${first} ${base}Z` }));
			}
			kids.push(svg('path', { class: 'series', stroke: l.color, d }));
			for (const [cx, cy] of dots) kids.push(svg('circle', { class: 'dot', fill: l.color, cx, cy, r: 2.5 }));
		});
		if (!haveData) {
			const t = svg('text', { class: 'nodata', x: ml + pw / 2, y: mt + ph / 2, 'text-anchor': 'middle' });
			t.textContent = o.empty || 'no data yet';
			kids.push(t);
		}
		this.cursor = svg('line', { class: 'cursor', y1: mt, y2: mt + ph, x1: 0, x2: 0, visibility: 'hidden' });
		kids.push(this.cursor);
		this.svg.replaceChildren(...kids);
		this.geo = { t0, t1, ml, pw, w };
	}

	hover(e) {
		if (!this.geo) return;
		const r = this.svg.getBoundingClientRect();
		const px = ((e.clientX - r.left) / r.width) * this.geo.w;
		const { t0, t1, ml, pw } = this.geo;
		if (px < ml || px > ml + pw) return this.unhover();
		const t = t0 + ((px - ml) / pw) * (t1 - t0);
		const rows = [];
		let at = null;
		for (const l of this.lines) {
			const s = history.get(l.key);
			if (!s || s.t.length === 0) continue;
			let lo = 0;
			let hi = s.t.length - 1;
			while (lo < hi) {
				const mid = (lo + hi) >> 1;
				if (s.t[mid] < t) lo = mid + 1;
				else hi = mid;
			}
			if (lo > 0 && Math.abs(s.t[lo - 1] - t) < Math.abs(s.t[lo] - t)) lo--;
			if (Math.abs(s.t[lo] - t) > 3000) continue;
			at = at ?? s.t[lo];
			rows.push(h('div', { class: 'row' }, swatch(l.color), l.label, h('b', {}, s.v[lo] === null ? '–' : this.opts.fmt(s.v[lo]))));
		}
		if (at === null) return this.unhover();
		const xx = ml + ((at - t0) / (t1 - t0)) * pw;
		this.cursor.setAttribute('x1', xx);
		this.cursor.setAttribute('x2', xx);
		this.cursor.setAttribute('visibility', 'visible');
		this.tip.replaceChildren(h('div', { class: 't' }, fmtClock(at)), ...rows);
		this.tip.hidden = false;
		const left = (xx / this.geo.w) * r.width;
		const tw = this.tip.offsetWidth;
		this.tip.style.left = (left + 12 + tw > r.width ? left - tw - 12 : left + 12) + 'px';
	}

	unhover() {
		this.tip.hidden = true;
		if (this.cursor) this.cursor.setAttribute('visibility', 'hidden');
	}
}

function swatch(color) {
	const s = h('span', { class: 'sw' });
	s.style.background = color;
	return s;
}

/* ----------------------------------------------------------------- state */

const view = {
	windowS: 300,
	latAt: 0, // last interval with buy answers (client ms)
	prev: null, // {t, m (parsed metrics), sold: Map item -> gross sold}
	lastOk: 0,
	failures: 0, // polls failed in a row
	serverOffsetMs: 0,
	itemCards: new Map(),
	charts: {},
	seenOutcomes: new Set(),
	lcores: 0,
	token: null, // the admin API's bearer token (TCP), see adminToken()
	askedToken: false, // asked for it after a 401 already
};

/*
 * itemState - what an operator calls the item's state: scheduled, open,
 * sold_out, paused, ended (closed, or past its end), from the arena (or, for an
 * activity not yet in the item table, from the store's definition).
 */
function itemState(it, nowNs) {
	if (!it.in_arena) {
		const a = it.activity;
		if (!a) return 'unknown';
		if (a.closed || (a.end_ns < NEVER_NS && nowNs >= a.end_ns)) return 'ended';
		return nowNs < a.start_ns ? 'scheduled' : 'loading';
	}
	if (it.state === 'closed') return 'ended';
	if (it.state !== 'active' && it.state !== 'paused') return 'unknown';
	/* the order of the dataplane's GET /v1/items/{item} */
	if (it.end_ns < NEVER_NS && nowNs >= it.end_ns) return 'ended';
	if (it.state === 'paused') return 'paused';
	if (nowNs < it.start_ns) return 'scheduled';
	return it.sold_out ? 'sold_out' : 'open';
}

// itemNumbers - {sold (net of returns), remaining, total (with restocks), gross} of an item.
function itemNumbers(it) {
	if (it.in_arena) {
		return {
			sold: it.sold - it.returned,
			remaining: it.remaining,
			total: it.total + it.added - (it.removed || 0),
			gross: it.sold,
		};
	}
	const a = it.activity || { total: 0, added: 0, removed: 0 };
	const units = a.total + a.added - (a.removed || 0);
	const live = it.ledger ? it.ledger.live : 0;
	return { sold: live, remaining: Math.max(0, units - live), total: units, gross: null };
}

/* ---------------------------------------------------------------- items */

function field(id, name, cls) {
	return h('span', { class: cls || 'v', 'data-item': String(id), 'data-field': name }, '–');
}

function makeCard(id) {
	const c = {};
	c.el = h('article', { class: 'item', 'data-item-card': String(id), 'data-state': 'unknown' });
	c.name = h('span', { class: 'item-name' });
	c.badge = h('span', { class: 'badge', 'data-item': String(id), 'data-field': 'state', 'data-state': 'unknown' }, '–');
	c.sold = field(id, 'sold');
	c.total = field(id, 'total');
	c.remaining = field(id, 'remaining');
	c.wps = field(id, 'wps');
	c.peak = h('span', { 'data-item': String(id), 'data-field': 'wps-peak' }, '–');
	c.barFill = h('span');
	c.foot = h('div', { class: 'item-foot' });
	const unitsHost = h('div', { class: 'chart-host mini', id: `chart-item-${id}-units` });
	const wpsHost = h('div', { class: 'chart-host mini', id: `chart-item-${id}-wps` });
	c.el.append(
		h('div', { class: 'item-head' }, h('span', { class: 'item-id' }, '#' + id), c.name, c.badge),
		h(
			'div',
			{ class: 'item-nums' },
			h('div', { class: 'num' }, h('span', { class: 'k' }, 'sold'), c.sold, h('span', { class: 'of' }, '/ ', c.total)),
			h('div', { class: 'num small' }, h('span', { class: 'k' }, 'remaining'), c.remaining),
			h('div', { class: 'num small' }, h('span', { class: 'k' }, 'winners / s'), c.wps, h('span', { class: 'of' }, 'peak ', c.peak)),
		),
		h('div', { class: 'bar' }, c.barFill),
		h(
			'div',
			{ class: 'item-charts' },
			h('div', {}, h('div', { class: 'cap' }, 'units: sold ', swatch('#dc2626'), ' remaining ', swatch('#2563eb')), unitsHost),
			h('div', {}, h('div', { class: 'cap' }, 'winners / s'), wpsHost),
		),
		c.foot,
	);
	document.getElementById('items').append(c.el);
	c.units = new Chart(unitsHost.id, { fmt: fmtCompact, minMax: 4, integer: true, label: `item ${id} units over time` });
	c.wpsChart = new Chart(wpsHost.id, { fmt: fmtCompact, minMax: 4, area: true, label: `item ${id} winners per second` });
	return c;
}

function fmtCompact(v) {
	if (v >= 1e6) return (v / 1e6).toFixed(v >= 1e7 ? 0 : 1) + 'M';
	if (v >= 1e4) return (v / 1e3).toFixed(0) + 'k';
	if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
	return String(Math.round(v * 100) / 100);
}

function updateItems(items, t, dt, nowNs) {
	const seen = new Set();
	const counts = { scheduled: 0, open: 0, sold_out: 0, ended: 0 };
	const soldNow = new Map();
	items.sort((a, b) => a.item - b.item);
	for (const it of items) {
		const id = it.item;
		seen.add(id);
		let c = view.itemCards.get(id);
		if (!c) {
			c = makeCard(id);
			view.itemCards.set(id, c);
		}
		const st = itemState(it, nowNs);
		if (st in counts) counts[st]++;
		const n = itemNumbers(it);
		let wps = null;
		if (n.gross !== null) {
			soldNow.set(id, n.gross);
			const before = view.prev && view.prev.sold.get(id);
			if (before !== undefined) wps = rate(n.gross, before, dt);
		}
		record(`item.${id}.sold`, t, n.sold);
		record(`item.${id}.remaining`, t, n.remaining);
		record(`item.${id}.wps`, t, wps);

		const name = (it.activity && it.activity.name) || `item ${id}`;
		setText(c.name, name);
		c.name.title = name;
		c.el.dataset.state = st;
		c.badge.dataset.state = st;
		setText(c.badge, STATE_LABEL[st]);
		setText(c.sold, fmtInt(n.sold));
		setText(c.total, fmtInt(n.total));
		setText(c.remaining, fmtInt(n.remaining));
		setText(c.wps, wps === null ? '–' : fmtRate(wps));
		const peak = series(`item.${id}.wps`).max(t - view.windowS * 1000);
		setText(c.peak, peak > -Infinity ? fmtRate(peak) : '–');
		c.barFill.style.width = (n.total > 0 ? Math.min(100, (100 * n.sold) / n.total) : 0).toFixed(1) + '%';

		const start = it.in_arena ? it.start_ns : it.activity ? it.activity.start_ns : 0;
		const end = it.in_arena ? it.end_ns : it.activity ? it.activity.end_ns : NEVER_NS;
		const parts = [];
		if (st === 'scheduled') parts.push(`opens in ${fmtIn((start - nowNs) / 1e9)} (${fmtTimeNs(start)})`);
		else parts.push(`opened ${fmtTimeNs(start)}`);
		parts.push(`ends ${fmtTimeNs(end)}`);
		const limit = it.in_arena ? it.per_user_limit : it.activity && it.activity.per_user_limit;
		if (limit) parts.push(`limit ${limit} / user`);
		const price = it.in_arena ? it.price : it.activity && it.activity.price;
		if (price) parts.push(`price ${(price / 100).toFixed(2)}`);
		if (it.in_arena && it.returned > 0) parts.push(`${fmtInt(it.returned)} returned`);
		if (it.ledger && it.ledger.paid > 0) parts.push(`${fmtInt(it.ledger.paid)} paid`);
		if (!it.in_arena) parts.push('not in the item table yet');
		setText(c.foot, parts.join(' · '));
	}
	for (const [id, c] of view.itemCards) {
		if (!seen.has(id)) {
			c.el.remove();
			view.itemCards.delete(id);
		}
	}
	document.getElementById('no-items').hidden = items.length !== 0;
	const sum = Object.entries(counts)
		.filter(([, v]) => v > 0)
		.map(([k, v]) => `${v} ${STATE_LABEL[k]}`);
	setText('items-summary', items.length ? `${items.length} item${items.length > 1 ? 's' : ''}: ${sum.join(', ')}` : '');
	return soldNow;
}

/* -------------------------------------------------------------- metrics */

function updateMetrics(m, t, dt) {
	const p = view.prev && view.prev.m;

	// Buy requests by outcome (dataplane counters summed over its lcores).
	let total = p ? 0 : null;
	for (const [o] of OUTCOMES) {
		const cur = mval(m, 'seckill_requests_total', { outcome: o });
		const r = p ? rate(cur, mval(p, 'seckill_requests_total', { outcome: o }), dt) : null;
		if (cur > 0) view.seenOutcomes.add(o);
		record(`req.${o}`, t, r);
		if (r !== null && total !== null) total += r;
	}
	record('req.total', t, total);
	setText('req-total', total === null ? '–' : fmtRate(total));
	const peak = series('req.total').max(t - view.windowS * 1000);
	setText('req-peak', peak > -Infinity ? fmtRate(peak) : '–');
	const legend = OUTCOMES.filter(([o]) => view.seenOutcomes.has(o)).map(([o, color]) =>
		h('span', { class: 'key', 'data-outcome': o }, swatch(color), o.replace('_', ' '), h('b', { 'data-metric': `rps-${o}` }, fmtRate(series(`req.${o}`).last()))),
	);
	if (legend.length === 0) legend.push(h('span', {}, 'no buy request yet'));
	document.getElementById('req-legend').replaceChildren(...legend);

	// Buy latency: percentiles of the last interval and since start.
	const lat = histogram(m, 'seckill_buy_latency_seconds');
	const latD = p ? histDelta(lat, histogram(p, 'seckill_buy_latency_seconds')) : null;
	const busy = latD && latD.count > 0;
	for (const [k, q] of [['p50', 0.5], ['p90', 0.9], ['p99', 0.99], ['p999', 0.999]]) {
		const v = busy ? quantile(latD, q) : null;
		record(`lat.${k}`, t, v);
		if (busy) setText(`lat-${k}`, fmtSeconds(v));
	}
	// Idle: the figures stay those of the last second with answers, so dated.
	if (busy) view.latAt = t;
	setText('lat-when', !view.latAt ? 'no answer yet' : busy ? 'last second' : `last answers ${fmtClock(view.latAt)}`);
	setText('lat-all-p50', fmtSeconds(quantile(lat, 0.5)));
	setText('lat-all-p99', fmtSeconds(quantile(lat, 0.99)));
	setText('lat-all-n', fmtInt(lat ? lat.count : undefined));

	// Orders of this dataplane run by state (the status table).
	const rows = ORDER_STATES.map(([st, color]) =>
		h('tr', {}, h('td', {}, swatch(color), st), h('td', { class: 'v', 'data-metric': `orders-${st}` }, fmtInt(mval(m, 'seckill_orders', { state: st })))),
	);
	document.querySelector('#orders-table tbody').replaceChildren(...rows);
	setText('ord-committed', fmtInt(mval(m, 'seckill_orders_committed_total')));
	setText('ord-failed', fmtInt(mval(m, 'seckill_orders_failed_total')));
	const anomalies = mval(m, 'seckill_control_anomalies_total');
	setText('ord-anomalies', fmtInt(anomalies));

	// Order rings.
	const rings = (m.get('seckill_ring_depth') || []).slice().sort((a, b) => Number(a.labels.lcore) - Number(b.labels.lcore));
	view.lcores = rings.length;
	const depth = rings.length ? rings.reduce((a, s) => a + s.value, 0) : undefined;
	record('ring.total', t, depth);
	rings.forEach((s) => record(`ring.${s.labels.lcore}`, t, s.value));
	setText('ring-total', fmtInt(depth));
	setText('ring-lcores', rings.map((s) => `lcore ${s.labels.lcore}: ${fmtInt(s.value)}`).join(' · ') || 'no ring');

	// LMDB group commits.
	const cm = histogram(m, 'seckill_commit_seconds');
	const cmD = p ? histDelta(cm, histogram(p, 'seckill_commit_seconds')) : null;
	const mean = cmD && cmD.count > 0 ? cmD.sum / cmD.count : null;
	const p99 = cmD && cmD.count > 0 ? quantile(cmD, 0.99) : null;
	record('lmdb.mean', t, mean);
	record('lmdb.p99', t, p99);
	// Idle: the last commits' figures stay.
	if (mean !== null) {
		setText('lmdb-mean', fmtSeconds(mean));
		setText('lmdb-p99', fmtSeconds(p99));
	}
	setText('lmdb-rate', fmtRate(cmD && p ? cmD.count / dt : null));
	const lastCommit = mval(m, 'seckill_last_commit_timestamp_seconds');
	setText('lmdb-last', lastCommit > 0 ? fmtAgo((Date.now() + view.serverOffsetMs) / 1000 - lastCommit) : 'none yet');
	setText('store-used', fmtBytes(mval(m, 'seckill_store_used_bytes')));
	setText('store-map', fmtBytes(mval(m, 'seckill_store_map_bytes')));
	setText('store-deadlines', fmtInt(mval(m, 'seckill_store_deadlines')));

	// Kafka export: only when the control plane runs with --kafka.
	const backlog = mval(m, 'seckill_export_backlog');
	const exporting = backlog !== undefined;
	record('kafka.backlog', t, exporting ? backlog : null);
	setText('kafka-backlog', exporting ? fmtInt(backlog) : 'not configured');
	if (exporting) {
		const dr = p ? rate(mval(m, 'seckill_export_delivered_total'), mval(p, 'seckill_export_delivered_total'), dt) : null;
		const failed = mval(m, 'seckill_export_failed_total');
		setText('kafka-sub', `${fmtRate(dr)} delivered/s · cursor ${fmtInt(mval(m, 'seckill_export_cursor'))} · ${fmtInt(failed)} failed`);
	} else {
		setText('kafka-sub', 'seckill-control runs without --kafka: nothing is exported');
	}
	view.charts.kafka.opts.empty = exporting ? 'no data yet' : 'not configured';

	// Health.
	health('control', 'ok', `ok · ${fmtInt(msum(m, 'seckill_drain_records_total'))} records drained`);
	const epoch = mval(m, 'seckill_dataplane_epoch');
	const lc = `${rings.length} lcore${rings.length === 1 ? '' : 's'}`;
	// The epoch is the run's start, unix seconds (the order ids' time base).
	health('dataplane', epoch > 0 ? 'ok' : 'warn', epoch > 0 ? `${lc} · started ${fmtClock(epoch * 1000)}` : 'unknown');
	for (const part of ['redis', 'mysql']) {
		const fams = [...m.keys()].filter((k) => k.startsWith(`seckill_${part}_`));
		if (fams.length === 0) {
			health(part, 'off', 'not configured');
			continue;
		}
		const up = mval(m, `seckill_${part}_up`);
		const level = up === undefined ? 'warn' : up > 0 ? 'ok' : 'bad';
		health(part, level, up === undefined ? `${fams.length} metrics` : up > 0 ? 'up' : 'down');
	}

	const alert = document.getElementById('alert');
	const problems = [];
	if (anomalies > 0) problems.push(`${fmtInt(anomalies)} arena/store anomalies (seckillctl reconcile)`);
	const drainErr = mval(m, 'seckill_drain_errors_total');
	if (p && rate(drainErr, mval(p, 'seckill_drain_errors_total'), dt) > 0) problems.push('the drain is failing on store errors');
	alert.hidden = problems.length === 0;
	setText(alert, problems.join(' · '));
}

function health(part, level, text) {
	const li = document.querySelector(`[data-health="${part}"]`);
	li.dataset.level = level;
	setText(`health-${part}`, text);
}

/* --------------------------------------------------------------- redraw */

function redraw() {
	const t1 = Date.now();
	const t0 = t1 - view.windowS * 1000;
	for (const [id, c] of view.itemCards) {
		c.units.draw(
			[
				{ key: `item.${id}.sold`, label: 'sold', color: '#dc2626' },
				{ key: `item.${id}.remaining`, label: 'remaining', color: '#2563eb' },
			],
			t0,
			t1,
		);
		c.wpsChart.draw([{ key: `item.${id}.wps`, label: 'winners/s', color: '#16a34a' }], t0, t1);
	}
	const reqLines = OUTCOMES.filter(([o]) => view.seenOutcomes.has(o)).map(([o, color]) => ({ key: `req.${o}`, label: o, color }));
	view.charts.req.draw(reqLines, t0, t1);
	view.charts.lat.draw(
		[
			{ key: 'lat.p50', label: 'p50', color: '#16a34a' },
			{ key: 'lat.p90', label: 'p90', color: '#2563eb' },
			{ key: 'lat.p99', label: 'p99', color: '#d97706' },
			{ key: 'lat.p999', label: 'p99.9', color: '#dc2626' },
		],
		t0,
		t1,
	);
	// The sum, and each lcore's ring when there are a few (an lcore whose ring
	// fills while the others' do not points at that core).
	const ringLines = [{ key: 'ring.total', label: 'all lcores', color: '#2563eb' }];
	if (view.lcores > 1 && view.lcores <= LCORE_COLORS.length)
		for (let l = 0; l < view.lcores; l++) ringLines.push({ key: `ring.${l}`, label: `lcore ${l}`, color: LCORE_COLORS[l] });
	view.charts.ring.draw(ringLines, t0, t1);
	view.charts.lmdb.draw(
		[
			{ key: 'lmdb.mean', label: 'mean', color: '#2563eb' },
			{ key: 'lmdb.p99', label: 'p99', color: '#d97706' },
		],
		t0,
		t1,
	);
	view.charts.kafka.draw([{ key: 'kafka.backlog', label: 'backlog', color: '#7c3aed' }], t0, t1);
}

/* ---------------------------------------------------------------- polling */

// adminToken - the bearer token this tab was given, or null.
function adminToken() {
	try {
		return sessionStorage.getItem(TOKEN_KEY);
	} catch (e) {
		return null; // storage disabled
	}
}

function setAdminToken(t) {
	try {
		sessionStorage.setItem(TOKEN_KEY, t);
	} catch (e) {
		// storage disabled: the token lasts until the next 401 asks again
	}
	view.token = t;
}

// askToken - after a 401: ask once per page load (an empty answer asks no more).
function askToken() {
	if (view.askedToken) return;
	view.askedToken = true;
	const t = window.prompt('The admin API on TCP wants its bearer token (the contents of --admin-token-file):');
	if (t && t.trim()) setAdminToken(t.trim());
}

async function fetchText(url) {
	const ctl = new AbortController();
	const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
	const token = view.token || adminToken();
	const headers = token ? { Authorization: `Bearer ${token}` } : {};
	try {
		const r = await fetch(url, { cache: 'no-store', signal: ctl.signal, headers });
		const text = await r.text();
		if (r.status === 401) {
			const e = new Error(`${url}: HTTP 401: the admin API wants its token (open /dashboard#token=TOKEN, docs/dashboard.md)`);
			e.unauthorized = true;
			throw e;
		}
		if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
		return { text, date: r.headers.get('Date') };
	} catch (e) {
		throw new Error(e.name === 'AbortError' ? `${url}: no answer in ${FETCH_TIMEOUT_MS / 1000} s` : e.message);
	} finally {
		clearTimeout(timer);
	}
}

// clockOffset - server minus browser clock (ms) from a Date header, 0 within 2 s (its resolution).
function clockOffset(dateHeader, t) {
	const server = Date.parse(dateHeader || '');
	if (!Number.isFinite(server)) return 0;
	const off = server + 500 - t;
	return Math.abs(off) > 2000 ? off : 0;
}

function setConn(state, text) {
	const el = document.getElementById('conn');
	el.dataset.conn = state;
	document.body.dataset.conn = state;
	setText('conn-text', text);
}

async function poll() {
	const started = performance.now();
	try {
		const [items, metrics] = await Promise.all([fetchText('/v1/items'), fetchText('/metrics')]);
		const t = Date.now();
		view.serverOffsetMs = clockOffset(items.date, t);
		const doc = JSON.parse(items.text);
		const m = parseProm(metrics.text);
		const dt = view.prev ? (t - view.prev.t) / 1000 : 0;
		const nowNs = (t + view.serverOffsetMs) * 1e6;
		const sold = updateItems(Array.isArray(doc.items) ? doc.items : [], t, dt, nowNs);
		updateMetrics(m, t, dt);
		view.prev = { t, m, sold };
		view.lastOk = t;
		const ms = Math.round(performance.now() - started);
		setConn('live', 'live');
		setText('updated', fmtClock(t));
		document.querySelector('[data-health="control"] .v').title = `last poll took ${ms} ms`;
		pruneHistory(t);
		redraw();
		view.failures = 0;
		document.getElementById('conn-alert').hidden = true;
	} catch (e) {
		view.failures++;
		if (e.unauthorized) askToken();
		// fetch() rejects with "Failed to fetch" when no connection could be made.
		const why = e.message === 'Failed to fetch' ? 'no connection' : e.message;
		const stale = view.lastOk && Date.now() - view.lastOk < STALE_MS;
		const since = view.lastOk ? fmtClock(view.lastOk) : null;
		setConn(stale ? 'stale' : 'offline', since ? `no answer since ${since}` : 'no answer');
		const alert = document.getElementById('conn-alert');
		alert.hidden = stale;
		setText(
			alert,
			`The admin API at ${location.host} does not answer (${why}). ` +
				(since ? `The figures below are those of ${since}; ` : '') +
				'the page keeps asking.',
		);
		health('control', 'bad', 'no answer');
		health('dataplane', 'warn', 'unknown');
		// A gap in every rate: the next sample must not span the outage.
		view.prev = null;
		redraw();
	} finally {
		// Once a second; after failures back off to once every 5 s.
		const period = view.failures ? Math.min(5000, POLL_MS << Math.min(3, view.failures - 1)) : POLL_MS;
		setTimeout(poll, Math.max(200, period - (performance.now() - started)));
	}
}

/* ------------------------------------------------------------------ set-up */

// fragmentArgs - the NAME=VALUE pairs of a URL fragment, percent-decoded but
// '+' kept (URLSearchParams would make it a space: base64 tokens have '+').
function fragmentArgs(hash) {
	const args = new Map();
	for (const part of hash.replace(/^#/, '').split('&')) {
		const i = part.indexOf('=');
		if (i <= 0) continue;
		try {
			args.set(part.slice(0, i), decodeURIComponent(part.slice(i + 1)));
		} catch (e) {
			// a malformed escape: that pair is ignored
		}
	}
	return args;
}

function setWindow(s) {
	view.windowS = s;
	for (const b of document.querySelectorAll('#window button')) b.setAttribute('aria-pressed', String(Number(b.dataset.window) === s));
	if (location.hash !== `#window=${s}`) window.history.replaceState(null, '', `#window=${s}`);
	redraw();
}

function start() {
	view.charts.req = new Chart('chart-req', { fmt: fmtCompact, log: true, logMin: 1, label: 'buy requests per second by outcome' });
	view.charts.lat = new Chart('chart-lat', { fmt: fmtSeconds, log: true, logMin: 1e-5, label: 'buy latency percentiles' });
	view.charts.ring = new Chart('chart-ring', { fmt: fmtCompact, minMax: 4, integer: true, area: true, label: 'order ring depth' });
	view.charts.lmdb = new Chart('chart-lmdb', { fmt: fmtSeconds, log: true, logMin: 1e-4, label: 'LMDB commit latency' });
	view.charts.kafka = new Chart('chart-kafka', { fmt: fmtCompact, minMax: 4, integer: true, area: true, label: 'Kafka export backlog' });
	for (const b of document.querySelectorAll('#window button')) b.addEventListener('click', () => setWindow(Number(b.dataset.window)));
	// #window=S and, once, #token=T (setWindow() then rewrites the fragment without it).
	const args = fragmentArgs(location.hash);
	if (args.get('token')) setAdminToken(args.get('token'));
	const w = Number(args.get('window'));
	const allowed = [60, 300, 600];
	setWindow(allowed.includes(w) ? w : 300);
	window.addEventListener('resize', redraw);
	poll();
}

document.addEventListener('DOMContentLoaded', start);
