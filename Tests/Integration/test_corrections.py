"""Corrections through a real ibus-daemon: chips in the auxiliary text, verified fixes applied with
delete-surrounding-text + commit, and fixes refused when the position cannot be proven."""

from ibus_harness import ALL_CAPS, CONTROL, Client, IBus, pump_until

ALT = int(IBus.ModifierType.MOD1_MASK)


def last_aux(client):
    return client.aux[-1] if client.aux else ("", False)


def wait_for_chip(client, chip):
    pump_until(lambda: chip in last_aux(client)[0] and last_aux(client)[1], what="the chip %r" % chip)


def apply_fix(client):
    return client.key(IBus.KEY_Return, CONTROL | ALT)


def type_after(client, before, text):
    """Puts `before` in the field as the application's own text, then types `text`."""
    client.text = before
    client.set_surrounding(before)
    client.type(text)


def test_a_typo_gets_a_chip_and_the_fix_replaces_exactly_it(client):
    client.wait_for_surrounding_request()
    type_after(client, "", "I saw teh cat. ")
    wait_for_chip(client, "teh \u2192 the")
    assert client.text == "I saw teh cat. ", "flagging never edits"
    assert apply_fix(client)
    pump_until(lambda: client.text == "I saw the cat. ", what="the fixed sentence")
    assert client.deletes == [(-9, 9)], "delete backward from the cursor to the word's start"


def test_a_long_typo_checked_in_slices_between_keys_gets_its_chip_and_fix(client):
    # The search of near words for this word spans several idle callbacks in the engine
    # (SlicedCheckTests.theEngineSliceSplitsALongCheck); keys typed meanwhile come first.
    client.wait_for_surrounding_request()
    type_after(client, "", "the correct pronounciation of it ")
    wait_for_chip(client, "pronounciation \u2192 pronunciation")
    assert apply_fix(client)
    pump_until(lambda: client.text == "the correct pronunciation of it ", what="the fixed sentence")


def test_fixes_count_code_points_around_emoji(client):
    client.wait_for_surrounding_request()
    before = "\U0001F600 \U0001F468\u200D\U0001F469\u200D\U0001F467 caf\u00e9 "
    type_after(client, before, "I saw teh \U0001F1E9\U0001F1EA cat. ")
    wait_for_chip(client, "teh \u2192 the")
    apply_fix(client)
    expected = before + "I saw the \U0001F1E9\U0001F1EA cat. "
    pump_until(lambda: client.text == expected, what="the fixed sentence with emoji around")


def test_a_cursor_moved_elsewhere_drops_the_fix(client):
    client.wait_for_surrounding_request()
    type_after(client, "", "I saw teh cat. ")
    wait_for_chip(client, "teh \u2192 the")
    # The user clicks into the middle of the text: the client reports the new cursor.
    client.echo_surrounding = False
    client.set_surrounding(client.text, cursor=3)
    handled = apply_fix(client)
    assert not handled, "with the flag gone, the key belongs to the application"
    assert client.deletes == []
    assert client.text == "I saw teh cat. "


def test_without_surrounding_text_the_fix_is_refused(daemon):
    caps = ALL_CAPS & ~IBus.Capabilite.SURROUNDING_TEXT
    client = Client(daemon, caps=caps, echo_surrounding=False)
    try:
        client.focus_in()
        client.set_engine("inkling")
        client.type("I saw teh cat. ")
        wait_for_chip(client, "teh \u2192 the")
        apply_fix(client)
        pump_until(lambda: "does not report its text" in last_aux(client)[0], what="the refusal in the aux text")
        assert client.deletes == []
        assert client.text == "I saw teh cat. "
    finally:
        client.focus_out()
        client.destroy()
