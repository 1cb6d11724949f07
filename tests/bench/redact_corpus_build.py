"""Build tests/redact_public_corpus.json from a gitleaks-format rule catalog (run by hand).

Run: python tests/bench/redact_corpus_build.py PATH/TO/gitleaks.toml [SOURCE-LABEL]

What it writes is looma's own synthetic data, not a copy of anyone's test file: for every rule
of the catalog, secrets are generated (fixed seed) from the rule's own pattern until they pass
the rule's own entropy floor, placed in the assignment syntaxes the catalog's sample generator
covers plus the ones it leaves as TODO (XML attributes and elements, `curl -u`, prose), and kept
only where the rule's own regex, translated to Python, still matches the sample (so every sample
is a true positive *by the catalog's definition*). False positives follow the catalog's
published false-positive classes (low-entropy fill, truncated with `...`). The must-survive list
is looma's own. Licence of the catalog used: gitleaks is MIT (Copyright (c) 2019 Zachary Rice);
the rule ids and descriptions are kept as provenance.
"""

from __future__ import annotations

import base64
import json
import math
import random
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gore import go_to_py
from _regen import gen, group_pattern

OUT = Path(__file__).resolve().parents[1] / "redact_public_corpus.json"
PER_RULE = 7

# {i}: identifier (the rule's first keyword), {I}: upper-case, {s}: the secret.
ASSIGN_TEMPLATES = {
    "ini-quoted": '{i}Token="{s}"', "ini-quoted-spaced": '{i}Token = "{s}"',
    "ini-bare": "{i}Token={s}", "ini-bare-spaced": "{i}Token = {s}",
    "json": '{{\n    "{i}_token": "{s}"\n}}',
    "json-escaped-newline": '{{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}}',
    "xml-element": "<{i}Token>{s}</{i}Token>",
    "xml-element-multiline": "<{i}Token>\n    {s}\n</{i}Token>",
    "xml-add-key-value": '<add key="{i}Password" value="{s}" />',
    "xml-entry-attr": '<entry name="{i}Token" value="{s}" />',
    "yaml-bare": "{i}_token: {s}", "yaml-single": "{i}_token: '{s}'",
    "yaml-double": '{i}_token: "{s}"',
    "csharp": 'string {i}Token = "{s}";', "go-var": 'var {i}Token string = "{s}"',
    "go-short": '{i}Token := "{s}"', "go-backticks": "{i}Token := `{s}`",
    "java": 'String {i}Token = "{s}";', "kotlin": 'var {i}Token = "{s}"',
    "kotlin-typed": 'val {i}Token: String = "{s}"',
    "php-concat": '${i}Token .= "{s}"', "python-single": "{i}Token = '{s}'",
    "python-double": '{i}Token = "{s}"', "set-property": 'System.setProperty("{I}_TOKEN", "{s}")',
    "logstash": '  "{i}Token" => "{s}"', "make-recursive": '{I}_TOKEN = "{s}"',
    "make-simple": '{I}_TOKEN := "{s}"', "make-shell": '{I}_TOKEN ::= "{s}"',
    "make-evaluated": '{I}_TOKEN :::= "{s}"', "make-conditional": '{I}_TOKEN ?= "{s}"',
    "shell-export": "export {I}_TOKEN={s}", "dotenv-quoted": "{I}_API_KEY='{s}'",
    "url-query": "https://api.example.com/v1/items?{i}_token={s}&page=2",
    "cli-flag": "mycli deploy --{i}-token {s} --region eu-west-1",
    "curl-user": "curl -u {i}:{s} https://api.example.com/v1/me",
}
PROSE_TEMPLATES = {
    "prose": "the agent printed {s} in the log, rotate it",
    "prose-quoted": "I set it to `{s}` for now.",
    "json-value": '{{"type": "text", "text": "use {s} here"}}',
    "bracketed": "[{s}]",
    "line-end": "value was {s}\nnext line",
}

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Refactor the session refresh so it no longer races with logout.",
    "Please review the migration plan before Friday's release.",
    "We decided to keep PKCE and drop the implicit flow entirely.",
    "hello world, this is only a test of the encoder",
    "Build passed on all three platforms after the cache fix.",
]


