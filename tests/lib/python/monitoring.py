#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""monitoring.py - checks of the Prometheus alert rules and the Grafana
dashboard shipped in config/ (docs/monitoring.md).

    monitoring.py rules CONFIG RULES TESTS DOCS
        promtool check config CONFIG (the example Prometheus configuration,
        which loads RULES), promtool check rules RULES and promtool test
        rules TESTS pass; every
        alert has a "for" (or is an increase() over a window), a severity
        label (critical or warning), summary, description and a runbook_url
        "docs/monitoring.md#<alert in lower case>" whose section exists in
        DOCS; every alert has, in TESTS, a case where it fires and one where
        it does not; and with the alert's expression made never to fire,
        or to fire whatever the figures (every comparison with a number
        made ">= -Inf"), each alert in turn, promtool test rules fails.
        Exit 77 without promtool or python3-yaml.
    monitoring.py grafana DASHBOARD
        the JSON parses; a "datasource" variable of type datasource
        (prometheus) exists and every panel and target uses it; panel ids
        are unique; every non-row panel has a title, a description and
        targets with an expr and a refId.
    monitoring.py names RULES DASHBOARD SCRAPE...
        every metric name of the seckill_ namespace used by an expression of
        RULES or DASHBOARD is a sample name of one of the SCRAPE files
        (Prometheus text, as /metrics serves it), and every label matched on
        such a metric in a selector is a label of its samples there (job and
        instance excepted: Prometheus adds them). A metric renamed in the
        code breaks this.

    monitoring.py metrics DOCS RULES DASHBOARD LISTER
        the metric tables of DOCS (section "Metrics": its seckill-control
        and seckill-mysql-writer parts) list exactly the families of
        "LISTER control" and "LISTER mysql" (tests/lint/metrics_list: the
        tables each daemon writes /metrics from), with their types and
        label names; and every metric name of the seckill_ namespace used
        by RULES or DASHBOARD, and every label matched on it, is in those
        tables. A family added to a table without docs breaks this.

    monitoring.py evaluated URL METRIC SECONDS
        wait (SECONDS at most) until the Prometheus server at URL holds a
        sample of METRIC, and then until every rule group was evaluated
        after that sample: from then on its alerts reflect the scraped
        figures. Exit 1 on timeout.

Needs python3-yaml (Debian) for RULES and TESTS.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import datetime

