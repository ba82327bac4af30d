"""One convention for every text a person reads: a bilingual text is a dict
{"en": ..., "zh": ...}, made with `bilingual` and read with `pick`.

    HEADLINE = bilingual("Score", "得分")
    pick(HEADLINE, "zh")                       # "得分"
    pick(bilingual("{n} failed", "{n} 个未通过"), "en", n=3)   # "3 failed"

Results documents store such dicts as they are (both languages travel with the
result); a view picks one. A language the kit does not know reads as English.
Adding a language: docs/ARCHITECTURE.md.
"""

LANGUAGES = ("en", "zh")
DEFAULT = "en"
LIST_SEPARATORS = {"en": ", ", "zh": "、"}  # how a list reads in each language (`listing`)


def bilingual(en, zh, **more):
    """A text in both languages (and in any other of LANGUAGES given by its code)."""
    return {"en": en, "zh": zh, **more}


def language(lang):
    """`lang` if the kit has it, else the default."""
    return lang if lang in LANGUAGES else DEFAULT


def pick(text, lang, **values):
    """The text in `lang` (a dict of languages; a plain string is the same in all),
    with `{name}` placeholders filled from `values`."""
    chosen = text if isinstance(text, str) else text.get(language(lang)) or text.get(DEFAULT, "")
    return chosen.format(**values) if values else chosen


def listing(items, lang):
    """Items as a list in `lang`: "exp, log" or "exp、log"."""
    return LIST_SEPARATORS.get(language(lang), LIST_SEPARATORS[DEFAULT]).join(items)


def both(text, separator=" / "):
    """The Chinese and the English text together, Chinese first (what a course in China reads first)."""
    return f"{text['zh']}{separator}{text['en']}"


def order(lang):
    """The kit's languages, `lang` first: how a text in both reads in that language."""
    first = language(lang)
    return (first, *(other for other in LANGUAGES if other != first))


def both_in(text, lang, separator=" / "):
    """The text in every language, `lang` first."""
    return separator.join(text[code] for code in order(lang) if text.get(code))
