"""Credentials in every format issue 25 found `export --redact` missed, each in the text around
it as a user pastes it: for tests/core/safety/test_redact.py and the fault matrix's row
(tests/faults/leaks.py).
"""

from __future__ import annotations

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
            "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n")
OPENSSH_BODY = ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                "QyNTUxOQAAACDSmJ0wYq5+mkAt2nQ0yQK6j8HGZ7pQhG1uCk2Y6CxwHgAAAJjX5z3+1+c9\n")
GCP_KEY = "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDY3E8o1NEFcjMM"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AZURE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr"
             "/KBHBeksoGMGw==")
BASIC = "YWRtaW46aHVudGVyMg=="
STRIPE = "4eC39HqLyjWDarjtT1zdp7dc"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
GITLAB = "glpat-" + "xYz1AbC2dEf3GhI4jKl5"
NPM = "npm_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
PYPI = "pypi-AgEIcHlwaS5vcmcCJGE4ZmQ4NjA3LWU3NzktNDU3Ny1iZjJjLTExYzEzNzE5ODU5OAACKlszLCJ"
VAULT = "hvs." + "CAESIJ3nQ8tYbRkP2vXzL0mW7uHcAd9eFgKqNsTyZ1xV"
SLACK_PATH = "T0AAAAAAA/B0BBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX"

# (format, text holding the secret, the secret's parts that must be gone, what must remain)
CASES = [
    ("jwt", f"the session cookie is {JWT}, keep it", [JWT[:20], JWT[-20:]],
     "the session cookie is"),
    ("pem private key", "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY +
     "-----END RSA PRIVATE KEY-----\nafter the key", [PEM_BODY[:30], PEM_BODY[-30:-1]],
     "after the key"),
    ("openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + OPENSSH_BODY +
     "-----END OPENSSH PRIVATE KEY-----", [OPENSSH_BODY[:30], OPENSSH_BODY[-30:-1]], ""),
    ("gcp service account", '{"type": "service_account", "private_key_id": "8a7c5b3e1f",'
     ' "private_key": "-----BEGIN PRIVATE KEY-----\\n' + GCP_KEY +
     '\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}',
     [GCP_KEY[:30]], "bot@proj.iam.gserviceaccount.com"),
    ("pem cut short", "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY, [PEM_BODY[:30]], ""),
    ("aws secret key", f"[default]\naws_secret_access_key = {AWS_SECRET}\nregion = us-east-1",
     [AWS_SECRET], "region = us-east-1"),
    ("aws secret key exported", f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", [AWS_SECRET],
     "export AWS_SECRET_ACCESS_KEY="),
    ("azure account key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
     f"{AZURE_KEY};EndpointSuffix=core.windows.net", [AZURE_KEY[:20]],
     "EndpointSuffix=core.windows.net"),
    ("password in a url", "DATABASE_URL=postgres://admin:pw@db.internal:5432/app",
     [":pw@"], "postgres://admin:"),
    ("password in a redis url", "connect to redis://:s3cretpass@cache:6379/0",
     ["s3cretpass"], "@cache:6379/0"),
    ("basic auth header", f"Authorization: Basic {BASIC}", [BASIC], "Authorization: Basic"),
    ("basic auth in curl", f"curl -H 'Authorization: Basic {BASIC}' https://x.example",
     [BASIC], "https://x.example"),
    ("basic credentials alone", f"send Basic {BASIC} to it", [BASIC], "send Basic"),
    ("bearer without a digit", "Authorization: Bearer abcdefghijklmnopqrstuvwxyzABCD",
     ["abcdefghijklmnopqrstuvwxyzABCD"], "Authorization: Bearer"),
    ("bearer without a digit in curl", "curl -H 'X: y' -H \"Bearer abcdefghijklmnopqrstuvwxyz\"",
     ["abcdefghijklmnopqrstuvwxyz"], "curl"),
    ("stripe secret key", f"stripe.api_key = 'sk_live_{STRIPE}'", [STRIPE], "stripe"),
    ("stripe restricted key", f"use rk_live_{STRIPE} here", [STRIPE], "use"),
    ("stripe in prose", f"我的 Stripe 密钥是 sk_live_{STRIPE}。", [STRIPE], "我的 Stripe 密钥是"),
    ("hugging face", f"huggingface-cli login --token {HF}", [HF], "huggingface-cli login"),
    ("gitlab", f"git clone https://oauth2:{GITLAB}@gitlab.com/g/p.git", [GITLAB],
     "gitlab.com/g/p.git"),
    ("gitlab alone", f"token is {GITLAB}", [GITLAB], "token is"),
    ("npm", f"//registry.npmjs.org/:_authToken={NPM}", [NPM], "registry.npmjs.org"),
    ("npm alone", f"NPM says {NPM}", [NPM], "NPM says"),
    ("pypi", f"twine upload -u __token__ -p {PYPI} dist/*", [PYPI], "dist/*"),
    ("slack webhook", f"post to https://hooks.slack.com/services/{SLACK_PATH} now",
     [SLACK_PATH, "XXXXXXXXXXXXXXXXXXXXXXXX"], "https://hooks.slack.com/services/"),
    ("TOKEN=", "TOKEN=abcdefghijklmnop ./deploy.sh", ["abcdefghijklmnop"], "./deploy.sh"),
    ("GH_TOKEN=", "GH_TOKEN=qwertyuiopasdfgh gh pr list", ["qwertyuiopasdfgh"], "gh pr list"),
    ("secret=", "secret=mysupersecretvalue&next=1", ["mysupersecretvalue"], "next=1"),
    ("passwd:", "db:\n  user: app\n  passwd: correcthorse\n", ["correcthorse"], "user: app"),
    ("quoted token", 'config = {"token": "plainwordstoken"}', ["plainwordstoken"], "config"),
    ("vault --token=", f"vault login --token={VAULT} -method=token", [VAULT[4:]], "vault login"),
    ("VAULT_TOKEN=", f"export VAULT_TOKEN={VAULT}", [VAULT[4:]], "export VAULT_TOKEN="),
]
