#!/usr/bin/python3
"""End of speech → commit latency of dictation through the real daemon, and memory.

    /usr/bin/python3 bench/dictation_latency.py [--utterances N]

A private headless ibus-daemon runs the release engine with dictation on; the engine starts the
real `inkling-dictate`, which reads synthesised speech (Tests/Dictate/speech.py) paced like a
microphone (--audio-file, through a wrapper as in Tests/Integration/test_dictation_engine.py).
For each utterance the client presses the dictation key and notes when the listening label
arrives (the helper opens the file just before it says so); the end of speech is that moment
plus the time of the last loud sample in the file; the latency is from there to the commit the
client receives. It includes the recogniser's end-of-utterance wait (PocketSphinx's VAD), which
is most of it. Reports p50/p95, the engine's VmRSS before the first and after the last
dictation, and the helper's VmHWM. Prints a JSON summary last.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import wave
import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Dictate"))
from ibus_harness import Client, Daemon, IBus, engine_path, pump_until, rss_kb  # noqa: E402
import speech  # noqa: E402

CONTROL = int(IBus.ModifierType.CONTROL_MASK)
ALT = int(IBus.ModifierType.MOD1_MASK)
LISTENING = "\U0001F399 listening\u2026"
WRAPPER = '''#!/usr/bin/python3
import os, sys
wav = open(os.environ["INKLING_BENCH_DICTATE_WAV"]).read().strip()
os.execv(os.environ["INKLING_BENCH_REAL_DICTATE"], ["inkling-dictate", "--audio-file", wav] + sys.argv[1:])
'''


def speech_end_seconds(path, threshold=500):
    with wave.open(path) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    last = max((i for i, s in enumerate(samples) if abs(s) > threshold), default=0)
    return last / 16000.0


def vm(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class AuxClient(Client):
    def __init__(self, daemon, **kw):
        super().__init__(daemon, **kw)
        self.aux_now = ""
        self.listening_at = None
        self._connect("update-auxiliary-text", self._on_aux)
        self._connect("hide-auxiliary-text", lambda ic: setattr(self, "aux_now", ""))

    def _on_aux(self, ic, text, visible):
        self.aux_now = text.get_text() if visible else ""
        if self.aux_now.startswith(LISTENING) and self.listening_at is None:
            self.listening_at = time.monotonic()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--utterances", type=int, default=12)
    options = parser.parse_args()
    helper = os.path.join(os.path.dirname(engine_path()), "inkling-dictate")
    tmp = tempfile.mkdtemp(prefix="inkling-dictation-bench-")
    wrapper = os.path.join(tmp, "wrapper.py")
    with open(wrapper, "w") as f:
        f.write(WRAPPER)
    os.chmod(wrapper, 0o755)
    pointer = os.path.join(tmp, "wav")
    wavs = []
    for index in range(options.utterances):
        voice, speed = speech.VOICES[index % len(speech.VOICES)]
        path = os.path.join(tmp, "u%d.wav" % index)
        speech.speak(speech.SENTENCES[index % len(speech.SENTENCES)], path, voice=voice, speed=speed, after=2.0)
        wavs.append((path, speech_end_seconds(path)))
    daemon = Daemon(env={
        "INKLING_DICTATION": "1", "INKLING_DICTATE_HELPER": wrapper,
        "INKLING_BENCH_DICTATE_WAV": pointer, "INKLING_BENCH_REAL_DICTATE": helper,
    }).start()
    latencies, helper_hwm = [], 0
    try:
        client = AuxClient(daemon)
        client.focus_in()
        client.set_engine("inkling")
        client.wait_for_surrounding_request()
        client.type("warm up ")
        engine = daemon.engine_pid()
        rss_before = rss_kb(engine)
        for path, end in wavs:
            with open(pointer, "w") as f:
                f.write(path)
            client.commits.clear()
            client.listening_at = None
            client.key(ord("m"), CONTROL | ALT)
            pump_until(lambda: client.listening_at is not None, timeout=60, what="listening")
            pump_until(lambda: client.commits, timeout=60, what="a commit")
            committed_at = time.monotonic()
            latencies.append((committed_at - (client.listening_at + end)) * 1000)
            for pid in daemon.children():
                if pid != engine and os.path.exists("/proc/%d" % pid):
                    helper_hwm = max(helper_hwm, vm(pid, "VmHWM"))
            pump_until(lambda: not client.aux_now, timeout=60, what="listening to end")
            print("latency %.0f ms" % latencies[-1], file=sys.stderr)
        rss_after = rss_kb(engine)
    finally:
        daemon.stop()
    ordered = sorted(latencies)
    summary = {
        "utterances": len(latencies),
        "latency_ms": {"p50": round(statistics.median(ordered)),
                       "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))])},
        "engine_vmrss_mib": {"before": round(rss_before / 1024, 1), "after": round(rss_after / 1024, 1)},
        "helper_vmhwm_mib": round(helper_hwm / 1024, 1),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
