# Load fine, then hang: backward() spins forever (a CPU hog on every call).
def _spin(self):
    while True:
        pass


Value.backward = _spin
