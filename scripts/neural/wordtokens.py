"""How the word GRU reads text (issue 17): lower-cased words as the typing benchmark splits them,
and with --punctuation one token for the punctuation between two words. No PyTorch here, so
the data-pipeline tests check it against the engine's rule (`WordLanguageModel.punctuationKey`).
"""
import re

WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
BOS, UNK = "<s>", "<unk>"

# Punctuation between two words, as one token (--punctuation): the GRU then knows a sentence or
# a clause ended ("evening. From", "Well, I"). The last sentence end wins, then a comma, then a
# colon or semicolon; other separators (spaces, quotes, brackets, dashes) give none.
SENTENCE_END_TOKENS = {".": "<.>", "\u2026": "<.>", "?": "<?>", "!": "<!>"}
COMMA_TOKEN, COLON_TOKEN = "<,>", "<:>"
PUNCTUATION_TOKENS = ["<.>", "<?>", "<!>", COMMA_TOKEN, COLON_TOKEN]


def key(word):
    return word.lower().replace("\u2019", "'")


def words(line):
    return [key(w) for w in WORD.findall(line)]


def separator_token(text):
    """The punctuation token of the text between two words, or None."""
    for ch in reversed(text):
        if ch in SENTENCE_END_TOKENS:
            return SENTENCE_END_TOKENS[ch]
    if "," in text:
        return COMMA_TOKEN
    if ":" in text or ";" in text:
        return COLON_TOKEN
    return None


def context_key(word):
    """A word as the engine gives it to the GRU: a word with a digit is the unknown word (the
    predictor never offers numbers; DocumentCache gives them as it)."""
    return UNK if any(ch.isdecimal() for ch in word) else key(word)


def tokens(line, punctuation=False):
    """The words of a line, lower-cased; with punctuation, each separator's token between them
    and after the last word (what follows the last word is known when the next is predicted),
    and numbers as the unknown word, as the engine reads its context."""
    if not punctuation:
        return words(line)
    out, end = [], None
    for match in WORD.finditer(line):
        if end is not None:
            token = separator_token(line[end:match.start()])
            if token:
                out.append(token)
        out.append(context_key(match.group(0)))
        end = match.end()
    if end is not None:
        token = separator_token(line[end:])
        if token:
            out.append(token)
    return out
