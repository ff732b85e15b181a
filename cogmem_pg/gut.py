"""The Gut's release: clusters of de-identified contributions across tenants, published under k and epsilon.

Runs inside the database (``cogmem._gut_draw``, PL/Python) and in ``bench/gut.py``. The unit of privacy
is a tenant. What is differentially private, given the clustering: which clusters are published (OpenDP's
Laplace threshold over distinct-tenant counts, each tenant supporting at most ``max_patterns_per_tenant``
clusters) and the support and success released with them (OpenDP's Laplace mechanism). The text is
k-anonymous and de-identified, not differentially private: it keeps only words that at least k of the
cluster's tenants use. docs/gut.md says what that does and does not guarantee.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MATCH_PREVIOUS = 0.9  # a cluster this close to a published pattern continues it (same id, new figures)
_TOKEN = re.compile(r"<[a-z]+>|[^\W\d_]+(?:['’-][^\W\d_]+)*|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Contribution:
    tenant: str
    memory_id: int
    content: str
    topics: tuple[str, ...]
    success: float
    embedding: Sequence[float]
    ring: str = "long_term"


# Which of its contributions a tenant backs first: lessons (what to do, what went wrong) before facts
# about its own world, which are rarely anyone else's.
RING_PRIORITY = {"shocks": 0, "dos_and_donts": 0, "procedures": 0, "habits": 1, "long_term": 2}


@dataclass(frozen=True)
class Params:
    k: int
    epsilon: float | None  # None: no noise (the benchmark's reference only; SQL always passes one)
    delta: float
    max_patterns_per_tenant: int
    selection_share: float
    cluster_similarity: float


@dataclass
class Pattern:
    content: str
    embedding: list[float]
    topics: list[str]
    support: int
    success: float | None
    pattern_id: int | None = None
    tenants: frozenset[str] = field(default_factory=frozenset)  # for the benchmark's checks; never stored


def _order_key(c: Contribution) -> str:
    return hashlib.sha256(f"{c.tenant}\x00{c.memory_id}".encode()).hexdigest()


def cluster(vectors: Any, similarity: float) -> list[int]:
    """Star clustering: the item with most neighbours within ``similarity`` leads, and takes them all."""
    import numpy as np

    n = len(vectors)
    neighbours: list[Any] = []
    for start in range(0, n, 1024):
        block = vectors[start : start + 1024] @ vectors.T
        neighbours.extend(np.nonzero(row >= similarity)[0] for row in block)
    labels = [-1] * n
    for leader in sorted(range(n), key=lambda i: (-len(neighbours[i]), i)):
        if labels[leader] == -1:
            for member in neighbours[leader]:
                if labels[member] == -1:
                    labels[member] = leader
    return labels


def bound(items: Sequence[Contribution], labels: Sequence[int], limit: int) -> dict[int, dict[str, list[int]]]:
    """Per cluster, per tenant, the items it supports with: at most ``limit`` clusters per tenant.

    A tenant's choice depends on its own data only (its lessons first, then its success in the cluster,
    then a hash of its item), so adding or removing one tenant changes at most ``limit`` counts, each by
    one, given the clustering.
    """
    per_tenant: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (item, label) in enumerate(zip(items, labels, strict=True)):
        per_tenant[item.tenant][label].append(i)
    kept: dict[int, dict[str, list[int]]] = defaultdict(dict)
    for tenant, clusters in per_tenant.items():
        ranked = sorted(
            clusters.items(),
            key=lambda kv: (
                min(RING_PRIORITY.get(items[i].ring, 2) for i in kv[1]),
                -max(items[i].success for i in kv[1]),
                min(_order_key(items[i]) for i in kv[1]),
            ),
        )
        for label, members in ranked[:limit]:
            kept[label][tenant] = members
    return kept


def words_of(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text) if t[0].isalpha()}


_SENTENCE = frozenset(",.;:!?")


def _runs(text: str, kept: set[str] | None = None) -> list[list[tuple[str, str]]]:
    """A text's words and placeholders as (token, lower case), in runs between punctuation; with KEPT,
    only the words in it (placeholders always), so that a word few tenants use does not part two others."""
    runs: list[list[tuple[str, str]]] = [[]]
    for token in _TOKEN.findall(text):
        if token[0].isalpha() or token[0] == "<":
            if kept is None or token[0] == "<" or token.lower() in kept:
                runs[-1].append((token, token.lower()))
        else:
            runs[-1].append((token, ""))  # the punctuation that ends the run
            runs.append([])
    return runs


def _chain(run: list[tuple[str, str]], pairs: set[tuple[str, str]]) -> list[int]:
    """The positions of the longest subsequence of a run's words in which every two neighbours are a
    shared pair (the earliest of equals); nothing when no pair is."""
    length: list[int] = []
    back: list[int | None] = []
    for i, (_, word) in enumerate(run):
        before = [j for j in range(i) if (run[j][1], word) in pairs]
        j = max(before, key=lambda n: length[n]) if before else None
        length.append(1 if j is None else length[j] + 1)
        back.append(j)
    if not length or max(length) < 2:
        return []
    chain: list[int] = []
    at: int | None = length.index(max(length))
    while at is not None:
        chain.append(at)
        at = back[at]
    return chain[::-1]


def _chains(run: list[tuple[str, str]], pairs: set[tuple[str, str]]) -> list[list[str]]:
    """The longest chain of a run, then the longest of what stands before it and after it, in order."""
    chain = _chain(run, pairs)
    if not chain:
        return []
    middle = [run[i][0] for i in chain]
    return [*_chains(run[: chain[0]], pairs), middle, *_chains(run[chain[-1] + 1 :], pairs)]


def shared_text(representative: str, texts_by_tenant: dict[str, list[str]], k: int) -> str:
    """The representative's text with only what at least k of the tenants wrote: words (and
    placeholders) they use, and of those only chains in which every two neighbouring words are
    neighbours (among the words k tenants use) in texts of at least k tenants; " … " parts two chains.
    No sequence one tenant wrote survives on the strength of its words alone (ten dot seven dot one dot
    zero)."""
    users: dict[str, int] = defaultdict(int)
    for texts in texts_by_tenant.values():
        for word in set().union(*(words_of(t) for t in texts)):
            users[word] += 1
    kept = {w for w, n in users.items() if n >= k}
    pair_users: dict[tuple[str, str], int] = defaultdict(int)
    for texts in texts_by_tenant.values():
        pairs = {
            (a[1], b[1]) for t in texts for run in _runs(t, kept) for a, b in itertools.pairwise(run) if a[1] and b[1]
        }
        for pair in pairs:
            pair_users[pair] += 1
    shared = {p for p, n in pair_users.items() if n >= k}
    out: list[str] = []
    for run in _runs(representative, kept):
        words = [(token, lower) for token, lower in run if lower]
        chains = _chains(words, shared)
        out += " … ".join(" ".join(chain) for chain in chains).split(" ") if chains else []
        if chains and not run[-1][1] and run[-1][0] in _SENTENCE:
            out.append(run[-1][0])
    text = " ".join(out)
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)
    text = re.sub(r"([(])\s+", r"\1", text)
    text = re.sub(r"^[\s,.;:!?)-]+|(?<=[,;:])\s*(?=[,;:.])|[\s,;:]+$", "", text)
    return re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text).strip()


def _opendp() -> Any:
    """OpenDP's constructors, without opendp.prelude (which also imports its scikit-learn extras)."""
    import types

    import opendp.domains
    import opendp.measurements
    import opendp.metrics
    import opendp.mod

    opendp.mod.enable_features("contrib")
    return types.SimpleNamespace(
        m=opendp.measurements,
        **{n: getattr(opendp.domains, n) for n in ("map_domain", "atom_domain", "vector_domain")},
        **{n: getattr(opendp.metrics, n) for n in ("l01inf_distance", "absolute_distance", "l1_distance")},
    )


