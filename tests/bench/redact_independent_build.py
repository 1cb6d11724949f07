"""Build tests/redact_independent_corpus.json from public rule sets' own examples (run by hand).

Run: python tests/bench/redact_independent_build.py [MIRROR_ROOT]

Not run in CI: it reads local git mirrors of the rule sets (MIRROR_ROOT/<owner>+<name>/repo,
default /work/.mirror, made with `git clone --mirror`) through `git show`, so the corpus
regenerates byte-for-byte from the commits recorded in it. Every sample is a literal example
its upstream project wrote by hand into its rule files or tests; nothing here is generated
from a rule's regex. Sources (licence texts in tests/redact_independent_licenses/):

- Nosey Parker (praetorian-inc/noseyparker, Apache-2.0): each rule's `examples` (true
  positives) and `negative_examples` (published false positives), rules in the `secret`
  category only (its `identifier` rules name things, they are not secrets).
- Kingfisher (mongodb/kingfisher, Apache-2.0): each visible rule's `examples` and
  `negative_examples`.
- gitleaks (gitleaks/gitleaks, MIT): the literal strings of `tps` / `fps` in
  cmd/generate/config/rules/*.go (strings built at test time from a regex or `secrets.NewSecret`
  are skipped; a literal secret passed to `GenerateSampleSecrets` is kept as the bare secret).
- detect-secrets (Yelp/detect-secrets, Apache-2.0): the literal `(payload, should_flag)`
  parametrize cases of tests/plugins/*_test.py.

The secret of a true positive is what the upstream rule's own regex (translated to Python)
captures in the example; an example the translation cannot match is left out and counted.
The must-survive list (`MUST_SURVIVE` below) is looma's own: developer strings written for
this corpus, not taken from any rule set.
"""

from __future__ import annotations

import ast
import codecs
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gore import go_to_py, scope_flags

OUT = Path(__file__).resolve().parents[1] / "redact_independent_corpus.json"
SOURCES = {
    "noseyparker": ("praetorian-inc/noseyparker", "Apache-2.0"),
    "kingfisher": ("mongodb/kingfisher", "Apache-2.0"),
    "gitleaks": ("gitleaks/gitleaks", "MIT"),
    "detect-secrets": ("Yelp/detect-secrets", "Apache-2.0"),
}


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, text=True,
                          check=True).stdout


def _files(mirror: Path, under: str, suffix: str) -> list[str]:
    return [f for f in _git(mirror, "ls-tree", "-r", "--name-only", "HEAD", under).split()
            if f.endswith(suffix)]


# --- regex translation (Rust `regex` / Go RE2 -> Python `re`) ---------------------------------
_FLAGS = re.compile(r"\(\?([a-z]+)\)")


def rust_to_py(rx: str) -> str:
    """Leading global flags merged into one group; later `(?i)` scoped to its group."""
    flags = ""
    rest = rx
    while True:
        s = rest.lstrip()
        m = _FLAGS.match(s)
        if not m:
            break
        flags += m.group(1)
        rest = s[m.end():]
    if "x" in flags:  # drop `#` comments line by line first (Python keeps `#` in classes too)
        rest = "\n".join(_strip_comment(line) for line in rest.split("\n"))
    body = scope_flags(go_to_py(rest))
    if "x" in flags:
        body = _escape_class_spaces(body)
    head = "".join(sorted(set(flags)))
    return (f"(?{head})" if head else "") + body


def _strip_comment(line: str) -> str:
    in_cls = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if in_cls:
            if c == "]":
                in_cls = False
        elif c == "[":
            in_cls = True
        elif c == "#" and not line.endswith("(?", 0, i):
            return line[:i]
        i += 1
    return line


