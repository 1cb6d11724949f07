"""Secret redaction: planted secrets vanish, allowlisted values survive byte-for-byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.redact import (
    Redaction,
    redact,
    redact_into,
    redact_obj,
    redact_text,
    shannon_entropy,
)

CORPUS = json.loads((Path(__file__).parent / "redact_corpus.json").read_text())
POSITIVE = CORPUS["positive"]
NEGATIVE = CORPUS["negative"]


def _planted(case: dict[str, str]) -> str:
    assert not case["secret"] or "{s}" in case["text"]
    return case["text"].replace("{s}", case["secret"])


@pytest.mark.parametrize("case", POSITIVE, ids=[f"{c['kind']}-{i}" for i, c in enumerate(POSITIVE)])
def test_planted_secret_vanishes(case: dict[str, str]) -> None:
    text = _planted(case)
    r = redact(text)
    assert case["secret"] not in r.text
    assert f"[REDACTED:{case['kind']}]" in r.text
    assert r.hits.get(case["kind"], 0) >= 1
    # The text around the secret is kept: only the secret was replaced.
    before, _, after = case["text"].partition("{s}")
    if case["kind"] not in {"aws_secret_key", "credential", "bearer_token", "url_password"}:
        assert r.text.startswith(before[:10])
        assert r.text.endswith(after[-5:]) or not after


@pytest.mark.parametrize("text", NEGATIVE)
def test_allowlisted_text_survives_byte_for_byte(text: str) -> None:
    r = redact(text)
    assert r.text == text
    assert r.hits == {}


def test_url_with_password_goes_whole() -> None:
    # scheme, user and host say where the password works: the connection URI goes whole,
    # sentence punctuation after it stays; a URL without a password is kept
    out = redact_text("see postgres://app:s3cr3t-Pa55@db.internal:5432/app.")
    assert out == "see [REDACTED:url_password]."
    assert redact_text('c = connect("mongodb+srv://u:pw1@c0.x.mongodb.net/db?w=1");') == (
        'c = connect("[REDACTED:url_password]");')
    assert redact_text("https://example.com/path?q=1") == "https://example.com/path?q=1"


def test_assignment_keeps_key_and_quotes() -> None:
    assert redact_text('api_key: "q1w2e3r4t5"') == 'api_key: "[REDACTED:credential]"'
    assert redact_text("SECRET_TOKEN=abc123def") == "SECRET_TOKEN=[REDACTED:credential]"


def test_pem_escaped_in_json_is_removed_whole_and_json_stays_valid() -> None:
    case = next(c for c in POSITIVE if c["kind"] == "private_key" and "OPENSSH" in c["secret"])
    doc = _planted(case)
    out = redact_text(doc)
    assert "b3BlbnNzaC1rZXkt" not in out and "END OPENSSH" not in out
    assert json.loads(out)["ok"] is True


def test_truncated_pem_is_redacted_to_the_end_of_the_key_material() -> None:
    text = "cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Y\nQk3Lm9"
    assert redact_text(text) == "cat id_rsa\n[REDACTED:private_key]"


def test_many_secrets_counted_by_kind() -> None:
    text = " ".join(_planted(c) for c in POSITIVE)
    r = redact(text)
    for c in POSITIVE:
        assert c["secret"] not in r.text
    assert sum(r.hits.values()) >= len(POSITIVE)


def test_redact_into_is_redact_with_hits_added_in_place() -> None:
    # ingest's per-string call: the same text as redact, its hits summed into one dict
    texts = [_planted(c) for c in POSITIVE] + NEGATIVE + ["", "short", " ".join(
        _planted(c) for c in POSITIVE[:5]) * 40]  # the last one past the 1 KB cache
    hits: dict[str, int] = {"high_entropy": 1}
    want: dict[str, int] = {"high_entropy": 1}
    for text in texts + texts:  # the second round from the caches
        r = redact(text)
        assert redact_into(text, hits) == r.text
        for kind, n in r.hits.items():
            want[kind] = want.get(kind, 0) + n
    assert hits == want and sum(want.values()) > len(POSITIVE)


@pytest.mark.parametrize("case", POSITIVE + [{"text": t, "secret": "", "kind": ""} for t in NEGATIVE])
def test_idempotent_on_corpus(case: dict[str, str]) -> None:
    once = redact_text(_planted(case))
    assert redact_text(once) == once
    assert redact(once).hits == {}


_secretish = st.sampled_from([_planted(c) for c in POSITIVE] + NEGATIVE)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_secretish, st.text(max_size=40)), max_size=8))
def test_idempotent_on_mixtures(parts: list[str]) -> None:
    text = " ".join(parts)
    once = redact_text(text)
    assert redact_text(once) == once


def test_redact_obj_walks_nested_values_and_keeps_keys() -> None:
    ghp = next(c["secret"] for c in POSITIVE if c["kind"] == "github_token")
    obj = {"token": ghp, "n": 3, "items": [{"cmd": f"export GH={ghp}"}, ("ok", None)],
           "password": "not-a-secret-key-name-here"}
    new, hits = redact_obj(obj)
    assert new["token"] == "[REDACTED:github_token]"
    assert new["items"][0]["cmd"] == "export GH=[REDACTED:github_token]"
    assert new["items"][1] == ("ok", None)
    assert new["n"] == 3 and set(new) == set(obj)
    assert hits["github_token"] == 2
    assert obj["token"] == ghp  # the input is not mutated


def test_redaction_is_frozen() -> None:
    r = redact("nothing here")
    assert isinstance(r, Redaction) and r.text == "nothing here" and r.hits == {}
    with pytest.raises(AttributeError):
        r.text = "x"  # type: ignore[misc]


def test_entropy_of_uniform_and_constant_strings() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert abs(shannon_entropy("abcd") - 2.0) < 1e-9


ADVERSARIAL = [
    "a" * 1_000_000,
    "Ab1" * 333_334,
    "sk-" + "a" * 1_000_000,
    "ghp_" * 250_000,
    "password=" * 110_000,
    'password="' * 100_000,
    "-----BEGIN PRIVATE KEY-----" * 37_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 1_000_000,
    "eyJ" + "aaaaaaaaa." * 100_000,
    "https://" + "u:" * 500_000 + "@",
    "x://" * 250_000,
    "\\" * 1_000_000,
    "Authorization: " * 66_000,
    "Bearer " * 140_000,
    "a/" * 500_000,
    "sha256:" * 140_000,
    " AKIA" * 200_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"adv{i}" for i in range(len(ADVERSARIAL))])
def test_no_catastrophic_backtracking_on_1mb_lines(text: str) -> None:
    # Completing at all is the assertion: a quadratic pattern would run for hours here.
    out = redact_text(text)
    assert isinstance(out, str)


# --- looma's generated corpus (tests/redact_public_corpus.json, from gitleaks' regexes) -------

def _catch() -> object:
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "bench"))
    from redact_catch import measure

    return measure()


def test_public_corpus_catch_rate_and_no_must_survive_mangled() -> None:
    res = _catch()
    assert res.total >= 1400 and len(res.per_rule) >= 200  # type: ignore[attr-defined]
    assert res.rate >= 0.98, res.missed[:20]  # type: ignore[attr-defined]
    assert res.mangled == [], res.mangled  # type: ignore[attr-defined]


@pytest.mark.parametrize("text,secret", [
    ("apiToken := \"Zq8Lm2Nv4Pw6Rx1Tc9Yb\"", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ("var apiToken string = \"Zq8Lm2Nv4Pw6Rx1Tc9Yb\"", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ("val apiToken: String = \"Zq8Lm2Nv4Pw6Rx1Tc9Yb\"", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('<add key="Password" value="hunter2-Zq8Lm2"/>', "hunter2-Zq8Lm2"),
    ('<add key="ClearTextPassword"    value="hunter2-Zq8Lm2" />', "hunter2-Zq8Lm2"),
    ("<xToken>Zq8Lm2Nv4Pw6Rx1Tc9Yb</xToken>", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ("<apiToken>\n    Zq8Lm2Nv4Pw6Rx1Tc9Yb\n</apiToken>", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('System.setProperty("X_TOKEN", "Zq8Lm2Nv4Pw6Rx1Tc9Yb")', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('API_TOKEN ?= "Zq8Lm2Nv4Pw6Rx1Tc9Yb"', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('API_TOKEN ::= "Zq8Lm2Nv4Pw6Rx1Tc9Yb"', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('$apiToken .= "Zq8Lm2Nv4Pw6Rx1Tc9Yb"', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('  "apiToken" => "Zq8Lm2Nv4Pw6Rx1Tc9Yb"', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ("curl -u admin:Zq8Lm2Nv4Pw6 https://api.example.com", "Zq8Lm2Nv4Pw6"),
    ("curl --user admin:'Zq8Lm2Nv4Pw6' https://api.example.com", "Zq8Lm2Nv4Pw6"),
    ("key=Zq8Lm2Nv4Pw6Rx1Tc9Yb", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ("Key: Zq8Lm2Nv4Pw6Rx1Tc9Yb", "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
    ('{"config.ini": "API_TOKEN=Zq8Lm2Nv4Pw6Rx1Tc9Yb\\nBACKUP_ENABLED=true"}', "Zq8Lm2Nv4Pw6Rx1Tc9Yb"),
])
def test_credential_assignments_in_every_common_syntax(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("secret,family", [
    ("xapp-1-A0123456789-1234567890123-" + "ab12cd34" * 8, "slack_token"),
    ("A3-ASWWYB-798JRYLJVD4-23DC2-86TVM-H43EB", "onepassword"),
    ("pscale_tkn_" + "Zq8Lm2Nv4Pw6Rx1Tc9YbKd3Fg5Hj7Aa0Bb", "planetscale"),
    ("pscale_pw_" + "Zq8Lm2Nv4Pw6Rx1Tc9YbKd3Fg5Hj7Aa0Bb", "planetscale"),
    ("dapi" + "0123456789abcdef0123456789abcdef", "databricks"),
    ("v1.0-" + "0a1b2c3d4e5f6a7b8c9d0e1f" + "-" + "0123456789abcdef" * 9 + "01", "cloudflare"),
    ("pat." + "Zq8Lm2Nv4Pw6Rx1Tc9Yb_-" + ".Zq8Lm2Nv4Pw6Rx1Tc9YbKd3F" + ".Aq8Lm2Nv4Pw6Rx1Tc9Yb",
     "harness"),
    ("dt0c01." + "ZQ8LM2NV4PW6RX1TC9YBKD3F" + "." + "zq8lm2nv4pw6rx1tc9ybkd3fg5hj7aa0" * 2,
     "dynatrace"),
])
def test_named_families_are_caught_whole(secret: str, family: str) -> None:
    for ctx in ("token was {s} in the log", "export X={s}", '{{"v": "{s}"}}'):
        r = redact(ctx.format(s=secret))
        assert r.hits.get(family, 0) == 1, (family, r)
        # whole-token: no 12-character piece of the secret is left
        assert not any(secret[i:i + 12] in r.text for i in range(len(secret) - 11)), r.text


@pytest.mark.parametrize("tok", [
    "dt0c01.Zq8Lm2Nv4Pw6Rx1Tc9YbKd3F.Aq8Lm2Nv4Pw6Rx1Tc9YbKd3Fg5Hj7Aa0Bb",
    "Zq8Lm2Nv4Pw6Rx1Tc9Yb~Kd3Fg5Hj7Aa0Bb.Cc1Dd2",
    "42|Zq8Lm2Nv4Pw6Rx1Tc9YbKd3Fg5Hj7Aa0Bb",
    "Zq8Lm2Nv4Pw6Rx1Tc9Yb%2BKd3Fg5Hj7Aa0Bb%3D",
    "Zq8Lm2Nv4Pw6:Rx1Tc9YbKd3Fg5Hj7Aa0Bb==",
    "Zq8Lm2Nv4Pw6Rx1T=c9YbKd3Fg5Hj7Aa0Bb=",
])
def test_entropy_fallback_replaces_the_token_whole(tok: str) -> None:
    out = redact_text(f"the agent printed {tok} here.")
    assert out == "the agent printed [REDACTED:high_entropy] here.", out


def test_a_name_before_the_token_is_kept() -> None:
    out = redact_text("the agent printed abc=Zq8Lm2Nv4Pw6Rx1Tc9YbKd3Fg5Hj7Aa0Bb here.")
    assert out == "the agent printed abc=[REDACTED:high_entropy] here."


def test_empty_assignment_does_not_eat_the_next_line() -> None:
    assert redact_text("password=\nusername=alice") == "password=\nusername=alice"
    out = redact_text("PASSWORD=\nAPI_TOKEN=Zq8Lm2Nv4Pw6Rx1Tc9Yb")
    assert out == "PASSWORD=\nAPI_TOKEN=[REDACTED:credential]"


def test_shared_gate_cuts_at_a_key_like_token_that_redaction_left() -> None:
    from looma_git.redact import redact_shared

    text, hits = redact_shared("We decided to use Zq8Lm2Nv4Pw6Rx1T for staging. More.")
    assert text == "We decided to use [REDACTED:shared_gate]"
    assert hits == {"shared_gate": 1}
    local = "We decided to use Zq8Lm2Nv4Pw6Rx1T for staging. More."
    assert redact_text(local) == local  # stricter than local
    ok = "commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f in looma_git/pipeline/resolve.py"
    assert redact_shared(ok) == (ok, {})


def test_family_of_kinds() -> None:
    from looma_git.redact import family_of

    assert family_of("github_token") == "github" and family_of("databricks") == "databricks"


# --- the independent corpus (tests/redact_independent_corpus.json) ----------------------------
# Public rule sets' own literal examples (Nosey Parker, Kingfisher, gitleaks, detect-secrets);
# rebuilt by tests/bench/redact_independent_build.py, measured by redact_independent_catch.py.
_INDEPENDENT: list[object] = []


def _independent() -> object:
    if not _INDEPENDENT:
        import sys

        sys.path.insert(0, str(Path(__file__).parent / "bench"))
        from redact_independent_catch import measure

        _INDEPENDENT.append(measure())
    return _INDEPENDENT[0]


def test_independent_corpus_is_sourced_and_licensed() -> None:
    data = json.loads((Path(__file__).parent / "redact_independent_corpus.json").read_text())
    lic_dir = Path(__file__).parent / "redact_independent_licenses"
    assert (lic_dir / "SOURCES.md").is_file()
    for src in data["sources"]:
        assert src["license"] in {"Apache-2.0", "MIT"} and len(src["commit"]) == 40
        assert (lic_dir / f"LICENSE-{src['name']}.txt").read_text().strip()
        assert src["commit"] in (lic_dir / "SOURCES.md").read_text()
        assert src["true_positives"] > 0
    tps = data["true_positives"]
    assert len(tps) >= 1500 and len({t["rule"] for t in tps}) >= 500
    assert all(t["secret"] and t["secret"] in t["text"] for t in tps)
    assert len(data["must_survive"]) >= 120 and len(data["false_positives"]) >= 300


def test_independent_must_survive_strings_are_untouched() -> None:
    res = _independent()
    assert res.mangled == [], res.mangled  # type: ignore[attr-defined]


def test_independent_catch_rate_does_not_fall_below_todays() -> None:
    res = _independent()
    # measured 1,697/1,731 (98.04%) when this floor was set; raise it as rules improve
    assert res.caught >= 1697, [(m["rule"], m["text"][:80]) for m in res.missed[:40]]  # type: ignore[attr-defined]


def test_independent_catch_rate_target() -> None:
    assert _independent().rate >= 0.98  # type: ignore[attr-defined]


def test_independent_catch_rate_holds_per_source() -> None:
    # every source on its own, so no rule set carries the others: Nosey Parker was the
    # held-out source while the context-window and vendor rules were tuned (docs/redaction.md)
    by = _independent().by["source"]  # type: ignore[attr-defined]
    rates = {src: ok / n for src, (ok, n) in by.items()}
    assert min(rates.values()) >= 0.955, rates


@pytest.mark.parametrize("text,secret", [
    ("calendly_token=eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJjYWxlbmRseS5jb20ifQ.c2lnbmF0dXJlX2E."
     "c2lnbmF0dXJlX2I4thPart", "c2lnbmF0dXJlX2I4thPart"),
    ("token was xghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s1Zq8 in the log",
     "xghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s1Zq8"),
    ("cloudplanSECRET-ABCD1234EFGH5678IJKL9012MNOP3456", "cloudplanSECRET-ABCD1234EFGH5678"),
    ("00DE0X0A0M0PeLE!CJoAQOx1GCLf1UIt4UU9y0VOPLUZAYN6I8mRzQm3Hc5", "00DE0X0A0M0PeLE!"),
])
def test_a_suspect_token_goes_whole(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and not any(
        secret[i:i + 12] in out for i in range(len(secret) - 11)), out


@pytest.mark.parametrize("text", [
    "session 3f8e2a1c-9b4d-4e6f-a7c8-1d2e3f4a5b6c resumed",
    "https://docs.google.com/document/d/1W7KCxOxP-1Fy5EyF2lbJGE2WuKmu5v0suYqoHas1jRM",
])
def test_urls_and_ids_keep_what_names_them(text: str) -> None:
    out = redact_text(text)
    assert out.startswith(text[:24]), out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_secretish, st.text(max_size=60),
                          st.sampled_from(["password", " -u ", "://", "PRIVATE KEY", "key "])),
                max_size=6))
def test_has_suspect_false_means_nothing_to_redact(parts: list[str]) -> None:
    from looma_git.redact import has_suspect

    text = "".join(parts)
    if not has_suspect(text):
        assert redact_text(text) == text


def test_a_redaction_that_exposes_another_secret_is_redacted_too() -> None:
    # Found by test_idempotent_on_mixtures: a truncated PEM header before a complete escaped
    # OpenSSH key left that key's body in the first pass's output.
    text = ("output was truncated: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
            "\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj "
            '{"content": "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbm'
            'UAAAAEbm9uZQ\\nAAAAMwAAAAtzc2gtZWQyNTUxOQAAACBd\\n-----END OPENSSH PRIVATE KEY-----'
            '\\n", "ok": true}')
    once = redact_text(text)
    assert "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBd" not in once
    assert redact_text(once) == once
