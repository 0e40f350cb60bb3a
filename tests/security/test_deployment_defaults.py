"""Issue 14 item 14: deployment defaults are safe without extra settings.

HTTPS configured (a redirect or a trusted proxy header) turns on Secure cookies and HSTS;
every page has a Content-Security-Policy (tests/test_content_security_policy.py covers its
directives); no image or compose file trusts proxy headers on a port published to the
world; and the DEBUG demo key comes from a random secret of this install.
"""

from __future__ import annotations

import json
import re
import stat

import pytest

from tests.accounts.test_settings_switch import SETTINGS_VARIABLES
from tests.support.settings_probe import PROJECT, run_probe

HTTPS_VARIABLES = (
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "DEBUG_SECRET_KEY_FILE",
)
PROBE = """
import json, os
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
import django
django.setup()
from django.conf import settings
from onboarding.demo import demo_api_key
s = settings
print(json.dumps({
    "session_secure": s.SESSION_COOKIE_SECURE,
    "csrf_secure": s.CSRF_COOKIE_SECURE,
    "hsts": s.SECURE_HSTS_SECONDS,
    "secret": s.SECRET_KEY,
    "demo_key": demo_api_key(),
}))
"""


def settings_with(**env: str) -> dict:
    result = run_probe(PROBE, env, unset=SETTINGS_VARIABLES + HTTPS_VARIABLES)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


PRODUCTION = {"DEBUG": "0", "SECRET_KEY": "s" * 50, "FIELD_ENCRYPTION_KEY": "f" * 50}


@pytest.mark.parametrize("https", [{"SECURE_PROXY_SSL_HEADER": "1"}, {"SECURE_SSL_REDIRECT": "1"}])
def test_https_configured_makes_cookies_secure_and_turns_on_hsts(https):
    loaded = settings_with(**PRODUCTION, **https)

    assert loaded["session_secure"] and loaded["csrf_secure"]
    assert loaded["hsts"] >= 31536000


def test_without_https_cookies_stay_plain_and_no_hsts_is_sent():
    loaded = settings_with(**PRODUCTION)

    assert not loaded["session_secure"] and not loaded["csrf_secure"] and loaded["hsts"] == 0


def test_explicit_settings_still_win_over_the_https_defaults():
    loaded = settings_with(**PRODUCTION, SECURE_PROXY_SSL_HEADER="1", SECURE_HSTS_SECONDS="60")

    assert loaded["hsts"] == 60


def test_the_debug_demo_key_comes_from_a_random_secret_of_this_install(tmp_path):
    first_install, second_install = tmp_path / "one", tmp_path / "two"

    first = settings_with(DEBUG="1", DEBUG_SECRET_KEY_FILE=str(first_install))
    again = settings_with(DEBUG="1", DEBUG_SECRET_KEY_FILE=str(first_install))
    other = settings_with(DEBUG="1", DEBUG_SECRET_KEY_FILE=str(second_install))

    assert first["demo_key"] == again["demo_key"]  # stable across restarts
    assert other["demo_key"] != first["demo_key"]  # and different for every install
    assert len(first["secret"]) >= 50 and "insecure" not in first["secret"]
    assert stat.S_IMODE(first_install.stat().st_mode) == 0o600


def published_services_with_proxy_headers(compose: str) -> list[str]:
    """Services of a compose file whose command trusts proxy headers and that publish ``ports``."""
    import yaml

    services = yaml.safe_load(compose)["services"]
    return [
        name
        for name, service in services.items()
        if "--proxy-headers" in " ".join(map(str, service.get("command") or [])) and service.get("ports")
    ]


def test_no_directly_published_port_trusts_proxy_headers():
    """Anyone could then forge X-Forwarded-For (and with it the address the login lockout counts)."""
    dockerfile = (PROJECT / "Dockerfile").read_text()
    cmd = next(line for line in dockerfile.splitlines() if line.startswith("CMD"))
    assert "--proxy-headers" not in cmd
    assert re.search(r"^EXPOSE", dockerfile, re.MULTILINE)
    assert published_services_with_proxy_headers((PROJECT / "docker-compose.yml").read_text()) == []
    assert "--proxy-headers" not in (PROJECT / "Makefile").read_text()
