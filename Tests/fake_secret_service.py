#!/usr/bin/python3
"""A small in-memory freedesktop Secret Service on the session bus, enough for libsecret as
Inkling uses it: the password API (store, lookup, clear) of `inkling account`, the settings app
and `inkling-cloud` (device tokens), and the cloud helper's API-key lookup. Python + GIO only
(python3-gi); no gnome-keyring needed. One fake for every suite (Tests/Account, Tests/Cloud,
Tests/Setup).

    fake_secret_service.py [--state FILE] [--secret S [--schema NAME] [--attribute KEY=VALUE]...]
                           [--lifetime SECONDS]

One unlocked collection (alias `default`), items created with CreateItem (replace honoured),
found with SearchItems, read with GetSecrets/GetSecret, deleted with Item.Delete. Speaks only
the "plain" session algorithm. With --secret it starts with one item holding S, with the
attributes given plus `xdg:schema` (default: the cloud helper's API-key schema). With --state,
FILE's items are loaded at start, and after every change FILE is rewritten (JSON: a list of
{"attributes", "label", "secret"}) for the tests to read. Prints `READY` once it owns
org.freedesktop.secrets; exits when stdin closes or after --lifetime seconds.
"""

import argparse
import json
import os
import sys

from gi.repository import Gio, GLib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Cloud"))
from lifeline import exit_when_stdin_closes  # noqa: E402