class OutOfRange(ValueError):
    """The release's parameters put the threshold beyond what OpenDP counts (a 32-bit integer)."""


def _threshold_measurement(epsilon: float, delta: float, limit: int, k: int) -> tuple[Any, int, float, float]:
    try:
        return _threshold_search(epsilon, delta, limit, k)
    except ValueError as error:
        if "representable" not in str(error):
            raise
        raise OutOfRange(
            f"a release of epsilon {epsilon:g} for selection with delta {delta:g} and {limit} patterns per tenant "
            "needs a threshold beyond what OpenDP counts"
        ) from error


@functools.lru_cache(maxsize=32)
def _threshold_search(epsilon: float, delta: float, limit: int, k: int) -> tuple[Any, int, float, float]:
    """OpenDP's Laplace threshold for distinct-tenant counts (L0 = limit, Linf = 1), with the smallest
    threshold (at least k) whose privacy loss stays within (epsilon, delta)."""
    dp = _opendp()
    domain = dp.map_domain(dp.atom_domain(T=int), dp.atom_domain(T=int))
    metric = dp.l01inf_distance(dp.absolute_distance(T=int))
    d_in = (limit, limit, 1)
    scale = limit / epsilon
    low, high = k, k + 16
    while True:
        spent = dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=high).map(d_in)
        if spent[0] > epsilon:  # the discretisation costs a little: widen the noise until it fits
            scale *= 1.01
            continue
        if spent[1] <= delta:
            break
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        if dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=middle).map(d_in)[1] <= delta:
            high = middle
        else:
            low = middle + 1
    measurement = dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=high)
    eps, dlt = measurement.map(d_in)
    return measurement, high, float(eps), float(dlt)


