# Never finish loading: a busy loop at import that also ignores every signal it can.
import signal

for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
    signal.signal(number, signal.SIG_IGN)
while True:
    pass
