"""Prints the compatibility table (case × application) from a desktop run's results JSON."""

import json
import sys

CASES = [("prose", "prose typed exactly"), ("select", "`recomm` + F-key → `recommend`"),
         ("fix", "`I saw teh cat` + Ctrl+Alt+Return"),
         ("fix-after-space", "`I saw teh cat. ` + Ctrl+Alt+Return"),
         ("fix-after-emoji", "`👨‍👩‍👧 👍🏽 I saw teh cat` + Ctrl+Alt+Return"),
         ("fix-after-script-edit", "`I saw teh cat `, the page's script adds text, Ctrl+Alt+Return"),
         ("focus", "focus change mid-word"), ("password", "password field"),
         ("dead-keys", "US-International dead keys: `café naïve señor `")]
APPS = [("writer", "Writer (X11)"), ("kwrite", "KWrite (X11)"), ("firefox", "Firefox (X11)"),
        ("chromium", "Chromium (X11)"),
        ("gnome-gtk4", "GTK 4 (GNOME Wayland)"), ("gnome-gtk3", "GTK 3 (GNOME Wayland)"),
        ("gnome-firefox", "Firefox (GNOME Wayland)")]
# Failures of the platform, not the engine (test_desktop.PLATFORM, compatibility.md).
SHELL_FOCUS = "GNOME Shell 43 commits the composing word into the new field"
PLATFORM_NOTES = {
    ("gnome-gtk4", "focus"): SHELL_FOCUS, ("gnome-gtk3", "focus"): SHELL_FOCUS, ("gnome-firefox", "focus"):
        SHELL_FOCUS + ", or Firefox drops the first word composed in the new field (as on X11)",
    ("firefox", "focus"): "Firefox drops the first word composed in the new field (IBUS_ENABLE_SYNC_MODE=1 passes)",
}


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
    apps = [a for a, _ in APPS if a in results]
    titles = dict(APPS)
    print("| case | " + " | ".join(titles[a] for a in apps) + " |")
    print("|---" * (len(apps) + 1) + "|")
    for case, title in CASES:
        row = []
        for a in apps:
            text = cell(results[a].get(case), results.get(a + " (control)", {}).get(case))
            if text.startswith("**fail**") and (a, case) in PLATFORM_NOTES:
                text = "fail, platform: %s" % PLATFORM_NOTES[(a, case)]
            row.append(text)
        print("| %s | %s |" % (title, " | ".join(row)))
    print()
    print("| control run (no IBus) | " + " | ".join(titles[a] for a in apps) + " |")
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
