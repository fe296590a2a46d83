#!/usr/bin/python3
"""Publishes a request event and waits for the answer correlated with it.

    tools/python/request.py [--data DIR | --bus tcp://HOST:PORT --server-key F --client-key F] [--timeout S] TYPE JSON

    tools/python/request.py bureau.converter.AmountSetRequested '{"value": "250", "currency": "EUR"}'

Prints the answer as `position type payload-json`; exits 1 if the answer is a rejection
(its type ends in Rejected), 2 if none arrives within the timeout, and 3, saying why, if the
bus cannot be used (it refused this client's key, answered an error, or is unreachable).
"""

import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bureau_bus import BusError, BusUnusable, add_connection_arguments, connect, message_class  # noqa: E402
from google.protobuf import json_format  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_connection_arguments(parser)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("type", help="the request's full protobuf name")
    parser.add_argument("json", help="the request's fields as protobuf JSON")
    arguments = parser.parse_args()
    request = json_format.Parse(arguments.json, message_class(arguments.type)())
    bus = connect(arguments)
    try:
        _, _, head = bus.read(0, max_events=1, timeout=arguments.timeout)
        timer = threading.Timer(arguments.timeout, lambda: os._exit(2))
        timer.daemon = True
        timer.start()
        position, request_id = bus.publish(request, timeout=arguments.timeout)
        print(f"published {arguments.type} at position {position}", file=sys.stderr)
        package = arguments.type.rsplit(".", 1)[0] + "."
        for envelope in bus.events(head, [package]):
            if envelope.correlation == request_id and envelope.position != position:
                answer = message_class(envelope.type)()
                answer.ParseFromString(envelope.payload)
                print(f"{envelope.position} {envelope.type} {json_format.MessageToJson(answer, indent=None)}", flush=True)
                bus.close()
                sys.exit(1 if envelope.type.endswith("Rejected") else 0)
    except (BusError, BusUnusable, TimeoutError) as error:
        print(f"request.py: {error}", file=sys.stderr)
        bus.close()
        sys.exit(3)


if __name__ == "__main__":
    main()
