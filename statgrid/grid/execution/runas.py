"""Whose job a node launcher runs (issue 15), and the switch to that user in the job's process.

A job runs as the person who submitted it (the request's protocol.Identity). A launcher run as
root looks the user up BY NAME on this machine and refuses the job if the account is unknown here
or its uid/gid differ from the master's (run_as); otherwise the job's directory is given to the
user before the fork (give_job_dir) and the child switches to the user for good (become). A
launcher run as an ordinary user runs only jobs whose uid is its own. It never runs one user's job
as another. launcher.py says how the rest of the child's set-up goes.

Standard library only: the launcher (`python -I -S`) loads this file by its path (launcher.py).
"""
from __future__ import annotations

import os
import pwd
import socket


class LaunchError(Exception):
    """A job the launcher will not run, or whose set-up failed: its text is the job's exit reason
    (LaunchFailed.error) as it stands, naming the bad value and the fix."""


class RunAs:
    """The account a job runs as: its ids from this machine's user database, and the environment
    variables that name it."""
    __slots__ = ("name", "uid", "gid", "groups", "home")

    def __init__(self, name: str, uid: int, gid: int, groups: tuple[int, ...], home: str):
        self.name, self.uid, self.gid, self.groups, self.home = name, uid, gid, groups, home


def account_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _where(host: str) -> str:
    """'host node1', with the machine's own name if the grid calls it otherwise."""
    machine = socket.gethostname()
    return f"host {host}" if machine == host else f"host {host} (machine {machine})"


def run_as(identity, host: str, as_root: bool, own_uid: int) -> RunAs | None:
    """The account the job of `identity` (a protocol.Identity) runs as on this machine; None: as
    this server's own user, unchanged. Raises LaunchError if this server must not run it."""
    if not as_root:
        if identity.uid is None or identity.uid != own_uid:
            me = account_name(own_uid)
            whose = f"{identity.user!r} (uid {identity.uid})" if identity.uid is not None else \
                f"{identity.user!r}, whom the master does not know (no uid)"
            raise LaunchError(f"this node runs as {me!r} (uid {own_uid}), not root, so it runs only {me}'s jobs, "
                              f"and this is a job of {whose}; submit it as {me!r}, or run the grid's nodes as root "
                              "to run each user's jobs as that user")
        return None
    where = _where(host)
    try:
        entry = pwd.getpwnam(identity.user)
    except KeyError:
        raise LaunchError(f"user {identity.user!r} is unknown on {where}: no such account in this machine's user "
                          "database; the account must exist, with the same uid and gid, on the master and on every "
                          "host (a directory service such as LDAP, or the same /etc/passwd entry)") from None
    if identity.uid is None or (entry.pw_uid, entry.pw_gid) != (identity.uid, identity.gid):
        on_master = "unknown on the master (it has no uid for them)" if identity.uid is None else \
            f"uid {identity.uid} gid {identity.gid} on the master"
        raise LaunchError(f"user {identity.user!r} is {on_master} but uid {entry.pw_uid} gid {entry.pw_gid} on "
                          f"{where}: the user databases disagree; give the account the same uid and gid on the "
                          "master and on every host")
    try:
        groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
    except OSError as exc:
        raise LaunchError(f"cannot list the groups of user {identity.user!r} on {where} ({exc}); check this "
                          "machine's group database") from None
    return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid, tuple(dict.fromkeys([entry.pw_gid, *groups])),
                 entry.pw_dir)


def give_job_dir(path: str, user: RunAs, host: str) -> None:
    """Make the job's directory the user's (0700), so the files the job writes there are its
    user's alone. Opened without following a link: a link planted there is refused, not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchown(fd, user.uid, user.gid)
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    except OSError as exc:
        raise LaunchError(f"cannot give the job directory {path!r} to user {user.name!r} on {_where(host)}: "
                          f"{exc.strerror}; it must be a directory (not a symbolic link) that root may chown here "
                          "(a grid home on NFS needs no_root_squash for a node run as root)") from None


def become(user: RunAs) -> None:
    """Switch this (child) process to the user for good: groups, gid, then uid (setuid as root
    sets the real, effective and saved ids: none is left to regain root with)."""
    try:
        os.setgroups(list(user.groups))
        os.setgid(user.gid)
        os.setuid(user.uid)
    except OSError as exc:
        raise LaunchError(f"cannot switch to user {user.name!r} (uid {user.uid}, gid {user.gid}): {exc}; the node "
                          "must run as root to run jobs as their users") from None
    if os.getresuid() != (user.uid,) * 3 or os.getresgid() != (user.gid,) * 3:
        raise LaunchError(f"switching to user {user.name!r} left ids {os.getresuid()}/{os.getresgid()}, not "
                          f"{user.uid}/{user.gid}: the job was not run")
    if user.uid != 0:
        try:
            os.setuid(0)
        except PermissionError:
            return
        raise LaunchError(f"after switching to user {user.name!r} the process could become root again: the job "
                          "was not run")
