#!/usr/bin/env python3
"""A Varlink client of reachabilityd written with the Python `varlink` package from PyPI (not
ours: it parses the daemon's interface description and checks every reply's fields against it).
The Varlink tests run it from the venv `make deps` makes (scripts/install-deps.sh).

  varlink-client.py SOCKET introspect          GetInfo, then each interface's description
  varlink-client.py SOCKET call METHOD [JSON]  one call; prints its reply or its error as JSON
  varlink-client.py SOCKET subscribe OUTFILE   Subscribe; appends each state to OUTFILE as a line

Every outcome is one JSON object on stdout (`subscribe` writes one a line to OUTFILE).
"""
import json
import sys

import varlink

INTERFACE = "org.reachabilityd.Reachability"


def main():
    socket, mode = sys.argv[1], sys.argv[2]
    with varlink.Client(address="unix:" + socket) as client:
        if mode == "introspect":
            with client.open("org.varlink.service") as service:
                info = service.GetInfo()
                descriptions = {name: service.GetInterfaceDescription(name)["description"] for name in info["interfaces"]}
            # Parsing it is what the package's clients do before every call.
            for description in descriptions.values():
                varlink.Interface(description)
            print(json.dumps({"info": info, "descriptions": descriptions}))
        elif mode == "call":
            method = sys.argv[3]
            parameters = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
            with client.open(INTERFACE) as connection:
                try:
                    reply = getattr(connection, method)(**parameters)
                    print(json.dumps({"parameters": reply}))
                except varlink.VarlinkError as error:
                    print(json.dumps({"error": error.error(), "parameters": error.parameters()}))
        elif mode == "subscribe":
            with client.open(INTERFACE) as connection, open(sys.argv[3], "a") as output:
                for reply in connection.Subscribe(_more=True):
                    output.write(json.dumps(reply["state"]) + "\n")
                    output.flush()
        else:
            raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    main()
