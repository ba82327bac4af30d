# Leave files behind outside the worker's own temporary folder: next to the
# results, in the kit, in the shared temporary folders, in the home folder.
import os

for folder in ("@@OUT_DIR@@", "@@KIT@@", "/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"),
               os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
    path = os.path.join(folder, "escape-@@MARKER@@")
    try:
        with open(path, "w") as out:
            out.write("@@MARKER@@")
        print("@@MARKER@@ wrote", path)
    except OSError as error:
        print("@@MARKER@@ could not write", path, type(error).__name__)
