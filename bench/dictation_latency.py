#!/usr/bin/python3
"""End of speech → commit latency of dictation through the real daemon, in parts, and memory.

    make bench-dictation            (or: /usr/bin/python3 bench/dictation_latency.py [--utterances N])

A private headless ibus-daemon runs the release engine with dictation on; the engine starts the
real `inkling-dictate` through a relay script, which runs it on synthesised speech
(Tests/Dictate/speech.py, paced like a microphone with --audio-file), passes every line on
unchanged and notes each line's type and the moment it passed (never its text). For each
utterance the client presses the dictation key and waits until listening ends (the file's end).

The latency runs from the end of speech (the last sample louder than -36 dBFS, on the helper's
audio clock, which starts when it sends `listening`) to the last commit the client receives (the
recogniser may split a sentence into several finals; the last holds the end of speech). It is
reported whole and in three parts that add up to it, so that a figure taken on a loaded machine
can be read:
  - `end_of_utterance_wait_ms`, audio time: from the end of speech to the end of the 100 ms block
    after which the recogniser declared the last utterance over (PocketSphinx's voice-activity
    detection waits for silence; negative when it ended the utterance before a quiet last
    sound). Counted in audio blocks (one `level` line each), so CPU load does not change it.
  - `helper_lag_ms`, wall time: how far behind the audio clock the helper sent that `final` (its
    processing; CPU starvation shows here).
  - `engine_ms`, wall time: from the `final` line leaving the helper to the commit at the client
    (relay, engine, daemon and client).
And two that do not grow with other processes' load: `helper_cpu_per_audio_second_ms` (the
helper's user + system CPU time per second of audio: its real-time factor) and
`engine_cpu_per_utterance_ms`. On a quiet machine the latency is about the end-of-utterance wait
plus the helper's time for one block plus engine_ms. Also the engine's VmRSS before the first
and after the last dictation, the helper's VmHWM, and the load average at start and end.
Prints one line per utterance on stderr and a JSON summary last.
"""

import argparse
import array
import json
import os
import statistics
import sys
import tempfile
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Dictate"))
from ibus_harness import AuxClient, Daemon, IBus, executable_script, helper_binary, pump_until, rss_kb  # noqa: E402
import speech  # noqa: E402

CONTROL = int(IBus.ModifierType.CONTROL_MASK)
ALT = int(IBus.ModifierType.MOD1_MASK)
LISTENING = "\U0001F399 listening\u2026"
RATE = 16000
BLOCK_SAMPLES = 1600  # Service.blockSamples: one `level` line per block
WAIT = 120.0
TICKS = os.sysconf("SC_CLK_TCK")

# The engine starts this relay (INKLING_DICTATE_HELPER). The helper reads the engine's requests
# from the relay's own stdin; its lines pass through the relay, which notes `TYPE MONOTONIC CPU_MS`
# per line in the trace (the helper's CPU time so far), never what was recognised.
RELAY = '''#!/usr/bin/python3
import json, os, subprocess, sys, time
wav = open(os.environ["INKLING_BENCH_DICTATE_WAV"]).read().strip()
trace = open(os.environ["INKLING_BENCH_TRACE"], "a", buffering=1)
helper = subprocess.Popen(["inkling-dictate", "--audio-file", wav] + sys.argv[1:],
                          executable=os.environ["INKLING_BENCH_REAL_DICTATE"], stdout=subprocess.PIPE)
ticks = os.sysconf("SC_CLK_TCK")

def cpu_ms():
    try:
        with open("/proc/%d/stat" % helper.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 // ticks
    except (OSError, IndexError, ValueError):
        return -1

trace.write("pid %d 0\\n" % helper.pid)
for line in iter(helper.stdout.readline, b""):
    now = time.monotonic()
    os.write(1, line)
    try:
        kind = json.loads(line).get("type", "?")
    except ValueError:
        kind = "?"
    trace.write("%s %.6f %d\\n" % (kind, now, cpu_ms()))
'''


def speech_end_seconds(path, threshold=500):
    """Where the speech in a WAV ends: the last sample louder than `threshold`; and its length."""
    with wave.open(path) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    last = max((i for i, s in enumerate(samples) if abs(s) > threshold), default=0)
    return last / RATE, len(samples)


