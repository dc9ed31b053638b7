"""statgrid as a site installs it, for tests with real users: a venv under /opt made from the system's
Python that every user may run (`site_install`), real OS users (`make_users`, `users`) and a command
run as one of them (`run_as`). Test modules import what they use:

    from tests.support.multiuser import make_users, run_as, site_install, users
    __all__ = ["make_users", "site_install", "users"]   # fixtures (users needs make_users): used by name

Layout (everything root's, readable and executable by all, writable by root only):

    /opt/statgrid-test/venv-<key>/       the dependencies of requirements.lock; built once, reused while a
                                         run of pytest finds its marker (key: the lock's and the system
                                         Python's version's hash); `.build.lock` serialises the builds
    /opt/statgrid-test/session-<rand>/   one per test session: venv/ (this checkout's statgrid, installed
                                         non-editable, over the dependencies of venv-<key> through a .pth
                                         file, so two test sessions of different checkouts never install
                                         into one venv) and .lock (held while the session runs, so a later
                                         session removes the directories of sessions that were killed)
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pytest

REPO = Path(__file__).resolve().parents[2]
SITE_ROOT = Path("/opt/statgrid-test")
SYSTEM_PYTHON = "/usr/bin/python3"
MARKER = ".statgrid-deps-installed"
DEPS_TIMEOUT_S = 3600
# What setuptools needs to build statgrid from a copy of the checkout (pyproject.toml names the README).
SOURCE_FILES = ("pyproject.toml", "README.md")
SOURCE_DIRS = ("statgrid",)
USER_COMMENT = "statgrid test user of pid"


@dataclass(frozen=True)
class SiteInstall:
    root: Path            # the session's venv
    python: Path
    statgrid: Path
    bin_dir: Path
    site_packages: Path   # where statgrid is installed
    deps: Path            # the cached venv holding the dependencies


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    home: Path


_current_site: SiteInstall | None = None


# --- the site install -------------------------------------------------------------------------------------

def _run(argv: Sequence[str], timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """A command of the install as root, with umask 022 whatever pytest's is (files for everyone to read)."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, umask=0o022,
                          stdin=subprocess.DEVNULL, **kw)


def _tail(proc: subprocess.CompletedProcess, lines: int = 15, width: int = 300) -> str:
    """The last lines of a command's output, each cut to `width` (pip lists every version on one line)."""
    return "\n".join(line if len(line) <= width else line[:width] + " …"
                     for line in (proc.stdout + proc.stderr).strip().splitlines()[-lines:])


def _system_python_version() -> str:
    """The system Python's version ('3.11.2'), or skip saying why it cannot make the site's venv."""
    if os.geteuid() != 0:
        pytest.skip("a site install under /opt needs root")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no system Python at {SYSTEM_PYTHON} to make the site's venv from")
    probe = _run([SYSTEM_PYTHON, "-c", "import platform, sys; print(platform.python_version()); "
                  "print(int(sys.version_info >= (3, 11)))"], timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} does not run: {_tail(probe, 3)}")
    version, recent = probe.stdout.split()
    if recent != "1":
        pytest.skip(f"{SYSTEM_PYTHON} is Python {version}; statgrid needs 3.11 or later")
    venv = _run([SYSTEM_PYTHON, "-c", "import venv, ensurepip"], timeout=60)
    if venv.returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} cannot make a venv with pip (Debian: apt-get install python3-venv): "
                    f"{_tail(venv, 1)}")
    return version


def _build_requires() -> list[str]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["build-system"]["requires"])


def _deps_key(python_version: str) -> str:
    h = hashlib.sha256((REPO / "requirements.lock").read_bytes())
    h.update(f"\n{python_version}\n{' '.join(_build_requires())}".encode())
    return h.hexdigest()[:12]


def _make_public(path: Path) -> None:
    """Readable (and for directories and programs, executable) by all, writable by the owner only."""
    for p in [path, *path.rglob("*")]:
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        mode = stat.S_IMODE(st.st_mode) & ~0o022 | 0o444
        if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o100:
            mode |= 0o111
        if mode != stat.S_IMODE(st.st_mode):
            os.chmod(p, mode)


def _site_root() -> Path:
    SITE_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
    st = SITE_ROOT.stat()
    if st.st_uid != 0 or st.st_mode & 0o022:
        os.chown(SITE_ROOT, 0, 0)
        os.chmod(SITE_ROOT, 0o755)
    return SITE_ROOT


def _site_packages(python: Path) -> Path:
    out = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], timeout=60)
    assert out.returncode == 0, _tail(out)
    return Path(out.stdout.strip())


