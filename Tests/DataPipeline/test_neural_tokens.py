"""The word GRU's tokens (scripts/neural/wordtokens.py) follow the engine's rule: the same cases
as WordLanguageModelTests.punctuationKeys and DocumentCacheTests.punctuationKeys (issue 17)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "scripts", "neural"))

from wordtokens import separator_token, tokens  # noqa: E402


@pytest.mark.parametrize("gap,token", [
    (" ", None), ("", None), (". ", "<.>"), ("? ", "<?>"), ("! ", "<!>"), ("\u2026 ", "<.>"),
    (", ", "<,>"), (": ", "<:>"), ("; ", "<:>"), ('." ', "<.>"), (', "', "<,>"), ("?! ", "<!>"),
    ("!? ", "<?>"), (",. ", "<.>"), (".,  ", "<.>"), (":, ", "<,>"), (" - ", None), (" (", None),
    ("\u201d ", None), ("\n", None),
])
def test_separator_token_matches_the_engine(gap, token):
    assert separator_token(gap) == token


def test_tokens_put_marks_between_words_and_after_the_last():
    assert tokens("Good evening. From ", True) == ["good", "evening", "<.>", "from"]
    assert tokens("Well, I think so: yes; no! Why? ", True) == [
        "well", "<,>", "i", "think", "so", "<:>", "yes", "<:>", "no", "<!>", "why", "<?>"]
    assert tokens('He said "no." Then, ', True) == ["he", "said", "no", "<.>", "then", "<,>"]
    assert tokens('"Hi" (then) ', True) == ["hi", "then"]
    assert tokens("I don\u2019t know.", True) == ["i", "don't", "know", "<.>"]
    # Nothing before the first word; words only without punctuation.
    assert tokens(", and so.", True) == ["and", "so", "<.>"]
    assert tokens("Good evening. From ") == ["good", "evening", "from"]


def test_numbers_are_the_unknown_word_with_punctuation():
    # DocumentCache gives a word with a digit as the unknown word.
    assert tokens("The 42 cats, 3rd v2 ", True) == ["the", "<unk>", "cats", "<,>", "<unk>", "<unk>"]
    assert tokens("The 42 cats") == ["the", "42", "cats"]  # words only: as before
