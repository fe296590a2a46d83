"""A minimal Bureau bus client in Python: pyzmq (Debian's python3-zmq) and protobuf code
generated from Schemas/ by protoc (Debian's protobuf-compiler and python3-protobuf).

It follows the wire protocol in README.md: find the sockets in DATA/run/bus.json (or, for a
bus on another machine, at tcp://HOST:PORT, PORT+1 and PORT+2 with CURVE keys), publish
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
from zmq.utils.monitor import parse_monitor_message  # noqa: E402

VERSION = b"bureau/2"


def message_class(type_name):
    """The generated class for a full protobuf name such as bureau.watchlist.PairAdded."""
    package, _, name = type_name.rpartition(".")
    module = __import__(f"bureau.{package.split('.')[-1]}_pb2", fromlist=[name])
    return getattr(module, name)


# The codes of the bus's error replies, as Bus's `BusErrorCode.known` lists them
# (Sources/Bus/BusErrorCode.swift); PythonClientTests holds the two lists equal.
ERROR_CODES = frozenset({
    "malformed-request", "too-large", "unknown-verb", "unsupported-protocol", "out-of-order", "ahead-of-log",
    "read-failed",
})
# The one a subscriber acts on: its cursor is past the end of the bus's log.
AHEAD_OF_LOG = "ahead-of-log"


class BusError(RuntimeError):
    """The bus answered with an error reply: its code (one of the wire's, which the daemon's
    `BusErrorCode` lists: Sources/Bus/BusErrorCode.swift) and message; with `ahead-of-log`, the
    daemon's head and epoch too (raised as `AheadOfLog` by a subscriber). What this client finds
    out on its own is not one of these: `BusUnusable`, `TimeoutError`."""

    def __init__(self, code, message, head=None, epoch=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.head = head
        self.epoch = epoch


class BusUnusable(RuntimeError):
    """This client can never get in to the bus, found from its connection, not answered by the
    bus: the daemon refused its key, or one side speaks CURVE and the other does not."""

    def __init__(self, reason):
        super().__init__(f"cannot use the bus: {reason}")
        self.reason = reason


class AheadOfLog(BusError):
    """A subscriber has every event through its cursor, but the bus's log ends before it: it is
    not the log the cursor came from (restored from an older copy, replaced, another bus's).
    Going on would pass over everything the bus publishes up to the cursor as already seen."""

    def __init__(self, cursor, head, epoch):
        super().__init__(
            AHEAD_OF_LOG,
            f"this subscriber has every event through position {cursor}, but the bus's log ends at position "
            f"{head} (daemon epoch {epoch}): it is not the log the cursor came from. Start again from a position "
            f"at or below {head} (from 0 to rebuild what was built from it), or connect to the bus it came from",
            head=head,
            epoch=epoch,
        )
        self.cursor = cursor


def read_key(path):
    """The one 40-character Z85 key in a file `bureau keygen` wrote (its first line says what it
    holds, `# bureau CURVE secret key` or `# bureau CURVE public key`; other `#` lines are
    comments, but a line that is a whole key is a key even if it starts with `#`)."""
    with open(path) as handle:
        lines = [line.strip() for line in handle]
    keys = [line for line in lines if len(line) == 40 and not line.startswith("# ")]
    if len(keys) != 1:
        raise ValueError(f"{path} should hold exactly one key, not {len(keys)}")
    return keys[0].encode("ascii")


def tcp_endpoints(url):
    """A bus's three endpoints from the address its daemon was given with --listen:
    tcp://HOST:PORT takes publishes, PORT+1 reads and PORT+2 publishes events."""
    if not url.startswith("tcp://") or ":" not in url[len("tcp://") :]:
        raise ValueError(f"--bus takes tcp://HOST:PORT, not {url!r}")
    host, _, port = url[len("tcp://") :].rpartition(":")
    port = int(port)
    if not host or not 1 <= port <= 65533:
        raise ValueError(f"--bus {url}: give a host and a port from 1 to 65533")
    return {name: f"tcp://{host}:{port + offset}" for offset, name in enumerate(["ingress", "read", "events"])}


def add_connection_arguments(parser):
    """--data, or --bus with --server-key and --client-key (and their BUREAU_* variables)."""
    environment = os.environ
    parser.add_argument("--data", default=environment.get("BUREAU_DATA", ".bureau"))
    parser.add_argument("--bus", default=environment.get("BUREAU_BUS") or None, help="tcp://HOST:PORT of a remote bus")
    parser.add_argument("--server-key", default=environment.get("BUREAU_SERVER_KEY") or None, help="the daemon's .pub")
    parser.add_argument("--client-key", default=environment.get("BUREAU_CLIENT_KEY") or None, help="this client's .key")


def connect(arguments):
    """The Bus the parsed arguments name."""
    return Bus(arguments.data, url=arguments.bus, server_key=arguments.server_key, client_key=arguments.client_key)


class Bus:
    """A client of one bus, as README's "Wire protocol" section describes it, step by step.

    Every wait is bounded: a request is sent again until its timeout and then raises
    TimeoutError; `events()` raises TimeoutError when nothing, not even a heartbeat, comes for
    three heartbeat intervals. Over TCP a socket monitor watches each connection's handshake, so that a daemon
    that refuses this client's key (or a CURVE mismatch) raises BusUnusable at once
    instead of leaving every request to time out: libzmq itself only reconnects, silently."""

    # How long a request waits for its answer before it is sent again.
    READ_TIMEOUT = 2.0
    # How long events() waits for the first heartbeat, before one has told the interval (the
    # daemon's default is 500 ms; give more for a daemon started with a long --heartbeat-ms).
    FIRST_HEARTBEAT_TIMEOUT = 5.0

    def __init__(self, data=".bureau", url=None, server_key=None, client_key=None):
        """The bus of the data directory `data`, or the bus at `url` (tcp://HOST:PORT) over
        CURVE with the daemon's public key file and this client's secret key file (both, or
        neither for a bus started with --insecure)."""
        if url is None:
            with open(os.path.join(data, "run", "bus.json")) as handle:
                info = json.load(handle)
            self.endpoints = info["endpoints"]
            self.curve = None
        else:
            self.endpoints = tcp_endpoints(url)
            if (server_key is None) != (client_key is None):
                raise ValueError("CURVE needs both --server-key (the daemon's .pub) and --client-key (this client's .key)")
            if server_key is None:
                self.curve = None
            else:
                secret = read_key(client_key)
                self.curve = (read_key(server_key), zmq.curve_public(secret), secret)
        self.remote = url is not None
        # Each socket's monitor (PAIR) over TCP; what settles that the client can never get in.
        self.monitors = {}
        self.refusal = None
        self.context = zmq.Context()
        self.ingress = self._socket(zmq.DEALER)
        self.ingress.connect(self.endpoints["ingress"])
        self.reader = self._socket(zmq.DEALER)
        self.reader.connect(self.endpoints["read"])

    def _socket(self, kind):
        """A socket with no linger and, for a CURVE bus, this client's keys; over TCP, watched
        by a monitor (started before it connects, so that no handshake goes unseen)."""
        socket = self.context.socket(kind)
        socket.setsockopt(zmq.LINGER, 0)
        if self.curve is not None:
            socket.curve_serverkey, socket.curve_publickey, socket.curve_secretkey = self.curve
        if self.remote:
            self.monitors[socket] = socket.get_monitor_socket(
                zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
            )
        return socket

    def close(self):
        self.context.destroy(linger=0)

    def _check_monitor(self, socket):
        """Raises BusUnusable once `socket`'s monitor has shown that this client can
        never get in: the daemon refused its key, or one side speaks CURVE and the other does not."""
        monitor = self.monitors.get(socket)
        while self.refusal is None and monitor is not None and monitor.poll(0):
            event = parse_monitor_message(monitor.recv_multipart())
            if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                self.refusal = (
                    "the bus refused this client's key: its public key is not in the daemon's --allow-keys "
                    "(the daemon logs the key it refused)"
                    if event["value"] == 400
                    else f"the bus could not authenticate this client (ZAP status {event['value']})"
                )
            elif (
                event["event"] == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                and event["value"] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
            ):
                self.refusal = (
                    "the bus does not use CURVE (it was started with --insecure): connect without --server-key "
                    "and --client-key"
                    if self.curve is not None
                    else "the bus requires CURVE: give --server-key (the daemon's .pub) and --client-key "
                    "(this client's .key from `bureau keygen`)"
                )
        if self.refusal is not None:
            raise BusUnusable(self.refusal)

    def _wait(self, socket, timeout):
        """Waits up to `timeout` s for `socket` to be readable; True if it is. Raises at once
        when its monitor shows that the bus refuses this client."""
        self._check_monitor(socket)
        monitor = self.monitors.get(socket)
        if monitor is None:
            return bool(socket.poll(max(0, int(timeout * 1000)) + 1))
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        ready = dict(poller.poll(max(0, int(timeout * 1000)) + 1))
        self._check_monitor(socket)
        return socket in ready

    def _answer(self, socket, request_id, expected, timeout):
        """Waits up to `timeout` s for the reply to `request_id`; replies to other (earlier,
        abandoned) requests are passed over. Returns the reply's frames after the verb, or None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._wait(socket, left):
                return None
            reply = socket.recv_multipart()
            if len(reply) < 4 or reply[0] != VERSION or reply[2] != request_id:
                continue
            if reply[1] == b"error":
                error = bus_pb2.ErrorReply()
                error.ParseFromString(reply[3])
                raise BusError(error.code, error.message, head=error.head, epoch=error.epoch)
            if reply[1] == expected:
                return reply[3:]

    def publish(self, message, producer="python", correlation=None, timeout=10.0, follows=None):
        """Publishes one event; sends the same request again (same request id, same envelope)
        until it is answered. Returns (position, id); raises on REJECTED. With `follows` (the
        8-byte request id of an earlier publish), it is stored only if that request reached the
        bus first; otherwise it raises BusError("out-of-order") and nothing is stored."""
        envelope = envelope_pb2.Envelope()
        event_id = uuid.uuid4().bytes
        envelope.id = event_id
        envelope.type = message.DESCRIPTOR.full_name
        envelope.producer.process = producer
        envelope.correlation = correlation or event_id
        envelope.payload = message.SerializeToString()
        request_id = os.urandom(8)
        body = envelope.SerializeToString()
        # A publish request's one argument is a batch: each envelope after its 4-byte length.
        frames = [VERSION, b"publish", request_id, struct.pack("<I", len(body)) + body]
        if follows is not None:
            frames.append(follows)
        deadline = time.monotonic() + timeout
        wait = 0.25
        while time.monotonic() < deadline:
            self.ingress.send_multipart(frames)
            answer = self._answer(self.ingress, request_id, b"ack", min(wait, deadline - time.monotonic()))
            if answer is not None:
                ack = bus_pb2.PublishAck()
                ack.ParseFromString(answer[0])
                result = ack.results[0]
                if result.status == bus_pb2.PublishResult.REJECTED:
                    raise RuntimeError(f"rejected: {result.reason}")
                return result.position, event_id
            wait = min(wait * 2, 2.0)
        raise TimeoutError(f"no acknowledgement from {self.endpoints['ingress']} within {timeout} s")

    def read(self, after, prefixes=(), max_events=1024, timeout=30.0):
        """One catch-up read: (envelopes, scanned_to, head). A read that gets no answer within
        READ_TIMEOUT is sent again with a new request id (reads change nothing), until
        `timeout` (then TimeoutError). A read after the daemon's published head is answered
        BusError("ahead-of-log") with the daemon's head and epoch."""
        request = bus_pb2.ReadRequest()
        setattr(request, "after", after)
        request.max_events = max_events
        request.type_prefixes.extend(prefixes)
        request.batched = True
        body = request.SerializeToString()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            request_id = os.urandom(8)
            self.reader.send_multipart([VERSION, b"read", request_id, body])
            answer = self._answer(self.reader, request_id, b"events", self.READ_TIMEOUT)
            if answer is None:
                continue
            header = bus_pb2.ReadReply()
            header.ParseFromString(answer[0])
            # Asked for: the envelopes in one frame, each after its length. A daemon from before
            # batched replies sends a frame per envelope instead.
            if header.batched and len(answer) != 2:
                raise ValueError(f"a batched read reply has {len(answer) - 1} frames of envelopes, not one")
            frames = self._batch(answer[1]) if header.batched else answer[1:]
            if frames is None:
                raise ValueError("a read reply's batch of envelopes is cut short")
            envelopes = []
            for frame in frames:
                envelope = envelope_pb2.Envelope()
                envelope.ParseFromString(frame)
                envelopes.append(envelope)
            return envelopes, header.scanned_to, header.head
        raise TimeoutError(f"no answer to a read from {self.endpoints['read']} within {timeout} s")

    @staticmethod
    def _batch(frame):
        """The envelopes of a batch frame (each after its length, 4 bytes little-endian); None
        if the frame is cut short."""
        envelopes = []
        offset = 0
        while offset < len(frame):
            if len(frame) - offset < 4:
                return None
            (length,) = struct.unpack_from("<I", frame, offset)
            offset += 4
            if length > len(frame) - offset:
                return None
            envelopes.append(frame[offset : offset + length])
            offset += length
        return envelopes

    @staticmethod
    def _publications(frame):
        """The events of a publication frame: (position, previous in package, envelope bytes)
        each; an empty envelope is a notice. None if the frame is not a publication."""
        entries = []
        offset = 0
        while offset < len(frame):
            if len(frame) - offset < 20:
                return None
            position, previous, length = struct.unpack_from("<QQI", frame, offset)
            offset += 20
            if length > len(frame) - offset:
                return None
            entries.append((position, previous, frame[offset : offset + length]))
            offset += length
        return entries or None

    @staticmethod
    def _matches(type_name, prefixes):
        return not prefixes or any(type_name.startswith(p) for p in prefixes)

    def events(self, after=0, prefixes=()):
        """Every matching event after `after`, gap-free: catch-up from the log, then live.

        README's algorithm, on the global chain (every type is subscribed to and filtered here,
        and each publication's predecessor is position - 1). A prefix is a plain prefix, in the
        daemon's reads as here: "bureau.watchlist." also matches a nested package's types
        ("bureau.watchlist.archive.…"), from the log and live alike.
          1. read the log after the cursor until scanned_to reaches head; a read answered
             `ahead-of-log` ends the generator with AheadOfLog (the log is not the one the
             cursor came from);
          2. follow live, each event of each publication message in turn: a duplicate
             (position <= cursor) is dropped; an event whose predecessor is past the cursor
             means one was lost (go back to 1); so does a notice (an empty envelope: the event
             is too large for the live stream) of a matching event; otherwise deliver it if it
             matches, and the cursor is its position;
          3. on a heartbeat: head past the cursor means the last publications were lost, and
             head below it may mean the daemon's log ends before the cursor: either way go
             back to 1 (the read tells); otherwise nothing was missed;
          4. nothing from the bus, not even a heartbeat, for three heartbeat intervals
             (FIRST_HEARTBEAT_TIMEOUT before the first has told the interval) raises
             TimeoutError: the bus is unreachable.
        """
        sub = self._socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(self.endpoints["events"])
        cursor = after
        interval = None
        try:
            while True:
                # 1. Catch up from the log.
                while True:
                    try:
                        envelopes, scanned_to, head = self.read(cursor, prefixes)
                    except BusError as error:
                        if error.code == AHEAD_OF_LOG:
                            raise AheadOfLog(cursor, error.head, error.epoch) from None
                        raise
                    for envelope in envelopes:
                        if envelope.position > cursor:
                            cursor = envelope.position
                            yield envelope
                    cursor = max(cursor, scanned_to)
                    if cursor >= head:
                        break
                # 2 and 3. Live, until something was lost; every wait bounded by the heartbeats.
                heard = time.monotonic()
                lost = False
                while not lost:
                    patience = 3 * interval if interval else self.FIRST_HEARTBEAT_TIMEOUT
                    left = heard + patience - time.monotonic()
                    if left <= 0 or not self._wait(sub, left):
                        raise TimeoutError(
                            f"the bus at {self.endpoints['events']} is unreachable: nothing from it, not even a "
                            f"heartbeat, for {patience:g} s"
                            + (f" (three intervals of {interval * 1000:g} ms)" if interval else "")
                            + f"; every event through position {cursor} was delivered"
                        )
                    frames = sub.recv_multipart()
                    # Anything from the bus shows it is there: a subscriber busy with a backlog
                    # may find that the heartbeats were dropped with the rest (PUB's high-water mark).
                    heard = time.monotonic()
                    if frames[0] == b"_heartbeat":
                        heartbeat = bus_pb2.Heartbeat()
                        heartbeat.ParseFromString(frames[1])
                        if heartbeat.interval_ms:
                            interval = heartbeat.interval_ms / 1000
                        if heartbeat.head != cursor:
                            break
                        continue
                    entries = self._publications(frames[1]) if len(frames) == 2 else None
                    if entries is None:
                        continue
                    type_name = frames[0].decode("utf-8", "replace")
                    matches = self._matches(type_name, prefixes)
                    for position, _, body in entries:
                        if position <= cursor:
                            continue
                        if position - 1 > cursor or (matches and not body):
                            lost = True
                            break
                        cursor = position
                        if matches:
                            envelope = envelope_pb2.Envelope()
                            envelope.ParseFromString(body)
                            yield envelope
        finally:
            monitor = self.monitors.pop(sub, None)
            if monitor is not None:
                monitor.close(linger=0)
            sub.close(linger=0)
