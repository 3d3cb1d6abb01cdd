"""The shipped `config/knowledge.yaml` with one setting written wrong: what a range check is tested against."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub.search import config as search_config


def assert_rejected(settings, tmp_path, written: str, wrong: str, named: str, domain: str = "dialog") -> None:
    """Loading the shipped file with `written` replaced by `wrong` is a configuration error naming `named`."""
    shipped = (settings.BASE_DIR / "config" / "knowledge.yaml").read_text()
    assert written in shipped
    path = tmp_path / "knowledge.yaml"
    path.write_text(shipped.replace(written, wrong))
    settings.KNOWLEDGE_CONFIG = path
    search_config._load.cache_clear()
    try:
        with pytest.raises(ImproperlyConfigured, match=named):
            search_config.retrieval_config(domain)
    finally:
        search_config._load.cache_clear()
