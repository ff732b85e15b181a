"""The BIOS library: rules with a rationale and translations, preset versions, subscriptions, topics.

- bios_rules: rationale, translations (text per text-search language, e.g. {"turkish": "..."}) and
  digest, the fingerprint of a rule's whole definition. A preset's rule is the same rule across
  versions exactly when its digest is; rows stay immutable, so a changed rule is a new row and the
  old one is retired.
- bios_rule_events: 'reinstated' besides 'retired' (a rule a later version brings back), and the
  preset load that caused the event.
- bios_preset_loads replaces bios_presets (which was updated in place): one append-only row per load
  that changed something, with its version, checksum and counts. cogmem.bios_presets becomes a view.
- bios_subscriptions: the presets a tenant takes (tenant NULL = every tenant). Rules of a preset a
  tenant does not take are not injected for it. Presets loaded before this revision are subscribed for
  every tenant, so nothing an installation injected disappears.
- default_topics: the categories of the shipped presets, reachable in English and Turkish.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

# Keywords match a word that starts with them (4+ letters) or the same stem in the tenant's language;
# multi-word keywords match as phrases (sql/010-topics.sql). Words that casual talk uses for other
# things ("card", "key", "switch", "training") are left out or only taken in a phrase.
# fmt: off
TOPICS = {
    "server": [
        "server", "servers", "vm", "restart", "reboot", "nginx", "apache", "systemd", "service", "uptime", "cpu",
        "disk", "linux", "maintenance window", "sunucu", "makine", "yeniden başlat", "bakım", "oom", "ubuntu",
        "debian", "sshd", "cron", "crontab", "kernel", "memory leak", "load average",
    ],
    "network": [
        "network", "firewall", "vpn", "router", "latency", "bandwidth", "subnet", "load balancer", "ip", "ağ",
        "güvenlik duvarı", "ports", "open port", "port forwarding", "network switch", "ağ anahtarı", "iptables",
        "nftables", "security group", "packet loss", "default route", "routing", "dmz", "vlan", "segmentation",
        "ssh port", "rdp", "portunu", "portları", "paket kaybı", "yönlendirme",
    ],
    "backup": [
        "backup", "restore", "snapshot", "recovery", "yedekleme", "geri yükleme", "yedekle", "yedeği", "yedeğini",
        "yedekler", "yedekten", "tarball", "storage array", "rto", "rpo", "disaster recovery", "felaket kurtarma",
    ],
    "payments": [
        "cardholder", "card number", "card numbers", "card data", "card details", "credit card", "debit card",
        "payment card", "card verification", "pan", "pans", "cvv", "cvc", "cvv2", "pci", "track data",
        "tokenization", "tokenisation", "acquirer", "kart numarası", "kart numarasını", "kart numaraları",
        "kredi kartı", "kredi kartını", "banka kartı", "kart bilgisi", "kart bilgilerini", "kart bilgileri",
        "kart verisi", "kart verileri", "kart sahibi", "tokenizasyon",
    ],
    "oncall": [
        "on call", "on-call", "oncall", "pager", "pagerduty", "opsgenie", "escalation", "escalate", "handover",
        "hand over", "runbook", "nöbet", "nöbetçi", "eskalasyon", "devir teslim", "paged", "outage",
        "secondary on-call", "kesinti", "wake someone", "incident channel",
    ],
    "logging": [
        "audit log", "audit logs", "audit trail", "log retention", "logs", "logging", "syslog", "siem", "log",
        "log file", "log files", "journald", "time sync", "ntp", "loglar", "logları", "log kaydı", "log kayıtları",
        "denetim kaydı", "denetim izi", "kayıt dosyası", "failed login", "failed logins", "erişim kayıtları",
        "güvenlik kayıtları", "uygulama kayıtları", "başarısız giriş",
    ],
    "access": [
        "access control", "access rights", "access review", "least privilege", "privilege", "privileged",
        "permission", "permissions", "mfa", "2fa", "two-factor", "multi-factor", "password", "passwords",
        "credential", "credentials", "user account", "service account", "shared account", "sudo", "root access",
        "admin rights", "rbac", "ssh key", "api key", "api token", "yetki", "yetkiler", "erişim", "parola",
        "şifresi", "şifreyi", "şifremi", "şifreler", "şifreni", "kullanıcı hesabı", "servis hesabı", "ortak hesap",
        "iki faktörlü", "çok faktörlü", "admin", "login", "logins", "two-step", "iki aşamalı", "yönetici yetki",
        "write access", "read access", "prod access", "admin access", "erişebil",
    ],
    "cryptography": [
        "encryption", "encrypt", "encrypted", "decrypt", "cryptograph", "crypto", "tls", "ssl", "certificate",
        "cipher", "key rotation", "key management", "encryption key", "private key", "kms", "hsm", "hashing",
        "hashed", "şifreleme", "şifrele", "şifreli", "kriptograf", "sertifika", "anahtar yönetimi", "özel anahtar",
        "şifreleme anahtarı", "anahtar rotasyonu", "cert", "certs", "md5", "bcrypt", "obfuscat",
    ],
    "change": [
        "change request", "change control", "change management", "change ticket", "change approval",
        "change advisory", "cab", "back-out", "backout", "emergency change", "değişiklik talebi",
        "değişiklik kaydı", "değişiklik yönetimi", "değişiklik onayı", "değişiklik kontrolü", "acil değişiklik",
        "geri dönüş planı", "approval", "without approval", "hotfix", "rollback plan", "onaysız", "onay süreci",
        "onay kurulu",
    ],
    "vulnerability": [
        "vulnerability", "vulnerabilities", "cve", "patch", "patches", "patching", "security update",
        "vulnerability scan", "scanner", "pentest", "penetration test", "exploit", "zero-day", "asv", "zafiyet",
        "zafiyetler", "güvenlik açığı", "güvenlik açıkları", "açıklık", "yama", "yamalar", "yamayı", "sızma testi",
        "güvenlik güncellemesi",
    ],
    "supplier": [
        "supplier", "suppliers", "vendor", "vendors", "third party", "third-party", "service provider", "outsource",
        "outsourced", "subcontractor", "saas provider", "cloud provider", "tpsp", "tedarikçi", "tedarikçiler",
        "üçüncü taraf", "hizmet sağlayıcı", "dış kaynak", "taşeron", "bulut sağlayıcı", "provider", "providers",
        "contractor", "contractors", "freelancer", "agency", "soc 2", "sağlayıcı", "sağlayıcısı", "sağlayıcımız",
        "saas", "ai tool", "yapay zeka aracı", "yapay zekâ aracı",
    ],
    "incident": [
        "incident", "incidents", "security incident", "intrusion", "compromise", "compromised", "malware",
        "ransomware", "attack", "attacker", "hacked", "phishing", "forensic", "forensics", "olay müdahale",
        "güvenlik olayı", "güvenlik olayını", "siber saldırı", "saldırı", "saldırgan", "fidye yazılımı",
        "zararlı yazılım", "ele geçirildi", "ele geçirilmiş", "oltalama", "adli", "stolen", "suspicious",
        "postmortem", "post-mortem", "çalındı", "çalınan", "şüpheli", "olay sonrası", "outbound connections",
        "unknown user", "tanımadığı", "güvenlik alarmı",
    ],
    "development": [
        "source code", "code review", "pull request", "merge request", "commit", "repository", "repo",
        "secure coding", "sql injection", "xss", "dependency", "dependencies", "library", "sast", "static analysis",
        "test data", "test environment", "developer", "kaynak kod", "kaynak kodu", "kod inceleme", "kod incelemesi",
        "güvenli kodlama", "bağımlılık", "kütüphane", "test verisi", "test ortamı", "geliştirici",
        "yazılım geliştirme", "pr", "input validation", "branch protection", "force-push", "kod", "kodu",
        "fonksiyon",
    ],
    "leakage": [
        "data leak", "data leakage", "exfiltration", "exfiltrate", "dlp", "pastebin", "usb stick", "usb drive",
        "personal email", "personal drive", "clean desk", "veri sızıntısı", "usb bellek", "kişisel e-posta",
        "temiz masa", "chatgpt", "wetransfer", "anyone with the link", "gist", "decommission", "hurda",
        "kişisel drive", "leaked data", "leaked credentials", "sızdırıl",
    ],
    "people": [
        "security awareness", "awareness training", "security training", "onboarding", "offboarding", "new hire",
        "new joiner", "leaver", "leavers", "background check", "screening", "remote work", "remote working",
        "work from home", "nda", "confidentiality agreement", "disciplinary", "farkındalık", "güvenlik eğitimi",
        "işe alım", "işe giriş", "işten ayrıl", "işten çıkış", "uzaktan çalış", "evden çalış",
        "gizlilik sözleşmesi", "geçmiş taraması", "disiplin", "last day", "public wi-fi", "phishing simulation",
        "yeni başlayan", "son günü", "leaving the company", "change of role", "own laptop", "bring your own device",
        "byod", "kendi bilgisayar", "referans kontrol", "ayrılan çalışan", "changing teams", "another team",
        "own computer", "kendi bilgisayarım", "referans",
    ],
    "consent": [
        "consent", "consents", "opt-in", "opt in", "opt-out", "opt out", "unsubscribe", "marketing email",
        "newsletter", "cookie banner", "cookies", "withdraw consent", "rıza", "açık rıza", "rızası", "rızasını",
        "onay metni", "pazarlama izni", "ticari ileti", "iys", "çerez", "çerezler", "checkbox", "pre-ticked",
        "parental consent", "marketing consent", "onam", "onay kutusu", "pazarlama onayı", "ebeveyn onayı",
        "onayını geri", "konum izni",
    ],
    "privacy": [
        "personal data", "personal information", "pii", "data protection", "privacy", "gdpr", "kvkk",
        "data controller", "data processor", "legal basis", "lawful basis", "purpose limitation",
        "data minimisation", "data minimization", "privacy notice", "verbis", "dpo", "data protection officer",
        "dpia", "records of processing", "special category", "health data", "kişisel veri", "kişisel verileri",
        "kişisel verilerin", "veri sorumlusu", "veri işleyen", "aydınlatma", "hukuki sebep", "işleme amacı",
        "gizlilik", "özel nitelikli", "sağlık verisi", "veri koruma", "pseudonym", "pseudonymise", "pseudonymize",
        "data processing", "processing agreement", "impact assessment", "profiling", "takma ad", "veri işleme",
        "etki değerlendirmesi", "profilleme", "home address", "home addresses", "employee files", "personnel files",
        "özlük dosya",
    ],
    "retention": [
        "retention", "retain", "retention period", "destruction", "destroy", "anonymise", "anonymize", "anonymised",
        "anonymized", "anonymisation", "anonymization", "purge", "delete old", "erasure policy", "saklama süresi",
        "saklama süreleri", "imha", "anonim hale", "anonimleştir", "periyodik imha", "silinmesi", "silinmeli",
        "ne kadar saklamalı", "ne kadar süre saklıyoruz", "erase", "erased", "erasing",
    ],
    "rights": [
        "data subject", "subject access", "access request", "dsar", "right to erasure", "right to be forgotten",
        "rectification", "portability", "object to processing", "delete my data", "ilgili kişi", "ilgili kişinin",
        "başvurusu", "silinme hakkı", "unutulma hakkı", "bilgi talebi", "itiraz", "automated decision",
        "copy of their data", "copy of his data", "copy of her data", "erişim talebi", "verilerin kopyası",
        "verilerinin kopyası", "kişisel verilerimi", "verilerimin silinmesi",
    ],
    "transfer": [
        "cross-border", "international transfer", "third country", "outside the eu", "outside the eea", "eea",
        "adequacy", "standard contractual clauses", "sccs", "scc", "data transfer", "transfer impact",
        "yurt dışına aktarım", "yurtdışına aktarım", "yurt dışına aktar", "yurtdışına aktar", "aktarım",
        "yeterlilik kararı", "standart sözleşme", "yurt dışındaki sunucu", "yurt dışı sunucu",
        "data privacy framework", "veri gizliliği çerçevesi", "yurt dışındaki", "transfer abroad",
        "transferred abroad", "sending data abroad", "yurt dışında tutul", "bağlayıcı şirket kuralları",
        "binding corporate rules", "bcr", "us-based", "adequacy decision",
    ],
    "breach": [
        "data breach", "breach", "breached", "personal data breach", "72 hours", "supervisory authority",
        "notify the authority", "breach notification", "veri ihlali", "ihlal", "ihlali", "ihlal bildirimi",
        "72 saat", "kurula bildir", "notify the", "affected users", "affected customers", "dpc", "ico",
        "denetim makamı", "etkilenen kullanıcı", "etkilenen kişi", "kvkk kurulu", "unauthorised access",
        "unauthorized access", "yetkisiz erişim", "72-hour", "database dump",
    ],
    "dns": [
        "mx", "spf", "dkim", "dmarc", "txt record", "ns record", "registrar", "ad sunucu", "alan adının",
        "mx kaydı", "dns kaydı", "dns", "domain", "nameserver", "cname", "mx record", "a record", "ttl", "zone",
        "resolver", "alan adı",
    ],
    "database": [
        "column", "not null", "where clause", "primary key", "şema", "replika", "sütun", "database", "db",
        "postgres", "postgresql", "mysql", "sql", "query", "replica", "schema", "migration", "veritabanı", "tablo",
    ],
    "monitoring": [
        "silences", "alert silence", "dashboard", "threshold", "eşik değer", "monitoring", "alert", "alerting",
        "metrics", "logs", "logging", "grafana", "prometheus", "pager", "on call", "on-call", "nöbet", "izleme",
        "alarm",
    ],
    "deployment": [
        "canlıya", "canlı ortam", "blue-green", "canary", "hotfix", "deploy", "deployment", "release", "rollout",
        "rollback", "pipeline", "kubernetes", "docker", "helm", "ci", "dağıtım", "yayın", "sürüm", "to prod",
        "to production",
    ],
}
# What 0001 had for the topics this revision changes, for the downgrade.
PREVIOUS = {
    "server": [
        "server", "servers", "vm", "restart", "reboot", "nginx", "apache", "systemd", "service", "uptime", "cpu",
        "disk", "linux", "maintenance window", "sunucu", "makine", "yeniden başlat", "servis", "bakım",
    ],
    "network": [
        "network", "firewall", "vpn", "router", "switch", "latency", "bandwidth", "subnet", "load balancer", "ip",
        "port", "ağ", "güvenlik duvarı", "bağlantı",
    ],
    "backup": ["backup", "restore", "snapshot", "recovery", "yedek", "yedekleme", "geri yükleme"],
    "payments": ["card", "cardholder", "pan", "cvv", "pci", "payment card", "kart", "kredi kartı"],
    "database": [
        "database", "db", "postgres", "postgresql", "mysql", "sql", "query", "replica", "schema", "migration",
        "veritabanı", "tablo",
    ],
    "monitoring": [
        "monitoring", "alert", "alerting", "metrics", "logs", "logging", "grafana", "prometheus", "pager",
        "on call", "on-call", "nöbet", "izleme", "alarm",
    ],
    "deployment": [
        "deploy", "deployment", "release", "rollout", "rollback", "pipeline", "kubernetes", "docker", "helm", "ci",
        "dağıtım", "yayın", "sürüm",
    ],
    "dns": ["dns", "domain", "nameserver", "cname", "mx record", "a record", "ttl", "zone", "resolver", "alan adı"],
}
# fmt: on


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _topics_upsert() -> str:
    rows = ",\n".join(
        f"({_literal(topic)}, ARRAY[{', '.join(_literal(k) for k in words)}])" for topic, words in TOPICS.items()
    )
    return (
        f"INSERT INTO cogmem.default_topics AS d (topic, keywords) VALUES\n{rows}\n"
        "ON CONFLICT (topic) DO UPDATE SET keywords = excluded.keywords;"
    )


def upgrade() -> None:
    execute("""
