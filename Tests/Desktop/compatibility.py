"""Prints the compatibility table (case × application) from a desktop run's results JSON."""

import json
import sys

CASES = [("prose", "prose typed exactly"), ("select", "`recomm` + F-key → `recommend`"),
         ("fix", "`I saw teh cat` + Ctrl+Alt+Return"),
         ("fix-after-space", "`I saw teh cat. ` + Ctrl+Alt+Return"), ("focus", "focus change mid-word"),
         ("password", "password field")]


def cell(result, control):
    if result is None:
        return "n/a"
    if result.get("ok"):
        outcome = result.get("outcome")
        return "pass" + (" (%s)" % outcome if outcome and outcome != "applied" else "")
    note = result.get("detail") or ("got %r" % result.get("got"))[:120]
    if control is not None and not control.get("ok"):
        return "fail, also without Inkling: %s" % note
    return "**fail**: %s" % note


def main(path):
    with open(path) as f:
        results = json.load(f)
    apps = [a for a in ("writer", "firefox", "chromium") if a in results]
    print("| case | " + " | ".join(apps) + " |")
    print("|---" * (len(apps) + 1) + "|")
    for case, title in CASES:
        row = [cell(results[a].get(case), results.get(a + " (control)", {}).get(case)) for a in apps]
        print("| %s | %s |" % (title, " | ".join(row)))
    print()
    print("| control run (no IBus) | " + " | ".join(apps) + " |")
    print("|---" * (len(apps) + 1) + "|")
    for case, title in CASES:
        row = []
        for a in apps:
            control = results.get(a + " (control)", {}).get(case)
            if control is None:
                row.append("n/a")
            else:
                row.append("pass" if control.get("ok") else "fail: " + (control.get("detail") or "")[:100])
        print("| %s | %s |" % (title, " | ".join(row)))


if __name__ == "__main__":
    main(sys.argv[1])
