"""What server software says about its own work: web servers, databases, brokers, containers.

Written for this project from general knowledge of these programs' documented log formats (web
servers' and proxies' error logs, databases' start-up and recovery messages, cluster coordinators'
election notices, message brokers' connection lines, container engines' structured logs, network
daemons' lease and link notices, the kernel's generic lines, PAM and sudo, UPS and SMART daemons);
no line was copied from a real log. Unlike ``log_chatter.py`` these lines mostly state a level, and
they come in the software's own surface styles: pids, bracketed components, ``key=value``, Go-style
``level=info msg="..."``, JSON fragments and Java-style class names.

Each line is labelled by what it is about, not by which program wrote it: a daemon starting or
stopping is ``service``, a client connection ``network``, a checkpoint or a replica ``storage``,
a query or a request's own work ``application``, a certificate or a denied login ``auth``, a
cgroup OOM kill ``kernel``.

- ``ROUTINE``: start-up banners, reloads, connections, checkpoints, elections, leases, rotations:
  ``debug`` to ``notice``, and ``warning`` for the everyday trouble that needs no one (a retry, a
  slow query, a dropped client); never anomalies.
- ``FAULTS``: crashes, corruption, lost quorum, exhausted pools, expired certificates: anomalies at
  ``error`` or ``critical``.

Each event is ``(category, severity, anomaly, apps, templates)``; placeholders are filled from
``logs._FILL`` and ``FILL`` below.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["FAULTS", "FILL", "ROUTINE", "Spec"]

Spec = tuple[str, str, bool, str, tuple[str, ...]]


def _pick(*values: str) -> Callable[[random.Random], str]:
    return lambda r: r.choice(values)


def _int(lo: int, hi: int) -> Callable[[random.Random], str]:
    return lambda r: str(r.randint(lo, hi))


def _float(lo: float, hi: float, places: int = 2) -> Callable[[random.Random], str]:
    return lambda r: f"{r.uniform(lo, hi):.{places}f}"


def _iso(r: random.Random) -> str:
    """An RFC 3339 time stamp, as Go programs and JSON loggers write them."""
    return (
        f"20{r.randint(21, 27)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
        f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}Z"
    )


FILL: dict[str, Callable[[random.Random], str]] = {
    "iso": _iso,
    "ms": _int(1, 999),
    "secs": _float(0.001, 30.0, 3),
    "pct": _float(0.0, 100.0, 1),
    "kb": _int(1, 65536),
    "mb": _int(1, 4096),
    "conns": _int(0, 512),
    "eport": _int(32768, 60999),
    "sig": _pick("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1"),
}

ROUTINE: tuple[Spec, ...] = ()
FAULTS: tuple[Spec, ...] = ()

# ---- 1. web servers and reverse proxies (nginx, lighttpd, Caddy, Traefik, a generic httpd)
FILL.update(
    {
        "vhost": _pick("gw.local", "dashboard.lan", "api.site-3.example", "localhost", "edge.example.net"),
        "uri": _pick(
            "/favicon.ico",
            "/api/v1/status",
            "/metrics",
            "/login",
            "/static/app.js",
            "/robots.txt",
            "/api/v2/devices",
            "/healthz",
            "/ws",
            "/index.html",
            "/.env",
            "/cgi-bin/luci",
        ),
        "http": _pick("200", "204", "301", "302", "304", "400", "401", "403", "404", "499", "502"),
        "upstream": _pick("127.0.0.1:1880", "127.0.0.1:8086", "unix:/run/app.sock", "10.0.0.12:3000"),
        "cert": _pick("/etc/ssl/certs/gw.pem", "/etc/nginx/tls/fullchain.pem", "/var/lib/caddy/site.crt"),
        "router": _pick("dashboard@file", "api@docker", "metrics@internal", "websecure-ui@file"),
    }
)
ROUTINE += (
    (
        "service",
        "notice",
        False,
        "nginx httpd lighttpd",
        (
            'using the "epoll" event method',
            "start worker processes",
            "start worker process {pid}",
        ),
    ),
    (
        "service",
        "notice",
        False,
        "nginx httpd lighttpd",
        (
            "signal {n2} ({sig}) received, reconfiguring",
            "reconfiguring",
            "gracefully shutting down",
        ),
    ),
    (
        "service",
        "notice",
        False,
        "nginx httpd lighttpd",
        (
            "worker process {pid} exited with code 0",
            "signal {n2} (SIGCHLD) received from {pid}",
            "exiting",
        ),
    ),
    (
        "service",
        "info",
        False,
        "httpd lighttpd caddy traefik",
        (
            "server started (pid {pid}), {n1} worker processes",
            "graceful restart requested, doing restart",
            "caught {sig}, shutting down",
            "child pid {pid} exit signal Terminated (15)",
        ),
    ),
    (
        "service",
        "info",
        False,
        "httpd lighttpd caddy traefik",
        (
            "server idle: {n2} idle workers, {n1} busy; spawning {n1} children",
            '{iso} {{"level":"info","ts":{ts}.{n3},"msg":"serving initial configuration"}}',
            'level=info msg="Configuration loaded from file: /etc/traefik/traefik.yml"',
            'level=info msg="Starting provider *file.Provider"',
        ),
    ),
    (
        "service",
        "debug",
        False,
        "nginx httpd",
        (
            "worker pool: {n2} of {n3} slots in use, {n2} idle",
            "reaped worker {pid}, {n1} remaining",
            "cache manager process {pid} started",
            "cache loader process {pid} exited",
        ),
    ),
    (
        "application",
        "info",
        False,
        "nginx lighttpd caddy httpd",
        (
            '{ip} - - "{verb} {uri} HTTP/1.1" {http} {n4} "-" "curl/8.{n1}.0"',
            "request {verb} {uri} handled in {ms} ms, status {http}",
            "{iso} "
            '{{"level":"info","logger":"http.log.access","request":{{"method":"{verb}","uri":"{uri}"}},"status":{http}}}',
        ),
    ),
    (
        "application",
        "warning",
        False,
        "nginx lighttpd httpd",
        (
            'open() "/usr/share/nginx/html{uri}" failed (2: No such file or directory), client: {ip}, '
            "server: {vhost}",
            "File not found: /var/www/html{uri}",
            "client {ip} sent too large body: {n5} bytes, limit 1048576",
            "{uri}: no handler for {verb}, returning 405",
        ),
    ),
    (
        "network",
        "warning",
        False,
        "nginx traefik caddy",
        (
            "upstream timed out (110: Connection timed out) while reading response header from upstream, "
            "upstream: {upstream}",
            'level=warning msg="Retrying request to {upstream}" routerName={router}',
            "client {ip}:{eport} closed keepalive connection",
        ),
    ),
    (
        "auth",
        "info",
        False,
        "nginx caddy traefik lighttpd",
        (
            "loaded TLS certificate {cert} for {vhost}",
            '{iso} {{"level":"info","logger":"tls","msg":"certificate obtained '
            'successfully","identifier":"{vhost}"}}',
            'level=info msg="Adding certificate for domain(s) {vhost}"',
        ),
    ),
)
FAULTS += (
    (
        "network",
        "error",
        True,
        "nginx traefik caddy httpd",
        (
            "connect() failed (111: Connection refused) while connecting to upstream, upstream: {upstream}",
            "no live upstreams while connecting to upstream, client: {ip}, server: {vhost}",
            'level=error msg="Error while dialing backend" error="dial tcp {upstream}: connect: connection '
            'refused"',
        ),
    ),
    (
        "service",
        "critical",
        True,
        "nginx httpd lighttpd",
        (
            "bind() to 0.0.0.0:{port} failed (98: Address already in use)",
            "worker process {pid} exited on signal 11 (core dumped)",
            "could not bind to address 0.0.0.0:{port}; no listening sockets available, shutting down",
        ),
    ),
    (
        "auth",
        "error",
        True,
        "nginx caddy traefik",
        (
            'cannot load certificate "{cert}": PEM_read_bio_X509_AUX() failed',
            "SSL certificate {cert} for {vhost} has expired",
            '{iso} {{"level":"error","logger":"tls","msg":"could not renew '
            'certificate","identifier":"{vhost}"}}',
        ),
    ),
)

# ---- 2. databases (PostgreSQL, MariaDB/MySQL, Redis, InfluxDB, MongoDB)
FILL.update(
    {
        "lsn": lambda r: f"{r.randint(0, 15):X}/{r.randint(0, 0xFFFFFFF):X}",
        "walseg": lambda r: f"0000000{r.randint(1, 3)}0000000{r.randint(0, 9)}000000{r.randint(10, 99)}",
        "db": _pick("telemetry", "edge", "metrics", "events", "app", "postgres", "history"),
        "table": _pick(
            "readings", "devices", "alarms", "audit_log", "sessions", "jobs", "pg_catalog.pg_class"
        ),
        "dbuser": _pick("edge", "app", "grafana", "reporter", "telegraf", "replicator"),
        "xid": _int(100000, 99999999),
    }
)
ROUTINE += (
    (
        "service",
        "info",
        False,
        "postgres postgresql mariadbd mysqld",
        (
            "starting PostgreSQL {n2}.{n1} on aarch64-unknown-linux-gnu, compiled by gcc, 64-bit",
            'listening on IPv4 address "0.0.0.0", port 5432',
            "database system is ready to accept connections",
        ),
    ),
    (
        "service",
        "info",
        False,
        "postgres postgresql mariadbd mysqld",
        (
            "received fast shutdown request",
            "aborting any active transactions",
            "database system is shut down",
        ),
    ),
    (
        "service",
        "info",
        False,
        "postgres postgresql mariadbd mysqld",
        (
            "mariadbd (server 10.{n1}.{n2}-MariaDB) starting as process {pid} ...",
            "/usr/sbin/mariadbd: ready for connections. Version: '10.{n1}.{n2}-MariaDB'  socket: "
            "'/run/mysqld/mysqld.sock'  port: 3306",
            "/usr/sbin/mysqld: Normal shutdown",
        ),
    ),
    (
        "service",
        "notice",
        False,
        "redis-server redis influxd mongod",
        (
            "Redis version={ver}, bits=64, commit=00000000, modified=0, pid={pid}, just started",
            "Server initialized",
            "Ready to accept connections tcp",
            "Received SIGTERM scheduling shutdown...",
        ),
    ),
    (
        "service",
        "notice",
        False,
        "redis-server redis influxd mongod",
        (
            "Redis is now ready to exit, bye bye...",
            'lvl=info msg="Welcome to InfluxDB" log_id={hex8} version={ver}',
            "{iso} "
            '{{"t":{{"$date":"{iso}"}},"s":"I","c":"NETWORK","id":{n5},"ctx":"listener","msg":"Waiting for '
            'connections"}}',
        ),
    ),
    (
        "storage",
        "info",
        False,
        "mariadbd mysqld",
        (
            "InnoDB: Initializing buffer pool, total size = {mb}.000MiB, chunk size = 128.000MiB",
            "InnoDB: Completed initialization of buffer pool",
            "InnoDB: Starting crash recovery from checkpoint LSN={n8}",
            "InnoDB: Starting final batch to recover {n3} pages from redo log.",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "mariadbd mysqld",
        (
            "InnoDB: {n3} rollback segments are active.",
            "InnoDB: Buffer pool(s) load completed at {hms}",
            "InnoDB: Dumping buffer pool(s) to /var/lib/mysql/ib_buffer_pool",
            "InnoDB: Shutdown completed; log sequence number {n8}; transaction id {xid}",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "postgres postgresql redis-server mongod influxd",
        (
            "checkpoint starting: time",
            "checkpoint complete: wrote {n3} buffers ({pct}%); 0 WAL file(s) added, 0 removed, {n1} "
            "recycled; write={secs} s",
            "database system was not properly shut down; automatic recovery in progress",
            "redo starts at {lsn}",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "postgres postgresql redis-server mongod influxd",
        (
            "redo done at {lsn} system usage: CPU: user: 0.{n2} s",
            'automatic vacuum of table "{db}.public.{table}": index scans: {n1}',
            "DB saved on disk",
            "Background saving started by pid {pid}",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "postgres postgresql redis-server mongod influxd",
        (
            "Background AOF rewrite finished successfully",
            'lvl=info msg="Compacted file" log_id={hex8} tsm1_level={n1} '
            "tsm1_file=/var/lib/influxdb/data/{db}/autogen/{n2}/{n6}.tsm",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "postgres redis-server mongod mariadbd",
        (
            "started streaming WAL from primary at {lsn} on timeline {n1}",
            'restored WAL segment "{walseg}" from archive',
            "MASTER <-> REPLICA sync: Finished with success",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "postgres redis-server mongod mariadbd",
        (
            "Replica {ip}:6379 asks for synchronization",
            "Slave I/O thread: connected to master 'repl@{ip}:3306', replication started in log "
            "'mysql-bin.{n6}'",
        ),
    ),
    (
        "network",
        "info",
        False,
        "postgres mariadbd redis-server mongod",
        (
            "connection received: host={ip} port={eport}",
            "connection authorized: user={dbuser} database={db} application_name=psql",
            "disconnection: session time: 0:00:{n2}.{n3} user={dbuser} database={db} host={ip} port={eport}",
        ),
    ),
    (
        "network",
        "info",
        False,
        "postgres mariadbd redis-server mongod",
        (
            "Accepted {ip}:{eport}",
            '{iso} {{"s":"I","c":"NETWORK","msg":"Connection '
            'ended","attr":{{"remote":"{ip}:{eport}","connectionCount":{conns}}}}}',
        ),
    ),
    (
        "application",
        "warning",
        False,
        "postgres mariadbd mongod",
        (
            "duration: {n4}.{n3} ms  statement: SELECT * FROM {table} WHERE ts > now() - interval '1 day'",
            "Aborted connection {n4} to db: '{db}' user: '{dbuser}' host: '{ip}' (Got timeout reading "
            "communication packets)",
            "deadlock detected; transaction {xid} rolled back",
            '{iso} {{"s":"I","c":"COMMAND","msg":"Slow '
            'query","attr":{{"ns":"{db}.{table}","durationMillis":{n4}}}}}',
        ),
    ),
    (
        "auth",
        "warning",
        False,
        "postgres mariadbd mongod",
        (
            'password authentication failed for user "{baduser}"',
            "Access denied for user '{baduser}'@'{ip}' (using password: YES)",
        ),
    ),
)
FAULTS += (
    (
        "storage",
        "critical",
        True,
        "postgres mariadbd mysqld mongod",
        (
            'could not write to file "pg_wal/xlogtemp.{pid}": No space left on device',
            "invalid record length at {lsn}: wanted 24, got 0",
            "InnoDB: Database page corruption on disk or a failed file read of page [page id: space={n2}, "
            "page number={n4}]",
            "WiredTiger error: read checksum error for block at offset {n6}",
        ),
    ),
    (
        "service",
        "error",
        True,
        "postgres redis-server mariadbd",
        (
            "server process (PID {pid}) was terminated by signal 9: Killed",
            "terminating any other active server processes",
            "Can't open the append-only file: Permission denied",
            "mariadbd got signal 6 ;",
        ),
    ),
)

# ---- 3. cluster coordination (etcd, Consul, raft libraries, Kafka controllers, Redis Sentinel)
FILL.update(
    {
        "member": lambda r: f"{r.randint(1, 2**63):x}",
        "peer": _pick("node-1", "node-2", "node-3", "edge-a", "edge-b", "core-01", "core-02"),
        "term": _int(1, 4000),
        "raftidx": _int(1000, 9999999),
        "broker": _int(0, 5),
        "master": _pick("mymaster", "cache-main", "sessions"),
    }
)
ROUTINE += (
    (
        "service",
        "info",
        False,
        "etcd consul",
        (
            '{iso} {{"level":"info","ts":"{iso}","caller":"etcdmain/etcd.go:{n2}","msg":"starting an etcd '
            'server","etcd-version":"3.5.{n1}"}}',
            "==> Starting Consul agent...",
            "consul: Consul agent running!",
        ),
    ),
    (
        "service",
        "info",
        False,
        "etcd consul kafka sentinel",
        (
            '{iso} {{"level":"info","msg":"received signal; shutting down","signal":"terminated"}}',
            "[INFO]  agent: Requesting shutdown",
            "[KafkaServer id={broker}] shut down completed (kafka.server.KafkaServer)",
            "Sentinel ID is {hex16}{hex16}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "etcd raft consul",
        (
            "raft.node: {member} elected leader {member} at term {term}",
            "{member} became candidate at term {term}",
            "{member} received MsgVoteResp from {member} at term {term}",
            "{member} became follower at term {term}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "consul nomad raft",
        (
            '[INFO]  agent.server.raft: entering candidate state: node="Node at {ip}:8300 [Candidate]" '
            "term={term}",
            "[INFO]  agent.server.raft: election won: term={term} tally={n1}",
            "[INFO]  agent.server: cluster leadership acquired",
            "[INFO]  agent.server: New leader elected: payload={peer}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "kafka",
        (
            "[Controller id={broker}] {broker} successfully elected as the controller. Epoch incremented "
            "to {n2}",
            "[Partition telemetry-{n1} broker={broker}] ISR updated to {broker},{broker}",
            "[GroupCoordinator {broker}]: Preparing to rebalance group edge-consumers in state "
            "PreparingRebalance",
            "[GroupCoordinator {broker}]: Stabilized group edge-consumers generation {n2}",
        ),
    ),
    (
        "application",
        "notice",
        False,
        "sentinel redis-sentinel",
        (
            "+monitor master {master} {ip} 6379 quorum 2",
            "+slave slave {ip}:6379 {ip} 6379 @ {master} {ip} 6379",
            "+sentinel sentinel {hex16} {ip} 26379 @ {master} {ip} 6379",
            "+new-epoch {n2}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "etcd consul",
        (
            '{iso} {{"level":"info","msg":"added '
            'member","cluster-id":"{member}","added-peer-id":"{member}"}}',
            "[INFO]  agent.server.serf.lan: serf: EventMemberJoin: {peer} {ip}",
            "[INFO]  agent.server.serf.lan: serf: EventMemberLeave: {peer} {ip}",
            "[INFO]  agent.server: member joined, marking health alive: member={peer}",
        ),
    ),
    (
        "application",
        "debug",
        False,
        "etcd raft consul",
        (
            "[DEBUG] agent.server.raft: heartbeat sent to {peer}, index={raftidx}",
            "{member} [logterm: {term}, index: {raftidx}] sent MsgApp to {member}",
            "[DEBUG] agent: Node info in sync",
            "[DEBUG] agent: Check status updated: check=service:{svc} status=passing",
        ),
    ),
    (
        "application",
        "warning",
        False,
        "etcd consul sentinel",
        (
            '{iso} {{"level":"warn","msg":"apply request took too '
            'long","took":"{ms}.{n3}ms","expected-duration":"100ms"}}',
            "[WARN]  agent: Check is now critical: check=service:{svc}",
            "+sdown slave {ip}:6379 {ip} 6379 @ {master} {ip} 6379",
            "[WARN]  agent.server.memberlist.lan: memberlist: Refuting a suspect message (from: {peer})",
        ),
    ),
    (
        "application",
        "info",
        False,
        "consul etcd",
        (
            "[INFO]  agent.server.session: session expired: id={uuid}",
            '{iso} {{"level":"info","msg":"revoked lease","lease-id":"{hex16}"}}',
            "[INFO]  agent.server.fsm: snapshot created: duration={ms}ms",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "etcd consul raft",
        (
            '{iso} {{"level":"info","msg":"saved snapshot","snapshot-index":{raftidx}}}',
            '{iso} {{"level":"info","msg":"compacted raft logs","index":{raftidx}}}',
            "[INFO]  agent.server.raft: snapshot complete up to: index={raftidx}",
            "[INFO]  snapshot: creating new snapshot: "
            "path=/opt/consul/raft/snapshots/{term}-{raftidx}-{ts}.tmp",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "etcd kafka",
        (
            '{iso} {{"level":"info","msg":"finished scheduled '
            'compaction","compact-revision":{raftidx},"took":"{ms}ms"}}',
            "[Log partition=telemetry-{n1}, dir=/var/lib/kafka] Rolled new log segment at offset {n7} in "
            "{ms} ms.",
            "[LocalLog partition=telemetry-{n1}] Deleting segment files LogSegment(baseOffset={n6})",
        ),
    ),
    (
        "network",
        "info",
        False,
        "etcd consul raft",
        (
            '{iso} {{"level":"info","msg":"peer became active","peer-id":"{member}"}}',
            '{iso} {{"level":"info","msg":"established TCP streaming connection with remote '
            'peer","remote-peer-id":"{member}"}}',
            "[INFO]  agent.server.raft: added peer, starting replication: peer={peer} address={ip}:8300",
        ),
    ),
    (
        "network",
        "warning",
        False,
        "etcd consul",
        (
            '{iso} {{"level":"warn","msg":"lost TCP streaming connection with remote '
            'peer","remote-peer-id":"{member}"}}',
            "[WARN]  agent.server.raft: failed to contact: server-id={peer} time={secs}s",
            "[WARN]  agent: Coordinate update blocked by rate limit, retrying",
        ),
    ),
)
FAULTS += (
    (
        "application",
        "critical",
        True,
        "etcd consul raft",
        (
            '{iso} {{"level":"error","msg":"lost quorum, cluster is '
            'unavailable","members":{n1},"healthy":1}}',
            "[ERROR] agent: Coordinate update error: No cluster leader",
            "[ERROR] agent.server.raft: failed to make requestVote RPC: target={peer} error=timeout",
        ),
    ),
    (
        "application",
        "error",
        True,
        "sentinel kafka",
        (
            "+odown master {master} {ip} 6379 #quorum 2/2",
            "-failover-abort-no-good-slave master {master} {ip} 6379",
            "[Controller id={broker}] Partition telemetry-{n1} has no live replicas, going offline",
        ),
    ),
    (
        "storage",
        "critical",
        True,
        "etcd consul",
        (
            '{iso} {{"level":"fatal","msg":"failed to recover v3 backend from snapshot","error":"snapshot '
            "file "
            'not found"}}',
            '{iso} {{"level":"error","msg":"database space exceeded","quota-size-bytes":2147483648}}',
            '[ERROR] agent.server.raft: failed to take snapshot: error="no space left on device"',
        ),
    ),
)

# ---- 4. message brokers (mosquitto, RabbitMQ, NATS, Kafka)
FILL.update(
    {
        "client": lambda r: (
            r.choice(("gw", "plc", "meter", "cam", "ha", "nodered", "auto")) + f"-{r.randint(1, 999)}"
        ),
        "topic": lambda r: r.choice(
            (
                "site/+/telemetry",
                f"devices/{r.randint(1, 99)}/state",
                "alarms/#",
                f"cmd/relay/{r.randint(1, 8)}",
                "$SYS/broker/uptime",
            )
        ),
        "queue": lambda r: r.choice(
            (
                "telemetry.in",
                "events",
                "commands",
                f"amq.gen-{r.getrandbits(32):08x}",
                "dead-letter",
                "ota.jobs",
            )
        ),
        "vhost_mq": _pick("/", "edge", "site-3", "ops"),
        "natsid": lambda r: "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(20)),
    }
)
ROUTINE += (
    (
        "network",
        "info",
        False,
        "mosquitto",
        (
            "New connection from {ip}:{eport} on port 1883.",
            "New client connected from {ip}:{eport} as {client} (p2, c1, k60).",
            "Client {client} disconnected.",
            "Opening ipv4 listen socket on port 8883.",
        ),
    ),
    (
        "network",
        "warning",
        False,
        "mosquitto",
        (
            "Client {client} has exceeded timeout, disconnecting.",
            "Client {client} closed its connection.",
            "Client {client} already connected, closing old connection.",
            "Socket error on client {client}, disconnecting.",
        ),
    ),
    (
        "network",
        "info",
        False,
        "rabbitmq-server beam.smp",
        (
            "accepting AMQP connection <0.{n4}.0> ({ip}:{eport} -> {ip}:5672)",
            "connection <0.{n4}.0> ({ip}:{eport} -> {ip}:5672): user 'edge' authenticated and granted "
            "access to vhost '{vhost_mq}'",
            "closing AMQP connection <0.{n4}.0> ({ip}:{eport} -> {ip}:5672, vhost: '{vhost_mq}', user: "
            "'edge')",
            "started TCP listener on [::]:5672",
        ),
    ),
    (
        "network",
        "info",
        False,
        "nats-server nats",
        (
            "[INF] Listening for client connections on 0.0.0.0:4222",
            "[INF] Listening for route connections on 0.0.0.0:6222",
            "[DBG] {ip}:{eport} - cid:{n3} - Client connection created",
            "[DBG] {ip}:{eport} - cid:{n3} - Client connection closed: Client Closed",
        ),
    ),
    (
        "network",
        "info",
        False,
        "kafka",
        (
            "[SocketServer listenerType=BROKER, nodeId={broker}] Created data-plane acceptor and "
            "processors for endpoint : ListenerName(PLAINTEXT)",
            "[Consumer clientId={client}, groupId=edge-consumers] Discovered group coordinator {ip}:9092 "
            "(id: {n3} rack: null)",
        ),
    ),
    (
        "service",
        "info",
        False,
        "rabbitmq-server beam.smp",
        (
            "Starting RabbitMQ {ver} on Erlang 26.{n1}",
            "Server startup complete; {n1} plugins started.",
            "Plugins changed; enabled [rabbitmq_mqtt, rabbitmq_management]",
            "Adding vhost '{vhost_mq}' (description: '', tags: [])",
        ),
    ),
    (
        "service",
        "notice",
        False,
        "mosquitto nats-server",
        (
            "mosquitto version {ver} starting",
            "mosquitto version {ver} terminating",
            "Config loaded from /etc/mosquitto/mosquitto.conf.",
            "[INF] Starting nats-server",
        ),
    ),
    (
        "service",
        "info",
        False,
        "nats-server rabbitmq-server",
        (
            "[INF]   Version:  2.10.{n1}",
            "[INF] Server is ready",
            "[INF] Initiating Shutdown...",
            "RabbitMQ is asked to stop...",
        ),
    ),
    (
        "application",
        "info",
        False,
        "rabbitmq-server mosquitto nats-server",
        (
            "queue '{queue}' in vhost '{vhost_mq}': declared, durable, {n3} messages ready",
            "{client} {n1} {topic}",
            "Received SUBSCRIBE from {client}",
            "Sending PUBLISH to {client} (d0, q{n1}, r0, m{n2}, '{topic}', ... ({n3} bytes))",
        ),
    ),
    (
        "application",
        "debug",
        False,
        "mosquitto nats-server kafka",
        (
            "Received PINGREQ from {client}",
            "Sending PINGRESP to {client}",
            "[TRC] {ip}:{eport} - cid:{n3} - <<- [PUB {topic} {n3}]",
            "[Consumer clientId={client}, groupId=edge-consumers] Committed offset {n6} for partition "
            "telemetry-{n1}",
        ),
    ),
    (
        "application",
        "warning",
        False,
        "rabbitmq-server nats-server mosquitto",
        (
            "memory resource limit alarm set on node rabbit@{peer}. Publishers will be blocked until this "
            "alarm clears",
            "[WRN] {ip}:{eport} - cid:{n3} - Slow Consumer Detected: WriteDeadline of 10s exceeded",
            "Outgoing messages are being dropped for client {client}.",
            "queue '{queue}' in vhost '{vhost_mq}': message rate {n4}/s exceeds consumer rate {n3}/s",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "mosquitto rabbitmq-server nats-server",
        (
            "Saving in-memory database to /var/lib/mosquitto/mosquitto.db.",
            "Restoring persistent state from /var/lib/mosquitto/mosquitto.db",
            'Message store "{hex16}/msg_store_persistent": rebuilding indices from scratch',
            "[INF] Starting JetStream; storage directory /var/lib/nats/jetstream, max file store {n2} GB",
        ),
    ),
    (
        "auth",
        "warning",
        False,
        "mosquitto rabbitmq-server nats-server",
        (
            "Denied PUBLISH from {client} (d0, q1, r0, m{n2}, '{topic}', ... ({n2} bytes))",
            "Client {client} disconnected, not authorised.",
            "HTTP access denied: user '{baduser}' - invalid credentials",
            "[ERR] {ip}:{eport} - cid:{n3} - authorization violation",
        ),
    ),
)
FAULTS += (
    (
        "storage",
        "error",
        True,
        "mosquitto rabbitmq-server nats-server",
        (
            "Error saving in-memory database, unable to open /var/lib/mosquitto/mosquitto.db.new for "
            "writing.",
            "Unable to restore persistent database: corrupt or truncated file",
            "[ERR] JetStream out of resources, will be DISABLED",
        ),
    ),
    (
        "service",
        "critical",
        True,
        "rabbitmq-server mosquitto beam.smp",
        (
            "Error: Unable to open config file /etc/mosquitto/mosquitto.conf.",
            "BOOT FAILED: timeout waiting for tables",
            "Kernel pid terminated (application_controller) ({{application_start_failure,rabbit}})",
        ),
    ),
)

# ---- 5. containers (Docker, containerd, k3s/kubelet, podman)
FILL.update(
    {
        "cid": lambda r: f"{r.getrandbits(64):016x}{r.getrandbits(64):016x}"[: r.choice((12, 32))],
        "image": _pick(
            "docker.io/library/eclipse-mosquitto:2",
            "ghcr.io/example/edge-agent:1.4",
            "nodered/node-red:3.1",
            "docker.io/library/redis:7-alpine",
            "registry.local:5000/modbus-bridge:latest",
            "rancher/mirrored-pause:3.6",
        ),
        "ctr": _pick(
            "mosquitto", "node-red", "edge-agent", "redis", "influxdb", "modbus-bridge", "traefik", "grafana"
        ),
        "pod": lambda r: (
            r.choice(("coredns", "metrics-server", "traefik", "edge-agent", "local-path-provisioner"))
            + f"-{r.getrandbits(28):07x}-{r.getrandbits(20):05x}"
        ),
        "veth": lambda r: f"veth{r.getrandbits(28):07x}",
        "digest": lambda r: f"sha256:{r.getrandbits(128):032x}{r.getrandbits(128):032x}",
    }
)
ROUTINE += (
    (
        "service",
        "info",
        False,
        "dockerd containerd",
        (
            'time="{iso}" level=info msg="Starting up"',
            'time="{iso}" level=info msg="Docker daemon" commit={hex6} graphdriver=overlay2 '
            "version=24.0.{n1}",
            'time="{iso}" level=info msg="API listen on /run/docker.sock"',
            'time="{iso}" level=info msg="containerd successfully booted in 0.{n3}s"',
        ),
    ),
    (
        "service",
        "info",
        False,
        "dockerd containerd podman",
        (
            'time="{iso}" level=info msg="loading plugin \\"io.containerd.runtime.v2.task\\"..." '
            "type=io.containerd.runtime.v2",
            'time="{iso}" level=info msg="starting signal loop" namespace=moby '
            "path=/run/containerd/io.containerd.runtime.v2.task/moby/{cid} pid={pid}",
            'time="{iso}" level=info msg="shim disconnected" id={cid} namespace=moby',
            "container {cid} died, exit status 0",
        ),
    ),
    (
        "service",
        "info",
        False,
        "podman conmon k3s kubelet",
        (
            "Started libcontainer container {cid}.",
            "container start {cid} (image={image}, name={ctr})",
            "container died {cid} (image={image}, name={ctr})",
            'I{n4} {hms}.{n6} {n4} kuberuntime_container.go:{n3}] "Killing container with a grace period" '
            'pod="kube-system/{pod}"',
        ),
    ),
    (
        "service",
        "notice",
        False,
        "k3s kubelet",
        (
            'time="{iso}" level=info msg="Starting k3s v1.{n2}.{n1}+k3s1"',
            'time="{iso}" level=info msg="k3s is up and running"',
            'I{n4} {hms}.{n6} {n4} kubelet.go:{n4}] "SyncLoop ADD" source="api" pods=["kube-system/{pod}"]',
            'I{n4} {hms}.{n6} {n4} kubelet.go:{n4}] "SyncLoop DELETE" source="api" '
            'pods=["kube-system/{pod}"]',
        ),
    ),
    (
        "service",
        "warning",
        False,
        "k3s kubelet dockerd",
        (
            'I{n4} {hms}.{n6} {n4} pod_workers.go:{n4}] "Error syncing pod, skipping" '
            'pod="kube-system/{pod}" err="CrashLoopBackOff"',
            'time="{iso}" level=warning msg="Health check for container {cid} error: context deadline '
            'exceeded"',
            "Back-off restarting failed container {ctr} in pod {pod}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "dockerd containerd podman k3s",
        (
            'time="{iso}" level=info msg="PullImage \\"{image}\\""',
            'time="{iso}" level=info msg="ImageCreate event name:\\"{image}\\""',
            "Trying to pull {image}...",
            "Digest: {digest}",
        ),
    ),
    (
        "application",
        "info",
        False,
        "dockerd podman",
        (
            "Status: Downloaded newer image for {image}",
            "Copying blob {digest}",
            "Writing manifest to image destination",
            'time="{iso}" level=info msg="Layer {digest} cleaned up"',
        ),
    ),
    (
        "storage",
        "info",
        False,
        "dockerd containerd podman",
        (
            'time="{iso}" level=info msg="overlay2: mount {path}/overlay2/{cid}/merged"',
            'time="{iso}" level=info msg="Removing stale sandbox {cid}"',
            "volume {ctr}-data created (driver=local, mountpoint=/var/lib/docker/volumes/{ctr}-data/_data)",
            "Deleted unused volumes: {n2}, total reclaimed space: {mb}MB",
        ),
    ),
    (
        "storage",
        "debug",
        False,
        "k3s kubelet",
        (
            'I{n4} {hms}.{n6} {n4} reconciler.go:{n3}] "MountVolume.SetUp succeeded for volume '
            '\\"config\\"" pod="kube-system/{pod}"',
            'I{n4} {hms}.{n6} {n4} reconciler.go:{n3}] "UnmountVolume.TearDown succeeded for volume '
            '\\"data\\""',
            'I{n4} {hms}.{n6} {n4} image_gc_manager.go:{n3}] "Disk usage on image filesystem is over the '
            'high threshold, trying to free bytes" usage={pct}',
        ),
    ),
    (
        "network",
        "info",
        False,
        "kernel dockerd k3s",
        (
            "docker0: port {n1}({veth}) entered blocking state",
            "docker0: port {n1}({veth}) entered forwarding state",
            "cni0: port {n1}({veth}) entered disabled state",
            "device {veth} left promiscuous mode",
        ),
    ),
    (
        "network",
        "info",
        False,
        "dockerd k3s flannel",
        (
            'time="{iso}" level=info msg="Default bridge (docker0) is assigned with an IP address '
            '172.17.0.0/16"',
            'time="{iso}" level=info msg="Loading containers: done."',
            'I{n4} {hms}.{n6} {n4} vxlan_network.go:{n2}] "watching for new subnet leases"',
            "eth0: renamed from {veth}",
        ),
    ),
)
FAULTS += (
    (
        "kernel",
        "critical",
        True,
        "kernel",
        (
            "Memory cgroup out of memory: Killed process {pid} ({proc}) total-vm:{n6}kB, anon-rss:{n6}kB, "
            "file-rss:{n4}kB",
            "{proc} invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task_memcg=/system.slice/docker-{cid}.scope,task={proc},pid={pid}",
        ),
    ),
    (
        "storage",
        "error",
        True,
        "dockerd containerd podman",
        (
            'time="{iso}" level=error msg="failed to mount overlay: no space left on device" '
            "storage-driver=overlay2",
            'time="{iso}" level=error msg="layer not found" digest={digest}',
            "Error: writing blob: storing blob to file: write /var/tmp/storage{n6}/1: no space left on "
            "device",
        ),
    ),
    (
        "service",
        "error",
        True,
        "dockerd k3s kubelet",
        (
            'time="{iso}" level=error msg="Handler for POST /v1.43/containers/{cid}/start returned error: '
            'OCI runtime create failed"',
            'time="{iso}" level=fatal msg="failed to start daemon: pid file found, ensure docker is not '
            'running"',
            'E{n4} {hms}.{n6} {n4} kubelet.go:{n4}] "Container runtime network not ready" '
            'networkReady="NetworkReady=false"',
        ),
    ),
    (
        "application",
        "error",
        True,
        "dockerd containerd podman k3s",
        (
            'time="{iso}" level=error msg="PullImage \\"{image}\\" failed" error="failed to resolve '
            'reference: not found"',
            "Error response from daemon: manifest for {image} not found: manifest unknown",
            'E{n4} {hms}.{n6} {n4} pod_workers.go:{n4}] "ErrImagePull" pod="kube-system/{pod}"',
        ),
    ),
)

# ---- 6. network daemons (NetworkManager, networkd, dhcpcd, dnsmasq, resolved, time, avahi, VPNs) and radios
FILL.update(
    {
        "domain": _pick(
            "pool.ntp.org", "api.example.net", "updates.example.com", "broker.local", "time.cloudflare.com"
        ),
        "conn": _pick("Wired connection 1", "lan0", "wwan-apn", "site-vpn", "eth0-static"),
        "ntpsrc": _pick("ntp1.example.net", "192.168.1.1", "time.nist.gov", "0.pool.ntp.org"),
        "wgpeer": lambda r: "".join(
            r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl0123456789+/") for _ in range(8)
        ),
        "bdaddr": lambda r: ":".join(f"{r.randint(0, 255):02X}" for _ in range(6)),
        "imei": _int(350000000000000, 359999999999999),
    }
)
ROUTINE += (
    (
        "network",
        "info",
        False,
        "NetworkManager",
        (
            "<info>  [{ts}.{n4}] device ({iface}): state change: prepare -> config (reason 'none', "
            "sys-iface-state: 'managed')",
            "<info>  [{ts}.{n4}] device ({iface}): Activation: successful, device activated.",
            "<info>  [{ts}.{n4}] dhcp4 ({iface}): state changed new lease, address={ip}",
            "<info>  [{ts}.{n4}] manager: NetworkManager state is now CONNECTED_GLOBAL",
        ),
    ),
    (
        "network",
        "info",
        False,
        "systemd-networkd",
        (
            "{iface}: Link UP",
            "{iface}: Gained carrier",
            "{iface}: DHCPv4 address {ip}/24, gateway {ip} acquired from {ip}",
            "{iface}: Gained IPv6LL",
        ),
    ),
    (
        "network",
        "info",
        False,
        "dhcpcd dhclient udhcpc",
        (
            "{iface}: leased {ip} for 86400 seconds",
            "{iface}: adding route to {ip}/24",
            "DHCPREQUEST for {ip} on {iface} to {ip} port 67",
            "bound to {ip} -- renewal in {n4} seconds.",
        ),
    ),
    (
        "network",
        "info",
        False,
        "dnsmasq dnsmasq-dhcp",
        (
            "DHCPDISCOVER(br-lan) {mac}",
            "DHCPACK(br-lan) {ip} {mac} {client}",
            "reading /etc/resolv.conf",
            "using nameserver {ip}#53",
        ),
    ),
    (
        "network",
        "debug",
        False,
        "dnsmasq systemd-resolved",
        (
            "query[A] {domain} from {ip}",
            "forwarded {domain} to {ip}",
            "reply {domain} is {ip}",
            "Using degraded feature set UDP instead of UDP+EDNS0 for DNS server {ip}.",
        ),
    ),
    (
        "network",
        "info",
        False,
        "chronyd ntpd systemd-timesyncd",
        (
            "Selected source {ip} ({ntpsrc})",
            "System clock wrong by {secs} seconds",
            "Initial synchronization to time server {ip}:123 ({ntpsrc}).",
            "Contacted time server {ip}:123 ({ntpsrc}).",
        ),
    ),
    (
        "network",
        "info",
        False,
        "avahi-daemon",
        (
            "Joining mDNS multicast group on interface {iface}.IPv4 with address {ip}.",
            "New relevant interface {iface}.IPv4 for mDNS.",
            "Registering new address record for {ip} on {iface}.IPv4.",
            "Server startup complete. Host name is {client}.local. Local service cookie is {n8}.",
        ),
    ),
    (
        "network",
        "warning",
        False,
        "kernel ufw nft",
        (
            "[UFW BLOCK] IN={iface} OUT= MAC={mac} SRC={ip} DST={ip} LEN={n2} PROTO=TCP SPT={eport} "
            "DPT={port}",
            "nft drop: IN={iface} OUT= SRC={ip} DST={ip} PROTO=UDP SPT={eport} DPT=161",
            "chronyd: Can't synchronise: no selectable sources",
            "dnsmasq: possible DNS-rebind attack detected: {domain}",
        ),
    ),
    (
        "network",
        "info",
        False,
        "pppd openvpn wg-quick",
        (
            "local  IP address {ip}",
            "remote IP address {ip}",
            "Initialization Sequence Completed",
            "[#] ip link add wg0 type wireguard",
        ),
    ),
    (
        "network",
        "notice",
        False,
        "openvpn pppd kernel",
        (
            "TLS: Initial packet from [AF_INET]{ip}:1194, sid={hex8} {hex8}",
            "Peer Connection Initiated with [AF_INET]{ip}:1194",
            "wireguard: wg0: Receiving handshake initiation from peer {n1} ({ip}:51820)",
            "Connect: ppp0 <--> /dev/{tty}",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "wpa_supplicant iwd",
        (
            "{iface}: SME: Trying to authenticate with {mac} (SSID='{ssid}' freq={freq} MHz)",
            "{iface}: CTRL-EVENT-CONNECTED - Connection to {mac} completed [id=0 id_str=]",
            "{iface}: CTRL-EVENT-SIGNAL-CHANGE above=1 signal=-{n2} noise=9999 txrate={n3}000",
            "event: connect, ssid: {ssid}, bssid: {mac}",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "hostapd",
        (
            "{iface}: STA {mac} IEEE 802.11: authenticated",
            "{iface}: STA {mac} IEEE 802.11: associated (aid {n1})",
            "{iface}: AP-STA-CONNECTED {mac}",
            "{iface}: STA {mac} WPA: pairwise key handshake completed (RSN)",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "bluetoothd",
        (
            "Bluetooth daemon 5.{n2}",
            "Starting SDP server",
            "Endpoint registered: sender=:1.{n2} path=/MediaEndpoint/A2DPSink/sbc",
            "{bdaddr}: new LE connection, handle 0x{hex4}, interval {n2}",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "ModemManager",
        (
            "<info>  modem {n1}: state changed (registered -> connecting)",
            "<info>  modem {n1}: 3GPP registration state changed (searching -> home)",
            "<info>  modem {n1}: simple connect state (8/8): all done",
            "<info>  [modem{n1}] IMEI {imei} detected on /dev/cdc-wdm0",
        ),
    ),
    (
        "wireless",
        "warning",
        False,
        "wpa_supplicant hostapd bluetoothd",
        (
            "{iface}: CTRL-EVENT-DISCONNECTED bssid={mac} reason=4 locally_generated=1",
            "{iface}: CTRL-EVENT-BEACON-LOSS",
            "{iface}: STA {mac} IEEE 802.11: disassociated due to inactivity",
            "{bdaddr}: connection timed out, retrying in {n1} s",
        ),
    ),
)
FAULTS += (
    (
        "network",
        "error",
        True,
        "NetworkManager systemd-networkd dhcpcd",
        (
            "<warn>  [{ts}.{n4}] dhcp4 ({iface}): request timed out",
            "<info>  [{ts}.{n4}] device ({iface}): state change: ip-config -> failed (reason "
            "'ip-config-unavailable')",
            "{iface}: could not acquire DHCP lease, giving up",
            "{iface}: no IPv6 Routers available",
        ),
    ),
    (
        "network",
        "error",
        True,
        "dnsmasq systemd-resolved openvpn",
        (
            "failed to create listening socket for port 53: Address already in use",
            "Transaction {n5} for <{domain} IN A> scope dns on {iface}/* finished with result: timeout",
            "TLS Error: TLS key negotiation failed to occur within 60 seconds (check your network "
            "connectivity)",
        ),
    ),
    (
        "wireless",
        "error",
        True,
        "wpa_supplicant hostapd ModemManager bluetoothd",
        (
            "{iface}: WPA: 4-Way Handshake failed - pre-shared key may be incorrect",
            "{iface}: CTRL-EVENT-ASSOC-REJECT bssid={mac} status_code=17",
            "<warn>  [modem{n1}] couldn't load SIM: SIM not inserted",
            "Failed to set mode: Blocked through rfkill (0x12)",
        ),
    ),
)

# ---- 7. odds and ends: caches, locales, alternatives, rotation, cron
FILL.update(
    {
        "locale": _pick("en_US.UTF-8", "de_DE.UTF-8", "C.UTF-8", "fr_FR.UTF-8", "pl_PL.UTF-8"),
        "logfile": _pick(
            "/var/log/syslog",
            "/var/log/nginx/access.log",
            "/var/log/mosquitto/mosquitto.log",
            "/var/log/edge/agent.log",
        ),
        "cronjob": _pick(
            "/usr/local/bin/backup.sh",
            "/opt/edge/bin/upload-metrics",
            "test -x /usr/sbin/anacron",
            "/usr/lib/sa/sa1 1 1",
        ),
        "alt": _pick("editor", "vi", "pager", "iptables", "python3", "awk"),
    }
)
ROUTINE += (
    (
        "service",
        "info",
        False,
        "fc-cache ldconfig dpkg",
        (
            "/usr/share/fonts: caching, new cache contents: 0 fonts, {n1} dirs",
            "/var/cache/fontconfig: cleaning cache directory",
            "fc-cache: succeeded",
            "ldconfig: /usr/lib/{word}.so.{n1} is not a symbolic link",
        ),
    ),
    (
        "service",
        "info",
        False,
        "man-db mandb systemd",
        (
            "Starting man-db.service - Daily man-db regeneration...",
            "Purging old database entries in /usr/share/man...",
            "Processing manual pages under /usr/share/man...",
            "{n3} man subdirectories contained newer manual pages.",
        ),
    ),
    (
        "service",
        "info",
        False,
        "locale-gen localedef update-alternatives",
        (
            "Generating locales (this might take a while)...",
            "  {locale}... done",
            "Generation complete.",
            "update-alternatives: renaming {alt} link from /usr/bin/{alt} to /usr/local/bin/{alt}",
        ),
    ),
    (
        "service",
        "info",
        False,
        "logrotate systemd",
        (
            "Starting logrotate.service - Rotate log files...",
            "logrotate.service: Deactivated successfully.",
            "Finished logrotate.service - Rotate log files.",
            "rotating pattern: {logfile}  after 1 days (7 rotations)",
        ),
    ),
    (
        "service",
        "debug",
        False,
        "logrotate",
        (
            "considering log {logfile}",
            "  log does not need rotating (log has been rotated at {isodate} 0:0, which is less than a day "
            "ago)",
            "renaming {logfile}.{n1}.gz to {logfile}.{n1}.gz",
            "running postrotate script",
        ),
    ),
    (
        "service",
        "info",
        False,
        "cron CRON anacron crond",
        (
            "(CRON) INFO (pidfile fd = 3)",
            "(CRON) INFO (Running @reboot jobs)",
            "Anacron 2.3 started on {isodate}",
            "Job `cron.daily' terminated",
        ),
    ),
    (
        "service",
        "info",
        False,
        "CRON cron crond",
        (
            "({user}) CMD ({cronjob})",
            "(CRON) INFO (Skipping @reboot jobs -- not system startup)",
            "(root) RELOAD (crontabs/root)",
            "Normal exit ({n1} jobs run)",
        ),
    ),
    (
        "application",
        "info",
        False,
        "backup.sh upload-metrics CRON",
        (
            "backup: {n3} files, {mb} MB written to /srv/backup/{isodate}.tar.zst",
            "uploaded {n4} metric points in {secs} s",
            "(root) MAIL (mailed {n3} bytes of output but got status 0x0000 from MTA)",
            "cleanup: removed {n2} files older than 14 days",
        ),
    ),
    (
        "other",
        "info",
        False,
        "rsyslogd systemd-journald",
        (
            '[origin software="rsyslogd" swVersion="8.{n4}.0" x-pid="{pid}"] rsyslogd was HUPed',
            "Time has been changed",
            "-- MARK --",
            "Message of the day updated",
        ),
    ),
    (
        "other",
        "notice",
        False,
        "systemd-logind kernel motd",
        (
            "New seat seat0.",
            "Watching system buttons on /dev/input/event{n1}",
            "{n2} updates can be applied immediately.",
            "System is tainted: local-hacks",
        ),
    ),
)
FAULTS += (
    (
        "application",
        "error",
        True,
        "CRON cron backup.sh",
        (
            "(root) MAIL (mailed {n3} bytes of output but got status 0x004b from MTA)",
            "backup: tar: /srv/backup/{isodate}.tar.zst: Cannot write: No space left on device",
            "upload-metrics: giving up after {n1} attempts: {errmsg}",
        ),
    ),
    (
        "service",
        "error",
        True,
        "logrotate anacron",
        (
            'error: skipping "{logfile}" because parent directory has insecure permissions',
            "error: error running shared postrotate script for '{logfile}'",
            "Job `cron.daily' terminated (exit status: 1) (mailing output)",
        ),
    ),
)

# ---- 8. the kernel's lines not tied to one device class
FILL.update(
    {
        "usbid": lambda r: f"{r.getrandbits(16):04x}",
        "aaprof": _pick(
            "/usr/sbin/chronyd", "/usr/bin/mosquitto", "docker-default", "nvidia_modprobe", "lsb_release"
        ),
        "task": _pick(
            "kworker/u8:2", "jbd2/mmcblk0p2-8", "systemd-journal", "python3", "mosquitto", "dockerd"
        ),
        "sym": _pick(
            "__schedule", "io_schedule", "mutex_lock", "ext4_sync_file", "usb_submit_urb", "dev_queue_xmit"
        ),
    }
)
ROUTINE += (
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "usb {usb}: new high-speed USB device number {n1} using xhci_hcd",
            "usb {usb}: New USB device found, idVendor={usbid}, idProduct={usbid}, bcdDevice= {n1}.{n2}",
            "usb {usb}: Product: USB2.0 Hub",
            "usb {usb}: USB disconnect, device number {n1}",
        ),
    ),
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "pci 0000:00:{pcislot}: [{usbid}:{usbid}] type 00 class 0x0c0330",
            "pci 0000:00:{pcislot}: reg 0x10: [mem 0x{hex8}-0x{hex8} 64bit]",
            "pci_bus 0000:00: root bus resource [io  0x0000-0x0cf7 window]",
            "pci 0000:00:{pcislot}: PME# supported from D0 D3hot D3cold",
        ),
    ),
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "ACPI: {acpi} 0x00000000{hex8} 0000{hex2} (v0{n1} {oem} {oem}  00000001 INTL 20200925)",
            "ACPI: Interpreter enabled",
            "ACPI: PM: (supports S0 S3 S4 S5)",
            "ACPI: Added _OSI(Module Device)",
        ),
    ),
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "clocksource: Switched to clocksource {clocksrc}",
            "clocksource: {clocksrc}: mask: 0xffffffffffffffff max_cycles: 0x{hex8}, max_idle_ns: {n6} ns",
            "sched_clock: 56 bits at {n2}MHz, resolution {n2}ns, wraps every {n8}ns",
            "random: crng init done",
        ),
    ),
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "cgroup: Disabling memory control group subsystem",
            'cgroup2: unknown option "nsdelegate"',
            "Initializing cgroup subsys cpuset",
            "systemd[1]: Using cgroup controller memory.",
        ),
    ),
    (
        "kernel",
        "notice",
        False,
        "kernel audit",
        (
            'audit: type=1400 audit({ts}.{n3}:{n3}): apparmor="STATUS" operation="profile_load" '
            'profile="unconfined" name="{aaprof}" pid={pid}',
            "audit: type=1403 audit({ts}.{n3}:{n1}): auid=4294967295 ses=4294967295 lsm=selinux res=1",
            "audit: initializing netlink subsys (disabled)",
            "AppArmor: AppArmor sha1 policy hashing enabled",
        ),
    ),
    (
        "kernel",
        "warning",
        False,
        "kernel audit",
        (
            'audit: type=1400 audit({ts}.{n3}:{n3}): apparmor="DENIED" operation="open" profile="{aaprof}" '
            'name="/proc/{pid}/status" comm="{proc}" requested_mask="r"',
            'audit: type=1400 audit({ts}.{n3}:{n3}): avc:  denied  {{ read }} for pid={pid} comm="{proc}" '
            'name="{word}" scontext=system_u:system_r:init_t:s0',
            "audit: backlog limit exceeded",
            "{proc}[{pid}]: unaligned access at 0x{hex8}",
        ),
    ),
    (
        "kernel",
        "info",
        False,
        "kernel",
        (
            "NET: Registered PF_INET6 protocol family",
            "Freeing unused kernel memory: {n4}K",
            "Run /sbin/init as init process",
            "Mount-cache hash table entries: {n4} (order: 1, {n4} bytes, linear)",
        ),
    ),
    (
        "kernel",
        "debug",
        False,
        "kernel",
        (
            "perf: interrupt took too long ({n4} > {n4}), lowering kernel.perf_event_max_sample_rate to {n5}",
            "hrtimer: interrupt took {n6} ns",
            "process '{path}' started with executable stack",
            "{proc} ({pid}): drop_caches: 3",
        ),
    ),
)
FAULTS += (
    (
        "kernel",
        "error",
        True,
        "kernel",
        (
            "INFO: task {task}:{pid} blocked for more than 120 seconds.",
            '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
            "Call trace: {sym}+0x{hex2}/0x{hex3}",
        ),
    ),
    (
        "kernel",
        "critical",
        True,
        "kernel",
        (
            "watchdog: BUG: soft lockup - CPU#{n1} stuck for {n2}s! [{task}:{pid}]",
            "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
            "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b",
            "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008",
        ),
    ),
    (
        "kernel",
        "error",
        True,
        "kernel",
        (
            "{proc}[{pid}]: segfault at {hex8} ip {hex8}{hex8} sp {hex8}{hex8} error 4 in "
            "{lib}[{hex8}+{hex6}]",
            "traps: {proc}[{pid}] general protection fault ip:{hex8} sp:{hex8} error:0 in {lib}",
            "Internal error: Oops: 96000005 [#1] PREEMPT SMP",
        ),
    ),
    (
        "kernel",
        "error",
        True,
        "kernel",
        (
            "usb {usb}: device descriptor read/64, error -71",
            "usb {usb}: device not accepting address {n1}, error -110",
            "usb usb{n1}-port{n1}: unable to enumerate USB device",
            "xhci_hcd 0000:00:{pcislot}: xHCI host controller not responding, assume dead",
        ),
    ),
)

# ---- 9. authentication: PAM, sudo, su, polkit, ssh, certificates
FILL.update(
    {
        "kex": _pick(
            "curve25519-sha256", "sntrup761x25519-sha512@openssh.com", "diffie-hellman-group14-sha256"
        ),
        "fp": lambda r: (
            "SHA256:"
            + "".join(
                r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                for _ in range(43)
            )
        ),
        "sshkey": _pick("ED25519", "RSA", "ECDSA"),
        "action": _pick(
            "org.freedesktop.systemd1.manage-units",
            "org.freedesktop.NetworkManager.settings.modify.system",
            "org.freedesktop.login1.reboot",
        ),
        "days": _int(1, 89),
        "certcn": _pick(
            "CN=gw01.site-3.example", "CN=broker.local", "CN=Edge Device CA", "CN=api.example.net"
        ),
    }
)
ROUTINE += (
    (
        "auth",
        "info",
        False,
        "sshd",
        (
            "Accepted publickey for {user} from {ip} port {eport} ssh2: {sshkey} {fp}",
            "pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)",
            "Received disconnect from {ip} port {eport}:11: disconnected by user",
            "pam_unix(sshd:session): session closed for user {user}",
        ),
    ),
    (
        "auth",
        "info",
        False,
        "sudo",
        (
            "    {user} : TTY=pts/{n1} ; PWD=/home/{user} ; USER=root ; COMMAND=/usr/bin/systemctl restart "
            "{svc}",
            "pam_unix(sudo:session): session opened for user root(uid=0) by {user}(uid={uid})",
            "pam_unix(sudo:session): session closed for user root",
        ),
    ),
    (
        "auth",
        "notice",
        False,
        "su login systemd-logind",
        (
            "(to root) {user} on pts/{n1}",
            "pam_unix(su-l:session): session opened for user root(uid=0) by {user}(uid={uid})",
            "New session {n2} of user {user}.",
            "Session {n2} logged out. Waiting for processes to exit.",
        ),
    ),
    (
        "auth",
        "info",
        False,
        "polkitd",
        (
            "Registered Authentication Agent for unix-process:{pid}:{n6} (system bus name :1.{n2})",
            "Operator of unix-session:{n1} successfully authenticated as unix-user:{user} to gain "
            "TEMPORARY authorization for action {action}",
            "Unregistered Authentication Agent for unix-process:{pid}:{n6}",
            "Loading rules from directory /etc/polkit-1/rules.d",
        ),
    ),
    (
        "auth",
        "debug",
        False,
        "sshd",
        (
            "debug1: kex: algorithm: {kex}",
            "debug1: kex: host key algorithm: ssh-ed25519",
            "debug1: SSH2_MSG_KEX_ECDH_REPLY received",
            "debug1: userauth-request for user {user} service ssh-connection method publickey",
        ),
    ),
    (
        "auth",
        "warning",
        False,
        "sshd",
        (
            "Invalid user {baduser} from {ip} port {eport}",
            "Failed password for invalid user {baduser} from {ip} port {eport} ssh2",
            "Connection closed by authenticating user {user} {ip} port {eport} [preauth]",
            "Disconnected from invalid user {baduser} {ip} port {eport} [preauth]",
        ),
    ),
    (
        "auth",
        "warning",
        False,
        "sshd sudo certmonger",
        (
            "error: kex_exchange_identification: Connection closed by remote host",
            "Unable to negotiate with {ip} port {eport}: no matching key exchange method found. Their "
            "offer: diffie-hellman-group1-sha1",
            "    {user} : 1 incorrect password attempt ; TTY=pts/{n1} ; PWD=/home/{user} ; USER=root ; "
            "COMMAND=/bin/bash",
            "certificate {certcn} expires in {days} days",
        ),
    ),
    (
        "auth",
        "info",
        False,
        "certbot certmonger step",
        (
            "Renewing an existing certificate for {vhost}",
            "Certificate {certcn} renewed, valid until {isodate}",
            "Congratulations! Your certificate and chain have been saved at: "
            "/etc/letsencrypt/live/{vhost}/fullchain.pem",
            "Cert not yet due for renewal",
        ),
    ),
)
FAULTS += (
    (
        "auth",
        "error",
        True,
        "sshd sudo su",
        (
            "maximum authentication attempts exceeded for root from {ip} port {eport} ssh2 [preauth]",
            "pam_unix(sudo:auth): authentication failure; logname={user} uid={uid} euid=0 "
            "tty=/dev/pts/{n1} ruser={user} rhost=  user={user}",
            "    {baduser} : user NOT in sudoers ; TTY=pts/{n1} ; PWD=/tmp ; USER=root ; COMMAND=/bin/sh",
            "FAILED SU (to root) {baduser} on pts/{n1}",
        ),
    ),
    (
        "auth",
        "critical",
        True,
        "sshd mosquitto openvpn curl",
        (
            "error: Could not load host key: /etc/ssh/ssh_host_ed25519_key",
            "OpenSSL Error: certificate verify failed: certificate has expired ({certcn})",
            "VERIFY ERROR: depth=0, error=certificate has expired: {certcn}",
            "Certificate {certcn} expired on {isodate}; clients will be refused",
        ),
    ),
    (
        "auth",
        "error",
        True,
        "sshd pam",
        (
            "PAM {n1} more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost={ip}  "
            "user=root",
            "pam_faillock(sshd:auth): Consecutive login failures for user {user} account temporarily locked",
            "fatal: Access denied for user {baduser} by PAM account configuration [preauth]",
        ),
    ),
)

# ---- 10. server power, thermal and storage daemons (NUT, ACPI, thermald, fans, smartd, mdadm, fsck)
FILL.update(
    {
        "ups": _pick("ups@localhost", "eaton5sc@localhost", "rack-ups@10.0.0.5", "apc1500@localhost"),
        "bat": _pick("BAT0", "BAT1", "battery"),
        "smartattr": _pick(
            "5 Reallocated_Sector_Ct",
            "187 Reported_Uncorrect",
            "194 Temperature_Celsius",
            "197 Current_Pending_Sector",
            "9 Power_On_Hours",
            "199 UDMA_CRC_Error_Count",
        ),
        "md": _pick("md0", "md1", "md127"),
        "hwmon": _pick("coretemp-isa-0000", "cpu_thermal-virtual-0", "nct6775-isa-0290", "acpitz-acpi-0"),
    }
)
ROUTINE += (
    (
        "power",
        "info",
        False,
        "upsmon upsd upssched",
        (
            "UPS {ups} on line power",
            "Communications with UPS {ups} established",
            "UPS [{ups}]: connected to driver, battery charge {n2}%",
            "User upsmon@127.0.0.1 logged into UPS [{ups}]",
        ),
    ),
    (
        "power",
        "warning",
        False,
        "upsmon upssched apcupsd",
        (
            "UPS {ups} on battery",
            "Power failure. Running on UPS batteries.",
            "UPS {ups} battery needs to be replaced",
            "Mains returned. No longer on UPS batteries.",
        ),
    ),
    (
        "power",
        "info",
        False,
        "kernel upowerd acpid",
        (
            "ACPI: AC: AC Adapter [AC] (on-line)",
            "ACPI: battery: Slot [{bat}] (battery present)",
            "battery {bat}: charge {n2}%, {f2} W, state charging",
            "ac_adapter ACPI0003:00 00000080 00000000",
        ),
    ),
    (
        "thermal",
        "info",
        False,
        "thermald kernel sensord fancontrol",
        (
            "thermald ver 2.{n1} started",
            "sensor {hwmon}: Package id 0: +{n2}.0 C (high = +80.0 C, crit = +100.0 C)",
            "fancontrol: hwmon{n1}/pwm1 set to {n3} for temp {n2}.0 C",
            "Thermal zone 0 trip point 0 reached, setting cooling state {n1}",
        ),
    ),
    (
        "thermal",
        "warning",
        False,
        "kernel thermald",
        (
            "CPU{n1}: Core temperature above threshold, cpu clock throttled (total events = {n4})",
            "CPU{n1}: Package temperature above threshold, cpu clock throttled (total events = {n4})",
            "CPU{n1}: Core temperature/speed normal",
            "thermald: adding cooling device intel_powerclamp, limiting to {n2}%",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "smartd",
        (
            "Device: /dev/sda [SAT], opened",
            'Device: /dev/sda [SAT], is SMART capable. Adding to "monitor" list.',
            "Device: /dev/nvme0, state written to /var/lib/smartmontools/smartd.nvme0.state",
            "Device: /dev/sda [SAT], SMART Usage Attribute: {smartattr} changed from {n2} to {n2}",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "kernel mdadm",
        (
            "md/raid1:{md}: active with 2 out of 2 mirrors",
            "md: resync of RAID array {md}",
            "md: {md}: resync done.",
            "mdadm: DeviceDisappeared event detected on md device /dev/md/old",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "systemd-fsck fsck e2fsck",
        (
            "/dev/{dev}: clean, {n5}/{n6} files, {n6}/{n7} blocks",
            "fsck from util-linux 2.{n2}.{n1}",
            "fsck.fat 4.2 (2021-01-31)",
            "/dev/mmcblk0p1: {n3} files, {n5}/{n6} clusters",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "kernel systemd mount",
        (
            "EXT4-fs ({dev}): mounted filesystem with ordered data mode. Quota mode: none.",
            "Mounted {mnt}.",
            "Unmounting {mnt}...",
            "XFS ({dev}): Ending clean mount",
        ),
    ),
    (
        "storage",
        "warning",
        False,
        "kernel quotad repquota",
        (
            "EXT4-fs ({dev}): warning: mounting fs with errors, running e2fsck is recommended",
            "{dev}: warning, user block quota exceeded.",
            "Device: /dev/sda [SAT], SMART Usage Attribute: 194 Temperature_Celsius changed from {n2} to "
            "{n2}",
            "Device: /dev/sda [SAT], {n1} Currently unreadable (pending) sectors",
        ),
    ),
)
FAULTS += (
    (
        "power",
        "critical",
        True,
        "upsmon upsd apcupsd kernel",
        (
            "UPS {ups} battery is low",
            "Executing automatic power-fail shutdown",
            "Data stale for UPS [{ups}] - check driver",
            "Under-voltage detected! (0x00050005)",
        ),
    ),
    (
        "thermal",
        "critical",
        True,
        "kernel thermald",
        (
            "thermal thermal_zone0: critical temperature reached ({n2} C), shutting down",
            "mce: CPU{n1}: Package temperature above threshold, cpu clock throttled (total events = {n6})",
            "hwmon: fan1 speed 0 RPM below minimum 600, fan stalled",
        ),
    ),
    (
        "storage",
        "critical",
        True,
        "smartd kernel mdadm",
        (
            "Device: /dev/sda [SAT], FAILED SMART self-check. BACK UP DATA NOW!",
            "md/raid1:{md}: Disk failure on sdb1, disabling device.",
            "Fail event detected on md device /dev/{md}, component device /dev/sdb1",
            "Device: /dev/sda [SAT], {n2} Offline uncorrectable sectors",
        ),
    ),
    (
        "storage",
        "error",
        True,
        "kernel systemd-fsck",
        (
            "EXT4-fs error (device {dev}): ext4_find_entry:1{n3}: inode #{n5}: comm {proc}: reading "
            "directory lblock 0",
            "/dev/{dev}: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.",
            "Buffer I/O error on dev {dev}, logical block {n6}, lost async page write",
            "XFS ({dev}): Corruption of in-memory data detected. Shutting down filesystem",
        ),
    ),
)

# ---- 11. application servers and their workers (gunicorn, uvicorn, Jetty, Spring Boot, Grafana, Telegraf)
FILL.update(
    {
        "jclass": _pick(
            "o.s.b.w.embedded.jetty.JettyWebServer",
            "o.e.jetty.server.Server",
            "c.e.edge.ingest.BatchWriter",
            "o.s.s.concurrent.ThreadPoolTaskScheduler",
            "c.z.hikari.HikariDataSource",
            "c.e.edge.api.DeviceController",
        ),
        "thread": lambda r: r.choice(
            (
                "main",
                f"qtp{r.randint(100000, 999999)}-{r.randint(10, 99)}",
                "scheduling-1",
                f"http-nio-8080-exec-{r.randint(1, 9)}",
                f"pool-{r.randint(1, 4)}-thread-{r.randint(1, 8)}",
            )
        ),
        "jobid": lambda r: f"job-{r.randint(1000, 99999)}",
        "plugin": _pick(
            "inputs.mqtt_consumer", "inputs.modbus", "outputs.influxdb_v2", "inputs.cpu", "inputs.disk"
        ),
    }
)
ROUTINE += (
    (
        "service",
        "info",
        False,
        "gunicorn uvicorn",
        (
            "[{pid}] [INFO] Starting gunicorn 21.2.{n1}",
            "[{pid}] [INFO] Listening at: http://0.0.0.0:8000 ({pid})",
            "[{pid}] [INFO] Booting worker with pid: {pid}",
            "[{pid}] [INFO] Worker exiting (pid: {pid})",
        ),
    ),
    (
        "service",
        "info",
        False,
        "uvicorn gunicorn",
        (
            "INFO:     Started server process [{pid}]",
            "INFO:     Waiting for application startup.",
            "INFO:     Application startup complete.",
            "INFO:     Shutting down",
        ),
    ),
    (
        "service",
        "info",
        False,
        "java jetty spring",
        (
            "[{thread}] INFO {jclass} - Started EdgeApplication in {secs} seconds (process running for "
            "{secs})",
            "[{thread}] INFO o.e.jetty.server.Server - jetty-11.0.{n2}; built: {isodate}; jvm 17.0.{n1}",
            "[{thread}] INFO o.e.jetty.server.AbstractConnector - Started "
            "ServerConnector@{hex8}{{HTTP/1.1}}{{0.0.0.0:8080}}",
            "[SpringApplicationShutdownHook] INFO {jclass} - Graceful shutdown complete",
        ),
    ),
    (
        "service",
        "info",
        False,
        "grafana-server telegraf",
        (
            'logger=server t={iso} level=info msg="Starting Grafana" version=10.{n1}.{n1}',
            'logger=http.server t={iso} level=info msg="HTTP Server Listen" address=[::]:3000 protocol=http',
            "I! Starting Telegraf 1.{n2}.{n1}",
            "I! Loaded inputs: cpu disk mem modbus mqtt_consumer",
        ),
    ),
    (
        "application",
        "info",
        False,
        "gunicorn uvicorn",
        (
            'INFO:     {ip}:{eport} - "{verb} /api/v1/readings HTTP/1.1" {http}',
            '{ip} - - [{hms}] "{verb} {uri} HTTP/1.1" {http} {n4} "-" "python-requests/2.{n2}.0"',
            "processed batch of {n3} readings in {ms} ms",
        ),
    ),
    (
        "application",
        "info",
        False,
        "java spring",
        (
            "[{thread}] INFO c.e.edge.ingest.BatchWriter - Flushed {n4} records to {table} in {ms} ms",
            "[{thread}] INFO c.e.edge.jobs.ReportJob - Job {jobid} finished: {n3} items, status=COMPLETED",
            "[{thread}] DEBUG c.e.edge.api.DeviceController - GET /devices/{n3} -> 200 ({ms} ms)",
            "[{thread}] INFO c.z.hikari.HikariDataSource - HikariPool-1 - Start completed.",
        ),
    ),
    (
        "application",
        "info",
        False,
        "telegraf grafana-server",
        (
            "D! [outputs.influxdb_v2] Wrote batch of {n3} metrics in {ms}.{n3}ms",
            "D! [outputs.influxdb_v2] Buffer fullness: {n2} / 10000 metrics",
            'logger=alerting.scheduler t={iso} level=info msg="Alert rule evaluated" rule_uid={hex8} '
            "state=Normal",
            'logger=cleanup t={iso} level=info msg="Completed cleanup jobs" duration={ms}ms',
        ),
    ),
    (
        "application",
        "warning",
        False,
        "gunicorn telegraf java",
        (
            "[{pid}] [WARNING] Worker with pid {pid} was terminated due to signal 15",
            "W! [{plugin}] Collection took longer than expected; not complete after interval of 10s",
            "[{thread}] WARN c.z.hikari.pool.HikariPool - HikariPool-1 - Thread starvation or clock leap "
            "detected",
            "[{thread}] WARN c.e.edge.jobs.ReportJob - Job {jobid} retried ({n1}/5) after {errmsg}",
        ),
    ),
    (
        "application",
        "debug",
        False,
        "java celery rq",
        (
            "[{thread}] DEBUG o.s.s.concurrent.ThreadPoolTaskScheduler - Scheduled task {jobid} fired",
            "Task edge.tasks.sync[{uuid}] received",
            "Task edge.tasks.sync[{uuid}] succeeded in {secs}s: None",
            "default: Job OK ({jobid})",
        ),
    ),
)
FAULTS += (
    (
        "application",
        "error",
        True,
        "java spring celery",
        (
            "[{thread}] ERROR c.e.edge.ingest.BatchWriter - Batch {jobid} rejected: "
            "java.lang.IllegalStateException: buffer closed",
            'Exception in thread "{thread}" java.lang.OutOfMemoryError: Java heap space',
            "Task edge.tasks.sync[{uuid}] raised unexpected: {exc}('{errmsg}')",
            "[{thread}] ERROR c.e.edge.jobs.ReportJob - Job {jobid} failed after 5 attempts",
        ),
    ),
    (
        "service",
        "critical",
        True,
        "gunicorn uvicorn java",
        (
            "[{pid}] [CRITICAL] WORKER TIMEOUT (pid:{pid})",
            "[{pid}] [ERROR] Worker (pid:{pid}) was sent SIGKILL! Perhaps out of memory?",
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address "
            "already in use",
            "[main] ERROR o.s.boot.SpringApplication - Application run failed",
        ),
    ),
    (
        "network",
        "error",
        True,
        "java telegraf grafana-server",
        (
            "[{thread}] ERROR c.z.hikari.pool.HikariPool - HikariPool-1 - Exception during pool "
            "initialization: Connection refused",
            "E! [outputs.influxdb_v2] When writing to [http://{ip}:8086]: Post "
            '"http://{ip}:8086/api/v2/write": dial tcp: {errmsg}',
            'logger=tsdb.postgres t={iso} level=error msg="Failed to connect" error="dial tcp {ip}:5432: '
            'connect: connection refused"',
        ),
    ),
)

# ---- 12. more radios (iwd, hostapd, bluetoothd, a Thread border router) and daemons' housekeeping
FILL.update(
    {
        "panid": lambda r: f"0x{r.getrandbits(16):04x}",
        "rssi": _int(-95, -30),
        "chan": _pick("11", "15", "20", "25", "26"),
    }
)
ROUTINE += (
    (
        "wireless",
        "info",
        False,
        "iwd",
        (
            "Wireless daemon version 2.{n2}",
            "station: Network configuration is IPv4 static",
            "{iface}: roaming from {mac} to {mac}, rssi {rssi} dBm",
            "event: state, old: connected, new: roaming",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "hostapd",
        (
            "{iface}: interface state UNINITIALIZED->ENABLED",
            "{iface}: AP-ENABLED",
            "{iface}: ACS: selected channel {n1} ({freq} MHz)",
            "{iface}: AP-STA-DISCONNECTED {mac}",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "bluetoothd btmgmt",
        (
            "Discovery started, filter LE only",
            "{bdaddr}: RSSI {rssi} dBm, advertising report, type ADV_IND",
            "{bdaddr}: GATT services resolved, {n2} characteristics",
            "Disconnected from {bdaddr}: reason 0x13 (remote user terminated)",
        ),
    ),
    (
        "wireless",
        "info",
        False,
        "otbr-agent ot-daemon",
        (
            "[N] Mle-----------: Role detached -> leader",
            "[N] Mle-----------: Partition ID 0x{hex8}",
            "[I] MeshForwarder-: Received IPv6 UDP msg, len:{n2}, chksum:{hex4}, from:{hex16}, sec:yes, "
            "prio:net, rss:{rssi}.0",
            "[N] Platform------: RCP channel {chan}, PAN ID {panid}",
        ),
    ),
    (
        "wireless",
        "warning",
        False,
        "otbr-agent hostapd iwd",
        (
            "[W] Mle-----------: Failed to process Parent Response: Security",
            "{iface}: DFS-CAC-START freq=5260 chan=52 sec_chan=1, width=0, seg0=0, seg1=0, cac_time=60s",
            "{iface}: channel switch to {freq} MHz announced by {mac}",
            "[W] MeshForwarder-: Frame tx attempt {n1}/16 failed, error:NoAck",
        ),
    ),
    (
        "storage",
        "info",
        False,
        "systemd-journald journald",
        (
            "Journal started",
            "Runtime Journal (/run/log/journal/{hex16}) is {f2}M, max {n2}.{n1}M, {n2}.{n1}M free.",
            "Vacuuming done, freed {n4}K of archived journals from /var/log/journal/{hex16}.",
            "System Journal (/var/log/journal/{hex16}) is {n2}.{n1}M, max {n3}.{n1}M.",
        ),
    ),
    (
        "service",
        "info",
        False,
        "systemd",
        (
            "{svc}.service: Scheduled restart job, restart counter is at {n1}.",
            "Reloading {svc_desc}...",
            "Reloaded {svc_desc}.",
            "{svc}.service: Consumed {secs}s CPU time.",
        ),
    ),
    (
        "other",
        "info",
        False,
        "motd landscape-sysinfo",
        (
            "  System load:  0.{n2}              Processes:             {n3}",
            "  Usage of /:   {n2}.{n1}% of 29.{n1}GB   Users logged in:       {n1}",
            "  Memory usage: {n2}%               IPv4 address for {iface}: {ip}",
        ),
    ),
)
FAULTS += (
    (
        "wireless",
        "critical",
        True,
        "otbr-agent bluetoothd",
        (
            "[C] Platform------: HandleRcpTimeout() at radio_spinel.cpp:{n4}: RadioSpinelNoResponse",
            "[C] Platform------: Init() at spinel_driver.cpp:{n3}: Failure",
            "Failed to open HCI socket: Address family not supported by protocol",
            "hci0: command 0x{hex4} tx timeout",
        ),
    ),
)