def _escape_class_spaces(rx: str) -> str:
    # Rust's verbose mode ignores whitespace inside classes too; Python keeps it: drop it.
    out = []
    in_cls = False
    i = 0
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            out.append(rx[i:i + 2])
            i += 2
            continue
        if in_cls:
            if c == "]":
                in_cls = False
            elif c in " \t\n":
                i += 1
                continue
        elif c == "[":
            in_cls = True
        out.append(c)
        i += 1
    return "".join(out)


def _compile(rx: str, rust: bool) -> re.Pattern[str] | None:
    try:
        return re.compile(rust_to_py(rx) if rust else go_to_py(rx))
    except re.error:
        return None


def _secret(pattern: re.Pattern[str] | None, text: str, group: int | None = None) -> str | None:
    """What the rule captures in `text`: its secret group, else its longest group, else all."""
    if pattern is None:
        return None
    best: str | None = None
    for m in pattern.finditer(text):
        if group is not None and group <= (pattern.groups or 0) and m.group(group):
            s = m.group(group)
        else:
            s = _pick_group(m) or m.group(0)
        if s and (best is None or len(s) > len(best)):
            best = s
    return best.strip() if best else None


_SECRET_CUE = re.compile(r"(?i)(?:pass|pwd|secret|token|key|auth|-p)[^\n]{0,20}$")
_USER_CUE = re.compile(r"(?i)(?:user|login|uid|account|name|-u|email|host|server)[^\n]{0,3}$")
_HOSTLIKE = re.compile(r"(?i)[^@\s]+@[^@\s]+\.[a-z]{2,}|[a-z0-9.-]+\.[a-z]{2,}(?::\d+)?|localhost(?::\d+)?"
                       r"|[a-z][a-z0-9+.-]*://\S*")


def _pick_group(m: re.Match[str]) -> str | None:
    """Several groups (a user and a password, an id and its key): the one that is the secret.
    A group right after a password-ish word or between `:` and `@` wins; users, hosts, emails
    and URLs are not the secret; else the longest."""
    groups = [(i, g) for i, g in enumerate(m.groups(), 1) if g]
    if len(groups) <= 1:
        return groups[0][1] if groups else None
    text = m.string
    for i, g in groups:
        a, b = m.start(i), m.end(i)
        if text[a - 1:a] == ":" and text[b:b + 1] == "@":
            return g
    cued = [(i, g) for i, g in groups
            if _SECRET_CUE.search(text, max(0, m.start(i) - 24), m.start(i))
            and not _USER_CUE.search(text, max(0, m.start(i) - 8), m.start(i))]
    if cued:
        return cued[-1][1]
    rest = [(i, g) for i, g in groups if not _HOSTLIKE.fullmatch(g)
            and not _USER_CUE.search(text, max(0, m.start(i) - 8), m.start(i))]
    return max((g for _, g in rest or groups), key=len)


def _family(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower()) or "generic"


# --- Nosey Parker and Kingfisher (YAML rules) ---------------------------------------------------
def _yaml_rules(mirror: Path, under: str, source: str, stats: Counter[str]) -> tuple[list, list]:
    tps: list[dict[str, str]] = []
    fps: list[dict[str, str]] = []
    for f in _files(mirror, under, ".yml"):
        doc = yaml.safe_load(_git(mirror, "show", f"HEAD:{f}")) or {}
        for rule in doc.get("rules") or []:
            rid = rule["id"]
            cats = rule.get("categories") or []
            if source == "noseyparker" and cats and "secret" not in cats:
                stats[f"{source} rules skipped (identifier, not secret)"] += 1
                continue
            if rule.get("visible") is False:
                stats[f"{source} rules skipped (invisible helper)"] += 1
                continue
            fam = _family(rid.split(".")[1] if "." in rid else Path(f).stem)
            pat = _compile(rule["pattern"], rust=True)
            if pat is None:
                stats[f"{source} patterns not translatable"] += 1
            for ex in rule.get("examples") or []:
                sec = _secret(pat, ex)
                if not sec:
                    stats[f"{source} examples left out (no match in translation)"] += 1
                    continue
                tps.append({"source": source, "rule": rid, "family": fam, "text": ex,
                            "secret": sec})
            for ex in rule.get("negative_examples") or []:
                fps.append({"source": source, "rule": rid, "family": fam, "text": ex})
    return tps, fps


