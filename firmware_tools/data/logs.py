"""Log-line generator for embedded / IoT sources, labelled with severity, category and anomaly.

Every message template below was written for this project. Lines are rendered in many header
formats (RFC 3164 / 5424 syslog, journald, JSON, dmesg, java-style, logcat-like, bare text),
with and without an explicit level, so the model has to read severity from the words too.

"Anomaly" means something a technician should look at: failures, crashes, hardware errors,
attacks, overheating, corruption, OOM, link flaps, timeouts. An ``error`` level alone does not
make a line anomalous, and an anomalous event may be logged at ``info`` by a sloppy daemon.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from firmware_tools.data import log_software
from firmware_tools.data.log_chatter import FAULTS, FILL, ROUTINE

__all__ = ["EVENTS", "LogExample", "generate"]


@dataclass
class LogExample:
    line: str
    severity: str
    category: str
    anomaly: bool


@dataclass(frozen=True)
class Event:
    category: str
    severity: str
    anomaly: bool
    apps: tuple[str, ...]
    templates: tuple[str, ...]
    # a line that is mostly written without a level (package managers, boot inventory): its
    # level is shown QUIET_LEVEL_SHOWN as often as the format would show it; drawn ``weight``
    # times as often as an event of weight 1
    quiet: bool = False
    weight: float = 1.0


def _e(cat: str, sev: str, anom: bool, apps: str, *templates: str) -> Event:
    return Event(cat, sev, anom, tuple(apps.split()), templates)


# (category, severity, anomaly, apps, message templates). Placeholders are filled by _FILL.
_WRITTEN: tuple[Event, ...] = (
    # ---- kernel
    _e(
        "kernel",
        "info",
        False,
        "kernel",
        "Linux version {ver} (builder@buildhost) #1 SMP PREEMPT",
        "Booting Linux on physical CPU 0x{n1}",
        "Memory: {n4}K/{n5}K available",
        "CPU{n1}: Booted secondary processor",
        "random: crng init done",
        "Freeing unused kernel memory: {n3}K",
        "devtmpfs: mounted",
        "usb {usb}: new high-speed USB device number {n2} using ehci-platform",
        "usb {usb}: New USB device found, idVendor={hex4}, idProduct={hex4}",
        "EXT4-fs ({dev}): mounted filesystem with ordered data mode",
        "cfg80211: Loading compiled-in X.509 certificates for regulatory database",
        "NET: Registered protocol family {n2}",
        'audit: type=1400 audit({ts}:{n3}): apparmor="STATUS" operation="profile_load"',
        "clocksource: Switched to clocksource arch_sys_counter",
        "brcmfmac: F1 signature read @0x18000000=0x{hex8}",
    ),
    _e(
        "kernel",
        "debug",
        False,
        "kernel",
        "PM: suspend entry (deep)",
        "PM: suspend exit",
        "bcm2835-dma {hex8}.dma: DMA legacy API manager",
        "raid6: using algorithm neonx8 gen() {n4} MB/s",
        "workingset: timestamp_bits={n2} max_order={n2}",
    ),
    _e(
        "kernel",
        "critical",
        True,
        "kernel",
        "Kernel panic - not syncing: Fatal exception in interrupt",
        "Unable to handle kernel NULL pointer dereference at virtual address {hex8}",
        "Internal error: Oops: {hex4} [#1] PREEMPT SMP ARM",
        "BUG: soft lockup - CPU#{n1} stuck for {n2}s! [{proc}:{pid}]",
        "INFO: task {proc}:{pid} blocked for more than {n3} seconds.",
        "watchdog: BUG: hard LOCKUP on cpu {n1}",
        "rcu: INFO: rcu_sched detected stalls on CPUs/tasks",
        "Kernel BUG at {path}:{n3}!",
        "machine check exception: bank {n1} status 0x{hex8}",
        "EDAC MC0: 1 UE memory read error on CSROW {n1}",
        "Synchronous External Abort: synchronous external abort (0x{hex8}) at 0x{hex8}",
    ),
    _e(
        "kernel",
        "error",
        True,
        "kernel",
        "Out of memory: Killed process {pid} ({proc}) total-vm:{n5}kB, anon-rss:{n5}kB",
        "oom-kill:constraint=CONSTRAINT_NONE,task={proc},pid={pid}",
        "{proc}[{pid}]: segfault at {hex8} ip {hex8} sp {hex8} error 4 in {lib}",
        "{proc} invoked oom-killer: gfp_mask=0x{hex4}, order=0",
        "traps: {proc}[{pid}] general protection fault ip:{hex8} sp:{hex8} error:0",
        "EDAC MC0: 1 CE memory read error on CSROW {n1}",
        "usb {usb}: device descriptor read/64, error -71",
        "usb {usb}: device not accepting address {n2}, error -110",
        "mmc0: Timeout waiting for hardware interrupt.",
        "i2c i2c-{n1}: sendbytes: NAK bailout.",
        "spi{n1}: timeout waiting for DMA completion",
        'irq {n2}: nobody cared (try booting with the "irqpoll" option)',
        "CPU{n1}: Core temperature above threshold, cpu clock throttled",
        "hrtimer: interrupt took {n5} ns",
        "sched: RT throttling activated",
        "{proc}: page allocation failure: order:{n1}, mode:0x{hex4}",
    ),
    _e(
        "kernel",
        "warning",
        False,
        "kernel",
        "usb {usb}: USB disconnect, device number {n2}",
        "deprecated sysctl {word} used by {proc}",
        "cma: cma_alloc: alloc failed, req-size: {n3} pages, ret: -12",
        "Voltage normalised (0x00000000)",
        "device-mapper: uevent: version 1.0.3",
    ),
    # ---- service / systemd
    _e(
        "service",
        "info",
        False,
        "systemd init",
        "Started {svc_desc}.",
        "Starting {svc_desc}...",
        "Stopped {svc_desc}.",
        "Reached target {target}.",
        "Stopping {svc_desc}...",
        "{svc}.service: Succeeded.",
        "{svc}.service: Deactivated successfully.",
        "Startup finished in {f2}s (kernel) + {f2}s (userspace) = {f2}s.",
        "Reloading.",
        "Listening on {svc_desc} Socket.",
        "Finished {svc_desc}.",
        "Created slice User Slice of UID {uid}.",
        "Started Session {n3} of user {user}.",
        "{svc}.service: Consumed {f2}s CPU time.",
    ),
    _e(
        "service",
        "error",
        True,
        "systemd init",
        "{svc}.service: Main process exited, code=exited, status={n1}/FAILURE",
        "{svc}.service: Failed with result 'exit-code'.",
        "Failed to start {svc_desc}.",
        "{svc}.service: Main process exited, code=killed, status=9/KILL",
        "{svc}.service: Main process exited, code=dumped, status=11/SEGV",
        "{svc}.service: Start request repeated too quickly.",
        "{svc}.service: Watchdog timeout (limit {n1}min)!",
        "{svc}.service: Failed with result 'watchdog'.",
        "Dependency failed for {svc_desc}.",
        "{svc}.service: Failed to execute command: No such file or directory",
        "{svc}.service: State 'stop-sigterm' timed out. Killing.",
        "Timed out waiting for device /dev/{dev}.",
    ),
    _e(
        "service",
        "notice",
        False,
        "systemd init",
        "{svc}.service: Scheduled restart job, restart counter is at 1.",
        "Condition check resulted in {svc_desc} being skipped.",
        "{svc}.service: Unit cannot be reloaded because it is inactive.",
    ),
    _e(
        "service",
        "critical",
        True,
        "systemd-coredump systemd",
        "Process {pid} ({proc}) of user {uid} dumped core.",
        "Caught <SEGV>, dumped core as pid {pid}.",
        "Freezing execution.",
        "{svc}.service: Main process exited, code=dumped, status=6/ABRT",
    ),
    _e(
        "service",
        "info",
        False,
        "cron CRON crond",
        "({user}) CMD ({path} > /dev/null 2>&1)",
        "pam_unix(cron:session): session opened for user {user}",
        "(root) RELOAD (crontabs/root)",
        "pam_unix(cron:session): session closed for user {user}",
    ),
    _e(
        "service",
        "debug",
        False,
        "dbus-daemon dbus",
        "[system] Activating via systemd: service name='org.freedesktop.{word}'",
        "[system] Successfully activated service 'org.freedesktop.{word}'",
    ),
    # ---- network
    _e(
        "network",
        "info",
        False,
        "NetworkManager dhcpcd dnsmasq systemd-networkd udhcpc connmand",
        "{iface}: carrier acquired",
        "{iface}: leased {ip} for {n4} seconds",
        "DHCPACK({iface}) {ip} {mac}",
        "DHCPREQUEST({iface}) {ip} {mac}",
        "{iface}: Gained carrier",
        "{iface}: Link UP",
        "{iface}: Link is Up",
        "{iface}: link is up {mbps} Mbps {duplex} duplex",
        "{driver} {iface}: NIC Link is Up {mbps} Mbps Full Duplex, Flow Control: RX/TX",
        "{driver} {iface}: Link is Up - {mbps}Mbps/Full - flow control off",
        "{iface}: link up, {mbps}Mbps, full-duplex, lpa 0x{hex4}",
        "{iface}: link becomes ready",
        "<info>  [{ts}.{n4}] device ({iface}): state change: config -> ip-config",
        "query[A] {host} from {ip}",
        "forwarded {host} to {ip}",
        "reply {host} is {ip}",
        "{iface}: adding default route via {ip}",
        "{iface}: Configured",
        "ntpd: time synchronized to {ip}, stratum {n1}",
        "Synchronized to time server {ip}:123 ({host}).",
    ),
    _e(
        "network",
        "info",
        False,
        "NetworkManager dhcpcd udhcpc systemd-networkd dhclient",
        "<info>  [{ts}.{n4}] dhcp4 ({iface}): state changed new lease, address={ip}",
        "<info>  [{ts}.{n4}] dhcp4 ({iface}): state changed extended, address={ip}",
        "<info>  [{ts}.{n4}] dhcp4 ({iface}): option ip_address           => '{ip}'",
        "<info>  [{ts}.{n4}] dhcp4 ({iface}): activation: beginning transaction (timeout in {n2} seconds)",
        "{iface}: DHCPv4 address {ip}/24, gateway {ip} acquired from {ip}",
        "{iface}: DHCP lease renewed for {ip}, valid for {n4} seconds",
        "{iface}: lease of {ip} renewed",
        "{iface}: renewing lease of {ip}",
        "{iface}: rebinding lease of {ip}",
        "{iface}: offered {ip} from {ip}",
        "{iface}: probing address {ip}/24",
        "{iface}: soliciting a DHCP lease",
        "sending renew to {ip}",
        "lease of {ip} obtained, lease time {n4}",
        "DHCPREQUEST for {ip} on {iface} to {ip} port 67",
        "DHCPACK of {ip} from {ip}",
        "bound to {ip} -- renewal in {n4} seconds.",
    ),
    _e(
        "network",
        "info",
        False,
        "avahi-daemon systemd-timesyncd chronyd",
        "Registering new address record for {ip} on {iface}.IPv4.",
        "Withdrawing address record for {ip} on {iface}.",
        "Joining mDNS multicast group on interface {iface}.IPv4 with address {ip}.",
        "Leaving mDNS multicast group on interface {iface}.IPv4 with address {ip}.",
        "New relevant interface {iface}.IPv4 for mDNS.",
        "Server startup complete. Host name is {host}. Local service cookie is {n5}.",
        "Initial clock synchronization to {date}.",
        "Initial synchronization to time server {ip}:123 ({host}).",
        "Contacted time server {ip}:123 ({host}).",
        "Selected source {ip} ({host})",
        "Source {ip} online",
        "System clock was stepped by {f2} seconds",
    ),
    _e(
        "network",
        "warning",
        True,
        "NetworkManager dhcpcd systemd-networkd kernel ifplugd",
        "{iface}: Link is Down",
        "{iface}: link is down",
        "{driver} {iface}: Link is Down",
        "{iface}: carrier lost",
        "{iface}: Lost carrier",
        "{iface}: link down",
        "{iface}: NIC Link is Down",
        "{iface}: no IPv6 Routers available",
        "{iface}: DHCP lease expired",
        "{iface}: no DHCPOFFERS received",
        "bonding: bond0: link status definitely down for interface {iface}, disabling it",
    ),
    _e(
        "network",
        "error",
        True,
        "kernel dnsmasq systemd-resolved connmand ntpd chronyd mosquitto",
        "{iface}: transmit queue {n1} timed out",
        "NETDEV WATCHDOG: {iface} ({driver}): transmit queue {n1} timed out",
        "neighbour: arp_cache: neighbor table overflow!",
        "nf_conntrack: table full, dropping packet",
        "Server returned error NXDOMAIN, mitigating potential DNS violation DVE-2018-0001",
        "failed to send packet: Network is unreachable",
        "connect to {ip} port {port} failed: Connection refused",
        "Connection to {ip}:{port} timed out after {n4} ms",
        "sendto: No route to host",
        "no servers can be used, system clock unsynchronized",
        "Can't synchronise: no selectable sources",
        "Socket error on client {word}, disconnecting.",
        "Client {word} has exceeded timeout, disconnecting.",
        "Connection error: Connection reset by peer",
        "DNS resolution of {host} failed: temporary failure in name resolution",
        "{iface}: duplicate address detected!",
        "{iface}: IPv4 address conflict with {mac}",
    ),
    _e(
        "network",
        "info",
        False,
        "sshd mosquitto lighttpd nginx",
        "New connection from {ip} on port {port}.",
        "New client connected from {ip} as {word} (p2, c1, k60).",
        "Client {word} disconnected.",
        '{ip} - - "GET /{word} HTTP/1.1" 200 {n4}',
        "Saving in-memory database to {path}.",
    ),
    # ---- wireless
    _e(
        "wireless",
        "info",
        False,
        "wpa_supplicant hostapd kernel bluetoothd",
        "{iface}: CTRL-EVENT-CONNECTED - Connection to {mac} completed [id=0 id_str=]",
        "{iface}: Trying to associate with {mac} (SSID='{ssid}' freq={freq} MHz)",
        "{iface}: Associated with {mac}",
        "{iface}: WPA: Key negotiation completed with {mac} [PTK=CCMP GTK=CCMP]",
        "{iface}: STA {mac} IEEE 802.11: associated",
        "{iface}: AP-STA-CONNECTED {mac}",
        "Bluetooth: hci0: BCM: firmware Patch file not found",
        "{iface}: CTRL-EVENT-SCAN-STARTED",
        "{iface}: CTRL-EVENT-SIGNAL-CHANGE above=1 signal=-{n2} noise=-{n2} txrate={n5}",
        "Endpoint registered: sender=:1.{n2} path=/MediaEndpoint/A2DPSink",
    ),
    _e(
        "wireless",
        "warning",
        True,
        "wpa_supplicant hostapd kernel brcmfmac",
        "{iface}: CTRL-EVENT-DISCONNECTED bssid={mac} reason=3 locally_generated=1",
        "{iface}: CTRL-EVENT-BEACON-LOSS",
        "{iface}: CTRL-EVENT-ASSOC-REJECT bssid={mac} status_code=1",
        "{iface}: WPA: 4-Way Handshake failed - pre-shared key may be incorrect",
        '{iface}: CTRL-EVENT-SSID-TEMP-DISABLED id=0 ssid="{ssid}" auth_failures=1 '
        "duration=10 reason=WRONG_KEY",
        "{iface}: deauthenticating from {mac} by local choice (Reason: 3=DEAUTH_LEAVING)",
        "brcmf_cfg80211_scan: scan error (-110)",
        "{iface}: authentication with {mac} timed out",
        "ieee80211 phy0: rt2x00queue_flush_queue: Warning - Queue 2 failed to flush",
        "{iface}: STA {mac} IEEE 802.11: disassociated due to inactivity",
        "Bluetooth: hci0: command 0x{hex4} tx timeout",
    ),
    _e(
        "wireless",
        "info",
        False,
        "zigbee2mqtt zigbee zhc ot-agent otbr-agent zwave-js",
        "Zigbee: device '{dev_name}' joined",
        "Device '{dev_name}' announced itself",
        "MQTT publish: topic 'zigbee2mqtt/{dev_name}', payload '{{\"state\":\"ON\"}}'",
        "Coordinator firmware version: '{ver}'",
        "Started network with PAN ID {hex4}, channel {n2}",
        "Interview of '{dev_name}' completed",
        "Node {n2}: value updated: {word}={n2}",
        "Role changed: detached -> child",
        "Thread network formed, channel {n2}",
    ),
    _e(
        "wireless",
        "error",
        True,
        "zigbee2mqtt zigbee zwave-js otbr-agent",
        "Failed to ping '{dev_name}' (attempt 3/3)",
        "Publish 'set' 'state' to '{dev_name}' failed: 'Error: Delivery failed'",
        "Adapter disconnected, stopping",
        "Error while starting zigbee-herdsman",
        "Interview of '{dev_name}' failed",
        "Node {n2}: node is dead",
        "Failed to send command to node {n2}: transmit queue full",
        "Coordinator failed to respond (timeout after {n4} ms)",
        "Radio: CCA failure, channel {n2} busy",
        "Thread: role changed to disabled",
        "Device '{dev_name}' left the network",
    ),
    # ---- bridge (modbus / serial / fieldbus)
    _e(
        "bridge",
        "info",
        False,
        "modbusd mbusd ser2net canbus-bridge opcua-gw",
        "Modbus TCP server listening on {ip}:{port}",
        "Opened serial port /dev/{tty} at {baud} baud",
        "slave {n2}: read {n2} holding registers from {n4}",
        "Polling cycle completed in {n3} ms ({n2} devices)",
        "CAN bus can0 up, bitrate {baud}",
        "OPC UA session created for {ip}",
        "RTU slave {n2} online",
    ),
    _e(
        "bridge",
        "error",
        True,
        "modbusd mbusd ser2net canbus-bridge opcua-gw",
        "slave {n2}: response timeout after {n4} ms",
        "Modbus exception 0x0{n1} (Illegal data address) from slave {n2}",
        "CRC error in frame from slave {n2}",
        "Serial port /dev/{tty} closed unexpectedly: Input/output error",
        "can0: bus-off, restarting",
        "CAN error frame: controller problem, rx overflow",
        "failed to open /dev/{tty}: Permission denied",
        "Connection to PLC {ip}:{port} lost",
        "OPC UA: BadSecureChannelClosed",
        "slave {n2} not responding, marked offline",
        "register {n4} read failed: illegal function",
    ),
    _e(
        "bridge",
        "warning",
        False,
        "modbusd mbusd canbus-bridge",
        "slave {n2}: retrying request ({n1}/3)",
        "poll interval overrun by {n2} ms",
    ),
    # ---- sensors
    _e(
        "sensor",
        "info",
        False,
        "sensord telegraf sensor-hub collectd nodered",
        "{sensor_name}: temperature={f1}C humidity={n2}%",
        "{sensor_name}: reading {f1} {unit}",
        "published {n2} metrics to {host}",
        "calibration loaded for {sensor_name}",
        "{sensor_name} battery at {n2}%",
        "sample period set to {n2} s",
        "I! Starting Telegraf {ver}",
        "I! Loaded inputs: cpu mem disk {word} mqtt_consumer",
        'I! [agent] Config: Interval:10s, Quiet:false, Hostname:"{host}", Flush Interval:10s',
        "D! [outputs.influxdb] Wrote batch of {n3} metrics in {f2}ms",
        "D! [outputs.mqtt] Buffer fullness: 0 / {n5} metrics",
    ),
    _e(
        "sensor",
        "error",
        True,
        "sensord sensor-hub kernel collectd",
        "{sensor_name}: read failed: Remote I/O error",
        "{sensor_name}: CRC mismatch, discarding sample",
        "{sensor_name}: sensor not found on bus i2c-{n1} at 0x{hex2}",
        "{sensor_name}: value {f1} out of range",
        "{sensor_name}: no data for {n3} seconds",
        "{sensor_name} stuck at {f1}, flagging as faulty",
        "w1_slave_driver: CRC check failed for device 28-{hex8}",
        "dht22: checksum error",
        "ADC channel {n1} saturated",
        "{sensor_name} battery critically low ({n1}%)",
    ),
    _e(
        "sensor",
        "warning",
        False,
        "sensord sensor-hub",
        "{sensor_name}: reading delayed by {n3} ms",
        "{sensor_name} battery low ({n2}%)",
    ),
    # ---- power
    _e(
        "power",
        "info",
        False,
        "upsd upsmon kernel pmic power-monitor",
        "UPS {word}@localhost on line power",
        "Battery charge {n2}%, charging",
        "PMIC: input current limit set to {n4} mA",
        "supply voltage {f2} V nominal",
        "power button pressed",
    ),
    _e(
        "power",
        "critical",
        True,
        "upsd upsmon kernel pmic power-monitor",
        "UPS {word}@localhost on battery",
        "UPS {word}@localhost battery is low",
        "Under-voltage detected! (0x00050005)",
        "brownout detected, supply voltage {f2} V",
        "Battery critically low, initiating shutdown",
        "Power failure detected, switching to backup",
        "PMIC: VBUS overcurrent",
        "Executing automatic power-fail shutdown",
        "reset reason: brownout",
        "reset reason: watchdog",
    ),
    # ---- thermal
    _e(
        "thermal",
        "info",
        False,
        "thermald kernel fancontrol",
        "cpu thermal zone temperature {n2}.{n1} C",
        "fan speed set to {n4} RPM",
        "thermal_zone0: trip point {n1} set to {n5}",
    ),
    _e(
        "thermal",
        "critical",
        True,
        "thermald kernel fancontrol",
        "thermal thermal_zone0: critical temperature reached ({n3} C), shutting down",
        "CPU temperature {n3}C above critical threshold",
        "cpu{n1}: Package temperature above threshold, cpu clock throttled (total events = {n4})",
        "fan0 failure: speed 0 RPM",
        "Thermal throttling engaged at {n2}.{n1} C",
        "overheat protection: disabling radio",
        "temperature of board sensor exceeds limit: {n3} C",
    ),
    # ---- storage
    _e(
        "storage",
        "info",
        False,
        "kernel systemd-fsck e2fsck mount smartd",
        "EXT4-fs ({dev}): re-mounted. Opts: (null)",
        "{dev}: clean, {n5}/{n5} files, {n5}/{n5} blocks",
        "mmcblk0: mmc0:0001 SD32G 29.7 GiB",
        "sd 0:0:0:0: [sda] Attached SCSI removable disk",
        "Device: /dev/sda, SMART Usage Attribute: 194 Temperature_Celsius changed from {n2} to {n2}",
        "fstrim: /: {n3} MiB trimmed",
    ),
    _e(
        "storage",
        "error",
        True,
        "kernel smartd e2fsck mount sqlite influxd",
        "EXT4-fs error (device {dev}): ext4_find_entry:{n4}: inode #{n5}: comm {proc}: "
        "reading directory lblock 0",
        "blk_update_request: I/O error, dev {dev}, sector {n7} op 0x0:(READ)",
        "Buffer I/O error on dev {dev}, logical block {n5}, async page read",
        "EXT4-fs ({dev}): Remounting filesystem read-only",
        "mmc0: card never left busy state",
        "No space left on device",
        "write failed: No space left on device",
        "Device: /dev/sda, {n2} Currently unreadable (pending) sectors",
        "SQUASHFS error: zlib decompression failed, data probably corrupt",
        "UBIFS error (ubi0:0 pid {pid}): ubifs_read_node: bad node type",
        "database disk image is malformed",
        "filesystem is nearly full ({n2}% used)",
        "JBD2: Error -5 detected when updating journal superblock",
        "ata1.00: failed command: READ FPDMA QUEUED",
        "EXT4-fs warning: mounting fs with errors, running e2fsck is recommended",
    ),
    # ---- auth
    _e(
        "auth",
        "info",
        False,
        "sshd sudo login su dropbear polkitd",
        "Accepted publickey for {user} from {ip} port {port} ssh2: ED25519 SHA256:{b64}",
        "pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)",
        "{user} : TTY=pts/0 ; PWD=/home/{user} ; USER=root ; COMMAND={path}",
        "Received disconnect from {ip} port {port}:11: disconnected by user",
        "pam_unix(sudo:session): session closed for user root",
        "Disconnected from user {user} {ip} port {port}",
        "New session {n2} of user {user}.",
        "Password auth succeeded for '{user}' from {ip}:{port}",
    ),
    _e(
        "auth",
        "warning",
        True,
        "sshd dropbear login su sudo",
        "Failed password for invalid user {baduser} from {ip} port {port} ssh2",
        "Invalid user {baduser} from {ip} port {port}",
        "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost={ip}  user={user}",
        "Failed password for root from {ip} port {port} ssh2",
        "error: maximum authentication attempts exceeded for root from {ip} port {port} ssh2 [preauth]",
        "Bad password attempt for '{baduser}' from {ip}:{port}",
        "Did not receive identification string from {ip}",
        "Disconnecting invalid user {baduser} {ip} port {port}: Too many authentication failures [preauth]",
        "PAM {n1} more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost={ip}",
        "{user} : 3 incorrect password attempts ; TTY=pts/0 ; PWD=/ ; USER=root ; COMMAND=/bin/sh",
        "FAILED LOGIN (1) on '/dev/tty1' FOR '{baduser}', Authentication failure",
        "reverse mapping checking getaddrinfo for {host} [{ip}] failed - POSSIBLE BREAK-IN ATTEMPT!",
        "Unable to negotiate with {ip} port {port}: no matching key exchange method found.",
    ),
    _e(
        "auth",
        "error",
        True,
        "mosquitto nginx openvpn stunnel",
        "OpenSSL Error: certificate verify failed",
        "Client {word} sent CONNECT with invalid credentials",
        "TLS handshake failed with {ip}: certificate has expired",
        "certificate for {host} expires in {n1} days",
        "Denied PUBLISH from {word} to topic '{word}/{word}' (not authorized)",
    ),
    # ---- application
    _e(
        "application",
        "info",
        False,
        "edge-app nodered homeassistant collector gateway ota-agent",
        "Processed {n3} messages in {n3} ms",
        "Configuration reloaded from {path}",
        "Request completed: {verb} /api/{word} {n3} ms",
        "Cache hit ratio {n2}%",
        "Worker {n1} started",
        "Checking for firmware update",
        "Firmware is up to date ({ver})",
        "Downloaded update {ver} ({n5} bytes)",
        "User {user} logged in to dashboard",
        "Scheduled job {word} finished in {n3} ms",
        "heartbeat ok",
        "Connected to broker {host}:{port}",
        "state changed from idle to running",
    ),
    _e(
        "application",
        "debug",
        False,
        "edge-app collector gateway nodered",
        "entering {word}() with args ({n2}, {n3})",
        "queue depth {n2}",
        "retrying lookup {word} (attempt 1)",
        "parsed payload of {n3} bytes",
        "error count: 0",
        "no errors found during self-test",
        "skipping optional plugin {word}: not configured",
    ),
    _e(
        "application",
        "error",
        True,
        "edge-app nodered homeassistant collector gateway ota-agent python3 java",
        "Unhandled exception in {word}: {exc}",
        "Traceback (most recent call last):",
        "{exc}: {word} is not defined",
        "java.lang.NullPointerException at com.example.{word}.{Word}.run({Word}.java:{n3})",
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
        "Firmware update failed: signature verification error",
        "OTA image checksum mismatch, rolling back",
        "Worker {n1} crashed, restarting",
        "Failed to connect to broker {host}:{port}: {errmsg}",
        "Request failed: {verb} /api/{word} returned 500",
        "Database connection lost: {errmsg}",
        "panic: runtime error: index out of range [{n1}] with length {n1}",
        "fatal error: concurrent map writes",
        "Assertion `{word} != NULL' failed.",
        "memory leak detected: {n5} bytes in {n3} allocations",
        "deadlock detected in {word}",
        "message queue overflow, {n4} messages dropped",
        "Rollback to previous firmware after {n1} failed boots",
    ),
    _e(
        "application",
        "warning",
        False,
        "edge-app collector gateway nodered homeassistant",
        "Slow request: {verb} /api/{word} took {n4} ms",
        "Deprecated config option '{word}' ignored",
        "Retrying in {n1} seconds",
        "Setup of {word} is taking over 10 seconds.",
        "queue at {n2}% capacity",
        "Clock skew of {n3} ms detected",
    ),
    _e(
        "other",
        "info",
        False,
        "rsyslogd logrotate syslog-ng journald",
        '[origin software="rsyslogd" swVersion="8.{n4}.0" x-pid="{pid}"] start',
        "action 'action-{n1}-builtin:omfile' resumed",
        "rotating log file {path}",
        "Journal started",
        "Runtime Journal is {f1}M, max {n3}M",
        "-- MARK --",
    ),
    _e(
        "other",
        "warning",
        True,
        "rsyslogd journald syslog-ng",
        "imjournal: journal files changed, reloading...",
        "Suppressed {n4} messages from {svc}.service",
        "action 'action-{n1}-builtin:omfwd' suspended (module 'builtin:omfwd'), retry 0",
        "Journal file {path} corrupted or uncleanly shut down, renaming and replacing.",
    ),
    # ---- racks, clusters and servers next to the gateways (generic hardware / job vocabulary)
    _e(
        "kernel",
        "info",
        False,
        "kernel node-agent bmc slurmd",
        "node {node} is up and running",
        "EDAC MC{n1}: {n2} corrected memory errors on DIMM {n1}, below threshold",
        "job {n5} started on {n2} nodes",
        "job {n5} completed with exit status 0",
        "ipmi: all sensors nominal on {node}",
        "boot completed on {node} in {n2} s",
        "firmware of {node} is up to date",
        "fan speed normal on {node}",
        "link {n1} on port {n2} trained at {n2}x",
    ),
    _e(
        "kernel",
        "critical",
        True,
        "kernel node-agent bmc slurmd",
        "mce: [Hardware Error]: CPU {n1}: machine check events logged",
        "uncorrectable ECC error on DIMM {n1} of {node}",
        "node {node} not responding, marking down",
        "node {node} state changed to DOWN",
        "BMC of {node}: CPU{n1} thermal trip, powering off",
        "ipmi: watchdog timer expired on {node}, hard reset",
        "segfault in job {n5} on {node}: core dumped",
        "power supply {n1} failed on {node}",
        "{node}: link error on port {n2}, retraining failed",
        "lost heartbeat from compute agent on {node} ({ip}:{port})",
        "job {n5} terminated abnormally: node failure",
        "NFS server {host} not responding, still trying",
        "mptscsih: ioc0: attempting task abort! (sc={hex8})",
        "scsi {n1}:0:0:0: rejecting I/O to offline device",
        "lost connection to parallel file system server {host}",
    ),
    _e(
        "kernel",
        "warning",
        False,
        "kernel node-agent bmc",
        "{node}: temperature sensor reading {n2} C, within limits",
        "NFS server {host} OK",
        "node {node} rejoined the cluster",
        "scheduler: {n3} jobs pending",
    ),
)
# routine chatter (package managers, boot inventory, banners, configuration and fallback notices)
# and quietly worded faults, from log_chatter.py: drawn more often than one written event each,
# so that routine text without a level is plentiful
ROUTINE_WEIGHT, FAULT_WEIGHT = 2.0, 1.5
QUIET_LEVEL_SHOWN = 0.25
EVENTS: tuple[Event, ...] = _WRITTEN + tuple(
    Event(cat, sev, anom, tuple(apps.split()), templates, quiet=True, weight=weight)
    for specs, weight in ((ROUTINE, ROUTINE_WEIGHT), (FAULTS, FAULT_WEIGHT))
    for cat, sev, anom, apps, templates in specs
)
# server software's own lines (web servers, databases, cluster coordinators, brokers, containers,
# network daemons, generic kernel lines, PAM, UPS and SMART), from log_software.py: they state a
# level like the written events, and are many, so each is drawn with a weight of its own. 0.07
# gives them about 8% of the lines: more (0.6 gives about 31%) would take the quiet routine chatter
# below the quarter of the drawn events that test_log_data.py requires, and halve the sensor and
# bridge lines of _WRITTEN
SOFTWARE_WEIGHT = 0.07
EVENTS += tuple(
    Event(cat, sev, anom, tuple(apps.split()), templates, weight=SOFTWARE_WEIGHT)
    for cat, sev, anom, apps, templates in log_software.ROUTINE + log_software.FAULTS
)


def _hex(n: int) -> Callable[[random.Random], str]:
    return lambda r: "".join(r.choice("0123456789abcdef") for _ in range(n))


def _num(digits: int) -> Callable[[random.Random], str]:
    return lambda r: str(r.randint(0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1))


_WORDS = (
    "sensor",
    "telemetry",
    "pump",
    "valve",
    "relay",
    "meter",
    "door",
    "camera",
    "hvac",
    "boiler",
    "gate",
    "config",
    "scheduler",
    "uploader",
    "poller",
    "alarm",
    "lock",
    "feeder",
    "inverter",
    "charger",
    "metrics",
)
_SVCS = (
    "mosquitto",
    "nodered",
    "zigbee2mqtt",
    "telegraf",
    "edge-agent",
    "nginx",
    "dnsmasq",
    "avahi-daemon",
    "bluetooth",
    "ssh",
    "cron",
    "docker",
    "containerd",
    "modbusd",
    "chronyd",
    "wpa_supplicant",
    "collectd",
    "ota-agent",
    "influxdb",
)
_USERS = ("pi", "admin", "root", "operator", "ubuntu", "tech", "maint", "svc-edge")
_BAD_USERS = ("test", "oracle", "guest", "postgres", "support", "user1", "ftpuser", "admin123", "ubnt", "git")
_SENSORS = (
    "bme280",
    "sht31",
    "ds18b20",
    "dht22",
    "scd30",
    "bh1750",
    "ina219",
    "pms5003",
    "mcp9808",
    "adxl345",
)
_EXC = (
    "ValueError",
    "KeyError",
    "TimeoutError",
    "RuntimeError",
    "ConnectionError",
    "TypeError",
    "OSError",
    "NameError",
)
_ERRMSG = (
    "Connection refused",
    "timed out",
    "Broken pipe",
    "No route to host",
    "Connection reset by peer",
    "TLS error",
)

_FILL: dict[str, Callable[[random.Random], str]] = {
    "n1": _num(1),
    "n2": _num(2),
    "n3": _num(3),
    "n4": _num(4),
    "n5": _num(5),
    "n7": _num(7),
    "hex2": _hex(2),
    "hex4": _hex(4),
    "hex8": _hex(8),
    "f1": lambda r: f"{r.uniform(-20, 95):.1f}",
    "f2": lambda r: f"{r.uniform(0, 40):.2f}",
    "pid": lambda r: str(r.randint(2, 65000)),
    "uid": lambda r: str(r.choice((0, 1000, 1001, 33, 999))),
    "ip": lambda r: (
        f"{r.choice((10, 192, 172, 88, 203))}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
    ),
    "mac": lambda r: ":".join(f"{r.randint(0, 255):02x}" for _ in range(6)),
    "port": lambda r: str(r.choice((22, 80, 443, 502, 1883, 8883, 8080, r.randint(1024, 65535)))),
    "iface": lambda r: r.choice(
        ("eth0", "eth1", "wlan0", "wlan1", "enp1s0", "br-lan", "usb0", "wwan0", "end0", "wlp2s0")
    ),
    "dev": lambda r: r.choice(
        ("mmcblk0p2", "mmcblk0p1", "sda1", "sdb1", "nvme0n1p1", "ubi0:rootfs", "dm-0", "mtdblock3")
    ),
    "usb": lambda r: f"{r.randint(1, 3)}-{r.randint(1, 4)}{r.choice(('', '.1', '.2', '.4'))}",
    "proc": lambda r: r.choice(
        (
            "python3",
            "node",
            "mosquitto",
            "java",
            "telegraf",
            "edge-agent",
            "kworker/0:1",
            "sqlite3",
            "modbusd",
        )
    ),
    "lib": lambda r: r.choice(
        ("libc.so.6", "libcrypto.so.3", "libpthread.so.0", "libzigbee.so", "libmodbus.so.5")
    ),
    "path": lambda r: (
        "/"
        + "/".join(
            r.choice(("var", "lib", "opt", "etc", "usr", "data", "log", "edge", "run", "tmp", "bin"))
            for _ in range(r.randint(2, 4))
        )
    ),
    "svc": lambda r: r.choice(_SVCS),
    "svc_desc": lambda r: r.choice(
        (
            "Mosquitto MQTT Broker",
            "Network Time Synchronization",
            "OpenBSD Secure Shell server",
            "Node-RED",
            "Zigbee2MQTT bridge",
            "Telegraf",
            "Edge Agent",
            "Daily apt upgrade",
            "Journal Service",
            "Bluetooth service",
            "WPA supplicant",
            "Modbus gateway",
            "Docker Application Container Engine",
        )
    ),
    "target": lambda r: r.choice(
        ("Multi-User System", "Network is Online", "Basic System", "Timers", "Sockets", "Graphical Interface")
    ),
    "user": lambda r: r.choice(_USERS),
    "baduser": lambda r: r.choice(_BAD_USERS),
    "host": lambda r: r.choice(
        ("broker.local", "api.example.net", "pool.ntp.org", "hub.lan", "updates.example.com", "gw-03.site")
    ),
    "word": lambda r: r.choice(_WORDS),
    "Word": lambda r: r.choice(_WORDS).capitalize(),
    "ssid": lambda r: r.choice(("HomeNet", "factory-iot", "Warehouse_5G", "guest", "plant-ap-2")),
    "freq": lambda r: r.choice(("2412", "2437", "2462", "5180", "5745")),
    "driver": lambda r: r.choice(("r8169", "smsc95xx", "lan78xx", "stmmac", "igb")),
    "mbps": lambda r: r.choice(("10", "100", "1000", "2500")),
    "duplex": lambda r: r.choice(("full", "half", "Full")),
    "dev_name": lambda r: r.choice(
        ("0x00158d0001a2b3c4", "kitchen_motion", "door_sensor_2", "plug_12", "living_bulb", "thermostat_1")
    ),
    "tty": lambda r: r.choice(("ttyUSB0", "ttyUSB1", "ttyAMA0", "ttyS1", "ttyACM0")),
    "baud": lambda r: r.choice(("9600", "19200", "115200", "250000", "500000")),
    "sensor_name": lambda r: r.choice(_SENSORS) + r.choice(("", "-1", "@0x76", "[2]")),
    "unit": lambda r: r.choice(("hPa", "lux", "ppm", "mA", "V", "ug/m3")),
    "ver": lambda r: f"{r.randint(1, 6)}.{r.randint(0, 20)}.{r.randint(0, 99)}",
    "ts": lambda r: str(r.randint(1600000000, 1800000000)),
    "date": lambda r: (
        f"{r.choice(('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'))} 20{r.randint(20, 29)}-"
        f"{r.randint(1, 12):02d}-{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
        f"{r.randint(0, 59):02d}.{r.randint(0, 999999):06d} UTC"
    ),
    "b64": lambda r: "".join(r.choice(string.ascii_letters + string.digits + "+/") for _ in range(43)),
    "exc": lambda r: r.choice(_EXC),
    "errmsg": lambda r: r.choice(_ERRMSG),
    "verb": lambda r: r.choice(("GET", "POST", "PUT", "DELETE")),
    "node": lambda r: r.choice(
        ("R02-M1-N0", "node-17", "cn042", "rack3-u12", "gw-7", f"n0{r.randint(10, 99)}")
    ),
}

_LEVEL_WORDS: dict[str, tuple[str, ...]] = {
    "debug": ("DEBUG", "debug", "D", "DBG", "TRACE"),
    "info": ("INFO", "info", "I", "INF", "Information"),
    "notice": ("NOTICE", "notice", "N", "INFO"),
    "warning": ("WARN", "WARNING", "warning", "W", "WRN"),
    "error": ("ERROR", "error", "E", "ERR", "err"),
    "critical": ("CRITICAL", "FATAL", "crit", "F", "EMERG", "ALERT"),
}
_SYSLOG_PRI = {"debug": 7, "info": 6, "notice": 5, "warning": 4, "error": 3, "critical": 2}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_HOSTS = (
    "gw01",
    "raspberrypi",
    "edge-gw-7",
    "openwrt",
    "hub",
    "plc-bridge",
    "node-3",
    "cam-gw",
    "nvr-1",
    "srv12",
)
_FILL.update(FILL)  # log_chatter's placeholders (package names and versions, boot inventory...)
_FILL.update(log_software.FILL)  # server software's placeholders (ports, durations, ids...)


def _render_message(r: random.Random, template: str) -> str:
    out = template
    for key, fill in _FILL.items():
        token = "{" + key + "}"
        while token in out:
            out = out.replace(token, fill(r), 1)
    return out.replace("{{", "{").replace("}}", "}")


def _clock(r: random.Random) -> tuple[int, int, int, int, int, int]:
    return (
        r.randint(1, 12),
        r.randint(1, 28),
        r.randint(0, 23),
        r.randint(0, 59),
        r.randint(0, 59),
        r.randint(0, 999),
    )


def _fmt_3164(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, _ = _clock(r)
    pri = f"<{8 * r.choice((1, 3, 4, 10, 16)) + _SYSLOG_PRI[sev]}>" if with_level else ""
    tag = app if app == "kernel" else f"{app}[{r.randint(2, 40000)}]"
    return f"{pri}{_MONTHS[mo - 1]} {d:2d} {h:02d}:{mi:02d}:{s:02d} {r.choice(_HOSTS)} {tag}: {msg}"


def _fmt_5424(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, ms = _clock(r)
    pri = 8 * r.choice((1, 3, 4, 16)) + _SYSLOG_PRI[sev]
    stamp = f"2026-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"
    return f"<{pri}>1 {stamp} {r.choice(_HOSTS)} {app} {r.randint(2, 40000)} - - {msg}"


def _fmt_journal(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, _ = _clock(r)
    stamp = f"{_MONTHS[mo - 1]} {d:02d} {h:02d}:{mi:02d}:{s:02d}"
    return f"{stamp} {r.choice(_HOSTS)} {app}[{r.randint(2, 40000)}]: {msg}"


def _fmt_dmesg(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    stamp = f"[{r.randint(0, 99999):5d}.{r.randint(0, 999999):06d}]"
    return f"<{_SYSLOG_PRI[sev]}>{stamp} {msg}" if with_level else f"{stamp} {msg}"


def _fmt_json(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, ms = _clock(r)
    obj: dict[str, object] = {"ts": f"2026-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"}
    if with_level:
        obj[r.choice(("level", "lvl", "severity"))] = r.choice(_LEVEL_WORDS[sev]).lower()
    obj[r.choice(("msg", "message"))] = msg
    obj[r.choice(("app", "logger", "service"))] = app
    return json.dumps(obj)


def _fmt_java(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, ms = _clock(r)
    lvl = r.choice(_LEVEL_WORDS[sev]).upper()
    package = r.choice(("com.acme", "org.edge", "io.gw"))
    cls = f"{package}.{r.choice(_WORDS)}.{r.choice(_WORDS).capitalize()}Service"
    thread = r.choice(("main", "pool-1-thread-3", "worker-2", "IPC Server handler 4", "mqtt-rx"))
    return f"2026-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d},{ms:03d} {lvl} [{thread}] {cls}: {msg}"


def _fmt_logcat(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    mo, d, h, mi, s, ms = _clock(r)
    lvl = {"debug": "D", "info": "I", "notice": "I", "warning": "W", "error": "E", "critical": "F"}[sev]
    pid = r.randint(100, 30000)
    tid = pid + r.randint(0, 50)
    return f"{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{ms:03d}  {pid}  {tid} {lvl} {app}: {msg}"


def _fmt_bracket(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    _, d, h, mi, s, _ = _clock(r)
    lvl = f"[{r.choice(_LEVEL_WORDS[sev])}] " if with_level else ""
    return f"[{r.choice(_MONTHS)} {d:02d} {h:02d}:{mi:02d}:{s:02d} 2026] {lvl}[{app}] {msg}"


def _fmt_bare(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    if with_level:
        return (
            f"{r.choice(_LEVEL_WORDS[sev])}: {msg}"
            if r.random() < 0.5
            else f"{r.choice(_LEVEL_WORDS[sev])} {msg}"
        )
    return msg


def _fmt_stamped(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    """A date and time, then the message (package managers' logs, many applications')."""
    mo, d, h, mi, s, _ = _clock(r)
    level = f"{r.choice(_LEVEL_WORDS[sev])} " if with_level else ""
    return f"2026-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d} {level}{msg}"


def _fmt_masked(r: random.Random, msg: str, sev: str, app: str, with_level: bool) -> str:
    """What a template miner hands over: parameters replaced by <*>."""
    words = msg.split(" ")
    return " ".join("<*>" if any(c.isdigit() for c in w) and r.random() < 0.9 else w for w in words)


_FORMATS: tuple[tuple[Callable[[random.Random, str, str, str, bool], str], float, float], ...] = (
    # (formatter, weight, probability the level is shown)
    (_fmt_3164, 3.0, 0.3),
    (_fmt_5424, 1.0, 1.0),
    (_fmt_journal, 2.0, 0.0),
    (_fmt_dmesg, 1.0, 0.3),
    (_fmt_json, 1.5, 0.8),
    (_fmt_java, 1.5, 1.0),
    (_fmt_logcat, 1.0, 1.0),
    (_fmt_bracket, 1.0, 0.7),
    (_fmt_bare, 3.0, 0.3),
    (_fmt_masked, 1.5, 0.0),
    (_fmt_stamped, 1.5, 0.3),
)


def _pick_event(r: random.Random) -> Event:
    # anomalies are rarer than routine lines, but must be learnt well: 30% of the events drawn
    # (35% until build 15: with procedural failures, 28% of the lines were labelled error or
    # critical, and the model called unfamiliar routine text an error)
    pool = [e for e in EVENTS if e.anomaly] if r.random() < 0.3 else [e for e in EVENTS if not e.anomaly]
    return r.choices(pool, weights=[e.weight for e in pool])[0]


# ---- procedural lines: unknown components doing routine work, or failing. Real systems log
# mostly routine lines full of identifiers the model has never seen; those must read as normal,
# and a failure must be recognized from its wording, not from a memorized template.
_SYLLABLES = (
    "blo",
    "ck",
    "man",
    "ager",
    "task",
    "sched",
    "ul",
    "stor",
    "age",
    "work",
    "pool",
    "sess",
    "ion",
    "cache",
    "node",
    "map",
    "red",
    "uce",
    "shuf",
    "fle",
    "exec",
    "utor",
    "disp",
    "atch",
    "reg",
    "try",
    "con",
    "tain",
    "res",
    "our",
    "track",
    "data",
    "stream",
    "sink",
    "que",
    "ue",
    "lea",
    "se",
    "snap",
    "shot",
    "bal",
    "ancer",
    "quo",
    "rum",
    "peer",
    "sync",
    "agent",
    "mon",
    "itor",
)
_OBJECTS = (
    "block",
    "task",
    "container",
    "session",
    "segment",
    "chunk",
    "request",
    "job",
    "stage",
    "partition",
    "snapshot",
    "replica",
    "lease",
    "record",
    "batch",
    "packet",
    "frame",
    "message",
    "file",
    "volume",
    "event",
    "report",
    "channel",
    "worker",
    "slot",
    "ticket",
    "transaction",
    "checkpoint",
    "shard",
)
_STATES = (
    "RUNNING",
    "IDLE",
    "ACTIVE",
    "PENDING",
    "READY",
    "SCHEDULED",
    "COMMITTED",
    "OPEN",
    "CLOSED",
    "ASSIGNED",
)
_VERBS = {
    "read": "reading",
    "write": "writing",
    "open": "opening",
    "connect to": "connecting to",
    "send": "sending",
    "fetch": "fetching",
    "allocate": "allocating",
    "load": "loading",
    "mount": "mounting",
    "commit": "committing",
    "replicate": "replicating",
    "sync": "syncing",
    "start": "starting",
    "register": "registering",
    "decode": "decoding",
    "flush": "flushing",
}
_REASONS = (
    "Connection refused",
    "connection timed out",
    "No space left on device",
    "Input/output error",
    "checksum mismatch",
    "out of memory",
    "Connection reset by peer",
    "Host is unreachable",
    "Permission denied",
    "Broken pipe",
    "invalid argument",
    "too many open files",
    "bad file descriptor",
    "resource temporarily unavailable",
    "remote end closed connection",
    "disk quota exceeded",
)
_ROUTINE = (
    "{comp}: Registered {obj} {id}",
    "Starting {obj} {id}",
    "Finished {obj} {n} in {n} ms ({n}/{n})",
    "Received {obj} {id} of size {n} from {ip}",
    "Added {obj} {id} to {comp}",
    "Removing {obj} {id}",
    "Updating {obj} {id} with {n} entries",
    "Got assigned {obj} {n}",
    "{comp} started on port {port}",
    "Opening {obj} for {comp}",
    "Closing {obj} {id}",
    "Committed {obj} {id}",
    "Loaded {n} {obj}s from {path}",
    "Sending {obj} {id} to {ip}:{port}",
    "{obj} {id} state changed from {state} to {state}",
    "heartbeat from {comp} {id}",
    "{key}={n} {key}={n}.{n} {key}={word}",
    "Reporting {obj} status: ok",
    "Allocated {n} {obj}s on {host}",
    "Using {comp} with {n} threads",
    "Saved {obj} {id} ({n} bytes)",
    "{comp} initialized in {n} ms",
    "Verified {obj} {id}",
    "Scheduling {obj} {id} on {host}",
    "{obj} {id} is now {state}",
    "{comp}: {verbing} {obj} {id}",
    "{comp} {id} {obj} {id} {n} {n}",
    "Deleting {obj} {id} file {path}",
    "Served {obj} {id} to {ip}",
    "{comp}.{comp}: {obj}={id}, size={n}",
    "Total {obj}s: {n}, active: {n}, idle: {n}",
    "Stored {obj} {id} in memory (estimated size {n} KB)",
    "{host}:{port} close, {n} bytes sent, {n} bytes received, lifetime {dur}",
    "{comp} open through proxy {host}:{port} HTTPS",
    "{comp} connected to {host}:{port}, {n} bytes queued",
    "Starting the {comp} main loop",
    "Loaded {comp} stack v{n}.{n}",
    "Session {id} initialized by client {comp}",
    "Reading cached state for package {comp}: {n}",
    "{comp}::{comp}: {key}={n} {key}={n}",
    "{comp}: power state {n} -> {n}",
    "{comp}: wake lock acquired by {comp}",
    "{comp}: wake lock released",
    "{comp} step counter total={n} today={n}",
    "flush {obj} data",
    "screen on",
    "screen off",
    "{comp}: display brightness set to {n}",
    "{comp}: {obj} {id} took longer than expected ({n} ms)",
    "{comp}: listener {id} registered for {obj} updates",
    "{comp} received broadcast {comp}",
    "{comp}: cleaning up {obj}s older than {n} days",
    "{comp}: requesting upload of {n} {obj}s",
)
_FAILURES = (
    "Failed to {verb} {obj} {id}: {reason}",
    "Error while {verbing} {obj} {id}",
    "Exception in {comp}: {exc}: {reason}",
    "Could not {verb} {obj} {id}, giving up",
    "Unable to {verb} {obj} {id}: {reason}",
    "{comp} crashed with signal {n}",
    "{obj} {id} lost: {reason}",
    "{obj} {id} is corrupt",
    "Fatal: {comp} aborted",
    "Timed out waiting for {obj} {id} after {n} ms",
    "{comp} terminated unexpectedly",
    "Too many failures for {obj} {id}, marking it bad",
    "Permission denied while {verbing} {obj} {path}",
    "{comp}: {verbing} {obj} {id} failed: {reason}",
    "{obj} {id} FAILED with exit code {n}",
    "{comp} {id} is unreachable, removing it",
    "Lost connection to {comp} at {ip}:{port}",
)


def _camel(r: random.Random) -> str:
    return "".join(r.choice(_SYLLABLES).capitalize() for _ in range(r.randint(2, 3)))


def _component(r: random.Random) -> str:
    style = r.random()
    if style < 0.4:
        return _camel(r)
    if style < 0.7:
        top = r.choice(("org", "com", "io", "net"))
        return f"{top}.{r.choice(_SYLLABLES)}.{r.choice(_SYLLABLES)}.{_camel(r)}"
    return "_".join(r.choice(_SYLLABLES) for _ in range(r.randint(1, 2)))


def _some_id(r: random.Random) -> str:
    kind = r.randrange(7)
    if kind == 0:
        return f"blk_{r.choice(('', '-'))}{r.randint(10**17, 10**19)}"
    if kind == 1:
        return f"{_hex(8)(r)}-{_hex(4)(r)}-{_hex(4)(r)}-{_hex(4)(r)}-{_hex(12)(r)}"
    if kind == 2:
        return f"{r.choice(_OBJECTS)}_{r.randint(1000, 9999)}_{r.randint(1, 99):04d}_{r.randint(1, 9):02d}"
    if kind == 3:
        return f"0x{_hex(8)(r)}"
    if kind == 4:
        return str(r.randint(0, 10**6))
    if kind == 5:
        return f"{r.choice(_SYLLABLES)}-{r.randint(1, 64)}"
    return f"{r.randint(0, 9)}.{r.randint(0, 99)}"


# Procedural lines' category is read from their own words, so that it can be learnt: a storage
# object names storage, an address or a connection names the network, anything else is the
# application's. (Drawing it at random made about a fifth of the category labels noise no model could
# learn: the teacher and its student both sat at that ceiling.)
_STORAGE_OBJECTS = frozenset(
    ("block", "segment", "chunk", "partition", "snapshot", "replica", "file", "volume", "checkpoint", "shard")
)
_NETWORK_CUES = ("{ip}", "{port}", "{host}", "connection", "proxy")


def _procedural_category(template: str, obj: str | None) -> str:
    if obj in _STORAGE_OBJECTS:
        return "storage"
    if any(cue in template for cue in _NETWORK_CUES):
        return "network"
    return "application"


def _procedural(r: random.Random, failing: bool) -> tuple[str, str, str]:
    template = r.choice(_FAILURES if failing else _ROUTINE)
    verb = r.choice(list(_VERBS))
    objects: list[str] = []

    def obj() -> str:
        objects.append(r.choice(_OBJECTS))
        return objects[-1]

    values: dict[str, Callable[[], str]] = {
        "comp": lambda: _component(r),
        "obj": obj,
        "id": lambda: _some_id(r),
        "n": lambda: str(r.randint(0, 99999)),
        "state": lambda: r.choice(_STATES),
        "verb": lambda: verb,
        "verbing": lambda: _VERBS[verb],
        "reason": lambda: r.choice(_REASONS),
        "exc": lambda: r.choice(_EXC),
        "key": lambda: r.choice(_SYLLABLES),
        "word": lambda: r.choice(_WORDS),
        "ip": lambda: _FILL["ip"](r),
        "port": lambda: _FILL["port"](r),
        "host": lambda: _FILL["host"](r),
        "path": lambda: _FILL["path"](r),
        "dur": lambda: r.choice(
            ("<1 sec", f"{r.randint(1, 59)} sec", f"{r.randint(1, 9)}:{r.randint(10, 59)}")
        ),
    }
    msg = template
    for key, make in values.items():
        token = "{" + key + "}"
        while token in msg:
            msg = msg.replace(token, make(), 1)
    if failing:
        severity = r.choices(("error", "critical", "warning"), weights=(7, 1.5, 1.5))[0]
    else:
        severity = r.choices(("info", "debug", "notice"), weights=(7, 2, 1))[0]
    return msg, severity, _procedural_category(template, objects[0] if objects else None)


PROCEDURAL_SHARE = 0.45


def _example(r: random.Random, procedural_share: float = PROCEDURAL_SHARE) -> LogExample:
    procedural = r.random() < procedural_share
    quiet = False
    if procedural:
        failing = r.random() < 0.3
        msg, severity, category = _procedural(r, failing)
        app, anomaly = _component(r).split(".")[-1], failing
    else:
        event = _pick_event(r)
        msg = _render_message(r, r.choice(event.templates))
        app, severity, category, anomaly = r.choice(event.apps), event.severity, event.category, event.anomaly
        quiet = event.quiet
    formats, weights = [f[0] for f in _FORMATS], [f[1] for f in _FORMATS]
    idx = r.choices(range(len(formats)), weights=weights)[0]
    fmt, _, p_level = _FORMATS[idx]
    shown = r.random() < (p_level * QUIET_LEVEL_SHOWN if quiet else p_level)
    if procedural and not shown:
        # a level the line does not show cannot be read from it: label what the wording says
        severity = "error" if failing else "info"
    line = fmt(r, msg, severity, app, shown)
    if r.random() < 0.1:
        line = line.lower()
    return LogExample(line, severity, category, anomaly)


def generate(seed: int, n: int) -> list[LogExample]:
    """``n`` labelled log lines, deterministic from ``seed``."""
    r = random.Random(seed)
    return [_example(r) for _ in range(n)]


def _check_labels() -> None:
    for event in EVENTS:
        assert event.category in CATEGORIES, event.category
        assert event.severity in SEVERITIES, event.severity


_check_labels()