SEVERITIES = ("critical", "warning")
NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
# a selector: metric name, then its {matchers}
SELECTOR = re.compile(r"\b(seckill_[a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*,?')
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"')


def fail(msg):
    print("FAIL:", msg)
    return 1


def load_yaml(path):
    import yaml  # python3-yaml

    with open(path) as f:
        return yaml.safe_load(f)


def alerts_of(rules):
    """[(group name, rule dict)] of every alerting rule."""
    return [(g["name"], r) for g in rules["groups"] for r in g["rules"] if "alert" in r]


def metric_names(expr):
    """Names of the seckill_ namespace an expression uses (strings removed)."""
    bare = STRING.sub('""', expr)
    return {n for n in NAME.findall(bare) if n.startswith("seckill_")}


def selector_labels(expr):
    """{(metric, label)} of every label matched in a seckill_ selector."""
    out = set()
    for m in SELECTOR.finditer(expr):
        for lm in MATCHER.finditer(m.group(2)):
            out.add((m.group(1), lm.group(1)))
    return out


def doc_anchors(path):
    """GitHub-style anchors of the headings of a Markdown file."""
    anchors = set()
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                title = line.lstrip("#").strip().lower()
                slug = re.sub(r"[^a-z0-9 _-]", "", title).replace(" ", "-")
                anchors.add(slug)
    return anchors


def promtool():
    return os.environ.get("PROMTOOL") or shutil.which("promtool")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def have_yaml():
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


def check_rules(config_path, rules_path, tests_path, docs_path):
    tool = promtool()
    if tool is None:
        print("SKIP: promtool not found (Debian package prometheus)")
        return 77
    if not have_yaml():
        print("SKIP: no python3 yaml module (Debian package python3-yaml)")
        return 77
    bad = 0
    rc, out = run([tool, "check", "config", config_path])
    if rc != 0:
        print(out)
        return fail("promtool check config")
    rc, out = run([tool, "check", "rules", rules_path])
    if rc != 0:
        print(out)
        return fail("promtool check rules")
    rc, out = run([tool, "test", "rules", tests_path])
    if rc != 0:
        print(out)
        return fail("promtool test rules")

    rules = load_yaml(rules_path)
    tests = load_yaml(tests_path)
    anchors = doc_anchors(docs_path)
    alerts = alerts_of(rules)
    if not alerts:
        return fail("no alerting rule in " + rules_path)
    names = [r["alert"] for _, r in alerts]
    if len(set(names)) != len(names):
        bad += fail("an alert name is used twice")
    for _, r in alerts:
        a = r["alert"]
        if "for" not in r and "increase(" not in r["expr"]:
            bad += fail(f"{a}: no 'for' (and no increase() window)")
        sev = r.get("labels", {}).get("severity")
        if sev not in SEVERITIES:
            bad += fail(f"{a}: severity {sev!r}, want one of {SEVERITIES}")
        ann = r.get("annotations", {})
        for k in ("summary", "description", "runbook_url"):
            if not ann.get(k):
                bad += fail(f"{a}: no {k} annotation")
        want = "docs/monitoring.md#" + a.lower()
        if ann.get("runbook_url") != want:
            bad += fail(f"{a}: runbook_url {ann.get('runbook_url')!r}, want {want!r}")
        elif a.lower() not in anchors:
            bad += fail(f"{a}: no section '{a}' in {docs_path} (its runbook)")

    fires, silent = set(), set()
    for t in tests["tests"]:
        for c in t.get("alert_rule_test", []):
            (fires if c.get("exp_alerts") else silent).add(c["alertname"])
    for a in names:
        if a not in fires:
            bad += fail(f"{a}: no test case where it fires")
        if a not in silent:
            bad += fail(f"{a}: no test case where it stays silent")
    for a in sorted(set(fires | silent) - set(names)):
        bad += fail(f"{a}: tested but not a rule")
    if bad:
        return 1

    bad += mutations(tool, rules_path, tests, names)
    if bad:
        return 1
    print(f"ok: {len(names)} alerts checked, each fires and stays silent in its tests")
    return 0


THRESHOLD = re.compile(r"(==|!=|>=|<=|>|<)\s*-?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?")


def mutate(expr, how):
    """The expression made never to fire, or to fire whatever the figures
    (every comparison with a number becomes ">= -Inf"); None if it has no
    such comparison."""
    if how == "never":
        return "vector(0) > 1"
    out, n = THRESHOLD.subn(">= -Inf", expr)
    return out if n else None


def mutations(tool, rules_path, tests, names):
    """Each alert's expression made never to fire, then made to fire on
    healthy figures too, must break its tests: a firing case and a silent
    case that depend on the expression. One rules file per alert with that
    alert mutated, and a tests file with the groups that test it; one
    promtool per kind runs them all (concurrently: its reports interleave,
    but a failure in the file of alert A can only name A, the other rules
    being unchanged). Returns the number of failures."""
    import yaml

    bad = 0
    for how in ("never", "always"):
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for i, a in enumerate(names):
                m = load_yaml(rules_path)
                for g in m["groups"]:
                    for r in g["rules"]:
                        if r.get("alert") == a:
                            r["expr"] = mutate(r["expr"], how)
                            if r["expr"] is None:
                                bad += fail(f"{a}: no threshold to test")
                                r["expr"] = "vector(0) > 1"
                rules_file = os.path.join(tmp, f"rules-{i}.yml")
                with open(rules_file, "w") as f:
                    yaml.safe_dump(m, f)
                t = dict(tests)
                t["rule_files"] = [os.path.basename(rules_file)]
                t["tests"] = [g for g in tests["tests"]
                              if any(c["alertname"] == a for c in g.get("alert_rule_test", []))]
                tests_file = os.path.join(tmp, f"tests-{i}.yml")
                with open(tests_file, "w") as f:
                    yaml.safe_dump(t, f)
                files.append(tests_file)
            rc, out = run([tool, "test", "rules"] + files)
            failed = set(re.findall(r"alertname: ([A-Za-z0-9_]+),", out))
            for a in names:
                if a not in failed:
                    what = "never fires" if how == "never" else "ignores its threshold"
                    bad += fail(f"{a}: the tests pass with an expression that {what}")
            if rc == 0:
                bad += fail(f"promtool test rules passed every mutation ({how})")
    return bad


def panels_of(dash):
    for p in dash.get("panels", []):
        yield p
        for q in p.get("panels", []):
            yield q


def dashboard_exprs(dash):
    exprs = []
    for p in panels_of(dash):
        for t in p.get("targets", []):
            exprs.append(t.get("expr", ""))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and isinstance(q, str):
            exprs.append(q)
    return exprs


def check_grafana(path):
    bad = 0
    with open(path) as f:
        dash = json.load(f)
    vars_ = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = vars_.get("datasource")
    if ds is None or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        return fail("no 'datasource' variable of type datasource (prometheus)")
    want = {"type": "prometheus", "uid": "${datasource}"}
    for name, v in vars_.items():
        if v.get("type") == "query" and v.get("datasource") != want:
            bad += fail(f"variable {name}: datasource {v.get('datasource')!r}, want {want}")
    ids = set()
    n = 0
    for p in panels_of(dash):
        pid = p.get("id")
        if pid in ids:
            bad += fail(f"panel id {pid} twice")
        ids.add(pid)
        if "gridPos" not in p:
            bad += fail(f"panel {pid}: no gridPos")
        if p.get("type") == "row":
            continue
        n += 1
        title = p.get("title")
        if not title or not p.get("description"):
            bad += fail(f"panel {pid}: no title or description")
        if p.get("datasource") != want:
            bad += fail(f"panel {title!r}: datasource {p.get('datasource')!r}, want {want}")
        targets = p.get("targets") or []
        if not targets:
            bad += fail(f"panel {title!r}: no target")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            bad += fail(f"panel {title!r}: refIds {refs}")
        for t in targets:
            if not t.get("expr"):
                bad += fail(f"panel {title!r}: a target without expr")
            if t.get("datasource") != want:
                bad += fail(f"panel {title!r}: a target's datasource is not the variable")
    if n == 0:
        bad += fail("no panel")
    if bad:
        return 1
    print(f"ok: {n} panels, every one on the datasource variable")
    return 0


def scraped(paths):
    """{sample name: set of label names} over the scrape files."""
    out = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                m = SAMPLE.match(line)
                if m is None:
                    continue
                labels = set(LABEL.findall(m.group(3) or ""))
                out.setdefault(m.group(1), set()).update(labels)
    return out


def check_uses(rules_path, dash_path, have, missing, source):
    """Every seckill_ name the rules and the dashboard use is a key of HAVE
    ({sample name: label names}), every label matched on it one of its
    labels (job and instance excepted); MISSING ends the line of a name
    that is not, SOURCE names HAVE. Returns (failures, names used)."""
    rules = load_yaml(rules_path)
    with open(dash_path) as f:
        dash = json.load(f)
    exprs = [("rules: " + r["alert"], r["expr"]) for _, r in alerts_of(rules)]
    exprs += [("dashboard", e) for e in dashboard_exprs(dash)]
    bad = 0
    used = set()
    for where, e in exprs:
        for n in sorted(metric_names(e)):
            used.add(n)
            if n not in have:
                bad += fail(f"{where}: metric {n} {missing}")
        for n, lab in sorted(selector_labels(e)):
            if lab not in ("job", "instance") and n in have and lab not in have[n]:
                bad += fail(f"{where}: {n} has no label {lab!r} in {source}")
    if not used:
        bad += fail("no seckill_ metric found in the expressions")
    return bad, used


def check_names(rules_path, dash_path, scrape_paths):
    if not have_yaml():
        return fail("no python3 yaml module (Debian package python3-yaml)")
    bad, used = check_uses(rules_path, dash_path, scraped(scrape_paths),
                           "is not exported (not in any scrape)", "the scrapes")
    if bad:
        return 1
    print(f"ok: {len(used)} metric names used by the rules and the dashboard are all exported")
    return 0


DAEMONS = {"seckill-control": "control", "seckill-mysql-writer": "mysql"}
DOC_NAME = re.compile(r"`(seckill_[a-zA-Z0-9_:]*)(?:\{([a-zA-Z0-9_,]*)\})?`")
HIST_SUFFIXES = ("_bucket", "_sum", "_count")


def listed(lister, daemon):
    """{name: (type, labels)} of a daemon's tables, as LISTER prints them."""
    out = subprocess.run([lister, daemon], capture_output=True, text=True, check=True).stdout
    fams = {}
    for line in out.splitlines():
        name, typ, labels = line.split()
        if name in fams:
            raise ValueError(f"{daemon}: {name} twice in the tables")
        fams[name] = (typ, frozenset() if labels == "-" else frozenset(labels.split(",")))
    return fams


def doc_families(path):
    """{daemon: {name: (type, labels)}} of the metric tables of the docs'
    "Metrics" section: a table row's first cell names its families (one or
    more `name{labels}`), the second is their type."""
    out = {d: {} for d in DAEMONS.values()}
    section = daemon = None
    with open(path) as f:
        for line in f:
            if line.startswith("## "):
                section = "Metrics" in line
                daemon = None
            elif line.startswith("### ") and section:
                daemon = DAEMONS.get(line[4:].strip())
            elif section and daemon and line.startswith("| `"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                for name, labels in DOC_NAME.findall(cells[0]):
                    labs = frozenset(labels.split(",")) if labels else frozenset()
                    if name in out[daemon]:
                        raise ValueError(f"{path}: {name} listed twice")
                    out[daemon][name] = (cells[1], labs)
    return out


def fmt(fam):
    typ, labels = fam
    return f"{typ}{{{','.join(sorted(labels))}}}" if labels else typ


def check_metrics(docs_path, rules_path, dash_path, lister):
    if not have_yaml():
        return fail("no python3 yaml module (Debian package python3-yaml)")
    bad = 0
    docs = doc_families(docs_path)
    every = {}
    for daemon in DAEMONS.values():
        table = listed(lister, daemon)
        every.update(table)
        doc = docs[daemon]
        if not table:
            bad += fail(f"{daemon}: no family in the tables")
        for n in sorted(set(table) - set(doc)):
            bad += fail(f"{daemon}: {n} ({fmt(table[n])}) is in the tables, not in {docs_path}")
        for n in sorted(set(doc) - set(table)):
            bad += fail(f"{daemon}: {n} is in {docs_path}, not in the tables (renamed? removed?)")
        for n in sorted(set(doc) & set(table)):
            if doc[n] != table[n]:
                bad += fail(f"{daemon}: {n}: the docs say {fmt(doc[n])}, the table {fmt(table[n])}")
    samples = {}
    for n, (typ, labels) in every.items():
        samples[n] = labels
        if typ == "histogram":
            for suf in HIST_SUFFIXES:
                samples[n + suf] = labels | ({"le"} if suf == "_bucket" else set())
    uses, used = check_uses(rules_path, dash_path, samples, "is in no table", "its table")
    bad += uses
    if bad:
        return 1
    print(f"ok: {len(every)} families in the tables and the docs; the {len(used)} names the "
          "rules and the dashboard use are all in the tables")
    return 0


def prom_get(url, path, **params):
    """The "data" of a Prometheus API answer, or None."""
    q = ("?" + urllib.parse.urlencode(params)) if params else ""
    try:
        with urllib.request.urlopen(url + path + q, timeout=5) as r:
            return json.load(r).get("data")
    except (OSError, ValueError):
        return None


def rfc3339(t):
    """Seconds since the epoch of an RFC 3339 time with up to 9 decimals."""
    m = re.match(r"(.*?)(\.\d+)?(Z|[+-]\d\d:\d\d)$", t)
    frac = float(m.group(2) or 0)
    return datetime.fromisoformat(m.group(1) + m.group(3).replace("Z", "+00:00")).timestamp() + frac


def evaluated(url, metric, seconds):
    end = time.monotonic() + seconds
    since = None
    while time.monotonic() < end:
        if since is None:
            d = prom_get(url, "/api/v1/query", query=metric)
            if d and d.get("result"):
                since = max(float(r["value"][0]) for r in d["result"])
        else:
            d = prom_get(url, "/api/v1/rules")
            groups = (d or {}).get("groups", [])
            if groups and all(rfc3339(g["lastEvaluation"]) > since for g in groups):
                return 0
        time.sleep(0.2)
    return fail(f"{url}: no sample of {metric} or no rule evaluation after it in {seconds} s")


def main(argv):
    if len(argv) == 6 and argv[1] == "rules":
        return check_rules(argv[2], argv[3], argv[4], argv[5])
    if len(argv) == 3 and argv[1] == "grafana":
        return check_grafana(argv[2])
    if len(argv) == 5 and argv[1] == "evaluated":
        return evaluated(argv[2], argv[3], float(argv[4]))
    if len(argv) == 6 and argv[1] == "metrics":
        return check_metrics(argv[2], argv[3], argv[4], argv[5])
    if len(argv) >= 5 and argv[1] == "names":
        return check_names(argv[2], argv[3], argv[4:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
