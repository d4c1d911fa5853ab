"""The whole audio path with a real sound server: a private headless PulseAudio (the API
PipeWire's pulse service also serves) with a null sink whose monitor is the default source;
synthesised speech played into the sink with paplay reaches `inkling-dictate` through
libpulse-simple, and `stop` gives the final.

Run by Tests/Dictate/run.sh. Skipped when pulseaudio or paplay is missing.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (speech.available() and shutil.which("pulseaudio") and shutil.which("paplay") and shutil.which("pactl")),
    reason="pulseaudio, paplay, espeak-ng or sox missing")


@pytest.fixture(scope="module")
def sound_server():
    root = tempfile.mkdtemp(prefix="inkling-pulse-")
    env = dict(os.environ, XDG_RUNTIME_DIR=os.path.join(root, "run"), HOME=os.path.join(root, "home"))
    for sub in ("run", "home"):
        os.makedirs(os.path.join(root, sub), mode=0o700)
    env.pop("PULSE_SERVER", None)
    log = open(os.path.join(root, "pulse.log"), "w")
    server = subprocess.Popen(
        ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--disable-shm=yes", "--log-target=stderr",
         "--load=module-native-protocol-unix", "--load=module-null-sink sink_name=inkling_test"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode != 0:
        if server.poll() is not None or time.monotonic() > deadline:
            pytest.fail("pulseaudio did not start: " + open(log.name).read()[-2000:])
        time.sleep(0.1)
    subprocess.run(["pactl", "set-default-source", "inkling_test.monitor"], env=env, check=True)
    yield env
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    shutil.rmtree(root, ignore_errors=True)


def test_speech_played_into_the_sound_server_is_recognised(sound_server, tmp_path):
    said = "the weather is nice today"
    wav = speech.speak(said, str(tmp_path / "s.wav"))
    reference = speech.finals(speech.run_helper(wav)[0])
    helper = subprocess.Popen([speech.helper_path()], env=sound_server, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    player = None
    stop_sent = False
    events = []
    try:
        helper.stdin.write(b'{"v":1,"type":"start","session":7}\n')
        helper.stdin.flush()
        for line in helper.stdout:
            event = json.loads(line)
            events.append(event)
            if event["type"] == "listening":
                player = subprocess.Popen(["paplay", wav], env=sound_server)
            if player is not None and not stop_sent and player.poll() is not None and event["type"] == "level":
                # Played to the end: stop listening; the utterance arrives as the final.
                helper.stdin.write(b'{"v":1,"type":"stop","session":7}\n')
                helper.stdin.flush()
                stop_sent = True
            if event["type"] in ("stopped", "error"):
                break
    finally:
        helper.stdin.close()
        helper.wait(timeout=30)
    types = [event["type"] for event in events]
    assert "error" not in types, events[-1]
    assert max(event["level"] for event in events if event["type"] == "level") > 0.3
    heard = speech.finals(events)
    assert heard, types
    # The server resamples (its sink runs at 44.1 kHz stereo), so not always the same words as
    # from the file, but most of them.
    words = set(" ".join(reference).split())
    assert len(words & set(" ".join(heard).split())) >= len(words) // 2, (reference, heard)


def test_device_chooses_the_source_and_a_missing_one_is_an_error(sound_server, tmp_path):
    """`--device` (GSettings dictation-device, chosen on the Settings app's Dictation page): the
    helper records from the named source, not the default, which here is a silent second sink."""
    subprocess.run(["pactl", "load-module", "module-null-sink", "sink_name=inkling_silent"], env=sound_server,
                   check=True, capture_output=True)
    subprocess.run(["pactl", "set-default-source", "inkling_silent.monitor"], env=sound_server, check=True)
    try:
        wav = speech.speak("the weather is nice today", str(tmp_path / "s.wav"))
        helper = subprocess.Popen([speech.helper_path(), "--device", "inkling_test.monitor"], env=sound_server,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        player = None
        events = []
        try:
            helper.stdin.write(b'{"v":1,"type":"start","session":7}\n')
            helper.stdin.flush()
            for line in helper.stdout:
                event = json.loads(line)
                events.append(event)
                if event["type"] == "listening":
                    # Played into the chosen sink only; the default source hears nothing.
                    player = subprocess.Popen(["paplay", "--device", "inkling_test", wav], env=sound_server)
                if player is not None and player.poll() is not None and event["type"] == "level":
                    helper.stdin.write(b'{"v":1,"type":"stop","session":7}\n')
                    helper.stdin.flush()
                    player = None
                if event["type"] in ("stopped", "error"):
                    break
        finally:
            helper.stdin.close()
            helper.wait(timeout=30)
        assert "error" not in [event["type"] for event in events], events[-1]
        assert max(event["level"] for event in events if event["type"] == "level") > 0.3
        assert speech.finals(events)

        missing = subprocess.Popen([speech.helper_path(), "--device", "no_such_source"], env=sound_server,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            missing.stdin.write(b'{"v":1,"type":"start","session":7}\n')
            missing.stdin.flush()
            for line in missing.stdout:
                last = json.loads(line)
                if last["type"] in ("stopped", "error"):
                    break
        finally:
            missing.stdin.close()
            missing.wait(timeout=30)
        assert last["type"] == "error" and last["message"] == "no microphone", last
    finally:
        subprocess.run(["pactl", "set-default-source", "inkling_test.monitor"], env=sound_server, check=True)
