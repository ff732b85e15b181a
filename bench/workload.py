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


# -- The Gut's population (bench/gut.py) ----------------------------------------------------------------
# Operational truths many teams learn on their own, each in several wordings (English, Turkish) with the
# team's own hosts, domains and numbers, and a question a new team would ask that the truth answers.


@dataclass(frozen=True)
class Truth:
    key: str
    topics: tuple[str, ...]
    english: tuple[str, ...]
    turkish: tuple[str, ...]
    question: str


SHARED_TRUTHS: tuple[Truth, ...] = (
    Truth(
        "backup-before-migration",
        ("database", "backup"),
        (
            "Always take a fresh backup of {host} before running a schema migration.",
            "Before any schema migration on {host}, take a full backup first.",
            "Never run a schema migration on {host} without a backup taken in the last {n} hours.",
        ),
        (
            "{host} üzerinde şema migrasyonu çalıştırmadan önce mutlaka tam yedek alın.",
            "Şema migrasyonundan önce {host} için taze bir yedek almadan başlamayın.",
        ),
        "We are about to run a schema migration on the orders database tonight. What should we do first?",
    ),
    Truth(
        "test-restores",
        ("backup",),
        (
            "Backups of {host} are only trusted after a test restore; restore one every {n} days.",
            "Test a restore of the {host} backups every {n} days: an untested backup is not a backup.",
            "Schedule a restore drill for the {host} backups every {n} days.",
        ),
        (
            "{host} yedeklerini her {n} günde bir geri yükleyerek test edin.",
            "Geri yükleme testi yapılmamış yedeğe güvenmeyin; {host} için her {n} günde bir deneyin.",
        ),
        "How do we know that our database backups actually work?",
    ),
    Truth(
        "certificate-renewal",
        ("security", "dns"),
        (
            "Renew the TLS certificate of {domain} at least {n} days before it expires.",
            "Set an alert {n} days before the certificate of {domain} expires and renew it then.",
            "Rotate the certificate of {domain} {n} days ahead of expiry, never on the last day.",
        ),
        (
            "{domain} sertifikasını süresi dolmadan en az {n} gün önce yenileyin.",
            "{domain} için sertifikanın bitişinden {n} gün önce uyarı kurun ve yenileyin.",
        ),
        "The TLS certificate of our main site expires soon. When should we renew it?",
    ),
    Truth(
        "disk-alert",
        ("monitoring", "server"),
        (
            "Alert when the disk of {host} passes {pct} percent, not when it is full.",
            "Page on-call once the disk usage of {host} goes above {pct} percent.",
            "Disk usage on {host} over {pct} percent must raise an alert before the disk fills up.",
        ),
        (
            "{host} diski yüzde {pct} doluluğu geçince alarm verin.",
            "{host} disk kullanımı yüzde {pct} üstüne çıkınca nöbetçiyi arayın.",
        ),
        "At what disk usage should our servers raise an alert?",
    ),
    Truth(
        "rolling-restart",
        ("server",),
        (
            "Restart the {service} nodes one at a time, never all at once.",
            "Do a rolling restart of {service}: one node, wait for its health check, then the next.",
            "Never restart every {service} node together; go node by node.",
        ),
        (
            "{service} düğümlerini tek tek yeniden başlatın, asla hepsini birden değil.",
            "{service} için kademeli yeniden başlatma yapın: bir düğüm, sağlık kontrolü, sonra diğeri.",
        ),
        "How should we restart the cluster nodes for the update?",
    ),
    Truth(
        "friday-deploys",
        ("deployment",),
        (
            "Don't deploy to production on Friday afternoons.",
            "No production deploys after {hh}:00 on Fridays.",
            "Avoid shipping a release to production late on a Friday.",
        ),
        (
            "Cuma öğleden sonra üretime dağıtım yapmayın.",
            "Cuma günleri saat {hh}:00'ten sonra canlıya çıkmayın.",
        ),
        "Can we deploy the new release to production this Friday afternoon?",
    ),
    Truth(
        "secrets-not-in-git",
        ("security",),
        (
            "Never commit passwords or API keys to the git repository; use the secret store.",
            "Secrets belong in the secret store, never in the repository, not even a private one.",
            "Do not put credentials into git; keep API keys in the secret store.",
        ),
        (
            "Parolaları ve API anahtarlarını asla git deposuna koymayın; gizli bilgi kasasını kullanın.",
            "Gizli bilgiler depoya değil, gizli bilgi kasasına konur.",
        ),
        "Where should we keep the API key of the payment provider?",
    ),
    Truth(
        "dns-ttl-before-move",
        ("dns",),
        (
            "Lower the DNS TTL of {domain} to {n} seconds a day before moving it.",
            "Before migrating {domain} to a new server, drop its TTL to {n} seconds at least a day ahead.",
            "Reduce the TTL of {domain} ahead of any DNS change so that it propagates fast.",
        ),
        (
            "{domain} taşınmadan bir gün önce DNS TTL değerini {n} saniyeye düşürün.",
            "DNS değişikliğinden önce {domain} için TTL süresini kısaltın.",
        ),
        "We move our domain to a new server next week. Is there anything to do with DNS first?",
    ),
    Truth(
        "replica-lag-before-failover",
        ("database",),
        (
            "Check the replication lag of {host} before failing over to it.",
            "Never fail over to {host} while its replica lag is above {n} seconds.",
            "Before a failover, confirm that the replica {host} has caught up with the primary.",
        ),
        (
            "Yük devretmeden önce {host} üzerindeki replikasyon gecikmesini kontrol edin.",
            "Replika {host} birincil sunucuya yetişmeden yük devretme yapmayın.",
        ),
        "The primary database is down. Can we fail over to the replica right away?",
    ),
    Truth(
        "announce-maintenance",
        ("server",),
        (
            "Announce planned maintenance of {host} to users at least {n} hours in advance.",
            "Tell customers about planned downtime {n} hours ahead.",
            "Planned maintenance needs a notice to users {n} hours before it starts.",
        ),
        (
            "Planlı bakımı kullanıcılara en az {n} saat önceden duyurun.",
            "{host} bakımını kullanıcılara {n} saat önce haber verin.",
        ),
        "We need downtime for maintenance on Sunday. How early must we tell the users?",
    ),
    Truth(
        "no-root-ssh",
        ("security", "server"),
        (
            "Disable root login over SSH on {host}; people use named accounts with sudo.",
            "No direct root SSH on {host}: everyone logs in as themselves and uses sudo.",
            "Keep root login over SSH switched off on every server, {host} included.",
        ),
        (
            "{host} üzerinde SSH ile root girişini kapatın; kişisel hesap ve sudo kullanın.",
            "Sunuculara doğrudan root ile SSH yapılmaz, {host} dahil.",
        ),
        "Should we allow root to log in over SSH on the new server?",
    ),
    Truth(
        "admin-mfa",
        ("security",),
        (
            "Require two-factor authentication for every admin account.",
            "Admin accounts must have two-factor authentication enabled, no exceptions.",
            "Turn on multi-factor authentication for all administrators.",
        ),
        (
            "Tüm yönetici hesapları için iki faktörlü doğrulamayı zorunlu kılın.",
            "Yönetici hesaplarında iki faktörlü doğrulama olmadan giriş olmasın.",
        ),
        "A new administrator joined the team. What must their account have?",
    ),
    Truth(
        "log-retention",
        ("monitoring",),
        (
            "Keep the application logs of {service} for at least {n} days.",
            "Retain the logs of {service} for {n} days before deleting them.",
            "Log retention for {service} is {n} days at the minimum.",
        ),
        (
            "{service} uygulama loglarını en az {n} gün saklayın.",
            "{service} loglarını silmeden önce {n} gün tutun.",
        ),
        "How long should we keep our application logs?",
    ),
    Truth(
        "blameless-postmortem",
        ("incident",),
        (
            "Write a blameless postmortem within {n} days of every outage.",
            "Every incident gets a postmortem within {n} days, without blaming anyone.",
            "After an outage, publish a blameless review within {n} days.",
        ),
        (
            "Her kesintiden sonra {n} gün içinde kimseyi suçlamayan bir olay sonrası rapor yazın.",
            "Olay sonrası incelemeyi suçlama olmadan {n} gün içinde yayınlayın.",
        ),
        "The outage is over now. What should we do next?",
    ),
    Truth(
        "load-test-before-campaign",
        ("deployment", "server"),
        (
            "Load test {service} at {n} times the normal traffic before a big campaign.",
            "Before a marketing launch, load test {service} at {n}x the expected traffic.",
            "Run a load test of {service} ahead of every large campaign.",
        ),
        (
            "Büyük bir kampanyadan önce {service} için normal trafiğin {n} katıyla yük testi yapın.",
            "Pazarlama lansmanından önce {service} yük testini mutlaka yapın.",
        ),
        "A big marketing campaign starts next week. How do we prepare the servers?",
    ),
    Truth(
        "staging-first",
        ("deployment",),
        (
            "Try every configuration change of {service} on staging before production.",
            "Changes to the {service} configuration go to staging first, then to production.",
            "Never change the production configuration of {service} without testing it on staging.",
        ),
        (
            "{service} yapılandırma değişikliklerini önce staging ortamında deneyin.",
            "Canlı {service} ayarlarını staging ortamında test etmeden değiştirmeyin.",
        ),
        "Can I change the web server configuration directly on production?",
    ),
    Truth(
        "connection-pooler",
        ("database",),
        (
            "Put a connection pooler in front of the database on {host} once clients pass {n} connections.",
            "Use pgbouncer on {host} when there are more than {n} client connections.",
            "Do not let clients open hundreds of database connections on {host}; pool them.",
        ),
        (
            "{host} veritabanı bağlantıları {n} sayısını geçince bir bağlantı havuzu kullanın.",
            "{host} önünde pgbouncer ile bağlantıları havuzlayın.",
        ),
        "Our database keeps running out of connections. What should we do?",
    ),
    Truth(
        "backup-job-alert",
        ("backup", "monitoring"),
        (
            "Alert when the backup job of {host} has not succeeded for {n} hours.",
            "Page someone if the {host} backup has not completed in the last {n} hours.",
            "A backup job of {host} that silently fails must raise an alert within {n} hours.",
        ),
        (
            "{host} yedekleme işi {n} saattir başarılı olmadıysa alarm verin.",
            "{host} yedeği son {n} saatte tamamlanmadıysa birini arayın.",
        ),
        "How would we notice that a backup job has been failing silently?",
    ),
    Truth(
        "app-database-user",
        ("database", "security"),
        (
            "The application connects with its own database user, never with the superuser.",
            "Each service gets a dedicated database role with only the rights it needs.",
            "Never let an application log in to the database as postgres; give it its own role.",
        ),
        (
            "Uygulama veritabanına kendi kullanıcısıyla bağlanır, asla süper kullanıcıyla değil.",
            "Her servis yalnızca gereken yetkilere sahip kendi veritabanı rolünü kullanır.",
        ),
        "Which database user should the new service connect with?",
    ),
    Truth(
        "oncall-handover",
        ("incident",),
        (
            "Hand over the open incidents in writing at the end of every on-call shift.",
            "At the end of an on-call shift, write down every open incident for the next person.",
            "Never end an on-call shift without a written handover of the open incidents.",
        ),
        (
            "Her nöbet vardiyasının sonunda açık olayları yazılı olarak devredin.",
            "Nöbet bitmeden açık olayları bir sonraki kişiye yazılı bırakın.",
        ),
        "My on-call shift ends tonight. What do I do with the open incidents?",
    ),
    Truth(
        "critical-patches",
        ("security", "server"),
        (
            "Apply critical security patches to {host} within {n} days.",
            "Critical vulnerabilities get patched within {n} days on every server, {host} too.",
            "Patch critical security issues within {n} days of the announcement.",
        ),
        (
            "Kritik güvenlik yamalarını {host} üzerine {n} gün içinde uygulayın.",
            "Kritik açıkları duyurudan sonra {n} gün içinde yamalayın.",
        ),
        "A critical OpenSSL vulnerability was announced. How fast must we patch?",
    ),
    Truth(
        "rollback-plan",
        ("deployment",),
        (
            "Every deployment of {service} needs a tested rollback plan before it starts.",
            "Do not start a deployment of {service} until the rollback has been tested.",
            "Have a rollback plan for {service} ready and tested before every release.",
        ),
        (
            "{service} dağıtımına başlamadan önce test edilmiş bir geri alma planı hazır olsun.",
            "Geri alma test edilmeden {service} dağıtımına başlamayın.",
        ),
        "We deploy the new version tomorrow. What must be ready before we start?",
    ),
)

