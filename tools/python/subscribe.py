#!/usr/bin/python3
"""Prints events from a Bureau bus, one per line: position, type, payload as JSON.

    tools/python/subscribe.py [--data DIR | --bus tcp://HOST:PORT --server-key F --client-key F] [--from POSITION] [--type PREFIX]... [--count N]

Catches up from the log, then follows live events; stops after --count events if given.
Exits 1, saying why, when the bus cannot be used: it refused this client's key, it is
unreachable (nothing from it for three heartbeat intervals), or its log ends before --from
(`ahead-of-log`: not the log the position came from).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bureau_bus import BusError, BusUnusable, add_connection_arguments, connect, message_class  # noqa: E402
from google.protobuf import json_format  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_connection_arguments(parser)
    parser.add_argument("--from", dest="start", type=int, default=0, help="print events after this position")
    parser.add_argument("--type", action="append", default=[], help="only types starting with this prefix")
    parser.add_argument("--count", type=int, default=0, help="stop after this many events")
    arguments = parser.parse_args()
    bus = connect(arguments)
    printed = 0
    try:
        for envelope in bus.events(arguments.start, arguments.type):
            try:
                message = message_class(envelope.type)()
                message.ParseFromString(envelope.payload)
                payload = json_format.MessageToJson(message, indent=None)
            except (ImportError, AttributeError):
                payload = f'"<{len(envelope.payload)} bytes of an unknown type>"'
            print(f"{envelope.position} {envelope.type} {payload}", flush=True)
            printed += 1
            if arguments.count and printed >= arguments.count:
                break
    except KeyboardInterrupt:
        pass
    except (BusError, BusUnusable, TimeoutError) as error:
        print(f"subscribe.py: {error}", file=sys.stderr)
        sys.exit(1)
    finally:
        bus.close()


if __name__ == "__main__":
    main()
