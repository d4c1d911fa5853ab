#!/usr/bin/python3
"""A minimal fake freedesktop Secret Service on the session bus, for testing the helper's
keyring lookup without gnome-keyring. Python + GIO only (python3-gi).

    fake_secret_service.py --attribute endpoint=https://… --secret sk-… [--lifetime 60]

Holds one unlocked item whose attributes are the given ones plus `xdg:schema`
(org.freedesktop.ibus.engine.inkling.cloud) and whose secret is given. Speaks only the
"plain" session algorithm. Prints `READY` once it owns org.freedesktop.secrets; counts
GetSecrets calls and exits after --lifetime seconds or when stdin closes.
"""

import argparse

from gi.repository import Gio, GLib

from lifeline import exit_when_stdin_closes  # noqa: E402

SCHEMA = "org.freedesktop.ibus.engine.inkling.cloud"
SERVICE_PATH = "/org/freedesktop/secrets"
COLLECTION_PATH = "/org/freedesktop/secrets/collection/login"
ITEM_PATH = COLLECTION_PATH + "/1"
SESSION_PATH = "/org/freedesktop/secrets/session/s1"

XML = """
<node>
  <interface name="org.freedesktop.Secret.Service">
    <method name="OpenSession">
      <arg name="algorithm" type="s" direction="in"/><arg name="input" type="v" direction="in"/>
      <arg name="output" type="v" direction="out"/><arg name="result" type="o" direction="out"/>
    </method>
    <method name="SearchItems">
      <arg name="attributes" type="a{ss}" direction="in"/>
      <arg name="unlocked" type="ao" direction="out"/><arg name="locked" type="ao" direction="out"/>
    </method>
    <method name="Unlock">
      <arg name="objects" type="ao" direction="in"/>
      <arg name="unlocked" type="ao" direction="out"/><arg name="prompt" type="o" direction="out"/>
    </method>
    <method name="GetSecrets">
      <arg name="items" type="ao" direction="in"/><arg name="session" type="o" direction="in"/>
      <arg name="secrets" type="a{o(oayays)}" direction="out"/>
    </method>
    <property name="Collections" type="ao" access="read"/>
  </interface>
  <interface name="org.freedesktop.Secret.Item">
    <method name="GetSecret">
      <arg name="session" type="o" direction="in"/><arg name="secret" type="(oayays)" direction="out"/>
    </method>
    <property name="Locked" type="b" access="read"/>
    <property name="Attributes" type="a{ss}" access="read"/>
    <property name="Label" type="s" access="read"/>
    <property name="Created" type="t" access="read"/>
    <property name="Modified" type="t" access="read"/>
  </interface>
  <interface name="org.freedesktop.Secret.Session">
    <method name="Close"/>
  </interface>
</node>
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attribute", action="append", default=[])
    parser.add_argument("--secret", required=True)
    parser.add_argument("--lifetime", type=float, default=60.0)
    args = parser.parse_args()
    attributes = {"xdg:schema": SCHEMA}
    for pair in args.attribute:
        key, _, value = pair.partition("=")
        attributes[key] = value
    secret = args.secret.encode()
    calls = {"GetSecrets": 0}
    info = Gio.DBusNodeInfo.new_for_xml(XML)

    def secret_value(session):
        return (session, [], list(secret), "text/plain")

    def matches(query):
        return all(attributes.get(k) == v for k, v in query.items())

    def on_call(connection, sender, path, interface, method, params, invocation):
        if method == "OpenSession":
            algorithm = params.unpack()[0]
            if algorithm != "plain":
                invocation.return_dbus_error("org.freedesktop.DBus.Error.NotSupported", "plain only")
                return
            invocation.return_value(GLib.Variant("(vo)", (GLib.Variant("s", ""), SESSION_PATH)))
        elif method == "SearchItems":
            found = [ITEM_PATH] if matches(params.unpack()[0]) else []
            invocation.return_value(GLib.Variant("(aoao)", (found, [])))
        elif method == "Unlock":
            invocation.return_value(GLib.Variant("(aoo)", (params.unpack()[0], "/")))
        elif method == "GetSecrets":
            items, session = params.unpack()
            calls["GetSecrets"] += 1
            result = {i: secret_value(session) for i in items if i == ITEM_PATH}
            invocation.return_value(GLib.Variant("(a{o(oayays)})", (result,)))
        elif method == "GetSecret":
            invocation.return_value(GLib.Variant("((oayays))", (secret_value(params.unpack()[0]),)))
        elif method == "Close":
            invocation.return_value(None)
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    def on_property(connection, sender, path, interface, name):
        values = {
            "Collections": GLib.Variant("ao", [COLLECTION_PATH]),
            "Locked": GLib.Variant("b", False),
            "Attributes": GLib.Variant("a{ss}", attributes),
            "Label": GLib.Variant("s", "Inkling cloud check"),
            "Created": GLib.Variant("t", 0),
            "Modified": GLib.Variant("t", 0),
        }
        return values.get(name)

    loop = GLib.MainLoop()
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    for path, names in ((SERVICE_PATH, ["org.freedesktop.Secret.Service"]),
                        (ITEM_PATH, ["org.freedesktop.Secret.Item"]),
                        (SESSION_PATH, ["org.freedesktop.Secret.Session"])):
        for name in names:
            bus.register_object(path, info.lookup_interface(name), on_call, on_property, None)

    def acquired(*_):
        print("READY", flush=True)

    def lost(*_):
        print("LOST", flush=True)
        loop.quit()

    Gio.bus_own_name_on_connection(bus, "org.freedesktop.secrets", Gio.BusNameOwnerFlags.NONE, acquired, lost)

    exit_when_stdin_closes()
    GLib.timeout_add(int(args.lifetime * 1000), loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
