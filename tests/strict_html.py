"""A strict reading of the kit's HTML pages for the tests: html.parser with the
nesting checked (every element closed, in order), the tags and the text kept."""

from html.parser import HTMLParser

VOID = {"meta", "input", "br", "img", "hr", "link", "source", "wbr", "col", "area", "base", "embed", "param", "track"}


class StrictParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.tags, self.text, self.problems = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page):
    parser = StrictParser()
    parser.feed(page)
    parser.close()
    return parser
