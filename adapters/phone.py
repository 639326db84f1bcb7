"""Phone numbers to E.164 with the ``phonenumbers`` library (Google's libphonenumber)."""

from __future__ import annotations

import phonenumbers


class PhonenumbersNormalizer:
    """``PhoneNormalizer`` for numbers typed in ``default_region`` unless they start with +."""

    def __init__(self, default_region: str = "US") -> None:
        self.default_region = default_region

    def e164(self, raw: str) -> str | None:
        """The E.164 form of ``raw``, or None when it is not a valid number."""
        if len(raw) > 40:
            return None
        try:
            number = phonenumbers.parse(raw, self.default_region)
        except phonenumbers.NumberParseException:
            return None
        if not phonenumbers.is_valid_number(number):
            return None
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def shown(e164: str, home_region: str = "US") -> str:
    """A stored number as a person reads it: ``(212) 555-0101`` for one of
    ``home_region``, ``+44 20 7946 0958`` for another country's; as stored when it is not a valid
    number (one kept from before numbers were checked)."""
    try:
        number = phonenumbers.parse(e164, home_region)
    except phonenumbers.NumberParseException:
        return e164
    if not phonenumbers.is_valid_number(number):  # kept as typed: no country made up
        return e164
    home = phonenumbers.region_code_for_number(number) == home_region
    style = (
        phonenumbers.PhoneNumberFormat.NATIONAL
        if home
        else phonenumbers.PhoneNumberFormat.INTERNATIONAL
    )
    return phonenumbers.format_number(number, style)
