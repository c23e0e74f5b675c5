"""Numbers from the user's source as messages show them.

A literal may have thousands of digits (Python accepts up to 4,300 in a decimal literal), and values derived from
it more; `str()` of an int past 4,300 digits raises (CPython's int-str conversion limit), which lost the finding
whose message printed it. Messages and finding data go through these helpers instead of `str()` / `{n}`.
"""

from __future__ import annotations

import math
from typing import Any

SHOWN_DIGITS = 24  # longer integers are shown in scientific notation
JSON_BITS = 63  # larger integers go into finding data as text


def number_text(n: Any) -> str:
    """`n` as a message shows it: exact up to SHOWN_DIGITS digits, else like `9.99e+4299 (4,300 digits)`."""
    if not isinstance(n, int) or isinstance(n, bool) or n.bit_length() <= SHOWN_DIGITS * 3:
        return str(n)
    magnitude = abs(n)
    exponent = int(math.log10(magnitude))  # math.log10 takes ints of any size; corrected below for rounding
    if 10**exponent > magnitude:
        exponent -= 1
    elif 10 ** (exponent + 1) <= magnitude:
        exponent += 1
    if exponent < SHOWN_DIGITS:
        return str(n)
    hundredths = magnitude * 100 // 10**exponent  # the mantissa, truncated: 9.99, never a rounded-up 10.00
    sign = "-" if n < 0 else ""
    return f"{sign}{hundredths // 100}.{hundredths % 100:02d}e+{exponent} ({exponent + 1:,} digits)"


def data_number(n: Any) -> Any:
    """`n` for a finding's JSON data: itself while 64-bit, else its `number_text` (JSON readers choke on more)."""
    if isinstance(n, int) and not isinstance(n, bool) and n.bit_length() > JSON_BITS:
        return number_text(n)
    return n
