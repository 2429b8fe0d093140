#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""admin.py - the admin API's bearer token for the Python helpers of the
integration tests: the Authorization header read from the file that
$SK_ADMIN_TOKEN_FILE names (tests/integration/lib.sh sets it to the
sandbox's admin.token; scripts/sandbox.sh writes that file). No file, no
header: /healthz and /metrics need none, the other routes on TCP answer
401 (docs/control.md, "Access").

    import admin
    urllib.request.Request(url, headers=admin.headers({...}))
"""
import os


def token():
    """The token in the file $SK_ADMIN_TOKEN_FILE names ("" if none)."""
    path = os.environ.get("SK_ADMIN_TOKEN_FILE", "")
    if not path:
        return ""
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def headers(more=None):
    """MORE (a dict, not changed) plus Authorization: Bearer <token> if the
    token file exists."""
    h = dict(more or {})
    t = token()
    if t:
        h["Authorization"] = "Bearer " + t
    return h