def _laplace_vector(values: list[float], sensitivity: float, epsilon: float) -> tuple[list[float], float]:
    dp = _opendp()
    measurement = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=sensitivity / epsilon
    )
    spent = float(measurement.map(float(sensitivity)))
    return (list(measurement(values)) if values else []), spent


def _feedback_values(
    feedback: Sequence[tuple[str, int, float, int]], room: dict[str, int]
) -> dict[int, dict[str, float]]:
    """Per earlier pattern, per tenant, its mean outcome, in the room its contributions left the tenant."""
    per_tenant: dict[str, list[tuple[int, float, int]]] = defaultdict(list)
    for tenant, pattern_id, outcome, recalls in feedback:
        per_tenant[tenant].append((pattern_id, outcome, recalls))
    values: dict[int, dict[str, float]] = defaultdict(dict)
    for tenant, rows in per_tenant.items():
        for pattern_id, outcome, _ in sorted(rows, key=lambda r: (-r[2], r[0]))[: room.get(tenant, 0)]:
            values[pattern_id][tenant] = min(1.0, max(0.0, outcome))
    return values


def _match(vectors: Any, previous: Sequence[tuple[int, Sequence[float]]]) -> list[int | None]:
    """Each published cluster continues the nearest earlier pattern within MATCH_PREVIOUS, one to one."""
    import numpy as np

    matched: list[int | None] = [None] * len(vectors)
    if not previous or not len(vectors):
        return matched
    old = np.array([p[1] for p in previous], dtype=np.float32)
    old /= np.maximum(np.linalg.norm(old, axis=1, keepdims=True), 1e-12)
    sims = np.asarray(vectors) @ old.T
    taken: set[int] = set()
    for flat in np.argsort(-sims, axis=None):
        i, j = divmod(int(flat), len(previous))
        if sims[i, j] < MATCH_PREVIOUS:
            break
        if matched[i] is None and j not in taken:
            matched[i] = previous[j][0]
            taken.add(j)
    return matched


@dataclass
class Prepared:
    """Contributions in their canonical order, their unit vectors, and per cluster the items each
    supporting tenant backs it with (bounded)."""

    items: list[Contribution]
    vectors: Any
    supported: dict[int, dict[str, list[int]]]

    def centroid(self, label: int) -> Any:
        """The unit mean of the vectors that back a cluster."""
        import numpy as np

        v = self.vectors[[i for ms in self.supported[label].values() for i in ms]].mean(axis=0)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def counts(self, k: int) -> dict[int, int]:
        """Distinct supporting tenants per cluster, for the clusters with at least k (k-anonymity first:
        no pattern ever has fewer than k tenants behind it)."""
        return {label: len(tenants) for label, tenants in self.supported.items() if len(tenants) >= k}


def prepare(contributions: Sequence[Contribution], params: Params) -> Prepared:
    import numpy as np

    items = sorted(contributions, key=_order_key)
    vectors = np.array([c.embedding for c in items], dtype=np.float32).reshape(len(items), -1 if items else 0)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    labels = cluster(vectors, params.cluster_similarity) if items else []
    return Prepared(items, vectors, bound(items, labels, params.max_patterns_per_tenant))