_SYLLABLES = ("ka", "vor", "lin", "te", "mu", "rax", "qui", "zen", "do", "pha", "ul", "bri", "sto", "nev", "yor")


def codename(tenant_index: int) -> str:
    """A word no other tenant has: what a tenant-unique name looks like to the word filter."""
    parts, n = [], tenant_index + 7 * len(_SYLLABLES)
    while n:
        n, r = divmod(n, len(_SYLLABLES))
        parts.append(_SYLLABLES[r])
    return "".join(parts).capitalize()


@dataclass(frozen=True)
class GutMemory:
    tenant: str
    content: str
    ring: str
    topics: tuple[str, ...]
    truth: str | None  # the shared truth it plants, None for a tenant's own fact or secret
    success: float
    unique: tuple[str, ...]  # strings that belong to this tenant alone and must never be published


_OWN_NOUNS = (
    "payroll export",
    "loyalty points job",
    "warehouse scanner",
    "greenhouse sensor",
    "invoice archive",
    "kiosk fleet",
    "ticket printer",
    "parking barrier",
    "canteen menu feed",
    "fax gateway",
    "badge reader",
    "freezer alarm",
    "tram timetable import",
    "label printer",
    "vinyl catalogue",
    "seed bank index",
    "karaoke booking form",
    "ferry manifest",
    "gym turnstile",
    "bakery order sheet",
    "weather station",
    "dental x-ray share",
    "library barcode scanner",
    "choir rota",
    "boat rental ledger",
    "orchard irrigation",
)
_OWN_TR_NOUNS = (
    "bordro dışa aktarımı",
    "depo tarayıcısı",
    "sera sensörü",
    "fatura arşivi",
    "bilet yazıcısı",
    "otopark bariyeri",
    "yemekhane menüsü",
    "kart okuyucu",
    "dondurucu alarmı",
    "etiket yazıcısı",
    "feribot manifestosu",
    "spor salonu turnikesi",
    "fırın sipariş listesi",
    "hava istasyonu",
)
_OWN_EN = (
    "The {noun} of {name} talks to {host} at {ip}; {person} set it up.",
    "{person} owns the {noun} and is the only one allowed to touch {host}.",
    "Never reboot {host} while {person} runs the {noun} on the first {day} of the month.",
    "The {noun} at {name} was moved to {host} after the flood in the basement.",
    "Ask {person} before changing anything in the {noun}; it feeds the {noun2}.",
    "{name} keeps the spare key of the {noun} cabinet with {person}.",
)
_OWN_TR = (
    "{name} {noun} sistemi {host} ({ip}) ile konuşur; kurulumu {person} yaptı.",
    "{noun} sorumlusu {person}; {host} makinesine yalnız o dokunabilir.",
    "{person} ayın ilk {day} günü {noun} çalıştırırken {host} yeniden başlatılmaz.",
    "{name} ofisindeki {noun} bodrumdaki su baskınından sonra {host} makinesine taşındı.",
)


