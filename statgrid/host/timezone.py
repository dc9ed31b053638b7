"""This machine's time zone, by its IANA name (what a calendar's times are read in: `statgrid
schedule add` without --tz)."""
from __future__ import annotations

import os
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statgrid.errors import UsageError


def local_zone() -> str:
    """This machine's IANA time zone name: $TZ, else /etc/localtime's link; UTC where the machine has
    none (no /etc/localtime: the C library's UTC too). Raises UsageError where it cannot be named."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            ZoneInfo(tz)
            return tz
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"$TZ={tz!r} is not an IANA time zone name; give the calendar's zone with --tz, e.g. "
                             "--tz Europe/Berlin.") from None
    if not os.path.lexists("/etc/localtime"):
        return "UTC"
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        target = ""
    if "zoneinfo/" not in target:
        raise UsageError("this machine's time zone has no name statgrid can read (/etc/localtime is not a link into "
                         "zoneinfo); give the calendar's zone with --tz, e.g. --tz UTC.")
    return target.split("zoneinfo/", 1)[1]