ALTER TABLE cogmem.bios_rules
    ADD COLUMN rationale text CHECK (rationale <> ''),
    ADD COLUMN translations jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(translations) = 'object'),
    ADD COLUMN digest text;
COMMENT ON COLUMN cogmem.bios_rules.rationale IS 'Why the rule exists, in one line.';
COMMENT ON COLUMN cogmem.bios_rules.translations IS
'The rule in other languages, keyed by text-search configuration (tenants.language), e.g. turkish.';
COMMENT ON COLUMN cogmem.bios_rules.digest IS
'Fingerprint of the whole definition (cogmem._bios_rule_digest); NULL for rules added before 0022.';
DROP INDEX cogmem.bios_rules_scope_category_rule_key;
CREATE UNIQUE INDEX bios_rules_definition_key
ON cogmem.bios_rules ((coalesce(tenant, '')), (coalesce(preset, '')), digest);
CREATE INDEX bios_rules_preset_idx ON cogmem.bios_rules (preset, tenant);

CREATE TABLE cogmem.bios_preset_loads (
    load_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    preset      text NOT NULL CHECK (preset <> ''),
    tenant      text REFERENCES cogmem.tenants ON DELETE CASCADE,
    version     text NOT NULL,
    title       text NOT NULL,
    sha256      text NOT NULL,
    added       integer NOT NULL DEFAULT 0,
    retired     integer NOT NULL DEFAULT 0,
    reinstated  integer NOT NULL DEFAULT 0,
    kept        integer NOT NULL DEFAULT 0,
    loaded_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.bios_preset_loads IS
'Global reference table, append-only: each load of a BIOS preset that changed something (tenant NULL = '
'for every tenant), with the version and checksum of its file.';
CREATE INDEX bios_preset_loads_preset_idx ON cogmem.bios_preset_loads (preset, tenant, load_id);
INSERT INTO cogmem.bios_preset_loads (preset, version, title, sha256, added, loaded_at)
SELECT p.preset, p.version, p.title, p.sha256, p.rules_added, p.loaded_at FROM cogmem.bios_presets AS p;

ALTER TABLE cogmem.bios_rule_events
    DROP CONSTRAINT bios_rule_events_event_check,
    ADD CONSTRAINT bios_rule_events_event_check CHECK (event IN ('retired', 'reinstated')),
    ADD COLUMN load_id bigint REFERENCES cogmem.bios_preset_loads;
COMMENT ON COLUMN cogmem.bios_rule_events.load_id IS 'The preset load that retired or reinstated the rule, if one did.';

CREATE TABLE cogmem.bios_subscriptions (
    subscription_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    preset        text NOT NULL CHECK (preset <> ''),
    tenant        text REFERENCES cogmem.tenants ON DELETE CASCADE,
    subscribed_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.bios_subscriptions IS
'The BIOS presets a tenant takes (tenant NULL = every tenant): only their rules are injected for it.';
CREATE UNIQUE INDEX bios_subscriptions_key ON cogmem.bios_subscriptions (preset, (coalesce(tenant, '')));
INSERT INTO cogmem.bios_subscriptions (preset)
SELECT DISTINCT r.preset FROM cogmem.bios_rules AS r WHERE r.preset IS NOT NULL AND r.tenant IS NULL;

DROP FUNCTION IF EXISTS cogmem.record_bios_preset(text, text, text, text, integer);
DROP FUNCTION IF EXISTS cogmem.add_bios_rule(text, text, text, text, text, text, text[], boolean);
DROP TABLE cogmem.bios_presets;
""")
    execute(_topics_upsert())


def downgrade() -> None:
    added = ", ".join(_literal(t) for t in TOPICS if t not in PREVIOUS)
    restored = ";\n".join(
        f"UPDATE cogmem.default_topics SET keywords = ARRAY[{', '.join(_literal(k) for k in words)}] "
        f"WHERE topic = {_literal(topic)}"
        for topic, words in PREVIOUS.items()
    )
    execute(f"""
DROP VIEW IF EXISTS cogmem.bios_rules_in_force, cogmem.bios_coverage, cogmem.bios_presets, cogmem.active_bios_rules;
DELETE FROM cogmem.default_topics WHERE topic IN ({added});
{restored};
CREATE TABLE cogmem.bios_presets (
    preset text PRIMARY KEY,
    version text NOT NULL,
    title text NOT NULL,
    sha256 text NOT NULL,
    rules_added integer NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.bios_presets IS
'Global reference table: BIOS presets loaded into this database, the version and file checksum of the last load.';
INSERT INTO cogmem.bios_presets (preset, version, title, sha256, rules_added, loaded_at)
SELECT DISTINCT ON (l.preset) l.preset, l.version, l.title, l.sha256,
       sum(l.added) OVER (PARTITION BY l.preset), l.loaded_at
FROM cogmem.bios_preset_loads AS l ORDER BY l.preset, l.load_id DESC;
DROP TABLE cogmem.bios_subscriptions;
-- Append-only tables give up what 0022 added: the triggers refuse it, so they pause for this.
ALTER TABLE cogmem.bios_rule_events DISABLE TRIGGER bios_rule_events_immutable;
DELETE FROM cogmem.bios_rule_events WHERE event = 'reinstated';
ALTER TABLE cogmem.bios_rule_events ENABLE TRIGGER bios_rule_events_immutable;
ALTER TABLE cogmem.bios_rule_events
    DROP COLUMN load_id,
    DROP CONSTRAINT bios_rule_events_event_check,
    ADD CONSTRAINT bios_rule_events_event_check CHECK (event IN ('retired'));
DROP TABLE cogmem.bios_preset_loads;
DROP FUNCTION IF EXISTS cogmem.add_bios_rule(text, text, text, text, text, text, text[], boolean, text, jsonb);
DROP INDEX cogmem.bios_rules_definition_key, cogmem.bios_rules_preset_idx;
ALTER TABLE cogmem.bios_rules DROP COLUMN rationale, DROP COLUMN translations, DROP COLUMN digest;
CREATE UNIQUE INDEX bios_rules_scope_category_rule_key
ON cogmem.bios_rules ((coalesce(tenant, '')), category, md5(rule));
""")
