"""Secret redaction: planted secrets vanish, allowlisted values survive byte-for-byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.redact import Redaction, redact, redact_obj, redact_text, shannon_entropy

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


def test_url_password_keeps_scheme_user_and_host() -> None:
    out = redact_text("postgres://app:s3cr3t-Pa55@db.internal:5432/app")
    assert out == "postgres://app:[REDACTED:url_password]@db.internal:5432/app"


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
