"""``--https``: certificates for the harness's server, generated on first use with
``cryptography`` and cached per user.

Browsers give WebGPU, cross-origin isolation and ``measureUserAgentSpecificMemory`` only to
secure contexts (https, or http on localhost), so a phone on the network needs https. Two
certificates are kept in :func:`cache_dir`:

- a local certificate authority (``ca.pem``, ``ca-key.pem``): install and trust it once on the
  phone; it stays valid when the machine's addresses change;
- the server certificate (``cert.pem``, ``key.pem``) signed by it, with the names and addresses
  the phone uses in its subjectAltName. It is made again, signed by the same authority, when a
  name is missing or it expires within :data:`RENEW_DAYS`.

Apple's rules for TLS server certificates (https://support.apple.com/en-us/103769): names in the
subjectAltName (the common name is not trusted), a SHA-2 signature, EKU serverAuth, a validity
of at most 825 days (we use :data:`SERVER_DAYS`), RSA ≥ 2048 bits or ECDSA (we use P-256). On iOS
a manually installed authority is trusted for TLS only after Settings › General › About ›
Certificate Trust Settings (Apple support article HT204477).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

#: Days a generated server certificate is valid (Apple's limit is 825; browsers' is 398).
SERVER_DAYS = 397
#: Days the local certificate authority is valid.
CA_DAYS = 3650
#: A certificate expiring within this many days is made again.
RENEW_DAYS = 30
#: Path the authority is served at (``serve --https``) so a phone can download and install it.
CA_ROUTE = "/webgpu-harness-ca.cer"


def cache_dir() -> Path:
    """Where the certificates live: ``$WEBGPU_HARNESS_TLS_DIR``, else ``tls/`` of the harness's
    per-user cache (``$WEBGPU_HARNESS_CACHE``, or platformdirs' user cache folder
    ``webgpu-harness``: ``~/.cache/…`` on Linux, ``~/Library/Caches/…`` on macOS; as harness/npm.py)."""
    if os.environ.get("WEBGPU_HARNESS_TLS_DIR"):
        return Path(os.environ["WEBGPU_HARNESS_TLS_DIR"])
    if os.environ.get("WEBGPU_HARNESS_CACHE"):
        return Path(os.environ["WEBGPU_HARNESS_CACHE"]).expanduser() / "tls"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("webgpu-harness", appauthor=False)) / "tls"


def names_for(host: str, extra: list[str] | None = None) -> list[str]:
    """Names and addresses the server certificate must hold for a server bound to ``host``:
    localhost, loopback, this machine's host name and its ``.local`` (Bonjour) name, and the bound
    address, or every LAN address when bound to every interface; plus ``extra`` (a
    ``--public-url``'s host)."""
    from harness.serve.urls import WILDCARDS, lan_addresses

    hostname = socket.gethostname().split(".")[0]
    names = ["localhost", "127.0.0.1", "::1", hostname, f"{hostname}.local"]
    names += lan_addresses() if host in WILDCARDS else [host]
    names += list(extra or [])
    return list(dict.fromkeys(n for n in names if n))


@dataclass
class Certificates:
    """The files of :func:`ensure`: ``cert``/``key`` for the server, ``ca`` to install on a
    phone; ``names`` in the server certificate; ``made``: what was (re)generated this time."""

    cert: Path
    key: Path
    ca: Path
    names: list[str]
    not_after: dt.datetime
    made: list[str]

    def spki_sha256(self) -> str:
        """Base64 SHA-256 of the server key's SubjectPublicKeyInfo, as Chromium's
        ``--ignore-certificate-errors-spki-list`` takes it."""
        return spki_sha256(self.cert)


def _san(names: list[str]):
    from cryptography import x509

    out = []
    for n in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return x509.SubjectAlternativeName(out)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    if private:
        os.chmod(tmp, 0o600)
    tmp.replace(path)


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _load(cert: Path, key: Path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        return (x509.load_pem_x509_certificate(cert.read_bytes()),
                serialization.load_pem_private_key(key.read_bytes(), password=None))
    except (OSError, ValueError):
        return None


def _fresh(cert, now: dt.datetime) -> bool:
    return cert.not_valid_after_utc - now > dt.timedelta(days=RENEW_DAYS)


def ensure(names: list[str], folder: Path | None = None) -> Certificates:
    """The cached authority and a server certificate for ``names`` in ``folder`` (default
    :func:`cache_dir`), generating what is missing, expiring or lacks a name. Raises ``OSError``
    when the folder cannot be written."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder or cache_dir())
    now = dt.datetime.now(dt.timezone.utc)
    made: list[str] = []
    ca_path, ca_key_path = folder / "ca.pem", folder / "ca-key.pem"
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    ca = _load(ca_path, ca_key_path)
    if ca is None or not _fresh(ca[0], now):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"webgpu-harness local CA ({socket.gethostname()})")])
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=CA_DAYS))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        _write(ca_key_path, _key_pem(key), private=True)
        _write(ca_path, cert.public_bytes(serialization.Encoding.PEM))
        ca = (cert, key)
        made.append("certificate authority")
    ca_cert, ca_key = ca
    server = _load(cert_path, key_path)
    if server is not None:
        have = set()
        try:
            san = server[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            have = {str(v) for v in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))
        except x509.ExtensionNotFound:
            pass
        canonical = {str(ipaddress.ip_address(n)) if _is_ip(n) else n for n in names}
        if "certificate authority" in made or server[0].issuer != ca_cert.subject or not _fresh(server[0], now) \
                or not canonical <= have:
            server = None
    if server is None:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"webgpu-harness ({socket.gethostname()})")])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=SERVER_DAYS))
                .add_extension(_san(names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                             crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
                .sign(ca_key, hashes.SHA256()))
        _write(key_path, _key_pem(key), private=True)
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
        server = (cert, key)
        made.append("server certificate")
    san = server[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    got = [str(v) for v in san.get_values_for_type(x509.DNSName)] + [str(v) for v in san.get_values_for_type(x509.IPAddress)]
    return Certificates(cert_path, key_path, ca_path, got, server[0].not_valid_after_utc, made)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def spki_sha256(cert_path: Path) -> str:
    """Base64 SHA-256 of a PEM certificate's SubjectPublicKeyInfo."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(Path(cert_path).read_bytes())
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def ca_der(ca_path: Path) -> bytes:
    """The authority certificate as DER (what iOS Safari installs from a ``.cer`` download)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    return x509.load_pem_x509_certificate(Path(ca_path).read_bytes()).public_bytes(serialization.Encoding.DER)


def add_ca_route(app, ca_path: Path) -> None:
    """Serve the authority at :data:`CA_ROUTE` (``application/x-x509-ca-cert``) so a phone can
    download and install it; it is public (a certificate, not its key)."""
    from fastapi.responses import Response

    data = ca_der(ca_path)

    @app.get(CA_ROUTE, include_in_schema=False)
    def ca_certificate() -> Response:
        return Response(data, media_type="application/x-x509-ca-cert",
                        headers={"Content-Disposition": 'attachment; filename="webgpu-harness-ca.cer"'})


def describe(folder: Path | None = None) -> str:
    """One line for ``doctor``: the cached certificates' state (nothing is generated)."""
    folder = Path(folder or cache_dir())
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return "the Python package cryptography is missing (pip install cryptography): --https cannot make certificates"
    server = _load(folder / "cert.pem", folder / "key.pem")
    if server is None:
        return f"no certificate yet: --https makes one on first use in {folder}"
    from cryptography import x509

    san = server[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    names = [str(v.value) for v in san]
    return (f"{folder}/cert.pem for {', '.join(names)}; "
            f"expires {server[0].not_valid_after_utc:%Y-%m-%d}; install {folder}/ca.pem on a phone once")
