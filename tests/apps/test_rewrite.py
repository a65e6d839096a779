"""harness/serve/rewrite.py: the pure rewriting functions (bytes in, bytes out). Rewritten
scripts are checked with a real JavaScript parser (`node --check`)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from harness.serve.rewrite import (
    find_nonce, inject_html, is_javascript, js_insertion_point, looks_like_module, prefix_worker_script,
    rewrite_response,
)

BOOT = "/__webgpu_harness__/bootstrap.js?kind=worker&type=classic"
TAG = b'<script src="/b.js"></script>'


def node_check(tmp_path, text: str, module: bool) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    assert node is not None, "node is not installed (scripts/setup.sh installs npm, which brings it)"
    f = tmp_path / ("x.mjs" if module else "x.cjs")
    f.write_text(text, encoding="utf-8")
    return subprocess.run([node, "--check", str(f)], capture_output=True, text=True)


@pytest.mark.parametrize("html, expected", [
    (b"<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8><title>t</title>",
     b"<!doctype html>\n<html lang=en>\n<head>" + TAG + b"\n<meta charset=utf-8><title>t</title>"),
    (b"<p>no head", TAG + b"<p>no head"),
    (b"<!-- c --><HTML><HEAD data-x=1><script>app()</script>", b"<!-- c --><HTML><HEAD data-x=1>" + TAG + b"<script>app()</script>"),
    (b"\xef\xbb\xbf<!DOCTYPE html><body>x", b"\xef\xbb\xbf<!DOCTYPE html>" + TAG + b"<body>x"),
])
def test_html_gets_one_script_first(html, expected):
    assert inject_html(html, "/b.js") == expected


def test_html_nonce_is_copied_and_utf16_left_alone():
    page = b"<head><script nonce='r4nd0m+/='>a()</script>"
    assert find_nonce(page) == "r4nd0m+/="
    assert inject_html(page, "/b.js").startswith(b'<head><script src="/b.js" nonce="r4nd0m+/="></script>')
    utf16 = "\ufeff<html>".encode("utf-16-le")
    assert inject_html(utf16, "/b.js") == utf16


@pytest.mark.parametrize("src, at", [
    ("'use strict';\nf()", 13),
    ("\"use strict\"\nf()", 12),
    ("// licence\n/* x */ 'use strict'; 'use asm';\nf()", 43),
    ("'not a directive'.split(',')", 0),
    ("'use strict'\n+ 1", 0),
    ("#!/usr/bin/env node\n'use strict';x()", 33),
    ("\ufeff'use strict';x", 14),
    ("f()", 0),
])
def test_classic_insertion_point_keeps_the_directive_prologue(src, at):
    assert js_insertion_point(src, "classic") == at


@pytest.mark.parametrize("src", [
    "'use strict'\nself.onmessage = (e) => postMessage(e.data);\n",
    "#!/x\n\"use strict\"; importScripts('a.js');\n",
    "\ufeff/* c */ 'use strict';\nvar a = `x\n${1}`;\n",
    "self.x = 1;\n",
])
def test_prefixed_classic_scripts_parse_and_keep_their_lines(tmp_path, src):
    out = prefix_worker_script(src.encode(), "classic", BOOT).decode()
    assert f'importScripts("{BOOT}");' in out
    assert out.count("\n") == src.count("\n")  # no line added: the app's line numbers hold
    r = node_check(tmp_path, out, module=False)
    assert r.returncode == 0, r.stderr
    if "'use strict'" in src or '"use strict"' in src:  # still a directive: strict mode kept
        assert out.index("use strict") < out.index("importScripts")


def test_prefixed_module_imports_the_bootstrap_first(tmp_path):
    src = "import {x} from './x.js';\nexport const y = x;\n"
    out = prefix_worker_script(src.encode(), "module", BOOT).decode()
    assert out.startswith(f'import "{BOOT}";import {{x}}')
    assert out.count("\n") == src.count("\n")
    assert node_check(tmp_path, out, module=True).returncode == 0
    with pytest.raises(ValueError):
        prefix_worker_script(b"x", "wasm", BOOT)


@pytest.mark.parametrize("src, module", [
    ("import {a} from 'a.js';", True),
    ("  import * as ort from '/ort.mjs'", True),
    ("import x, {y} from 'z'", True),
    ("import 'side-effect.js';", True),
    ("export default function f() {}", True),
    ("const m = await import('./m.js');", False),
    ("const u = import.meta.url;", False),
    ("importScripts('a.js');", False),
    ("// import {a} from 'b' is in a comment\nx()", False),
])
def test_looks_like_module(src, module):
    assert looks_like_module(src) is module


@pytest.mark.parametrize("ctype, dest, changed", [
    ("text/html; charset=utf-8", "document", "html"),
    ("text/html", "iframe", "html"),
    ("text/html", "empty", None),           # fetch() of HTML: left alone
    ("text/javascript", "worker", "worker"),
    ("application/javascript; charset=utf-8", "sharedworker", "worker"),
    ("text/javascript", "serviceworker", "worker"),
    ("text/javascript", "script", None),    # page scripts and importScripts: left alone
    ("application/json", "worker", None),
    ("text/html", "worker", None),          # an error page where a worker script was expected
    ("application/wasm", "empty", None),
    ("image/png", "image", None),
])
def test_only_html_documents_and_worker_scripts_change(ctype, dest, changed):
    body = b"<html><head></head></html>" if "html" in ctype else b"self.x = 1;"
    out = rewrite_response(body, ctype, dest, bootstrap_url="/b.js", worker_type="classic")
    if changed is None:
        assert out is None
    elif changed == "html":
        assert out == inject_html(body, "/b.js")
    else:
        assert out == b'importScripts("/b.js");self.x = 1;'


def test_unknown_worker_type_is_guessed():
    assert rewrite_response(b"import 'a.js';", "text/javascript", "worker", bootstrap_url="/b.js") \
        == b'import "/b.js";import \'a.js\';'
    assert is_javascript("Text/JavaScript;charset=UTF-8") and not is_javascript("text/plain")
