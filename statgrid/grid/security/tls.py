"""The grid's TLS: only its own daemons may talk to the Dask scheduler and workers.

Dask's scheduler accepts any client that reaches its port, and a client may run any function on
every worker (`client.run`) — as the user the grid runs as. So the engine speaks TLS with mutual
certificates (Dask's `Security`, `tls://` addresses): the scheduler, the workers and the
master's client each prove they hold a certificate of the grid's own CA, and refuse any peer
that does not (distributed.security sets `verify_mode = CERT_REQUIRED` on both sides).

The first `grid up` makes, under `<home>/grid/tls/` (directory 0700, every file 0600):

    ca.pem, ca-key.pem       the grid's CA (self-signed); its key is kept to issue node
                             certificates later (the network work of issue 15)
    grid.pem, grid-key.pem   the certificate of the grid's daemons, signed by the CA: one for
                             every role (scheduler, worker, master client), as
                             distributed's `Security.temporary` does

Keys are ECDSA P-256 (the TLS handshake of a new connection is cheaper than with RSA-2048; every
TLS 1.2/1.3 stack has it), signed with SHA-256, valid VALIDITY_DAYS. Later starts reuse the
files. A start of a new embedded engine renews the whole set (new CA) when a certificate has
expired or will within RENEW_BEFORE_DAYS; a running engine keeps the set it was started with
(a master that reconnects to it must present the same CA), and nodes joined with
`statgrid worker` need the new copy. A node on another machine needs the directory copied
(kept 0600) into the grid home of its grid.toml: `statgrid worker` refuses to start without it.
"""
from __future__ import annotations

import datetime
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from statgrid.errors import StatgridError
from statgrid.host.files import write_atomic

log = logging.getLogger("statgrid.tls")

TLS_DIR = "tls"
VALIDITY_DAYS = 3650
RENEW_BEFORE_DAYS = 30
COMMON_NAME = "statgrid-grid"      # distributed turns off host name checks (a cluster's own CA, IP addresses)


@dataclass(frozen=True)
class TlsFiles:
    """Paths of the grid's CA and daemon certificate."""
    dir: Path
    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path

    @classmethod
    def under(cls, grid_dir: Path) -> "TlsFiles":
        d = grid_dir / TLS_DIR
        return cls(d, d / "ca.pem", d / "ca-key.pem", d / "grid.pem", d / "grid-key.pem")

    def all(self) -> tuple[Path, ...]:
        return (self.ca_cert, self.ca_key, self.cert, self.key)

    def missing(self) -> list[Path]:
        """The files a daemon needs to connect (the CA key is not one of them) that are not there."""
        return [p for p in (self.ca_cert, self.cert, self.key) if not p.is_file()]


def ensure(grid_dir: Path, renew: bool = True) -> TlsFiles:
    """The grid's CA and daemon certificate, made if missing (renewed if `renew` and one expires
    within RENEW_BEFORE_DAYS); permissions set to 0700/0600 every time."""
    files = TlsFiles.under(grid_dir)
    files.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(files.dir, 0o700)
    if any(not p.is_file() for p in files.all()):
        _make(files)
    elif renew and _expires_within(files, datetime.timedelta(days=RENEW_BEFORE_DAYS)):
        log.warning("the grid's TLS certificates in %s expire within %d days: making a new CA and certificate; "
                    "copy the directory again to every node joined with `statgrid worker`", files.dir,
                    RENEW_BEFORE_DAYS)
        _make(files)
    for p in files.all():
        os.chmod(p, 0o600)
    return files


def require(grid_dir: Path) -> TlsFiles:
    """The files for a daemon that must not make them (a node joining with `statgrid worker`)."""
    files = TlsFiles.under(grid_dir)
    missing = files.missing()
    if missing:
        raise StatgridError(f"the grid's TLS certificate is missing: {str(missing[0])!r} does not exist. The grid's "
                            f"engine accepts only its own daemons: copy the directory {str(files.dir)!r} from the "
                            "master's grid home (made by its first `statgrid grid up`) to this machine, kept private "
                            "(chmod 700 the directory, 600 its files), or point STATGRID_HOME / [grid] home at a "
                            "shared grid home that has it.")
    return files


def security(files: TlsFiles):
    """Dask's Security for every role of the grid (scheduler, workers, the master's client)."""
    from distributed.security import Security

    ca, cert, key = str(files.ca_cert), str(files.cert), str(files.key)
    return Security(require_encryption=True, tls_ca_file=ca,
                    tls_client_cert=cert, tls_client_key=key,
                    tls_scheduler_cert=cert, tls_scheduler_key=key,
                    tls_worker_cert=cert, tls_worker_key=key)


