"""A minimal Bureau bus client in Python: pyzmq (Debian's python3-zmq) and protobuf code
generated from Schemas/ by protoc (Debian's protobuf-compiler and python3-protobuf).

It follows the wire protocol in README.md: find the sockets in DATA/run/bus.json, publish
envelopes on the ingress socket and await the acknowledgement, read the log for catch-up,
then follow the PUB socket. Generated code goes to tools/python/generated (not committed).
"""

import json
import os
import struct
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GENERATED = os.path.join(HERE, "generated")


def generate():
    """Runs protoc over Schemas/bureau/*.proto into tools/python/generated (once)."""
    schemas = os.path.join(ROOT, "Schemas")
    protos = sorted(
        os.path.join("bureau", name) for name in os.listdir(os.path.join(schemas, "bureau")) if name.endswith(".proto")
    )
    stamp = os.path.join(GENERATED, "bureau", "envelope_pb2.py")
    newest = max(os.path.getmtime(os.path.join(schemas, p)) for p in protos)
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < newest:
        os.makedirs(GENERATED, exist_ok=True)
        subprocess.run(["protoc", f"--proto_path={schemas}", f"--python_out={GENERATED}"] + protos, check=True)
        open(os.path.join(GENERATED, "bureau", "__init__.py"), "a").close()
    if GENERATED not in sys.path:
        sys.path.insert(0, GENERATED)


generate()

import zmq  # noqa: E402
from bureau import bus_pb2, envelope_pb2  # noqa: E402

VERSION = b"bureau/1"


def message_class(type_name):
    """The generated class for a full protobuf name such as bureau.watchlist.PairAdded."""
    package, _, name = type_name.rpartition(".")
    module = __import__(f"bureau.{package.split('.')[-1]}_pb2", fromlist=[name])
    return getattr(module, name)


class Bus:
    def __init__(self, data):
        with open(os.path.join(data, "run", "bus.json")) as handle:
            info = json.load(handle)
        self.endpoints = info["endpoints"]
        self.context = zmq.Context()
        self.ingress = self.context.socket(zmq.DEALER)
        self.ingress.setsockopt(zmq.LINGER, 0)
        self.ingress.connect(self.endpoints["ingress"])
        self.reader = self.context.socket(zmq.DEALER)
        self.reader.setsockopt(zmq.LINGER, 0)
        self.reader.connect(self.endpoints["read"])

    def close(self):
        self.context.destroy(linger=0)

    def publish(self, message, producer="python", correlation=None, timeout=10.0):
        """Publishes one event; retries with the same id until acknowledged. Returns (position, id)."""
        envelope = envelope_pb2.Envelope()
        event_id = uuid.uuid4().bytes
        envelope.id = event_id
        envelope.type = message.DESCRIPTOR.full_name
        envelope.producer.process = producer
        envelope.correlation = correlation or event_id
        envelope.payload = message.SerializeToString()
        request_id = os.urandom(8)
        frames = [VERSION, b"publish", request_id, envelope.SerializeToString()]
        deadline = time.monotonic() + timeout
        wait = 0.25
        while time.monotonic() < deadline:
            self.ingress.send_multipart(frames)
            if self.ingress.poll(int(min(wait, deadline - time.monotonic()) * 1000)):
                reply = self.ingress.recv_multipart()
                if reply[1] != b"ack" or reply[2] != request_id:
                    raise RuntimeError(f"unexpected reply {reply[1]!r}")
                ack = bus_pb2.PublishAck()
                ack.ParseFromString(reply[3])
                result = ack.results[0]
                if result.status == bus_pb2.PublishResult.REJECTED:
                    raise RuntimeError(f"rejected: {result.reason}")
                return result.position, event_id
            wait = min(wait * 2, 2.0)
        raise TimeoutError(f"no acknowledgement from {self.endpoints['ingress']} within {timeout} s")

    def read(self, after, prefixes=(), max_events=1024):
        """One catch-up read: (envelopes, scanned_to, head)."""
        request = bus_pb2.ReadRequest()
        setattr(request, "after", after)
        request.max_events = max_events
        request.type_prefixes.extend(prefixes)
        request_id = os.urandom(8)
        self.reader.send_multipart([VERSION, b"read", request_id, request.SerializeToString()])
        if not self.reader.poll(5000):
            raise TimeoutError("no answer to a read")
        reply = self.reader.recv_multipart()
        if reply[1] != b"events":
            error = bus_pb2.ErrorReply()
            error.ParseFromString(reply[3])
            raise RuntimeError(f"read failed: {error.code} {error.message}")
        header = bus_pb2.ReadReply()
        header.ParseFromString(reply[3])
        envelopes = []
        for body in reply[4:]:
            envelope = envelope_pb2.Envelope()
            envelope.ParseFromString(body)
            envelopes.append(envelope)
        return envelopes, header.scanned_to, header.head

    def events(self, after=0, prefixes=()):
        """Every matching event after `after`, gap-free: catch-up from the log, then live.

        Follows the global chain (README, "No silent loss"): a publication whose previous
        position is past the cursor means one was lost, so the log is read again.
        """
        sub = self.context.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(self.endpoints["events"])
        cursor = after
        try:
            while True:
                # Catch up from the log.
                while True:
                    envelopes, scanned_to, head = self.read(cursor, prefixes)
                    for envelope in envelopes:
                        if envelope.position > cursor:
                            cursor = envelope.position
                            yield envelope
                    cursor = max(cursor, scanned_to)
                    if scanned_to >= head:
                        break
                # Live, until a gap.
                while True:
                    frames = sub.recv_multipart()
                    if frames[0] == b"_heartbeat":
                        heartbeat = bus_pb2.Heartbeat()
                        heartbeat.ParseFromString(frames[1])
                        if heartbeat.head > cursor:
                            break
                        continue
                    position, previous = struct.unpack("<QQ", frames[1])
                    if position <= cursor:
                        continue
                    if previous > cursor and position - 1 > cursor:
                        break
                    cursor = position
                    envelope = envelope_pb2.Envelope()
                    envelope.ParseFromString(frames[2])
                    if not prefixes or any(envelope.type.startswith(p) for p in prefixes):
                        yield envelope
        finally:
            sub.close(linger=0)