def _shannon(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _rhex(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice("0123456789abcdef") for _ in range(n))


def _rb64(rnd: random.Random, n: int) -> str:
    a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(rnd.choice(a) for _ in range(n))


def must_survive(rnd: random.Random) -> list[dict[str, str]]:
    """Developer strings that redaction must leave byte-for-byte (looma's own list)."""
    out: list[tuple[str, str]] = []
    for _ in range(6):
        out.append(("pack-path", f".git/objects/pack/pack-{_rhex(rnd, 40)}.idx"))
        out.append(("pack-path", f"/repo/.git/objects/pack/pack-{_rhex(rnd, 40)}.pack"))
        out.append(("git-sha", f"commit {_rhex(rnd, 40)} (short {_rhex(rnd, 7)})"))
        out.append(("loose-object", f".git/objects/{_rhex(rnd, 2)}/{_rhex(rnd, 38)}"))
        out.append(("uuid", f"session {_rhex(rnd, 8)}-{_rhex(rnd, 4)}-4{_rhex(rnd, 3)}-a{_rhex(rnd, 3)}-{_rhex(rnd, 12)} started"))
        out.append(("go.sum", f"github.com/pkg/errors v0.9.1 h1:{_rb64(rnd, 43)}="))
        out.append(("go.sum", f"golang.org/x/sys v0.{rnd.randint(1, 30)}.0/go.mod h1:{_rb64(rnd, 43)}="))
        out.append(("ssh-pubkey", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_rb64(rnd, 43)} alice@laptop"))
        out.append(("ssh-pubkey", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{_rb64(rnd, 300)} bob@ci"))
        out.append(("docker-digest", f"image@sha256:{_rhex(rnd, 64)}"))
        out.append(("npm-integrity", f'"integrity": "sha512-{_rb64(rnd, 86)}=="'))
        out.append(("pip-hash", f"requests==2.31.0 --hash=sha256:{_rhex(rnd, 64)}"))
        out.append(("go-pseudo-version", f"v0.0.0-2024{rnd.randint(10, 12)}{rnd.randint(10, 28)}"
                    f"{rnd.randint(100000, 235959)}-{_rhex(rnd, 12)}"))
        out.append(("agent-id", f"msg_01{_rb64(rnd, 22).replace('+', 'a').replace('/', 'b')}"))
        out.append(("agent-id", f"toolu_01{_rb64(rnd, 22).replace('+', 'c').replace('/', 'd')}"))
    for s in SENTENCES:
        b = base64.b64encode(s.encode()).decode()
        out.append(("base64-prose", f"decoded {b} from the fixture"))
        out.append(("base64-prose", b))
    out += [("code", c) for c in [
        "token = get_token_from_keyring(service_name)",
        "password = keyring.get_password(SERVICE, user)",
        "api_key = load_api_key_from_vault(settings.vault_path)",
        "secret: str = Field(default_factory=make_default_secret_name)",
        "self.api_key = api_key",
        "token := os.Getenv(\"GITHUB_TOKEN\")",
        "var apiToken string = os.Getenv(\"API_TOKEN\")",
        "sorted(items, key=lambda item: item.created_at)",
        "key: value",
        "primary_key = models.AutoField(primary_key=True)",
        "cache_key = f\"user:{user_id}:profile\"",
        "access_token_expires_at = datetime.now() + timedelta(hours=1)",
        "export GITHUB_TOKEN=$(gh auth token)",
        "token = ${{ secrets.NPM_TOKEN }}",
        "password: ${DB_PASSWORD}",
        "<add key=\"Password\" value=\"%DB_PASSWORD%\" />",
        "SECRET_KEY = env('DJANGO_SECRET_KEY')",
        "auth: true",
        "credentials: include",
        "curl -u $USER:$TOKEN https://api.example.com",
        "max_tokens=4096, input_tokens: 532",
        "if token is None: raise AuthError('missing token')",
        "the password must be rotated every ninety days",
        "Set the API key in your environment, never in code.",
        "password=\nusername=alice",
        "PASSWORD=\nDATABASE_HOST=db.internal",
        "token:\n  refresh_interval: 30s",
        "  apiKey: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],",
        "settings.setdefault(\"token\", None)",
    ]]
    out += [("url", u) for u in [
        "https://example.com/media/2019/05/xoxo-indieweb-summit-group-photo.jpg",
        "https://cdn.example.org/uploads/xoxo-festival-2014-keynote-slides.pdf",
        "https://github.com/python/cpython/commit/4f2e8a1b9c3d7f6a5e0b2d4c8a1f3e5b7d9c2a4f",
        "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
        "https://pypi.org/project/requests/2.31.0/#files",
        "https://docs.python.org/3/library/re.html#re.Pattern.fullmatch",
        "https://example.com/api/v1/users?page=2&per_page=50&sort=created_at",
        "http://localhost:8080/callback?state=login&code_challenge_method=S256",
    ]]
    out += [("semver", v) for v in ["1.24.3-rc.2+build.20240518", "v2.0.0-beta.11",
                                    "0.0.1-alpha.0+sha.5114f85", "10.4.12", "3.12.0a7"]]
    out += [("dotted", d) for d in [
        "com.example.payments.service.RefundCoordinatorService",
        "looma_git.pipeline.resolve.resolve_work_signals",
        "org.springframework.boot.autoconfigure.SpringBootApplication",
        "io.opentelemetry.sdk.trace.export.BatchSpanProcessor",
        "android.permission.ACCESS_BACKGROUND_LOCATION",
    ]]
    out += [("path", p) for p in [
        "/home/alice/projects/webapp/node_modules/@babel/core/lib/transformation/normalize-file.js",
        "src/components/UserProfileCard/UserProfileCardSkeleton.test.tsx",
        "C:\\Users\\bob\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages",
        "~/.claude/projects/-home-alice-webapp/0f3c9b2e-4d1a-4c8e-9f7b-2a6d5e8c1b3f.jsonl",
        "~/.codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "tests/fixtures/opencode/storage/message/ses_4f2a8e1b9c3d7f6a5e0b/msg_9c3d7f6a5e0b2d4c.json",
        "build/intermediates/merged_manifests/debug/processDebugManifest/AndroidManifest.xml",
        "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    ]]
    out += [("misc", m) for m in [
        "2026-05-11T11:26:55.123456789+02:00",
        "x-request-id: 0c7d8a2e-91f3-4b5a-8e6d-2f1a3b4c5d6e",
        "TestOAuthLoginRedirectsWithPkceChallengeAndStateParameter passes",
        "test_session_timeout_on_refresh_race_condition_is_fixed",
        "SESSION_REFRESH_TIMEOUT_SECONDS_DEFAULT_VALUE = 900",
        "--no-verify-ssl-certificates-for-internal-hosts",
        "use scikit-learn and the sk-learn-compatible-wrapper package",
        "ed25519 fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        "web-7d4b9c8f6-x2kqp   1/1   Running   0   3d",
        "color: #3f2a9c; background: linear-gradient(90deg, #ffffff 0%, #000000 100%);",
        "mail alice.smith+looma@example.co.uk about it",
        "The Bearer authentication_scheme_is_described in RFC 6750",
        "Authorization: Bearer <token>",
        "tool call write_file-1773223425361-n8zctgv4 finished",
        "chatcmpl-9fK2LmNpQrStUvWxYz0123456789ab",
        "ETag: W/\"5e15153d-120f\"",
        "IPv6 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "__Secure-next-auth.session-token cookie is httpOnly",
        "font: 12px/1.5 -apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto",
        "sha1sum: da39a3ee5e6b4b0d3255bfef95601890afd80709  empty.txt",
    ]]
    return [{"class": c, "text": t} for c, t in out]


def _family(rule_id: str) -> str:
    head = rule_id.split("-")[0]
    return {"1password": "onepassword"}.get(head, head)


def build(toml_path: Path, source: str) -> dict[str, object]:
    cat = tomllib.loads(toml_path.read_text())
    rules_out = []
    for rule in cat["rules"]:
        rid = rule["id"]
        raw = rule.get("regex")
        if not raw or rid in {"kubernetes-secret-yaml"}:
            continue
        py = go_to_py(raw)
        rx = re.compile(py)
        floor = float(rule.get("entropy") or 0)
        kw = (rule.get("keywords") or ["api"])[0]
        semi = py.startswith("(?i)[\\w.-]{0,50}?") or "[\\w.-]{0,50}?(?i:" in py
        named = re.search(r"\{0,50\}\?\((?:\?i)?(?:\?:)?(?:\(\?:)?([A-Za-z0-9_\-]+)", py)
        ident = re.sub(r"[^A-Za-z0-9]", "", named.group(1)) if semi and named else "deploy"
        gid = int(rule.get("secretGroup") or (1 if rx.groups else 0))
        if rid == "microsoft-teams-webhook":
            gid = 0
        inner = group_pattern(py, gid) if gid else py
        flags = "(?i)" if py.startswith("(?i)") else ""
        if inner is not None:
            try:
                re.compile(flags + inner)
            except re.error:
                inner = None
        if rid.startswith("curl-"):
            templates_c = {"curl-user": "curl -u admin:{s} https://api.example.com/v1/me",
                           "curl-user-long": "curl --user deploy:{s} -X POST https://ci.example.com",
                           "curl-header": 'curl -H "Authorization: Bearer {s}" https://api.example.com',
                           "curl-header-key": "curl -s -H 'X-Api-Key: {s}' https://api.example.com"}
            inner, flags = r"[A-Za-z0-9]{24,32}", ""
        whole = inner is None or rid in {
            "sidekiq-sensitive-url", "freemius-secret-key", "nuget-config-password"}
        rnd = random.Random(f"looma:{rid}")
        templates = dict(ASSIGN_TEMPLATES) if semi else {**PROSE_TEMPLATES, **ASSIGN_TEMPLATES}
        if rid.startswith("curl-"):
            templates = templates_c
        names = list(templates)
        rnd.shuffle(names)
        samples: list[dict[str, str]] = []
        tried = 0
        for name in names * 3:
            if len(samples) >= PER_RULE or tried > 200:
                break
            tried += 1
            for _ in range(40):
                if whole:
                    text = gen(py, rnd)
                    m = rx.search(text)
                    if m is None:
                        continue
                    secret = next((g for g in m.groups() if g), m.group(0)) if m.groups() else m.group(0)
                else:
                    secret = gen(flags + inner, rnd)
                    if _shannon(secret) < floor:
                        continue
                    if secret[:1] in "\"'`" and re.search(r"[\"'`]\{s\}", templates[name]):
                        continue  # the rule's secret brings its own quotes
                    text = templates[name].format(i=ident.lower(), I=ident.upper(), s=secret)
                    m = rx.search(text)
                    got = next((g for g in m.groups() if g), m.group(0)) if m and rid.startswith("curl-") else (
                        m.group(gid) if m else None)
                    if m is None or secret not in (got or ""):
                        continue
                if _shannon(secret) < floor or len(secret) < 8:
                    continue
                samples.append({"context": "generated" if whole else name,
                                "text": text, "secret": secret})
                break
            if whole and len(samples) >= 3:
                break
        fps = []
        for s in samples[:2]:
            sec = s["secret"]
            keep = min(len(kw), len(sec) // 3)
            fps.append({"class": "low-entropy", "text": "see " + sec[:keep] + "x" * (len(sec) - keep) + " in the docs"})
            fps.append({"class": "truncated", "text": "see " + sec[: max(keep, 8)] + "... in the docs"})
        rules_out.append({"id": rid, "family": _family(rid), "description": rule.get("description", ""),
                          "samples": samples, "false_positives": fps})
    return {
        "about": ("looma's synthetic secret corpus: samples generated from each catalog rule's own "
                  "pattern and checked against its own regex; see tests/bench/redact_corpus_build.py"),
        "catalog": source,
        "catalog_licence": "MIT (gitleaks, Copyright (c) 2019 Zachary Rice); rule ids kept as provenance",
        "rules": rules_out,
        "must_survive": must_survive(random.Random("looma:survive")),
    }


if __name__ == "__main__":
    path = Path(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else "gitleaks config/gitleaks.toml"
    data = build(path, label)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    n = sum(len(r["samples"]) for r in data["rules"])  # type: ignore[union-attr,index]
    print(f"{OUT}: {len(data['rules'])} rules, {n} samples, "  # type: ignore[arg-type]
          f"{len(data['must_survive'])} must-survive")  # type: ignore[arg-type]
