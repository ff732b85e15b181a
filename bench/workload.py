"""A realistic multi-tenant operations workload, deterministic by seed.

Each tenant is an operations team with its own world: hosts, domains, customers, people, services, and a
language (one in five teams writes Turkish). What they tell their agent is a mix of the kinds a real
team produces: explicit rules, incidents, procedures, facts about servers, DNS, billing, backups,
deployments, meetings and security, facts that change over time (a host's new IP, a customer's new
contact; the old version stays behind as a stale fact), and distractors (small talk, notes about
nothing in particular). Tenant sizes are skewed like real customers (log-normal), so a few tenants are
several times the average.

`memories(total, tenants=1000, seed=1)` yields `Memory` rows in tenant order; the same arguments give
the same rows on every machine. Scale runs pair them with random unit vectors (`unit_vectors`), since
embedding a million texts would dominate the run; quality runs embed the text for real.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Memory:
    tenant: str
    content: str
    ring: str  # where the team's own tooling would file it; also what the router should find
    topics: tuple[str, ...]
    kind: str  # rule, incident, procedure, fact, stale, distractor


_HOST_KINDS = ("web", "db", "cache", "lb", "mq", "worker", "vpn", "smtp", "api", "backup")
_SERVICES = ("nginx", "PostgreSQL", "Redis", "RabbitMQ", "Elasticsearch", "HAProxy", "Postfix", "WireGuard")
_PEOPLE = ("Ali", "Ayşe", "Can", "Deniz", "Elif", "Maria", "Omar", "Selin", "Tom", "Zeynep", "Burak", "Priya")
_CUSTOMERS = ("Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Soylent", "Cyberdyne", "Tyrell")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")

# (kind, ring, topics, English template, Turkish template). Weights below make facts the bulk, as they are.
_TEMPLATES: dict[str, list[tuple[str, tuple[str, ...], str, str]]] = {
    "rule": [
        (
            "dos_and_donts",
            ("server",),
            "Never restart {host} during business hours; wait for the {hh}:00 window.",
            "{host} sunucusunu mesai saatlerinde asla yeniden başlatmayın; saat {hh}:00 penceresini bekleyin.",
        ),
        (
            "dos_and_donts",
            ("deployment",),
            "Don't deploy {service} on Fridays after 15:00.",
            "Cuma 15:00'ten sonra {service} dağıtımı yapmayın.",
        ),
        (
            "dos_and_donts",
            ("billing",),
            "Always send {customer}'s invoices to {person}, never to the generic billing address.",
            "{customer} faturalarını her zaman {person} kişisine gönderin, genel adrese asla göndermeyin.",
        ),
        (
            "dos_and_donts",
            ("security",),
            "Never share the admin password of {host} over chat; use the vault.",
            "{host} yönetici şifresini asla sohbetten paylaşmayın; kasayı kullanın.",
        ),
        (
            "dos_and_donts",
            ("dns",),
            "Always lower the TTL of {domain} to 300 seconds a day before moving it.",
            "{domain} alan adını taşımadan bir gün önce TTL değerini her zaman 300 saniyeye düşürün.",
        ),
    ],
    "incident": [
        (
            "shocks",
            ("server",),
            "Outage on {date}: {host} went down for {n} hours after a kernel update; customers could not log in.",
            "{date} kesintisi: {host} çekirdek güncellemesinden sonra {n} saat çöktü; müşteriler giriş yapamadı.",
        ),
        (
            "shocks",
            ("database", "backup"),
            "Data loss on {date}: the restore of {host} failed and {n} hours of orders were lost.",
            "{date} veri kaybı: {host} geri yüklemesi başarısız oldu ve {n} saatlik sipariş kayboldu.",
        ),
        (
            "shocks",
            ("dns",),
            "Incident on {date}: {domain} was down for {n} hours because its DNS zone expired; the shop lost revenue.",
            "{date} arıza: {domain} alan adı süresi dolduğu için {n} saat erişilemedi; tüm siparişler durdu.",
        ),
    ],
    "procedure": [
        (
            "procedures",
            ("server", "security"),
            "To renew the certificate on {host}: 1. run certbot renew 2. then reload nginx 3. check the expiry.",
            "{host} sertifikasını yenilemek için önce certbot renew çalıştırın, sonra nginx'i yeniden yükleyin.",
        ),
        (
            "procedures",
            ("backup", "database"),
            "To restore {host} from backup: 1. stop the app 2. then run pg_restore 3. finally run the smoke tests.",
            "{host} yedeğini geri yüklemek için önce uygulamayı durdurun, sonra pg_restore çalıştırın.",
        ),
        (
            "procedures",
            ("deployment",),
            "To roll back {service}: first pick the previous release, then redeploy, next watch the error rate.",
            "{service} geri almak için önce önceki sürümü seçin, ardından yeniden dağıtın.",
        ),
    ],
    "fact": [
        (
            "fresh",
            ("server",),
            "{host} runs {service} {major}.{minor} in production.",
            "{host} üretimde {service} {major}.{minor} çalıştırıyor.",
        ),
        (
            "fresh",
            ("dns",),
            "The nameservers of {domain} are at {provider}; the MX record points to {host}.",
            "{domain} alan adının nameserver kayıtları {provider} üzerinde; MX kaydı {host} sunucusunu gösteriyor.",
        ),
        (
            "fresh",
            ("billing",),
            "{customer} pays invoices within {n} days by bank transfer.",
            "{customer} faturalarını {n} gün içinde havale ile ödüyor.",
        ),
        (
            "fresh",
            ("backup",),
            "The backup of {host} runs at {hh}:00 and is kept for {n} days.",
            "{host} yedeği saat {hh}:00'da alınıyor ve {n} gün saklanıyor.",
        ),
        (
            "fresh",
            ("deployment",),
            "Deployments of {service} go through the pipeline on {day}s after review by {person}.",
            "{service} dağıtımları {person} incelemesinden sonra pipeline üzerinden yapılıyor.",
        ),
        (
            "fresh",
            ("meeting",),
            "Meeting on {date} with {customer}: agreed to move {host} to the new region by {day}.",
            "{date} {customer} toplantısı: {host} sunucusunun yeni bölgeye taşınmasına karar verildi.",
        ),
        (
            "fresh",
            ("security",),
            "Two-factor authentication is required on {host} for every admin account.",
            "{host} üzerindeki her yönetici hesabı için iki aşamalı doğrulama zorunlu.",
        ),
        (
            "fresh",
            ("monitoring",),
            "Grafana alerts on {host} fire when disk usage passes {pct} percent.",
            "{host} disk kullanımı yüzde {pct} geçince Grafana alarmı çalıyor.",
        ),
        (
            "fresh",
            ("support",),
            "Ticket INC-{ticket} from {customer} about slow search is owned by {person}.",
            "{customer} müşterisinin yavaş arama destek talebi INC-{ticket} {person} üzerinde.",
        ),
    ],
    "change": [
        (
            "fresh",
            ("server", "network"),
            "{host} has the IP address {ip}.",
            "{host} sunucusunun IP adresi {ip}.",
        ),
        (
            "fresh",
            ("billing",),
            "The billing contact at {customer} is {person}.",
            "{customer} firmasının fatura sorumlusu {person}.",
        ),
    ],
    "distractor": [
        (
            "fresh",
            (),
            "The coffee machine on floor {n} is broken again; {person} ordered a new one.",
            "{n}. kattaki kahve makinesi yine bozuk; {person} yenisini sipariş etti.",
        ),
        (
            "fresh",
            (),
            "{person} is on holiday until {day} and back with souvenirs.",
            "{person} {day} gününe kadar izinde, hediyelerle dönecek.",
        ),
        (
            "fresh",
            (),
            "Lunch on {day} is at the new place round the corner, {person} booked a table for {n}.",
            "{day} öğle yemeği köşedeki yeni yerde, {person} {n} kişilik masa ayırttı.",
        ),
    ],
}
_WEIGHTS = {"rule": 8, "incident": 3, "procedure": 6, "fact": 55, "change": 8, "distractor": 20}


def tenant_names(tenants: int) -> list[str]:
    return [f"team-{i:04d}" for i in range(1, tenants + 1)]


def tenant_language(tenant_index: int) -> str:
    return "turkish" if tenant_index % 5 == 4 else "english"


def tenant_sizes(total: int, tenants: int, seed: int) -> list[int]:
    """Log-normal sizes (sigma 0.6: the largest tenant holds a few times the average) summing to total."""
    rng = random.Random(seed)
    weights = [math.exp(rng.gauss(0, 0.6)) for _ in range(tenants)]
    scale = total / sum(weights)
    sizes = [max(1, int(w * scale)) for w in weights]
    for i in range(total - sum(sizes)):  # rounding: hand the rest out one by one
        sizes[i % tenants] += 1
    while sum(sizes) > total:
        sizes[sizes.index(max(sizes))] -= 1
    return sizes


def _fill(template: str, world: dict[str, list[str]], rng: random.Random) -> str:
    values = {key: rng.choice(options) for key, options in world.items()}
    values.update(
        n=str(rng.randint(2, 40)),
        hh=f"{rng.randint(0, 23):02d}",
        major=str(rng.randint(1, 17)),
        minor=str(rng.randint(0, 9)),
        pct=str(rng.choice((70, 75, 80, 85, 90))),
        ticket=str(rng.randint(1000, 99999)),
        date=f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}",
        ip=f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        day=rng.choice(_DAYS),
        provider=rng.choice(("Cloudflare", "Route 53", "NS1", "Gandi")),
    )
    return template.format(**values)


def _world(tenant_index: int, rng: random.Random) -> dict[str, list[str]]:
    hosts = [f"{k}-{n}" for k in rng.sample(_HOST_KINDS, 6) for n in range(1, rng.randint(2, 6))]
    return {
        "host": hosts,
        "service": list(rng.sample(_SERVICES, 4)),
        "customer": list(rng.sample(_CUSTOMERS, 4)),
        "person": list(rng.sample(_PEOPLE, 5)),
        "domain": [f"{w}{tenant_index}.example" for w in ("shop", "api", "mail")],
    }


def memories(total: int, tenants: int = 1000, seed: int = 1) -> Iterator[Memory]:
    """`total` memories over `tenants` tenants; same arguments, same rows. Texts are unique per tenant."""
    kinds = list(_WEIGHTS)
    weights = [_WEIGHTS[k] for k in kinds]
    for index, (tenant, size) in enumerate(zip(tenant_names(tenants), tenant_sizes(total, tenants, seed), strict=True)):
        rng = random.Random(f"{seed}:{tenant}")
        world = _world(index, rng)
        turkish = tenant_language(index) == "turkish"
        for serial in range(size):
            kind = rng.choices(kinds, weights)[0]
            ring, topics, english, turkish_text = rng.choice(_TEMPLATES[kind])
            text = _fill(turkish_text if turkish else english, world, rng)
            # A serial keeps texts unique, as real notes are: duplicates are not what a scale run measures.
            yield Memory(tenant, f"{text} (#{serial})", ring, topics, "stale" if kind == "change" else kind)


def unit_vectors(count: int, seed: int = 1, dimensions: int = 384) -> np.ndarray:
    """`count` random unit vectors (float32), deterministic by seed."""
    vectors = np.random.default_rng(seed).standard_normal((count, dimensions), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors
