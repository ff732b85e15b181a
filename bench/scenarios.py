"""Deterministic retrieval scenarios for the ranking benchmark.

Thirty facts an operations agent is told, each with a question that needs it, phrased the way a
colleague would ask (often with other words than the fact), hidden among templated distractors that
share the vocabulary (many hosts, tickets, owners, SLAs).
"""

from __future__ import annotations

import random

PAIRS: list[tuple[str, str]] = [
    (
        "The nightly PostgreSQL backup on db-1 starts at 02:00 and is kept for 30 days.",
        "What time does the Postgres dump get taken, and how long do we keep it?",
    ),
    (
        "Maria in finance is the billing contact for Acme; invoices go out on the 1st.",
        "Who should I talk to about Acme's invoices?",
    ),
    ("The VPN gateway vpn-2 uses WireGuard on UDP port 51820.", "Which port does our WireGuard tunnel listen on?"),
    (
        "Customer Globex has a 99.95% uptime SLA with a 4-hour response time.",
        "What service level did we promise Globex?",
    ),
    (
        "Certificates for shop.acme.example are renewed by certbot every 60 days.",
        "How is the TLS cert of the web shop kept fresh?",
    ),
    (
        "Deployments to production happen on Tuesdays and Thursdays after 10:00.",
        "Which days are we allowed to ship to prod?",
    ),
    (
        "Grafana alerts for disk usage fire at 85 percent on all database hosts.",
        "At what fill level do we get paged about storage on the DB machines?",
    ),
    (
        "The Redis cache on cache-1 is capped at 4 GB with allkeys-lru eviction.",
        "How much memory may the key-value cache use and what happens when it is full?",
    ),
    ("Ticket INC-4471 about slow checkout is owned by Can.", "Who owns INC-4471?"),
    (
        "The office Wi-Fi password rotates every quarter and is kept in the vault.",
        "How often does the wireless key change?",
    ),
    (
        "Acme's domain registrar is Gandi; DNS records are managed in Cloudflare.",
        "Where do we edit the DNS zone for acme?",
    ),
    (
        "Log retention for the payment service is 12 months, the last 3 months hot.",
        "How long do we keep logs of the payments API?",
    ),
    (
        "The Kubernetes cluster prod-eu runs version 1.29 with three control-plane nodes.",
        "Which k8s release is the European production cluster on?",
    ),
    ("The weekly ops meeting is on Monday at 09:30 in room Galata.", "When is the weekly operations sync?"),
    (
        "The mail relay smtp-1 rate-limits outgoing mail to 500 messages per hour.",
        "Is there a cap on how many emails we can send per hour?",
    ),
    ("Refunds over 500 EUR need a second approval from finance.", "Can I refund 800 euros on my own?"),
    ("Backups are encrypted with age; the recovery key is held by two people.", "Who can decrypt the backup archives?"),
    (
        "Sentry project web-frontend collects JavaScript errors from the shop.",
        "Where do browser-side exceptions get reported?",
    ),
    (
        "The load balancer lb-1 health-checks /healthz every 5 seconds.",
        "How often does the LB probe the health endpoint?",
    ),
    (
        "The staging database is refreshed from an anonymised production snapshot every Sunday.",
        "How does staging get its data?",
    ),
    ("Ayşe is on call this week; Can covers the nights.", "Who has the pager this week?"),
    ("The disk of db-2 was replaced in October after SMART errors.", "Was there any hardware work on db-2 recently?"),
    (
        "Nginx on web-3 serves static files from /srv/www with gzip enabled.",
        "Where does the static content live on web-3?",
    ),
    ("The ERP export to the accounting system runs hourly over SFTP.", "How does data get to accounting?"),
    (
        "The Elasticsearch cluster logs-1 keeps 14 daily indices.",
        "How many days of indices does the log search cluster keep?",
    ),
    ("Two-factor authentication is required for the admin panel since May.", "Do admins need MFA to log in?"),
    ("Customer Initech pays by bank transfer, not by card.", "How does Initech settle their bills?"),
    ("The CDN caches product images for 24 hours.", "How long are catalog pictures cached at the edge?"),
    (
        "The cron job cleanup-tmp on web-1 deletes files older than 7 days in /tmp.",
        "What removes old temporary files on web-1?",
    ),
    ("The public API allows 100 requests per minute per key.", "How many calls per minute may an API client make?"),
]

_HOSTS = [f"{kind}-{n}" for kind in ("web", "db", "cache", "lb", "mq", "worker", "vpn", "smtp") for n in range(1, 7)]
_PEOPLE = ["Ali", "Ayşe", "Can", "Deniz", "Elif", "Maria", "Omar", "Selin", "Tom", "Zeynep"]
_CUSTOMERS = ["Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Soylent", "Cyberdyne", "Tyrell"]
_SERVICES = ["nginx", "PostgreSQL", "Redis", "RabbitMQ", "Elasticsearch", "HAProxy", "Postfix", "WireGuard"]
_TEMPLATES = [
    "Server {host} runs {service} {major}.{minor} in {env}.",
    "Ticket INC-{ticket} about {issue} is owned by {person}.",
    "Customer {customer} has a {sla}% uptime SLA with a {hours}-hour response time.",
    "The {service} instance on {host} is monitored by Grafana with a {pct} percent alert.",
    "{person} prefers to be contacted by {channel} about {topic}.",
    "Customer {customer} pays invoices within {days} days by {method}.",
    "The backup of {host} runs at {hh}:00 and is kept for {days} days.",
    "Deploys of {service} configuration need a review by {person}.",
]
_ISSUES = ["a failed login", "slow search", "a broken invoice PDF", "a DNS timeout", "missing emails", "a 502 error"]


def distractors(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < count:
        out.add(
            rng.choice(_TEMPLATES).format(
                host=rng.choice(_HOSTS),
                service=rng.choice(_SERVICES),
                major=rng.randint(1, 16),
                minor=rng.randint(0, 9),
                env=rng.choice(["staging", "production"]),
                ticket=rng.randint(1000, 9999),
                issue=rng.choice(_ISSUES),
                person=rng.choice(_PEOPLE),
                customer=rng.choice(_CUSTOMERS),
                sla=rng.choice(["99.5", "99.9", "99.95", "99.99"]),
                hours=rng.choice([1, 2, 4, 8, 24]),
                pct=rng.choice([70, 80, 85, 90, 95]),
                channel=rng.choice(["email", "phone", "Slack"]),
                topic=rng.choice(["billing", "outages", "deployments", "security"]),
                days=rng.choice([7, 14, 30, 60, 90]),
                method=rng.choice(["card", "bank transfer", "direct debit"]),
                hh=rng.randint(0, 23),
            )
        )
    return sorted(out)
