"""The `inkling-dictate` helper on synthesised speech (--audio-file): the protocol, several
voices and speeds, silence and noise, stop and cancel, bad input, and its privacy.

Run by Tests/Dictate/run.sh (under `make test`). Needs espeak-ng and sox (scripts/install-deps.sh).
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech  # noqa: E402

pytestmark = pytest.mark.skipif(not speech.available(), reason="espeak-ng or sox missing")


@pytest.fixture(scope="module")
def helper():
    path = speech.helper_path()
    if not os.access(path, os.X_OK):
        pytest.fail("no inkling-dictate at %s (swift build -c release)" % path)
    return path


def test_sentences_in_several_voices_give_finals_close_to_what_was_said(helper, tmp_path):
    said_all, heard_all = [], []
    for index, (voice, speed) in enumerate(speech.VOICES):
        said = speech.SENTENCES[index % len(speech.SENTENCES)]
        wav = speech.speak(said, str(tmp_path / ("s%d.wav" % index)), voice=voice, speed=speed)
        events, _ = speech.run_helper(wav)
        types = [event["type"] for event in events]
        assert types[0] == "hello" and types[1] == "listening" and types[-1] == "stopped"
        assert all(event.get("session") == 1 for event in events[1:])
        heard = speech.finals(events)
        assert len(heard) >= 1, (voice, speed, types)
        levels = [event["level"] for event in events if event["type"] == "level"]
        assert levels and all(0 <= level <= 1 for level in levels) and max(levels) > 0.3
        said_all += said.split()
        heard_all += " ".join(heard).split()
    # espeak-ng is a robot voice and PocketSphinx a small model (bench/dictation_wer.py measures
    # the word error rate): a good share of the words, not all.
    assert len(set(said_all) & set(heard_all)) / len(set(said_all)) >= 0.2, (said_all, heard_all)


def test_silence_and_quiet_noise_give_no_final(helper, tmp_path):
    # Quiet pink noise (level about 0.13; sox -R makes it the same every run).
    for wav in (speech.silence(str(tmp_path / "quiet.wav"), 2.0), speech.noise(str(tmp_path / "noise.wav"), 2.0)):
        events, _ = speech.run_helper(wav)
        assert speech.finals(events) == [], wav
        assert events[-1]["type"] == "stopped"


def test_cancel_drops_the_utterance_in_progress(helper, tmp_path):
    wav = speech.speak(" ".join(speech.SENTENCES[:3]), str(tmp_path / "long.wav"), after=0.5)
    events, _ = speech.run_helper(wav, fast=False, commands=['{"v":1,"type":"cancel","session":1}'])
    assert any(event["type"] == "partial" for event in events)
    assert speech.finals(events) == []
    assert events[-1]["type"] == "stopped"


def test_stop_finishes_the_utterance_in_progress(helper, tmp_path):
    wav = speech.speak(" ".join(speech.SENTENCES[:3]), str(tmp_path / "long.wav"), after=0.5)
    events, _ = speech.run_helper(wav, fast=False, commands=['{"v":1,"type":"stop","session":1}'])
    assert len(speech.finals(events)) == 1
    assert events[-1]["type"] == "stopped"


def test_a_file_that_is_not_16k_mono_wav_is_an_error(helper, tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    events, stderr = speech.run_helper(str(bad))
    assert events[-1] == {"v": 1, "type": "error", "session": 1, "message": "no microphone"}


def test_garbage_input_is_ignored_and_shutdown_exits(helper):
    proc = subprocess.run([helper, "--audio-file", "/nonexistent.wav"], input=b"junk\n{}\n" + b"x" * 40000 + b"\n"
                          + b'{"v":1,"type":"shutdown"}\n', capture_output=True, timeout=30)
    assert proc.returncode == 0
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["hello"]


def test_no_core_dumps_and_nothing_heard_on_stderr(helper, tmp_path):
    said = "the children are playing in the garden"
    wav = speech.speak(said, str(tmp_path / "s.wav"))
    proc = subprocess.Popen([helper, "--audio-file", wav], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert json.loads(proc.stdout.readline())["type"] == "hello"  # hardened before this
        with open("/proc/%d/limits" % proc.pid) as f:
            core = [line for line in f if line.startswith("Max core file size")][0]
        assert core.split()[4:6] == ["0", "0"], core
        proc.stdin.write(b'{"v":1,"type":"start","session":1}\n')
        proc.stdin.flush()
        out = b""
        for line in proc.stdout:
            out += line
            if b'"stopped"' in line:
                break
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read().decode(errors="replace")
    heard = speech.finals([json.loads(line) for line in out.splitlines()])
    assert heard
    for word in set(" ".join(heard).split()) | set(said.split()):
        if len(word) > 3:
            assert word not in stderr, "a word heard reached stderr"


if __name__ == "__main__":
    sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "-rfE", __file__] + sys.argv[1:]))
