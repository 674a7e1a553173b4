"""A second, independent MQTT client (Debian's python3-paho-mqtt, websocket transport) against the
broker: pub/sub at QoS 0/1/2, a retained message, a will, and a persistent session that gets what was
published while it was away. Given a second port (another node of a cluster), the clients are spread
over both: every check then crosses nodes. Prints one JSON line per check and exits non-zero on the
first failure. Usage: paho_scenario.py <port> <311|5> [<port of another node>]"""
import json
import sys
import threading
import time
import uuid

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

PORT = int(sys.argv[1])
OTHER = int(sys.argv[3]) if len(sys.argv) > 3 else PORT
PROTOCOL = mqtt.MQTTv5 if sys.argv[2] == "5" else mqtt.MQTTv311
RUN = uuid.uuid4().hex[:8]
TIMEOUT = 5.0


class Client:
    def __init__(self, name, port, will=None, persistent=False):
        self.messages = []
        self.changed = threading.Condition()
        self.connected = threading.Event()
        self.session_present = None
        v5 = PROTOCOL == mqtt.MQTTv5
        session = {} if v5 else {"clean_session": not persistent}
        self.client = mqtt.Client(
            client_id=f"paho-{name}-{RUN}", protocol=PROTOCOL, transport="websockets", **session
        )
        self.client.ws_set_options(path="/mqtt")
        if will is not None:
            self.client.will_set(will[0], will[1], qos=1, retain=False)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: self._notify()
        self.subscribed = 0
        kwargs = {}
        if v5:
            kwargs["clean_start"] = not persistent
            if persistent:
                kwargs["properties"] = Properties(PacketTypes.CONNECT)
                kwargs["properties"].SessionExpiryInterval = 300
        self.client.connect("127.0.0.1", port, keepalive=30, **kwargs)
        self.client.loop_start()
        if not self.connected.wait(TIMEOUT):
            fail(f"{name} did not connect")

    def _on_connect(self, _client, _userdata, flags, *_rest):
        self.session_present = bool(flags.get("session present"))
        self.connected.set()

    def _notify(self):
        with self.changed:
            self.subscribed += 1
            self.changed.notify_all()

    def _on_message(self, _client, _userdata, message):
        with self.changed:
            self.messages.append(message)
            self.changed.notify_all()

    def subscribe(self, topic, qos):
        before = self.subscribed
        self.client.subscribe(topic, qos)
        with self.changed:
            if not self.changed.wait_for(lambda: self.subscribed > before, TIMEOUT):
                fail(f"no SUBACK for {topic}")

    def wait_messages(self, count):
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.messages) >= count, TIMEOUT):
                got = [(m.topic, m.qos) for m in self.messages]
                fail(f"expected {count} messages, got {got}")
        return self.messages

    def publish(self, topic, payload, qos, retain=False):
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(TIMEOUT)
        if not info.is_published():
            fail(f"publish to {topic} not acknowledged")

    def stop(self):
        self.client.disconnect()
        self.client.loop_stop()


def fail(why):
    print(json.dumps({"ok": False, "why": why}), flush=True)
    sys.exit(1)


def check(name, condition, detail):
    if not condition:
        fail(f"{name}: {detail}")
    print(json.dumps({"ok": True, "check": name}), flush=True)


base = f"paho/{RUN}"

sub = Client("sub", PORT)
sub.subscribe(f"{base}/qos/#", 2)
pub = Client("pub", OTHER)
for qos in (0, 1, 2):
    pub.publish(f"{base}/qos/{qos}", f"q{qos}", qos)
got = sub.wait_messages(3)
check(
    "pubsub",
    sorted((m.topic, m.payload.decode(), m.qos) for m in got) == [(f"{base}/qos/{q}", f"q{q}", q) for q in (0, 1, 2)],
    [(m.topic, m.payload, m.qos) for m in got],
)
check("qos2", any(m.qos == 2 for m in got), "no QoS 2 delivery")

pub.publish(f"{base}/retained", "kept", 1, retain=True)
late = Client("late", OTHER)
late.subscribe(f"{base}/retained", 1)
retained = late.wait_messages(1)[0]
check("retained", retained.retain and retained.payload == b"kept", (retained.retain, retained.payload))

watcher = Client("watcher", OTHER)
watcher.subscribe(f"{base}/will", 1)
doomed = Client("doomed", PORT, will=(f"{base}/will", "gone"))
# Drop the connection without DISCONNECT: the broker must publish the will.
doomed.client.loop_stop()
doomed.client.socket().close()
will = watcher.wait_messages(1)[0]
check("will", will.topic == f"{base}/will" and will.payload == b"gone", (will.topic, will.payload))

away = Client("away", PORT, persistent=True)
away.subscribe(f"{base}/away/#", 2)
away.stop()
for n in range(1, 11):
    pub.publish(f"{base}/away/{n}", str(n), 1 if n < 10 else 2)
back = Client("away", OTHER, persistent=True)
waited = back.wait_messages(10)
check(
    "session",
    back.session_present and sorted(int(m.payload) for m in waited) == list(range(1, 11)),
    (back.session_present, [(m.topic, m.payload, m.qos) for m in waited]),
)

for client in (sub, pub, late, watcher, back):
    client.stop()
time.sleep(0.1)