# --- gitleaks (Go rule files) -------------------------------------------------------------------
_LIT = re.compile(r'`[^`]*`|"(?:[^"\\\n]|\\.)*"')


def _go_unquote(lit: str) -> str:
    if lit.startswith("`"):
        return lit[1:-1]
    return codecs.decode(lit[1:-1].encode("latin-1", "backslashreplace"), "unicode_escape")


def _go_literals(region: str) -> list[str]:
    """String literals that stand alone as elements of the list (depth 1, not concatenated,
    not an argument of a nested call)."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(region):
        c = region[i]
        if c == "/" and region.startswith("//", i):
            j = region.find("\n", i)
            i = len(region) if j < 0 else j
            continue
        if c in "`\"":
            m = _LIT.match(region, i)
            if m is None:
                i += 1
                continue
            before = region[:i].rstrip()
            after = region[m.end():].lstrip()
            if depth == 1 and before[-1:] in "{(," and not after.startswith("+") and (
                    after[:1] in ",)}"):
                out.append(_go_unquote(m.group(0)))
            i = m.end()
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        i += 1
    return out


def _gitleaks(mirror: Path, stats: Counter[str]) -> tuple[list, list]:
    toml = tomllib.loads(_git(mirror, "show", "HEAD:config/gitleaks.toml"))
    rules = {r["id"]: r for r in toml["rules"]}
    tps: list[dict[str, str]] = []
    fps: list[dict[str, str]] = []
    for f in _files(mirror, "cmd/generate/config/rules", ".go"):
        if f.endswith("_test.go"):
            continue
        src = _git(mirror, "show", f"HEAD:{f}")
        fam = _family(Path(f).stem)
        for fn in src.split("\nfunc ")[1:]:
            m = re.search(r'RuleID:\s*"([^"]+)"', fn)
            if not m or m.group(1) not in rules:
                continue
            rid = m.group(1)
            rule = rules[rid]
            pat = _compile(rule["regex"], rust=False) if "regex" in rule else None
            group = rule.get("secretGroup")
            # true positives: from the first `tps` up to `fps :=` (or the return)
            t0 = fn.find("tps")
            f0 = fn.find("fps :=")
            r0 = fn.find("return utils.Validate")
            end_t = f0 if f0 > t0 else r0
            if t0 >= 0 and end_t > t0:
                for part in re.split(r"\n\s*(?=tps\s*(?::=|=))", fn[t0:end_t]):
                    lits = _go_literals(part[part.find("=") + 1:])
                    for lit in lits:
                        sec = _secret(pat, lit, group)
                        if not sec:
                            continue  # a sample label ("bot") or a string the regex skips
                        tps.append({"source": "gitleaks", "rule": rid, "family": fam,
                                    "text": lit, "secret": sec})
            if f0 >= 0:
                stop = fn.find("\n\t}", f0)
                for lit in _go_literals(fn[f0 + len("fps :="):stop + 3 if stop > 0 else r0]):
                    if lit.strip():
                        fps.append({"source": "gitleaks", "rule": rid, "family": fam,
                                    "text": lit})
    stats["gitleaks rules in catalog"] = len(rules)
    return tps, fps


# --- detect-secrets (Python test parametrize lists) -------------------------------------------
def _detect_secrets(mirror: Path, stats: Counter[str]) -> tuple[list, list]:
    tps: list[dict[str, str]] = []
    fps: list[dict[str, str]] = []
    for f in _files(mirror, "tests/plugins", "_test.py"):
        fam = _family(Path(f).stem.removesuffix("_test"))
        if fam in {"base", "highentropystrings", "keyword", "ippublic"}:
            continue  # cases built at test time (keyword, entropy) or not secrets (IPs)
        tree = ast.parse(_git(mirror, "show", f"HEAD:{f}"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
                continue
            if len(node.args) < 2:
                continue
            try:
                cases = ast.literal_eval(node.args[1])
            except (ValueError, SyntaxError):
                continue
            for case in cases:
                if not (isinstance(case, tuple) and len(case) == 2 and isinstance(case[0], str)
                        and isinstance(case[1], bool)):
                    continue
                text, flag = case
                if flag:
                    toks = [t for t in re.findall(r"[^\s\"'`=:,;()<>{}]+", text) if len(t) >= 8]
                    tok = toks[-1] if toks else ""  # the value: the last token of the line
                    if len(tok) < 8:
                        continue
                    if tok.lower().count("x") * 2 >= len(tok):
                        stats["detect-secrets examples left out (x-filled placeholder)"] += 1
                        continue
                    tps.append({"source": "detect-secrets", "rule": f"ds.{fam}", "family": fam,
                                "text": text, "secret": tok})
                else:
                    fps.append({"source": "detect-secrets", "rule": f"ds.{fam}", "family": fam,
                                "text": text})
    return tps, fps


# --- looma's own must-survive developer strings ---------------------------------------------------
MUST_SURVIVE: list[tuple[str, str]] = [
    ("pack-path", "Counting objects: .git/objects/pack/pack-8f3b2c6e1d0a9f7e4b5c3d2a1f0e9d8c7b6a5f4e.idx"),
    ("pack-path", "rm /home/ana/src/looma/.git/objects/pack/pack-0d4f6a2b8c1e3f5a7b9d0c2e4f6a8b0c1d3e5f7a.pack"),
    ("pack-path", ".git/objects/pack/pack-5e1c9a7b3d2f4e6a8c0b1d3f5a7c9e2b4d6f8a0c.rev"),
    ("loose-object", "error: object file .git/objects/3a/f9c2e17b4d8a05e6c3b19f2d7a4e8c0b5d1f6a is empty"),
    ("git-sha", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("git-sha", "Merge: 1a2b3c4 5d6e7f8  HEAD is now at e83c5163316f89bfbde7d9ab23ca2e25604af290"),
    ("git-sha", "git cherry-pick 4b825dc642cb6eb9a060e54bf8d69288fbee4904..c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4"),
    ("git-log", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 refs/heads/feature/oauth-pkce"),
    ("git-describe", "v2.41.0-rc2-187-g6e2c3f1a9b"),
    ("go.sum", "github.com/stretchr/testify v1.8.4 h1:CcVxjf3Q8PM0mHUKJCdn+eZZtm5yQwehR5yeSVQQcUk="),
    ("go.sum", "github.com/stretchr/testify v1.8.4/go.mod h1:sz/lmYIOXD/1dqDmKjjqLyZ2RngseejIcXlSw2iwfAo="),
    ("go.sum", "golang.org/x/crypto v0.17.0 h1:r8bRNjWL3GshPW3gkd+RpvzWrZAwPS49OmTGZ/uhM4k="),
    ("go.sum", "gopkg.in/yaml.v3 v3.0.1 h1:fxVm/GzAzEWqLHuvctI91KS9hhNmmWOoWu0XTYJS7CA="),
    ("go-pseudo-version", "require golang.org/x/exp v0.0.0-20231006140011-7918f672742d"),
    ("ssh-pubkey", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ana@laptop"),
    ("ssh-pubkey", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7Y9gQ2oT3Lr8m1WkzB5vJc8xN0pHs4eQa6uF2dR9tK1yL3mZ7wX5vB8nC4qE0jH6gT2sD9fA1kP3oU5iY7rE4wQ6zX8cV2bN0mM5lK7jH9gF3dS1aZ4xC6vB8nM2qW0eR5tY7uI9oP1aS3dF5gH7jK9lZ2xC4vB6nM8qW0eR2tY4uI6oP8aS0dF2gH4jK6lZ8xC0vB2nM4qW6eR8tY0uI2oP4aS6dF8gH0jK2lZ4xC6vB8nM0qW2eR4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB4nM6qW8eR0tY2uI4oP6aS8dF0gH2jK4lZ6xC8vB0nM2qW4eR6tY8uI0oP2aS4dF6gH8jK0lZ2 deploy@ci"),
    ("ssh-pubkey", "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg= root@bastion"),
    ("ssh-fingerprint", "The ED25519 key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s."),
    ("ssh-known-hosts", "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"),
    ("base64-prose", "echo VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZy4= | base64 -d"),
    ("base64-prose", "data: V2UgZGVjaWRlZCB0byB1c2UgUEtDRSBpbnN0ZWFkIG9mIHRoZSBpbXBsaWNpdCBmbG93Lg=="),
    ("base64-prose", "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBtZXNzYWdlIGZvciB0aGUgZW5jb2Rlci4="),
    ("base64-prose", '"body": "UmVmYWN0b3IgdGhlIHNlc3Npb24gc3RvcmUgc28gdGhhdCByZWZyZXNoIHRva2VucyBkbyBub3QgcmFjZS4="'),
    ("code-call", "token = get_token_from_keyring(service_name)"),
    ("code-call", "password = getpass.getpass(prompt='Password: ')"),
    ("code-call", "api_key = os.environ.get(\"OPENAI_API_KEY\")"),
    ("code-call", "const token = await getAccessTokenSilently({ audience });"),
    ("code-call", "secret := os.Getenv(\"WEBHOOK_SECRET\")"),
    ("code-call", "String password = System.getenv(\"DB_PASSWORD\");"),
    ("code-call", "let apiKey = config.get::<String>(\"api_key\")?;"),
    ("code-call", "client_secret = settings.OAUTH_CLIENT_SECRET"),
    ("code-call", "self.token = token"),
    ("code-call", "auth_token = request.headers.get('Authorization', '').removeprefix('Bearer ')"),
    ("code-call", "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())"),
    ("code-type", "def login(username: str, password: str) -> Session:"),
    ("code-type", "interface Credentials { username: string; password: string; token?: string }"),
    ("code-type", "    secret_key: Optional[SecretStr] = None"),
    ("code-type", "func NewClient(token string, timeout time.Duration) *Client {"),
    ("code-cmp", "if token is None or token == \"\":"),
    ("code-cmp", "assert resp.json()[\"token_type\"] == \"bearer\""),
    ("code-kwargs", "sorted(rows, key=lambda r: r.updated_at, reverse=True)"),
    ("code-kwargs", "max_tokens=4096, temperature=0.2, stop_sequences=[\"\\n\\nHuman:\"]"),
    ("code-kwargs", "primary_key=True, unique=True, index=True"),
    ("code-kwargs", "parser.add_argument('--token', help='API token (default: $LOOMA_TOKEN)')"),
    ("placeholder", "export GITHUB_TOKEN=$(gh auth token)"),
    ("placeholder", "NPM_TOKEN: ${{ secrets.NPM_TOKEN }}"),
    ("placeholder", "password: ${DB_PASSWORD:-changeme}"),
    ("placeholder", "API_KEY=<your-api-key-here>"),
    ("placeholder", "OPENAI_API_KEY=sk-..."),
    ("placeholder", "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY"),
    ("placeholder", "Authorization: Bearer $TOKEN"),
    ("placeholder", "curl -u \"$USER:$API_TOKEN\" https://api.example.com/v1/me"),
    ("placeholder", "<add key=\"ApiKey\" value=\"%API_KEY%\" />"),
    ("placeholder", "password=********"),
    ("placeholder", "token: xxxxxxxxxxxxxxxxxxxx"),
    ("empty", "password=\nusername=alice"),
    ("empty", "SECRET_KEY=\nDEBUG=true"),
    ("empty", "api_key: \"\""),
    ("url-words", "https://cdn.example.org/2019/05/xoxo-indieweb-summit-group-photo-2048x1365.jpg"),
    ("url-words", "https://blog.example.com/posts/xoxo-festival-2018-recap/"),
    ("url-words", "https://github.com/anthropics/claude-code/blob/main/docs/settings.md#permissions"),
    ("url-words", "https://www.npmjs.com/package/@tanstack/react-query/v/5.17.19"),
    ("url-query", "https://www.google.com/search?q=python+asyncio+gather+vs+wait&oq=python+asyncio&sourceid=chrome&ie=UTF-8"),
    ("url-query", "https://docs.python.org/3/library/secrets.html#secrets.token_urlsafe"),
    ("url-query", "https://example.atlassian.net/browse/AUTH-1432?focusedCommentId=58213"),
    ("uuid", "session 3f8e2a1c-9b4d-4e6f-a7c8-1d2e3f4a5b6c resumed"),
    ("uuid", "\"requestId\": \"c0a8012e-7f4b-11ee-b962-0242ac120002\""),
    ("uuid", "/home/ana/.claude/projects/-home-ana-src-looma/5b0e3c2d-1a4f-4b8e-9c7d-6e5f4a3b2c1d.jsonl"),
    ("lockfile", "\"integrity\": \"sha512-BCGqWXqN7Hpw6kgk56n7eZR3bU3iLNMBU3M1ks1f3SZY0gkOv/VTILrEZ1BcmYGG25ZwqlOIjVJNh0krsmay9A==\""),
    ("lockfile", "  integrity sha512-2bEvSjnZWW6QnuMLm8RY8CZ5ra2oUAgoVnGa2HZHDqz7tOnzNrAZjgUGJm9fxpqdSmUiSwOa5dJ0ASnUUSjbWA=="),
    ("lockfile", "requests==2.31.0 --hash=sha256:58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f"),
    ("lockfile", "checksum = \"d2a1c5b5e6c7a9e3f5b1d0c7e6a2f4b9c8d3e1f0a2b4c6d8e0f1a3b5c7d9e1f3\""),
    ("lockfile", "\"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\""),
    ("lockfile", "content-hash = \"4f1e3b2a9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f\""),
    ("docker", "FROM python:3.12-slim@sha256:2b0079146a74e23bb4ae8f6a25e1ac1d8e8a2a5b9a3f26ab0c7c43b2c5e7e9a1"),
    ("docker", "Digest: sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4"),
    ("css", "color: #1e293b; background: linear-gradient(90deg, #ff7e5f 0%, #feb47b 100%);"),
    ("css", ".btn-primary:hover{background-color:#0b5ed7;border-color:#0a58ca}"),
    ("css", "--tw-ring-color: rgb(59 130 246 / 0.5); --shadow: 0 1px 3px 0 #0000001a"),
    ("semver", "bumped @types/node from 20.10.5 to 20.11.0-beta.3+build.20240115"),
    ("dotted-name", "looma_git.pipeline.resolve.ResolveWindowsIntoWorkItems.from_segments"),
    ("dotted-name", "org.springframework.security.oauth2.client.registration.ClientRegistrationRepository"),
    ("path", "src/components/AuthProvider/useRefreshTokenRotation.test.tsx"),
    ("path", "/Users/ana/Library/Caches/pypoetry/virtualenvs/looma-Xk3Lm9Qa-py3.12/bin/python"),
    ("path", "node_modules/.pnpm/@babel+core@7.23.7_supports-color@8.1.1/node_modules/@babel/core"),
    ("path", "~/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/8b3219a92973c328a8e22fadcfa821b5dc75636a"),
    ("identifier", "TestOAuthLoginRedirectsToProviderWithPkceChallenge"),
    ("identifier", "test_refresh_token_rotation_invalidates_previous_token_family"),
    ("identifier", "MAX_CONCURRENT_TOKEN_REFRESH_REQUESTS_PER_SESSION"),
    ("agent-id", "\"id\": \"msg_01XFDUDYJgAACzvnptvVoYEL\", \"type\": \"message\""),
    ("agent-id", "\"tool_use_id\": \"toolu_01A09q90qw90lq917835lq9\""),
    ("agent-id", "\"call_id\": \"call_Zq8Lm2Nv4Pw6Rx1Tc9YbKd3F\""),
    ("agent-id", "\"id\": \"chatcmpl-8pQ3xYzAbCdEfGhIjKlMnOpQrStU\""),
    ("agent-id", "rollout-2026-05-11T11-26-55-0197c1b2-3a4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl"),
    ("agent-id", "\"id\": \"ses_4f2a9c1d8e3bXk7Lm2Np\""),
    ("timestamp", "2024-01-15T14:32:07.123456+00:00 INFO request completed in 231ms"),
    ("hex-color-list", "palette = ['#264653', '#2a9d8f', '#e9c46a', '#f4a261', '#e76f51']"),
    ("prose", "The token bucket refills at 10 tokens per second; the password policy needs 12 characters."),
    ("prose", "We rotate the signing key every 90 days and keep the previous one for verification."),
    ("prose", "Secret management is handled by Vault; the API key lives in the CI secret store."),
    ("prose", "See the auth: section of config.yaml for the provider list."),
    ("prose", "key: value pairs are parsed left to right"),
    ("prose", "Password reset emails now expire after 30 minutes (was 24 hours)."),
    ("config", "auth: true\ncredentials: include\nkey: user_id"),
    ("config", "token_expiry_seconds: 3600\npassword_min_length: 12"),
    ("config", "[tool.mypy]\nstrict = true\nplugins = [\"pydantic.mypy\"]"),
    ("config", "signing_key_id: projects/acme-prod/locations/global/keyRings/ci/cryptoKeys/release"),
    ("makefile", "PYTHON ?= python3\nVENV := .venv\nTOKEN_FILE ?= $(HOME)/.config/looma/token"),
    ("xml", "<add key=\"LogLevel\" value=\"Information\" />"),
    ("xml", "<PackageReference Include=\"Microsoft.Identity.Client\" Version=\"4.58.1\" />"),
    ("xml", "<tokenEndpoint>https://login.example.com/oauth2/token</tokenEndpoint>"),
    ("shell", "git log --format='%H %an %s' --since=2.weeks | head -20"),
    ("shell", "kubectl get secret db-credentials -o jsonpath='{.data.password}' | base64 -d"),
    ("shell", "gpg --recv-keys 3B4FE6ACC0B21F32"),
    ("shell", "openssl rand -hex 32 > .secret_key"),
    ("jwt-doc", "A JWT has three parts: header.payload.signature, each base64url-encoded."),
    ("github-url", "https://github.com/octocat/Hello-World/commit/7fd1a60b01f91b314f59955a4e4d4e80d8edf11d"),
    ("github-url", "https://github.com/owner/repo/pull/1432/files#diff-4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
    ("pgp-fingerprint", "Primary key fingerprint: 4AEE 18F8 3AFD EB23 4B1C  DB5A 6A4F 2C3B 8E7D 9F01"),
    ("mac-address", "ether 3c:22:fb:9a:4e:01 txqueuelen 1000"),
    ("ipv6", "inet6 fe80::1c2b:3aff:fe4d:5e6f%en0 prefixlen 64"),
    ("version-string", "Python 3.12.1 (main, Dec 19 2023, 10:22:11) [Clang 15.0.0 (clang-1500.1.0.2.5)]"),
    ("k8s", "image: ghcr.io/acme/api-server:sha-6e2c3f1@sha256:9b2f8c3d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"),
    ("k8s", "pod/api-server-7d9f8b6c5d-x2k4m   1/1   Running   0   3h12m"),
    ("terraform", "resource \"aws_iam_role\" \"ci_deploy\" { name = \"ci-deploy-role\" }"),
    ("terraform", "arn:aws:iam::123456789012:role/service-role/lambda-exec-role"),
    ("regex-src", "re.compile(r\"(?i)api[_-]?key\\s*[:=]\\s*['\\\"]?([A-Za-z0-9]{32})\")"),
    ("cache-key", "cache_key = f\"session:{session_id}:tokens\""),
    ("cache-key", "redis-cli GET \"rate:user:4821:window:1705329127\""),
    ("test-name", "tests/api/test_secrets_never_reach_git.py::test_planted_secrets_never_reach_git_objects PASSED"),
    ("stack-trace", "  File \"/usr/lib/python3.12/site-packages/requests/adapters.py\", line 519, in send"),
    ("hash-output", "sha256sum dist/looma-0.4.0-py3-none-any.whl\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/looma-0.4.0-py3-none-any.whl"),
    ("hash-output", "md5: d41d8cd98f00b204e9800998ecf8427e"),
    ("base64-image-name", "favicon-32x32.png logo@2x.webp apple-touch-icon-180x180-precomposed.png"),
]


def build(root: Path) -> dict[str, Any]:
    stats: Counter[str] = Counter()
    mirrors = {k: root / (v[0].replace("/", "+")) / "repo" for k, v in SOURCES.items()}
    parts = [
        _yaml_rules(mirrors["noseyparker"], "crates/noseyparker/data/default/builtin/rules",
                    "noseyparker", stats),
        _yaml_rules(mirrors["kingfisher"], "data/rules", "kingfisher", stats),
        _gitleaks(mirrors["gitleaks"], stats),
        _detect_secrets(mirrors["detect-secrets"], stats),
    ]
    tps: list[dict[str, str]] = []
    fps: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for t, _f in parts:
        for s in t:
            if (s["text"], s["secret"]) not in seen:
                seen.add((s["text"], s["secret"]))
                tps.append(s)
    secrets = {s["secret"] for s in tps}
    texts = {s["text"] for s in tps}
    for _, f in parts:
        for s in f:
            # a rule's negative example is often another rule's true positive: not an FP then
            if s["text"] in texts or any(sec in s["text"] for sec in secrets if len(sec) >= 12):
                stats["negative examples that are another rule's true positive"] += 1
                continue
            if s["text"] not in {x["text"] for x in fps}:
                fps.append(s)
    sources = []
    for k, (repo, lic) in SOURCES.items():
        sources.append({"name": k, "repo": f"https://github.com/{repo}", "license": lic,
                        "commit": _git(mirrors[k], "rev-parse", "HEAD").strip(),
                        "true_positives": sum(s["source"] == k for s in tps),
                        "false_positives": sum(s["source"] == k for s in fps)})
    return {
        "about": "Independent redaction corpus: public secret scanners' own literal examples. "
                 "Regenerate with tests/bench/redact_independent_build.py; see "
                 "tests/redact_independent_licenses/SOURCES.md.",
        "sources": sources,
        "stats": dict(sorted(stats.items())),
        "true_positives": tps,
        "false_positives": fps,
        "must_survive": [{"class": c, "text": t} for c, t in MUST_SURVIVE],
    }


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else Path("/work/.mirror")
    data = build(root)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    fams = {s["family"] for s in data["true_positives"]}
    rules = {s["rule"] for s in data["true_positives"]}
    print(f"wrote {OUT}: {len(data['true_positives'])} true positives "
          f"({len(rules)} rules, {len(fams)} families), {len(data['false_positives'])} false "
          f"positives, {len(data['must_survive'])} must-survive")
    for s in data["sources"]:
        print(f"  {s['name']:15} {s['license']:11} {s['commit'][:10]} tp={s['true_positives']} "
              f"fp={s['false_positives']}")
    for k, v in data["stats"].items():
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main(sys.argv[1:])