def gut_population(tenants: int = 250, own_facts: int = 40, seed: int = 1) -> Iterator[GutMemory]:
    """Per tenant: the shared truths it learned (truth i in a share of tenants falling from 0.9 by a
    factor 0.88 each), in a wording of its language with its own hosts and numbers, filed as procedures
    or rules; and own_facts facts, rules and a secret of its own, naming its codename, hosts, IPs and
    people, some filed as rules too (they compete with the truths for the tenant's few patterns)."""
    for index, tenant in enumerate(tenant_names(tenants)):
        rng = random.Random(f"gut:{seed}:{tenant}")
        name = codename(index)
        world = _world(index, rng) | {
            "host": [f"{name.lower()}-{kind}-{n}" for kind in rng.sample(_HOST_KINDS, 4) for n in (1, 2)],
            "domain": [f"{w}.{name.lower()}.example.com" for w in ("shop", "api", "mail")],
            "person": [f"{name} {rng.choice(_PEOPLE)}"],
        }
        turkish = tenant_language(index) == "turkish"
        for i, truth in enumerate(SHARED_TRUTHS):
            if rng.random() < 0.9 * 0.88**i:
                wording = rng.choice(truth.turkish if turkish else truth.english)
                ring = "dos_and_donts" if truth.key in ("friday-deploys", "secrets-not-in-git") else "procedures"
                text = _fill(wording, world, rng)
                yield GutMemory(tenant, text, ring, truth.topics, truth.key, rng.uniform(0.7, 1.0), (name,))
        ip = f"10.{index % 250}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        host, person = world["host"][0], world["person"][0]
        yield GutMemory(
            tenant,
            f"The break-glass password for {host} ({ip}) is in the safe of the {name} office, ask {person}.",
            "long_term",
            ("security",),
            None,
            rng.uniform(0.7, 1.0),
            (name, host, ip, person),
        )
        nouns = _OWN_TR_NOUNS if turkish else _OWN_NOUNS
        for serial in range(own_facts - 1):
            noun, noun2 = rng.sample(nouns, 2)
            ip = f"10.{index % 250}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            values = {"noun": noun, "noun2": noun2, "name": name, "ip": ip, "day": rng.choice(_DAYS),
                      "host": rng.choice(world["host"]), "person": person}  # fmt: skip
            text = rng.choice(_OWN_TR if turkish else _OWN_EN).format(**values)
            ring = "dos_and_donts" if serial % 8 == 0 else "long_term"
            yield GutMemory(tenant, text, ring, (), None, rng.uniform(0.7, 1.0), (name, values["host"], ip, person))