def _deps_venv(python_version: str) -> Path:
    """The venv with requirements.lock installed: reused when its marker is there, else built now (under a
    lock shared by every pytest run on the machine). Skips when the dependencies cannot be installed.

    The venv is built where it stays and the marker written last: a venv cannot be renamed into place (pip
    writes its absolute path into every script's #! line), so a build that was killed is recognised by its
    missing marker and removed before the next one."""
    root = _site_root()
    venv = root / f"venv-{_deps_key(python_version)}"
    if (venv / MARKER).is_file():
        return venv
    with open(root / ".build.lock", "a") as lock:
        os.fchmod(lock.fileno(), 0o644)
        fcntl.flock(lock, fcntl.LOCK_EX)   # another run may be building it: wait for it
        if (venv / MARKER).is_file():
            return venv
        shutil.rmtree(venv, ignore_errors=True)   # a build that was killed
        t0 = time.monotonic()
        made = _run([SYSTEM_PYTHON, "-m", "venv", str(venv)], timeout=600)
        if made.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            pytest.skip(f"{SYSTEM_PYTHON} -m venv failed:\n{_tail(made)}")
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
        # What building statgrid needs goes in too: this checkout is installed without build isolation
        # on every test session, offline and in seconds.
        for what in (["-r", str(REPO / "requirements.lock")], [*_build_requires(), "wheel"]):
            done = _run(pip + what, timeout=DEPS_TIMEOUT_S)
            if done.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                pytest.skip(f"could not install the site venv's dependencies (pip install {' '.join(what)}); "
                            f"pip said:\n{_tail(done)}")
        _make_public(venv)
        (venv / MARKER).write_text(f"built in {time.monotonic() - t0:.0f} s\n")
        os.chmod(venv / MARKER, 0o644)
        return venv


def _remove_dead_sessions(root: Path) -> None:
    """Session directories whose pytest no longer holds their lock (it was killed) go."""
    for d in root.glob("session-*"):
        try:
            with open(d / ".lock") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(d, ignore_errors=True)
        except FileNotFoundError:   # killed between mkdtemp and its lock file
            shutil.rmtree(d, ignore_errors=True)
        except BlockingIOError:
            pass


def _copy_source(dest: Path) -> Path:
    """This checkout's installable files, in a directory every user may read (the checkout may not be)."""
    src = dest / "src"
    src.mkdir(mode=0o755)
    for name in SOURCE_FILES:
        shutil.copy2(REPO / name, src / name)
    for name in SOURCE_DIRS:
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _make_public(src)
    return src


@pytest.fixture(scope="session")
def site_install() -> Iterator[SiteInstall]:
    """A site install of this checkout: a venv of the system Python under /opt/statgrid-test, statgrid
    installed non-editable, every file root's and readable by all."""
    global _current_site
    version = _system_python_version()
    deps = _deps_venv(version)
    root = _site_root()
    with open(root / ".build.lock", "a") as build_lock:   # no other run's cleaner between mkdtemp and flock
        fcntl.flock(build_lock, fcntl.LOCK_EX)
        _remove_dead_sessions(root)
        session = Path(tempfile.mkdtemp(prefix="session-", dir=root))
        os.chmod(session, 0o755)
        lock = open(session / ".lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        venv = session / "venv"
        made = _run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], timeout=120)
        assert made.returncode == 0, _tail(made)
        python = venv / "bin" / "python"
        site_packages = _site_packages(python)
        # The dependencies' venv behind this one: addsitedir, so their own .pth files are read too.
        (site_packages / "statgrid-test-deps.pth").write_text(
            f"import site; site.addsitedir({str(_site_packages(deps / 'bin' / 'python'))!r})\n")
        src = _copy_source(session)
        install = _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-index", "--no-deps",
                        "--no-build-isolation", "--force-reinstall", str(src)], timeout=600, cwd=session)
        shutil.rmtree(src)
        assert install.returncode == 0, f"installing this checkout's statgrid failed:\n{_tail(install, 30)}"
        _make_public(session)
        bin_dir = venv / "bin"
        _current_site = SiteInstall(root=venv, python=python, statgrid=bin_dir / "statgrid", bin_dir=bin_dir,
                                    site_packages=site_packages, deps=deps)
        assert _current_site.statgrid.is_file(), f"no statgrid script in {bin_dir}"
        yield _current_site
    finally:
        _current_site = None
        shutil.rmtree(session, ignore_errors=True)
        lock.close()


# --- users ------------------------------------------------------------------------------------------------

ROLES = ("alice", "bob", "carol", "dave", "erin", "frank")