def dask_cli_args(files: TlsFiles) -> list[str]:
    """The same, as options of `dask scheduler` / `dask worker`."""
    return ["--tls-ca-file", str(files.ca_cert), "--tls-cert", str(files.cert), "--tls-key", str(files.key)]


# -- making the certificates (cryptography: what distributed's Security.temporary uses) ---------------
def _expires_within(files: TlsFiles, margin: datetime.timedelta) -> bool:
    from cryptography import x509

    now = datetime.datetime.now(datetime.timezone.utc)
    for path in (files.ca_cert, files.cert):
        try:
            cert = x509.load_pem_x509_certificate(path.read_bytes())
        except ValueError:                          # damaged: make a new set
            return True
        if cert.not_valid_after_utc - margin < now or cert.not_valid_before_utc > now:
            return True
    return False


def make_ca_and_cert(common_name: str = COMMON_NAME, days: int = VALIDITY_DAYS) -> tuple[bytes, bytes, bytes, bytes]:
    """(ca_cert, ca_key, cert, key) as PEM: a CA and one certificate it signs, for server and client use."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)   # 5 min: clock skew
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{common_name} CA")])
    ca_cert = (x509.CertificateBuilder()
               .subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            key_cert_sign=True, crl_sign=True, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=True, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))

    def pem_key(k) -> bytes:
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())

    return (ca_cert.public_bytes(serialization.Encoding.PEM), pem_key(ca_key),
            cert.public_bytes(serialization.Encoding.PEM), pem_key(key))


def _make(files: TlsFiles) -> None:
    ca_cert, ca_key, cert, key = make_ca_and_cert()
    # Keys first, certificates last: a reader that finds grid.pem finds its key too.
    for path, data in ((files.ca_key, ca_key), (files.key, key), (files.ca_cert, ca_cert), (files.cert, cert)):
        write_atomic(path, data, private=True)


# -- the API's certificate (HTTPS for remote clients) ---------------------------------------------------
API_CERT, API_KEY = "api.pem", "api-key.pem"
PUBLIC_CA = "ca.pem"                 # <home>/grid/ca.pem: the CA certificate, for clients (0644: not a secret)


def api_names(listen: str, names: tuple[str, ...]) -> list[str]:
    """The names and addresses the API's certificate is valid for: the configured names, this
    machine's host names, the listen address (unless a wildcard) and loopback."""
    import ipaddress
    import socket

    out = [*names, socket.gethostname(), socket.getfqdn(), "localhost", "127.0.0.1", "::1"]
    if not ipaddress.ip_address(listen).is_unspecified:
        out.append(listen)
    return list(dict.fromkeys(n for n in out if n))


def ensure_api_cert(grid_dir: Path, names: list[str]) -> tuple[Path, Path, Path]:
    """(certificate, key, public CA copy) of the API's HTTPS listener, issued by the grid's CA for
    `names`; re-issued when the names changed or it expires within RENEW_BEFORE_DAYS."""
    from cryptography import x509

    files = ensure(grid_dir)
    cert_path, key_path = files.dir / API_CERT, files.dir / API_KEY
    public_ca = grid_dir / PUBLIC_CA
    fresh = False
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
        fresh = (cert.issuer == ca.subject and _san_names(cert) == set(names) and key_path.is_file()
                 and cert.not_valid_after_utc - datetime.timedelta(days=RENEW_BEFORE_DAYS)
                 > datetime.datetime.now(datetime.timezone.utc))
    except (OSError, ValueError):
        pass
    if not fresh:
        cert_pem, key_pem = issue(files, "statgrid-api", names)
        write_atomic(key_path, key_pem, private=True)
        write_atomic(cert_path, cert_pem, private=True)
    ca_pem = files.ca_cert.read_bytes()
    if not public_ca.is_file() or public_ca.read_bytes() != ca_pem:
        write_atomic(public_ca, ca_pem)
    os.chmod(public_ca, 0o644)
    return cert_path, key_path, public_ca


def _san_names(cert) -> set[str]:
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {*san.get_values_for_type(x509.DNSName), *(str(a) for a in san.get_values_for_type(x509.IPAddress))}


def issue(files: TlsFiles, common_name: str, names: list[str], days: int = VALIDITY_DAYS) -> tuple[bytes, bytes]:
    """A server certificate signed by the grid's CA for `names` (DNS names and IP addresses)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
    ca_key = serialization.load_pem_private_key(files.ca_key.read_bytes(), password=None)
    sans: list[x509.GeneralName] = []
    for n in names:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            sans.append(x509.DNSName(n))
    now = datetime.datetime.now(datetime.timezone.utc)
    end = min(now + datetime.timedelta(days=days), ca_cert.not_valid_after_utc)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))
