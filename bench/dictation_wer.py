#!/usr/bin/python3
"""Word error rate of dictation (the `inkling-dictate` helper) on synthesised speech, with the
base PocketSphinx model and with its dictionary adapted to the language pack's vocabulary.

    /usr/bin/python3 bench/dictation_wer.py [--sentences N] [--voices K] [--pack-words N]

Sentences: every k-th sentence of ../shared/bench/dev-en.txt with 5 to 12 plain words
(letters and apostrophes), spoken by espeak-ng in K voices and speeds (Tests/Dictate/speech.py)
and read by the helper with --audio-file --fast. WER = word edits / reference words, after
lower-casing and removing punctuation. Also, independent of the machine's load: the helper's CPU
seconds per second of audio, and the end-of-speech → `final` wait in audio time (the
recogniser's end-of-utterance detection: the commit latency on an idle machine is this plus
the decoding of the last 100 ms block and a pipe hop).

Adapted: the pronunciation dictionary keeps only the words of the pack (`inkling dictation
words`, the N most frequent; default all), so the recogniser's language model can only propose
words the keyboard knows. The helper's RSS (VmHWM) is the largest seen over the runs.
Prints a JSON summary last.
"""

import argparse
import array
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Dictate"))
import speech  # noqa: E402

DEV = os.path.join(ROOT, "..", "shared", "bench", "dev-en.txt")
MODEL_DICT = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"


def words_of(text):
    return re.sub(r"[^a-z' ]+", " ", text.lower().replace("\u2019", "'")).split()


def pick_sentences(count):
    with open(DEV, encoding="utf-8") as f:
        text = f.read()
    candidates = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        raw = sentence.strip().split()
        if not 5 <= len(raw) <= 12:
            continue
        if not all(re.fullmatch(r"[A-Za-z']+[.,!?]?", word) for word in raw):
            continue
        candidates.append(" ".join(words_of(sentence)))
    step = max(1, len(candidates) // count)
    return candidates[::step][:count]


def edit_distance(reference, hypothesis):
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def recognise(wav, extra):
    """The finals of one run, the helper's VmHWM in KiB, the audio seconds read when each final
    came (10 blocks a second) and the helper's CPU seconds."""
    args = [speech.helper_path(), "--audio-file", wav, "--fast"] + extra
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(b'{"v":1,"type":"start","session":1}\n')
    proc.stdin.flush()
    finals, hwm, blocks, final_times = [], 0, 0, []
    for line in proc.stdout:
        event = json.loads(line)
        if event["type"] == "level":
            blocks += 1
        if event["type"] == "final":
            finals.append(event["text"])
            final_times.append(blocks / 10.0)
        if event["type"] in ("stopped", "error"):
            with open("/proc/%d/status" % proc.pid) as f:
                hwm = int(next(line for line in f if line.startswith("VmHWM")).split()[1])
            break
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    return " ".join(finals), hwm, final_times, usage.ru_utime + usage.ru_stime


def adapted_dictionary(path, pack_words):
    inkling = os.path.join(os.path.dirname(speech.helper_path()), "inkling")
    args = [inkling, "dictation", "words"] + (["-n", str(pack_words)] if pack_words else [])
    vocabulary = set(subprocess.run(args, check=True, capture_output=True, text=True).stdout.split())
    kept = 0
    with open(MODEL_DICT, encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for line in source:
            word = re.sub(r"\(\d+\)$", "", line.split(" ", 1)[0])
            if word in vocabulary:
                out.write(line)
                kept += 1
    return kept


def speech_end_seconds(path, threshold=500):
    """Where the last loud sample is (the end of speech in a synthesised file)."""
    with wave.open(path) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    last = max((i for i, s in enumerate(samples) if abs(s) > threshold), default=0)
    return last / 16000.0


def audio_length_seconds(path):
    with wave.open(path) as w:
        return w.getnframes() / 16000.0


def percentiles(values):
    if not values:
        return None
    ordered = sorted(values)
    return {"p50": round(ordered[len(ordered) // 2]),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))])}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--voices", type=int, default=len(speech.VOICES))
    parser.add_argument("--pack-words", type=int, default=0, help="0: all the pack's words")
    options = parser.parse_args()
    sentences = pick_sentences(options.sentences)
    voices = speech.VOICES[:options.voices]
    with tempfile.TemporaryDirectory(prefix="inkling-wer-") as tmp:
        adapted = os.path.join(tmp, "adapted.dict")
        kept = adapted_dictionary(adapted, options.pack_words)
        variants = {"base": [], "adapted": ["--dict", adapted]}
        errors = {name: 0 for name in variants}
        hwm = {name: 0 for name in variants}
        reference_words = 0
        seconds = {name: 0.0 for name in variants}
        cpu = {name: 0.0 for name in variants}
        audio_seconds = 0.0
        end_waits = []
        # One file per voice, its sentences one after another with pauses, read by one helper:
        # as in use, where one helper hears a whole session (PocketSphinx's cepstral mean
        # normalisation settles over the first utterance). WER over the whole text.
        for number, (voice, speed) in enumerate(voices):
            mine = sentences[number::len(voices)]
            if not mine:
                continue
            pieces, ends, offset = [], [], 0.0
            for index, sentence in enumerate(mine):
                piece = speech.speak(sentence, os.path.join(tmp, "p%d.wav" % index), voice=voice, speed=speed)
                pieces.append(piece)
                ends.append(offset + speech_end_seconds(piece))
                offset += audio_length_seconds(piece)
            wav = speech.concat(pieces, os.path.join(tmp, "voice.wav"))
            audio_seconds += offset
            reference = " ".join(mine).split()
            reference_words += len(reference)
            for name, extra in variants.items():
                start = time.monotonic()
                heard, peak, final_times, cpu_seconds = recognise(wav, extra)
                seconds[name] += time.monotonic() - start
                cpu[name] += cpu_seconds
                errors[name] += edit_distance(reference, words_of(heard))
                hwm[name] = max(hwm[name], peak)
                if name == "base" and len(final_times) == len(ends):
                    # One final per sentence: each ends its sentence's speech.
                    end_waits += [at - end for at, end in zip(final_times, ends)]
            print("%-16s base %.3f  adapted %.3f" % ("%s@%d" % (voice, speed), errors["base"] / reference_words,
                                                     errors["adapted"] / reference_words), file=sys.stderr)
    summary = {
        "utterances": len(sentences),
        "utterances_timed": len(end_waits),
        "voices": ["%s@%d" % v for v in voices],
        "reference_words": reference_words,
        "adapted_dictionary_words": kept,
        "wer": {name: round(errors[name] / reference_words, 3) for name in variants},
        "helper_vmhwm_mib": {name: round(hwm[name] / 1024, 1) for name in variants},
        "helper_cpu_seconds_per_audio_second": {name: round(cpu[name] / audio_seconds, 3) for name in variants},
        "end_of_speech_to_final_audio_ms": percentiles([1000 * wait for wait in end_waits]),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
