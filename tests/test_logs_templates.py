"""Template mining on lines written for these tests: masking, merging of variable words,
persistence as plain JSON with the same ids after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edge_agent.errors import PayloadError
from edge_agent.logs.masking import PARAM, mask
from edge_agent.logs.templates import STATE_VERSION, TemplateMiner
from edge_agent.store import FileStore

SSH = [
    "Mar  2 08:00:0{i} gw sshd[40{i}]: Invalid user {u} from 10.0.0.{i}",
    "Mar  2 08:00:0{i} gw sshd[40{i}]: Accepted publickey for {u} from 10.0.0.{i} port 5{i}222 ssh2",
]
USERS = ["admin", "pi", "guest", "oracle", "ubnt", "support"]


def test_masking_covers_common_variables() -> None:
    toks = mask(
        "eth0 aa:bb:cc:dd:ee:ff got 192.168.1.20 lease 3600s from /var/lib/dhcp/leases at 0x1f uid=1000"
    )
    assert toks.count(PARAM) >= 6
    assert "lease" in toks and "from" in toks and "uid=" + PARAM in toks


def test_same_event_same_template_different_events_apart() -> None:
    miner = TemplateMiner()
    ids = [miner.add(SSH[0].format(i=i, u=u)).template_id for i, u in enumerate(USERS)]
    ids = [miner.canonical(t) for t in ids]
    assert len(set(ids)) == 1
    other = [miner.add(SSH[1].format(i=i, u=u)).template_id for i, u in enumerate(USERS)]
    other = [miner.canonical(t) for t in other]
    assert len(set(other)) == 1 and other[0] != ids[0]
    assert miner.template(ids[0]) == f"Invalid user {PARAM} from {PARAM}"


def test_names_of_who_are_variables_from_the_first_line() -> None:
    """Online ids: a user name or a package name is a parameter at once, not after a merge."""
    miner = TemplateMiner()
    ids = {miner.add(f"session opened for user {u} by (uid=0)").template_id for u in USERS[:2]}
    ids |= {miner.add(f"Failed password for {u} from 10.0.0.9 port 22 ssh2").template_id for u in USERS[:2]}
    assert len(ids) == 2
    jobs = ["com.example.backup.daily", "org.example.sync.hourly"]
    assert len({miner.add(f"{j}: told to run this job; start time is later").template_id for j in jobs}) == 1
    assert mask("session opened for user root by LOGIN(uid=0)")[-1] == f"LOGIN(uid={PARAM})"


def test_words_that_differ_rarely_stay_separate_events() -> None:
    miner = TemplateMiner()
    a = miner.add("relay output enabled").template_id
    b = miner.add("relay output disabled").template_id
    assert miner.canonical(a) != miner.canonical(b)


def test_first_line_is_new_then_known() -> None:
    miner = TemplateMiner()
    assert miner.add("Apr  1 00:00:01 gw kernel: eth0: link up at 1000 Mbps").new
    assert not miner.add("Apr  1 00:00:09 gw kernel: eth0: link up at 100 Mbps").new


def test_restart_restores_templates_with_same_ids(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    miner = TemplateMiner()
    lines = [SSH[0].format(i=i, u=u) for i, u in enumerate(USERS)] + [
        "Apr  1 00:00:01 gw zigbee2mqtt[7]: Device 0x00158d0001 joined",
        "Apr  1 00:00:02 gw modbusd[9]: register 40001 read timeout after 500 ms",
    ]
    first = {line: miner.add(line).template_id for line in lines}
    before = {line: miner.canonical(tid) for line, tid in first.items()}
    store.save("logs-templates", miner.to_json())

    restored = TemplateMiner.from_json(store.load("logs-templates") or b"")
    assert len(restored) == len(miner)
    for line, tid in before.items():
        again = restored.add(line)
        assert again.template_id == tid and not again.new
    fresh = restored.add("Apr  1 00:00:03 gw upsd[2]: battery replaced")
    assert fresh.new and fresh.template_id > max(before.values())


def test_state_is_plain_versioned_json() -> None:
    miner = TemplateMiner()
    miner.add("fan speed set to 3000 RPM")
    doc = json.loads(miner.to_json())
    assert doc["format"] == "edge-agent/log-templates" and doc["version"] == STATE_VERSION
    assert doc["templates"][0]["tokens"] == ["fan", "speed", "set", "to", PARAM, "RPM"]


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x04pickle",
        b"[]",
        b'{"format": "edge-agent/log-templates", "version": 99, "templates": []}',
        b'{"format": "edge-agent/log-templates", "version": 1, "templates": [{"id": "x"}], "next_id": 1}',
    ],
)
def test_bad_state_refused_with_reason(data: bytes) -> None:
    with pytest.raises(PayloadError):
        TemplateMiner.from_json(data)


def test_restored_templates_keep_merging(tmp_path: Path) -> None:
    """After a restart, variable words found before it still count toward a merge."""
    miner = TemplateMiner()
    line = "Mar  2 08:00:01 gw sshd[40]: Connection closed by authenticating peer {u} [preauth]"
    first = [miner.add(line.format(u=u)).template_id for u in USERS[:3]]
    assert len(set(first)) == 3  # three words are not yet a variable
    restored = TemplateMiner.from_json(miner.to_json())
    fourth = restored.add(line.format(u=USERS[3])).template_id
    assert {restored.canonical(t) for t in [*first, fourth]} == {min(first)}
    assert restored.template(min(first)) == "Connection closed by authenticating peer <*> [preauth]"


def test_template_limit_keeps_the_busy_ones() -> None:
    miner = TemplateMiner(max_templates=10)
    busy = miner.add("heartbeat from node alpha").template_id
    for k in range(40):
        miner.add("heartbeat from node alpha")
        miner.add(f"one-off event {'abcdefghijklmnopqrstuvwxyz'[k % 26]}{'xyz'[k // 26]} happened here now")
    assert len(miner) <= 10
    assert miner.template(busy) == "heartbeat from node alpha"