def _user_pids(name: str) -> list[int]:
    out = subprocess.run(["pgrep", "-u", name], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def known(lookup, name: str) -> bool:
    """Whether the system knows `name`: lookup is pwd.getpwnam (a user) or grp.getgrnam (a group)."""
    try:
        lookup(name)
        return True
    except KeyError:
        return False


def create_user(role: str) -> User:
    """A real OS user `sg<role><4 hex>` with a group of its own and a home, marked with this pytest's pid."""
    if not re.fullmatch(r"[a-z]{1,20}", role):
        raise ValueError(f"role {role!r}: 1 to 20 lowercase letters")
    name = f"sg{role}{secrets.token_hex(2)}"
    done = subprocess.run(["useradd", "-m", "-U", "-s", "/bin/sh", "-c", f"{USER_COMMENT} {os.getpid()}", name],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"useradd {name}: {done.stderr.strip()}"
    pw = pwd.getpwnam(name)
    return User(name=name, uid=pw.pw_uid, gid=pw.pw_gid, home=Path(pw.pw_dir))


def remove_user(name: str, timeout_s: float = 120.0) -> None:
    """Kill everything the user still runs, wait until it is gone, remove the user, its group and home."""
    deadline = time.monotonic() + timeout_s
    while True:
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        alive = _user_pids(name)
        if not alive:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"processes of {name} survive SIGKILL: {alive}")
        time.sleep(0.05)
    done = subprocess.run(["userdel", "-r", name], capture_output=True, text=True, timeout=60)
    # 12: the home could not be removed entirely (e.g. no mail spool); the user is gone all the same
    assert done.returncode in (0, 12), f"userdel -r {name}: {done.stderr.strip()}"


def _remove_stale_users() -> None:
    """Users that a killed test session left (its pytest process is gone)."""
    for pw in pwd.getpwall():
        m = re.fullmatch(rf"{USER_COMMENT} (\d+)", pw.pw_gecos)
        if m and re.fullmatch(r"sg[a-z]+[0-9a-f]{4}", pw.pw_name):
            try:
                os.kill(int(m.group(1)), 0)
            except ProcessLookupError:
                remove_user(pw.pw_name)


def skip_unless_users_can_be_made() -> None:
    if os.geteuid() != 0:
        pytest.skip("creating OS users needs root")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("no useradd/userdel on this machine")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv (util-linux) to run commands as another user")


@pytest.fixture
def make_users():
    """make_users(2) → [alice, bob]; make_users(roles=["ann"]). Removed at the test's end."""
    skip_unless_users_can_be_made()
    _remove_stale_users()
    made: list[User] = []

    def make(n: int | None = None, roles: Sequence[str] | None = None) -> list[User]:
        roles = list(roles) if roles is not None else list(ROLES[:n if n is not None else 1])
        if n is not None and len(roles) != n:
            raise ValueError(f"{n} users but roles {roles}")
        new = []
        for role in roles:
            new.append(create_user(role))
            made.append(new[-1])
        return new

    yield make
    errors = []
    for user in reversed(made):
        try:
            remove_user(user.name)
        except AssertionError as exc:
            errors.append(str(exc))
    assert not errors, errors


@pytest.fixture
def users(make_users) -> list[User]:
    """Two users, alice and bob."""
    return make_users(2)


# --- commands as a user -----------------------------------------------------------------------------------

def user_env(user: User, site: SiteInstall | None = None, env: dict | None = None) -> dict:
    """A login-like environment of the user's own: nothing of root's (pytest's) environment."""
    site = site or _current_site
    path = "/usr/local/bin:/usr/bin:/bin"
    out = {"HOME": str(user.home), "USER": user.name, "LOGNAME": user.name, "LANG": "C.UTF-8",
           "PATH": f"{site.bin_dir}:{path}" if site else path}
    out.update(env or {})
    return out


def run_as(user: User, argv: Sequence[str], env: dict | None = None, cwd: str | Path | None = None,
           timeout: float = 120, site: SiteInstall | None = None, input: str | None = None
           ) -> subprocess.CompletedProcess:
    """Run argv as the user (real and effective uid and gid, the user's groups only) with a clean
    environment (user_env: the site venv's bin first on PATH), in cwd (default: the user's home).
    The directory is entered as the user, not as root: one the user may not enter fails the command
    (exit 125, the shell's message on stderr). Output is captured: a process left running in the
    background that keeps stdout or stderr open makes this wait until `timeout`."""
    cwd = str(cwd if cwd is not None else user.home)
    wrapped = ["setpriv", f"--reuid={user.uid}", f"--regid={user.gid}", "--init-groups", "--",
               "/bin/sh", "-c", 'cd -- "$1" || exit 125; shift; exec "$@"', "sh", cwd, *map(str, argv)]
    return subprocess.run(wrapped, env=user_env(user, site, env), cwd="/", capture_output=True, text=True,
                          timeout=timeout, input=input, stdin=None if input is not None else subprocess.DEVNULL)


def write_as(user: User, path: Path, text: str, mode: int = 0o644) -> Path:
    """A file written by root and handed to the user (owner and group), as if the user had written it."""
    path.write_text(text)
    os.chown(path, user.uid, user.gid)
    os.chmod(path, mode)
    return path


def mkdir_as(user: User, path: Path, mode: int = 0o700) -> Path:
    path.mkdir(mode=mode, parents=False, exist_ok=False)
    os.chown(path, user.uid, user.gid)
    os.chmod(path, mode)
    return path