def vm(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_ms(pid):
    """CPU time of a process's threads so far, in milliseconds: from the scheduler's nanosecond
    counts (/proc/PID/task/*/schedstat) where the kernel keeps them, else /proc/PID/stat's
    user + system clock ticks (10 ms steps: too coarse for the engine's share of an utterance)."""
    try:
        total = 0
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                total += int(f.read().split()[0])
        return total / 1e6
    except (OSError, ValueError, IndexError):
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / TICKS


class Trace:
    """The relay's notes: (type, monotonic seconds, helper CPU ms) per line, read as they grow."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def new_entries(self):
        with open(self.path) as f:
            f.seek(self.offset)
            text = f.read()
        complete = text[: text.rfind("\n") + 1]
        self.offset += len(complete.encode())
        return [(kind, float(at), int(cpu)) for kind, at, cpu in (line.split() for line in complete.splitlines())]


class BenchClient(AuxClient):
    """Notes when the listening label first arrives and when each commit does."""

    def __init__(self, daemon, **kw):
        super().__init__(daemon, **kw)
        self.listening_at = None
        self.commit_times = []
        self._connect("commit-text", lambda ic, text: self.commit_times.append(time.monotonic()))

    def _on_aux(self, ic, text, visible):
        super()._on_aux(ic, text, visible)
        if self.aux_now.startswith(LISTENING) and self.listening_at is None:
            self.listening_at = time.monotonic()


def percentiles(values, digits=None):
    ordered = sorted(values)
    if not ordered:
        return None
    return {"p50": round(statistics.median(ordered), digits),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], digits)}


def measure(events, end_seconds, samples, committed_at):
    """The parts of one utterance's latency from the relay's notes (see the module text): up to
    the last `final` (the one that holds the end of speech; the recogniser may split a sentence)
    and the last commit. The parts add up to the whole."""
    kinds = [kind for kind, _, _ in events]
    listening = events[kinds.index("listening")]
    final_index = len(kinds) - 1 - kinds[::-1].index("final")
    final = events[final_index]
    blocks = kinds[:final_index].count("level")
    audio_at_final = min(blocks * BLOCK_SAMPLES, samples) / RATE
    stopped = events[kinds.index("stopped")] if "stopped" in kinds else events[-1]
    audio_seconds = kinds.count("level") * BLOCK_SAMPLES / RATE
    # The helper paces the file from its first read, just after it sends `listening`.
    speech_ended_at = listening[1] + end_seconds
    return {
        "latency_ms": (committed_at - speech_ended_at) * 1000,
        "end_of_utterance_wait_ms": (audio_at_final - end_seconds) * 1000,
        "helper_lag_ms": (final[1] - (listening[1] + audio_at_final)) * 1000,
        "engine_ms": (committed_at - final[1]) * 1000,
        "helper_cpu_per_audio_second_ms": (stopped[2] - listening[2]) / max(audio_seconds, 0.1),
        "finals": kinds.count("final"),
        "final_at_end_of_file": audio_at_final * RATE >= samples,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--utterances", type=int, default=12)
    options = parser.parse_args()
    if not speech.available():
        sys.exit("bench: espeak-ng and sox are needed (scripts/install-deps.sh)")
    helper = helper_binary("inkling-dictate")
    load_start = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="inkling-dictation-bench-")
    relay = executable_script(tmp, "relay.py", RELAY)
    pointer = os.path.join(tmp, "wav")
    trace = Trace(os.path.join(tmp, "trace"))
    open(trace.path, "w").close()
    wavs = []
    for index in range(options.utterances):
        voice, speed = speech.VOICES[index % len(speech.VOICES)]
        path = os.path.join(tmp, "u%d.wav" % index)
        speech.speak(speech.SENTENCES[index % len(speech.SENTENCES)], path, voice=voice, speed=speed, after=2.0)
        wavs.append((path, *speech_end_seconds(path)))
    daemon = Daemon(env={
        "INKLING_DICTATION": "1", "INKLING_DICTATE_HELPER": relay, "INKLING_BENCH_DICTATE_WAV": pointer,
        "INKLING_BENCH_REAL_DICTATE": helper, "INKLING_BENCH_TRACE": trace.path,
    }).start()
    rows, helper_hwm, engine_cpu, helper_pid = [], 0, [], None
    try:
        client = BenchClient(daemon)
        client.focus_in()
        client.set_engine("inkling")
        client.wait_for_surrounding_request()
        client.type("warm up ")
        engine = daemon.engine_pid()
        rss_before = rss_kb(engine)
        for path, end, samples in wavs:
            with open(pointer, "w") as f:
                f.write(path)
            trace.new_entries()
            client.commits.clear()
            client.commit_times.clear()
            client.listening_at = None
            cpu_before = cpu_ms(engine)
            client.key(ord("m"), CONTROL | ALT)
            pump_until(lambda: client.listening_at is not None, timeout=WAIT, what="listening")
            pump_until(lambda: client.commits, timeout=WAIT, what="a commit")
            pump_until(lambda: not client.aux_now, timeout=WAIT, what="listening to end")
            engine_cpu.append(cpu_ms(engine) - cpu_before)
            events = []
            pump_until(lambda: events.extend(trace.new_entries()) or "stopped" in [e[0] for e in events],
                       timeout=WAIT, what="the helper's stopped line")
            # The helper stays (idle) after `stopped`: its peak so far.
            helper_pid = next((int(at) for kind, at, _ in reversed(events) if kind == "pid"), helper_pid)
            if helper_pid and os.path.exists("/proc/%d" % helper_pid):
                helper_hwm = max(helper_hwm, vm(helper_pid, "VmHWM"))
            events = [e for e in events if e[0] != "pid"]
            row = measure(events, end, samples, client.commit_times[-1])
            rows.append(row)
            print("latency %.0f ms = end-of-utterance wait %.0f (audio) + helper lag %.0f + engine %.1f; "
                  "helper CPU %.0f ms per audio second; %d final(s)%s"
                  % (row["latency_ms"], row["end_of_utterance_wait_ms"], row["helper_lag_ms"], row["engine_ms"],
                     row["helper_cpu_per_audio_second_ms"], row["finals"],
                     " (final at the end of the file)" if row["final_at_end_of_file"] else ""), file=sys.stderr)
        rss_after = rss_kb(engine)
    finally:
        daemon.stop()
    parts = ("latency_ms", "end_of_utterance_wait_ms", "helper_lag_ms", "engine_ms", "helper_cpu_per_audio_second_ms")
    summary = {"utterances": len(rows)}
    summary.update({name: percentiles([row[name] for row in rows]) for name in parts})
    summary.update({
        "engine_cpu_per_utterance_ms": percentiles(engine_cpu, digits=1),
        "finals_at_end_of_file": sum(row["final_at_end_of_file"] for row in rows),
        "engine_vmrss_mib": {"before": round(rss_before / 1024, 1), "after": round(rss_after / 1024, 1)},
        "helper_vmhwm_mib": round(helper_hwm / 1024, 1),
        "load_average_1min": {"start": round(load_start[0], 2), "end": round(os.getloadavg()[0], 2)},
        "cpus": os.cpu_count(),
    })
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
