"""Pure rewriting of an app's responses for injection: bytes + content type + destination in,
bytes out (or ``None``: leave the response untouched).

Only two kinds of responses are ever changed:
  - HTML documents (``Sec-Fetch-Dest: document`` or ``iframe``/``frame``, ``text/html``): one
    ``<script src=BOOTSTRAP>`` is inserted before the first tag after the doctype/``<html>``/``<head>``
    opening tags, so it is the first script the parser meets (a classic, parser-blocking script:
    it runs before every inline, classic, module and worker script of the page). A ``nonce`` of
    the page's first ``<script nonce=…>`` is copied so a nonce-based CSP still admits it. Every
    quoted ``srcdoc`` of an ``<iframe>`` gets the same tag (``kind=frame``) at its start.
  - Worker scripts (``Sec-Fetch-Dest: worker``, ``sharedworker`` or ``serviceworker``, a
    JavaScript MIME type): one statement is put on the script's first line — ``importScripts(URL);``
    for a classic script, ``import "URL";`` for a module (imports are evaluated before the
    importing module's body and its other imports, in source order: ECMA-262 §16.2.1.5.3
    InnerModuleEvaluation) — with no newline added, so the app's line numbers stay as they were.
    A UTF-8 BOM, a hashbang line and a classic script's directive prologue (``'use strict';``)
    stay in front of it.

Destinations come from the Fetch metadata request header ``Sec-Fetch-Dest`` (Fetch spec
§3.3.8 "request destination"; Chromium and WebKitGTK 2.50 send it). Whether a worker script is
classic or module is not in any header (a top-level worker script is fetched with mode
``same-origin`` either way, HTML spec "fetch a single module script"), so the caller passes the
type the page's Worker wrapper registered, or :func:`looks_like_module` guesses it.
"""

from __future__ import annotations

import json
import re

#: Sec-Fetch-Dest values of worker scripts (Fetch spec, request destinations)
WORKER_DESTS = frozenset({"worker", "sharedworker", "serviceworker"})
#: Sec-Fetch-Dest values of HTML documents
DOCUMENT_DESTS = frozenset({"document", "iframe", "frame"})
#: JavaScript MIME essences (MIME Sniffing spec §4.6 "JavaScript MIME type")
JS_MIME = frozenset({
    "application/ecmascript", "application/javascript", "application/x-ecmascript",
    "application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
    "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
    "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript",
})

_BOM = b"\xef\xbb\xbf"
_HTML_START = re.compile(
    rb"(?:\s|<!--.*?-->|<!doctype[^>]*>|<\?xml[^>]*>)*"   # doctype, comments, xml declaration
    rb"(?:<html\b[^>]*>)?(?:\s|<!--.*?-->)*(?:<head\b[^>]*>)?", re.I | re.S)
