"""Prometheus metrics of the profiles app."""

from prometheus_client import Counter

FACT_WRITES = Counter(
    "memoryhub_profile_fact_writes_total", "Fact writes by source and outcome", ["source", "outcome"]
)
SENSITIVE_REFUSED = Counter(
    "memoryhub_profile_sensitive_refused_total",
    "Values refused because they hold a sensitive number, by kind and by source (api, llm, rules, admin)",
    ["kind", "source"],
)
EXTRACTIONS = Counter(
    "memoryhub_profile_extractions_total",
    "Fact extraction runs by extractor (llm, rules) and outcome (ok, malformed, error)",
    ["extractor", "outcome"],
)
CANDIDATES = Counter(
    "memoryhub_profile_extracted_candidates_total",
    "Extracted candidate facts by extractor and fate (saved, pending, sensitive, invalid, not_user, ignored)",
    ["extractor", "fate"],
)
REVIEWS = Counter("memoryhub_profile_reviews_total", "Review decisions in the admin", ["decision"])
DECAYED = Counter("memoryhub_profile_facts_decayed_total", "Facts whose confidence the decay beat lowered")
