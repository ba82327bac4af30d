"""grader/text.py: whatever a submission or a file name holds, what is stored and shown is safe text."""

import json

from grader.text import clip, encodable, file_name, one_line, printable


def test_printable_replaces_escapes_bidi_overrides_and_lone_surrogates():
    hostile = "ok\x1b[2J\x07 \u202egnp.exe\ud800\udfff end"
    shown = printable(hostile)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)
    assert shown.startswith("ok") and shown.endswith(" end")
    json.dumps(shown, ensure_ascii=False).encode("utf-8")  # no writer can fail on it


def test_printable_keeps_tabs_newlines_and_chinese():
    assert printable("第 1 行\n\t第 2 行\r\n第 3 行\r") == "第 1 行\n\t第 2 行\n第 3 行\n"


def test_one_line_puts_everything_on_a_single_line():
    forged = "mallory\nmallory: 100/100\u2028x\ty"
    assert one_line(forged) == "mallory mallory: 100/100 x y"
    assert len(one_line("x" * 1000, limit=50)) == 51


def test_clip_says_how_much_it_cut_and_stays_printable():
    assert clip("\ud800" * 10, 4) == "\ufffd" * 4 + "... [6 more characters]"


def test_file_names_are_read_as_utf8_then_gb18030_then_with_replacements():
    assert file_name("张三.py".encode("utf-8")) == "张三.py"
    assert file_name("张三.py".encode("gbk")) == "张三.py"  # a zip from a Chinese Windows machine
    assert file_name(b"\xff\xfe\xfd.py").endswith(".py")
    surrogate_escaped = "张三".encode("gbk").decode("utf-8", errors="surrogateescape")  # what os.listdir gives
    assert file_name(surrogate_escaped) == "张三"


def test_encodable_never_fails():
    assert encodable("a\ud800b") == b"a?b"