_NONCE = re.compile(rb"<script\b[^>]*?\snonce\s*=\s*[\"']?([A-Za-z0-9+/=_-]+)", re.I)
# the opening quote of an <iframe>'s srcdoc attribute (attribute values before it hold no '>')
_SRCDOC = re.compile(rb"<iframe\b[^>]*?\ssrcdoc\s*=\s*[\"']", re.I)
_SPACE_OR_COMMENT = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_DIRECTIVE = re.compile(r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""")
# a statement after a string literal continues it when the next line starts with one of these
_CONTINUES = re.compile(r"[.(\[+\-*/%,?:=<>&|^`]|in\b|instanceof\b")
_MODULE_SYNTAX = re.compile(
    r"""^[ \t]*(?:import[ \t]*(?:["'{*]|[A-Za-z_$][\w$]*[ \t]*(?:,|from\b))|export[ \t]+(?:default|const|let|var|function|class|async|\{|\*))""",
    re.M)


def mime_essence(content_type: str | None) -> str:
    """``text/javascript; charset=utf-8`` → ``text/javascript`` (lower case)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_html(content_type: str | None) -> bool:
    return mime_essence(content_type) in ("text/html", "application/xhtml+xml")


def is_javascript(content_type: str | None) -> bool:
    return mime_essence(content_type) in JS_MIME


def find_nonce(html: bytes) -> str | None:
    """The nonce of the first ``<script nonce=…>`` in ``html``, if any."""
    m = _NONCE.search(html)
    return m.group(1).decode("ascii") if m else None


def inject_html(body: bytes, script_src: str) -> bytes:
    """Insert ``<script src=script_src>`` as the first script of an HTML document.

    UTF-16 documents (BOM ``FF FE``/``FE FF``) are returned unchanged: the tag is ASCII and would
    corrupt them. Raises nothing."""
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return body
    start = len(_BOM) if body.startswith(_BOM) else 0
    m = _HTML_START.match(body, start)
    at = m.end() if m else start
    nonce = find_nonce(body)
    attrs = f' nonce="{nonce}"' if nonce else ""
    tag = f'<script src="{_attr(script_src)}"{attrs}></script>'.encode("ascii")
    return inject_srcdoc(body[:at] + tag + body[at:], frame_src(script_src), nonce)


def frame_src(script_src: str) -> str:
    """The bootstrap URL for a frame's document: ``script_src`` with ``kind=frame``."""
    base, _, query = script_src.partition("?")
    rest = [kv for kv in query.split("&") if kv and not kv.startswith("kind=")]
    return base + "?" + "&".join(["kind=frame", *rest])


def inject_srcdoc(body: bytes, script_src: str, nonce: str | None = None) -> bytes:
    """Put the bootstrap first in every quoted ``srcdoc`` of an ``<iframe>`` in ``body``: a
    srcdoc document is made from its parent, never fetched, so nothing else would put the probes
    in front of its scripts (web/inject/frames.js does the same for a srcdoc set from script).
    The tag is HTML-escaped, as the attribute's value is. An unquoted srcdoc is left alone (the
    page's bootstrap then reports the frame as entered late)."""
    attrs = f' nonce="{nonce}"' if nonce else ""
    tag = f'<script src="{_attr(script_src)}"{attrs}></script>'
    escaped = tag.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;").encode("ascii")
    return _SRCDOC.sub(lambda m: m.group(0) + escaped, body)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def js_insertion_point(text: str, script_type: str) -> int:
    """Index in ``text`` where the bootstrap statement goes: after a BOM and a hashbang line and,
    for classic scripts, after the directive prologue (so ``'use strict'`` keeps its meaning)."""
    i = 1 if text.startswith("\ufeff") else 0
    if text.startswith("#!", i):
        nl = text.find("\n", i)
        i = len(text) if nl < 0 else nl + 1
    if script_type == "module":
        return i
    end = pos = i
    while True:
        pos = _SPACE_OR_COMMENT.match(text, pos).end()
        m = _DIRECTIVE.match(text, pos)
        if not m:
            return end
        after = m.end()
        rest = _SPACE_OR_COMMENT.match(text, after).end()
        if rest < len(text) and text[rest] == ";":
            end = pos = rest + 1
        elif rest >= len(text) or ("\n" in text[after:rest] and not _CONTINUES.match(text, rest)):
            # a line break ends the directive unless the next line continues the expression
            # (ECMA-262 §12.10, automatic semicolon insertion)
            end = pos = after
        else:
            return end


def looks_like_module(text: str) -> bool:
    """Heuristic for a worker script of unknown type: a line that starts with a static
    ``import``/``export`` declaration (not ``import(`` or ``import.meta``) means a module."""
    return bool(_MODULE_SYNTAX.search(text))


def bootstrap_statement(script_type: str, url: str) -> str:
    """``import "URL";`` (module) or ``importScripts("URL");`` (classic), on one line."""
    quoted = json.dumps(url)
    return f"import {quoted};" if script_type == "module" else f"importScripts({quoted});"


def prefix_worker_script(body: bytes, script_type: str, bootstrap_url: str) -> bytes:
    """Put the bootstrap statement in front of a worker script (UTF-8; see the module doc).

    ``script_type`` is ``"classic"`` or ``"module"``; raises ValueError otherwise."""
    if script_type not in ("classic", "module"):
        raise ValueError(f"script_type must be classic or module, got {script_type!r}")
    text = body.decode("utf-8", errors="surrogateescape")
    at = js_insertion_point(text, script_type)
    sep = ";" if at and text[at - 1] in "'\"" else ""  # a directive that ended at a line break
    out = text[:at] + sep + bootstrap_statement(script_type, bootstrap_url) + text[at:]
    return out.encode("utf-8", errors="surrogateescape")


def rewrite_response(body: bytes, content_type: str | None, dest: str | None, *,
                     bootstrap_url: str, worker_type: str | None = None) -> bytes | None:
    """Injected bytes for one response, or None when it must pass unchanged.

    ``dest`` is the request's Sec-Fetch-Dest (None when the browser sent none); ``worker_type``
    the registered script type of a worker script (None: guessed with :func:`looks_like_module`).
    ``bootstrap_url`` is used as given (the HTML tag and worker statement load it)."""
    if dest in DOCUMENT_DESTS and is_html(content_type):
        return inject_html(body, bootstrap_url)
    if dest in WORKER_DESTS and (is_javascript(content_type) or not content_type):
        kind = worker_type or ("module" if looks_like_module(body.decode("utf-8", "replace")) else "classic")
        return prefix_worker_script(body, kind, bootstrap_url)
    return None
