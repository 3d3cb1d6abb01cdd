"""The sensitive-number detectors live in the kernel (`memoryhub.sensitive`), which masks them at
intake; profiles uses them to refuse such values as facts. Re-exported for existing imports."""

from memoryhub.sensitive import (  # noqa: F401
    CARD,
    CN_RESIDENT_ID,
    IBAN,
    KINDS,
    RU_INN,
    RU_PASSPORT,
    RU_SNILS,
    UK_NINO,
    US_SSN,
    Finding,
    cn_resident_id_valid,
    find_masked,
    find_sensitive,
    iban_valid,
    luhn_valid,
    ru_passport_series_plausible,
    snils_valid,
)
