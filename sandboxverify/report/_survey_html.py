"""A survey as one self-contained HTML page: a bar of the counts, then a table of every plugin
that sorts by any column and filters by class (and by text). Its CSS and script are inline and
its Content-Security-Policy allows nothing else, so it opens from a file, offline, and can
fetch nothing. The rows are written here: without its script the page still shows everything.

Every text from a check (a plugin's error, a requirement) is escaped: a page of untrusted
packages' messages must not run their markup.
"""

from __future__ import annotations

from html import escape

from sandboxverify.report._inert import inert
from sandboxverify.report._survey import CLASSES, PluginResult, SideResult, Survey

_COLOURS = {
    "regressed": "#c62828",
    "error": "#ef6c00",
    "fixed": "#2e7d32",
    "broken": "#6d4c41",
    "ok": "#9e9e9e",
}
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}
.meta{color:#555;margin-bottom:1em}
.bar{display:flex;height:1.6em;border-radius:4px;overflow:hidden;margin:.6em 0;background:#eee}
.bar div{color:#fff;text-align:center;white-space:nowrap;overflow:hidden;font-weight:600}
.filters{margin:.6em 0;display:flex;gap:.4em;flex-wrap:wrap;align-items:center}
.filters button{border:1px solid #999;background:#fff;border-radius:3px;padding:.2em .6em;
cursor:pointer}
.filters button[aria-pressed=true]{background:#333;color:#fff}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
th{cursor:pointer;user-select:none;background:#f5f5f5;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
.class{font-weight:600;color:#fff;border-radius:3px;padding:0 .4em}
pre{white-space:pre-wrap;max-height:20em;overflow:auto;background:#f7f7f7;padding:.5em}
"""

_SCRIPT = """
(function(){
var table=document.getElementById('plugins'),body=table.tBodies[0];
var rows=Array.prototype.slice.call(body.rows),shown=document.getElementById('shown');
var active={},text=document.getElementById('search');
function refresh(){var any=Object.keys(active).some(function(k){return active[k]}),n=0;
 var q=text.value.toLowerCase();
 rows.forEach(function(r){var ok=(!any||active[r.dataset.class])&&
  (!q||r.textContent.toLowerCase().indexOf(q)>=0);r.hidden=!ok;if(ok)n++});
 shown.textContent=n+' of '+rows.length+' shown';}
Array.prototype.forEach.call(document.querySelectorAll('button[data-filter]'),function(b){
 b.addEventListener('click',function(){var k=b.dataset.filter;active[k]=!active[k];
  b.setAttribute('aria-pressed',active[k]?'true':'false');refresh();});});
text.addEventListener('input',refresh);
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
 th.addEventListener('click',function(){
  var up=th.getAttribute('aria-sort')!=='ascending';
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort')});
  th.setAttribute('aria-sort',up?'ascending':'descending');
  rows.sort(function(a,b){var x=a.cells[i].dataset.key,y=b.cells[i].dataset.key;
   var c=x<y?-1:x>y?1:0;return up?c:-c});
  rows.forEach(function(r){body.appendChild(r)});});});
refresh();
})();
"""

_COLUMNS = ("class", "plugin", "version", "file", "baseline", "candidate", "why")


def survey_html(survey: Survey) -> str:
    old, new = survey.baseline, survey.candidate
    title = f"{old.label} → {new.version}: survey of {len(survey.results)} plugin(s)"
    counts = survey.counts
    state = "complete" if survey.complete else "INCOMPLETE"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        f'<p class="meta">baseline {_text(old.label)} ({_text(old.given)}), candidate '
        f"{_text(new.label)} ({_text(new.given)}); Python {_text(survey.python)}; "
        f'<span id="state">{state}</span>'
        + (f", {counts['not_checked']} not checked" if counts["not_checked"] else "")
        + "</p>",
        *(f'<p class="meta">{_text(e)}</p>' for side in survey.releases for e in side.excuses),
        _bar(counts),
        _filters(counts),
        _table(survey.ordered()),
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _bar(counts: dict[str, int]) -> str:
    total = sum(counts[name] for name in CLASSES) or 1
    cells = [
        f'<div class="segment" data-class="{name}" data-count="{counts[name]}" '
        f'style="width:{100 * counts[name] / total:.4f}%;background:{_COLOURS[name]}" '
        f'title="{name}: {counts[name]}">{counts[name]} {name}</div>'
        for name in CLASSES
        if counts[name]
    ]
    return f'<div class="bar" id="counts" role="img" aria-label="{_counts_text(counts)}">' + (
        "".join(cells) + "</div>"
    )


def _filters(counts: dict[str, int]) -> str:
    buttons = "".join(
        f'<button type="button" data-filter="{name}" aria-pressed="false">'
        f"{name} ({counts[name]})</button>"
        for name in CLASSES
    )
    return (
        f'<div class="filters">show only: {buttons}'
        '<input id="search" type="search" placeholder="filter by text">'
        '<span id="shown"></span></div>'
    )


def _table(results: list[PluginResult]) -> str:
    head = "".join(f'<th scope="col">{name}</th>' for name in _COLUMNS)
    rows = "".join(_row(result, rank) for rank, result in enumerate(results))
    return f'<table id="plugins"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _row(result: PluginResult, rank: int) -> str:
    kind = result.artifact.kind if result.artifact else ""
    version = result.version or ""
    cells = [
        _cell(
            f'<span class="class" style="background:{_COLOURS[result.survey_class]}">'
            f"{result.survey_class}</span>",
            f"{CLASSES.index(result.survey_class)}:{rank:06d}",
        ),
        _cell(_text(result.name), result.name.lower()),
        _cell(_text(version), _version_key(version)),
        _cell(_text(kind), kind),
        _cell(_side(result.baseline), _side_key(result.baseline)),
        _cell(_side(result.candidate), _side_key(result.candidate)),
        _cell(_why(result), result.reason.lower()),
    ]
    return f'<tr data-class="{result.survey_class}">{"".join(cells)}</tr>'


def _cell(content: str, key: str) -> str:
    return f'<td data-key="{_text(key)}">{content}</td>'


def _side(side: SideResult | None) -> str:
    if side is None:
        return "—"
    version = f" ({_text(side.application_version)})" if side.application_version else ""
    return f"{side.status}{version}"


def _side_key(side: SideResult | None) -> str:
    return side.status if side else "~"


def _why(result: PluginResult) -> str:
    details = []
    for label, side in (("baseline", result.baseline), ("candidate", result.candidate)):
        if side is None or side.status == "passed":
            continue
        lines = [side.error] if side.error else []
        for failure in side.failures:
            lines.append(f"{failure.code}: {failure.message}")
            if failure.hint:
                lines.append(f"  hint: {failure.hint}")
            if failure.details:
                lines.append(failure.details)
        details.append(f"<b>{label}</b><pre>{_text(chr(10).join(lines), lines=True)}</pre>")
    body = _text(result.reason)
    if not details:
        return body
    return f"{body}<details><summary>failures</summary>{''.join(details)}</details>"


def _version_key(version: str) -> str:
    """Versions sort by their numbers: each run of digits padded."""
    import re  # noqa: PLC0415

    return re.sub(r"\d+", lambda m: m[0].rjust(12, "0"), version)


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[name]} {name}" for name in CLASSES)


def _text(value: object, *, lines: bool = False) -> str:
    return escape(inert(value, lines=lines), quote=True)
