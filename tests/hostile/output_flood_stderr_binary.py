# Flood stderr with bytes that are not UTF-8, terminal escape sequences that
# would clear or recolour a terminal, NULs and carriage returns; then close
# stdout so that the honest code's prints fail.
import os

JUNK = b"\xff\xfe\xc3\x28\x80\x00\x1b[2J\x1b]0;owned\x07\r@@MARKER@@\x1b[31m\xed\xa0\x80\n"
for _ in range(200_000):
    os.write(2, JUNK)
os.close(1)
