"""Provider token shapes with a distinctive prefix or signature that the gitleaks port lacks."""

# Each row as in redact/rules.py: (rule id, family, lowercase keywords gating the regex,
# regex, entropy floor). Written for looma from the vendors' documented token formats (the
# prefix or signature is the signal, so the body may be a test key of low entropy); the same
# formats appear in Kingfisher's and Nosey Parker's rule sets (Apache-2.0).

from __future__ import annotations

EXTRA: tuple[tuple[str, str, tuple[str, ...], str, float], ...] = (
    # GitLab: every token type carries a `gl…-` prefix (personal, deploy, runner, CI build,
    # pipeline trigger, feed, incoming mail, agent, OAuth app secret, SCIM, feature flags)
    ('gitlab-prefixed-token', 'gitlab',
     ('glpat-', 'gldt-', 'glrt-', 'glcbt-', 'glft-', 'glimt-', 'glagent-', 'gloas-',
      'glsoat-', 'glffct-', 'glwt-'),
     r'\bgl(?:pat|dt|rt|cbt|ft|imt|agent|oas|soat|ffct|wt)-(?=[A-Za-z_\-]*[0-9])[0-9A-Za-z_\-]{20,}', 0.0),
    # pipeline trigger tokens have a fixed length
    ('gitlab-pipeline-trigger-token', 'gitlab', ('glptt-',), r'\bglptt-[0-9A-Za-z_\-]{40}\b', 0.0),
    # Mailchimp API keys: 32 hex and the data centre (`-us6`)
    ('mailchimp-api-key', 'mailchimp', ('-us',), r'\b[0-9a-f]{32}-us[0-9]{1,2}\b', 0.0),
    # PubNub publish / subscribe / secret keys
    ('pubnub-key', 'pubnub', ('pub-c-', 'sub-c-', 'sec-c-'),
     r'\b(?:pub|sub|sec)-c-[0-9a-zA-Z]{8}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{12}\b', 0.0),
    # Tailscale API, auth, OAuth client, SCIM and webhook keys
    ('tailscale-key', 'tailscale', ('tskey-',),
     r'\btskey-(?:api|auth|client|scim|webhook)-[0-9A-Za-z]{4,}-[0-9A-Za-z]{6,}', 0.0),
    # Sourcegraph access tokens (`sgp_<instance>_<40 hex>`, `sgp_local_…`)
    ('sourcegraph-token', 'sourcegraph', ('sgp_',),
     r'\bsgp_(?:[0-9a-fA-F]{16}_)?(?:local_)?[0-9a-fA-F]{40}\b', 3.0),
    # Voiceflow dialog-manager / workspace keys
    ('voiceflow-key', 'voiceflow', ('vf.dm.', 'vf.ws.'),
     r'\bVF\.(?:DM|WS)\.[0-9a-zA-Z]{20,}\.[0-9a-zA-Z]{12,}\b', 0.0),
    # Nightfall API keys
    ('nightfall-key', 'nightfall', ('nf-',), r'\bNF-[0-9A-Za-z]{32}\b', 0.0),
    # Zoho OAuth access / refresh tokens
    ('zoho-token', 'zoho', ('1000.',), r'\b1000\.[0-9a-f]{32}\.[0-9a-f]{32}\b', 0.0),
    # MaxMind license keys (`<6>_<29>_mmk`): the suffix is the signal, so a lower entropy
    # floor than the gitleaks rule's 4.0 (test keys with sequential digits)
    ('maxmind-license-key-suffix', 'maxmind', ('_mmk',),
     r'\b[0-9A-Za-z]{6}_[0-9A-Za-z]{29}_mmk\b', 3.0),
    # NuGet API keys
    ('nuget-api-key', 'nuget', ('oy2',), r'\boy2[0-9a-z]{43}\b', 0.0),
    # Kingfisher's weak-password rule (common passwords with a digit suffix) is in
    # redact/context.py: those are short and need no token run.
    # age X25519 recipients (bech32): not a secret key, but scanners report them and a
    # recipient names whom a file is encrypted for
    ('age-recipient', 'age', ('age1',), r'\bage1[02-9ac-hj-np-z]{58}\b', 0.0),
    # ThingsBoard device access tokens in the device HTTP/CoAP API path (Nosey Parker's
    # np.thingsboard.1 names thingsboard.cloud; the path is the same on self-hosted servers)
    ('thingsboard-access-token', 'thingsboard', ('thingsboard', 'telemetry', 'attributes'),
     r'/api/v1/([0-9A-Za-z]{20})/(?:telemetry|attributes|rpc|claim|firmware|software)\b', 3.0),
    # Azure DevOps personal access tokens (84 characters, `AZDO` signature at 76)
    ('azure-devops-pat', 'azure', ('azdo',), r'\b[0-9A-Za-z]{76}AZDO[0-9A-Za-z]{4}\b', 0.0),
)
