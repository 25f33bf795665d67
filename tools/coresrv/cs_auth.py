"""Credentials of the reference core server: HS256 JWTs, static tokens, API key, dev user."""
import base64
import hashlib
import hmac
import ipaddress
import json
import time
import uuid

# Fixed test credentials (also in env.sh; the env file may override each of them).
DEFAULT_CREDENTIALS = {
    "RD_CORE_LOGIN": "ops",
    "RD_CORE_PASSWORD": "redrive-ops-password",
    "RD_CORE_VIEWER_LOGIN": "viewer",
    "RD_CORE_VIEWER_PASSWORD": "redrive-viewer-password",
    "RD_CORE_TOKEN": "rd-test-operator-token-alice",
    "RD_CORE_VIEWER_TOKEN": "rd-test-viewer-token",
    "RD_CORE_API_KEY": "rd-test-api-key-tasker-bot",
    "RD_CORE_JWT_SECRET": "rd-test-jwt-secret-not-for-production",
}

OPERATOR_PERMISSIONS = ["executions:retry", "workers:manage", "steps:resolve", "dlq:update",
                        "executions:read", "workers:read", "dlq:read"]
VIEWER_PERMISSIONS = ["executions:read", "workers:read", "dlq:read"]


class AuthError(Exception):
    """Missing, invalid or expired credentials (→ 401)."""


def _b64e(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64d(text):
    pad = "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(text + pad)


def jwt_encode(claims, secret):
    header = {"alg": "HS256", "typ": "JWT"}
    signing = _b64e(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        _b64e(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), signing.encode("ascii"), hashlib.sha256).digest()
    return signing + "." + _b64e(sig)


def jwt_decode(token, secret, now=None):
    """Verify an HS256 JWT; return its claims or raise AuthError."""
    parts = token.split(".")
    if len(parts) != 3:
        raise AuthError("malformed token")
    try:
        header = json.loads(_b64d(parts[0]))
        claims = json.loads(_b64d(parts[1]))
        sig = _b64d(parts[2])
    except (ValueError, UnicodeDecodeError):
        raise AuthError("malformed token")
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise AuthError("unsupported token algorithm")
    want = hmac.new(secret.encode(), (parts[0] + "." + parts[1]).encode("ascii"),
                    hashlib.sha256).digest()
    if not hmac.compare_digest(sig, want):
        raise AuthError("bad token signature")
    if not isinstance(claims, dict):
        raise AuthError("malformed token")
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)):
        raise AuthError("token has no exp")
    if (now if now is not None else time.time()) >= exp:
        raise AuthError("token expired")
    return claims


class Identity:
    def __init__(self, name, role, method):
        self.name, self.role, self.method = name, role, method

    @property
    def may_write(self):
        return self.role == "operator"

    def as_dict(self):
        return {"identity": self.name, "role": self.role, "auth": self.method}


def is_loopback(addr):
    try:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


class Authenticator:
    # --expires-in TEXT (tests): the token response's expires_in, sent verbatim as JSON text
    # ("1e999", "-5"): issue() puts this mark in its place and send_json swaps it in.
    EXPIRES_MARK = "@@coresrv-expires-in@@"

    def __init__(self, creds, access_ttl, refresh_ttl, dev_user_enabled, expires_text=None):
        self.c = creds
        self.expires_text = expires_text
        self.secret = creds["RD_CORE_JWT_SECRET"]
        self.access_ttl = access_ttl
        self.refresh_ttl = refresh_ttl
        self.dev_user_enabled = dev_user_enabled

    # ---- token issue -------------------------------------------------------
    def check_login(self, login, password):
        """Return the role for a login/password pair, or None."""
        pairs = [(self.c["RD_CORE_LOGIN"], self.c["RD_CORE_PASSWORD"], "operator"),
                 (self.c["RD_CORE_VIEWER_LOGIN"], self.c["RD_CORE_VIEWER_PASSWORD"], "viewer")]
        for lg, pw, role in pairs:
            if isinstance(login, str) and isinstance(password, str) and \
                    hmac.compare_digest(login.encode(), lg.encode()) and \
                    hmac.compare_digest(password.encode(), pw.encode()):
                return role
        return None

    def issue(self, login, role):
        now = int(time.time())
        base = {"sub": login, "login": login, "email": login + "@redrive.test", "role": role,
                "permissions": OPERATOR_PERMISSIONS if role == "operator" else VIEWER_PERMISSIONS,
                "iss": "redrive-coresrv", "iat": now}
        access = dict(base, typ="access", exp=now + self.access_ttl, jti=uuid.uuid4().hex)
        refresh = dict(base, typ="refresh", exp=now + self.refresh_ttl, jti=uuid.uuid4().hex)
        return {"access_token": jwt_encode(access, self.secret),
                "refresh_token": jwt_encode(refresh, self.secret),
                "token_type": "Bearer",
                "expires_in": self.EXPIRES_MARK if self.expires_text else self.access_ttl}

    def refresh(self, token):
        if not isinstance(token, str) or not token:
            raise AuthError("missing refresh_token")
        claims = jwt_decode(token, self.secret)
        if claims.get("typ") != "refresh":
            raise AuthError("not a refresh token")
        return self.issue(str(claims.get("sub")), claims.get("role", "viewer"))

    # ---- request authentication ------------------------------------------
    def authenticate(self, headers, client_addr):
        """Return an Identity or raise AuthError. Order: Authorization, X-API-Key, x-dev-user."""
        authz = headers.get("Authorization")
        if authz is not None:
            scheme, _, token = authz.strip().partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                raise AuthError("Authorization must be 'Bearer <token>'")
            if hmac.compare_digest(token.encode(), self.c["RD_CORE_TOKEN"].encode()):
                return Identity("alice", "operator", "bearer")
            if hmac.compare_digest(token.encode(), self.c["RD_CORE_VIEWER_TOKEN"].encode()):
                return Identity("viewer", "viewer", "bearer")
            claims = jwt_decode(token, self.secret)
            if claims.get("typ") != "access":
                raise AuthError("not an access token")
            role = claims.get("role") if claims.get("role") in ("operator", "viewer") else "viewer"
            return Identity(str(claims.get("sub") or claims.get("email") or "?"), role, "jwt")
        key = headers.get("X-API-Key")
        if key is not None:
            if hmac.compare_digest(key.strip().encode(), self.c["RD_CORE_API_KEY"].encode()):
                return Identity("tasker-bot", "operator", "api-key")
            raise AuthError("invalid API key")
        dev = headers.get("x-dev-user")
        if dev is not None:
            if not self.dev_user_enabled:
                raise AuthError("x-dev-user is not enabled on this server")
            if not is_loopback(client_addr):
                raise AuthError("x-dev-user is accepted from loopback clients only")
            dev = dev.strip()
            if not dev or len(dev) > 64 or not all(ch.isalnum() or ch in "._-@" for ch in dev):
                raise AuthError("invalid x-dev-user name")
            return Identity("dev:" + dev, "operator", "dev-user")
        raise AuthError("no credentials")