# The cloud helper's API keys (InklingCloud's KeySource); device tokens use
# org.freedesktop.ibus.engine.inkling.account, given by the binaries themselves.
API_KEY_SCHEMA = "org.freedesktop.ibus.engine.inkling.cloud"
SERVICE_PATH = "/org/freedesktop/secrets"
COLLECTION_PATH = "/org/freedesktop/secrets/collection/login"
ALIAS_PATH = "/org/freedesktop/secrets/aliases/default"
SESSION_PREFIX = "/org/freedesktop/secrets/session/s"

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
    <method name="CreateCollection">
      <arg name="properties" type="a{sv}" direction="in"/><arg name="alias" type="s" direction="in"/>
      <arg name="collection" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/>
    </method>
    <method name="ReadAlias">
      <arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="out"/>
    </method>
    <property name="Collections" type="ao" access="read"/>
  </interface>
  <interface name="org.freedesktop.Secret.Collection">
    <method name="CreateItem">
      <arg name="properties" type="a{sv}" direction="in"/><arg name="secret" type="(oayays)" direction="in"/>
      <arg name="replace" type="b" direction="in"/>
      <arg name="item" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/>
    </method>
    <method name="SearchItems">
      <arg name="attributes" type="a{ss}" direction="in"/><arg name="results" type="ao" direction="out"/>
    </method>
    <property name="Items" type="ao" access="read"/>
    <property name="Label" type="s" access="read"/>
    <property name="Locked" type="b" access="read"/>
    <property name="Created" type="t" access="read"/>
    <property name="Modified" type="t" access="read"/>
  </interface>
  <interface name="org.freedesktop.Secret.Item">
    <method name="GetSecret">
      <arg name="session" type="o" direction="in"/><arg name="secret" type="(oayays)" direction="out"/>
    </method>
    <method name="Delete">
      <arg name="prompt" type="o" direction="out"/>
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
    parser.add_argument("--state")
    parser.add_argument("--secret", help="start with one item holding this secret")
    parser.add_argument("--schema", default=API_KEY_SCHEMA, help="that item's xdg:schema")
    parser.add_argument("--attribute", action="append", default=[], help="KEY=VALUE, that item's attributes")
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args()
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    items = {}  # path -> {"attributes", "label", "secret" (bytes)}
    registrations = {}
    counter = {"item": 0, "session": 0}

    def save():
        if not args.state:
            return
        records = [{"attributes": v["attributes"], "label": v["label"],
                    "secret": v["secret"].decode("utf-8", "replace")}
                   for v in items.values()]
        tmp = args.state + ".tmp"
        with open(tmp, "w") as out:
            json.dump(records, out)
        os.replace(tmp, args.state)

    def secret_value(path, session):
        return (session, [], list(items[path]["secret"]), "text/plain")

    def matches(item, query):
        return all(item["attributes"].get(k) == v for k, v in query.items())

    def add_item(attributes, label, secret):
        counter["item"] += 1
        path = "%s/%d" % (COLLECTION_PATH, counter["item"])
        items[path] = {"attributes": dict(attributes), "label": label, "secret": bytes(secret)}
        registrations[path] = bus.register_object(path, info.lookup_interface("org.freedesktop.Secret.Item"),
                                                  on_call, on_property, None)
        return path

    def remove_item(path):
        items.pop(path, None)
        registration = registrations.pop(path, None)
        if registration is not None:
            bus.unregister_object(registration)

    def on_call(connection, sender, path, interface, method, params, invocation):
        if method == "OpenSession":
            if params.unpack()[0] != "plain":
                invocation.return_dbus_error("org.freedesktop.DBus.Error.NotSupported", "plain only")
                return
            counter["session"] += 1
            session = SESSION_PREFIX + str(counter["session"])
            bus.register_object(session, info.lookup_interface("org.freedesktop.Secret.Session"), on_call, None, None)
            invocation.return_value(GLib.Variant("(vo)", (GLib.Variant("s", ""), session)))
        elif method == "SearchItems" and interface == "org.freedesktop.Secret.Service":
            query = params.unpack()[0]
            found = [p for p, item in items.items() if matches(item, query)]
            invocation.return_value(GLib.Variant("(aoao)", (found, [])))
        elif method == "SearchItems":
            query = params.unpack()[0]
            invocation.return_value(GLib.Variant("(ao)", ([p for p, item in items.items() if matches(item, query)],)))
        elif method == "Unlock":
            invocation.return_value(GLib.Variant("(aoo)", (params.unpack()[0], "/")))
        elif method == "CreateCollection":
            invocation.return_value(GLib.Variant("(oo)", (COLLECTION_PATH, "/")))
        elif method == "ReadAlias":
            invocation.return_value(GLib.Variant("(o)", (COLLECTION_PATH,)))
        elif method == "GetSecrets":
            wanted, session = params.unpack()
            result = {p: secret_value(p, session) for p in wanted if p in items}
            invocation.return_value(GLib.Variant("(a{o(oayays)})", (result,)))
        elif method == "GetSecret":
            if path not in items:
                invocation.return_dbus_error("org.freedesktop.Secret.Error.NoSuchObject", "gone")
                return
            invocation.return_value(GLib.Variant("((oayays))", (secret_value(path, params.unpack()[0]),)))
        elif method == "CreateItem":
            properties, secret, replace = params.unpack()
            attributes = properties.get("org.freedesktop.Secret.Item.Attributes", {})
            label = properties.get("org.freedesktop.Secret.Item.Label", "")
            value = bytes(secret[2])
            existing = [p for p, item in items.items() if item["attributes"] == attributes] if replace else []
            if existing:
                items[existing[0]].update(label=label, secret=value)
                created = existing[0]
            else:
                created = add_item(attributes, label, value)
            save()
            invocation.return_value(GLib.Variant("(oo)", (created, "/")))
        elif method == "Delete":
            remove_item(path)
            save()
            invocation.return_value(GLib.Variant("(o)", ("/",)))
        elif method == "Close":
            invocation.return_value(None)
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    def on_property(connection, sender, path, interface, name):
        if path == SERVICE_PATH:
            return GLib.Variant("ao", [COLLECTION_PATH]) if name == "Collections" else None
        if path in (COLLECTION_PATH, ALIAS_PATH):
            values = {"Items": GLib.Variant("ao", list(items)), "Label": GLib.Variant("s", "Login"),
                      "Locked": GLib.Variant("b", False), "Created": GLib.Variant("t", 0),
                      "Modified": GLib.Variant("t", 0)}
            return values.get(name)
        item = items.get(path)
        if item is None:
            return None
        values = {"Locked": GLib.Variant("b", False), "Attributes": GLib.Variant("a{ss}", item["attributes"]),
                  "Label": GLib.Variant("s", item["label"]), "Created": GLib.Variant("t", 0),
                  "Modified": GLib.Variant("t", 0)}
        return values.get(name)

    if args.state and os.path.exists(args.state):
        with open(args.state) as f:
            for record in json.load(f):
                add_item(record["attributes"], record.get("label", ""), record["secret"].encode())
    if args.secret is not None:
        attributes = {"xdg:schema": args.schema}
        for pair in args.attribute:
            key, _, value = pair.partition("=")
            attributes[key] = value
        add_item(attributes, "Inkling test item", args.secret.encode())
    save()
    bus.register_object(SERVICE_PATH, info.lookup_interface("org.freedesktop.Secret.Service"),
                        on_call, on_property, None)
    # libsecret addresses the default collection by its alias path.
    for path in (COLLECTION_PATH, ALIAS_PATH):
        bus.register_object(path, info.lookup_interface("org.freedesktop.Secret.Collection"),
                            on_call, on_property, None)

    loop = GLib.MainLoop()
    Gio.bus_own_name_on_connection(bus, "org.freedesktop.secrets", Gio.BusNameOwnerFlags.NONE,
                                   lambda *_: print("READY", flush=True), lambda *_: loop.quit())
    exit_when_stdin_closes()
    GLib.timeout_add(int(args.lifetime * 1000), loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