def select(counts: dict[int, int], params: Params) -> tuple[dict[int, int], float, float, int]:
    """The clusters the Laplace threshold publishes, with their noisy counts, and (epsilon, delta,
    threshold) of the draw. Without epsilon (the benchmark's reference), every cluster of k or more."""
    if params.epsilon is None:
        return counts, 0.0, 0.0, params.k
    measurement, threshold, eps, dlt = _threshold_measurement(
        params.epsilon * params.selection_share, params.delta, params.max_patterns_per_tenant, params.k
    )
    return (dict(measurement(counts)) if counts else {}), eps, dlt, threshold


def _success_values(
    prepared: Prepared,
    labels: list[int],
    continues: list[int | None],
    feedback: Sequence[tuple[str, int, float, int]],
    limit: int,
) -> tuple[list[float], list[float]]:
    """Per published cluster, the sum and number of its tenants' success values: a supporter's mean
    success there, or a receiver's feedback on the pattern it continues. Each tenant gives at most
    ``limit`` values in all, its contributions first."""
    import numpy as np

    used: dict[str, int] = defaultdict(int)
    for tenants in prepared.supported.values():
        for tenant in tenants:
            used[tenant] += 1
    earlier = _feedback_values(feedback, {t: limit - used[t] for t, *_ in feedback})
    sums, ns = [], []
    for label, pattern_id in zip(labels, continues, strict=True):
        values = {
            t: float(np.mean([prepared.items[i].success for i in ms])) for t, ms in prepared.supported[label].items()
        }
        for tenant, outcome in earlier.get(pattern_id, {}).items() if pattern_id is not None else ():
            values.setdefault(tenant, outcome)
        sums.append(sum(values.values()))
        ns.append(float(len(values)))
    return sums, ns


def _pattern(prepared: Prepared, label: int, centroid: Any, k: int) -> Pattern | None:
    """A cluster's text (its member nearest the centroid, with only the words k of its tenants use) and
    topics (those k of them hold); None when too little survives the filter to say anything."""
    tenants = prepared.supported[label]
    members = [i for ms in tenants.values() for i in ms]
    representative = max(members, key=lambda i: float(prepared.vectors[i] @ centroid))
    texts = {t: [prepared.items[i].content for i in ms] for t, ms in tenants.items()}
    content = shared_text(prepared.items[representative].content, texts, k)
    if len(words_of(content)) < 3:
        return None
    topic_users: dict[str, int] = defaultdict(int)
    for ms in tenants.values():
        for topic in set().union(*(prepared.items[i].topics for i in ms)):
            topic_users[topic] += 1
    return Pattern(
        content=content,
        embedding=[round(float(x), 6) for x in centroid],
        topics=sorted(t for t, u in topic_users.items() if u >= k),
        support=0,
        success=None,
        tenants=frozenset(tenants),
    )


def release(
    contributions: Sequence[Contribution],
    params: Params,
    previous: Sequence[tuple[int, Sequence[float]]] = (),
    feedback: Sequence[tuple[str, int, float, int]] = (),
) -> dict[str, Any]:
    """The patterns to publish, with noisy support and success, and the privacy this release spends."""
    import numpy as np

    prepared = prepare(contributions, params)
    selected, eps, dlt, threshold = select(prepared.counts(params.k), params)
    labels = sorted(selected)
    centroids = [prepared.centroid(label) for label in labels]
    continues = _match(np.array(centroids), previous)
    sums, ns = _success_values(prepared, labels, continues, feedback, params.max_patterns_per_tenant)
    stats_epsilon = 0.0 if params.epsilon is None else params.epsilon * (1 - params.selection_share)
    if stats_epsilon and labels:
        # A tenant changes at most max_patterns_per_tenant sums and counts, each by at most one.
        sums, spent_s = _laplace_vector(sums, params.max_patterns_per_tenant, stats_epsilon / 2)
        ns, spent_n = _laplace_vector(ns, params.max_patterns_per_tenant, stats_epsilon / 2)
        eps += spent_s + spent_n
    else:
        eps += stats_epsilon  # nothing to release: the share is charged all the same
    patterns = []
    for n, label in enumerate(labels):
        pattern = _pattern(prepared, label, centroids[n], params.k)
        if pattern is not None:  # post-processing: dropping a selected cluster costs no privacy
            pattern.support = int(selected[label])
            pattern.success = min(1.0, max(0.0, sums[n] / ns[n])) if ns[n] >= 1 else None
            pattern.pattern_id = continues[n]
            patterns.append(pattern)
    return {"patterns": patterns, "epsilon": eps, "delta": dlt, "threshold": threshold}
