"""Text for the grid.toml files statgrid writes itself (TOML basic strings)."""
from __future__ import annotations

from statgrid.errors import ConfigError

_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str, what: str = "value") -> str:
    """`text` as a TOML basic string, for the grid.toml files statgrid writes and reads back.
    TOML 1.0 ("String"): escape the quote, the backslash and the control characters U+0000–U+001F
    and U+007F; everything else stands as itself (JSON's escapes are not TOML's: JSON writes a
    character beyond U+FFFF as a surrogate pair, which TOML refuses). A TOML file is UTF-8, so a
    text with no UTF-8 form (a path holding a byte that is not UTF-8) cannot be written: ConfigError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"{what} {text!r} is not valid UTF-8 (it holds a byte that is not), so no TOML file can "
                          "hold it; use a path of UTF-8 characters.") from None
    return '"' + "".join(_TOML_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or c == "\x7f" else c)
                         for c in text) + '"'
