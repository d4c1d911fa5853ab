"""Test speech made on this machine: espeak-ng speaks, sox makes 16 kHz mono 16-bit WAV.

Used by the helper tests (test_dictate_helper.py), the daemon tests
(Tests/Integration/test_dictation_engine.py) and the benchmark (bench/dictation_wer.py).
Nothing is downloaded and nothing recorded: every file is synthesised, then deleted with its
temporary folder.
"""

import json
import os
import shutil
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Short, plain sentences in PocketSphinx's vocabulary (the model knows every word).
SENTENCES = [
    "the weather is nice today",
    "please send me the report tomorrow morning",
    "we will meet at the station at noon",
    "i would like a cup of coffee",
    "the children are playing in the garden",
    "can you call me back later",
]
# espeak-ng voices and speeds (words a minute): several speakers and paces.
VOICES = [("en-us", 150), ("en", 170), ("en-us+m3", 135), ("en+f2", 160)]


def available():
    """Whether espeak-ng and sox are installed."""
    return shutil.which("espeak-ng") is not None and shutil.which("sox") is not None


def helper_path():
    """The helper under test: $INKLING_DICTATE, else the release build beside the engine."""
    return os.environ.get("INKLING_DICTATE") or os.path.join(REPO, ".build", "release", "inkling-dictate")


def speak(text, path, voice="en-us", speed=160, before=0.3, after=1.5):
    """Writes `text` spoken by espeak-ng to `path` (16 kHz mono 16-bit), with silence around it."""
    with tempfile.TemporaryDirectory(prefix="inkling-speech-") as tmp:
        raw = os.path.join(tmp, "raw.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["sox", "-R", raw, "-r", "16000", "-c", "1", "-b", "16", path, "pad", str(before), str(after)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def silence(path, seconds=2.0):
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", path, "trim", "0", str(seconds)], check=True)
    return path


def noise(path, seconds=2.0, volume=0.01):
    """Low pink noise, like a quiet room; the same every run (`sox -R`)."""
    subprocess.run(["sox", "-R", "-n", "-r", "16000", "-c", "1", "-b", "16", path, "synth", str(seconds), "pinknoise",
                    "vol", str(volume)], check=True)
    return path


def concat(paths, path):
    subprocess.run(["sox"] + list(paths) + [path], check=True)
    return path


def run_helper(wav, fast=True, extra=(), commands=None, timeout=60):
    """Runs the helper on `wav`: sends `start` (and `commands`, a list of (delay, line)), reads
    events until `stopped` or `error`; returns (events, stderr)."""
    args = [helper_path(), "--audio-file", wav] + (["--fast"] if fast else []) + list(extra)
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    events = []
    try:
        proc.stdin.write(b'{"v":1,"type":"start","session":1}\n')
        proc.stdin.flush()
        for line in proc.stdout:
            event = json.loads(line)
            events.append(event)
            if commands and event.get("type") == "partial":
                for command in commands:
                    proc.stdin.write(command.encode() + b"\n")
                proc.stdin.flush()
                commands = None
            if event.get("type") in ("stopped", "error"):
                break
        proc.stdin.close()
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return events, proc.stderr.read().decode(errors="replace")


def finals(events):
    return [event["text"] for event in events if event.get("type") == "final"]
