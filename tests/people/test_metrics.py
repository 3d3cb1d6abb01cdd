"""memoryhub_people_total is counted at scrape time, not kept in a gauge by the write paths."""

from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from people import services


def people_total(tenant_id: int) -> dict[str, float]:
    response = Client().get("/metrics")
    assert response.status_code == 200
    return {s.labels["circle"]: s.value for family in text_string_to_metric_families(response.content.decode())
            for s in family.samples
            if s.name == "memoryhub_people_total" and s.labels["tenant"] == str(tenant_id)}


@pytest.mark.django_db
def test_people_per_circle_are_counted_at_scrape_time(make_person, tenant) -> None:
    anna = make_person("Anna Petrova", circle="Family")
    anya = make_person("Anya", circle="Family")
    make_person("Boris", circle="Work_Inner")
    counts = people_total(tenant.pk)
    assert counts["Family"] == 2 and counts["Work_Inner"] == 1 and counts["Other"] == 0

    services.person_merge(source=anya, target=anna, reviewer=None)  # the tombstone no longer counts
    assert people_total(tenant.pk)["Family"] == 1
